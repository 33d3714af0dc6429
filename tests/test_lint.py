"""The code passes the linter configured in pyproject.toml ([tool.ruff]: pyflakes, pycodestyle errors and
warnings, import order). ruff comes with the test extra; the check is skipped only where it is not installed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff not installed (pip install -e '.[test]')")
def test_ruff_passes_on_the_package_tests_and_scripts():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "clir_eval", "tests", "scripts"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_lint_configuration_checks_import_order():
    """The rules this test relies on are the ones configured: a config edit that drops them fails here."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]
    assert conf["line-length"] == 120
    assert {"E", "W", "F", "I"} <= set(conf["lint"]["select"])
