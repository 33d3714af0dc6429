"""Metric and measure specs are parsed once, when the settings record is made (MTSettings.specs,
IRSettings.parsed), and the stages build the metrics and evaluate the measures from those objects:
with the parser disabled after the record exists, the MT and IR stages still run (also on a copy of
the record sent to a worker) and give the scores of the specs parsed the usual way."""

from __future__ import annotations

import pickle

import pytest

from clir_eval.errors import UserError
from clir_eval.io.trec import Qrels, Run
from clir_eval.ir.settings import IRSettings
from clir_eval.mt import base
from clir_eval.mt.settings import MTSettings
from clir_eval.pipeline.cache import Cache
from clir_eval.pipeline.stages import mt_stage
from clir_eval.pipeline.tasks import MTTask

HYP = ["the cat sat on a mat", "a dog barks at night", "the committee adopted it"]
REF = ["the cat sat on the mat", "the dog barks", "the committee adopted the report"]


def _no_parsing(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("a spec was parsed again")

    monkeypatch.setattr(base, "_parse_metric", refuse)
    base.metric_spec.cache_clear()  # nothing parsed earlier in this process can be reused either
    from clir_eval.ir import measures

    monkeypatch.setattr(measures, "parse_measure", refuse)


def test_mt_settings_hold_their_parsed_specs_distinct_and_in_order():
    s = MTSettings(refs=("r",), metrics=("chrf:beta=1", "bleu", "chrf1", "macrof", "CHRF:beta=2"), tokenize="intl",
                   lowercase=True)
    assert [m.name for m in s.specs] == ["chrf1", "bleu", "macrof1", "chrf"]
    assert [m.spec for m in s.specs] == ["chrf:beta=1", "bleu", "macrof", "CHRF:beta=2"]  # the first spelling of each
    assert all(m.tokenize == "intl" and m.lowercase for m in s.specs)
    with pytest.raises(UserError, match="unknown metric"):
        s.specs_for(["nosuch"])


def test_mt_stage_builds_metrics_from_the_records_specs(tmp_path, monkeypatch):
    (tmp_path / "h.txt").write_text("\n".join(HYP) + "\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("\n".join(REF) + "\n", encoding="utf-8")
    specs = ["bleu", "chrf1", "macrof1", "ter"]
    want = base.score_metrics(specs, HYP, [REF])
    settings = MTSettings(refs=(str(tmp_path / "r.txt"),), metrics=tuple(specs))
    shipped = pickle.loads(pickle.dumps(settings))  # as a worker receives it
    _no_parsing(monkeypatch)
    for i, s in enumerate((settings, shipped)):
        got = mt_stage(MTTask(system="s", hyp=str(tmp_path / "h.txt"), mt=s), Cache(tmp_path / f"cache{i}"))
        assert got == {n: {"score": sc.score, "signature": sc.signature} for n, sc in want.items()}
    with pytest.raises(AssertionError, match="parsed again"):
        base.load_metric("bleu")  # the check can fail: parsing is what it refuses


def test_ir_settings_hold_their_parsed_measures(monkeypatch):
    from clir_eval.ir.evaluate import evaluate

    s = IRSettings(measures=("map", "P@10", "P_10", "ndcg_cut_10", "aqwv:beta=40,cutoff=2"))
    assert [m.name for m in s.parsed] == ["map", "P_10", "ndcg_cut_10", "aqwv:cutoff=2"]
    run = Run({"q1": [("d1", 3.0), ("d2", 2.0), ("d3", 1.0)], "q2": [("d3", 2.0), ("d1", 1.0)]})
    qrels = Qrels({"q1": {"d1": 1, "d3": 1}, "q2": {"d1": 1}})
    want = evaluate(run, qrels, list(s.measures), collection_size=10)
    _no_parsing(monkeypatch)
    assert evaluate(run, qrels, list(s.parsed), collection_size=10)["aggregate"] == want["aggregate"]
    assert pickle.loads(pickle.dumps(s)).parsed == s.parsed
