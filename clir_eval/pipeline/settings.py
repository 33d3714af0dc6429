"""The run's own settings, declared once: the config's top-level ``seed``, ``jobs``, ``executor`` and
``shard_docs`` (the config record holds them flat, declared as these fields)."""

from __future__ import annotations

from dataclasses import dataclass

from ..limits import MAX_JOBS, MAX_SEED, RUN_SEED
from ..settings import Settings, setting

# The executors by name: "module:Class", imported on first use (pipeline/executor.py:get_executor).
EXECUTORS: dict[str, str] = {
    "serial": "clir_eval.pipeline.executor:SerialExecutor",
    "local": "clir_eval.pipeline.executor:LocalExecutor",
    "ray": "clir_eval.pipeline.executor_ray:RayExecutor",
}

SHARD_DOCS = 500_000


@dataclass(frozen=True)
class RunSettings(Settings):
    """How a run is seeded and spread over processes."""

    seed: int = setting(RUN_SEED, "Random seed of every seeded step (correlation.seed defaults to it).", ge=0, le=MAX_SEED)
    jobs: int | None = setting(None, "Worker processes (default: one per CPU core when the run's estimated work is at "
                               "least ten times their start-up, else none; fewer when memory is short).",
                               ge=1, le=MAX_JOBS)
    executor: str = setting("local", "How systems run: serial, local (a process pool) or ray; never changes a "
                                     "result.", choices=tuple(EXECUTORS), label="executor")
    shard_docs: int = setting(SHARD_DOCS, "Collections with more lines are indexed in spans of this many lines; "
                                          "never changes a result.", ge=1)
