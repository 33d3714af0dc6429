"""Reliability, round four: nothing written outside --out/--cache, no silently wrong answer, bombs refused
after a few megabytes, no internal error, no leftovers of a refused command.

Every case generates its inputs; the CLI runs in-process (exit code 2, one ``error:`` line, no traceback)
except where a FIFO could hang a broken build, which runs in a subprocess with a timeout.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import assert_one_line_error

HYPS = {"a": "the cat sat on the mat\na dog barks\nhello world\n",
        "b": "the cat is on a mat\nthe dog barks\nhello there world\n",
        "c": "a cat on the mat\ndogs bark\nhello world\n"}
REF = "the cat sat on the mat\nthe dog barks\nhello world\n"
DOCS = "".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(
    ("a cat on a mat", "a dog", "the cat and the dog", "fish swim", "birds fly"), 1))


def _config(root: Path, **top) -> Path:
    for name, text in HYPS.items():
        (root / f"{name}.txt").write_text(text)
    (root / "ref.txt").write_text(REF)
    data = {"name": "round4", "systems": [{"name": n, "hyp": f"{n}.txt"} for n in HYPS],
            "mt": {"refs": ["ref.txt"], "metrics": ["bleu"]}, **top}
    p = root / "config.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def _sub(*args, env=None, timeout=60):
    """The CLI in a subprocess (a FIFO opened by a broken build would hang this process): (code, stdout, stderr)."""
    e = {**os.environ, **(env or {})}
    p = subprocess.run([sys.executable, "-m", "clir_eval", *map(str, args)], capture_output=True, text=True,
                       env=e, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


# ---- 2. nothing written outside --out / --cache

def test_out_lock_symlink_is_not_followed(tmp_path, cli):
    cfg = _config(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (out / ".clir-eval.lock").symlink_to(victim)
    code, _, err = cli("run", cfg, "--out", out, "-q", "--jobs", "1")
    assert_one_line_error(code, err, r"lock file .*\.clir-eval\.lock is a symbolic link; .*remove the link")
    assert victim.read_text() == "precious\n"
    assert not (out / "results.json").exists()


def test_cache_lock_symlink_is_not_followed(tmp_path, cli):
    cfg = _config(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (cache / ".clir-eval-cache.lock").symlink_to(victim)
    code, _, err = cli("run", cfg, "--out", tmp_path / "out", "--cache", cache, "-q", "--jobs", "1")
    assert_one_line_error(code, err, r"lock file .*\.clir-eval-cache\.lock is a symbolic link")
    assert victim.read_text() == "precious\n"
    assert not (tmp_path / "out").exists()


def test_default_cache_symlink_is_refused(tmp_path, cli):
    cfg = _config(tmp_path)
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "cache").symlink_to(elsewhere)
    code, _, err = cli("run", cfg, "--out", out, "-q", "--jobs", "1")
    assert_one_line_error(code, err, r"cache is a symbolic link; .*pass the directory it points to as --cache")
    assert list(elsewhere.iterdir()) == []


def test_lock_files_are_removed_after_a_run(tmp_path, cli):
    cfg = _config(tmp_path)
    out, cache = tmp_path / "out", tmp_path / "shared-cache"
    assert cli("run", cfg, "--out", out, "--cache", cache, "-q", "--jobs", "1")[0] == 0
    assert (out / "results.json").is_file()
    assert not (out / ".clir-eval.lock").exists() and not (cache / ".clir-eval-cache.lock").exists()


# ---- 6. a refused run leaves no new --out

@pytest.mark.parametrize("case", ["cache-file", "cache-dev-null", "item-metric-unknown", "score-name-clash"])
def test_refused_run_leaves_no_new_out(tmp_path, cli, case):
    extra = {"item-metric-unknown": {"item_level": {"metrics": ["nosuch"]}},
             "score-name-clash": {"external": [{"file": "ext.tsv", "kind": "mt", "match": {"system": "{name}"},
                                                "columns": ["bleu"]}]}}.get(case, {})
    (tmp_path / "ext.tsv").write_text("system\tbleu\na\t1\nb\t2\nc\t3\n")
    cfg = _config(tmp_path, **extra)
    out = tmp_path / "out"
    argv = ["run", cfg, "--out", out, "-q", "--jobs", "1"]
    if case == "cache-file":
        (tmp_path / "afile").write_text("x\n")
        argv += ["--cache", tmp_path / "afile"]
    elif case == "cache-dev-null":
        argv += ["--cache", "/dev/null"]
    code, _, err = cli(*argv)
    assert_one_line_error(code, err, r"--cache|nosuch|score name 'bleu' is already used")
    assert not out.exists()


def test_refused_run_into_existing_out_leaves_it_as_found(tmp_path, cli):
    cfg = _config(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    code, _, err = cli("run", cfg, "--out", out, "--cache", "/dev/null", "-q")
    assert_one_line_error(code, err, r"--cache /dev/null")
    assert list(out.iterdir()) == []


def test_fifo_results_json_is_named_not_missing(tmp_path):
    d = tmp_path / "done"
    d.mkdir()
    os.mkfifo(d / "results.json")
    code, _, err = _sub("report", d, timeout=60)
    assert_one_line_error(code, err, r"results\.json is a FIFO \(named pipe\), not a regular file")
    cfg = _config(tmp_path)
    code, _, err = _sub("run", cfg, "--out", d, "-q", "--jobs", "1", timeout=120)  # refused before any work
    assert_one_line_error(code, err, r"results\.json is a FIFO")


# ---- 3. silently wrong answers

def _scores(n: int = 8):
    import random

    rng = random.Random(3)
    return [(i, round(rng.uniform(10, 30), 2), round(rng.uniform(0.1, 0.5), 3)) for i in range(1, n + 1)]


@pytest.mark.parametrize("layout", ["numeric-ids", "no-id-column", "extra-text-column"])
def test_correlate_refuses_repeated_rows(tmp_path, cli, layout):
    rows = _scores()
    rows2 = rows + rows  # every system twice: n would be 16 instead of 8
    if layout == "numeric-ids":
        text = "system\tbleu\tmap\n" + "".join(f"{s}\t{b}\t{m}\n" for s, b, m in rows2)
    elif layout == "no-id-column":
        text = "bleu\tmap\n" + "".join(f"{b}\t{m}\n" for _, b, m in rows2)
    else:
        text = "system\tnote\tbleu\tmap\n" + "".join(f"{s}\trun{k}\t{b}\t{m}\n" for k, (s, b, m) in enumerate(rows2))
    t = tmp_path / "t.tsv"
    t.write_text(text)
    code, _, err = cli("correlate", "--table", t, "--x", "bleu", "--y", "map")
    assert_one_line_error(code, err, r"t\.tsv:10: .*(appears twice, first on line 2|repeats line 2)")
    t.write_text(text.split("\n", 1)[0] + "\n" + "".join(text.split("\n", 1)[1].splitlines(True)[:8]))
    code, out, _ = cli("correlate", "--table", t, "--x", "bleu", "--y", "map")
    assert code == 0 and json.loads(out)[0]["n"] == 8


def test_correlate_distinct_numeric_systems_pass(tmp_path, cli):
    t = tmp_path / "t.tsv"
    t.write_text("bleu\tmap\n1\t0.1\n2\t0.2\n3\t0.25\n2\t0.2\n")  # no id column, two equal rows: refused
    code, _, err = cli("correlate", "--table", t, "--x", "bleu", "--y", "map")
    assert_one_line_error(code, err, r"t\.tsv:5: this row repeats line 3 and no column names the systems")
    t.write_text("system\tbleu\tmap\na\t1\t0.1\nb\t2\t0.2\nc\t3\t0.25\nd\t2\t0.2\n")  # named: equal scores are fine
    code, out, _ = cli("correlate", "--table", t, "--x", "bleu", "--y", "map")
    assert code == 0 and json.loads(out)[0]["n"] == 4


def test_ir_score_empty_or_unjudged_run_is_refused(tmp_path, cli):
    qrels = tmp_path / "qrels"
    qrels.write_text("q9 0 d1 1\nq8 0 d2 1\n")
    empty = tmp_path / "empty.run"
    empty.write_text("")
    code, _, err = cli("ir-score", "--run", empty, "--qrels", qrels)
    assert_one_line_error(code, err, r"--run .*empty\.run: the run has no ranked documents")
    unjudged = tmp_path / "other.run"
    unjudged.write_text("q1 Q0 d1 1 2.0 t\nq2 Q0 d1 1 2.0 t\n")
    code, _, err = cli("ir-score", "--run", unjudged, "--qrels", qrels)
    assert_one_line_error(code, err, r"none of its 2 queries \('q1', 'q2'\) is judged in .*qrels .*'q9', 'q8'")
    some = tmp_path / "some.run"
    some.write_text("q1 Q0 d1 1 2.0 t\nq9 Q0 d1 1 2.0 t\n")  # one judged query: scored as before
    code, out, _ = cli("ir-score", "--run", some, "--qrels", qrels, "--measures", "map")
    assert code == 0 and json.loads(out)["aggregate"]["map"] == 0.5


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "broken-link"])
@pytest.mark.parametrize("how", ["directory", "glob"])
def test_query_directory_refuses_what_it_cannot_read(tmp_path, kind, how):
    docs = tmp_path / "docs.jsonl"
    docs.write_text(DOCS)
    qdir = tmp_path / "queries"
    qdir.mkdir()
    (qdir / "a.tsv").write_text("q1\tcat\n")
    bad = qdir / "b.tsv"
    if kind == "fifo":
        os.mkfifo(bad)
    else:
        bad.symlink_to("/dev/zero" if kind == "dev-zero" else tmp_path / "nothing-here")
    queries = qdir if how == "directory" else f"{qdir}/*.tsv"
    code, _, err = _sub("retrieve", "--docs", docs, "--queries", queries, "--out", tmp_path / "x.run", timeout=60)
    assert_one_line_error(code, err, r"b\.tsv" + (r" \(No such file" if kind == "broken-link" else
                                                    r" is not a regular file \(a FIFO, device or socket\)"))
    assert not (tmp_path / "x.run").exists()


def test_blank_query_is_noted(tmp_path, cli):
    docs = tmp_path / "docs.jsonl"
    docs.write_text(DOCS)
    q = tmp_path / "q.tsv"
    q.write_text("q1\tcat\nq2\t  \n")
    code, _, err = cli("retrieve", "--docs", docs, "--queries", q, "--out", tmp_path / "x.run")
    assert code == 0
    assert "note: 1 of 2 queries have no text (" in err and "q.tsv:2: 'q2'" in err


# ---- 4. gzip bombs: refused after a few megabytes, in every reader

def _bomb(path: Path, mb: int = 4, byte: bytes = b"\0") -> Path:
    path.write_bytes(gzip.compress(byte * (mb << 20), 6))  # ~1000x: 4 MiB in ~4 kB
    return path


def test_bomb_refused_after_a_few_megabytes(tmp_path):
    """20 MiB of empty lines (every line a loop turn in every reader) is refused within its first 2 MiB."""
    from clir_eval.errors import UserError
    from clir_eval.io.files import InputFile

    p = _bomb(tmp_path / "b.txt.gz", 20, b"\n")
    with InputFile(p) as fh, pytest.raises(UserError, match=r"expands to more than 1048576 bytes at over 100 times"):
        try:
            for _ in fh.lines():
                pass
        finally:
            assert fh._bytes <= 2 << 20  # the ratio is checked from 1 MiB on, every MiB


@pytest.mark.parametrize("reader", ["mt-score-hyp", "mt-score-ref", "retrieve-docs", "retrieve-queries", "ir-score-run",
                                    "ir-score-qrels", "correlate-table", "run-hyp"])
def test_bomb_refused_by_every_reader(tmp_path, cli, reader):
    ok = tmp_path / "ok.txt"
    ok.write_text(REF)
    docs, queries = tmp_path / "docs.jsonl", tmp_path / "q.tsv"
    docs.write_text(DOCS)
    queries.write_text("q1\tcat\n")
    run, qrels = tmp_path / "r.run", tmp_path / "r.qrels"
    run.write_text("q1 Q0 d1 1 2.0 t\n")
    qrels.write_text("q1 0 d1 1\n")
    ext = {"retrieve-docs": ".jsonl", "retrieve-queries": ".tsv", "correlate-table": ".tsv"}.get(reader, ".txt")
    b = _bomb(tmp_path / f"bomb{ext}.gz")
    argv = {
        "mt-score-hyp": ["mt-score", "--hyp", b, "--ref", ok],
        "mt-score-ref": ["mt-score", "--hyp", ok, "--ref", b],
        "retrieve-docs": ["retrieve", "--docs", b, "--queries", queries, "--out", tmp_path / "x.run"],
        "retrieve-queries": ["retrieve", "--docs", docs, "--queries", b, "--out", tmp_path / "x.run"],
        "ir-score-run": ["ir-score", "--run", b, "--qrels", qrels],
        "ir-score-qrels": ["ir-score", "--run", run, "--qrels", b],
        "correlate-table": ["correlate", "--table", b, "--x", "a", "--y", "b"],
    }.get(reader)
    if reader == "run-hyp":
        cfg = _config(tmp_path)
        (tmp_path / "c.txt").unlink()
        _bomb(tmp_path / "c.txt.gz")
        cfg.write_text(cfg.read_text().replace("c.txt", "c.txt.gz"))
        argv = ["run", cfg, "--out", tmp_path / "out", "-q", "--jobs", "1"]
    code, _, err = cli(*argv)
    assert_one_line_error(code, err, r"bomb\S*\.gz: expands to more than 1048576 bytes at over 100 times|"
                                     r"c\.txt\.gz: expands to more than")


def test_gzip_absolute_bound(tmp_path, cli, monkeypatch):
    import random

    rng = random.Random(2)
    text = "".join(" ".join(f"{rng.random():.6f}" for _ in range(8)) + "\n" for _ in range(3000))
    p = tmp_path / "hyp.txt.gz"
    p.write_bytes(gzip.compress(text.encode()))  # a normal ratio (~2.5x)
    ref = tmp_path / "ref.txt"
    ref.write_text(text)
    monkeypatch.setenv("CLIR_EVAL_MAX_GZIP_BYTES", "100000")
    code, _, err = cli("mt-score", "--hyp", p, "--ref", ref)
    assert_one_line_error(code, err, r"hyp\.txt\.gz: expands to more than 100000 bytes \(the bound on any \.gz input\); "
                                     r".*CLIR_EVAL_MAX_GZIP_BYTES")
    monkeypatch.delenv("CLIR_EVAL_MAX_GZIP_BYTES")
    assert cli("mt-score", "--hyp", p, "--ref", ref, "--metrics", "bleu")[0] == 0


# ---- 5. internal errors become one error line

@pytest.mark.parametrize("spec", ["macrof:beta=1e200", "microf:beta=1e200", "microf:k=1e308", "4grr:alpha=1e308",
                                  "bleu:smooth=floor,smooth_value=1e300"])
def test_float_parameters_are_bounded(tmp_path, cli, spec):
    h, r = tmp_path / "h.txt", tmp_path / "r.txt"
    h.write_text(HYPS["b"])
    r.write_text(REF)
    code, _, err = cli("mt-score", "--hyp", h, "--ref", r, "--metrics", spec)
    assert_one_line_error(code, err, r"parameter \w+=.* is too large; the maximum is 1000000000000000")


def test_float_parameter_at_the_bound_scores(tmp_path, cli):
    h, r = tmp_path / "h.txt", tmp_path / "r.txt"
    h.write_text(HYPS["b"])
    r.write_text(REF)
    code, out, err = cli("mt-score", "--hyp", h, "--ref", r, "--metrics", "macrof:beta=1e15,microf:beta=1e15",
                         "--format", "json")
    assert code == 0, err
    assert all(0 <= v["score"] <= 100 for v in json.loads(out).values())


@pytest.mark.parametrize("where", ["document", "query"])
def test_lone_surrogate_id_is_refused(tmp_path, cli, where):
    docs, q = tmp_path / "docs.jsonl", tmp_path / "q.jsonl"
    docs.write_text(DOCS + ('{"id": "d\\ud800", "text": "a cat"}\n' if where == "document" else ""))
    q.write_text('{"id": "q1", "text": "cat"}\n' + ('{"id": "q\\udc00", "text": "dog"}\n' if where == "query" else ""))
    code, _, err = cli("retrieve", "--docs", docs, "--queries", q, "--out", tmp_path / "x.run")
    shown = r"docs\.jsonl:6: a lone surrogate \\ud800" if where == "document" else r"q\.jsonl:2: a lone surrogate \\udc00"
    assert_one_line_error(code, err, shown)
    pair = tmp_path / "pair.jsonl"
    pair.write_text('{"id": "q1", "text": "cat \\ud83d\\ude00"}\n')  # a proper pair is a character
    ok = tmp_path / "ok-docs.jsonl"
    ok.write_text(DOCS)
    assert cli("retrieve", "--docs", ok, "--queries", pair, "--out", tmp_path / "y.run")[0] == 0


@pytest.mark.parametrize("var", ["CLIR_EVAL_MAX_LINE_BYTES", "CLIR_EVAL_MAX_INPUT_BYTES", "CLIR_EVAL_MAX_GZIP_RATIO",
                                 "CLIR_EVAL_MAX_GZIP_BYTES"])
def test_huge_environment_bound_is_refused(tmp_path, cli, monkeypatch, var):
    h = tmp_path / "h.txt.gz"
    h.write_bytes(gzip.compress(REF.encode()))
    monkeypatch.setenv(var, "99999999999999999999999")
    code, _, err = cli("mt-score", "--hyp", h, "--ref", h)
    assert_one_line_error(code, err, rf"environment variable {var}='99999999999999999999999' is too large; "
                                     r"the maximum is 1125899906842624")


def test_data_root_symlink_loop(tmp_path, cli):
    cfg = _config(tmp_path)
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    code, _, err = cli("run", cfg, "--data-root", tmp_path / "loop1", "--out", tmp_path / "out", "-q")
    assert_one_line_error(code, err, r"--data-root .*loop1: cannot resolve the path")
    assert not (tmp_path / "out").exists()


# ---- 6. correlate --item-col

def _items(tmp_path: Path, cell=lambda s, i: f"{s * 0.1 + i * 0.01:.3f}", item=lambda i: f"i{i}") -> Path:
    t = tmp_path / "items.tsv"
    t.write_text("system\titem\tbleu\tmap\n" + "".join(
        f"s{s}\t{item(i)}\t{cell(s, i)}\t{(s * 7 + i * 3) % 5 / 10}\n" for s in range(4) for i in range(4)))
    return t


def test_item_col_refuses_empty_item_id(tmp_path, cli):
    t = _items(tmp_path, item=lambda i: "" if i == 2 else f"i{i}")
    code, _, err = cli("correlate", "--table", t, "--x", "bleu", "--y", "map", "--item-col", "item")
    assert_one_line_error(code, err, r"items\.tsv:4: empty 'item' \(--item-col\)")


def test_item_col_reads_numbers_as_written(tmp_path, cli):
    t = _items(tmp_path, cell=lambda s, i: "1_0" if (s, i) == (1, 1) else f"{s + i * 0.5}")
    code, _, err = cli("correlate", "--table", t, "--x", "bleu", "--y", "map", "--item-col", "item")
    assert_one_line_error(code, err, r"items\.tsv:7: column 'bleu' has non-numeric value '1_0'")


def test_item_col_equal_to_system_col(tmp_path, cli):
    t = _items(tmp_path)
    code, _, err = cli("correlate", "--table", t, "--x", "bleu", "--y", "map", "--item-col", "system")
    assert_one_line_error(code, err, r"--item-col 'system' is also the --system-col")
    code, _, err = cli("correlate", "--table", t, "--x", "bleu", "--y", "map", "--item-col", "map")
    assert_one_line_error(code, err, r"--item-col 'map' is also among the --x/--y score columns")


@pytest.mark.parametrize("option, value", [("--ci", "100000"), ("--permutation", "100000")])
def test_item_col_memory_bound_is_checked_up_front(tmp_path, cli, option, value):
    """12 systems x 1000 items at the largest --ci or --permutation would need ~9-20 GiB: refused before any
    draw, naming the bound (scripts/bench_memory_bounds.py measures what is accepted)."""
    t = tmp_path / "items.tsv"
    t.write_text("system\titem\tbleu\tmap\n" + "".join(f"s{s}\ti{i}\t{(s * 31 + i * 17) % 97}\t{(s * 7 + i) % 89}\n"
                                                       for s in range(12) for i in range(1000)))
    argv = ["correlate", "--table", t, "--x", "bleu", "--y", "map", "--item-col", "item", option, value]
    code, _, err = cli(*argv)
    assert_one_line_error(code, err, r"--item-col: 12 systems x 1000 items with .* would need about \d+\.\d GiB, over "
                                     r"the bound of 4\.0 GiB; .*CLIR_EVAL_MAX_MEMORY_BYTES")


@pytest.mark.parametrize("option", [["--bootstrap", "100000"], ["--report", "REPORT"]])
def test_mt_score_memory_bound_is_checked_up_front(tmp_path, cli, monkeypatch, option):
    """Every segment's statistics in memory (the bootstrap, the per-type report) is estimated from the
    text's size before reading it; past the bound (lowered here to 220 MB) it is refused naming the bound,
    while streamed scoring of the same files runs."""
    h, r = tmp_path / "h.txt.gz", tmp_path / "r.txt"
    text = "".join(f"the cat number {i} sat on the mat and the dog barked at it {i % 7}\n" for i in range(20000))
    h.write_bytes(gzip.compress(text.encode()))
    r.write_text(text)
    monkeypatch.setenv("CLIR_EVAL_MAX_MEMORY_BYTES", "220000000")
    argv = [str(tmp_path / "rep.tsv") if a == "REPORT" else a for a in option]
    code, _, err = cli("mt-score", "--hyp", h, "--ref", r, *argv)
    assert_one_line_error(code, err, r"scoring 2 MiB of text with every segment's statistics in memory .* would need "
                                     r"about 0\.\d GiB, over the bound of 0\.2 GiB; .*CLIR_EVAL_MAX_MEMORY_BYTES")
    assert not (tmp_path / "rep.tsv").exists()
    assert cli("mt-score", "--hyp", h, "--ref", r, "--metrics", "bleu")[0] == 0
