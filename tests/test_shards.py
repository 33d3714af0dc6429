"""Index shards in ``run``: spans of a collection's lines indexed as separate tasks, merged into
the same index (same runs, scores and tie order, same signature) as one build."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from test_pipeline import make_experiment

from clir_eval.io.readers import read_documents
from clir_eval.pipeline.shards import plan_spans


def _stable(out: Path) -> dict:
    r = json.loads((out / "results.json").read_text())
    r.pop("timing")
    return r


def _runs(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (out / "cache" / "runs").glob("*.run")}


def _index_shards(out: Path) -> list[int]:
    return sorted(len(json.loads((d / "index.json").read_text())["shards"])
                  for d in (out / "cache" / "index").iterdir() if d.is_dir())  # fmt: skip


def test_sharded_run_equals_one_index_per_collection(tmp_path, cli):
    """61 lines in spans of 7 (9 shards per collection, 6 collections), on a local pool of 2:
    results.json, reports and every run file byte-identical to unsharded builds."""
    (tmp_path / "d").mkdir()
    config = make_experiment(tmp_path / "d", n_docs=61)
    one, sharded = tmp_path / "one", tmp_path / "sharded"
    code, _, err = cli("run", config, "--out", one, "-j", "1", "-q")
    assert code == 0, err
    code, _, err = cli("run", config, "--out", sharded, "-j", "2", "-q", "--shard-docs", "7")
    assert code == 0, err
    assert _index_shards(one) == [1] * 6 and _index_shards(sharded) == [9] * 6
    assert _stable(sharded) == _stable(one)
    assert _runs(sharded) == _runs(one) and len(_runs(one)) == 6
    for f in ("report.md", "scores.tsv", "correlations.tsv"):
        assert (sharded / f).read_bytes() == (one / f).read_bytes(), f
    assert not [p for p in (sharded / "cache" / "shards").iterdir()]  # pass-1 entries dropped once merged
    # a cached re-run does not shard again (nothing to build)
    code, _, err = cli("run", config, "--out", sharded, "-j", "1", "-q", "--shard-docs", "7")
    assert code == 0 and not [p for p in (sharded / "cache" / "shards").iterdir()]


def _write(path: Path, lines: list[str]) -> Path:
    data = "".join(line + "\n" for line in lines).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)
    return path


@pytest.mark.parametrize("name,fmt", [("c.jsonl", "jsonl"), ("c.jsonl.gz", "jsonl"), ("c.tsv", "tsv"),
                                      ("c.txt", "lines"), ("c.txt.gz", "lines")])  # fmt: skip
def test_spans_read_exactly_the_documents_of_the_whole_file(tmp_path, name, fmt):
    """Blank lines (skipped by jsonl/tsv, empty documents in lines), non-ASCII text, a gzip
    file (no seeking): the spans' documents in order are the file's."""
    rows = []
    for i in range(23):
        text = f"dóc {i} ünïcode" if i % 5 else ""
        if fmt == "jsonl":
            rows.append(json.dumps({"id": f"x{i}", "text": text}, ensure_ascii=False) if i % 4 != 3 else "")
        elif fmt == "tsv":
            rows.append(f"x{i}\t{text}" if i % 4 != 3 else "")
        else:
            rows.append(text)
    path = _write(tmp_path / name, rows)
    whole = read_documents(path, fmt)
    raw = gzip.decompress(path.read_bytes()) if name.endswith(".gz") else path.read_bytes()
    for size in (1, 4, 22):
        spans = plan_spans(str(path), size)
        assert [s.lines for s in spans] == [min(size, 23 - k) for k in range(0, 23, size)]
        assert [s.first for s in spans] == list(range(1, 24, size))
        assert all((s.offset is None) == name.endswith(".gz") for s in spans)
        starts = [0] + [i + 1 for i, c in enumerate(raw) if c == 10][:-1]  # byte offset of every line
        assert [s.size for s in spans] == [
            (starts[s.first - 1 + s.lines] if s.first - 1 + s.lines < len(starts) else len(raw)) - starts[s.first - 1]
            for s in spans]
        parts = [read_documents(path, fmt, span=(s.first, s.offset, s.lines)) for s in spans]
        assert [i for p in parts for i in p.ids] == list(whole.ids)
        assert [t for p in parts for t in p.texts] == list(whole.texts)
    assert plan_spans(str(path), 23) == []  # fits in one index


def test_duplicate_id_in_another_shard_is_the_usual_error(tmp_path, cli):
    (tmp_path / "d").mkdir()
    config = make_experiment(tmp_path / "d", n_docs=20)
    sysdocs = tmp_path / "d" / "systems" / "sys2.jsonl"
    lines = sysdocs.read_text().splitlines()
    lines[15] = json.dumps({"id": "d002", "text": "again"})  # d002 is on line 3, in the first span
    sysdocs.write_text("\n".join(lines) + "\n")
    code, _, err = cli("run", config, "--out", tmp_path / "o", "-j", "1", "-q", "--shard-docs", "6")
    assert code == 2 and "Traceback" not in err
    assert err.strip().startswith("error:") and "duplicate document id 'd002'" in err and "sys2.jsonl:16" in err, err


def test_damaged_shard_entry_is_recomputed_with_a_note(tmp_path):
    from clir_eval.pipeline.cache import Cache
    from clir_eval.pipeline.shards import shard_tasks, shard_unit
    from clir_eval.pipeline.stages import index_stage
    from clir_eval.pipeline.tasks import RetrieveTask
    from clir_eval.retrieval.analysis import get_analyzer
    from clir_eval.retrieval.bm25 import build_index
    from clir_eval.retrieval.settings import RetrievalSettings

    (tmp_path / "d").mkdir()
    make_experiment(tmp_path / "d", n_docs=30)
    docs = str(tmp_path / "d" / "english.jsonl")
    task = shard_tasks(RetrieveTask("english", docs, None, RetrievalSettings(), (("q", "t0w1"),), memory=1), 8)
    assert len(task.shards) == 4
    cache = Cache(tmp_path / "cache")
    assert [shard_unit(st, cache)["notes"] for st in task.shards] == [[]] * 4
    victim = cache.entry(task.shards[2]).path("tf.npy")
    data = bytearray(victim.read_bytes())
    data[-1] ^= 1
    victim.write_bytes(bytes(data))
    idx, meta = index_stage(task.index, cache)
    assert len(cache.notes) == 1 and "shards entry of english" in cache.notes[0] and "failed verification" in cache.notes[0]
    ref = build_index(read_documents(docs), get_analyzer("default"))
    assert idx.signature == ref.signature and meta["n_docs"] == 30
    for q in ("t0w1 t0w2", "the t3w4", "t5w7 of"):
        assert idx.get_scores(q.split()).tobytes() == ref.get_scores(q.split()).tobytes()
    assert idx.search({"q": "t1w1 t2w2"}).ranking == ref.search({"q": "t1w1 t2w2"}).ranking
    assert np.array_equal(idx.inverted.dl, ref.inverted.dl)


def test_a_killed_run_resumes_from_its_finished_spans(tmp_path, cli, monkeypatch):
    """Spans whose pass 1 finished before a run died are not analysed again."""
    import clir_eval.pipeline.shards as shards_mod
    from clir_eval.config.load import load_config
    from clir_eval.pipeline.cache import Cache
    from clir_eval.pipeline.inputs import resolve_inputs
    from clir_eval.pipeline.run import retrieve_task
    from clir_eval.pipeline.shards import shard_tasks, shard_unit

    (tmp_path / "d").mkdir()
    config = make_experiment(tmp_path / "d", n_docs=30)
    out = tmp_path / "out"
    cfg = load_config(config)
    cache = Cache(out / "cache")
    res = resolve_inputs(cfg, cache)
    task = shard_tasks(retrieve_task(cfg, res, cache, "english", res.english, want_ids=True), 8)
    for st in task.shards[:3]:  # the "killed" run finished 3 of the English side's 4 spans
        shard_unit(st, cache)
    calls = []
    real = shards_mod.stream_stats  # the span pass's own reference (imported at the top of pipeline/shards.py)
    monkeypatch.setattr(shards_mod, "stream_stats", lambda *a, **k: calls.append(1) or real(*a, **k))
    code, _, err = cli("run", config, "--out", out, "-j", "1", "-q", "--shard-docs", "8")
    assert code == 0, err
    assert len(calls) == 6 * 4 - 3  # 6 collections x 4 spans, less the 3 finished


@pytest.mark.parametrize("block", [3, 1 << 22])
@pytest.mark.parametrize("data,size,want", [
    (b"a\nbb\nc", 2, [(1, 0, 2, 5), (3, 5, 1, 1)]),  # no final newline
    (b"a\nb\nc\nd\n", 2, [(1, 0, 2, 4), (3, 4, 2, 4)]),  # an exact multiple of the span
    (b"a\r\nb\r\n\r\nc\r\n", 1, [(1, 0, 1, 3), (2, 3, 1, 3), (3, 6, 1, 2), (4, 8, 1, 3)]),  # CRLF, an empty line
    (b"a\nb\n", 2, []),
    (b"", 1, []),
])  # fmt: skip
def test_span_boundaries_across_read_blocks(tmp_path, monkeypatch, block, data, size, want):
    from clir_eval.pipeline import shards

    monkeypatch.setattr(shards, "READ_BLOCK", block)
    path = tmp_path / "c.txt"
    path.write_bytes(data)
    assert [(s.first, s.offset, s.lines, s.size) for s in plan_spans(str(path), size)] == want


def test_unreadable_gzip_is_a_one_line_error_naming_the_file(tmp_path):
    from clir_eval.errors import UserError

    good = gzip.compress(b"".join(b'{"id": "d%d", "text": "x"}\n' % i for i in range(5000)), mtime=0)
    for name, data in (("cut.jsonl.gz", good[: len(good) * 2 // 3]), ("fake.jsonl.gz", b"not gzip at all\n" * 10)):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(UserError, match=rf"{name}: cannot read \(.*\); check the file is complete"):
            plan_spans(str(tmp_path / name), 10)


def test_damaged_index_is_rebuilt_from_spans_in_the_worker_and_stale_spans_are_dropped(tmp_path, cli):
    """A cached index that fails verification is rebuilt where it is needed, span by span
    (memory bounded as planned shards), equal to a clean run; span files left by another run
    are removed once every index is built."""
    import yaml

    (tmp_path / "d").mkdir()
    config = make_experiment(tmp_path / "d", n_docs=61)
    out, clean = tmp_path / "out", tmp_path / "clean"
    assert cli("run", config, "--out", out, "-j", "1", "-q", "--shard-docs", "7")[0] == 0
    victim = next(d for d in (out / "cache" / "index").iterdir() if d.is_dir() and d.name.startswith("sys3-"))
    (victim / "dl.npy").write_bytes((victim / "dl.npy").read_bytes()[:-8] + bytes(8))
    stale = out / "cache" / "shards" / "sysX-0123456789abcdef.cols.npy"
    stale.write_bytes(b"left by a killed run")
    cfg = yaml.safe_load(config.read_text())
    cfg["retrieval"]["depth"] = 40
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    code, _, err = cli("run", config, "--out", out, "-j", "1", "-q", "--shard-docs", "7")
    assert code == 0 and "index entry of sys3" in err and "failed verification" in err, err
    assert not stale.exists() and not list((out / "cache" / "shards").iterdir())
    assert len(json.loads((victim / "index.json").read_text())["shards"]) == 9  # rebuilt from 9 spans
    assert cli("run", config, "--out", clean, "-j", "1", "-q")[0] == 0
    got = _stable(out)
    got["notes"] = [n for n in got["notes"] if "failed verification" not in n]
    assert got == _stable(clean)
