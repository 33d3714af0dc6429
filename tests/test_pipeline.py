"""End-to-end `clir-eval run` on small generated data: contract, caching, resume, reports."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
import yaml

from clir_eval.config.load import load_config
from clir_eval.errors import UserError

TOPIC_WORDS = [[f"t{t}w{i}" for i in range(8)] for t in range(6)]
COMMON = "the of and to a in is that for it was on with as by".split()


def make_experiment(root: Path, *, n_docs: int = 60, seed: int = 0, drop_rates=(0.0, 0.15, 0.35, 0.6, 0.85)) -> Path:
    """Write a tiny collection, queries, MT test set and one system per drop rate.

    A system with drop rate r deletes each content word with probability r, in both the
    MT test set and its translated collection, so BLEU/MacroF1 and retrieval degrade
    together and all correlations should be strongly positive.
    """
    rng = random.Random(seed)
    docs = []
    for i in range(n_docs):
        t = i % len(TOPIC_WORDS)
        words = []
        for _ in range(rng.randint(15, 30)):
            words.append(rng.choice(TOPIC_WORDS[t]) if rng.random() < 0.4 else rng.choice(COMMON))
        docs.append((f"d{i:03d}", " ".join(words)))
    (root / "english.jsonl").write_text("".join(json.dumps({"id": d, "text": x}) + "\n" for d, x in docs))
    sents = [" ".join(x.split()[:12]) for _, x in docs]
    (root / "ref.txt").write_text("\n".join(sents) + "\n")
    queries = []
    for q in range(12):
        t = q % len(TOPIC_WORDS)
        queries.append((f"q{q}", " ".join(rng.sample(TOPIC_WORDS[t], 2))))
    (root / "queries.tsv").write_text("".join(f"{q}\t{x}\n" for q, x in queries))
    (root / "systems").mkdir()
    for k, r in enumerate(drop_rates):
        srng = random.Random(1000 + k)

        def degrade(text: str) -> str:
            return " ".join(w for w in text.split() if not (w.startswith("t") and srng.random() < r))

        with open(root / "systems" / f"sys{k}.jsonl", "w") as fh:
            for d, x in docs:
                fh.write(json.dumps({"id": d, "text": degrade(x)}) + "\n")
        (root / "systems" / f"sys{k}.txt").write_text("\n".join(degrade(s) for s in sents) + "\n")
    cfg = {
        "name": "tiny",
        "seed": 7,
        "systems": {"pattern": "systems/sys{k}.txt", "name": "sys{k}", "docs": "systems/sys{k}.jsonl"},
        "mt": {"refs": ["ref.txt"], "metrics": ["bleu", "chrf1", "macrof1", "microf1"]},
        "collection": {"english": "english.jsonl"},
        "queries": {"file": "queries.tsv"},
        "relevance": {"pseudo": {"top_k": 5}},
        "retrieval": {"depth": 50},
        "ir": {"measures": ["map", "P_5", "rbo:p=0.9", "aqwv:beta=40,cutoff=5"]},
        "correlation": {"bootstrap": 200, "permutation": 200},
    }
    path = root / "exp.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


@pytest.fixture
def experiment(tmp_path) -> Path:
    return make_experiment(tmp_path)


def _load(out: Path) -> dict:
    return json.loads((out / "results.json").read_text())


def _stable(results: dict) -> dict:
    r = dict(results)
    r.pop("timing")
    return r


def test_run_contract_and_reports(experiment, cli, tmp_path):
    out = tmp_path / "out"
    code, stdout, err = cli("run", experiment, "--out", out, "--jobs", "1", "--quiet")
    assert code == 0, err
    res = _load(out)
    assert sorted(res["systems"]) == [f"sys{k}" for k in range(5)]
    for name, entry in res["systems"].items():
        assert set(entry["mt"]) == {"bleu", "chrf1", "macrof1", "microf1"}
        assert set(entry["ir"]) >= {"map", "P_5"}
        assert all(isinstance(v, float) for v in entry["mt"].values())
    # sys0 is the English side itself: with English-side pseudo-qrels it retrieves perfectly
    ir0 = res["systems"]["sys0"]["ir"]
    assert ir0["map"] == pytest.approx(1.0)
    rbo_name = next(k for k in ir0 if k.startswith("rbo"))
    assert ir0[rbo_name] == pytest.approx(1.0)
    assert res["systems"]["sys4"]["ir"]["map"] < 0.9
    for c in res["correlations"]:
        for key in ("mt_metric", "ir_measure", "tau", "p_value", "n", "significant"):
            assert key in c
        assert c["n"] == 5
        assert -1 <= c["tau"] <= 1
    bleu_map = next(c for c in res["correlations"] if c["mt_metric"] == "bleu" and c["ir_measure"] == "map")
    assert bleu_map["tau"] == pytest.approx(1.0)
    assert bleu_map["ci_systems"][0] - 1e-9 <= bleu_map["tau"] <= bleu_map["ci_systems"][1] + 1e-9
    assert "ci_queries" in bleu_map
    sig = res["signature"]
    assert sig["versions"]["sacrebleu"]
    assert "bleu" in sig["mt"] and "nrefs:1" in sig["mt"]["bleu"]
    assert sig["correlation"]["seed"] == 7
    from clir_eval.correlation.statistics import RESAMPLE_BLOCK

    assert sig["correlation"]["resample_block"] == RESAMPLE_BLOCK  # fixes the draws above one block
    assert sig["retrieval"]
    for f in ("report.html", "report.md", "scores.tsv", "correlations.tsv"):
        assert (out / f).stat().st_size > 0
    html = (out / "report.html").read_text()
    body = re.sub(r' xmlns(:xlink)?="http://www\.w3\.org/(2000/svg|1999/xlink)"', "", html.split("<body>")[1])  # names
    assert 'class="plot"' in html and 'class="heat"' in html and "http" not in body.split("Signature")[0]
    md = (out / "report.md").read_text()
    assert "| map |" in md and "**" in md


def test_rerun_uses_cache_and_changed_setting_recomputes_only_what_it_affects(experiment, cli, tmp_path):
    out = tmp_path / "out"
    assert cli("run", experiment, "--out", out, "-j", "1", "-q")[0] == 0
    first = _load(out)
    cache = out / "cache"
    before = {p: p.stat().st_mtime_ns for p in cache.rglob("*") if p.is_file() and p.name != ".clir-eval-cache.lock"}
    assert cli("run", experiment, "--out", out, "-j", "1", "-q")[0] == 0
    assert _stable(_load(out)) == _stable(first)
    after = {p: p.stat().st_mtime_ns for p in cache.rglob("*") if p.is_file() and p.name != ".clir-eval-cache.lock"}
    assert after == before, "a cached re-run must not rewrite any cache file"

    cfg = yaml.safe_load(experiment.read_text())
    cfg["ir"]["measures"].append("ndcg")
    experiment.write_text(yaml.safe_dump(cfg, sort_keys=False))
    assert cli("run", experiment, "--out", out, "-j", "1", "-q")[0] == 0
    third = _load(out)
    assert "ndcg" in third["systems"]["sys1"]["ir"]
    for p, t in before.items():
        if p.parent.name in ("mt", "runs", "qrels"):
            assert p.stat().st_mtime_ns == t, f"{p} should not be recomputed when only IR measures change"
    new_ir = [p for p in cache.joinpath("ir").iterdir() if p not in before and not p.name.endswith(".manifest.json")]
    assert len(new_ir) == 6  # 5 systems + the English side (each with its manifest)


def test_crash_midway_then_rerun_gives_same_results(experiment, cli, tmp_path, monkeypatch):
    clean = tmp_path / "clean"
    assert cli("run", experiment, "--out", clean, "-j", "1", "-q")[0] == 0

    import clir_eval.pipeline.run as pl
    import clir_eval.pipeline.stages as st

    real = st.retrieve_stage
    calls = {"n": 0}

    def flaky(task, cache):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt  # as if killed in the middle of the system loop
        return real(task, cache)

    monkeypatch.setattr(st, "retrieve_stage", flaky)
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        pl.run_experiment(load_config(experiment), out, jobs=1, quiet=True)
    assert not (out / "results.json").exists()
    assert not list(out.rglob("*.tmp"))
    monkeypatch.setattr(st, "retrieve_stage", real)
    assert cli("run", experiment, "--out", out, "-j", "1", "-q")[0] == 0
    a, b = _stable(_load(out)), _stable(_load(clean))
    a.pop("config"), b.pop("config")
    assert a == b


def test_parallel_equals_serial(experiment, cli, tmp_path):
    assert cli("run", experiment, "--out", tmp_path / "s", "-j", "1", "-q")[0] == 0
    assert cli("run", experiment, "--out", tmp_path / "p", "-j", "2", "-q")[0] == 0
    assert _stable(_load(tmp_path / "s")) == _stable(_load(tmp_path / "p"))


def test_validate_prints_resolved_config(experiment, cli):
    code, out, err = cli("validate", experiment, "--format", "json")
    assert code == 0, err
    cfg = json.loads(out)
    assert [s["name"] for s in cfg["systems"]] == [f"sys{k}" for k in range(5)]
    assert cfg["systems"][2]["attrs"]["k"] == "2"
    assert cfg["retrieval"]["k1"] == 1.5


def test_validate_prints_a_short_summary_by_default(experiment, cli):
    """The default is a few plain lines: what run would do, counted from the inputs themselves."""
    code, out, err = cli("validate", experiment)
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) <= 12 and not out.lstrip().startswith("{")
    cfg = json.loads(cli("validate", experiment, "--format", "json")[1])
    n_queries = len(Path(cfg["queries"]["file"][0]).read_text().splitlines())
    assert f"systems: 5 matched: {', '.join(f'sys{k}' for k in range(5))}" in lines
    assert f"MT metrics: {', '.join(cfg['mt']['metrics'])}" in lines
    assert f"IR measures: {', '.join(cfg['ir']['measures'])}" in lines
    assert f"queries: {n_queries}" in lines
    n_docs = sum(1 for ln in Path(cfg["collection"]["english"]).read_text().splitlines() if ln.strip())
    assert f"documents: {n_docs} per collection (5 systems + the English side)" in lines
    assert any(ln.startswith("relevance: ") for ln in lines)
    assert any(ln.startswith("estimated run cost: ~") and "CPU-s" in ln for ln in lines)
    assert "ok: " in err
    assert cli("validate", experiment, "--format", "yaml")[0] == 2


def test_report_command_rerenders(experiment, cli, tmp_path):
    out = tmp_path / "out"
    assert cli("run", experiment, "--out", out, "-j", "1", "-q")[0] == 0
    (out / "report.md").unlink()
    code, stdout, err = cli("report", out)
    assert code == 0, err
    assert (out / "report.md").exists()


def test_external_table_joined_by_template(experiment, cli, tmp_path):
    table = experiment.parent / "published.tsv"
    rows = ["sysid\tpublished_map\tlang"] + [f"S-{k}\t{1 - k / 10}\tcs" for k in range(5)] + ["S-9\t0.1\tcs"]
    table.write_text("\n".join(rows) + "\n")
    cfg = yaml.safe_load(experiment.read_text())
    cfg["external"] = [{"file": "published.tsv", "kind": "ir", "match": {"sysid": "S-{k}", "lang": "cs"},
                        "columns": {"published_map": "pmap"}}]
    experiment.write_text(yaml.safe_dump(cfg, sort_keys=False))
    out = tmp_path / "out"
    code, _, err = cli("run", experiment, "--out", out, "-j", "1", "-q")
    assert code == 0, err
    res = _load(out)
    assert res["systems"]["sys3"]["ir"]["pmap"] == pytest.approx(0.7)
    c = next(c for c in res["correlations"] if c["mt_metric"] == "bleu" and c["ir_measure"] == "pmap")
    assert c["tau"] == pytest.approx(1.0)


# --------------------------------------------------------------------------- bad input
def _edit(path: Path, fn):
    cfg = yaml.safe_load(path.read_text())
    fn(cfg)
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))


@pytest.mark.parametrize(
    "edit, expect",
    [
        (lambda c: c.update(colection={}), "colection: unknown key"),
        (lambda c: c["retrieval"].update(k1="high"), "retrieval.k1: expected a number"),
        (lambda c: c["retrieval"].update(depth=0), "retrieval.depth: must be a positive integer"),
        (lambda c: c["retrieval"].update(k1=0), "retrieval.k1: must be > 0 and <= 100, got 0.0"),
        (lambda c: c["retrieval"].update(b=1.5), "retrieval.b: must be in [0, 1], got 1.5"),
        (lambda c: c["retrieval"].update(variant="bm25t"), "retrieval.variant: unknown BM25 variant 'bm25t'"),
        (lambda c: c["retrieval"].update(delta=0.5), "retrieval.delta: delta applies to the BM25L and BM25Plus"),
        (lambda c: c["mt"].update(refs=["nope.txt"]), "mt.refs[0]: file not found"),
        (lambda c: c["mt"].update(metrics=["bleu", "blue"]), "mt.metrics[1]: unknown metric"),
        (lambda c: c["systems"].update(pattern="systems/zzz{k}.txt"), "systems.pattern: no file matches"),
        (lambda c: c["systems"].update(pattern="systems/sys{k}.txt", docs="systems/none{k}.jsonl"), "docs: file not found"),
        (lambda c: c.update(relevance={}), "relevance: give either"),
        (lambda c: c["ir"].update(measures=["map", "mapp"]), "mapp"),
        (lambda c: c["correlation"].update(variant="d"), "correlation.variant"),
        (lambda c: c.update(item_level={"bootstrap": -1}), "item_level.bootstrap: must be >= 0 and <= 100000, got -1"),
        (lambda c: c.update(item_level={"permutation": 10**6}), "item_level.permutation: 1000000 is too large"),
        (lambda c: c.update(external=[{"file": "ref.txt"}]), "external[0].kind: missing; this field is required"),
        (lambda c: c.update(external=[{"file": "ref.txt", "kind": "mt", "columns": ["a"], "format": "csv"}]),
         "external[0].format: unknown table format 'csv'; choose one of table, wmt-human, mtme"),
        (lambda c: c.update(external=[{"file": "ref.txt", "kind": "mt", "columns": []}]),
         "external[0].columns: give the columns to use"),
    ],
)
def test_config_errors_name_the_yaml_path(experiment, cli, tmp_path, edit, expect):
    _edit(experiment, edit)
    out = tmp_path / "out"
    code, stdout, err = cli("run", experiment, "--out", out, "-q")
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert expect in err
    assert "Traceback" not in err
    assert not (out / "results.json").exists()
    code, _, verr = cli("validate", experiment)  # validate checks with the same code as run
    assert code == 2 and verr == err


def test_bad_yaml_and_missing_config(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nsystems: [\n")
    code, _, err = cli("validate", bad)
    assert code == 2 and "invalid YAML" in err and str(bad) in err
    code, _, err = cli("validate", tmp_path / "none.yaml")
    assert code == 2 and "config not found" in err


def test_too_few_systems(tmp_path, cli):
    root = tmp_path / "e"
    root.mkdir()
    path = make_experiment(root, drop_rates=(0.0, 0.5))
    code, _, err = cli("run", path, "--out", tmp_path / "o", "-q")
    assert code == 2 and "at least 3 systems" in err


def test_system_with_missing_document_is_an_error(experiment, cli, tmp_path):
    p = experiment.parent / "systems" / "sys2.jsonl"
    lines = p.read_text().splitlines()
    p.write_text("\n".join(lines[:-1]) + "\n")
    out = tmp_path / "out"
    code, _, err = cli("run", experiment, "--out", out, "-j", "1", "-q")
    assert code == 2
    assert "sys2" in err and "d059" in err
    assert not (out / "results.json").exists()


def test_hyp_ref_length_mismatch(experiment, cli, tmp_path):
    p = experiment.parent / "systems" / "sys1.txt"
    p.write_text("\n".join(p.read_text().splitlines()[:-3]) + "\n")
    code, _, err = cli("run", experiment, "--out", tmp_path / "o", "-j", "1", "-q")
    assert code == 2 and "sys1" in err and "line" in err


def test_data_root_substitution(tmp_path, monkeypatch):
    root = tmp_path / "data"
    root.mkdir()
    path = make_experiment(root)
    cfg = yaml.safe_load(path.read_text())
    cfg["mt"]["refs"] = ["${DATA_ROOT}/ref.txt"]
    conf = tmp_path / "conf.yaml"
    for k in ("collection",):
        cfg[k]["english"] = "${DATA_ROOT}/english.jsonl"
    cfg["queries"]["file"] = "${DATA_ROOT}/queries.tsv"
    cfg["systems"]["pattern"] = "${DATA_ROOT}/systems/sys{k}.txt"
    cfg["systems"]["docs"] = "${DATA_ROOT}/systems/sys{k}.jsonl"
    conf.write_text(yaml.safe_dump(cfg))
    monkeypatch.delenv("CLIR_EVAL_DATA", raising=False)
    with pytest.raises(UserError, match="DATA_ROOT"):
        load_config(conf)
    c = load_config(conf, data_root=str(root))
    assert c.mt.refs[0] == str(root / "ref.txt")
    monkeypatch.setenv("CLIR_EVAL_DATA", str(root))
    assert load_config(conf).collection.english == str(root / "english.jsonl")


def test_lower_is_better_metric_is_oriented(experiment, cli, tmp_path):
    """TER falls as quality rises: its τ stays negative, but best-metric choice and the
    permutation test use it negated (otherwise every comparison with TER would be ~2)."""
    _edit(experiment, lambda c: c["mt"].update(metrics=["bleu", "ter"]))
    out = tmp_path / "out"
    code, _, err = cli("run", experiment, "--out", out, "-j", "1", "-q")
    assert code == 0, err
    res = _load(out)
    assert res["score_kinds"]["lower_is_better"] == ["ter"]
    ter_map = next(c for c in res["correlations"] if c["x"] == "ter" and c["y"] == "map")
    assert ter_map["tau"] < -0.5
    comps = [c for c in res["comparisons"] if "ter" in (c["metric_a"], c["metric_b"])]
    assert comps and all(abs(c["delta"]) < 0.5 for c in comps)


def test_scores_tsv_feeds_correlate(experiment, cli, tmp_path):
    """scores.tsv is a valid score table for `clir-eval correlate`, even when a system
    attribute is called 'system' (it must not duplicate the system column)."""
    _edit(experiment, lambda c: c.update(systems={"pattern": "systems/sys{system}.txt", "name": "sys{system}",
                                                   "docs": "systems/sys{system}.jsonl"}))
    out = tmp_path / "out"
    assert cli("run", experiment, "--out", out, "-j", "1", "-q")[0] == 0
    code, stdout, err = cli("correlate", "--table", out / "scores.tsv", "--x", "bleu", "--y", "map", "--format", "json")
    assert code == 0, err
    row = json.loads(stdout)[0]
    ours = next(c for c in _load(out)["correlations"] if c["x"] == "bleu" and c["y"] == "map")
    assert row["tau"] == pytest.approx(ours["tau"], abs=1e-6)


@pytest.mark.parametrize("missing", ["N/A", "null", ""])
def test_external_table_missing_value_same_rule_as_correlate(experiment, cli, tmp_path, missing):
    """A missing-value cell that `correlate` accepts is accepted by `run` on the same table (one rule)."""
    table = experiment.parent / "published.tsv"
    rows = ["sysid\tpublished_map"] + [f"S-{k}\t{missing if k == 2 else 1 - k / 10}" for k in range(5)]
    table.write_text("\n".join(rows) + "\n")
    code, stdout, err = cli("correlate", "--table", table, "--x", "published_map", "--y", "published_map")
    assert code == 0, err
    assert json.loads(stdout)[0]["n"] == 4
    _edit(experiment, lambda c: c.update(external=[{"file": "published.tsv", "kind": "ir", "match": {"sysid": "S-{k}"},
                                                     "columns": {"published_map": "pmap"}}]))
    out = tmp_path / "out"
    code, _, err = cli("run", experiment, "--out", out, "-j", "1", "-q")
    assert code == 0, err
    res = _load(out)
    assert res["systems"]["sys2"]["ir"].get("pmap") is None
    c = next(c for c in res["correlations"] if c["x"] == "bleu" and c["y"] == "pmap")
    assert c["n"] == 4 and "sys2" not in c["systems"]
