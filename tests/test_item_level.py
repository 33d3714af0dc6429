"""Item-level meta-evaluation: the fast coefficient engines against scipy, the groupings
against an independent computation (sacrebleu sentence scores per document, the TREC run files,
a plain loop over scipy.stats.kendalltau) on the demo and on a small WMT21 experiment, and a
generated experiment where only item level can separate two metrics."""

from __future__ import annotations

import json
import math
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
import scipy.special
import scipy.stats
import yaml

from clir_eval.config.load import load_config
from clir_eval.correlation.items import GROUPINGS, ItemMatrix, ItemSettings, correlate_matrix, grouped, item_verdicts
from clir_eval.correlation.kendall_rows import kendall_rows
from clir_eval.correlation.pairsums import group_sums, tau_draws
from clir_eval.pipeline.run import run_experiment


# --------------------------------------------------------------------------- engines
@pytest.mark.parametrize("n", [3, 4, 9, 41, 130])
@pytest.mark.parametrize("variant", ["b", "c"])
def test_kendall_rows_equals_scipy_with_ties(n, variant):
    r = np.random.default_rng(n)
    X = r.integers(0, 4, (30, n)).astype(float)
    Y = r.normal(size=(30, n)).round(1)
    ref = [scipy.stats.kendalltau(x, y, variant=variant).statistic for x, y in zip(X, Y)]
    assert np.allclose(kendall_rows(X, Y, variant), ref, equal_nan=True, atol=1e-12)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("variant", ["b", "c"])
def test_pair_sums_give_the_coefficient_of_the_resampled_data(axis, variant):
    r = np.random.default_rng(7 + axis)
    X = r.integers(0, 5, (6, 11)).astype(float)
    Y = r.integers(0, 4, (6, 11)).astype(float)
    X[2, 3] = np.nan
    G = X.shape[axis]
    idx = r.integers(0, G, (25, G))
    U = np.stack([np.bincount(i, minlength=G) for i in idx])
    got = tau_draws(group_sums(X, Y, axis), U, variant)
    ref = []
    for i in idx:
        xd, yd = np.take(X, i, axis=axis).ravel(), np.take(Y, i, axis=axis).ravel()
        keep = ~(np.isnan(xd) | np.isnan(yd))
        ref.append(scipy.stats.kendalltau(xd[keep], yd[keep], variant=variant).statistic)
    assert np.allclose(got, ref, equal_nan=True)


def loop_groupings(X: np.ndarray, Y: np.ndarray) -> dict[str, float]:
    """The three groupings with a plain loop over scipy.stats.kendalltau (τ-b), NaN cells dropped."""

    def tau(x, y):
        keep = ~(np.isnan(x) | np.isnan(y))
        x, y = x[keep], y[keep]
        if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
            return math.nan
        return scipy.stats.kendalltau(x, y).statistic

    per_item = [tau(X[:, j], Y[:, j]) for j in range(X.shape[1])]
    per_sys = [tau(X[i], Y[i]) for i in range(X.shape[0])]
    # within: items whose target takes two values; each cell's normal score among the defined cells there
    # (scipy's mid-ranks), then each system's values minus its own mean over those items
    used = [j for j in range(X.shape[1]) if len({v for v in Y[:, j] if not math.isnan(v)}) > 1]
    xc, yc = X[:, used].copy(), Y[:, used].copy()
    for m in (xc, yc):
        ok = ~np.isnan(m)
        m[ok] = scipy.special.ndtri((scipy.stats.rankdata(m[ok]) - 0.5) / ok.sum())
    for i in range(X.shape[0]):
        xc[i] -= np.mean([v for v in xc[i] if not math.isnan(v)])
        yc[i] -= np.mean([v for v in yc[i] if not math.isnan(v)])
    # on a grid of 1e-9 of the largest |centred value|: ties in real arithmetic stay ties (docs/item-level.md)
    xc, yc = (np.rint(m / np.nanmax(np.abs(m)) * 1e9) / 1e9 if np.nanmax(np.abs(m)) > 0 else m for m in (xc, yc))
    per_within = [tau(xc[:, j], yc[:, j]) for j in range(len(used))]
    return {"none": tau(X.ravel(), Y.ravel()), "item": float(np.nanmean(per_item)),
            "system": float(np.nanmean(per_sys)), "within": float(np.nanmean(per_within))}


def test_groupings_equal_a_plain_loop_over_scipy():
    r = np.random.default_rng(5)
    X = r.normal(size=(7, 50)).round(1)
    Y = (X + r.normal(size=(7, 50))).round(0)
    X[3, 4] = np.nan
    want = loop_groupings(X, Y)
    for g in GROUPINGS:
        assert grouped(X, Y, g)[0] == pytest.approx(want[g], abs=1e-12)


