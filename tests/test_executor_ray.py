"""The Ray executor on a real local cluster (``ray start --head`` on loopback, separate worker processes)."""

import functools
import importlib.util
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from clir_eval.errors import UserError
from clir_eval.pipeline.executor import WorkerLost
from clir_eval.pipeline.executor_ray import RayExecutor

if importlib.util.find_spec("ray") is None:
    pytest.skip("Ray cannot start: not installed (pip install 'clir-eval[ray]')", allow_module_level=True)
# ray itself is imported only once the cluster's token is in the environment: Ray reads its
# authentication settings when first imported.


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ray_address():
    """A 2-CPU head node on loopback started with ``ray start --block``; killed (its process group) after."""
    ray_cli = Path(sys.executable).with_name("ray")
    if not ray_cli.exists():
        pytest.skip(f"Ray cannot start: no 'ray' command beside {sys.executable}")
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's socket paths must stay short
    port = _free_port()
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}  # this cluster's own token
    saved = {k: os.environ.get(k) for k in auth}
    os.environ.update(auth)  # the driver (this process) presents the same token
    import ray

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    cmd = [str(ray_cli), "start", "--head", "--block", f"--port={port}", "--node-ip-address=127.0.0.1",
           "--num-cpus=2", f"--temp-dir={temp}", "--include-dashboard=false", "--disable-usage-stats",
           "--object-store-memory=80000000"]  # fmt: skip
    log = open(Path(temp) / "start.log", "w+")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=dict(os.environ))
    try:
        deadline = time.monotonic() + 120
        while "Ray runtime started" not in Path(log.name).read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.skip("Ray cannot start: " + " | ".join(Path(log.name).read_text().splitlines()[-3:]))
            time.sleep(0.5)
        yield f"127.0.0.1:{port}"
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):  # SIGTERM alone drains for up to 30 s
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            time.sleep(1)
        proc.wait()
        log.close()
        shutil.rmtree(temp, ignore_errors=True)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _square(x: int, offset: int = 0) -> tuple[int, int]:
    time.sleep(0.05 * (5 - x))  # later tasks finish first
    return os.getpid(), x * x + offset


def _fail_on(x: int, bad: int) -> int:
    if x >= bad:
        raise UserError(f"task {x} has bad input")
    return x


def _die_on(x: int, bad: int) -> int:
    if x == bad:
        os._exit(9)
    return x


def test_ray_executor_runs_tasks_in_worker_processes_in_task_order(ray_address):
    with RayExecutor(2, address=ray_address) as ex:
        done = []
        out = ex.map(functools.partial(_square, offset=1), list(range(6)), done.append)
        assert [v for _, v in out] == [x * x + 1 for x in range(6)]
        assert sorted(done) == list(range(6))  # on_done gets each finished task's index
        pids = {p for p, _ in out}
        assert os.getpid() not in pids
        with pytest.raises(UserError, match="task [34] has bad input"):
            ex.map(functools.partial(_fail_on, bad=3), list(range(6)))
        with pytest.raises(WorkerLost) as lost:
            ex.map(functools.partial(_die_on, bad=4), list(range(6)))
        assert lost.value.indices == (4,)


def test_run_on_ray_cluster_equals_serial_run(ray_address, cli, tmp_path, monkeypatch):
    """``run --ray-address`` on the cluster: results.json (except timing) and every report
    byte-identical to serial, with the index shards, the systems and the correlation seed
    blocks as Ray tasks."""
    import json

    from test_pipeline import make_experiment

    from clir_eval.correlation import statistics

    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # the CLI sets it; restored after the test
    monkeypatch.setattr(statistics, "MIN_BATCH_COST", 0)  # the blocks of this small experiment go to Ray too
    fns = []
    real_map = RayExecutor.map
    monkeypatch.setattr(RayExecutor, "map", lambda self, fn, tasks, on_done=None: fns.append((fn, len(tasks)))
                        or real_map(self, fn, tasks, on_done))
    (tmp_path / "data").mkdir()
    config = make_experiment(tmp_path / "data")
    serial, on_ray = tmp_path / "serial", tmp_path / "ray"
    code, _, err = cli("run", config, "--out", serial, "--executor", "serial", "--quiet")
    assert code == 0, err
    code, _, err = cli("run", config, "--out", on_ray, "--ray-address", ray_address, "--jobs", "2", "--quiet",
                       "--shard-docs", "25")  # 60 documents: each collection's index from 3 shard tasks
    assert code == 0, err

    def stable(out):
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        results.pop("timing")
        return json.dumps(results, ensure_ascii=False)

    assert stable(on_ray) == stable(serial)
    assert len(json.loads(stable(serial))["systems"]) == 5
    blocks = [n for fn, n in fns if fn is statistics.run_block_chunk]
    # one map call per round: 4 chunks per worker; later rounds only for the sequential tests still open
    assert blocks and blocks[0] == 8 and all(n <= 8 for n in blocks), fns
    from clir_eval.pipeline.shards import shard_unit

    assert [n for fn, n in fns if getattr(fn, "func", None) is shard_unit] == [18]  # 6 collections x 3 spans
    for name in ("scores.tsv", "correlations.tsv", "report.md"):
        assert (on_ray / name).read_bytes() == (serial / name).read_bytes(), name
    code, _, err = cli("run", config, "--out", on_ray, "--ray-address", ray_address, "--executor", "local")
    assert code == 2 and "--ray-address needs --executor ray" in err


def _open_missing(path: str):
    return open(path, encoding="utf-8")


def test_missing_file_on_another_node_names_the_shared_storage_rule(tmp_path, ray_address):
    import ray

    from clir_eval.pipeline.executor_ray import _call

    missing = str(tmp_path / "not-shared.jsonl")
    with pytest.raises(FileNotFoundError):  # same node as the driver: the error as it is
        _call(_open_missing, missing, ray.util.get_node_ip_address())
    with pytest.raises(UserError, match=r"not-shared\.jsonl: not found on Ray node .*same path"):
        _call(_open_missing, missing, "192.0.2.254")


def test_correlation_seed_blocks_on_ray_equal_serial(ray_address):
    """The resampling blocks of the correlation statistics as Ray tasks: identical CIs and p."""
    from test_resample_blocks import _data, _stats

    x, x2, y, pq = _data()
    with RayExecutor(2, address=ray_address) as ex:
        assert _stats(x, x2, y, pq, map=ex.map) == _stats(x, x2, y, pq)
