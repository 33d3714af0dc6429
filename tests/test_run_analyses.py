"""The ``analyses:`` section of a run config (issue 15): favoritism and MacroF per frequency bucket
in results.json and in report.md / report.html / report.tex, checked against sacrebleu and the run's
own MacroF; bad sections are one ``error:`` line naming the field."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import sacrebleu
import yaml
from test_pipeline import make_experiment

ANALYSES = {"favoritism": {"systems": ["sys1", "sys3"], "metrics": ["bleu", "macrof1"], "top": 4},
            "frequency_buckets": {"buckets": [5, 20], "systems": "all"}}


def _with(path, **sections):
    cfg = yaml.safe_load(path.read_text())
    for k, v in sections.items():
        if v is None:
            cfg.pop(k, None)
        else:
            cfg[k] = v
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def run_out(tmp_path_factory):
    """One run of the tiny experiment with both analyses (shared by the tests below)."""
    from clir_eval.cli import main

    root = tmp_path_factory.mktemp("analyses")
    exp = _with(make_experiment(root), analyses=ANALYSES)
    out = root / "out"
    assert main(["run", str(exp), "--out", str(out), "-j", "1", "-q"]) == 0
    return root, out, json.loads((out / "results.json").read_text())


def test_favoritism_deltas_equal_sacrebleu_without_the_segment(run_out):
    root, _, res = run_out
    fav = res["analyses"]["favoritism"]
    assert (fav["system_a"], fav["system_b"], fav["top"]) == ("sys1", "sys3", 4)
    ref = (root / "ref.txt").read_text().splitlines()
    hyp = {s: (root / "systems" / f"{s}.txt").read_text().splitlines() for s in ("sys1", "sys3")}
    assert fav["n_segments"] == len(ref)
    bleu = fav["metrics"]["bleu"]
    full = {s: sacrebleu.corpus_bleu(h, [ref]).score for s, h in hyp.items()}
    assert bleu["score_a"] == pytest.approx(full["sys1"]) and bleu["score_b"] == pytest.approx(full["sys3"])
    assert bleu["score_a"] == pytest.approx(res["systems"]["sys1"]["mt"]["bleu"])
    rows = bleu["segments"]
    assert len(rows) == 4 and [r["rank"] for r in rows] == [1, 2, 3, 4]
    assert [abs(r["favoritism"]) for r in rows] == sorted((abs(r["favoritism"]) for r in rows), reverse=True)
    for r in rows:
        i = r["segment"]
        loo = {s: sacrebleu.corpus_bleu(h[:i] + h[i + 1:], [ref[:i] + ref[i + 1:]]).score for s, h in hyp.items()}
        assert r["delta_a"] == pytest.approx(full["sys1"] - loo["sys1"], abs=1e-9)
        assert r["delta_b"] == pytest.approx(full["sys3"] - loo["sys3"], abs=1e-9)
        assert r["favoritism"] == pytest.approx(r["delta_a"] - r["delta_b"], abs=1e-12)
        assert (r["reference"], r["hyp_a"], r["hyp_b"]) == (ref[i], hyp["sys1"][i], hyp["sys3"][i])
    assert "tok:13a" in bleu["signature"]


def test_bucket_means_are_the_systems_macrof1(run_out):
    _, _, res = run_out
    fb = res["analyses"]["frequency_buckets"]
    assert [b["label"] for b in fb["buckets"]][:2] == ["1-5", "6-20"] and fb["beta"] == 1.0
    assert set(fb["systems"]) == set(res["systems"])
    for name, rows in fb["systems"].items():
        n = sum(r["n_types"] for r in rows)
        mean = sum(r["macro_f"] * r["n_types"] for r in rows if r["n_types"]) / n
        assert mean == pytest.approx(res["systems"][name]["mt"]["macrof1"], abs=1e-9), name


def test_reports_show_the_analyses(run_out):
    _, out, res = run_out
    md = (out / "report.md").read_text()
    fav = res["analyses"]["favoritism"]["metrics"]["bleu"]["segments"]
    assert "## Favoritism: segments each metric credits to sys1 over sys3" in md
    assert "## MacroF by reference-frequency bucket" in md
    bleu_rows = md.split("### bleu")[1].split("### macrof1")[0]
    for r in fav:  # every top segment with its favoritism as in results.json
        assert f"\n| {r['rank']} | {r['segment']} | {r['favoritism']:+.3f} | {r['delta_a']:+.3f} |" in bleu_rows
    assert "no test is run" in md
    html = (out / "report.html").read_text()
    assert "<h2>MacroF by reference-frequency bucket</h2>" in html and 'aria-label="MacroF per frequency bucket"' in html
    plot = "<svg" + html.split('class="buckets"')[0].rsplit("<svg", 1)[1] + html.split('class="buckets"')[1].split("</svg>")[0]
    systems = res["analyses"]["frequency_buckets"]["systems"]  # the plot is inline SVG, a line and a legend entry per system
    assert "xmlns" in plot and plot.count("<polyline") >= len(systems) >= 2
    assert all(f">{name}</text>" in plot for name in systems)
    assert "href='#analyses'" in html
    tex = (out / "report.tex").read_text()
    assert "\\subsection*{Favoritism: segments each metric credits to sys1 over sys3}" in tex
    buckets_tex = tex.split("\\subsection*{MacroF by reference-frequency bucket}")[1]
    for name, rows in res["analyses"]["frequency_buckets"]["systems"].items():
        line = next(ln for ln in buckets_tex.splitlines() if ln.startswith(name + " & "))
        assert line.split(" & ")[1] == f"{rows[0]['macro_f']:.2f}"
    if shutil.which("pdflatex"):
        p = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "report.tex"],
                           cwd=out, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stdout[-2000:]


def test_without_analyses_results_and_config_have_no_new_key(tmp_path):
    from clir_eval.config.load import load_config

    exp = make_experiment(tmp_path)
    assert "analyses" not in load_config(exp).to_dict()
    assert load_config(_with(exp, analyses=ANALYSES)).to_dict()["analyses"]["favoritism"]["top"] == 4


BAD = [
    ({"favoritism": {}}, r"analyses\.favoritism\.systems: missing; this field is required \(Two different systems"),
    ({"favoritism": {"systems": ["sys1"]}}, r"analyses\.favoritism\.systems: give two different system names"),
    ({"favoritism": {"systems": ["sys1", "sys1"]}}, r"analyses\.favoritism\.systems: give two different"),
    ({"favoritism": {"systems": ["sys1", "nosuch"]}}, r"analyses\.favoritism\.systems: 'nosuch' is not a system"),
    ({"favoritism": {"systems": ["sys1", "sys2"], "metrics": ["bleu", "bleux"]}},
     r"analyses\.favoritism\.metrics\[1\]: unknown metric 'bleux'"),
    ({"favoritism": {"systems": ["sys1", "sys2"], "top": 0}}, r"analyses\.favoritism\.top: must be a positive integer <= 100000, got 0"),
    ({"favoritism": {"systems": ["sys1", "sys2"], "topp": 3}}, r"analyses\.favoritism\.topp: unknown key"),
    ({"frequency_buckets": {"buckets": [100, 10]}}, r"analyses\.frequency_buckets\.buckets: give increasing"),
    ({"frequency_buckets": {"buckets": "10,x"}}, r"analyses\.frequency_buckets\.buckets: give increasing"),
    ({"frequency_buckets": {"buckets": [0, 10]}}, r"analyses\.frequency_buckets\.buckets: give increasing"),
    ({"frequency_buckets": {"systems": ["sys0", "sys9"]}}, r"analyses\.frequency_buckets\.systems: 'sys9' is not"),
    ({"frequency_buckets": {"beta": 0}}, r"analyses\.frequency_buckets\.beta: must be > 0"),
    ({"favouritism": {"systems": ["sys1", "sys2"]}}, r"analyses\.favouritism: unknown key"),
    ({}, r"analyses: empty; give favoritism: and/or frequency_buckets:"),
    ("all", r"analyses: expected a mapping"),
]


@pytest.mark.parametrize("section, expect", BAD, ids=[b[1][:40] for b in BAD])
def test_bad_analyses_section_is_one_error_line(cli, tmp_path, section, expect):
    exp = _with(make_experiment(tmp_path), analyses=section)
    code, out, err = cli("validate", exp)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert re.search(expect, err), err
    out_dir = tmp_path / "out"
    code, _, err2 = cli("run", exp, "--out", out_dir, "-q")
    assert code == 2 and err2 == err and not (out_dir / "results.json").exists()


def test_analyses_need_the_mt_section(cli, tmp_path):
    exp = _with(make_experiment(tmp_path), analyses={"frequency_buckets": {}}, mt=None)
    cfg = yaml.safe_load(exp.read_text())
    cfg["systems"].pop("hyp", None)
    cfg["systems"]["pattern"] = "systems/sys{k}.jsonl"
    cfg["systems"].pop("docs")
    cfg["systems"]["docs"] = "{path}"
    exp.write_text(yaml.safe_dump(cfg, sort_keys=False))
    code, _, err = cli("validate", exp)
    assert code == 2 and "analyses: needs the mt section" in err, err


def test_systems_known_only_at_run_time_are_checked_before_any_work(tmp_path):
    """WMT/Europarl systems are only known after the sources are read: run_analyses checks the
    names first (here: a system list without sys3)."""
    from clir_eval.config.load import load_config
    from clir_eval.errors import UserError
    from clir_eval.mt.analyses import run_analyses

    cfg = load_config(_with(make_experiment(tmp_path), analyses=ANALYSES))
    with pytest.raises(UserError, match=r"analyses\.favoritism\.systems: 'sys3' is not a system with MT output"):
        run_analyses(cfg, [s for s in cfg.systems if s.name != "sys3"], cfg.mt.refs)
