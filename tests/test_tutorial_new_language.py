"""docs/tutorials/new-language.md runs as written: its script, config and commands are taken from the page
(not copied here) and run in a fresh directory; the scores table and the error line it quotes are what the
commands give."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "tutorials" / "new-language.md"


def _page():
    text = PAGE.read_text(encoding="utf-8")
    files, commands = {}, []
    for m in re.finditer(r"```(\w+)\n(.*?)```", text, re.S):
        lang, body = m.group(1), m.group(2)
        if lang in ("python", "yaml"):
            files[re.findall(r"Save this as `([^`]+)`", text[: m.start()])[-1]] = body
        elif lang == "bash":
            commands += [ln for ln in body.splitlines() if ln.strip()]
    texts = re.findall(r"```text\n(.*?)```", text, re.S)
    return files, commands, texts


def _env(tmp_path: Path) -> dict:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, cmd in (("clir-eval", f"{sys.executable} -m clir_eval"), ("python", sys.executable)):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {cmd} "$@"\n')
        shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    env.pop("CLIR_EVAL_CACHE", None)
    return env


def test_new_language_tutorial_runs_as_written(tmp_path):
    files, commands, (table, error) = _page()
    assert set(files) == {"make_ja.py", "ja.yaml"} and "language: ja" in files["ja.yaml"]
    assert commands == ["python make_ja.py", "clir-eval run ja.yaml --out out-ja --quiet"]
    for name, body in files.items():
        (tmp_path / name).write_text(body, encoding="utf-8")
    env = _env(tmp_path)
    for cmd in commands:
        subprocess.run(cmd, shell=True, cwd=tmp_path, env=env, check=True, capture_output=True)
    assert (tmp_path / "out-ja" / "scores.tsv").read_text(encoding="utf-8") == table
    # the same experiment with the English analyzer: the error line the page quotes
    (tmp_path / "en.yaml").write_text(files["ja.yaml"].replace("language: ja", "language: en"), encoding="utf-8")
    done = subprocess.run("clir-eval run en.yaml --out out-en --quiet", shell=True, cwd=tmp_path, env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and done.stderr == error
