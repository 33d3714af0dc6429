"""Every field of every stage task is in its cache key, unless it is listed below as not affecting the
stage's output: changing any other field (any setting of an embedded settings record, any input file's
content, any upstream task) must change the key, so a cached output is never reused for other settings."""

from __future__ import annotations

import collections.abc
import dataclasses
import sys
import types
import typing
from pathlib import Path

import pytest

from clir_eval.mt.settings import MTSettings
from clir_eval.pipeline import tasks as task_module
from clir_eval.pipeline.cache import cache_key
from clir_eval.settings import SettingError, Settings, field_type, rules

# Fields a stage's output does not depend on (the key leaves them out), and why. A field is added to a
# task keyed; leaving one out of the key means adding it here too.
NOT_AFFECTING_RESULTS = {
    ("ShardTask", "offset"): "byte offset of line `first`: a seek hint",
    ("ShardTask", "memory"): "estimated peak bytes: scheduling only",
    ("IndexTask", "shards"): "the spans the same index is assembled from",
    ("IndexTask", "shard_docs"): "span size before planning: the index is the same",
    ("RetrieveTask", "memory"): "estimated peak bytes: scheduling only",
    ("RetrieveTask", "shards"): "the index's spans: the same index and run",
    ("RetrieveTask", "shard_docs"): "span size before planning: the same index and run",
    ("RetrieveTask", "index_name"): "which entry holds the index (query translation shares one): its content is keyed",
    ("MTSettings", "device"): "where neural metrics run: scores equal up to float32 rounding (the segment store keeps the first)",
    ("MTSettings", "batch_size"): "neural metrics' batch size: padding is masked, scores equal up to float32 rounding",
    ("ItemsTask", "device"): "where neural metrics run (as MTSettings.device)",
    ("ItemsTask", "batch_size"): "neural metrics' batch size (as MTSettings.batch_size)",
    ("MTTask", "segments"): "which per-segment scores are also kept: an entry of their own (SegmentItemsTask), keyed by them",
}

NAMESPACE = {**vars(task_module), "MTSettings": MTSettings}  # annotations the task module imports for typing only
TASK_TYPES = sorted((c for c in NAMESPACE.values()
                     if isinstance(c, type) and dataclasses.is_dataclass(c) and hasattr(c, "STAGE")),
                    key=lambda c: c.__name__)


def _hints(cls) -> dict[str, typing.Any]:
    return typing.get_type_hints(cls, {**vars(sys.modules[cls.__module__]), **NAMESPACE})


def _embedded(cls, seen: dict) -> dict:
    """``cls`` and every record type its fields embed (settings records, upstream tasks), by name."""
    if cls.__name__ in seen:
        return seen
    seen[cls.__name__] = cls
    todo = list(_hints(cls).values())
    while todo:
        tp = todo.pop()
        todo += typing.get_args(tp)
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            _embedded(tp, seen)
    return seen


RECORD_TYPES = sorted({n: c for t in TASK_TYPES for n, c in _embedded(t, {}).items()}.values(), key=lambda c: c.__name__)


class Files:
    """Distinct small input files (an input field is keyed by its content)."""

    def __init__(self, root: Path):
        self.root, self.n = root, 0

    def new(self) -> str:
        self.n += 1
        p = self.root / f"input{self.n}.txt"
        p.write_text(f"content {self.n}\n")
        return str(p)


def _optional(tp) -> tuple[typing.Any, bool]:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(tp)) == 2:
            return args[0], True
    return tp, False


