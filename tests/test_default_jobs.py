"""The default worker count (no --jobs, no jobs: in the config): workers start only where the run's estimated work
pays for their start-up."""

from __future__ import annotations

from types import SimpleNamespace

from clir_eval.pipeline.executor import LocalExecutor
from clir_eval.pipeline.run import PAYING_WORK, RETRIEVE_BYTES_PER_CPU, WORKER_START_CPU, _default_jobs


def test_the_default_worker_count_starts_workers_only_where_the_work_pays_for_them(tmp_path):
    """No --jobs: a run whose systems' estimated work is small (the demo) is serial; a large one keeps the workers."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "d1", "text": "a small collection"}\n' * 100)
    tasks = [SimpleNamespace(retrieve=SimpleNamespace(docs=str(docs), memory=1)) for _ in range(4)]
    cost = PAYING_WORK * WORKER_START_CPU * 2  # two workers' start-up, times the margin
    for mt_cpu, jobs in ((0.0, 1), (cost - 1.0, 1), (cost, 2)):
        ex = LocalExecutor(2)
        _default_jobs(ex, tasks, mt_cpu)
        assert ex.jobs == jobs, (mt_cpu, ex.jobs)
    big = tmp_path / "big.jsonl"  # retrieval work counts too: text enough for the workers to pay
    big.write_text("x" * int(cost * RETRIEVE_BYTES_PER_CPU / 4 + 1000))
    ex = LocalExecutor(2)
    _default_jobs(ex, [SimpleNamespace(retrieve=SimpleNamespace(docs=str(big), memory=1)) for _ in range(4)], 0.0)
    assert ex.jobs == 2
    ex = LocalExecutor(2)  # an index already built (memory 0: nothing to index) is not work
    _default_jobs(ex, [SimpleNamespace(retrieve=SimpleNamespace(docs=str(big), memory=0)) for _ in range(4)], 0.0)
    assert ex.jobs == 1
