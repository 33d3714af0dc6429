"""The commands the documentation shows on the demo's data run as written: every ``clir-eval``
line of a ``bash`` block in docs/ that needs only ``demo-out/`` (read from the pages themselves,
in page order, after the demo they refer to). Commands on ../shared/data are run by the tests of
those experiments; Ray runs by tests/test_executor_ray.py."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# where getting-started.md quotes the demo report's summary (scripts/docs_screenshot.py writes it)
QUOTE = (r"the \*\*summary\*\* gives\s+the answer at each level and where they disagree, one short line each:\n\n"
         r"```text\n(.*?)```")
PAGES = ["getting-started.md", "tools.md", "tutorials/score-tables.md", "running.md", "reference/outputs.md"]


def demo_commands() -> list[tuple[str, str]]:
    out = []
    for page in PAGES:
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        for block in re.findall(r"```bash\n(.*?)```", text, re.S):
            for line in block.splitlines():
                cmd = line.strip()
                if (cmd.startswith("clir-eval ") and "demo-out/" in cmd and "../shared" not in cmd
                        and "configs/" not in cmd and "--executor ray" not in cmd):
                    out.append((page, cmd))
    return out


def test_documented_demo_commands_run(cli, tmp_path, monkeypatch):
    cmds = demo_commands()
    assert len(cmds) >= 10, cmds
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLIR_EVAL_CACHE", raising=False)
    code, _, err = cli("demo", "--out", "demo-out", "--quiet")
    assert code == 0, err
    # the summary line getting-started.md quotes is the demo report's
    quoted = re.search(QUOTE, (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8"), re.S)
    md = (tmp_path / "demo-out" / "report.md").read_text(encoding="utf-8")
    summary = next(p for p in md.split("\n\n") if p.startswith("- **System level**")).replace("**", "")
    assert quoted and " ".join(quoted.group(1).split()) == " ".join(summary.split()), summary
    for page, cmd in cmds:
        code, out, err = cli(*shlex.split(cmd, comments=True)[1:])
        assert code == 0, f"docs/{page}: {cmd}\n{err}"
    # docs/item-level.md builds a (system, document) table from demo-out/item_documents.json and correlates it
    # with --item-col: the script runs as written and its item-grouping τ are the run's item-level τ over documents
    block = next(b for b in re.findall(r"```bash\n(.*?)```", (ROOT / "docs" / "item-level.md").read_text(encoding="utf-8"),
                                       re.S) if "items.tsv" in b)
    script, cmd = block.split("\nEOF\n")
    subprocess.run([sys.executable, "-"], input=script.split("<<'EOF'\n", 1)[1], text=True, check=True, cwd=tmp_path)
    code, out, err = cli(*shlex.split(cmd.strip())[1:])
    assert code == 0, err
    got = {r["x"]: r["tau"] for r in json.loads(out)["correlations"] if r["grouping"] == "item"}
    run = json.loads((tmp_path / "demo-out" / "results.json").read_text())["item_level"]["correlations"]
    want = {r["mt_metric"]: r["tau"] for r in run if r["items"] == "documents" and r["grouping"] == "item"}
    assert set(got) == {"chrf1", "bleu"} and all(abs(got[m] - want[m]) < 1e-9 for m in got), (got, want)