def sample(tp, files: Files, is_input: bool = False):
    """A valid value of type ``tp`` (a new file for an input)."""
    tp, _ = _optional(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if is_input:
        return (files.new(),) if origin is tuple else files.new()
    if isinstance(tp, type) and issubclass(tp, Settings):
        return tp()
    if dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        return tp(**{f.name: sample(hints[f.name], files, bool(f.metadata.get("input")))
                     for f in dataclasses.fields(tp)})
    if origin is tuple:
        return () if args[-1] is Ellipsis else tuple(sample(a, files) for a in args)
    if tp is dict or origin is dict:
        return {"a": 1}
    if tp in (str, int, float, bool):
        return {str: "a", int: 1, float: 1.0, bool: False}[tp]
    raise AssertionError(f"the key test does not know how to make a {tp!r}; teach sample() and changed()")


def _candidates(value, kind: type) -> list:
    if kind is bool:
        return [not value]
    if kind in (int, float):
        near = [] if value is None else [value + 1, value - 1, value / 2 if kind is float else value // 2]
        return near + [kind(0.5) if kind is float else 0, 1, 2]
    if kind is tuple:
        return [(*value, "ter"), ("bleu",), ("chrf1",), (*value, "P_5"), ("map",)]
    if isinstance(kind, type) and issubclass(kind, collections.abc.Mapping):
        return [{**value, "bleu": 1}, {"map": 2}]
    return ["a", "english", "none", "intl", "cuda", "de"] if kind is str else []  # de: a collection language


def settings_changes(record: Settings, files: Files) -> list[tuple[str, Settings, Settings, bool]]:
    """Per declared field of a settings record: (field, record, the record with that field changed, whether
    the change may change results), both valid; a field valid only together with another setting (BM25
    delta: variant l or plus) is changed on a record where that other setting is changed first."""
    cls, out = type(record), []
    bases = [record] + [_try(record, name, c) for name, r in rules(cls).items() for c in r.choices]
    bases = [b for b in bases if b is not None]
    for f in dataclasses.fields(cls):
        name, rule = f.name, rules(cls)[f.name]
        affects = (cls.__name__, name) not in NOT_AFFECTING_RESULTS
        if f.metadata.get("input"):
            out += [(f"{name} {what}", dataclasses.replace(record, **{name: before}),
                     dataclasses.replace(record, **{name: after}), affects)
                    for what, before, after, _ in changed(getattr(record, name), _hints(cls)[name], files, True)]
            continue
        pair = next(((b, new) for b in bases for c in (rule.choices or _candidates(getattr(b, name), field_type(cls, name)[0]))
                     if (new := _try(b, name, c)) is not None and getattr(new, name) != getattr(b, name)), None)
        assert pair, f"{cls.__name__}.{name}: no valid other value found; teach settings_changes()"
        out.append((name, *pair, affects))
    return out


def _try(record: Settings, name: str, value) -> Settings | None:
    try:
        return dataclasses.replace(record, **{name: value})
    except SettingError:
        return None


def changed(value, tp, files: Files, is_input: bool = False) -> list[tuple[str, typing.Any, typing.Any, bool]]:
    """Pairs of values differing in one respect each: (what changed, value, changed value, whether results
    may change); a settings record or an upstream task gives one per field (a settings field valid only with
    another setting changed comes with that other setting changed on both sides)."""
    return [(w, b, a, True) if len(t) == 3 else t for t in _changes(value, tp, files, is_input) for w, b, a, *_ in [t]]


def _changes(value, tp, files: Files, is_input: bool = False) -> list[tuple]:
    tp, optional = _optional(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if value is None:
        return [("set", value, sample(tp, files, is_input))]
    out = [("unset", value, None)] if optional else []
    if is_input:
        if isinstance(value, tuple):
            return out + [("other file", value, (files.new(), *value[1:])),
                          ("one more file", value, (*value, files.new()))]
        Path(files.root / "edited").mkdir(exist_ok=True)
        other = files.root / "edited" / Path(value).name
        other.write_text(Path(value).read_text() + "edited\n")
        return out + [("other content", value, str(other))]
    if isinstance(value, Settings):
        return out + settings_changes(value, files)
    if dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        for f in dataclasses.fields(tp):
            if (tp.__name__, f.name) in NOT_AFFECTING_RESULTS:
                continue
            for what, before, after, affects in changed(getattr(value, f.name), hints[f.name], files,
                                                        bool(f.metadata.get("input"))):
                out.append((f"{f.name} {what}", dataclasses.replace(value, **{f.name: before}),
                            dataclasses.replace(value, **{f.name: after}), affects))
        return out
    if origin is tuple:
        if args[-1] is Ellipsis:
            return out + [("one more item", value, (*value, sample(args[0], files)))]
        (what, _, first, _), *_ = changed(value[0], args[0], files)
        return out + [(f"first item {what}", value, (first, *value[1:]))]
    if tp is dict or origin is dict:
        return out + [("one more key", value, {**value, "other": 2})]
    if tp is bool:
        return out + [("flipped", value, not value)]
    if tp in (int, float):
        return out + [("+1", value, value + 1)]
    if tp is str:
        return out + [("other text", value, value + "x")]
    raise AssertionError(f"the key test does not know how to change a {tp!r}; teach sample() and changed()")


def test_the_task_types_are_found():
    names = {c.__name__ for c in TASK_TYPES}
    assert {"MTTask", "ShardTask", "IndexTask", "RetrieveTask", "IRTask", "QrelsTask", "CorrelationTask"} <= names


def test_the_fields_left_out_of_the_key_are_exactly_those_listed():
    assert {"MTSettings", "IRSettings", "RetrievalSettings", "IndexSettings"} <= {c.__name__ for c in RECORD_TYPES}
    left_out = {(c.__name__, f.name) for c in RECORD_TYPES for f in dataclasses.fields(c)
                if not f.metadata.get("key", True)}
    assert left_out == set(NOT_AFFECTING_RESULTS)


@pytest.mark.parametrize("cls", TASK_TYPES, ids=lambda c: c.__name__)
def test_changing_any_field_changes_the_key(cls, tmp_path):
    files = Files(tmp_path)
    hints = _hints(cls)
    task = sample(cls, files)
    key = cache_key(task)
    checked = 0
    for f in dataclasses.fields(cls):
        variants = changed(getattr(task, f.name), hints[f.name], files, bool(f.metadata.get("input")))
        assert variants, f"{cls.__name__}.{f.name}: nothing to change"
        for what, before, value, affects in variants:
            key = cache_key(dataclasses.replace(task, **{f.name: before}))
            other = cache_key(dataclasses.replace(task, **{f.name: value}))
            if (cls.__name__, f.name) in NOT_AFFECTING_RESULTS or not affects:
                assert other == key, f"{cls.__name__}.{f.name} ({what}) is listed as not affecting results but changes the key"
            else:
                assert other != key, f"{cls.__name__}.{f.name} ({what}) does not change the cache key"
                checked += 1
    assert checked >= len(dataclasses.fields(cls)) - sum(1 for (c, _) in NOT_AFFECTING_RESULTS if c == cls.__name__)


def test_a_setting_left_out_of_the_key_is_caught(tmp_path):
    """What the checks above catch: MTSettings.lowercase marked as not keyed (a stale MT score reused)."""
    fields = [(f.name, _hints(MTSettings)[f.name],
               dataclasses.field(default=f.default, metadata={**f.metadata, **({"key": False} if f.name == "lowercase" else {})}))
              for f in dataclasses.fields(MTSettings)]
    Broken = dataclasses.make_dataclass("MTSettings", fields, bases=(Settings,), frozen=True)
    left_out = {f.name for f in dataclasses.fields(Broken) if not f.metadata.get("key", True)}
    assert "lowercase" in left_out and ("MTSettings", "lowercase") not in NOT_AFFECTING_RESULTS
    files = Files(tmp_path)
    task = task_module.MTTask("s", files.new(), Broken(refs=(files.new(),)))
    stale = [what for what, before, after, affects in changed(task.mt, Broken, files)
             if affects and cache_key(dataclasses.replace(task, mt=before)) == cache_key(dataclasses.replace(task, mt=after))]
    assert stale == ["lowercase"]
