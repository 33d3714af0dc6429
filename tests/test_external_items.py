"""External per-document MT scores in a run's item-level analysis: a table with an item column and
mt-metrics-eval segment score files with the test set's .docs file. The joined scores are checked against
plain loops over the files (csv module, scipy.stats.kendalltau), a planted signal is found first, and bad
inputs end in one ``error:`` line before anything is written."""

from __future__ import annotations

import csv
import json
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest
import yaml
from test_item_level import loop_groupings  # the plain scipy loop of the item-level tests

from clir_eval.config.load import load_config
from clir_eval.pipeline.run import run_experiment

SYSTEMS_SHOWN = 6  # a few of the demo's systems keep the runs small


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from clir_eval.sources.demo import generate_demo

    data = tmp_path_factory.mktemp("demo") / "data"
    generate_demo(data, seed=13)
    return data


def _config(data: Path, tmp: Path, external: list | None = None, permutation: int = 0) -> Path:
    text = files("clir_eval").joinpath("data/demo.yaml").read_text(encoding="utf-8")
    cfg = yaml.safe_load(text.replace("${DATA_ROOT}", str(data)))
    del cfg["data_root"]
    names = sorted(p.stem for p in (data / "systems").glob("*.jsonl"))[:SYSTEMS_SHOWN]
    cfg["systems"] = [{"name": n, "hyp": f"{data}/mt/{n}.txt", "docs": f"{data}/systems/{n}.jsonl"} for n in names]
    cfg["mt"]["metrics"] = ["chrf1", "bleu"]
    cfg["ir"]["measures"] = ["recip_rank"]
    cfg["correlation"].update(bootstrap=0, permutation=permutation)
    if external is not None:
        cfg["external"] = external
    path = tmp / "exp.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def _ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _systems(data: Path) -> list[str]:
    return sorted(p.stem for p in (data / "systems").glob("*.jsonl"))[:SYSTEMS_SHOWN]


def _retrievability(out: Path, qrels: Path, systems: list[str]) -> tuple[list[str], np.ndarray]:
    """Judged documents and each one's mean reciprocal rank over the queries judging it relevant, from the
    qrels and the TREC run files."""
    rel: dict[str, set[str]] = {}
    for line in qrels.read_text().splitlines():
        q, _, d, r = line.split()
        if int(r) > 0:
            rel.setdefault(q, set()).add(d)
    judged = sorted({d for ds in rel.values() for d in ds})
    ret = np.zeros((len(systems), len(judged)))
    for i, s in enumerate(systems):
        [run] = [p for p in (out / "cache" / "runs").glob("*.run") if p.name.rsplit("-", 1)[0] == s]
        rows: dict[str, list[tuple[float, str]]] = {}
        for line in run.read_text().splitlines():
            q, _, d, _, score, _ = line.split()
            rows.setdefault(q, []).append((float(score), d))
        ranking = {q: [d for _, d in sorted(v, reverse=True)] for q, v in rows.items()}
        for j, d in enumerate(judged):
            rrs = [1 / (ranking[q].index(d) + 1) if d in ranking.get(q, []) else 0.0 for q in rel if d in rel[q]]
            ret[i, j] = sum(rrs) / len(rrs)
    return judged, ret


def _rows(results: dict, name: str) -> dict[str, float]:
    return {r["grouping"]: r["tau"] for r in results["item_level"]["correlations"]
            if r["mt_metric"] == name and r["items"] == "documents"}


