"""Bad files and paths across every command: FIFOs and devices as inputs or outputs (refused at
once, never replaced), missing output directories (never created), gzip bombs, corrupt gzip
data and overlong lines (bounded, with a small bound set through the environment here), duplicate
table rows, unbounded metric/measure parameters, name templates that are not plain names,
config keys given twice or holding NaN or empty lists, empty reference runs; a failed re-run
keeps the previous outputs byte-identical. A UTF-8 byte-order mark is removed with a note.

Each case: exit code 2, one stderr line ``error: ...`` naming the file or field and the fix,
no traceback, nothing written, the previous output untouched, FIFOs and devices unchanged.
"""

from __future__ import annotations

import gzip
import json
import os
import stat
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest
from conftest import assert_one_line_error
from test_bad_inputs import SENTINEL, W, _disk_full, _snapshot

from clir_eval.cli import main

BOMB_BOUND = "65536"  # CLIR_EVAL_MAX_INPUT_BYTES in the bomb cases: a 2 MB bomb is refused after 64 kB
LINE_BOUND = "1000"  # CLIR_EVAL_MAX_LINE_BYTES in the long-line cases


@dataclass
class Case:
    id: str
    argv: Callable[[W], list]
    expect: str  # regex searched in the one error line
    guard: str | None = None  # "good": w.good keeps its text; "out": w.out is not created; "prev": w.out unchanged
    env: dict = field(default_factory=dict)
    fault: str | None = None  # "disk-full"


def fifo(w: W, name: str = "pipe") -> Path:
    p = w.root / name
    if not p.exists():
        os.mkfifo(p)
    return p


def device(w: W, target: str = "/dev/null", name: str = "dev") -> Path:
    """A symbolic link to a character device (a broken refusal would replace the link, not the device)."""
    p = w.root / name
    if not p.is_symlink():
        p.symlink_to(target)
    return p


def bomb(w: W, name: str = "bomb.gz") -> Path:
    """2 MB of empty lines (skipped by every reader) compressed ~1000x: past the test bound at a ratio far above 100."""
    return w.bad(name, gzip.compress(b"\n" * 2_000_000, 9))


def corrupt_gz(w: W, name: str = "corrupt.gz", text: bytes = b"the cat sat\n" * 50) -> Path:
    """A gzip member whose deflate data is damaged (zlib's 'invalid ... code' error)."""
    data = bytearray(gzip.compress(text))
    for i in range(10, len(data) - 8):
        data[i] ^= 0x55
    return w.bad(name, bytes(data))


def long_line(w: W, name: str, head: str = "") -> Path:
    return w.bad(name, head + "x" * 5000 + "\n")


def prev_out(w: W) -> None:
    """A good previous run in w.out (its files must survive the failed re-run)."""
    assert main([str(a) for a in w.run_cmd(w.config())]) == 0


def _run_dir(w: W, fifo: bool = False) -> Path:
    d = w.root / "rundir"
    d.mkdir(exist_ok=True)
    if fifo:
        os.mkfifo(d / "results.json")
    else:
        (d / "results.json").write_text(json.dumps({"systems": {"s1": {"mt": {"bleu": 1.0}, "ir": {"map": 0.1}}}}))
    return d


def mt(w, *extra):
    return ["mt-score", "--hyp", w.hyp, "--ref", w.ref, *extra]


def corr(w, table, *extra):
    return ["correlate", "--table", table, "--x", "bleu", "--y", "map", *extra]


OUT_FILE_COMMANDS = {  # command -> argv with the output path
    "retrieve": lambda w, o: ["retrieve", "--docs", w.docs, "--queries", w.queries, "--out", o],
    "ir-score": lambda w, o: ["ir-score", "--run", w.run, "--qrels", w.qrels, "--out", o],
    "pseudo-qrels": lambda w, o: ["pseudo-qrels", "--run", w.run, "--out", o],
    "mt-score": lambda w, o: mt(w, "--report", o),
    "mt-buckets": lambda w, o: ["mt-buckets", "--hyp", w.hyp, "--ref", w.ref, "--plot", o],
    "favoritism": lambda w, o: ["favoritism", "--hyp", w.hyp, "--hyp", w.hyp2, "--ref", w.ref, "--out", o],
    "correlate": lambda w, o: corr(w, w.table, "--out", o),
}
OPTION = {"mt-score": "--report", "mt-buckets": "--plot"}

