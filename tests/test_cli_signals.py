"""Ctrl-C and SIGTERM in the middle of a run: one line ``error: ...``, nothing else on stderr (no
worker tracebacks, no "leaked semaphore" warning), exit 130 / 143. The command runs as a real
process with default signal handling, in its own process group (as a terminal's foreground job,
which Ctrl-C signals as a whole)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _default_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _interrupted(tmp_path, send) -> tuple[int, str, str]:
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "clir_eval", "demo", "--out", str(out), "--jobs", "2", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            preexec_fn=_default_signals, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        # the run is under way once a stage has written into the cache (worker processes started)
        while not any((out / "cache").glob("*/*")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.5)
        send(proc)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    return proc.returncode, stdout, stderr


def test_ctrl_c_prints_one_error_line(tmp_path):
    code, stdout, stderr = _interrupted(tmp_path, lambda p: os.killpg(p.pid, signal.SIGINT))
    assert (code, stderr) == (130, "error: interrupted\n"), stderr
    assert stdout == ""


def test_sigterm_prints_one_error_line(tmp_path):
    code, stdout, stderr = _interrupted(tmp_path, lambda p: p.send_signal(signal.SIGTERM))
    assert (code, stderr) == (143, "error: terminated\n"), stderr
    assert stdout == ""
