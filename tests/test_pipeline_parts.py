"""Pipeline parts: the one cache-key function, the executors, config choices owned by their modules."""

from __future__ import annotations

import functools
import os
from dataclasses import replace

import pytest
import yaml
from test_pipeline import make_experiment

import clir_eval.version
from clir_eval.config.load import load_config
from clir_eval.errors import UserError
from clir_eval.ir.settings import IRSettings
from clir_eval.mt.settings import MTSettings
from clir_eval.pipeline.cache import cache_key
from clir_eval.pipeline.executor import EXECUTORS, SerialExecutor, WorkerLost, get_executor
from clir_eval.pipeline.tasks import IRTask, MTTask, RetrieveTask
from clir_eval.retrieval.settings import RetrievalSettings


@pytest.fixture
def files(tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "d1", "text": "a b c"}\n')
    ref = tmp_path / "ref.txt"
    ref.write_text("a b c\n")
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("a b\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    return docs, ref, hyp, qrels


def _english(docs) -> RetrieveTask:
    return RetrieveTask("english", str(docs), None, RetrievalSettings(), (("q1", "a"),), want_ids=True)


def test_english_key_includes_the_tool_version(files, monkeypatch):
    """Regression: the English-side run's key lacked the version, so an upgrade reused it."""
    task = _english(files[0])
    before = cache_key(task)
    monkeypatch.setattr(clir_eval.version, "__version__", clir_eval.__version__ + ".post1")
    assert cache_key(task) != before


def test_every_stage_key_includes_the_tool_version(files, monkeypatch):
    docs, ref, hyp, qrels = files
    eng = _english(docs)
    tasks = [
        MTTask("s", str(hyp), MTSettings(refs=(str(ref),), metrics=("bleu",))),
        replace(eng, system="s", want_ids=False),
        IRTask("s", eng, str(qrels), eng, IRSettings(("map",))),
    ]
    before = [cache_key(t) for t in tasks]
    monkeypatch.setattr(clir_eval.version, "__version__", "0.0.0-other")
    assert all(a != cache_key(t) for a, t in zip(before, tasks))


def test_key_follows_content_not_path(files, tmp_path):
    docs = files[0]
    task = _english(docs)
    copy = tmp_path / "elsewhere.jsonl"
    copy.write_bytes(docs.read_bytes())
    assert cache_key(replace(task, docs=str(copy))) == cache_key(task)
    copy.write_text('{"id": "d1", "text": "a b d"}\n')
    assert cache_key(replace(task, docs=str(copy))) != cache_key(task)


@pytest.mark.parametrize(
    "change",
    [
        lambda t: replace(t, retrieval=replace(t.retrieval, k1=1.2)),
        lambda t: replace(t, retrieval=replace(t.retrieval, depth=10)),
        lambda t: replace(t, queries=(("q1", "b"),)),
        lambda t: replace(t, format="jsonl"),
        lambda t: replace(t, system="other"),
        lambda t: replace(t, want_ids=False),
    ],
)
def test_every_setting_changes_the_key(files, change):
    task = _english(files[0])
    assert cache_key(change(task)) != cache_key(task)


def test_checks_are_not_keyed_and_upstream_tasks_count_by_key(files, tmp_path):
    docs, _, _, qrels = files
    eng = _english(docs)
    assert cache_key(replace(eng, memory=123)) == cache_key(eng)
    ir = IRTask("english", eng, str(qrels), eng, IRSettings(("map",)))
    changed = replace(eng, retrieval=replace(eng.retrieval, b=0.5))
    assert cache_key(replace(ir, run=changed)) != cache_key(ir)
    before = cache_key(ir)
    qrels.write_text("q1 0 d1 1\nq2 0 d1 1\n")
    assert cache_key(ir) != before
    other = tmp_path / "q2.txt"
    other.write_text("q1 0 d1 0\n")
    assert cache_key(replace(ir, qrels=str(other))) != cache_key(ir)


# --------------------------------------------------------------------------- executors
def _square(x: int) -> int:
    return x * x


def _fail_on(bad: int, x: int) -> int:
    if x >= bad:
        raise ValueError(f"task {x}")
    return x


def _die_on(bad: int, x: int) -> int:
    if x == bad:
        os._exit(9)
    return x


@pytest.mark.parametrize("name", ["serial", "local"])
def test_executors_keep_task_order(name):
    done = []
    with get_executor(name, 2) as ex:
        assert ex.map(_square, list(range(7)), done.append) == [x * x for x in range(7)]
    assert sorted(done) == list(range(7))  # on_done gets each finished task's index


@pytest.mark.parametrize("name", ["serial", "local"])
def test_executors_raise_the_task_error(name):
    with get_executor(name, 2) as ex, pytest.raises(ValueError, match="task"):
        ex.map(functools.partial(_fail_on, 3), list(range(6)))


@pytest.mark.parametrize("bad", [0, 2, 5])
def test_local_executor_reports_a_dead_worker(bad):
    with get_executor("local", 2) as ex, pytest.raises(WorkerLost) as e:
        ex.map(functools.partial(_die_on, bad), list(range(6)))
    assert bad in e.value.indices and len(e.value.indices) <= 2


def _pid(_: int) -> int:
    import time

    time.sleep(0.05)  # long enough that both workers take tasks
    return os.getpid()


def test_local_executor_starts_its_workers_once_for_all_maps():
    """A run's stages share the pool: a second map runs in the workers the first one started."""
    with get_executor("local", 2) as ex:
        first = ex.map(_pid, list(range(6)))
        second = ex.map(_pid, list(range(6)))
    assert os.getpid() not in first and len(set(first) | set(second)) <= 2


def test_executor_is_chosen_by_name_from_the_registry():
    assert {"serial", "local"} <= set(EXECUTORS)
    assert isinstance(get_executor("serial"), SerialExecutor)
    with pytest.raises(UserError, match="unknown executor 'nope'"):
        get_executor("nope")


# --------------------------------------------------------------------------- config choices come from their owners
@pytest.mark.parametrize("section, record, key, owner", [
    ("retrieval", "RetrievalSettings", "backend", "BACKENDS"), ("retrieval", "RetrievalSettings", "variant", "VARIANTS"),
    ("retrieval", "RetrievalSettings", "analyzer", "ANALYZERS"), ("correlation", "CorrelationSettings", "method", "METHODS"),
    ("correlation", "CorrelationSettings", "variant", "VARIANTS"), ("correlation", "CorrelationSettings", "correction", "CORRECTIONS"),
    ("queries", "QueriesConfig", "format", "QUERY_FORMATS"), ("queries", "QueriesConfig", "generate", "QUERY_KINDS"),
    ("collection", "CollectionConfig", "format", "DOC_FORMATS"),
])
def test_setting_choices_are_declared_once(tmp_path, section, record, key, owner):
    import importlib

    from clir_eval.settings import rules

    owner_module = importlib.import_module(f"clir_eval.{'sources' if section in ('queries', 'collection') else section}.settings")
    assert rules(getattr(owner_module, record))[key].choices is getattr(owner_module, owner)
    path = make_experiment(tmp_path)
    cfg = yaml.safe_load(path.read_text())
    cfg.setdefault(section, {})[key] = "novel"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(UserError, match=f"{section}.{key}: unknown .*'novel'; choose one of {', '.join(getattr(owner_module, owner))}"):
        load_config(path)


def test_executor_config_key(tmp_path):
    path = make_experiment(tmp_path)
    cfg = yaml.safe_load(path.read_text())
    assert load_config(path).executor == "local"
    cfg["executor"] = "serial"
    path.write_text(yaml.safe_dump(cfg))
    c = load_config(path)
    assert c.executor == "serial" and "executor" not in c.to_dict()
    cfg["executor"] = "cluster"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(UserError, match="executor: unknown executor 'cluster'; choose one of"):
        load_config(path)