CASES: list[Case] = []
for cmd, argv in OUT_FILE_COMMANDS.items():
    opt = OPTION.get(cmd, "--out")
    CASES += [
        Case(f"{cmd}-out-fifo", lambda w, a=argv: a(w, fifo(w)), rf"{opt} .*pipe is a FIFO \(named pipe\), not a regular "
             r"file; give the path of a file"),
        Case(f"{cmd}-out-device", lambda w, a=argv: a(w, device(w)), rf"{opt} .*dev is a character device, not a regular file"),
        Case(f"{cmd}-out-missing-parent", lambda w, a=argv: a(w, w.root / "nodir" / "sub" / "x.out"),
             r"the directory .*nodir/sub does not exist; create it first"),
    ]

INPUTS = {  # input option -> (argv with the bad path, the file's extension): every input goes through the one reader
    "mt-score-hyp": (lambda w, p: ["mt-score", "--hyp", p, "--ref", w.ref], ".txt"),
    "mt-score-ref": (lambda w, p: ["mt-score", "--hyp", w.hyp, "--ref", p], ".txt"),
    "retrieve-docs": (lambda w, p: ["retrieve", "--docs", p, "--queries", w.queries, "--out", w.good], ".jsonl"),
    "retrieve-queries": (lambda w, p: ["retrieve", "--docs", w.docs, "--queries", p, "--out", w.good], ".tsv"),
    "ir-score-run": (lambda w, p: ["ir-score", "--run", p, "--qrels", w.qrels, "--out", w.good], ".run"),
    "ir-score-qrels": (lambda w, p: ["ir-score", "--run", w.run, "--qrels", p, "--out", w.good], ".qrels"),
    "correlate-table": (lambda w, p: corr(w, p, "--out", w.good), ".tsv"),
}
for name, (argv, ext) in INPUTS.items():
    CASES += [
        Case(f"{name}-fifo", lambda w, a=argv, e=ext: a(w, fifo(w, f"pipe{e}")), r"pipe\.\w+ is a FIFO \(named pipe\), "
             r"not a regular file; save the data to a file", "good"),
        Case(f"{name}-dev-zero", lambda w, a=argv, e=ext: a(w, device(w, "/dev/zero", f"zero{e}")),
             r"zero\.\w+ is a character device, not a regular file", "good"),
        Case(f"{name}-gzip-bomb", lambda w, a=argv, e=ext: a(w, bomb(w, f"bomb{e}.gz")), r"bomb\.\w+\.gz: expands to "
             r"more than 65536 bytes at over 100 times its compressed size .* CLIR_EVAL_MAX_INPUT_BYTES", "good",
             {"CLIR_EVAL_MAX_INPUT_BYTES": BOMB_BOUND}),
        Case(f"{name}-corrupt-gzip", lambda w, a=argv, e=ext: a(w, corrupt_gz(w, f"corrupt{e}.gz")),
             r"corrupt\.\w+\.gz: cannot read \(.*\); check the file is complete", "good"),
    ]
for name in ("mt-score-hyp", "retrieve-docs", "retrieve-queries", "ir-score-run", "correlate-table"):
    argv, ext = INPUTS[name]
    CASES.append(Case(f"{name}-line-too-long", lambda w, a=argv, e=ext: a(w, long_line(w, f"long{e}")),
                      r"long\.\w+:1: line longer than 1000 bytes; .*CLIR_EVAL_MAX_LINE_BYTES", "good",
                      {"CLIR_EVAL_MAX_LINE_BYTES": LINE_BOUND}))

