"""Every command's --help has a plain usage line and one or two examples, and the examples run
(in a fresh directory, in the order below, after the demo they refer to)."""

from __future__ import annotations

import re
import shlex

import pytest

from clir_eval.cli.app import COMMANDS

ORDER = ["demo", "validate", "run", "report", "retrieve", "pseudo-qrels", "ir-score", "mt-score", "mt-compare",
         "mt-buckets", "favoritism", "correlate", "mtme-export"]


def _commands() -> list[str]:
    """Every command of the CLI's command map."""
    return list(COMMANDS)


def _run_order(names: list[str]) -> list[str]:
    return sorted(names, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))


def _help(cli, name: str) -> str:
    code, out, err = cli(name, "--help")
    assert code == 0, err
    return out


def _examples(text: str, name: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip().startswith(f"clir-eval {name} ")]


@pytest.mark.parametrize("name", _commands())
def test_help_has_plain_usage_and_examples(cli, name):
    text = _help(cli, name)
    usage = text.splitlines()[0]
    assert usage.startswith(f"Usage: clir-eval {name} ") and not re.search(r"[{}<>]", usage), usage
    assert "<bool>" not in text
    assert 1 <= len(_examples(text, name)) <= 2, f"{name}: give one or two runnable 'clir-eval {name} ...' examples in its --help"


def test_examples_run(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ran = []
    helps = {name: _help(cli, name) for name in _commands()}
    for name in _run_order(list(helps)):
        for example in _examples(helps[name], name):
            code, out, err = cli(*shlex.split(example, comments=True)[1:])
            assert code == 0, f"{example}: {err}"
            ran.append(name)
    assert set(ran) == set(_commands())


def test_check_demo_signal_agrees_with_the_demo(cli, tmp_path):
    """scripts/check_demo_signal.py (sacrebleu, rank_bm25, pytrec_eval directly) prints the same
    BLEU, chrF1, MacroF1, MAP and Kendall tau-b vs MAP as 'clir-eval demo' (same seed)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    code, _, err = cli("demo", "--out", tmp_path / "d", "--jobs", "1")
    assert code == 0, err
    res = json.loads((tmp_path / "d" / "results.json").read_text())
    script = Path(__file__).resolve().parent.parent / "scripts" / "check_demo_signal.py"
    out = subprocess.run([sys.executable, str(script), "--mt-set", "mt"], capture_output=True, text=True, check=True).stdout
    rows = [ln.split() for ln in out.splitlines() if ln.split() and ln.split()[0] in res["systems"]]
    assert len(rows) == len(res["systems"]) == 12
    for name, map_, bleu, chrf1, macrof1 in rows:
        s = res["systems"][name]
        assert [f"{s['ir']['map']:.4f}", f"{s['mt']['bleu']:.4f}", f"{s['mt']['chrf1']:.4f}",
                f"{s['mt']['macrof1']:.4f}"] == [map_, bleu, chrf1, macrof1], name
    taus = dict(re.findall(r"(\w+)\[mt\]\s+tau=([+-][0-9.]+)", out))
    ours = {c["mt_metric"]: c["tau"] for c in res["correlations"] if c["ir_measure"] == "map" and c.get("kind", "mt-ir") == "mt-ir"}
    assert {k: float(v) for k, v in taus.items()} == {
        "BLEU": round(ours["bleu"], 3), "chrF1": round(ours["chrf1"], 3), "MacroF1": round(ours["macrof1"], 3)}
    assert f"English-side MAP {res['english']['ir']['map']:.4f}" in out
