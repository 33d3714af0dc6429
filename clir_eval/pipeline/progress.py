"""Progress on stderr: one rich row per stage (done/total, elapsed, ETA, the systems in flight),
or nothing when quiet or not a terminal."""

from __future__ import annotations

import sys
from typing import Any, Callable, Sequence

from .. import lazylibs


def eta_text(completed: float, total: float | None, elapsed: float | None, remaining: float | None,
             estimate: float | None) -> str:
    """The ETA cell: ``done`` when finished; rich's estimate from the finished tasks' pace; before
    the first task finishes, the a-priori estimate (``~m:ss est.``) when there is one; else ``-:--``."""
    if total is not None and completed >= total:
        return "done"
    if completed > 0 and remaining is not None:
        return "ETA " + _clock(remaining)
    if estimate is not None:
        return "~" + _clock(max(0.0, estimate - (elapsed or 0.0))) + " est."
    return "ETA -:--"


def _clock(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def in_flight(names: Sequence[str], done: Sequence[bool], jobs: int, limit: int = 3) -> str:
    """The tasks running now when ``jobs`` workers take the tasks in order (the local pool and the
    serial executor do): the first ``jobs`` unfinished ones; at most ``limit`` names shown."""
    running = [n for n, d in zip(names, done) if not d][:max(1, jobs)]
    more = len(running) - limit
    return ", ".join(running[:limit]) + (f" +{more}" if more > 0 else "")


class Stage:
    """The ``on_done`` callback of one stage: ``stage(i)`` marks task ``i`` finished (``stage()``
    the first unfinished one) and shows the tasks in flight next to the bar."""

    def __init__(self, progress: Any, tid: Any, names: Sequence[str], jobs: int):
        self._p, self._tid, self.names, self.jobs = progress, tid, list(names), jobs
        self.done = [False] * len(self.names)

    def __call__(self, i: int | None = None) -> None:
        if self.names:
            if i is None or not 0 <= i < len(self.done) or self.done[i]:
                i = self.done.index(False) if False in self.done else None
            if i is not None:
                self.done[i] = True
        self._p.update(self._tid, advance=1, now=in_flight(self.names, self.done, self.jobs) if self.names else "")

    def _task(self):
        return next(t for t in self._p.tasks if t.id == self._tid)

    def extend(self, n: int) -> None:
        """``n`` more tasks in this stage (a stage whose work comes in rounds)."""
        self._p.update(self._tid, total=(self._task().total or 0) + n)

    def finish(self) -> None:
        self._p.update(self._tid, completed=self._task().total, now="")


class Progress:
    """A rich progress display; :meth:`stage` (or :meth:`bar`) gives the ``on_done`` callback of one stage."""

    def __init__(self, quiet: bool, console: Any = None):
        self.enabled = not quiet and (console is not None or sys.stderr.isatty())
        self._console = console
        self._p = None

    def __enter__(self):
        if self.enabled:
            rp, Console, Text = lazylibs.rich_progress(), lazylibs.rich_console().Console, lazylibs.rich_text().Text
            BarColumn, MofNCompleteColumn, RichProgress = rp.BarColumn, rp.MofNCompleteColumn, rp.Progress
            ProgressColumn, TextColumn, TimeElapsedColumn = rp.ProgressColumn, rp.TextColumn, rp.TimeElapsedColumn

            class Eta(ProgressColumn):
                def render(self, task) -> Text:
                    return Text(eta_text(task.completed, task.total, task.elapsed, task.time_remaining,
                                         task.fields.get("estimate")), style="progress.remaining")

            self._p = RichProgress(
                TextColumn("{task.description:<24}"), BarColumn(bar_width=24), MofNCompleteColumn(),
                TimeElapsedColumn(), Eta(), TextColumn("{task.fields[now]}", style="cyan"),
                console=self._console or Console(stderr=True), transient=False,
            )
            self._p.__enter__()
        return self

    def __exit__(self, *exc):
        if self._p is not None:
            self._p.__exit__(*exc)

    def stage(self, label: str, names: Sequence[str] | int, jobs: int = 1,
              estimate: float | None = None, detail: str = "") -> Stage | None:
        """A row for a stage of ``names`` tasks (or a count) run ``jobs`` at a time; ``estimate``:
        seconds expected, shown until the first task finishes; ``detail``: text beside a stage
        without names."""
        if self._p is None:
            return None
        total = names if isinstance(names, int) else len(names)
        names = [] if isinstance(names, int) else list(names)
        tid = self._p.add_task(label, total=total, estimate=estimate,
                               now=in_flight(names, [False] * len(names), jobs) if names else detail)
        return Stage(self._p, tid, names, jobs)

    def bar(self, label: str, total: int) -> Callable[..., None] | None:
        if self._p is None:
            return None
        return self.stage(label, total)

    def note(self, text: str) -> None:
        """A line above the bars (stderr), shown only with the bars."""
        if self._p is not None:
            self._p.console.print(text, highlight=False)
