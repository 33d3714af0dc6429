"""The commands the documentation shows on the demo's data run as written: every ``clir-eval``
line of a ``bash`` block in docs/ that needs only ``demo-out/`` (read from the pages themselves,
in page order, after the demo they refer to). Commands on ../shared/data are run by the tests of
those experiments; Ray runs by tests/test_executor_ray.py."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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
    for page, cmd in cmds:
        code, out, err = cli(*shlex.split(cmd, comments=True)[1:])
        assert code == 0, f"docs/{page}: {cmd}\n{err}"