DUP_TABLE = "system\tbleu\tmap\n" + "".join(f"s{i}\t{i}.5\t0.{i}\n" for i in range(1, 6)) + "s2\t2.5\t0.2\n"
CASES += [
    # ---- run / demo output directories
    Case("run-out-fifo", lambda w: ["run", w.config(), "--out", fifo(w)], r"--out .*pipe is a FIFO \(named pipe\), "
         r"not a directory"),
    Case("run-out-missing-parent", lambda w: ["run", w.config(), "--out", w.root / "nodir" / "exp"],
         r"--out .*nodir/exp: the directory .*nodir does not exist; create it first"),
    Case("demo-out-missing-parent", lambda w: ["demo", "--out", w.root / "nodir" / "demo", "-q"],
         r"the directory .*nodir does not exist"),
    Case("run-config-fifo", lambda w: ["run", fifo(w), "--out", w.out], r"pipe is a FIFO", "out"),
    Case("validate-config-dev-zero", lambda w: ["validate", device(w, "/dev/zero", "zero")], r"zero is a character device"),
    Case("run-hyp-fifo", lambda w: w.run_cmd(w.config(systems=[{"name": "a", "hyp": "pipe"}, *[
        {"name": n, "hyp": f"sys/{n}.txt"} for n in ("b", "c")]])) if fifo(w) else [],
         r"systems\[0\]\.hyp: .*pipe is not a regular file \(a FIFO or device\)", "out"),
    Case("run-rerun-disk-full-keeps-previous", lambda w: prev_out(w) or w.run_cmd(w.config(mt={"metrics": ["chrf1"]})),
         r"no space left writing", "prev", fault="disk-full"),
    Case("mtme-export-out-missing-parent", lambda w: ["mtme-export", _run_dir(w), "--lp", "xx-en", "--out",
                                                      w.root / "nodir" / "mtme"], r"the directory .*nodir does not exist"),
    Case("mtme-export-results-fifo", lambda w: ["mtme-export", _run_dir(w, fifo=True), "--lp", "xx-en", "--out",
                                                w.root / "mtme"], r"results\.json is a FIFO \(named pipe\)"),
    # ---- tables
    Case("correlate-duplicate-system-row", lambda w: corr(w, w.bad("dup.tsv", DUP_TABLE)),
         r"dup\.tsv:7: the row \(system='s2'\) appears twice, first on line 3; keep one row per system"),
    Case("correlate-duplicate-row-in-group", lambda w: corr(w, w.bad("dup.tsv", "lang\tsystem\tbleu\tmap\n" + "".join(
        f"{g}\ts{i}\t{i}\t{i}\n" for g in ("cs", "de") for i in range(4)) + "de\ts1\t5\t5\n"), "--group-by", "lang"),
         r"dup\.tsv:10: the row \(lang='de', system='s1'\) appears twice, first on line 7"),
    Case("correlate-header-only", lambda w: corr(w, w.bad("head.tsv", "system\tbleu\tmap\n")),
         r"head\.tsv: the table has a header but no rows; add one row per system$"),
    # ---- metric and measure parameters
    Case("mt-score-chrf-char-order-huge", lambda w: mt(w, "--metrics", "chrf:char_order=1000000000"),
         r"parameter char_order='1000000000' in metric .* is too large; the maximum is 20"),
    Case("mt-score-chrf-word-order-huge", lambda w: mt(w, "--metrics", "chrf:word_order=50"), r"word_order='50' .*maximum is 20"),
    Case("mt-score-bleu-order-huge", lambda w: mt(w, "--metrics", "bleu:order=21"), r"order='21' .*maximum is 20"),
    Case("mt-score-chrf-beta-huge", lambda w: mt(w, "--metrics", "chrf:beta=100000"), r"beta='100000' .*maximum is 1000"),
    Case("mt-score-smooth-value-nan", lambda w: mt(w, "--metrics", "bleu:smooth=floor,smooth_value=nan"),
         r"smooth_value='nan' .* must be a finite number"),
    Case("mt-score-microf-k-inf", lambda w: mt(w, "--metrics", "microf:k=inf"), r"k='inf' .* must be a finite number"),
    Case("ir-score-ndcg-cut-huge", lambda w: ["ir-score", "--run", w.run, "--qrels", w.qrels, "--measures",
                                              "ndcg_cut_100000000000000000000"], r"ndcg_cut_1000.* is above the largest depth 100000"),
    Case("ir-score-p-at-huge", lambda w: ["ir-score", "--run", w.run, "--qrels", w.qrels, "--measures", "P@1000000"],
         r"1000000 is above the largest depth 100000"),
    Case("ir-score-rbo-depth-huge", lambda w: ["ir-score", "--run", w.run, "--reference-run", w.run, "--qrels", w.qrels,
                                               "--measures", "rbo:depth=1000000"], r"depth='1000000' .*maximum is 100000"),
    Case("ir-score-aqwv-cutoff-huge", lambda w: ["ir-score", "--run", w.run, "--qrels", w.qrels, "--measures",
                                                 "aqwv:cutoff=1000000000"], r"cutoff='1000000000' .*maximum is 100000"),
    Case("ir-score-aqwv-beta-nan", lambda w: ["ir-score", "--run", w.run, "--qrels", w.qrels, "--measures", "aqwv:beta=nan"],
         r"beta='nan' .* must be a finite number"),
    Case("run-metric-param-huge", lambda w: w.run_cmd(w.config(mt={"metrics": ["chrf:char_order=1000000000"]})),
         r"char_order='1000000000' .*maximum is 20", "out"),
    # ---- name templates
    Case("run-name-template-width", lambda w: w.run_cmd(w.config(systems={"pattern": "sys/{n}.txt",
                                                                          "name": "{n:>3000000000}"})),
         r"systems\.name: template '\{n:>3000000000\}' .*a width of at most 256", "out"),
    Case("run-name-template-attribute", lambda w: w.run_cmd(w.config(systems={"pattern": "sys/{n}.txt",
                                                                              "name": "{n.__class__}"})),
         r"systems\.name: template .*attribute names only", "out"),
    Case("run-name-template-index", lambda w: w.run_cmd(w.config(systems={"pattern": "sys/{n}.txt", "name": "{n[0]}"})),
         r"systems\.name: template .*attribute names only", "out"),
    Case("run-name-template-conversion", lambda w: w.run_cmd(w.config(systems={"pattern": "sys/{n}.txt", "name": "{n!r}"})),
         r"systems\.name: template .*attribute names only", "out"),
    # ---- config values
    Case("run-config-duplicate-key", lambda w: w.run_cmd(w.config(text=w.config().read_text() + "seed: 1\nseed: 2\n")),
         r"config\.yaml:\d+: the key 'seed' is given twice in one mapping \(first on line \d+\); keep one", "out"),
    Case("run-config-duplicate-nested-key", lambda w: w.run_cmd(w.config(
        text="name: x\nmt:\n  refs: [ref.txt]\n  metrics: [bleu]\n  metrics: [chrf1]\n")),
         r"config\.yaml:5: the key 'metrics' is given twice .*first on line 4", "out"),
    Case("validate-duplicate-key", lambda w: ["validate", w.config(text="name: x\nname: y\n")], r"key 'name' is given twice"),
    Case("run-k1-nan", lambda w: w.run_cmd(w.config(text=w.config().read_text() + "retrieval: {k1: .nan}\n")),
         r"retrieval\.k1: expected a finite number, got nan", "out"),
    Case("run-b-inf", lambda w: w.run_cmd(w.config(text=w.config().read_text() + "retrieval: {b: .inf}\n")),
         r"retrieval\.b: expected a finite number, got inf", "out"),
    Case("run-alpha-nan", lambda w: w.run_cmd(w.config(text=w.config().read_text() + "correlation: {alpha: .nan}\n")),
         r"correlation\.alpha: expected a finite number", "out"),
    Case("run-measures-empty", lambda w: w.run_cmd(w.config(ir={"measures": []})),
         r"ir\.measures: an empty list; name at least one measure", "out"),
    Case("run-metrics-empty", lambda w: w.run_cmd(w.config(mt={"metrics": []})),
         r"mt\.metrics: an empty list; name at least one metric", "out"),
    Case("run-round-unknown-score", lambda w: w.run_cmd(w.config(correlation={"round": {"nosuch": 1}})),
         r"correlation\.round\.nosuch: no score of this run is called 'nosuch'; use one of: bleu", "out"),
    # ---- empty reference runs
    Case("pseudo-qrels-run-empty", lambda w: ["pseudo-qrels", "--run", w.bad("empty.run", ""), "--out", w.good],
         r"--run .*empty\.run: the run has no ranked documents", "good"),
    Case("ir-score-reference-run-empty", lambda w: ["ir-score", "--run", w.run, "--reference-run", w.bad("empty.run", ""),
                                                    "--pseudo-qrels", "2", "--out", w.good],
         r"--reference-run .*empty\.run: the run has no ranked documents", "good"),
]


