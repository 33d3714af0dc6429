"""The README's "Your first experiment" (and the getting-started page's) runs as written: its shell
commands and its config are taken from the page itself (not copied here) and run in a fresh directory beside the demo data."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from clir_eval.sources.demo import generate_demo

ROOT = Path(__file__).resolve().parents[1]


def _section(text: str, title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", text, re.S | re.M)
    assert m, f"README.md has no '## {title}' section"
    return m.group(1)


def first_experiment(page: str = "README.md") -> tuple[list[str], dict[str, str]]:
    """The section's shell commands in order, and its files: a YAML block preceded by 'Save this as `PATH`'."""
    sec = _section((ROOT / page).read_text(encoding="utf-8") + "\n## end\n", "Your first experiment")
    commands, files = [], {}
    for m in re.finditer(r"```(\w+)\n(.*?)```", sec, re.S):
        lang, body = m.group(1), m.group(2)
        if lang == "bash":
            commands += [ln for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        elif lang == "yaml":
            name = re.findall(r"Save this as `([^`]+)`", sec[: m.start()])
            assert name, "a YAML block in the section needs 'Save this as `PATH`' before it"
            files[name[-1]] = body
    return commands, files


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_readme_first_experiment_runs_as_written(tmp_path, page):
    commands, files = first_experiment(page)
    assert len(commands) >= 4 and files
    assert any(c.startswith("clir-eval validate ") for c in commands) and any(c.startswith("clir-eval run ") for c in commands)
    generate_demo(tmp_path / "demo-out" / "data", seed=13)  # what `clir-eval demo --out demo-out` writes under data/
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "clir-eval"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m clir_eval \"$@\"\n")
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    env.pop("CLIR_EVAL_CACHE", None)
    written, validated = False, ""
    for cmd in commands:
        if cmd.startswith("clir-eval") and not written:  # the config is saved after the files are made
            for name, body in files.items():
                (tmp_path / name).write_text(body, encoding="utf-8")
            written = True
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", cmd], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"{cmd}\n{proc.stdout}\n{proc.stderr}"
        if cmd.startswith("clir-eval validate "):
            assert "systems: " in proc.stdout and "estimated run cost" in proc.stdout, proc.stdout
            validated = proc.stdout + proc.stderr  # the summary on stdout, warnings (if any) on stderr
    out = next(c.split("--out", 1)[1].split()[0] for c in commands if c.startswith("clir-eval run "))
    results = json.loads((tmp_path / out / "results.json").read_text())
    systems = sorted(p.stem for p in (tmp_path / "my-exp" / "systems").glob("*.txt"))
    assert sorted(results["systems"]) == systems and len(systems) >= 5
    assert (tmp_path / out / "report.html").is_file()
    assert any(c["tau"] is not None for c in results["correlations"])
    # every query is judged: the queries were written for the collection searched, and validate warns of none
    assert "warning:" not in validated
    n_queries = len((tmp_path / "my-exp" / "queries.tsv").read_text().splitlines())
    for name, entry in results["systems"].items():
        acc = entry["queries"]
        for measure, a in ({"all": acc} if "evaluated" in acc else acc).items():  # one entry, or one per measure
            assert a["evaluated"] == a["total"] == n_queries, (name, measure, a)
    # the English row's one-line explanation quotes what the run and validate print
    text = " ".join(_section((ROOT / page).read_text(encoding="utf-8") + "\n## end\n", "Your first experiment").split())
    m = re.search(r"its P_10 is (\d\.\d\d) because (\d+) of the (\d+) queries share a word with fewer than (\d+) lines",
                  text)
    assert m, "the section explains the English row's P_10"
    p10, below, total, k = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
    assert f"{results['english']['ir']['P_10']:.2f}" == p10 and total == n_queries
    assert f"P@{k} {p10} ({below} queries share a term with fewer than {k} documents)" in validated
    assert results["english"]["ir"]["map"] == results["english"]["ir"]["ndcg"] == 1.0  # "its MAP and nDCG are 1"
    # the story the page tells of the levels, where it tells one
    m = re.search(r"the system level ranks (\w+) first for all (\d+) measures but names no single winner: (\d+) "
                  r"systems cannot separate it from (\w+) and (\w+)", text)
    if m:
        vds = results["verdicts"]
        assert len(vds) == int(m.group(2)) and len(results["systems"]) == int(m.group(3))
        for v in vds:
            assert v["ranking"][0] == m.group(1) and v["winner"] is None
            assert set(v["clusters"][0]) == {m.group(1), m.group(4), m.group(5)}
        ((item, named, total, other, tie),) = re.findall(
            r"The item level names (\w+) for (\w+) of the queries' (\w+) measures \(for (\w+) it cannot separate \w+ "
            r"from (\w+)\)", text)
        words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
        iv = [v for v in results["item_level"]["verdicts"] if v["items"] == "queries"]
        assert len(iv) == words[total] and sum(v["winner"] == item for v in iv) == words[named]
        [rest] = [v for v in iv if v["winner"] != item]
        assert rest["target"].lower().startswith(other.lower()) and set(rest["clusters"][0]) == {item, tie.lower()}
        assert any(c.startswith("circularity") for c in results["confounds"]["notes"])
    else:
        assert page == "README.md"  # the README stays short; getting-started tells the story


def test_readme_and_docs_commands_write_under_ignored_directories():
    """Every --out of a command in README.md and docs/ is a directory git ignores (so following the docs
    in a clone leaves `git status` clean)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    outs = set()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for m in re.finditer(r"--out[ =]([^\s`'\")|]+)", page.read_text(encoding="utf-8")):
            path = m.group(1)
            if not re.fullmatch(r"[A-Za-z0-9_.][\w./-]*", path) or path.isupper() or "/" in path and path.startswith("/"):
                continue  # placeholders (DIR, <path>) and absolute paths
            outs.add(path)
    assert "my-exp/out" in outs and "out/table5-cs" in outs
    proc = subprocess.run(["git", "check-ignore", "--no-index", "--verbose", "--non-matching", *(f"{o}/x" for o in sorted(outs))],
                          cwd=ROOT, capture_output=True, text=True)
    not_ignored = [ln.split("\t")[-1][:-2] for ln in proc.stdout.splitlines() if ln.startswith("::")]
    assert not not_ignored, f"--out paths not ignored by .gitignore: {not_ignored}"