def _write_table(path: Path, rows: list[list[str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, delimiter="\t").writerows(rows)


def _plain_table(path: Path, systems: list[str], docs: list[str], col: str) -> np.ndarray:
    """The table's column as a systems x documents matrix, read with the csv module (missing: NaN)."""
    m = np.full((len(systems), len(docs)), np.nan)
    with open(path, encoding="utf-8") as fh:
        for r in csv.DictReader(fh, delimiter="\t"):
            if r["system"] in systems and r["doc"] in docs and r[col] not in ("", "NA"):
                m[systems.index(r["system"]), docs.index(r["doc"])] = float(r[col])
    return m


def test_item_table_joins_the_item_level_analysis_as_a_plain_loop_says(demo, tmp_path):
    systems = _systems(demo)
    all_docs = _ids(demo / "english.jsonl")
    r = np.random.default_rng(5)
    rows = [["doc", "system", "ext"]]
    for d in all_docs:
        for s in systems + ["not-in-run"]:
            v = r.normal()
            rows.append([d, s, "NA" if r.random() < 0.1 else f"{v:.6f}"])
    _write_table(tmp_path / "items.tsv", rows)
    cfg = _config(demo, tmp_path, [{"file": "items.tsv", "kind": "mt", "item_col": "doc", "columns": ["ext"]}])
    out = tmp_path / "out"
    results = run_experiment(load_config(cfg), out, jobs=1, quiet=True)
    block = results["item_level"]
    assert block["metrics"] == ["chrf1", "bleu", "ext"]
    assert block["signatures"]["ext"].startswith("src:items.tsv|items:doc|sha256:")
    assert "ext" not in results["systems"][systems[0]]["mt"]  # per-document scores stay at item level
    assert any("not-in-run" in n for n in block["notes"])
    assert any(n.startswith("ext: ") and "missing" in n for n in block["notes"])
    judged, ret = _retrievability(out, demo / "qrels.txt", systems)
    plain_x = _plain_table(tmp_path / "items.tsv", systems, judged, "ext")
    from clir_eval.sources.item_tables import item_arrays, read_external_items

    c = load_config(cfg)
    joined = item_arrays(read_external_items(c, c.systems, all_docs), systems, judged)["ext"]
    np.testing.assert_array_equal(joined, plain_x)  # NaN where the plain loop has NaN, the same floats elsewhere
    want = loop_groupings(plain_x, ret)
    got = _rows(results, "ext")
    for g in ("none", "item", "system"):
        assert got[g] == pytest.approx(want[g], abs=1e-9), g
    # the registry metrics' rows are unchanged by the join
    (tmp_path / "p").mkdir()
    plain = run_experiment(load_config(_config(demo, tmp_path / "p")), tmp_path / "plain", jobs=1, quiet=True)
    assert _rows(plain, "chrf1") == _rows(results, "chrf1")


def test_score_that_tracks_retrievability_is_first_at_item_level(demo, tmp_path):
    systems = _systems(demo)
    out = tmp_path / "out"
    run_experiment(load_config(_config(demo, tmp_path)), out, jobs=1, quiet=True)
    judged, ret = _retrievability(out, demo / "qrels.txt", systems)
    r = np.random.default_rng(7)
    noisy = ret + 0.05 * r.normal(size=ret.shape)
    rows = [["system", "doc", "tracks"]] + [[s, d, repr(float(noisy[i, j]))] for i, s in enumerate(systems)
                                            for j, d in enumerate(judged)]
    _write_table(tmp_path / "items.tsv", rows)
    cfg = _config(demo, tmp_path, [{"file": "items.tsv", "kind": "mt", "item_col": "doc", "columns": ["tracks"]}],
                  permutation=200)
    results = run_experiment(load_config(cfg), out, jobs=1, quiet=True)
    [v] = [v for v in results["item_level"]["verdicts"] if v["target"] == "retrievability"]
    assert v["ranking"][0] == "tracks", v
    # the crossed test of the within Δτ (systems and documents both random; no floor from swap patterns): a pair
    # is significant exactly where its adjusted p is below α and its interval excludes 0
    assert v["p_method"] == "crossed" and v["p_floor"] is None
    for p in v["pairwise"]:
        lo, hi = p["ci_crossed"]
        assert p["significant"] == (p["p_adjusted"] < 0.05 and not lo <= 0 <= hi), p
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "tracks" in report and "No random draws: every decision is settled." in report


def _docs_file(path: Path, docs: list[str], nseg: dict[str, int]) -> list[str]:
    seg_docs = [d for d in docs for _ in range(nseg[d])]
    path.write_text("".join(f"news\t{d}\n" for d in seg_docs), encoding="utf-8")
    return seg_docs


def test_mtme_segment_scores_become_document_means(demo, tmp_path):
    systems = _systems(demo)
    docs = _ids(demo / "english.jsonl")
    r = np.random.default_rng(3)
    nseg = {d: int(r.integers(1, 4)) for d in docs}
    seg_docs = _docs_file(tmp_path / "xx-en.docs", docs, nseg)
    seg = {s: [None if r.random() < 0.05 else float(r.normal()) for _ in seg_docs] for s in systems}
    (tmp_path / "mtme").mkdir()
    with open(tmp_path / "mtme" / "segm-refA.seg.score", "w") as fh:
        for s in systems:
            for v in seg[s]:
                fh.write(f"{s}\t{'None' if v is None else repr(v)}\n")
    cfg = _config(demo, tmp_path, [{"file": "mtme/segm-refA.seg.score", "format": "mtme", "kind": "mt",
                                    "documents": "xx-en.docs"}])
    out = tmp_path / "out"
    results = run_experiment(load_config(cfg), out, jobs=1, quiet=True)
    block = results["item_level"]
    assert block["signatures"]["segm"].endswith("|doc:mean-of-segments")
    judged, ret = _retrievability(out, demo / "qrels.txt", systems)
    want_x = np.full((len(systems), len(judged)), np.nan)
    for i, s in enumerate(systems):
        for j, d in enumerate(judged):
            vals = [v for v, sd in zip(seg[s], seg_docs) if sd == d and v is not None]
            if vals:
                want_x[i, j] = sum(vals) / len(vals)
    from clir_eval.io.mtme import document_scores, parse_name

    order, per_sys = document_scores(parse_name(str(tmp_path / "mtme" / "segm-refA.seg.score")),
                                     str(tmp_path / "xx-en.docs"))
    got_x = np.array([[np.nan if per_sys[s][order.index(d)] is None else per_sys[s][order.index(d)] for d in judged]
                      for s in systems])
    np.testing.assert_array_equal(np.isnan(got_x), np.isnan(want_x))
    np.testing.assert_allclose(got_x[~np.isnan(got_x)], want_x[~np.isnan(want_x)], rtol=1e-12)
    want = loop_groupings(want_x, ret)
    got = _rows(results, "segm")
    for g in ("none", "item", "system"):
        assert got[g] == pytest.approx(want[g], abs=1e-9), g


def _bad_table(tmp: Path, data: Path, case: str) -> dict:
    systems, docs = _systems(data), _ids(data / "english.jsonl")
    rows = [["system", "doc", "ext"]] + [[s, d, "1.5"] for s in systems for d in docs[:20]]
    if case == "unknown-doc":
        rows.append([systems[0], "no-such-doc", "2"])
    elif case == "duplicate":
        rows.append([systems[1], docs[3], "2"])
    elif case == "non-numeric":
        rows[5][2] = "high"
    elif case == "docs-count":
        _docs_file(tmp / "xx-en.docs", docs, {d: 1 for d in docs})
        (tmp / "m").mkdir()
        (tmp / "m" / "segm-refA.seg.score").write_text("".join(f"{s}\t0.5\n" for s in systems for _ in docs[:-1]))
        return {"file": "m/segm-refA.seg.score", "format": "mtme", "kind": "mt", "documents": "xx-en.docs"}
    _write_table(tmp / "items.tsv", rows)
    return {"file": "items.tsv", "kind": "mt", "item_col": "doc", "columns": ["ext"]}


@pytest.mark.parametrize("case, says", [
    ("unknown-doc", "'no-such-doc'"),
    ("duplicate", "already have a row"),
    ("non-numeric", "not a number"),
    ("docs-count", "names 400 segments"),
])
def test_bad_item_inputs_give_one_error_line_and_write_nothing(demo, tmp_path, cli, case, says):
    cfg = _config(demo, tmp_path, [_bad_table(tmp_path, demo, case)])
    out = tmp_path / "out"
    code, stdout, err = cli("run", cfg, "--out", out, "--quiet")
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], err
    assert "Traceback" not in err
    assert not (out / "results.json").exists() and not (out / "report.md").exists()


def test_wmt21_segment_scores_join_a_document_level_run(tmp_path, shared_data):
    """Real text: sentence chrF of WMT21 ru-en systems written as an mt-metrics-eval .seg.score file with the
    test set's .docs file (the whole test set, no real mt-metrics-eval files being in the shared data), joined
    into a run over part of its documents; the documents' τ equal a plain loop over the two files."""
    import sacrebleu

    from clir_eval.sources.wmt import read_wmt_xml

    xml = shared_data / "wmt21-docs" / "newstest2021.ru-en.all.xml.gz"
    if not xml.exists():
        pytest.skip(f"{xml} not found")
    ts = read_wmt_xml(xml)
    run_systems = list(ts.systems[:4])
    ref, chrf = ts.translation("ref:A"), sacrebleu.CHRF()
    seg_docs = [d for d in ts.docids for _ in ref[d]]
    (tmp_path / "xx-en.docs").write_text("".join(f"news\t{d}\n" for d in seg_docs), encoding="utf-8")
    (tmp_path / "m").mkdir()
    with open(tmp_path / "m" / "chrF-refA.seg.score", "w", encoding="utf-8") as fh:
        for s in ts.systems[:6]:  # two systems the run leaves out
            hyp = ts.translation(s)
            for d in ts.docids:
                for k, r in enumerate(ref[d]):
                    h = hyp.get(d)
                    fh.write(f"{s}\t{'None' if h is None else chrf.sentence_score(h[k], [r]).score!r}\n")
    cfg = {"name": "ru-en-ext", "wmt": {"xml": str(xml), "reference": "A", "systems": run_systems,
                                        "docs": ["izvestiya*", "mk.*", "kp.*", "aif.*"]},
           "mt": {"metrics": ["chrf1"]}, "queries": {"generate": "headline"},
           "retrieval": {"stopwords": "english", "depth": 100}, "ir": {"measures": ["recip_rank"]},
           "correlation": {"bootstrap": 0, "permutation": 0},
           "external": [{"file": "m/chrF-refA.seg.score", "format": "mtme", "kind": "mt", "documents": "xx-en.docs",
                         "columns": {"chrF": "chrF_seg"}, "unknown_documents": "ignore"}]}
    (tmp_path / "exp.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    out = tmp_path / "out"
    results = run_experiment(load_config(tmp_path / "exp.yaml"), out, jobs=1, quiet=True)
    block = results["item_level"]
    assert block["metrics"] == ["chrf1", "chrF_seg"]
    assert any("left out (unknown_documents: ignore)" in n for n in block["notes"])
    systems = block["systems"]
    # plain loop: the seg file's lines per system, grouped by the .docs file's lines
    lines: dict[str, list[str]] = {}
    for line in (tmp_path / "m" / "chrF-refA.seg.score").read_text().splitlines():
        s, v = line.split("\t")
        lines.setdefault(s, []).append(v)
    judged, ret = _retrievability(out, next((out / "cache" / "qrels").glob("*.txt")), systems)
    X = np.full((len(systems), len(judged)), np.nan)
    for i, s in enumerate(systems):
        for j, d in enumerate(judged):
            vals = [float(v) for v, sd in zip(lines[s], seg_docs) if sd == d and v != "None"]
            X[i, j] = sum(vals) / len(vals) if vals else np.nan
    assert block["items"]["documents"]["n"] == len(judged) >= 5
    want, got = loop_groupings(X, ret), _rows(results, "chrF_seg")
    for g in ("none", "item", "system"):
        assert got[g] == pytest.approx(want[g], abs=1e-9), g


def test_direction_both_subsets_keep_their_documents_of_an_item_table(tmp_path, cli):
    """wmt.direction: both runs each subset on its own documents; a per-document table covering all of them
    joins each subset (its other documents left out), not an error."""
    from wmt_gen import documents, noisy, write_xml

    ref = documents(12, seed=5, segments=5, words=10)
    half = {d: int(d[1:]) < 6 for d in ref}
    systems = {f"S{i}": noisy(ref, a, 10 + i) for i, a in enumerate([0.05, 0.25, 0.5, 0.7])}
    xml = write_xml(tmp_path / "dir.xml", {"A": ref}, systems,
                    attrs={d: {"origlang": "de" if half[d] else "en"} for d in ref})
    r = np.random.default_rng(2)
    _write_table(tmp_path / "items.tsv", [["system", "doc", "ext"]] + [[s, d, str(r.normal())] for s in systems
                                                                       for d in ref])
    cfg = {"name": "gen", "wmt": {"xml": str(xml), "reference": "A", "direction": "both"},
           "mt": {"metrics": ["chrf1"]}, "queries": {"generate": "headline"}, "retrieval": {"depth": 50},
           "ir": {"measures": ["map"]}, "correlation": {"bootstrap": 0, "permutation": 0},
           "external": [{"file": "items.tsv", "kind": "mt", "item_col": "doc", "columns": ["ext"]}]}
    (tmp_path / "exp.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    code, _, err = cli("run", tmp_path / "exp.yaml", "--out", tmp_path / "out", "-j", "1", "-q")
    assert code == 0, err
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert "ext" in res["item_level"]["metrics"]
    for side in ("source-original", "target-original"):
        assert "reason" not in res["direction"][side], res["direction"][side]
        sub = json.loads((tmp_path / "out" / "direction" / side / "results.json").read_text())
        assert "ext" in sub["item_level"]["metrics"]
        assert any("6 of its 12 documents are not in the run's collection" in n for n in sub["item_level"]["notes"])


def test_doc_score_files_and_docs_file_checks(tmp_path):
    from clir_eval.errors import UserError
    from clir_eval.io.mtme import document_scores, parse_name

    (tmp_path / "xx-en.docs").write_text("news\td1\nnews\td1\nnews\td2\nweb\td3\n")
    (tmp_path / "m-refA.doc.score").write_text("S1\t1.0\nS1\tNone\nS1\t3.5\nS2\t2\nS2\t4\nS2\t6\n")
    docs, per = document_scores(parse_name(str(tmp_path / "m-refA.doc.score")), str(tmp_path / "xx-en.docs"))
    assert docs == ["d1", "d2", "d3"] and per == {"S1": [1.0, None, 3.5], "S2": [2.0, 4.0, 6.0]}
    (tmp_path / "m-refA.seg.score").write_text("S1\t1\nS1\t2\nS1\tNone\nS1\t5\n")
    docs, per = document_scores(parse_name(str(tmp_path / "m-refA.seg.score")), str(tmp_path / "xx-en.docs"))
    assert per == {"S1": [1.5, None, 5.0]}
    (tmp_path / "bad.docs").write_text("news\td1\nnews\td2\nnews\td1\nnews\td3\n")
    with pytest.raises(UserError, match=r"bad.docs:3: document 'd1' appears again"):
        document_scores(parse_name(str(tmp_path / "m-refA.seg.score")), str(tmp_path / "bad.docs"))
    (tmp_path / "m-refA.sys.score").write_text("S1\t1\n")
    with pytest.raises(UserError, match="no per-document scores"):
        document_scores(parse_name(str(tmp_path / "m-refA.sys.score")), str(tmp_path / "xx-en.docs"))


def test_item_table_settings_are_checked(tmp_path, demo):
    from clir_eval.errors import UserError

    _write_table(tmp_path / "items.tsv", [["system", "doc", "ext"], ["copier", "doc0001", "1"]])
    for entry, says in [({"item_col": "doc", "kind": "ir"}, "kind: mt"),
                        ({"unknown_documents": "ignore"}, "applies to per-document tables"),
                        ({"documents": "items.tsv"}, "applies to format: mtme"),
                        ({"item_col": "doc", "columns": ["doc", "ext"]}, "both the item column and a score column")]:
        ext = {"file": "items.tsv", "kind": "mt", "columns": ["ext"], **entry}
        with pytest.raises(UserError, match=says):
            load_config(_config(demo, tmp_path, [ext]))


def test_a_bad_item_table_leaves_the_previous_outputs_alone(demo, tmp_path, cli):
    cfg = _config(demo, tmp_path)
    out = tmp_path / "out"
    assert cli("run", cfg, "--out", out, "-q")[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and not p.name.startswith(".")}
    cfg = _config(demo, tmp_path, [_bad_table(tmp_path, demo, "duplicate")])
    code, _, err = cli("run", cfg, "--out", out, "-q")
    assert code == 2 and err.startswith("error: ") and "already have a row" in err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and not p.name.startswith(".")} == before


def test_item_table_system_column_named_by_key(demo, tmp_path):
    from clir_eval.sources.item_tables import item_arrays, read_external_items

    systems, docs = _systems(demo), _ids(demo / "english.jsonl")
    _write_table(tmp_path / "items.tsv", [["sys", "doc", "ext"]] + [[s, d, str(i + j / 1000)]
                                                                   for i, s in enumerate(systems)
                                                                   for j, d in enumerate(docs)])
    c = load_config(_config(demo, tmp_path, [{"file": "items.tsv", "kind": "mt", "item_col": "doc", "key": "sys",
                                              "columns": ["ext"]}]))
    got = item_arrays(read_external_items(c, c.systems, docs), systems, docs[:3])["ext"]
    assert got.tolist() == [[i + j / 1000 for j in range(3)] for i in range(len(systems))]
