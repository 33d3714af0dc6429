"""Shared test fixtures: the location of ../shared/data (override with CLIR_EVAL_DATA)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("CLIR_EVAL_DATA", PROJECT_ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of the shared real data; skips the test when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA} (set CLIR_EVAL_DATA to its location)")
    return SHARED_DATA


@pytest.fixture
def cli(capsys):
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""
    from clir_eval.cli import main

    def run(*args: str):
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def assert_one_line_error(code: int, err: str, expect: str) -> str:
    """A failed command's stderr is exactly one line ``error: ...`` matching ``expect`` (exit 2, no
    traceback); returns that line."""
    assert "Traceback" not in err
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert re.search(expect, lines[0]), lines[0]
    return lines[0]
