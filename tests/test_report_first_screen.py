"""What the reports say before any table, and where their sections are: a run without correlations says so
and why, first; the summary line says where the item level contradicts the system level (from the
significant item-level pairs alone); the power counts leave out targets flagged UNINFORMATIVE; the HTML
page keeps report.md's order and its Contents line links exactly the sections it has; a report without a
study design ends with one line pointing to ``clir-eval design``."""

from __future__ import annotations

import copy
import re

import pytest
import yaml
from test_pipeline import make_experiment

from clir_eval.config.load import load_config
from clir_eval.pipeline.run import run_experiment
from clir_eval.report.html import html_report
from clir_eval.report.items import level_summary
from clir_eval.report.tables import console_summary, latex_report, markdown


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict:
    """A finished run of the 5-system experiment of test_pipeline (item level on)."""
    root = tmp_path_factory.mktemp("exp")
    return run_experiment(load_config(make_experiment(root)), root / "out", jobs=1, quiet=True)


def _html_links(page: str) -> tuple[list[str], set[str]]:
    contents = re.search(r"Contents: (.*?)</p>", page).group(1)
    return re.findall(r"href='#([^']+)'", contents), set(re.findall(r"id='([^']+)'", page))


def _first_table_at(md: str) -> int:
    return min((m.start() for m in re.finditer(r"^\|", md, re.M)), default=len(md))


# --------------------------------------------------------------------------- no correlations
def _no_correlation_results(n_systems: int, mt: bool) -> dict:
    systems = {f"s{i}": {"mt": {"bleu": 10.0 + i} if mt else {}, "ir": {"map": 0.1 * i}} for i in range(n_systems)}
    corr = ([{"kind": "mt-ir", "x": "bleu", "y": "map", "mt_metric": "bleu", "ir_measure": "map", "tau": None,
              "p_value": None, "n": n_systems, "significant": None, "method": "kendall", "variant": "b", "alpha": 0.05,
              "reason": f"fewer than 3 systems with both values (n={n_systems})"}] if mt else [])
    return {"name": "small", "systems": systems, "correlations": corr, "comparisons": [], "verdicts": [],
            "score_kinds": {"mt": ["bleu"] if mt else [], "ir": ["map"], "human": [], "lower_is_better": []},
            "confounds": {"notes": ["a caveat"], "metric_agreement": [], "partial": []}, "signature": {"seed": 1}}


@pytest.mark.parametrize("n, mt, reasons", [
    (2, True, ["2 systems; at least 3 needed"]),
    (2, False, ["2 systems; at least 3 needed", "No MT metrics"]),
    (1, True, ["1 system; at least 3 needed"]),
])
def test_a_run_without_correlations_says_so_and_why_before_anything_else(n, mt, reasons):
    res = _no_correlation_results(n, mt)
    md = markdown(res)
    first = md.split("\n\n")[1]  # the paragraph under the title
    assert first.startswith("**No correlations**: ")
    for r in reasons:
        assert r in first
    assert "between system-level scores over" not in md  # no header describing τ cells
    assert md.index("No correlations") < _first_table_at(md)
    page = html_report(res, plots=True)
    assert page.index("No correlations") < page.index("<table")
    assert page.index("No correlations") < page.index("Contents:")
    links, ids = _html_links(page)
    assert set(links) <= ids, set(links) - ids
    for absent in ("verdicts", "heatmap") + (() if mt else ("tables", "scatter")):  # no τ: no heatmap of n/a cells
        assert absent not in links and f"id='{absent}'" not in page
    tex = latex_report(res)
    assert tex.index("No correlations") < tex.index(r"\begin{table}")
    (line,) = console_summary(res)
    assert line.startswith(f"  no correlations: {reasons[0]}") and all(r in line for r in reasons)


def test_enough_systems_but_every_tau_undefined_gives_the_rows_reasons():
    res = _no_correlation_results(4, True)
    res["correlations"][0]["reason"] = "bleu is constant"
    first = markdown(res).split("\n\n")[1]
    assert first.startswith("**No correlations**: Every τ is undefined (bleu is constant)")


