"""The documentation site: it builds with ``mkdocs build --strict`` (broken links, missing nav pages
fail), its generated reference pages are current, and it speaks to users, not to developers."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
                    reason="mkdocs and mkdocs-material are not installed (pip install -e '.[test]')")
def test_mkdocs_build_strict(tmp_path):
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def test_generated_reference_pages_are_current():
    """docs/reference/cli.md and config.md come from the typer app and the config models."""
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "COLUMNS": "80"})
    assert r.returncode == 0, r.stderr


def test_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert [p for p in pages if p not in nav] == []


def test_user_docs_carry_no_development_vocabulary():
    bad = re.compile(r"\bissue \d+|\bissue's\b|\bthe issue\b|\bsession\b|\bitem \d+ of\b", re.I)
    for path in [ROOT / "README.md", *DOCS.rglob("*.md")]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            assert not bad.search(line), f"{path.relative_to(ROOT)}:{n}: {line.strip()}"


def test_script_help_and_config_comments_carry_no_development_vocabulary():
    """A script's docstring is its --help (argparse description=__doc__); config comments are read by users too."""
    import ast

    bad = re.compile(r"\bissues? \d+|\bitem \d+ of\b", re.I)
    texts = [(p, ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) or "") for p in (ROOT / "scripts").glob("*.py")]
    texts += [(p, p.read_text(encoding="utf-8")) for p in (ROOT / "configs").rglob("*") if p.suffix in (".yaml", ".sh")]
    assert len(texts) > 10
    for path, text in texts:
        for line in text.splitlines():
            assert not bad.search(line), f"{path.relative_to(ROOT)}: {line.strip()}"


def test_readme_is_short_and_links_only_to_existing_pages():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.encode()) <= 12 * 1024
    for target in re.findall(r"\]\(((?:docs/)[^)#]+)", text):
        assert (ROOT / target).exists(), f"README.md links to a missing {target}"