def _kinds(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): os.lstat(p).st_mode for p in root.rglob("*")}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_file(case: Case, tmp_path, capsys, monkeypatch):
    if case.fault == "disk-full" and not Path("/dev/full").exists():
        pytest.skip("/dev/full is not available to simulate a full disk")
    w = W(tmp_path)
    for k, v in case.env.items():
        monkeypatch.setenv(k, v)
    argv = [str(a) for a in case.argv(w)]
    capsys.readouterr()
    before, kinds = _snapshot(tmp_path), _kinds(tmp_path)
    if case.fault == "disk-full":
        _disk_full(monkeypatch, tmp_path)
    try:
        code = main(argv)
    finally:
        monkeypatch.undo()
    out, err = capsys.readouterr()
    assert_one_line_error(code, err, case.expect)
    if case.guard == "good":
        assert w.good.read_text() == SENTINEL, "a previous output was clobbered"
    if case.guard == "out":
        assert not w.out.exists(), "a failed command created its --out"
    after = _snapshot(tmp_path)
    assert not [k for k in after if k.endswith(".tmp") or ".staging." in k or ".clir-eval-probe" in k], after.keys()
    if case.guard == "prev":  # the previous run's outputs byte-identical (its cache may have grown)
        changed = [k for k in before if not k.startswith("out/cache/") and k != "out/.clir-eval.lock"
                   and after.get(k) != before[k]]
        assert not changed, changed
    elif case.fault != "disk-full":
        assert after == before, sorted(k for k in set(after) | set(before) if after.get(k) != before.get(k))
    assert _kinds(tmp_path).items() >= {k: v for k, v in kinds.items() if not stat.S_ISREG(v)}.items(), \
        "a FIFO, device link or directory was replaced"
    assert not (tmp_path / "nodir").exists(), "a missing output directory was created"


