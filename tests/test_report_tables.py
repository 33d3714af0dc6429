"""One ranking rule and one τ renderer: every output (console, report.md, HTML, comparisons,
correlate's summary) names the same leaders, with lower-is-better metrics oriented."""

from __future__ import annotations

import re

import pytest

from clir_eval.correlation.driver import ScoreTable, compare_with_leader
from clir_eval.correlation.settings import StatsSettings
from clir_eval.correlation.statistics import summarize
from clir_eval.correlation.verdict import leaders, ranking
from clir_eval.report.html import html_report
from clir_eval.report.tables import console_summary, markdown, render, tau_rows


def _results(taus: dict[str, float], lower=()):
    corr = [{"kind": "mt-ir", "x": x, "y": "map", "mt_metric": x, "ir_measure": "map", "tau": t, "p_value": 0.01,
             "n": 5, "significant": True, "method": "kendall", "variant": "b", "alpha": 0.05, "reason": None,
             "systems": list("abcde")} for x, t in taus.items()]
    return {"name": "t", "systems": {}, "correlations": corr, "comparisons": [],
            "score_kinds": {"mt": list(taus), "ir": ["map"], "human": [], "lower_is_better": list(lower)}}


def test_ranking_orients_and_breaks_ties_by_name():
    assert ranking({"bleu": 0.6, "ter": -0.8, "chrf": 0.6, "x": None}, lower={"ter"}) == ["ter", "chrf", "bleu"]
    assert leaders({"bleu": 0.6, "chrf": 0.6, "ter": -0.2}, lower={"ter"}) == ["chrf", "bleu"]
    assert leaders({"a": None}) == []
    # 3-decimal rounding does not make a tie: .6004 beats .6001
    assert leaders({"a": 0.6001, "b": 0.6004}) == ["b"]


@pytest.mark.parametrize("taus, lower, want", [
    ({"bleu": 0.6, "chrf1": 0.8, "ter": -0.9}, ("ter",), {"ter"}),
    ({"bleu": 0.8, "chrf1": 0.8, "ter": -0.5}, ("ter",), {"bleu", "chrf1"}),
    ({"bleu": 0.2, "chrf1": -0.4}, (), {"bleu"}),
])
def test_every_output_names_the_same_leaders(taus, lower, want):
    res = _results(taus, lower)
    md = markdown(res)
    row = next(line for line in md.splitlines() if line.startswith("| map |"))
    bold = {x for x, cell in zip(taus, row.strip("|").split("|")[1:]) if "**" in cell}
    assert bold == want
    html = html_report(res, plots=False)
    cells = re.findall(r'<td class="(\w*)">([^<]*)</td>', html.split("MT metric vs IR measure")[1].split("</table>")[0])
    assert {x for x, (cls, _) in zip(taus, cells[1:]) if cls == "best"} == want
    (line,) = console_summary(res)
    assert set(line.split("highest tau:")[1].split("tau=")[0].strip().split(" = ")) == want
    wins = {s["x"]: s["wins"] for s in summarize(res["correlations"], list(taus), lower)}
    assert {x for x, w in wins.items() if w} == want


def test_comparisons_start_from_the_first_of_the_ranking():
    import numpy as np

    systems = tuple("abcdef")
    cols = {"bleu": np.array([1, 2, 3, 4, 5, 6.0]), "ter": np.array([6, 5, 4, 3, 1, 2.0]),
            "chrf": np.array([2, 1, 3, 4, 6, 5.0]), "map": np.array([1, 2, 3, 4, 5, 6.0])}
    from clir_eval.correlation.driver import correlate_pairs, run_record

    table = ScoreTable(systems, cols)
    rows = [run_record("mt-ir", r) for r in correlate_pairs(table, [(x, "map") for x in ("bleu", "ter", "chrf")], StatsSettings())]
    comps = compare_with_leader(table, rows, ["map"], ["ter"], StatsSettings(), 50)
    assert {c["metric_a"] for c in comps} == {"bleu"}  # tau 1.0 beats oriented ter .867
    assert sorted(c["metric_b"] for c in comps) == ["chrf", "ter"]


def test_renderer_formats():
    rows = tau_rows([(["map"], {"a": {"tau": 0.5, "significant": False}, "b": {"tau": 0.9, "significant": True}})],
                    ["a", "b"])
    assert render(["", "a", "b"], rows, "md").splitlines()[2] == "| map | ×.500 | **.900** |"
    assert render(["", "a", "b"], rows, "tsv").splitlines()[1] == "map\t×.500\t.900"
    assert render(["", "a", "b"], rows, "console").splitlines()[1].split() == ["map", "×.500", ".900*"]


# --------------------------------------------------------------------------- HTML readability at many systems
def test_natural_sort_of_system_names():
    from clir_eval.report.blocks import natural_key

    names = ["nc100000.bpe32000", "nc25000.bpe16000", "nc50000.bpe16000", "nc25000.bpe8000", "Sys10", "sys9"]
    assert sorted(names, key=natural_key) == ["nc25000.bpe8000", "nc25000.bpe16000", "nc50000.bpe16000",
                                              "nc100000.bpe32000", "sys9", "Sys10"]


def test_scores_shown_with_the_precision_that_separates_systems():
    from clir_eval.report.html import _digits

    assert _digits([0.81231, 0.81234, 0.9], 4) == 5
    assert _digits([0.1, 0.2], 4) == 4
    assert _digits([29.181, 29.184], 2) == 3


@pytest.mark.parametrize("relevance, label", [("pseudo:top10", "English side (ceiling: relevance from this run)"),
                                              ("qrels:q.txt", "English reference")])
def test_scores_tsv_ends_with_the_english_ceiling_row_that_correlate_skips(tmp_path, relevance, label):
    """scores.tsv carries the English side's row that report.md shows, as a '# ' comment line (IR cells only), so
    that reading the table back (correlate, external tables) still gives one row per system."""
    from clir_eval.io.tables import read_table
    from clir_eval.report.tsv import scores_tsv

    res = _results({"bleu": 0.5})
    res["systems"] = {"a": {"mt": {"bleu": 20.0}, "ir": {"map": 0.25}}, "b": {"mt": {"bleu": 30.0}, "ir": {"map": 0.5}}}
    res["english"] = {"ir": {"map": 0.875}}
    res["signature"] = {"relevance": relevance}
    text = scores_tsv(res)
    *body, last = text.rstrip("\n").split("\n")
    assert body[0] == "system\tbleu\tmap" and len(body) == 3
    assert last.split("\t") == [f"# {label}", "", "0.875000"]
    md_row = next(line for line in markdown(res).splitlines() if label in line)
    assert "0.8750" in md_row
    (tmp_path / "scores.tsv").write_text(text)
    table = read_table(tmp_path / "scores.tsv")
    assert [r[0] for r in table.rows] == ["a", "b"]
    res.pop("english")
    assert "#" not in scores_tsv(res)