# --------------------------------------------------------------------------- independent computation on runs
def _read_docs(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            out[str(d["id"])] = d["text"]
    return out


def _read_qrels(path: Path) -> dict[str, set[str]]:
    rel: dict[str, set[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        q, _, d, r = line.split()
        if int(r) > 0:
            rel.setdefault(q, set()).add(d)
    return rel


def _read_run(path: Path) -> dict[str, list[str]]:
    """A TREC run, each query's documents in trec_eval's order (score descending, then docid descending)."""
    rows: dict[str, list[tuple[float, str]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        q, _, d, _, score, _ = line.split()
        rows.setdefault(q, []).append((float(score), d))
    return {q: [d for _, d in sorted(v, reverse=True)] for q, v in rows.items()}


def _rr(ranking: list[str], doc: str) -> float:
    return 1.0 / (ranking.index(doc) + 1) if doc in ranking else 0.0


def independent(out: Path, results: dict, docs_of: dict[str, Path], english: Path, qrels: Path) -> dict:
    """{(items, target, metric, grouping): τ} from the files alone."""
    rel = _read_qrels(qrels)
    eng = _read_docs(english)
    systems = results["item_level"]["systems"]
    judged = sorted({d for ds in rel.values() for d in ds})
    runs = {}
    for s in systems:
        [run] = [p for p in (out / "cache" / "runs").glob("*.run") if p.name.rsplit("-", 1)[0] == s]
        runs[s] = _read_run(run)
    chrf1, bleu = sacrebleu.CHRF(beta=1), sacrebleu.BLEU(effective_order=True)
    x = {"chrf1": np.zeros((len(systems), len(judged))), "bleu": np.zeros((len(systems), len(judged)))}
    ret = np.zeros((len(systems), len(judged)))
    for i, s in enumerate(systems):
        hyp = _read_docs(docs_of[s])
        for j, d in enumerate(judged):
            x["chrf1"][i, j] = chrf1.sentence_score(hyp[d], [eng[d]]).score
            x["bleu"][i, j] = bleu.sentence_score(hyp[d], [eng[d]]).score
            qs = [q for q, ds in rel.items() if d in ds]
            ret[i, j] = np.mean([_rr(runs[s].get(q, []), d) for q in qs])
    qids = [q for q in rel if rel[q]]
    col = {d: j for j, d in enumerate(judged)}
    xq = {m: np.array([[np.mean([v[i, col[d]] for d in sorted(rel[q])]) for q in qids] for i in range(len(systems))])
          for m, v in x.items()}
    rr_q = np.array([[max(_rr(runs[s].get(q, []), d) for d in rel[q]) for q in qids] for s in systems])
    want = {}
    for m in x:
        for g, v in loop_groupings(x[m], ret).items():
            want[("documents", "retrievability", m, g)] = v
        for g, v in loop_groupings(xq[m], rr_q).items():
            want[("queries", "recip_rank", m, g)] = v
    return want


def _check(results: dict, want: dict) -> None:
    got = {(r["items"], r["target"], r["mt_metric"], r["grouping"]): r["tau"] for r in results["item_level"]["correlations"]}
    assert len(want) == 16
    for k, v in want.items():
        assert got[k] == pytest.approx(v, abs=1e-9), k


def test_demo_item_level_equals_an_independent_computation(tmp_path):
    from clir_eval.sources.demo import generate_demo

    data = tmp_path / "data"
    generate_demo(data, seed=13)
    text = files("clir_eval").joinpath("data/demo.yaml").read_text(encoding="utf-8")
    cfg = yaml.safe_load(text.replace("data_root: ../demo-out/data", f"data_root: {data}"))
    cfg["correlation"].update(bootstrap=0, permutation=0)
    cfg["ir"]["measures"] = ["map", "recip_rank"]
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    out = tmp_path / "out"
    results = run_experiment(load_config(tmp_path / "demo.yaml", data_root=str(data)), out, jobs=1, quiet=True)
    block = results["item_level"]
    assert block["metrics"] == ["bleu", "chrf1", "macrof1", "microf1"] and len(block["systems"]) >= 10
    assert "eff:yes" in block["signatures"]["bleu"]
    docs_of = {s: data / "systems" / f"{s}.jsonl" for s in block["systems"]}
    _check(results, independent(out, results, docs_of, data / "english.jsonl", data / "qrels.txt"))
    _check_segments(out, results, data / "mt" / "ref.en.txt", {s: data / "mt" / f"{s}.txt" for s in block["systems"]})


def _check_segments(out: Path, results: dict, ref: Path, hyp_of: dict[str, Path], docids: list[str] | None = None):
    """item_segments.tsv: every system's every segment, BLEU (effective order) and chrF as
    sacrebleu's own sentence scores of the MT files, the document of each segment where known."""
    import csv

    import sacrebleu

    block = results["item_segments"]
    with open(out / block["file"], encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    refs = ref.read_text(encoding="utf-8").splitlines()
    assert block["segments"] == len(refs) and sorted(block["systems"]) == sorted(hyp_of)
    assert len(rows) == len(refs) * len(hyp_of) and ("document" in rows[0]) == (docids is not None)
    assert "eff:yes" in block["signatures"]["bleu"]
    bleu, chrf = sacrebleu.BLEU(effective_order=True), sacrebleu.CHRF(beta=1)
    for system, hyp in hyp_of.items():
        got = [r for r in rows if r["system"] == system]
        assert [int(r["segment"]) for r in got] == list(range(1, len(refs) + 1))
        for i, (r, h, e) in enumerate(zip(got, hyp.read_text(encoding="utf-8").splitlines(), refs)):
            assert float(r["bleu"]) == pytest.approx(bleu.sentence_score(h, [e]).score, abs=1e-9)
            assert float(r["chrf1"]) == pytest.approx(chrf.sentence_score(h, [e]).score, abs=1e-9)
            if docids is not None:
                assert r["document"] == docids[i]


def test_wmt21_document_level_item_level_equals_an_independent_computation(tmp_path, shared_data):
    xml = shared_data / "wmt21-docs" / "newstest2021.ru-en.all.xml.gz"
    if not xml.exists():
        pytest.skip(f"{xml} not found")
    cfg = {"name": "ru-en-small", "wmt": {"xml": str(xml), "reference": "A", "docs": ["izvestiya*", "mk.*", "kp.*", "aif.*"]},
           "mt": {"metrics": ["bleu", "chrf1"]}, "queries": {"generate": "headline"},
           "retrieval": {"stopwords": "english", "depth": 100}, "ir": {"measures": ["recip_rank"]},
           "correlation": {"bootstrap": 0, "permutation": 0}}
    (tmp_path / "exp.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    out = tmp_path / "out"
    results = run_experiment(load_config(tmp_path / "exp.yaml"), out, jobs=1, quiet=True)
    from clir_eval.io.files import safe_filename

    src = out / "cache" / "sources"
    block = results["item_level"]
    assert 5 <= block["items"]["documents"]["n"] <= 60, block["items"]
    docs_of = {s: next(src.rglob(f"docs-{safe_filename(s)}-*.jsonl")) for s in block["systems"]}
    english = next(src.rglob("english-refA-*.jsonl"))
    qrels = next((out / "cache" / "qrels").glob("*.txt"))
    _check(results, independent(out, results, docs_of, english, qrels))
    # the materialised MT test set: reference, hypotheses and each line's document
    hyp_of = {s: next(src.rglob(f"hyp-{safe_filename(s)}.*.txt")) for s in results["item_segments"]["systems"]}
    docids = next(src.rglob("docids-*.txt")).read_text(encoding="utf-8").splitlines()
    _check_segments(out, results, next(src.rglob("ref-A.*.txt")), hyp_of, docids)


# --------------------------------------------------------------------------- power where system level has none
def test_item_level_separates_what_system_level_cannot():
    """Retrievability of each document is a noisy function of its chrF, not of its BLEU; both track the
    systems' quality alike, so the system level cannot separate the metrics, while the within-document part
    (which documents a system translates worse than its own average) ranks chrF first, by the crossed test of
    the within Δτ (systems and documents both random)."""
    from clir_eval.correlation.statistics import permutation_sigdiff

    r = np.random.default_rng(11)
    S, I = 12, 200
    quality = np.linspace(0, 1, S)[:, None]
    difficulty = r.normal(size=(1, I))
    chrf = 40 + 10 * quality + 8 * difficulty + 4 * r.normal(size=(S, I))
    bleu = 20 + 10 * quality + 8 * difficulty + 4 * r.normal(size=(S, I))  # its own noise
    ret = 1 / (1 + np.exp(-(chrf - 45) / 3 + 0.8 * r.normal(size=(S, I))))
    m = ItemMatrix("documents", tuple(f"s{i}" for i in range(S)), tuple(f"d{j}" for j in range(I)),
                   {"chrf": chrf, "bleu": bleu}, {"retrievability": ret})
    s = ItemSettings(bootstrap=200, permutation=500, seed=3)
    rows = correlate_matrix(m, s, 3)
    [v] = item_verdicts([m], rows, [], s, 4)
    assert v["winner"] == "chrf" and v["clusters"] == [["chrf"], ["bleu"]], v
    assert v["grouping"] == "within" and v["p_method"] == "crossed" and v["unsettled"] == 0
    pw = v["pairwise"][0]
    assert pw["p_adjusted"] < 0.05 and pw["ci_crossed"][0] > 0
    # system level: means over documents, 5 systems
    _, p = permutation_sigdiff(chrf.mean(axis=1), bleu.mean(axis=1), ret.mean(axis=1), n_resamples=1000, seed=1,
                               plus_one=True)
    assert p is None or p >= 0.05


def test_correlate_item_col_rows_and_verdicts_carry_the_grouping(tmp_path, cli):
    r = np.random.default_rng(2)
    lines = ["system\tdoc\tchrf\tbleu\trr"]
    X = np.zeros((4, 12))
    B = np.zeros((4, 12))
    Y = np.zeros((4, 12))
    for s in range(4):
        for d in range(12):
            X[s, d], B[s, d] = round(r.normal() + d * 0.2, 3), round(r.normal(), 3)
            Y[s, d] = round(X[s, d] + r.normal() * 0.3, 3)
            lines.append(f"s{s}\td{d}\t{X[s, d]}\t{B[s, d]}\t{Y[s, d]}")
    t = tmp_path / "items.tsv"
    t.write_text("\n".join(lines) + "\n")
    code, out, err = cli("correlate", "--table", str(t), "--x", "chrf,bleu", "--y", "rr", "--item-col", "doc",
                         "--verdicts", "--ci", "100", "--permutation", "200", "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    assert {(c["x"], c["grouping"]) for c in res["correlations"]} == {(x, g) for x in ("chrf", "bleu") for g in GROUPINGS}
    for c in res["correlations"]:
        assert c["tau"] == pytest.approx(loop_groupings({"chrf": X, "bleu": B}[c["x"]], Y)[c["grouping"]], abs=1e-12)
        assert c["ci_items"][0] <= c["tau"] + 1e-9 or c["grouping"] == "none"
        # the interval for systems and items both random: on the tested groupings only
        assert ("ci_crossed" in c) == (c["grouping"] in ("item", "within")), c
        assert "ci_crossed" not in c or c["ci_crossed"][0] < c["tau"] < c["ci_crossed"][1]
        # a p-value only where it holds its level: none and system are descriptive
        assert (c["p_value"] is None) == (c["grouping"] in ("none", "system")), c
    [v] = res["verdicts"]
    assert v["grouping"] == "within" and v["ranking"][0] == "chrf"
    t.write_text("\n".join(lines + [lines[1]]) + "\n")
    code, _, err = cli("correlate", "--table", str(t), "--x", "chrf", "--y", "rr", "--item-col", "doc")
    assert code == 2 and "appears twice" in err


def test_item_grouping_system_draws_equal_recomputing_each_item():
    from clir_eval.correlation.items import _items_tau_b

    r = np.random.default_rng(4)
    X = r.integers(0, 4, (6, 9)).astype(float)
    Y = r.integers(0, 3, (6, 9)).astype(float)
    X[1, 2] = np.nan
    idx = r.integers(0, 6, (30, 6))
    U = np.stack([np.bincount(i, minlength=6) for i in idx]).astype(float)
    got = _items_tau_b(X, Y, U)
    for b, i in enumerate(idx):
        for j in range(9):
            x, y = X[i, j], Y[i, j]
            keep = ~(np.isnan(x) | np.isnan(y))
            ref = scipy.stats.kendalltau(x[keep], y[keep]).statistic if keep.sum() >= 3 else np.nan
            assert got[b, j] == pytest.approx(ref, nan_ok=True)


@pytest.mark.parametrize("seed", range(6))
def test_full_matrix_fast_paths_equal_the_general_sign_count(seed):
    """The permutation test's rank path and PERM-BOTH's quadratic forms (no missing cell, τ-b)
    give exactly item_coefs of the permuted / swapped matrices (same draws), ties included."""
    from clir_eval.correlation.items import _permuted_target_tau_b, _swapped_tau_b, item_coefs

    r = np.random.default_rng(seed)
    S, I, k = int(r.integers(3, 14)), int(r.integers(1, 30)), int(r.integers(1, 200))
    X = r.integers(0, 4, (S, I)).astype(float)
    B = r.normal(size=(S, I)).round(1)
    Y = r.integers(0, 3, (S, I)).astype(float)
    Y[:, 0] = 1.0  # an item where every system ties on the target: NaN
    perm = np.random.default_rng(5).permuted(np.broadcast_to(np.arange(S)[:, None], (k, S, I)).copy(), axis=1)
    Yp = np.take_along_axis(np.broadcast_to(Y, (k, S, I)), perm, axis=1)
    for X_, got in zip((X, B), _permuted_target_tau_b(perm, [X, B], Y)):
        assert np.array_equal(got, item_coefs(Yp, X_, "kendall", "b"), equal_nan=True)
    swap = r.random((k, S, I)) < 0.5
    ca, cb = _swapped_tau_b(X, B, Y, swap)
    assert np.array_equal(ca, item_coefs(np.where(swap, B, X), Y, "kendall", "b"), equal_nan=True)
    assert np.array_equal(cb, item_coefs(np.where(swap, X, B), Y, "kendall", "b"), equal_nan=True)
    ref = np.array([[scipy.stats.kendalltau(np.where(swap[d, :, j], B[:, j], X[:, j]), Y[:, j]).statistic
                     for j in range(I)] for d in range(min(k, 5))])
    assert np.allclose(ca[:len(ref)], ref, equal_nan=True, atol=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_whole_system_swap_deltas_equal_scipy_per_item(seed):
    """system_swap_deltas (full τ-b: the items' counts summed before the draws) equals, draw by draw, the mean over
    the items of scipy's τ-b of each swapped item minus the same for the other orientation, with ties in the target
    and in the metrics (also ties that a swap makes or breaks, and items whose τ is undefined in some draws) and
    without ties in the metrics (seeds 0, 4: every item's denominator fixed)."""
    from clir_eval.correlation.items import system_swap_deltas

    r = np.random.default_rng(seed)
    S, I, k = int(r.integers(3, 12)), int(r.integers(1, 25)), int(r.integers(1, 60))
    a = r.integers(0, 3, (S, I)).astype(float) if seed % 2 else r.normal(size=(S, I))
    b = r.integers(0, 3, (S, I)).astype(float) if seed % 4 == 1 else r.normal(size=(S, I)).round(1 + 15 * (seed % 4 == 0))
    Y = r.integers(0, 3, (S, I)).astype(float)
    Y[:, 0] = 1.0  # every system ties on the target: no τ in any draw
    W = r.random((k, S)) < 0.5
    got = system_swap_deltas(a, b, Y, W, ItemSettings())
    for d in range(k):
        means = []
        for first, second in ((b, a), (a, b)):
            x = np.where(W[d][:, None], first, second)
            taus = [scipy.stats.kendalltau(x[:, j], Y[:, j]).statistic for j in range(I)]
            taus = [t for t in taus if not math.isnan(t)]
            means.append(sum(taus) / len(taus) if taus else math.nan)
        ref = 0.0 if math.isnan(means[0] - means[1]) else means[0] - means[1]
        assert got[d] == pytest.approx(ref, abs=1e-12), (d, got[d], ref)


def test_group_sums_are_the_pair_counts_of_the_cells():
    """Aggregated pair matrices equal a plain double loop over the cells (absent cells left out)."""
    r = np.random.default_rng(3)
    X = r.integers(0, 4, (5, 7)).astype(float)
    Y = r.integers(0, 3, (5, 7)).astype(float)
    X[1, 2] = Y[3, 4] = np.nan
    for axis in (0, 1):
        gs = group_sums(X, Y, axis)
        A, B = (X, Y) if axis == 0 else (X.T, Y.T)
        G, n = A.shape
        ref = {k: np.zeros((G, G)) for k in ("c", "tx", "ty", "txy")}
        for g in range(G):
            for h in range(G):
                for i in range(n):
                    for j in range(n):
                        vals = (A[g, i], B[g, i], A[h, j], B[h, j])
                        if any(np.isnan(v) for v in vals):
                            continue
                        ref["c"][g, h] += np.sign(vals[0] - vals[2]) * np.sign(vals[1] - vals[3])
                        ref["tx"][g, h] += vals[0] == vals[2]
                        ref["ty"][g, h] += vals[1] == vals[3]
                        ref["txy"][g, h] += vals[0] == vals[2] and vals[1] == vals[3]
        for k, v in ref.items():
            assert np.array_equal(getattr(gs, k), v), (axis, k)


def test_item_correlations_are_cached_and_equal_through_worker_processes(tmp_path):
    """The item-level rows and verdicts are the same computed here, through 2 worker processes and
    read back from the cache; another matrix value or setting is another cache entry."""
    from clir_eval.correlation.items import ItemMatrix, ItemSettings
    from clir_eval.pipeline.cache import Cache
    from clir_eval.pipeline.executor import LocalExecutor
    from clir_eval.pipeline.item_level import item_correlations

    r = np.random.default_rng(11)
    X = r.normal(size=(6, 20)).round(2)
    Y = (X + r.normal(size=(6, 20))).round(1)
    B = r.normal(size=(6, 20)).round(2)
    docs = ItemMatrix("documents", tuple(f"s{i}" for i in range(6)), tuple(f"d{j}" for j in range(20)),
                      {"chrf": X, "bleu": B}, {"retrievability": Y})
    queries = ItemMatrix("queries", docs.systems, tuple(f"q{j}" for j in range(8)),
                         {"chrf": X[:, :8], "bleu": B[:, :8]}, {"map": Y[:, :8]})
    s = ItemSettings(bootstrap=50, permutation=50)
    here = item_correlations([docs, queries], s, 13, [])
    with LocalExecutor(2) as ex:
        there = item_correlations([docs, queries], s, 13, [], None, ex.map)
    assert there == here and len(here["correlations"]) == 16 and len(here["verdicts"]) == 2
    cache = Cache(tmp_path / "cache")
    assert item_correlations([docs, queries], s, 13, [], cache) == here
    entries = sorted((tmp_path / "cache" / "item_level").glob("*.manifest.json"))
    assert len(entries) == 1
    assert item_correlations([docs, queries], s, 13, [], cache) == json.loads(json.dumps(here))
    X2 = X.copy()
    X2[0, 0] += 1
    other = ItemMatrix("documents", docs.systems, docs.ids, {"chrf": X2, "bleu": B}, docs.y)
    item_correlations([other, queries], s, 13, [], cache)
    item_correlations([docs, queries], ItemSettings(bootstrap=50, permutation=60), 13, [], cache)
    assert len(list((tmp_path / "cache" / "item_level").glob("*.manifest.json"))) == 3


@pytest.mark.parametrize("spec", ["macrof1", "microf1", "microf:k=0", "microf:k=0.3", "macrof:beta=2",
                                  "microf:k=1e15"])  # integer weights whose sums pass 2**53: not exact
def test_type_f_item_scores_equal_each_rows_corpus_score(spec):
    """MacroF/MicroF item scores read row by row from one CSR copy equal the generic per-row
    corpus score (slicing the row), number for number, also for empty items."""
    from clir_eval.mt.base import MTMetric, load_metric

    m = load_metric(spec)
    hyps = ["the cat sat on the mat", "", "a rare word appears", "the the the", "x"]
    refs = [["the cat is on the mat", "nothing here", "", "the dog", "a rare word appears here"]]
    stats = m.segment_stats(hyps, refs)
    assert np.array_equal(m.item_scores(stats), MTMetric.item_scores(m, stats))
    rng = np.random.default_rng(5)  # long items: sums over hundreds of types (numpy's pairwise blocks)
    words = [f"w{i}" for i in range(3000)]
    text = lambda: " ".join(rng.choice(words, size=int(rng.integers(0, 400))))  # noqa: E731
    hyps, refs = [text() for _ in range(30)], [[text() for _ in range(30)]]
    stats = m.segment_stats(hyps, refs)
    assert np.array_equal(m.item_scores(stats), MTMetric.item_scores(m, stats))


def test_type_f_item_scores_share_cells_between_metrics_of_one_matrix():
    """MacroF and MicroF scoring one statistics matrix one after the other (the second reuses the
    first's cells) each equal their own per-row corpus scores; a different matrix next is not
    mistaken for the kept one."""
    from clir_eval.mt import typebased
    from clir_eval.mt.base import MTMetric, load_metrics

    macro, micro = load_metrics(["macrof1", "microf:k=0.5"])
    rng = np.random.default_rng(9)
    words = [f"w{i}" for i in range(500)]
    text = lambda: " ".join(rng.choice(words, size=int(rng.integers(0, 60))))  # noqa: E731
    for _ in range(2):
        hyps, refs = [text() for _ in range(40)], [[text() for _ in range(40)]]
        stats = macro.segment_stats(hyps, refs)
        for m in (macro, micro, macro):
            assert np.array_equal(m.item_scores(stats), MTMetric.item_scores(m, stats))
    del stats
    assert not typebased._CELLS  # the cells go with their matrix


@pytest.mark.parametrize("variant", ["b", "c"])
def test_one_cell_groups_draws_equal_recomputing(variant):
    """One system's items resampled (one cell per group, ties' forms as sums of squares): every
    draw's coefficient equals scipy on the drawn cells, with ties and an absent cell."""
    r = np.random.default_rng(9)
    x = r.integers(0, 5, (1, 15)).astype(float)
    y = r.integers(0, 4, (1, 15)).astype(float)
    x[0, 4] = np.nan
    idx = r.integers(0, 15, (40, 15))
    U = np.stack([np.bincount(i, minlength=15) for i in idx]).astype(float)
    got = tau_draws(group_sums(x, y, 1), U, variant)
    for b, i in enumerate(idx):
        xd, yd = x[0, i], y[0, i]
        keep = ~np.isnan(xd)
        ref = scipy.stats.kendalltau(xd[keep], yd[keep], variant=variant).statistic
        assert got[b] == pytest.approx(ref, nan_ok=True, abs=1e-12)


def test_swap_bits_are_seeded_fair_coin_flips():
    from clir_eval.correlation.items import swap_bits

    a = swap_bits(np.random.default_rng(3), (200, 7, 31))
    assert a.shape == (200, 7, 31) and a.dtype == bool
    assert np.array_equal(a, swap_bits(np.random.default_rng(3), (200, 7, 31)))
    assert abs(a.mean() - 0.5) < 0.01 and abs(a[:, 0].mean() - a[:, -1].mean()) < 0.03


def test_report_says_the_item_level_tests_floor_and_unsettled_decisions():
    """Under the item-level answers the report names the test, its family, the smallest p it can reach
    (every swap pattern of S systems: 2^-(S-1); else the cap of draws) and how many decisions the draws
    left unsettled, or that every decision is settled."""
    from clir_eval.report.blocks import blocks_markdown
    from clir_eval.report.items import item_level_blocks

    pair = lambda p, sig, settled=True: {"a": "x", "b": "y", "delta": 0.1, "p_value": p, "p_adjusted": p,  # noqa: E731
                                         "significant": sig, "settled": settled}
    vds = [{"items": "documents", "target": "t", "answer": "t: x above y", "test": "whole-system swaps (exact)",
            "family": "target", "exact": True, "p_floor": 1 / 2 ** 11, "n_systems": 12, "unsettled": 0,
            "pairwise": [pair(0.001, True), pair(0.02, True), pair(0.5, False)]}]
    block = {"settings": {"method": "kendall", "variant": "b", "ties": "τ-b", "alpha": 0.05, "bootstrap": 10,
                          "permutation": 1000, "level": 0.95, "seed": 1, "correction": "holm"},
             "items": {"documents": {"n": 5}, "queries": {"n": 0}}, "systems": ["a", "b", "c"],
             "correlations": [], "verdicts": vds}
    md = blocks_markdown(item_level_blocks({"item_level": block}))
    assert "whole-system swaps (exact)" in md and "holm-adjusted over each target's metric pairs" in md
    assert "No p can be below 0.00049 (with every swap pattern of the 12 systems)" in md
    assert "Every decision is settled" in md and "unsettled" not in md
    vds[0].update(exact=False, p_floor=1 / 3001, unsettled=2, family="all",
                  unsettled_note="whole-system swaps: 2 decision(s) not settled; about 9000 draws would settle them")
    md = blocks_markdown(item_level_blocks({"item_level": block}))
    assert "t over documents: whole-system swaps: 2 decision(s) not settled; about 9000 draws" in md
    assert "over all 3 metric pairs" in md and "No p can be below 0.00033 (at the cap of draws)" in md
    assert "2 decision(s) stayed unsettled" in md and "Every decision is settled" not in md


@pytest.mark.parametrize("seed", range(3))
def test_target_permutation_tests_equal_a_plain_scipy_loop(seed):
    """Every metric's item-grouping permutation p-value against one target equals a plain loop
    over the same permutations of the target (scipy's τ-b per item, averaged), with the fast rank
    path (full metrics) and the general path (a metric with missing cells) in one call."""
    from clir_eval.correlation.items import ItemSettings, target_permutation_tests

    r = np.random.default_rng(seed)
    S, I, k = 6, 8, 40
    Y = r.integers(0, 3, (S, I)).astype(float)
    Xs = [r.integers(0, 4, (S, I)).astype(float), r.normal(size=(S, I)).round(1), Y + r.normal(size=(S, I))]
    Xs[2][1, 3] = np.nan
    s = ItemSettings(permutation=k)

    def avg_tau(X, Yv):
        taus = []
        for j in range(I):
            keep = ~(np.isnan(X[:, j]) | np.isnan(Yv[:, j]))
            t = scipy.stats.kendalltau(X[keep, j], Yv[keep, j]).statistic if keep.sum() >= 3 else np.nan
            if not np.isnan(t):
                taus.append(t)
        return np.mean(taus)

    obs = [avg_tau(X, Y) for X in Xs]
    got = target_permutation_tests(Xs, Y, obs, s, (seed, 99))
    rng = np.random.default_rng([seed, 99])
    perm = rng.permuted(np.broadcast_to(np.arange(S)[:, None], (k, S, I)).copy(), axis=1)
    for X, o, (p, test) in zip(Xs, obs, got):
        draws = [avg_tau(X, np.take_along_axis(Y, perm[b], axis=0)) for b in range(k)]
        hits = sum(abs(d) >= abs(o) - 1e-12 for d in draws)
        assert p == (hits + 1) / (k + 1)
        assert "k=40" in test


@pytest.mark.parametrize("method,variant,missing", [("kendall", "b", False), ("kendall", "b", True),
                                                    ("kendall", "c", False), ("kendall", "acc23", True),
                                                    ("pearson", None, False), ("spearman", None, True)])
def test_target_permutation_tests_with_constant_target_items_equal_a_plain_loop(method, variant, missing):
    """Items whose target is constant (no coefficient in any permutation) leave the permutations'
    arithmetic on every path (full τ-b; missing cells, τ-c, acc23, Pearson, Spearman): each p-value
    equals a plain loop over the same permutations of the whole target, every item kept."""
    from clir_eval.correlation.items import target_permutation_tests

    r = np.random.default_rng(4)
    S, I, k = 7, 12, 40
    Y = r.integers(0, 4, (S, I)).astype(float)
    Y[:, [0, 5, 9]] = 2.0
    Xs = [r.normal(size=(S, I)).round(1), Y + r.normal(size=(S, I))]
    if missing:
        Xs[1][1, 3], Y[2, 7], Y[4, 5] = np.nan, np.nan, np.nan
    s = ItemSettings(method=method, variant=variant, permutation=k)
    obs = [grouped(X, Y, "item", method, variant)[0] for X in Xs]
    got = target_permutation_tests(Xs, Y, obs, s, (4, 99))
    perm = np.random.default_rng([4, 99]).permuted(np.broadcast_to(np.arange(S)[:, None], (k, S, I)).copy(), axis=1)
    for X, o, (p, _) in zip(Xs, obs, got):
        draws = [grouped(X, np.take_along_axis(Y, perm[b], axis=0), "item", method, variant)[0] for b in range(k)]
        assert p == (sum(abs(d) >= abs(o) - 1e-12 for d in draws) + 1) / (k + 1)


@pytest.mark.parametrize("items,word", [("documents", "within-document τ"), ("queries", "within-query τ"),
                                        ("0", "within-item τ")])  # correlate --item-col: a table's items
def test_bound_answer_names_the_item_in_the_singular(items, word):
    """The "no metric predicts it beyond ±x" answer names one item of its kind ("within-query",
    not a clipped plural)."""
    from clir_eval.correlation.items import ItemSettings, _answer

    mine = {m: {"tau": 0.01, "significant": False, "ci_crossed": [-0.05, 0.04]} for m in ("bleu", "chrf1")}
    text = _answer(items, "map", ["bleu", "chrf1"], [["bleu", "chrf1"]], None, mine, [], ItemSettings())
    assert "beyond ±0.050" in text and word in text


def test_an_analysis_that_repeats_another_up_to_item_order_is_copied_and_marked():
    """One relevant document per query: the queries' map (and reciprocal rank) are the documents'
    retrievability in another item order. That analysis is computed once: the copy's rows carry
    same_as, its coefficients and deterministic p-values equal those of the queries analysis
    computed on its own, and its verdict's answer speaks of queries. A target that differs in one
    cell is computed, not copied."""
    from clir_eval.pipeline.item_level import item_correlations

    r = np.random.default_rng(5)
    S, I = 7, 24
    X = r.normal(size=(S, I)).round(2)
    B = r.normal(size=(S, I)).round(2)
    Y = (X + r.normal(size=(S, I))).round(1)
    perm = r.permutation(I)
    systems = tuple(f"s{i}" for i in range(S))
    docs = ItemMatrix("documents", systems, tuple(f"d{j}" for j in range(I)), {"chrf": X, "bleu": B},
                      {"retrievability": Y})
    Y2 = Y[:, perm].copy()
    Y2[3, 5] += 0.5
    queries = ItemMatrix("queries", systems, tuple(f"q{j}" for j in range(I)), {"chrf": X[:, perm], "bleu": B[:, perm]},
                         {"map": Y[:, perm], "recall_10": Y2})
    s = ItemSettings(bootstrap=40, permutation=40)
    out = item_correlations([docs, queries], s, 3, [])
    assert out["same"] == [{"items": "queries", "target": "map", "same_as": {"items": "documents", "target": "retrievability"}}]
    rows = {(r_["items"], r_["target"], r_["mt_metric"], r_["grouping"]): r_ for r_ in out["correlations"]}
    assert len(rows) == 3 * 2 * len(GROUPINGS)
    alone = {(r_["mt_metric"], r_["grouping"]): r_ for r_ in correlate_matrix(
        ItemMatrix("queries", systems, queries.ids, queries.x, {"map": queries.y["map"]}), s, 99)}
    for (items, target, x, g), row in rows.items():
        if (items, target) == ("queries", "map"):
            assert row["same_as"] == {"items": "documents", "target": "retrievability"}
            src = rows["documents", "retrievability", x, g]
            assert row["ci_items"] == src["ci_items"] and row["p_value"] == src["p_value"]
            assert row["tau"] == pytest.approx(alone[x, g]["tau"], abs=1e-12)
            # descriptive, or the crossed test (no random draws): the same p whatever the order of the items
            assert row["p_value"] == pytest.approx(alone[x, g]["p_value"], abs=1e-12)
        else:
            assert "same_as" not in row
    verdicts = {(v["items"], v["target"]): v for v in out["verdicts"]}
    assert set(verdicts) == {("documents", "retrievability"), ("queries", "map"), ("queries", "recall_10")}
    copy, src = verdicts["queries", "map"], verdicts["documents", "retrievability"]
    assert copy["pairwise"] == src["pairwise"] and copy["answer"].startswith("map over queries")
    assert "documents" not in copy["answer"]


def test_answers_name_only_the_pairs_that_are_significant():
    """A metric is said to be above another only where that pair's adjusted p is below α; cluster
    membership (mt-metrics-eval's AssignRanks) does not make every member of a higher cluster
    significantly above every member of a lower one."""
    from clir_eval.correlation.items import _answer

    s = ItemSettings()
    mine = {m: {"tau": t, "significant": True, "ci_crossed": [t - 0.05, t + 0.05]}
            for m, t in [("chrf1", 0.3), ("microf1", 0.28), ("macrof1", 0.27), ("bleu", 0.2)]}
    order = ["chrf1", "microf1", "macrof1", "bleu"]
    pw = [{"a": a, "b": b, "significant": (a, b) == ("chrf1", "bleu")} for i, a in enumerate(order) for b in order[i + 1:]]
    got = _answer("queries", "map", order, [["chrf1", "microf1", "macrof1"], ["bleu"]], None, mine, [], s, pw)
    assert "chrf1 > bleu (no other pair)" in got and "microf1 >" not in got and "above bleu" not in got
    pw = [{"a": a, "b": b, "significant": (a, b) == ("chrf1", "microf1")} for i, a in enumerate(order) for b in order[i + 1:]]
    got = _answer("queries", "map", order, [["chrf1"], ["microf1", "macrof1", "bleu"]], "chrf1", mine, [], s, pw)
    assert "chrf1 tells best on which queries" in got and "significantly above microf1;" in got
    assert "not separated from 2 other metric(s)" in got


def _demo_config(data, **item_level):
    """The demo's config (correlation.bootstrap 1000) on its data ``data`` with ``item_level`` set as given."""
    from clir_eval.config.load import config_from_dict

    cfg = yaml.safe_load(files("clir_eval").joinpath("data/demo.yaml").read_text(encoding="utf-8"))
    if item_level:
        cfg["item_level"] = item_level
    return config_from_dict(cfg, base_dir=data, data_root=str(data))


def test_descriptive_bootstraps_are_off_by_default_and_the_same_when_asked_for(tmp_path):
    """A run computes no ci_items/ci_systems unless item_level.bootstrap asks (correlation.bootstrap does not);
    without them every other field of every row is what it is with them; with them they are the percentile
    intervals of a plain loop over scipy: items resampled (their τ averaged), then systems resampled (each item's
    τ recomputed), from the row's own generator ``[seed, row]`` in that order."""
    from clir_eval.correlation.statistics import percentile_ci
    from clir_eval.pipeline.item_level import run_item_settings
    from clir_eval.sources.demo import generate_demo

    generate_demo(tmp_path / "data", seed=13)
    data = tmp_path / "data"
    assert _demo_config(data).correlation.bootstrap == 1000
    assert run_item_settings(_demo_config(data)).bootstrap == 0 == ItemSettings().bootstrap
    assert run_item_settings(_demo_config(data, bootstrap=300)).bootstrap == 300

    r = np.random.default_rng(8)
    S, I = 6, 9
    X = r.integers(0, 5, (S, I)).astype(float)
    Y = (X + r.integers(0, 3, (S, I))).astype(float)
    m = ItemMatrix("documents", tuple(f"s{i}" for i in range(S)), tuple(f"d{j}" for j in range(I)), {"chrf": X},
                   {"retrievability": Y})
    off = correlate_matrix(m, ItemSettings(permutation=50), 4)
    on = correlate_matrix(m, ItemSettings(permutation=50, bootstrap=40), 4)
    assert not any("ci_items" in row or "ci_systems" in row for row in off)
    assert [{k: v for k, v in row.items() if k not in ("ci_items", "ci_systems")} for row in on] == off
    row = GROUPINGS.index("item")
    got = on[row]
    rng = np.random.default_rng([4, row])
    taus = np.array([scipy.stats.kendalltau(X[:, j], Y[:, j]).statistic for j in range(I)])
    items = [np.nanmean(taus[rng.integers(0, I, I)]) for _ in range(40)]
    systems = []
    for idx in rng.integers(0, S, (40, S)):
        with np.errstate(invalid="ignore"):
            t = [scipy.stats.kendalltau(X[idx, j], Y[idx, j]).statistic for j in range(I)]
        systems.append(np.nanmean(t) if not np.isnan(t).all() else np.nan)
    assert got["ci_items"] == pytest.approx(list(percentile_ci(items, 0.95)), abs=1e-12)
    assert got["ci_systems"] == pytest.approx(list(percentile_ci(systems, 0.95)), abs=1e-12)


def test_the_report_drops_the_descriptive_column_when_the_bootstraps_are_off():
    """Rows without ci_items/ci_systems: no column for them, no empty brackets, and the caption says they were not
    computed and how to add them; with them the column is there."""
    from clir_eval.report.blocks import blocks_markdown
    from clir_eval.report.items import item_level_blocks

    r = np.random.default_rng(2)
    X = r.normal(size=(6, 12))
    m = ItemMatrix("documents", tuple(f"s{i}" for i in range(6)), tuple(f"d{j}" for j in range(12)), {"chrf1": X},
                   {"retrievability": X + r.normal(size=(6, 12))})

    def markdown(bootstrap: int) -> str:
        rows = correlate_matrix(m, ItemSettings(permutation=50, bootstrap=bootstrap), 1)
        block = {"settings": {"method": "kendall", "variant": "b", "ties": "τ-b", "alpha": 0.05, "bootstrap": bootstrap,
                              "permutation": 50, "level": 0.95, "seed": 1, "correction": "holm"},
                 "items": {"documents": {"n": 12}, "queries": {"n": 0}}, "systems": list(m.systems),
                 "correlations": rows, "verdicts": []}
        return blocks_markdown(item_level_blocks({"item_level": block}))

    off, on = markdown(0), markdown(30)
    head_off = next(ln for ln in off.splitlines() if ln.startswith("| target |"))
    head_on = next(ln for ln in on.splitlines() if ln.startswith("| target |"))
    assert "items only" not in head_off and "items only" in head_on
    assert head_off.count("|") == head_on.count("|") - 1
    line = next(ln for ln in off.splitlines() if ln.startswith("| retrievability | chrf1 |"))
    assert line.count("|") == head_off.count("|") and "[]" not in off and "| |" not in line.replace("  ", " ")
    assert "not computed (item_level.bootstrap: 0" in off and "not computed" not in on


def test_a_verdicts_pair_tests_reuse_each_metrics_coefficients_only_on_the_same_cells():
    """crossed_pair_tests (one job per verdict) gives every pair what crossed_pair_test gives it alone, also where
    the metrics miss different cells (so a metric's within-item coefficients differ from pair to pair)."""
    from clir_eval.correlation.items import crossed_pair_test, crossed_pair_tests

    r = np.random.default_rng(6)
    S, I = 8, 30
    Y = r.normal(size=(S, I)).round(1)
    Xs = {f"m{k}": (Y + r.normal(size=(S, I)) * (k + 1)).round(2) for k in range(4)}
    Xs["m1"][2, 3] = Xs["m2"][5, 7] = Xs["m3"][0, 0] = np.nan
    pairs = [(a, b) for i, a in enumerate(Xs) for b in list(Xs)[i + 1:]]
    s = ItemSettings(permutation=100)
    got = crossed_pair_tests(Xs, pairs, Y, s)
    want = [crossed_pair_test(Xs[a], Xs[b], Y, s) for a, b in pairs]
    assert got == want and len({g[0] for g in got}) == len(pairs)
