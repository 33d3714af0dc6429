"""Progress rows (stage, done/total, ETA, systems in flight), silent when quiet or not a terminal;
the executors report which task finished; the warning before a slow MT metric."""

from __future__ import annotations

import gzip
import io

import pytest
from rich.console import Console

from clir_eval.mt.rates import CPU_PER_1000_LINES, count_lines, rate, slow_metric_warnings
from clir_eval.pipeline.executor import LocalExecutor, SerialExecutor
from clir_eval.pipeline.progress import Progress, eta_text, in_flight


def test_eta_text():
    assert eta_text(3, 3, 10.0, None, None) == "done"
    assert eta_text(1, 4, 10.0, 30.0, 99.0) == "ETA 0:30"  # pace of the finished tasks wins over the estimate
    assert eta_text(0, 4, 10.0, None, 70.0) == "~1:00 est."
    assert eta_text(0, 4, 80.0, None, 70.0) == "~0:00 est."
    assert eta_text(0, 4, 1.0, None, None) == "ETA -:--"
    assert eta_text(1, 2, 1.0, 4000.0, None) == "ETA 1:06:40"


def test_in_flight_names_the_first_unfinished_tasks_per_worker():
    names = ["a", "b", "c", "d", "e"]
    assert in_flight(names, [False] * 5, 2) == "a, b"
    assert in_flight(names, [True, False, True, False, False], 2) == "b, d"
    assert in_flight(names, [False] * 5, 5, limit=3) == "a, b, c +2"
    assert in_flight(names, [True] * 5, 2) == ""


def _square(x: int) -> int:
    return x * x


def test_stage_rows_show_label_counts_names_and_finish():
    buf = io.StringIO()
    with Progress(False, console=Console(file=buf, force_terminal=True, width=160)) as p:
        stage = p.stage("systems: MT + BM25", ["sysA", "sysB", "sysC"], jobs=1, estimate=12.0)
        assert SerialExecutor().map(_square, [1, 2, 3], stage) == [1, 4, 9]
        assert stage.done == [True, True, True]
        other = p.stage("correlations", 1, detail="4 MT metrics x 7 targets")
        other(0)
        rounds = p.stage("  resampling blocks", 0, jobs=2)
        for n in (3, 2):  # work that comes in rounds: one row, its total grows
            rounds.extend(n)
            SerialExecutor().map(_square, list(range(n)), rounds)
        assert rounds._task().total == rounds._task().completed == 5
    out = buf.getvalue()
    assert "systems: MT + BM25" in out and "3/3" in out and "done" in out
    assert "sysA" in out and "4 MT metrics x 7 targets" in out


def test_silent_when_quiet_or_not_a_terminal(capsys):
    with Progress(True) as p:
        assert p.stage("x", ["a"]) is None and p.bar("x", 1) is None
    with Progress(False) as p:  # pytest's stderr is not a terminal
        assert p.stage("x", ["a"]) is None
    assert capsys.readouterr().err == ""


def test_executors_report_the_index_of_each_finished_task():
    seen: list[int] = []
    assert SerialExecutor().map(_square, [3, 4], seen.append) == [9, 16]
    assert seen == [0, 1]
    seen.clear()
    with LocalExecutor(2) as ex:
        assert ex.map(_square, [1, 2, 3], seen.append) == [1, 4, 9]
    assert sorted(seen) == [0, 1, 2]


def test_slow_metric_warning_states_the_measured_rate():
    from clir_eval.mt.rates import TER_SEGMENTS_PER_CPU_S

    ter = rate("ter")
    assert ter == 1000 / TER_SEGMENTS_PER_CPU_S and "ter" not in CPU_PER_1000_LINES  # one home for TER's rate
    lines = int(2 * 60 / ter * 1000)  # about two minutes of TER CPU in all
    (w,) = slow_metric_warnings({"ter": [lines // 2, lines - lines // 2], "bleu": [lines] * 2}, jobs=2)
    assert w.startswith("ter is slow") and f"{ter:.2f} CPU-s per 1000 lines" in w and "2 worker(s)" in w
    assert "scripts/bench_ter.py" in w
    assert slow_metric_warnings({"ter": [1000]}, jobs=1) == []  # small set: no warning
    assert slow_metric_warnings({"bleu": [10**7]}, jobs=1) == []  # a fast metric never warns


def test_count_lines(tmp_path):
    (tmp_path / "a.txt").write_text("x\ny\nz")
    with gzip.open(tmp_path / "b.txt.gz", "wt") as fh:
        fh.write("x\n" * 5)
    (tmp_path / "c.txt").write_text("")
    assert [count_lines(tmp_path / n) for n in ("a.txt", "b.txt.gz", "c.txt")] == [3, 5, 0]


def test_run_warns_before_a_slow_metric_on_systems_not_yet_scored(tmp_path, monkeypatch):
    import clir_eval.mt.rates as rates
    from clir_eval.mt.settings import MTSettings
    from clir_eval.pipeline.cache import Cache
    from clir_eval.pipeline.run import mt_plan
    from clir_eval.pipeline.tasks import MTTask, SystemTask

    for n in ("h1", "h2", "ref"):
        (tmp_path / f"{n}.txt").write_text("a b c\n" * 100)
    mt = MTSettings(refs=(str(tmp_path / "ref.txt"),), metrics=("bleu", "ter"))
    tasks = [SystemTask(s, mt=MTTask(system=s, hyp=str(tmp_path / f"{s}.txt"), mt=mt)) for s in ("h1", "h2")]
    monkeypatch.setattr(rates, "WARN_CPU", 0.5)  # 200 lines of TER: ~0.8 CPU-s
    logged: list[str] = []
    cpu = mt_plan(tasks, Cache(tmp_path / "cache"), 2, logged.append)
    assert cpu == pytest.approx((rates.rate("ter") + rates.rate("bleu")) * 200 / 1000)
    assert len(logged) == 1 and logged[0].startswith("ter is slow") and "200 lines" in logged[0]
    assert mt_plan(tasks, Cache(tmp_path / "cache"), 2, None) == cpu  # quiet: estimate, no warning
