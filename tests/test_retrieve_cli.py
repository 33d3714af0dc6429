"""`clir-eval retrieve`: runs equal the library's, both backends write the same file, index
cache, and bad input -> one-line error, exit 2, no run file."""

from __future__ import annotations

import json

import pytest

from clir_eval.io.readers import read_documents, read_queries
from clir_eval.io.trec import read_run
from clir_eval.retrieval.analysis import get_analyzer
from clir_eval.retrieval.bm25 import build_index

TOPICS = "<top>\n<num> Number: 1\n<title> oil history\n</top>\n<top>\n<num> Number: 2\n<title> pearl\n</top>\n"
DOCS = [
    {"id": "a", "text": "The history of the oil industry"},
    {"id": "b", "text": "Oil, oil and more oil"},
    {"id": "c", "text": "Pearl farming history"},
    {"id": "d", "text": ""},
    {"id": "e", "text": "unrelated words here"},
    {"id": "f", "text": "another unrelated document"},
]


@pytest.fixture
def files(tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    topics = tmp_path / "topics.txt"
    topics.write_text(TOPICS, encoding="utf-8")
    return tmp_path, docs, topics


def test_run_matches_library_and_backends_agree(cli, files):
    tmp, docs, topics = files
    outs = {}
    for backend in ("sparse", "rank_bm25"):
        out = tmp / f"{backend}.run"
        code, _, err = cli("retrieve", "--docs", docs, "--queries", topics, "--out", out, "--backend", backend)
        assert code == 0, err
        assert "signature: bm25:okapi" in err and f"backend:{backend}" in err
        outs[backend] = out.read_bytes()
    assert outs["sparse"] == outs["rank_bm25"]
    want = build_index(read_documents(docs), get_analyzer("default")).search(read_queries(topics))
    assert read_run(tmp / "sparse.run").ranking == want.ranking
    run = read_run(tmp / "sparse.run")
    assert sorted(run.docids("1")) == ["a", "b", "c"] and run.docids("2") == ["c"]


def test_options_and_index_cache(cli, files):
    tmp, docs, topics = files
    args = ["retrieve", "--docs", docs, "--queries", topics, "--analyzer", "default", "--stopwords", "english",
            "--stem", "english", "--k1", "1.2", "--b", "0.5", "--depth", "1", "--index", tmp / "idx", "--tag", "T"]  # fmt: skip
    code, _, err = cli(*args, "--out", tmp / "r1.run")
    assert code == 0 and "built index" in err
    code, _, err = cli(*args, "--out", tmp / "r2.run")
    assert code == 0 and "loaded index" in err
    assert (tmp / "r1.run").read_text() == (tmp / "r2.run").read_text()
    lines = (tmp / "r1.run").read_text().splitlines()
    assert len(lines) == 2 and all(line.endswith(" T") and " 1 " in line for line in lines)


def test_empty_query_gives_empty_ranking(cli, tmp_path, files):
    _, docs, _ = files
    q = tmp_path / "q.tsv"
    q.write_text("q1\toil\nq2\t\nq3\tzzz\n", encoding="utf-8")
    code, _, err = cli("retrieve", "--docs", docs, "--queries", q, "--out", tmp_path / "r.run")
    assert code == 0, err
    assert read_run(tmp_path / "r.run").qids() == ["q1"]


def _bad(tmp, name, content):
    p = tmp / name
    p.write_text(content, encoding="utf-8")
    return p


@pytest.mark.parametrize(
    "case, needle",
    [
        ("dup-docs", "duplicate document id 'a'"),
        ("dup-queries", "duplicate query id '1'"),
        ("no-id", "no document id"),
        ("no-text", "has no 'text'"),
        ("no-topics", "no TREC topics found"),
        ("depth0", "--depth 0 must be a positive integer"),
        ("depth-neg", "--depth -3 must be a positive integer"),
        ("analyzer", "unknown analyzer 'porter'"),
        ("backend", "unknown BM25 backend 'lucene'"),
        ("variant", "unknown BM25 variant"),
        ("missing", "file not found"),
    ],
)
def test_bad_input(cli, files, case, needle):
    tmp, docs, topics = files
    extra: list = []
    if case == "dup-docs":
        docs = _bad(tmp, "d.jsonl", '{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n')
    elif case == "dup-queries":
        topics = _bad(tmp, "t.txt", TOPICS + TOPICS)
    elif case == "no-id":
        docs = _bad(tmp, "d.jsonl", '{"text": "x"}\n')
    elif case == "no-text":
        docs = _bad(tmp, "d.jsonl", '{"id": "a", "txt": "x"}\n')
    elif case == "no-topics":
        topics = _bad(tmp, "t.txt", "<TOPICS>\n</TOPICS>\n")
        extra = ["--queries-format", "trec"]
    elif case.startswith("depth"):
        extra = ["--depth", "0" if case == "depth0" else "-3"]
    elif case == "analyzer":
        extra = ["--analyzer", "porter"]
    elif case == "backend":
        extra = ["--backend", "lucene"]
    elif case == "variant":
        extra = ["--variant", "bm25t"]
    elif case == "missing":
        docs = tmp / "nope.jsonl"
    out = tmp / "out.run"
    code, stdout, err = cli("retrieve", "--docs", docs, "--queries", topics, "--out", out, *extra)
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and needle in err
    assert "Traceback" not in err
    assert not out.exists()
    assert not [p for p in tmp.iterdir() if p.name.startswith(".out.run")]


def test_damaged_index_is_an_error_never_used(cli, files):
    """Issue 13: --index verifies what it reads; a changed array is one error line, exit 2."""
    tmp, docs, topics = files
    args = ["retrieve", "--docs", docs, "--queries", topics, "--index", tmp / "idx"]
    code, _, err = cli(*args, "--out", tmp / "r1.run", "--shards", "2", "--jobs", "2")
    assert code == 0, err
    assert not list((tmp / "idx").glob("*.pkl"))
    npy = tmp / "idx" / "shard-1-tf.npy"
    npy.write_bytes(npy.read_bytes()[:-2] + b"\x07\x00")
    code, _, err = cli(*args, "--out", tmp / "r2.run")
    assert code == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert "shard-1-tf.npy does not match its checksum" in err and "Traceback" not in err
    assert not (tmp / "r2.run").exists()


def test_lucene_variant_and_shards_on_the_command_line(cli, files):
    tmp, docs, topics = files
    base = ["retrieve", "--docs", docs, "--queries", topics, "--variant", "lucene"]
    code, _, err = cli(*base, "--out", tmp / "l1.run")
    assert code == 0 and "bm25:lucene|k1:0.9|b:0.4" in err, err
    code, _, err = cli(*base, "--out", tmp / "l2.run", "--shards", "3")
    assert code == 0 and (tmp / "l1.run").read_bytes() == (tmp / "l2.run").read_bytes()
