"""Executors: map a stage function over tasks, results in task order (serial, local pool, plug-ins).

The interface is one method::

    class Executor(Protocol):
        def map(self, fn, tasks, on_done=None) -> list: ...

``fn`` is a module-level function (or a ``functools.partial`` of one) taking one task and
returning a JSON-able result; tasks are frozen dataclasses (picklable). ``map`` returns
``[fn(t) for t in tasks]`` in task order whatever order they finish in, calls
``on_done(i)`` once per finished task with its index (progress bars), and raises a failed task's own
exception (the lowest index among those failed when the failure is seen). A worker that
dies (killed, out of memory) raises :class:`WorkerLost` with the indices of the tasks that
were running. Executors are context managers; ``close()`` releases workers.

Executors are chosen by name (``run --executor NAME``; default ``local``):
:func:`get_executor` looks the name up in :data:`EXECUTORS` (pipeline/settings.py, beside the
setting that names one), whose values are
``"module:Class"`` strings imported on first use (so an optional engine such as Ray costs
nothing unless chosen). A new engine is one class with ``__init__(self, jobs: int)``,
``map``, ``close`` and one line in :data:`EXECUTORS`. Results must not depend on the
executor: stages are deterministic and write their own cache entries atomically.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import os
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.context import SpawnContext, SpawnProcess
from types import ModuleType
from typing import Any, Callable, Protocol, Sequence

from ..errors import UserError
from .settings import EXECUTORS


class WorkerLost(Exception):
    """A worker process died (killed, out of memory) while it ran one of ``indices``."""

    def __init__(self, indices: tuple[int, ...]):
        super().__init__(f"a worker process died while running task(s) {', '.join(map(str, indices))}")
        self.indices = indices


class Executor(Protocol):
    def map(self, fn: Callable[[Any], Any], tasks: Sequence[Any], on_done: Callable[[int], None] | None = None) -> list: ...

    def close(self) -> None: ...


class _Base:
    def __init__(self, jobs: int = 1):
        self.jobs = max(1, int(jobs))

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class SerialExecutor(_Base):
    """Runs every task in this process, one after another."""

    def map(self, fn, tasks, on_done=None) -> list:
        out = []
        for i, t in enumerate(tasks):
            out.append(fn(t))
            if on_done:
                on_done(i)
        return out


@contextlib.contextmanager
def _main_hidden():
    """While a worker is spawned, ``__main__`` is an empty module: the new interpreter then does not
    run the caller's script (or ``python -m`` module) again as ``__mp_main__``, which spawn does by
    default and which re-runs a script that calls ``clir_eval.run`` without an ``if __name__ ==
    "__main__"`` guard. Workers never need the script: every task function is a clir_eval module's."""
    real = sys.modules.get("__main__")
    if real is None or (getattr(real, "__file__", None) is None and getattr(real, "__spec__", None) is None):
        yield  # python -c, an interactive session: nothing is re-run
        return
    sys.modules["__main__"] = ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = real


class _WorkerProcess(SpawnProcess):
    @staticmethod
    def _Popen(process_obj):
        with _main_hidden():
            return SpawnProcess._Popen(process_obj)


class _WorkerContext(SpawnContext):
    """The spawn start method (safe beside threads, the same on every platform) without re-running
    the main script in each worker; a plain script needs no ``__main__`` guard."""

    Process = _WorkerProcess


class LocalExecutor(_Base):
    """A pool of ``jobs`` spawned worker processes on this machine (serial for one job or task).

    At most ``jobs`` tasks are in flight, so a dead worker is narrowed to the tasks running.
    The workers are started by the first ``map`` that needs them and kept for the next ones
    until ``close()`` (a run's stages share them: each worker starts and imports once); a
    failed ``map`` shuts them down. Workers that exit before any of them has started (their own
    error printed above) raise a :class:`UserError` saying so, not :class:`WorkerLost`."""

    def __init__(self, jobs: int = 1):
        super().__init__(jobs)
        self._pool: ProcessPoolExecutor | None = None
        self._workers = 0
        self._started: Any = None

    def _get_pool(self, workers: int) -> ProcessPoolExecutor:
        if self._pool is None or self._workers < workers:
            self.close()
            ctx = _WorkerContext()
            self._started = ctx.Value("i", 0)
            self._pool = ProcessPoolExecutor(
                max_workers=workers, mp_context=ctx, initializer=_die_with_parent,
                initargs=(os.getpid(), threading.current_thread() is threading.main_thread(), self._started),
            )
            self._workers = workers
        return self._pool

    def _none_started(self) -> bool:
        return self._started is not None and self._started.value == 0

    def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.shutdown(wait=True, cancel_futures=True)

    def map(self, fn, tasks, on_done=None) -> list:
        if self.jobs <= 1 or len(tasks) <= 1:
            return SerialExecutor().map(fn, tasks, on_done)
        workers = min(self.jobs, len(tasks))
        results: list[Any] = [None] * len(tasks)
        todo = iter(enumerate(tasks))
        inflight: dict[Future, int] = {}
        ex = self._get_pool(workers)
        try:
            _fill(ex, fn, todo, inflight, _in_flight(workers))
            while inflight:
                done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                _raise_first_failure(done, inflight)
                for f in sorted(done, key=inflight.__getitem__):
                    i = inflight.pop(f)
                    results[i] = f.result()
                    if on_done:
                        on_done(i)
                _fill(ex, fn, todo, inflight, _in_flight(workers))
        except BaseException as e:
            for f in inflight:
                f.cancel()
            none_started = isinstance(e, WorkerLost) and self._none_started()
            self.close()
            if none_started:
                raise UserError(
                    "worker processes could not start: each exited while starting, before running a task (its own "
                    "error is printed above); jobs=1 (--jobs 1) runs every task in this process"
                ) from None
            raise
        return results