def test_cases():
    """More than 60 cases, over every command that reads or writes files."""
    assert len(CASES) > 60
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("kind", ["queries", "hyp", "run"])
def test_byte_order_mark_is_removed_with_a_note(tmp_path, capsys, kind):
    """A UTF-8 BOM would join the first query id / segment / run line: it is removed (with a note)
    and the result equals that of the file without it."""
    w = W(tmp_path)
    src = {"queries": w.queries, "hyp": w.hyp, "run": w.run}[kind]
    bom = w.bad(f"bom-{src.name}", b"\xef\xbb\xbf" + src.read_bytes())
    argv = {"queries": lambda q: ["retrieve", "--docs", w.docs, "--queries", q, "--out", tmp_path / f"{q.name}.run"],
            "hyp": lambda h: ["mt-score", "--hyp", h, "--ref", w.ref, "--metrics", "bleu,chrf1,macrof1"],
            "run": lambda r: ["ir-score", "--run", r, "--qrels", w.qrels]}[kind]
    outputs = []
    for path in (src, bom):
        assert main([str(a) for a in argv(path)]) == 0
        out, err = capsys.readouterr()
        if kind == "queries":
            out = (tmp_path / f"{path.name}.run").read_text()
        outputs.append((out.replace(str(bom), str(src)), err))
    assert outputs[0][0] == outputs[1][0]
    note = f"note: {bom}: removed the UTF-8 byte-order mark at the start of the file\n"
    assert "byte-order mark" not in outputs[0][1]
    assert outputs[1][1].count(note) == 1


def test_unknown_xml_encoding_is_a_user_error(tmp_path):
    from clir_eval.errors import UserError
    from clir_eval.sources.wmt import read_wmt_xml

    p = tmp_path / "test.xml"
    for enc, why in (("klingon", "unknown encoding"), ("UTF-7", "multi-byte encodings")):
        p.write_text(f'<?xml version="1.0" encoding="{enc}"?>\n<dataset id="x"></dataset>\n')
        with pytest.raises(UserError, match=rf"test\.xml: cannot decode the XML \(.*{why}.*\); re-encode the file as UTF-8"):
            read_wmt_xml(p)


def test_gzip_past_the_bound_at_a_normal_ratio_is_read(tmp_path, monkeypatch):
    """The bound is a bomb guard, not a size cap: a .gz past it at a text-like ratio reads fine."""
    import random

    from clir_eval.io.files import read_lines

    rng = random.Random(1)
    text = "".join(" ".join(f"{rng.random():.6f}" for _ in range(8)) + "\n" for _ in range(3000))
    p = tmp_path / "big.gz"
    p.write_bytes(gzip.compress(text.encode()))
    monkeypatch.setenv("CLIR_EVAL_MAX_INPUT_BYTES", "10000")
    assert len(text) > 10 * 10000 and len(text) / p.stat().st_size < 100
    assert read_lines(p) == text.splitlines()
    q = tmp_path / "bomb.gz"
    q.write_bytes(gzip.compress(b"a\n" * 1_000_000, 9))
    from clir_eval.errors import UserError

    with pytest.raises(UserError, match="expands to more than"):
        read_lines(q)
    assert zlib  # the corrupt-gzip cases raise zlib.error inside gzip, reported as 'cannot read'
