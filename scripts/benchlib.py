"""What the benchmark scripts (``scripts/bench_*.py``) share: their command line, how a run is timed, and how a
result is printed next to the reference implementation's from the same run.

A script declares its options with :func:`parser` (the description is its docstring; the common flags ``--repeat``,
``--jobs``, ``--data``, ``--before`` are added with one keyword each, so they are spelled and documented alike in
every script), exposes that parser as ``arguments()`` (``tests/test_bench_scripts.py`` builds every script's parser
and parses the examples in its docstring without running it), and measures with:

- :func:`command`: one fresh process under ``/usr/bin/time``: its CPU (user + system), wall time and its own peak
  RSS, median over ``repeat`` runs;
- :class:`Tree`: CPU and wall time of the processes started inside a ``with`` block (``RUSAGE_CHILDREN``: the
  command and every worker it waited for) and the largest one's peak RSS;
- :class:`TreeRSS`: the peak of the summed RSS of a process and all its descendants, sampled from /proc (a pool of
  workers' memory together);
- :func:`best` / :func:`median`: repeated in-process timing of a function;
- :func:`ratio`: "ours / reference" as printed everywhere (``1.23x``).

The machine is usually shared: :func:`load` gives the load average to print beside the numbers.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
"""The checkout these scripts belong to."""
DATA = ROOT.parent / "shared" / "data"
"""The real data beside the checkout (``../shared/data``), the default of ``--data``."""

if str(ROOT) not in sys.path:  # run as ``python scripts/bench_x.py`` from a checkout without an installed package
    sys.path.insert(0, str(ROOT))


def parser(doc: str | None, *, repeat: int | None = None, jobs: int | None | bool = False, data: bool = False,
           before: bool = False, full_doc: bool = False) -> argparse.ArgumentParser:
    """The script's argument parser, with the common flags asked for.

    ``repeat``: ``--repeat`` with this default; ``jobs``: ``--jobs`` with this default (``None``: the command's own);
    ``data``: ``--data`` (default ``../shared/data``); ``before``: ``--before DIR``, another checkout measured in the
    same run. ``full_doc`` shows the whole docstring in ``--help`` (else its first paragraph)."""
    doc = doc or ""
    if full_doc:
        ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    else:
        ap = argparse.ArgumentParser(description=doc.strip().split("\n\n")[0])
    if repeat is not None:
        ap.add_argument("--repeat", type=int, default=repeat, help=f"runs of each case; the median (or best) is "
                        f"printed (default {repeat})")
    if jobs is not False:
        ap.add_argument("--jobs", type=int, default=jobs, help="worker processes" + (
            f" (default {jobs})" if jobs is not None else " (default: the command's own)"))
    if data:
        ap.add_argument("--data", type=Path, default=DATA, help=f"the shared data folder (default {DATA})")
    if before:
        ap.add_argument("--before", type=Path, help="another checkout of clir_eval to measure in the same run")
    return ap


def need(path: Path, what: str = "data") -> Path:
    """``path``, or exit with one line naming it (the scripts that need ``../shared/data``)."""
    if not path.exists():
        sys.exit(f"error: {path} not found ({what}); pass --data DIR")
    return path


def env(checkout: Path | str | None = ROOT) -> dict[str, str]:
    """This environment with ``checkout`` (default: this one) as the only PYTHONPATH entry (``None``: none)."""
    out = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if checkout is not None:
        out["PYTHONPATH"] = str(checkout)
    return out


def checkouts(before: Path | None) -> dict[str, Path]:
    """``{"this": ROOT}``, and ``"before"`` when ``--before`` was given."""
    return {"this": ROOT} | ({"before": before.resolve()} if before else {})


def clir_eval(*args: Any) -> list[str]:
    """The argv of ``clir-eval ARGS`` with this interpreter."""
    return [sys.executable, "-m", "clir_eval", *map(str, args)]


def load() -> str:
    """The 1, 5 and 15 minute load averages, e.g. ``"1.20 0.90 0.75"``."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def ratio(ours: float, ref: float) -> str:
    """``ours / ref`` as ``"1.23x"`` (``"inf"`` when the reference took no time)."""
    return f"{ours / ref:.2f}x" if ref else "inf"


@dataclass
class Measured:
    """One command's CPU seconds (user + system), wall seconds, peak RSS in MiB, output and exit code; from
    :func:`command` the medians over its runs, with the last run's output."""

    cpu: float
    wall: float
    rss: float
    stdout: str = ""
    stderr: str = ""
    returncode: int = 0
    runs: list[tuple[float, float, float]] = field(default_factory=list)


def command(argv: list[str], *, env: dict | None = None, cwd: Path | str | None = None, repeat: int = 1,
            check: bool = True, stdin: Any = None) -> Measured:
    """Run ``argv`` ``repeat`` times as a fresh process under GNU ``/usr/bin/time``: medians of CPU (user + system
    of the process and the children it waited for), wall and peak RSS (of the largest process; /usr/bin/time is a
    small parent, so it is the command's own). ``check``: exit with the command's last lines when it fails."""
    runs, p = [], None
    for _ in range(repeat):
        p = subprocess.run(["/usr/bin/time", "-f", "BENCHTIME %e %U %S %M", *map(str, argv)], env=env, cwd=cwd,
                           capture_output=True, text=True, stdin=stdin)
        head, _, tail = p.stderr.rpartition("BENCHTIME ")
        if check and p.returncode:
            sys.exit(f"{' '.join(map(str, argv[:4]))} ... failed ({p.returncode}): {head.strip()[-2000:]}")
        wall, user, system, kib = tail.split()[:4]
        runs.append((float(user) + float(system), float(wall), int(kib) / 1024))
        p.stderr = head
    cpu, wall, rss = (statistics.median(r[i] for r in runs) for i in range(3))
    return Measured(cpu, wall, rss, p.stdout, p.stderr, p.returncode, runs)


class TreeRSS:
    """Peak of the summed RSS of a process and all its descendants, sampled from /proc."""

    def __init__(self, pid: int, interval: float = 0.05):
        self.pid, self.interval, self.peak, self.peak_procs = pid, interval, 0, 0
        self.peak_one = 0  # the largest RSS of any one process of the tree
        self._stop = threading.Event()
        self._page = os.sysconf("SC_PAGE_SIZE")
        self._t = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()

    def _tree(self) -> list[int]:
        children: dict[int, list[int]] = {}
        for e in os.scandir("/proc"):
            if not e.name.isdigit():
                continue
            try:
                with open(f"/proc/{e.name}/stat", "rb") as fh:
                    stat = fh.read()
            except OSError:
                continue
            ppid = int(stat[stat.rfind(b")") + 2:].split()[1])
            children.setdefault(ppid, []).append(int(e.name))
        out, todo = [], [self.pid]
        while todo:
            p = todo.pop()
            out.append(p)
            todo.extend(children.get(p, ()))
        return out

    def _loop(self) -> None:
        while not self._stop.is_set():
            total, n = 0, 0
            for p in self._tree():
                try:
                    with open(f"/proc/{p}/statm") as fh:
                        rss = int(fh.read().split()[1]) * self._page
                    total += rss
                    n += 1
                    self.peak_one = max(self.peak_one, rss)
                except OSError:
                    pass
            if total > self.peak:
                self.peak, self.peak_procs = total, n
            self._stop.wait(self.interval)


class Tree:
    """CPU (user + system) and wall seconds of the child processes waited for inside the block, and the largest
    child's peak RSS in MiB so far (``RUSAGE_CHILDREN``: a maximum over every child this process ever had)::

        with Tree() as t:
            subprocess.run(...)
        print(t.cpu, t.wall, t.rss)
    """

    def __enter__(self) -> Tree:
        self._r = resource.getrusage(resource.RUSAGE_CHILDREN)
        self._t = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.perf_counter() - self._t
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu = (r.ru_utime - self._r.ru_utime) + (r.ru_stime - self._r.ru_stime)
        self.rss = r.ru_maxrss / 1024


def _times(fn: Callable[[], Any], repeat: int, clock: Callable[[], float]) -> tuple[list[float], Any]:
    times, out = [], None
    for _ in range(max(repeat, 1)):
        t = clock()
        out = fn()
        times.append(clock() - t)
    return times, out


def best(fn: Callable[[], Any], repeat: int, clock: Callable[[], float] = time.perf_counter) -> tuple[float, Any]:
    """(the shortest of ``repeat`` timings of ``fn()``, its last result)."""
    times, out = _times(fn, repeat, clock)
    return min(times), out


def median(fn: Callable[[], Any], repeat: int, clock: Callable[[], float] = time.perf_counter) -> tuple[float, Any]:
    """(the median of ``repeat`` timings of ``fn()``, its last result)."""
    times, out = _times(fn, repeat, clock)
    return statistics.median(times), out


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """(``fn()``, CPU seconds of this process, wall seconds) of one call."""
    c, w = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c, time.perf_counter() - w


def peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    """This process's (or its largest child's) peak RSS so far, in MiB."""
    return resource.getrusage(who).ru_maxrss / 1024