def _die_with_parent(parent: int, pdeathsig: bool, started: Any = None) -> None:
    """Worker initializer: exit when the main process is gone (even after kill -9), at once
    on Linux (PR_SET_PDEATHSIG; only when the pool was made by the main thread, whose exit
    is the process's), else within a second (a thread watching the parent pid). Ctrl-C reaches
    the whole process group: a worker leaves at once and quietly, the main process reports it.
    ``started`` counts the workers that got this far."""
    if started is not None:
        with started.get_lock():
            started.value += 1
    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGINT, _leave)
    if pdeathsig and sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="watch-parent").start()


def _leave(signum, frame) -> None:
    os._exit(128 + signum)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def _fill(ex: ProcessPoolExecutor, fn, todo, inflight: dict, workers: int) -> None:
    while len(inflight) < workers:
        nxt = next(todo, None)
        if nxt is None:
            return
        try:
            inflight[ex.submit(fn, nxt[1])] = nxt[0]
        except BrokenProcessPool:
            raise WorkerLost(tuple(sorted(inflight.values()))) from None


def _raise_first_failure(done, inflight: dict) -> None:
    failed = sorted((inflight[f], f.exception()) for f in done if f.exception() is not None)
    if not failed:
        return
    if any(isinstance(e, BrokenProcessPool) for _, e in failed):
        raise WorkerLost(tuple(sorted(inflight.values()))) from None
    raise failed[0][1]


def runs_elsewhere(ex: Executor | None) -> bool:
    """Whether ``ex`` runs tasks outside this process (worker processes, a cluster): only then
    does spreading work over it, or running a stage beside this process's own work, pay."""
    return ex is not None and not isinstance(ex, SerialExecutor) and not (isinstance(ex, LocalExecutor) and ex.jobs <= 1)


_BESIDE = threading.local()  # in a Beside's thread: .beside, that Beside


def _in_flight(workers: int) -> int:
    """How many tasks a map keeps in flight: one fewer than its workers when it runs in a
    :class:`Beside` thread while the caller computes (the caller's process needs that core)."""
    b = getattr(_BESIDE, "beside", None)
    return workers - 1 if workers > 1 and b is not None and b.caller_busy else workers


class Beside:
    """``fn()`` run in a thread of this process, beside the caller's own work: for a stage whose
    tasks run in the executor's workers while this process computes something else (the thread
    mostly waits for the workers). Its maps keep one worker fewer busy until the caller waits in
    :meth:`result`, which returns ``fn``'s value or raises its exception. ``lock`` is taken here
    and held until ``fn`` returns: the caller takes it around any ``map`` of its own meanwhile, so
    two maps never run at once on one executor."""

    def __init__(self, fn: Callable[[], Any], started: float | None = None):
        self.lock = threading.Lock()
        self.lock.acquire()  # before the caller's next map
        self.caller_busy = True
        self.seconds = 0.0  # from ``started`` (a ``time.perf_counter()``; default: now) to fn's return
        self._started = time.perf_counter() if started is None else started
        self._out: tuple[bool, Any] | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True, name="beside")
        self._thread.start()

    def _run(self, fn: Callable[[], Any]) -> None:
        _BESIDE.beside = self
        try:
            self._out = (True, fn())
        except BaseException as e:  # handed to the caller by result()
            self._out = (False, e)
        finally:
            self.seconds = time.perf_counter() - self._started
            self.lock.release()

    def raise_if_failed(self) -> None:
        """Raise ``fn``'s exception now if it has already failed (else go on)."""
        if self._out is not None and not self._out[0]:
            self.result()

    def result(self) -> Any:
        self.caller_busy = False  # the caller waits from now: the maps may use every worker
        self._thread.join()
        assert self._out is not None
        ok, value = self._out
        if not ok:
            raise value
        return value


def get_executor(name: str = "local", jobs: int = 1) -> Executor:
    """The executor registered as ``name`` with ``jobs`` workers."""
    spec = EXECUTORS.get(name)
    if spec is None:
        raise UserError(f"unknown executor {name!r}; choose one of {', '.join(EXECUTORS)}")
    module, _, cls = spec.partition(":")
    return getattr(importlib.import_module(module), cls)(jobs)
