"""Results on stdout, diagnostics on stderr, the answer first: `pool` on two small runs starts its stdout with
the answer and puts its warnings on stderr; `validate` refuses a truncated system file with run's own message;
`-h` is `--help` for the program and every command (as a user runs them: subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_pipeline import make_experiment
from test_pool import make_run

from clir_eval.cli.app import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
DIAGNOSTIC = ("WARNING", "CAVEAT", "note:", "ok:", "warning:")


def clir(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "clir_eval", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=600)


def test_pool_of_two_runs_answers_first_on_stdout_and_warns_on_stderr(tmp_path):
    runs = [make_run(tmp_path, "aa", 1), make_run(tmp_path, "bb", 2)]
    p = clir("pool", *runs, "--bootstrap", "100")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    head = lines[:lines.index("")]
    assert head[0].startswith("Answer (pooled over 2 run(s)") and len(head) <= 10 and max(map(len, head)) < 130
    assert {ln.split(":")[0].strip() for ln in head[1:] if ln.startswith("  ")} == {"map", "rbo"}
    assert not any(ln.lstrip().startswith(DIAGNOSTIC) for ln in lines)
    warnings = [ln for ln in p.stderr.splitlines() if ln.startswith("WARNING: ")]
    assert warnings and f"Limits: {len(warnings)} WARNING line(s) on stderr" in p.stdout
    j = clir("pool", *runs, "--bootstrap", "100", "--format", "json")
    assert j.returncode == 0 and json.loads(j.stdout)["warnings"] == [w[len("WARNING: "):] for w in warnings]


def test_validate_refuses_a_truncated_system_file_with_runs_message(tmp_path):
    cfg = make_experiment(tmp_path)
    assert clir("validate", cfg).returncode == 0
    for name in ("sys2.jsonl", "sys3.txt"):  # a translated collection; an MT hypothesis file
        path = tmp_path / "systems" / name
        good = path.read_text()
        path.write_text("".join(good.splitlines(keepends=True)[:50]))
        v, r = clir("validate", cfg), clir("run", cfg, "--out", tmp_path / "out", "-j", "1", "-q")
        assert v.returncode == r.returncode == 2, (v.stderr, r.stderr)
        assert v.stderr.splitlines()[-1] == r.stderr.strip() and r.stderr.count("\n") == 1
        assert ("do not have the English side's ids" if name.endswith(".jsonl") else "MT files must be line-aligned") \
            in v.stderr
        path.write_text(good)


@pytest.mark.parametrize("cmd", [None, *COMMANDS])
def test_dash_h_is_help(cmd):
    args = [cmd] if cmd else []
    short, long = clir(*args, "-h"), clir(*args, "--help")
    assert short.returncode == long.returncode == 0, short.stderr
    assert short.stdout == long.stdout and "-h, --help" in short.stdout
