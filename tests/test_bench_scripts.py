"""The benchmark scripts (scripts/bench_*.py) share one harness, scripts/benchlib.py: each builds its command line
with ``benchlib.parser`` (exposed as ``arguments()``), and every example command the scripts and the docs give for
it parses. The scripts are imported, never run here: the benchmarks themselves are run by hand (docs/benchmarks.md)."""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"
BENCH = sorted(SCRIPTS.glob("bench_*.py"))
EXAMPLE = re.compile(r"python\S* scripts/(bench_\w+)\.py([^\n`#]*)")
PLACEHOLDER = re.compile(r"[A-Z][A-Z_]*")  # N, DIR, CONFIG, DEMO_OUT: a value the reader fills in


def _module(path: Path):
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(f"_bench_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _examples() -> dict[str, list[list[str]]]:
    """Every ``python scripts/bench_X.py ARGS`` in the scripts and docs, by script, with ``[...]`` unbracketed and a
    placeholder (``N``, ``DIR``) given the value 1."""
    out: dict[str, list[list[str]]] = {}
    for doc in [*SCRIPTS.glob("*.py"), *(ROOT / "docs").glob("*.md"), ROOT / "README.md"]:
        for m in EXAMPLE.finditer(doc.read_text(encoding="utf-8")):
            argv = shlex.split(m.group(2).replace("[", " ").replace("]", " "))
            out.setdefault(m.group(1), []).append(["1" if PLACEHOLDER.fullmatch(a) else a for a in argv])
    return out


EXAMPLES = _examples()


def test_there_are_bench_scripts_and_examples():
    assert len(BENCH) >= 19
    assert sum(map(len, EXAMPLES.values())) >= 40


@pytest.mark.parametrize("path", BENCH, ids=lambda p: p.stem)
def test_bench_script_uses_the_harness_and_parses_its_examples(path):
    text = path.read_text(encoding="utf-8")
    assert "ArgumentParser(" not in text, "build the parser with benchlib.parser"
    assert "\"/usr/bin/time\"" not in text, "time a command with benchlib.command"
    ap = _module(path).arguments()
    assert isinstance(ap, argparse.ArgumentParser)
    assert ap.format_help()
    examples = EXAMPLES.get(path.stem, [])
    assert examples, f"no example of {path.name} in its docstring or the docs"
    for argv in examples:
        try:
            ap.parse_args(argv)
        except SystemExit as e:
            pytest.fail(f"{path.name} {' '.join(argv)}: refused ({e})")


def test_common_flags_are_spelled_alike():
    """--repeat, --jobs, --data and --before come from benchlib.parser: same type and help wording everywhere."""
    seen: dict[str, set] = {}
    for path in BENCH:
        for act in _module(path).arguments()._actions:
            for flag in act.option_strings:
                if flag in ("--repeat", "--jobs", "--data", "--before"):
                    seen.setdefault(flag, set()).add((act.type, re.sub(r" \(default.*", "", act.help or "")))
    assert set(seen) == {"--repeat", "--jobs", "--data", "--before"}
    assert all(len(v) == 1 for v in seen.values()), seen


def test_harness_measures_a_command():
    import benchlib

    m = benchlib.command([sys.executable, "-c", "print(sum(range(10**6)))"], repeat=2)
    assert m.stdout.strip() == str(sum(range(10**6)))
    assert len(m.runs) == 2 and m.cpu > 0 and m.rss > 1 and m.wall > 0
    with pytest.raises(SystemExit, match="failed"):
        benchlib.command([sys.executable, "-c", "raise SystemExit(3)"])
    assert benchlib.command([sys.executable, "-c", "raise SystemExit(3)"], check=False).returncode == 3
    assert benchlib.ratio(3.0, 2.0) == "1.50x"
