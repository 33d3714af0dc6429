"""The first screen (report.md, report.tex, report.html and ``clir-eval run``'s lines) says which question each
level answers and which one chooses a metric, puts the circularity caveat in "Read this first" when relevance
comes from the English side, and the terminal prints the item level's answers when the run has them."""

from __future__ import annotations

import copy
import re

import pytest
from test_pipeline import make_experiment

from clir_eval.config.load import load_config
from clir_eval.pipeline.run import run_experiment
from clir_eval.report.html import html_report
from clir_eval.report.tables import answer_lines, console_summary, console_warnings, latex_report, markdown


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict:
    """A finished run of the 5-system experiment of test_pipeline: pseudo-qrels, item level on."""
    root = tmp_path_factory.mktemp("levels")
    return run_experiment(load_config(make_experiment(root)), root / "out", jobs=1, quiet=True)


def _before_verdicts_md(md: str) -> str:
    return md.split("## Verdicts")[0]


def test_the_run_answers_at_both_levels_and_has_the_circularity_caveat(tiny):
    assert tiny["verdicts"] and tiny["item_level"]["verdicts"]
    assert any(n.startswith("circularity:") for n in tiny["confounds"]["notes"])


def test_report_md_and_tex_say_which_level_chooses_a_metric_before_the_verdicts(tiny):
    first = _before_verdicts_md(markdown(tiny))
    assert "**Which level answers what**" in first
    assert "to choose an MT metric for ranking MT systems" in first and "use the system level" in first
    assert "on which documents and queries does a system do worse than its own average" in first
    assert "diagnose which documents and queries a metric misjudges" in first
    tex = latex_report(tiny)
    assert tex.index("Which level answers what") < tex.index("Verdicts: which MT metric")


def test_circularity_is_in_read_this_first_on_every_first_screen(tiny):
    md = markdown(tiny)
    box = _before_verdicts_md(md).split("**Read this first:**")[1]
    assert "**circularity**: relevance is the English side's own top-k" in box
    page = html_report(tiny, plots=False)
    warn = re.search(r"<div class='warn'><b>Read this first</b>(.*?)</div>", page, re.S)
    assert warn and "circularity" in warn.group(1) and page.index("class='warn'") < page.index("id='verdicts'")
    # on the console it is a diagnostic: `run` prints it on stderr (console_warnings), the answer's last line counts it
    assert any(line.startswith("CAVEAT circularity: ") for line in console_warnings(tiny))
    assert not any("CAVEAT" in line for line in console_summary(tiny))
    assert answer_lines(tiny, warnings=len(console_warnings(tiny)))[-1].startswith("Limits: ")


def test_no_read_this_first_without_warnings_or_circularity(tiny):
    res = copy.deepcopy(tiny)
    res["confounds"]["notes"] = [n for n in res["confounds"]["notes"] if not n.startswith("circularity")]
    for v in res["verdicts"]:
        v["warnings"] = []
    assert "Read this first" not in markdown(res) and "Read this first" not in html_report(res, plots=False)
    assert not any("CAVEAT" in line for line in console_warnings(res))


def test_a_verdict_warning_is_on_the_first_screen_once(tiny):
    res = copy.deepcopy(tiny)
    res["verdicts"][0]["warnings"] = ["ONLY A TEST WARNING"]
    md = markdown(res)
    assert md.count("ONLY A TEST WARNING") == 1 and "ONLY A TEST WARNING" in _before_verdicts_md(md)
    page = html_report(res, plots=False)
    assert page.count("ONLY A TEST WARNING") == 1 and page.index("ONLY A TEST WARNING") < page.index("id='verdicts'")


def test_no_level_guide_without_an_item_level_answer(tiny):
    res = copy.deepcopy(tiny)
    res["item_level"] = {"skipped": "off"}
    assert "Which level answers what" not in markdown(res)
    assert not any("item level" in line for line in console_summary(res))


def test_run_prints_the_item_level_answers_and_which_level_to_use(tiny):
    lines = console_summary(tiny)
    text = "\n".join(lines)
    assert "use it to choose a metric for ranking MT systems" in text
    assert "on which documents or queries a system does worse than its own average; use it to diagnose which items" in text
    for w in tiny["item_level"]["verdicts"]:
        label = f"{w['target']} ({w['items']})"
        (line,) = [ln for ln in lines if ln.strip().startswith(label + " ")]
        cl = " > ".join("{" + ", ".join(c) + "}" for c in w["clusters"])
        assert line.endswith(f"clusters {cl}")
        assert (f"winner {w['winner']}" in line) == bool(w.get("winner"))
    assert text.index("system level") < text.index("item level")


def test_run_prints_where_the_levels_disagree(tiny):
    res = copy.deepcopy(tiny)
    v = res["verdicts"][0]
    v["winner"] = "bleu"
    w = next(w for w in res["item_level"]["verdicts"] if w["target"] == v["target"])
    w["pairwise"] = [{"a": "chrf1", "b": "bleu", "p_adjusted": 0.01, "significant": True}]
    lines = [ln for ln in console_summary(res) if ln.startswith("  levels disagree: ")]
    assert lines == [f"  levels disagree: on {v['target']} the system level names bleu best, the item level ranks "
                     f"chrf1 significantly above it (within {w['items']}, p_adj 0.01)"]
    w["pairwise"][0]["significant"] = False
    assert not any("levels disagree" in ln for ln in console_summary(res))


def test_a_target_without_any_ranked_metric_says_so_instead_of_an_empty_cluster_list(tiny):
    res = copy.deepcopy(tiny)
    res["verdicts"][0].update(clusters=[], ranking=[], winner=None, pairwise=[])
    line = next(ln for ln in console_summary(res) if ln.split()[0] == res["verdicts"][0]["target"])
    assert "no ranking: no MT metric has a defined τ" in line and not line.rstrip().endswith("clusters")
    md = markdown(res)
    assert "clusters none ranked" not in md and "clusters none (no MT metric has a defined τ" in md


def test_the_english_row_is_explained_in_one_line_when_relevance_is_its_own_top_k(tiny):
    from clir_eval.report.tables import english_note

    res = copy.deepcopy(tiny)
    res["english"]["ir"].update({"map": 1.0, "P_5": 0.9, "rbo": 0.99999999})
    note = english_note(res)
    assert note.startswith("The English side's row is a ceiling by construction: the relevant documents are its "
                           "own top 5, so it scores 1 on map, rbo")
    assert "P_5 is 0.90 because some queries share a term with fewer than 5 documents" in note
    assert note in markdown(res) and "ceiling by construction" in html_report(res, plots=False)
    res["signature"]["relevance"] = "file:qrels.txt|sha1:0"
    assert english_note(res) is None and "ceiling by construction" not in markdown(res)
