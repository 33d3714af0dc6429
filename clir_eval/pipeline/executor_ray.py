"""The Ray executor: stage tasks as Ray tasks on an existing cluster or a local one (extra ``clir-eval[ray]``)."""

from __future__ import annotations

import logging
import os
from typing import Any, Callable, Sequence

from .. import lazylibs
from ..errors import UserError
from .executor import WorkerLost

SHARED_STORAGE = (
    "every Ray node must see the inputs and --out at the same path (a shared filesystem); "
    "see docs/running.md 'Running on a Ray cluster'"
)


def _call(fn: Callable[[Any], Any], task: Any, driver_node: str) -> Any:
    """Run one task in a Ray worker; a file missing on another node than the driver's names
    that node and the shared-storage rule."""
    try:
        return fn(task)
    except (FileNotFoundError, UserError) as e:
        node = lazylibs.ray().util.get_node_ip_address()
        missing = isinstance(e, FileNotFoundError) or "not found" in str(e)
        if not missing or node == driver_node:
            raise
        what = f"{e.filename}: not found" if isinstance(e, FileNotFoundError) and e.filename else str(e)
        raise UserError(f"{what} on Ray node {node}; {SHARED_STORAGE}") from None


def memory_of(task: Any) -> int:
    """Bytes a task declares it needs (``task.memory``, 0 when it declares none); Ray runs a
    task only on a node with that much unreserved memory (capped at the largest node's)."""
    return int(getattr(task, "memory", 0) or 0)


class RayExecutor:
    """Runs each task as a Ray task (1 CPU, plus the memory it declares) on the cluster at
    ``address`` (else ``$RAY_ADDRESS``), or on a local cluster of ``jobs`` CPUs started here.
    A task whose worker dies is retried once (stages are idempotent), then :class:`WorkerLost`."""

    def __init__(self, jobs: int = 1, address: str | None = None):
        try:
            ray = lazylibs.ray()
        except ImportError:
            raise UserError("executor 'ray' needs Ray: pip install 'clir-eval[ray]'") from None
        self._ray = ray
        self.jobs = max(1, int(jobs))
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self._owned = not ray.is_initialized()
        if self._owned:
            options: dict[str, Any] = {"address": self.address or "local", "log_to_driver": False,
                                       "logging_level": logging.WARNING, "include_dashboard": False}  # fmt: skip
            if self.address is None:
                options["num_cpus"] = self.jobs
            try:
                ray.init(**options)
            except (ConnectionError, ValueError, RuntimeError) as e:
                raise UserError(f"cannot start or join Ray at {self.address or 'a local cluster'}: {e}") from None
        self._remote = ray.remote(_call)

    def map(self, fn: Callable[[Any], Any], tasks: Sequence[Any], on_done: Callable[[int], None] | None = None) -> list:
        """``[fn(t) for t in tasks]`` in task order; the lowest-indexed failure is raised."""
        ray = self._ray
        node = ray.util.get_node_ip_address()
        largest = max((int(n["Resources"].get("memory", 0)) for n in ray.nodes() if n.get("Alive")), default=0)
        refs = [self._remote.options(num_cpus=1, memory=min(memory_of(t), largest) or None, max_retries=1)
                .remote(fn, t, node) for t in tasks]  # fmt: skip
        index = {r: i for i, r in enumerate(refs)}
        results: list[Any] = [None] * len(tasks)
        pending = list(refs)
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for r in done:
                    results[index[r]] = self._get(r, index[r])
                    if on_done:
                        on_done(index[r])
        except BaseException:
            for r in pending:
                ray.cancel(r, force=True)
            raise
        return results

    def _get(self, ref, i: int) -> Any:
        """A task's result, or its own exception (a lost worker as :class:`WorkerLost`)."""
        exc = self._ray.exceptions
        try:
            return self._ray.get(ref)
        except exc.RayTaskError as e:
            if isinstance(e.cause, BaseException):
                raise e.cause from None
            raise
        except (exc.WorkerCrashedError, exc.NodeDiedError, exc.ObjectLostError, exc.OutOfMemoryError):
            raise WorkerLost((i,)) from None

    def close(self) -> None:
        if self._owned and self._ray.is_initialized():
            self._ray.shutdown()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