def test_a_run_with_correlations_does_not_say_there_are_none(tiny):
    assert "No correlations" not in markdown(tiny)
    assert "No correlations" not in html_report(tiny, plots=False)


def test_an_ir_only_run_has_no_correlations_and_no_mt_caveat(tmp_path):
    """Five systems, IR measures only (no mt section): nothing to correlate, and the circularity caveat, which
    is about MT metrics and IR measures sharing the reference, is not written."""
    cfg_path = make_experiment(tmp_path)
    cfg = yaml.safe_load(cfg_path.read_text())
    del cfg["mt"]
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    res = run_experiment(load_config(cfg_path), tmp_path / "out", jobs=1, quiet=True)
    assert res["correlations"] == []
    assert not any("circularity" in n for n in (res.get("confounds") or {}).get("notes", []))
    md = (tmp_path / "out" / "report.md").read_text()
    assert md.split("\n\n")[1].startswith("**No correlations**: No MT metrics")
    assert "MT metrics" not in md.split("## Item level")[0].split("\n\n", 2)[2]  # nothing about them before
    page = (tmp_path / "out" / "report.html").read_text()
    links, ids = _html_links(page)
    assert set(links) <= ids and "tables" not in links and "caveats" not in links


def test_the_circularity_caveat_stays_when_the_run_has_mt_metrics(tiny):
    assert any(n.startswith("circularity") for n in tiny["confounds"]["notes"])


# --------------------------------------------------------------------------- levels disagree
def _levels(system_pairs, winner, item_pairs, alpha=0.05) -> dict:
    """A system-level verdict on rbo and an item-level one (within queries) with the given pairs."""
    return {
        "systems": {},
        "verdicts": [{"target": "rbo", "winner": winner, "n_systems": 12, "min_significant_tau": 0.45,
                      "pairwise": [{"a": a, "b": b, "significant": True, "p_adjusted": 0.01} for a, b in system_pairs]}],
        "item_level": {"items": {"documents": {"n": 30}, "queries": {"n": 20}}, "settings": {"alpha": alpha},
                       "verdicts": [{"items": "queries", "target": "rbo", "winner": None, "alpha": alpha, "answer": "",
                                     "pairwise": [{"a": a, "b": b, "p_adjusted": p, "significant": p < alpha}
                                                  for a, b, p in item_pairs]}]},
    }


def test_summary_says_when_the_item_level_ranks_a_metric_above_the_system_levels_winner():
    text = level_summary(_levels([("macrof1", "chrf1")], "macrof1", [("chrf1", "macrof1", 0.036)]))
    assert "levels disagree" in text
    assert re.search(r"on rbo the system level names macrof1 best, the item level ranks chrf1 significantly above it "
                     r"\(within queries, p_adj 0\.036\)", text)


def test_summary_says_when_the_item_level_reverses_a_significant_system_level_pair():
    text = level_summary(_levels([("bleu", "chrf1")], None, [("chrf1", "bleu", 0.01)]))
    assert "the system level ranks bleu significantly above chrf1, the item level chrf1 significantly above bleu" in text


@pytest.mark.parametrize("system_pairs, winner, item_pairs", [
    ([("macrof1", "chrf1")], "macrof1", [("chrf1", "macrof1", 0.06)]),  # not significant at the item level
    ([("macrof1", "chrf1")], "macrof1", [("chrf1", "bleu", 0.01)]),  # significant, but not against the system level
    ([("macrof1", "chrf1")], "macrof1", [("macrof1", "chrf1", 0.01)]),  # both levels agree
    ([], None, [("chrf1", "bleu", 0.01)]),  # the system level said nothing about the pair
])
def test_summary_says_nothing_of_disagreement_that_results_json_does_not_hold(system_pairs, winner, item_pairs):
    assert "disagree" not in level_summary(_levels(system_pairs, winner, item_pairs))


def test_disagreement_uses_the_item_levels_alpha():
    res = _levels([("macrof1", "chrf1")], "macrof1", [("chrf1", "macrof1", 0.036)], alpha=0.01)
    assert "disagree" not in level_summary(res)


