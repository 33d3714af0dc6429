"""What ``clir-eval validate`` tells a newcomer before a run: queries that will get no relevant document (with
pseudo-qrels: no English-side document shares a term with them; with qrels: none judged relevant), the English
side's P@k under pseudo-qrels as the run will measure it, a cost estimate for WMT runs, and error messages that
name a single value without an index and suggest the metric meant."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from test_pipeline import make_experiment

DATA = Path(os.environ.get("CLIR_EVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def _add_queries(cfg_path: Path, extra: dict[str, str]) -> None:
    q = cfg_path.parent / "queries.tsv"
    q.write_text(q.read_text() + "".join(f"{k}\t{v}\n" for k, v in extra.items()))


def _mark_documents(cfg_path: Path, word: str, n: int) -> None:
    """Append ``word`` to the first ``n`` English documents (only the English side has it)."""
    p = cfg_path.parent / "english.jsonl"
    rows = [json.loads(line) for line in p.read_text().splitlines()]
    for r in rows[:n]:
        r["text"] += f" {word}"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_validate_warns_of_queries_without_pseudo_qrels_and_gives_the_english_p_at_k_a_run_measures(tmp_path, cli):
    cfg = make_experiment(tmp_path)
    _mark_documents(cfg, "quixotically", 2)
    _add_queries(cfg, {"qnone": "zzzz yyyy", "qnone2": "xxxx", "qfew": "quixotically"})
    code, out, err = cli("validate", cfg)
    assert code == 0, err
    lines = out.splitlines()
    n = len((tmp_path / "queries.tsv").read_text().splitlines())
    assert "warning:" not in out  # a diagnostic: on stderr
    (warn,) = [ln for ln in err.splitlines() if ln.startswith("warning: ")]
    assert warn.startswith(f"warning: 2 of {n} queries share no term with any English-side document (qnone, qnone2)")
    assert "not evaluated" in warn
    assert f"queries: {n}" in lines  # the count line stays as it was
    (rel,) = [ln for ln in lines if ln.startswith("relevance: ")]
    assert "ok: relevance.pseudo: " in err
    code, _, err = cli("run", cfg, "--out", tmp_path / "out", "-j", "1", "-q")
    assert code == 0, err
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    p5 = res["english"]["ir"]["P_5"]
    assert p5 < 1 and f"P@5 {p5:.2f} (" in rel
    acc = next(iter(res["systems"].values()))["queries"]
    acc = acc.get("P_5", acc)
    assert acc["total"] - acc["evaluated"] == 2  # the two queries validate named


def test_validate_warns_of_queries_the_qrels_judge_no_document_relevant(tmp_path, cli):
    cfg = make_experiment(tmp_path)
    _add_queries(cfg, {"qx": "alpha", "qy": "beta"})
    (tmp_path / "qrels.txt").write_text("".join(f"q{i} 0 d{i:03d} 1\n" for i in range(12) if i != 2) + "qx 0 d002 0\n")
    c = yaml.safe_load(cfg.read_text())
    c["relevance"] = {"qrels": "qrels.txt"}
    cfg.write_text(yaml.safe_dump(c))
    code, out, err = cli("validate", cfg)
    assert code == 0, err
    n = len((tmp_path / "queries.tsv").read_text().splitlines())
    (warn,) = [ln for ln in err.splitlines() if ln.startswith("warning: ")]
    assert "warning:" not in out
    assert warn.startswith(f"warning: 3 of {n} queries have no relevant document in the qrels (q2, qx, qy): ")


def test_validate_without_such_queries_prints_no_warning(tmp_path, cli):
    code, out, err = cli("validate", make_experiment(tmp_path))
    assert code == 0, err
    assert "warning:" not in out + err


def test_a_single_queries_file_is_named_without_an_index(tmp_path, cli):
    cfg = make_experiment(tmp_path)
    c = yaml.safe_load(cfg.read_text())
    c["queries"] = {"file": "missing.tsv"}
    cfg.write_text(yaml.safe_dump(c))
    code, _, err = cli("validate", cfg)
    assert code == 2 and "queries.file: " in err and "queries.file[0]" not in err
    c["queries"] = {"file": ["queries.tsv", "missing.tsv"]}
    cfg.write_text(yaml.safe_dump(c))
    code, _, err = cli("validate", cfg)
    assert code == 2 and "queries.file[1]: " in err


def test_an_unknown_metric_gets_a_suggestion(tmp_path, cli):
    cfg = make_experiment(tmp_path)
    c = yaml.safe_load(cfg.read_text())
    c["mt"]["metrics"] = ["bleu", "chrff"]
    cfg.write_text(yaml.safe_dump(c))
    code, _, err = cli("validate", cfg)
    assert code == 2
    assert "mt.metrics[1]: unknown metric 'chrff' (did you mean 'chrf'?); known metrics: " in err
    assert "in 'chrff'" not in err


@pytest.mark.skipif(not (DATA / "wmt21-docs").is_dir(), reason=f"real WMT21 data not found under {DATA}")
def test_validate_estimates_the_cost_of_a_wmt_run(cli):
    root = Path(__file__).resolve().parents[1]
    code, out, err = cli("validate", root / "configs" / "wmt21_ru_en.yaml", "--data-root", DATA)
    assert code == 0, err
    (cost,) = [ln for ln in out.splitlines() if ln.startswith("estimated run cost: ")]
    assert cost.startswith("estimated run cost: ~") and "MT metrics ~" in cost and "retrieval ~" in cost
