"""External scores where lower is better: an ``external:`` entry's ``lower_is_better`` columns join
``score_kinds.lower_is_better`` and are ranked by -τ at system level and at item level, as the harness's own
TER is; left undeclared they rank as if higher were better (the contrast each test checks, so a declaration
that did nothing would fail it); a name that is not a score column of its table is one ``error:`` line."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from test_external_items import _config, _retrievability, _systems, _write_table, demo  # noqa: F401 (a fixture)

from clir_eval.config.load import load_config
from clir_eval.pipeline.run import run_experiment

SYSTEMS = [f"s{i}" for i in range(6)]
PUB_MAP = [0.50, 0.45, 0.40, 0.35, 0.30, 0.25]  # the IR target, best system first
TER = [20, 25, 30, 35, 40, 45]  # lower is better: exactly the IR order, τ = -1 as the numbers stand
HALF = [0.9, 0.7, 0.8, 0.5, 0.6, 0.4]  # higher is better, two adjacent swaps: τ = 1 - 2·2/15


def _system_run(tmp_path, cli, ext: dict) -> tuple[int, str, dict | None]:
    """A run of external scores only (no MT, no retrieval): the MT table ``ext`` against a published
    IR column."""
    _write_table(tmp_path / "mt.tsv", [["system", "ter", "half"]] + [[s, str(t), str(h)]
                                                                  for s, t, h in zip(SYSTEMS, TER, HALF)])
    _write_table(tmp_path / "ir.tsv", [["system", "map"]] + [[s, str(m)] for s, m in zip(SYSTEMS, PUB_MAP)])
    cfg = {"name": "direction", "systems": [{"name": s} for s in SYSTEMS],
           "external": [{"file": "mt.tsv", "kind": "mt", **ext},
                        {"file": "ir.tsv", "kind": "ir", "columns": {"map": "pub_map"}}],
           "correlation": {"bootstrap": 0, "permutation": 500}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = cli("run", tmp_path / "c.yaml", "--out", out, "-q")
    return code, err, json.loads((out / "results.json").read_text()) if code == 0 else None


def _order(results: dict, target: str, block: dict | None = None) -> list[str]:
    [v] = [v for v in (block or results)["verdicts"] if v["target"] == target]
    return [m for c in v["clusters"] for m in c]


@pytest.mark.parametrize("declared", [["ter"], ["TER_score"], "TER_score"])
def test_declared_lower_is_better_column_ranks_first_at_system_level(tmp_path, cli, declared):
    code, err, res = _system_run(tmp_path, cli, {"columns": {"ter": "TER_score", "half": "half"},
                                                 "lower_is_better": declared})
    assert code == 0, err
    assert res["score_kinds"]["lower_is_better"] == ["TER_score"]
    assert res["config"]["external"][0]["lower_is_better"] == ["TER_score"]  # the score name, however it was named
    tau = {c["mt_metric"]: c["tau"] for c in res["correlations"] if c["ir_measure"] == "pub_map"}
    assert tau["TER_score"] == pytest.approx(-1.0) and tau["half"] == pytest.approx(1 - 4 / 15)  # τ as it stands
    assert _order(res, "pub_map") == ["TER_score", "half"]
    assert not [n for n in res["notes"] if "taken as higher-is-better" in n]
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "Lower is better for TER_score" in report


def test_undeclared_lower_is_better_column_ranks_last(tmp_path, cli):
    code, err, res = _system_run(tmp_path, cli, {"columns": ["ter", "half"]})
    assert code == 0, err
    assert res["score_kinds"]["lower_is_better"] == []
    assert _order(res, "pub_map") == ["half", "ter"]
    warned = [n for n in res["notes"] if "taken as higher-is-better" in n]
    assert len(warned) == 1 and "'ter'" in warned[0] and "lower_is_better: [ter]" in warned[0]  # not for 'half'


@pytest.mark.parametrize("ext, says", [
    ({"columns": ["ter", "half"], "lower_is_better": ["terr"]},
     "external[0].lower_is_better: 'terr' is not a score column of"),
    ({"columns": ["half"], "lower_is_better": ["ter"]},  # in the file, but not a score column of the entry
     "external[0].lower_is_better: 'ter' is not a score column of"),
])
def test_unknown_lower_is_better_name_is_one_error_line(tmp_path, cli, ext, says):
    code, err, _ = _system_run(tmp_path, cli, ext)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], err
    assert "c.yaml" in lines[0] and "(columns: " in lines[0]
    assert not (tmp_path / "out" / "results.json").exists()
    code, _, verr = cli("validate", tmp_path / "c.yaml")
    assert code == 2 and verr == err


def test_lower_is_better_orients_mt_tables_only(tmp_path, cli):
    _write_table(tmp_path / "h.tsv", [["system", "mqm"]] + [[s, "1"] for s in SYSTEMS])
    cfg = {"name": "h", "systems": [{"name": s} for s in SYSTEMS],
           "external": [{"file": "h.tsv", "kind": "human", "columns": ["mqm"], "lower_is_better": ["mqm"]}]}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    code, _, err = cli("validate", tmp_path / "c.yaml")
    assert code == 2 and "external[0].lower_is_better: orients MT metrics (kind: mt), not human scores" in err, err


def test_mtme_system_scores_declared_lower_is_better(tmp_path, cli):
    """mt-metrics-eval files are higher-is-better by that toolkit's convention; a .sys.score file holding raw
    TER declares it."""
    (tmp_path / "m").mkdir()
    for name, vals in (("TER", TER), ("half", HALF)):
        (tmp_path / "m" / f"{name}-refA.sys.score").write_text("".join(f"{s}\t{v}\n" for s, v in zip(SYSTEMS, vals)))
    _write_table(tmp_path / "ir.tsv", [["system", "map"]] + [[s, str(m)] for s, m in zip(SYSTEMS, PUB_MAP)])
    for declared, want in (([], ["half", "TER"]), (["TER"], ["TER", "half"])):
        ext = {"file": "m/*-refA.sys.score", "format": "mtme", "kind": "mt", "lower_is_better": declared}
        cfg = {"name": "m", "systems": [{"name": s} for s in SYSTEMS],
               "external": [ext, {"file": "ir.tsv", "kind": "ir", "columns": ["map"]}],
               "correlation": {"bootstrap": 0, "permutation": 200}}
        (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
        out = tmp_path / f"out{len(declared)}"
        code, _, err = cli("run", tmp_path / "c.yaml", "--out", out, "-q")
        assert code == 0, err
        res = json.loads((out / "results.json").read_text())
        assert res["score_kinds"]["lower_is_better"] == declared
        assert _order(res, "map") == want


def test_declared_lower_is_better_item_column_ranks_first_at_item_level(demo, tmp_path):  # noqa: F811
    """A per-document column that falls as retrievability rises is first for retrievability when declared
    (and last when not); the item-level notes say how it is ranked."""
    systems = _systems(demo)
    out = tmp_path / "out"
    run_experiment(load_config(_config(demo, tmp_path)), out, jobs=1, quiet=True)
    judged, ret = _retrievability(out, demo / "qrels.txt", systems)
    r = np.random.default_rng(11)
    err_rate = -ret + 0.05 * r.normal(size=ret.shape)  # tracks retrievability inversely
    weak = ret + 0.5 * r.normal(size=ret.shape)  # higher is better, much noisier
    rows = [["system", "doc", "err_rate", "weak"]] + [
        [s, d, repr(float(err_rate[i, j])), repr(float(weak[i, j]))]
        for i, s in enumerate(systems) for j, d in enumerate(judged)]
    _write_table(tmp_path / "items.tsv", rows)
    got = {}
    for declared in ([], ["err_rate"]):
        ext = {"file": "items.tsv", "kind": "mt", "item_col": "doc", "columns": ["err_rate", "weak"],
               "lower_is_better": declared}
        res = run_experiment(load_config(_config(demo, tmp_path, [ext], permutation=200)),
                             tmp_path / f"out{len(declared)}", jobs=1, quiet=True)
        assert res["score_kinds"]["lower_is_better"] == declared
        block = res["item_level"]
        got[len(declared)] = _order(res, "retrievability", block)
        note = next(n for n in block["notes"] if n.startswith("err_rate: "))
        assert ("lower is better (external[0].lower_is_better)" in note) == bool(declared), note
    assert got[1][0] == "err_rate", got
    assert got[0][-1] == "err_rate", got


def test_design_on_a_run_of_table_scores_says_per_query_values_are_missing(tmp_path, cli):
    """A run whose IR scores come from a table has MT scores for every system but no per-query IR
    values: design simulates over systems only and says why (no queries' dimension)."""
    code, err, _ = _system_run(tmp_path, cli, {"columns": ["ter", "half"]})
    assert code == 0, err
    code, out, err = cli("design", tmp_path / "out", "--reps", "20", "--jobs", "1", "--systems", "6,12")
    assert code == 0, err
    assert "no per-query values whose mean is its score; designed over systems only" in err  # a note: stderr
    rows = json.loads((tmp_path / "out" / "design.json").read_text())["rows"]
    assert rows and all(r["n_queries"] is None for r in rows)