def test_every_disagreement_named_in_a_real_run_is_a_significant_item_level_pair(tiny):
    """On the tiny run, with its item-level pairs rewritten so one contradicts each target's top metric."""
    res = copy.deepcopy(tiny)
    expected = []
    for v in res["verdicts"]:
        top = v["clusters"][0][0]
        v["winner"] = top
        iv = next(w for w in res["item_level"]["verdicts"] if w["target"] == v["target"])
        for p in iv["pairwise"]:
            p["p_adjusted"], p["significant"] = 1.0, False
        pair = next((p for p in iv["pairwise"] if p["b"] == top), None)
        if pair is not None:
            pair["p_adjusted"], pair["significant"] = 0.001, True
            expected.append((v["target"], pair["a"], top))
    assert expected
    text = markdown(res).split("\n\n")[2]  # the summary paragraph, on the first screen
    for target, a, b in expected:
        assert f"on {target} the system level names {b} best, the item level ranks {a} significantly above it" in text
    assert text.count("significantly above it") == len(expected)


# --------------------------------------------------------------------------- power and UNINFORMATIVE targets
def _with_design(res: dict, uninformative: str) -> dict:
    res = copy.deepcopy(res)
    for v in res["verdicts"]:
        v["informative"] = v["target"] != uninformative
    for c in res["correlations"]:
        if c["y"] == uninformative:
            c["informative"] = False
    targets = [v["target"] for v in res["verdicts"]]
    rows = [{"target": t, "a": "bleu", "n_systems": 5, "n_queries": 12, "effect": 0.3, "power": 0.9, "mc_se": 0.01}
            for t in targets]
    rows += [{"target": t, "a": "bleu", "b": "chrf1", "n_systems": 5, "n_queries": 12, "effect": 0.3, "power": 0.9,
              "mc_se": 0.01} for t in targets]
    res["design"] = {"observed": {"n_systems": 5, "n_queries": 12},
                     "settings": {"reps": 100, "alpha": 0.05, "seed": 3, "power": 0.8, "effects": [0.3],
                                  "correction": "holm", "family": "target", "method": "simulated"},
                     "observed_rows": rows, "answers": ["an answer"]}
    return res


def test_power_counts_leave_out_uninformative_targets_and_say_so(tiny):
    targets = [v["target"] for v in tiny["verdicts"]]
    res = _with_design(tiny, targets[0])
    summary = markdown(res).split("\n\n")[2]
    n = len(targets) - 1
    assert f"at 0.3, {n} of {n} targets' τ and {n} of {n} metric pairs" in summary
    assert f"not counted: {targets[0]} (flagged UNINFORMATIVE" in summary
    design = markdown(res).split("## Study design")[1].split("\n## ")[0]
    assert f"| {targets[0]} — UNINFORMATIVE | τ(metric, target) significant |" in design
    assert f"| {targets[1]} | bleu significantly above chrf1 |" in design
    # nothing flagged: every row counted, nothing said
    plain = markdown(_with_design(tiny, "none of them")).split("\n\n")[2]
    assert f"{n + 1} of {n + 1} targets' τ" in plain and "not counted" not in plain


def test_run_stdout_marks_uninformative_targets_as_the_report_does(tiny):
    res = copy.deepcopy(tiny)
    res["verdicts"][1]["informative"] = False
    lines = console_summary(res)
    flagged = [line for line in lines if "UNINFORMATIVE" in line and "WARNING" not in line]
    assert len(flagged) == 1 and flagged[0].split()[0] == res["verdicts"][1]["target"]
    assert f"**{res['verdicts'][1]['target']}** — UNINFORMATIVE" in markdown(res)


# --------------------------------------------------------------------------- HTML order and Contents
H2 = ("Verdicts", "Confounds and caveats", "Item level", "MT metric vs IR measure", "Study design", "System scores")


