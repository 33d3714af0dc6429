"""Beside: a stage whose tasks run in the workers while this process computes something else."""

from __future__ import annotations

import threading
import time

import pytest

from clir_eval.errors import UserError
from clir_eval.pipeline.executor import _BESIDE, Beside, LocalExecutor, _in_flight


def test_result_is_the_functions_value_or_its_exception():
    assert Beside(lambda: 41 + 1).result() == 42

    def fail():
        raise UserError("items: bad input")

    b = Beside(fail)
    b._thread.join()
    with pytest.raises(UserError, match="items: bad input"):
        b.raise_if_failed()  # the caller learns of it at its next check
    with pytest.raises(UserError, match="items: bad input"):
        b.result()
    assert not b.lock.locked()
    ok = Beside(lambda: 1, started=0.0)
    ok.raise_if_failed()  # nothing to raise (done or not)
    assert ok.result() == 1 and ok.seconds > 1.0  # counted from the stage's own start


def test_lock_is_held_until_the_function_returns():
    go = threading.Event()
    b = Beside(lambda: go.wait(5) and "done")
    assert b.lock.locked()  # the caller's own maps wait for it
    time.sleep(0.05)
    assert b.lock.locked()
    go.set()
    assert b.result() == "done"
    assert not b.lock.locked()


def test_its_maps_leave_the_caller_a_core_until_the_caller_waits():
    seen = []

    def fn():
        me = _BESIDE.beside  # this thread's Beside
        seen.append(_in_flight(2))
        while me.caller_busy:
            time.sleep(0.01)
        seen.append(_in_flight(2))
        return _in_flight(1)

    b = Beside(fn)
    time.sleep(0.05)
    assert _in_flight(2) == 2  # the caller's own maps use every worker
    assert b.result() == 1  # one worker: never fewer than one
    assert seen == [1, 2]


def _square(x: int) -> int:
    return x * x


def test_a_map_beside_the_caller_gives_every_result_in_order():
    with LocalExecutor(2) as ex:
        b = Beside(lambda: ex.map(_square, list(range(9))))
        with b.lock:  # the caller's own map, after the one beside it
            mine = ex.map(_square, [10, 11, 12])
        assert b.result() == [x * x for x in range(9)]
        assert mine == [100, 121, 144]
