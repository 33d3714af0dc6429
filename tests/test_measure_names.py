"""Measure strings from the ecosystem (ir_measures, trec_eval, the harness's own in both styles):
accepted ones score, anything else is one ``error:`` line before any file is read or any work is
done (in ``ir-score`` and in ``run``/``validate``); nothing reaches a pytrec_eval C assertion."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from test_ir_cli import files  # noqa: F401  (fixture: qrels, run, ref files)

# strings that used to abort pytrec_eval (exit 134) or were silently read as another measure
BAD = ["P_0", "P.0", "nDCG@10:x=1", "ndcg@10", "ndcg.10", "map@100", "map.100", "P_1.5", "P@1.5", "nDCG@0",
       "success_0", "ndcg_cut.0", "Judged@0", "RBP(rel=1,p=2)", "ERR@10", "set_F_0.5", "P@10.0", "iprec_at_recall_2",
       "RBO(p=1)", "AQWV(cutoff=-1)", "relstring", "nonsense", "AP@10;x", "__import__('os')"]


@pytest.mark.parametrize("spec", BAD)
def test_bad_measure_is_an_error_before_reading_files(cli, tmp_path, spec):
    missing = tmp_path / "does-not-exist.txt"
    code, out, err = cli("ir-score", "--qrels", missing, "--run", missing, "--measures", f"map,{spec}")
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and "does-not-exist" not in err


def test_no_abort_in_a_fresh_process(files):
    """The strings that aborted pytrec_eval (SIGABRT, exit 134) give exit 2 in a real process."""
    for spec in ["P_0", "nDCG@0", "ndcg@10", "success.0"]:
        proc = subprocess.run([sys.executable, "-m", "clir_eval", "ir-score", "--qrels", str(files["qrels"]),
                               "--run", str(files["run"]), "--measures", spec], capture_output=True, text=True)
        assert proc.returncode == 2 and proc.stderr.startswith("error: "), (spec, proc.returncode, proc.stderr)


def test_ecosystem_names_score_under_the_names_given(cli, files):
    """Output keys are the names as written (as ir_measures and ranx return them); a measure written twice
    (AP and map) is scored once, under its first spelling; each signature starts with the canonical name."""
    code, out, err = cli("ir-score", "--qrels", files["qrels"], "--run", files["run"], "--reference-run",
                         files["ref"], "--collection-size", "100", "--measures",
                         "AP,map,nDCG@10,P@10,R@1000,RR,RBO(p=0.98),rbo:p=0.98,AQWV(beta=40,cutoff=10),Judged@2,RBP(rel=1)")
    assert code == 0, err
    res = json.loads(out)
    given = ["AP", "nDCG@10", "P@10", "R@1000", "RR", "RBO(p=0.98)", "AQWV(beta=40,cutoff=10)", "Judged@2", "RBP(rel=1)"]
    assert list(res["aggregate"]) == given and list(res["signatures"]) == given
    assert list(res["per_query"]["1"]) == given
    canonical = ["map", "ndcg_cut_10", "P_10", "recall_1000", "recip_rank", "rbo", "aqwv"]
    assert all(res["signatures"][g].startswith(c + "|") for g, c in zip(given, canonical))
    assert res["aggregate"]["AP"] == pytest.approx(0.25)
    assert res["per_query"]["1"]["Judged@2"] == 1.0 and res["per_query"]["2"]["Judged@2"] == 0.0


def _config(tmp_path, files, measures):
    cfg = {"name": "t", "systems": [{"name": f"s{i}", "docs": "docs.jsonl"} for i in range(3)],
           "collection": {"english": "docs.jsonl"}, "queries": {"file": "q.tsv"},
           "relevance": {"qrels": str(files["qrels"])}, "ir": {"measures": measures}}
    (tmp_path / "docs.jsonl").write_text('{"id": "a", "text": "x"}\n')
    (tmp_path / "q.tsv").write_text("1\tx\n")
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.parametrize("spec", ["nDCG@0", "map@100", "P_1.5"])
def test_config_measure_is_checked_by_validate(cli, tmp_path, files, spec):
    code, out, err = cli("validate", _config(tmp_path, files, ["AP", spec]))
    assert code == 2 and err.startswith("error: ") and "ir.measures[1]" in err


def test_config_accepts_ir_measures_names(cli, tmp_path, files):
    code, out, err = cli("validate", _config(tmp_path, files, ["nDCG@20", "AP", "R@100", "R@1000", "RBO(p=0.9)"]))
    assert code == 0, err


def test_trec_eval_names_parsed_without_ir_measures_are_not_ir_measures_names():
    """Plain trec_eval names skip the ir_measures lookup unless ir_measures also knows the name: every
    installed ir_measures name that trec_eval would also read must be in the list that keeps the lookup."""
    ir_measures = pytest.importorskip("ir_measures")
    from clir_eval.errors import UserError
    from clir_eval.ir.measures import IR_MEASURES_TREC_NAMES, _parse_trec, parse_measure

    both = set()
    for name in ir_measures.measures.registry:
        try:
            _parse_trec(name)
        except UserError:
            continue
        both.add(name)
    assert both <= IR_MEASURES_TREC_NAMES
    for name in sorted(IR_MEASURES_TREC_NAMES & set(ir_measures.measures.registry)):
        parse_measure(name)  # still parsed (through ir_measures)