def test_html_sections_follow_report_md_and_contents_links_exactly_them(tiny):
    res = _with_design(tiny, "none of them")
    md, page = markdown(res), html_report(res, plots=True)
    md_at = [md.index("## " + h) for h in H2]
    html_at = [page.index("<h2>" + h) if "<h2>" + h in page else page.index(">" + h) for h in H2]
    assert md_at == sorted(md_at) and html_at == sorted(html_at)
    links, ids = _html_links(page)
    assert set(links) <= ids
    assert {"verdicts", "caveats", "item-level", "design", "tables", "heatmap", "scatter", "scores",
            "signature"} <= set(links)
    # Contents lists the sections in page order
    assert [page.index(f"id='{a}'") for a in links] == sorted(page.index(f"id='{a}'") for a in links)
    assert page.index("id='item-level'") < page.index("Item level: documents and queries")
    assert page.index("id='design'") < page.index("Study design: how large")
    # without plots or a design the links to them go too
    links, _ = _html_links(html_report(tiny, plots=False))
    assert not {"heatmap", "scatter", "design"} & set(links) and "item-level" in links


# --------------------------------------------------------------------------- pointer to clir-eval design
def test_a_report_without_design_ends_with_one_line_pointing_to_it(tiny):
    md = markdown(tiny).rstrip("\n")
    last = md.splitlines()[-1]
    assert "`clir-eval design OUT`" in last and md.count("clir-eval design") == 1
    assert "clir-eval design" in html_report(tiny, plots=False).split("id='signature'")[1]
    assert "clir-eval design" not in markdown(_with_design(tiny, "x"))
    assert "clir-eval design" not in markdown(_no_correlation_results(2, True))


def test_run_prints_the_answer_first_and_the_design_pointer_on_stderr_unless_quiet(tmp_path, cli):
    cfg = make_experiment(tmp_path)
    code, out, err = cli("run", cfg, "--out", tmp_path / "out", "-j", "1")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("Answer") and "clir-eval design" not in out
    assert not any(ln.lstrip().startswith(("WARNING", "CAVEAT", "note:")) for ln in lines)
    assert f"note: Power: not estimated; clir-eval design {tmp_path / 'out'} " in err
    code, out, err = cli("run", cfg, "--out", tmp_path / "out", "-j", "1", "--quiet")
    assert code == 0 and "clir-eval design" not in out + err


def test_design_marks_the_targets_the_run_flags_uninformative(tmp_path, cli):
    """End to end: a run whose results.json flags one target UNINFORMATIVE, then ``clir-eval design``: its
    stdout says so, and the first-screen power counts of the re-rendered report leave that target out."""
    import json

    cfg = make_experiment(tmp_path)
    out = tmp_path / "out"
    code, _, err = cli("run", cfg, "--out", out, "-j", "1", "--quiet")
    assert code == 0, err
    res = json.loads((out / "results.json").read_text())
    flagged = res["verdicts"][0]["target"]
    res["verdicts"][0]["informative"] = False
    (out / "results.json").write_text(json.dumps(res))
    code, text, err = cli("design", out, "--reps", "20", "--systems", "3,5", "--queries", "6,12", "--effect", "0.5",
                          "--jobs", "1")
    assert code == 0, err
    assert f"note: {flagged}: flagged UNINFORMATIVE by the run" in err and "note:" not in text  # a diagnostic
    assert text.startswith("Answer: at this size (12 systems") or text.startswith("Answer")
    md = (out / "report.md").read_text()
    summary = md.split("\n\n")[2]
    assert f"not counted: {flagged} (flagged UNINFORMATIVE" in summary
    rows = json.loads((out / "results.json").read_text())["design"]["observed_rows"]
    taus = list({r["target"]: r for r in rows if not r.get("b")}.values())  # a single τ: one power per target
    counted = [r for r in taus if r["target"] != flagged]
    assert len(counted) < len(taus)
    n_ok = sum(r["power"] >= 0.8 for r in counted)
    assert f"at 0.5, {n_ok} of {len(counted)} targets' τ" in summary
    assert "clir-eval design" not in md  # a design has been run: no pointer
