"""Bad inputs across every command and config field (issue 13).

Each case runs the CLI in-process and must give exit code 2, exactly one stderr line
starting with ``error:`` (matching the case's pattern), no traceback, and -- where an
output path is involved -- no partial file and no clobbered previous output.
Faults are simulated through the real code paths: a read-only directory (chmod, plus
refused creates when running as root, who ignores modes) and a full disk (writes go to
/dev/full, which fails with ENOSPC).
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
import yaml
from conftest import assert_one_line_error

from clir_eval.cli import main

GOOD_RUN = "".join(f"q{q} Q0 d{d} {r} {10 - r}.5 t\n" for q in (1, 2, 3) for r, d in enumerate((1, 2, 3, 4, 5), 1))
GOOD_QRELS = "q1 0 d1 1\nq1 0 d3 1\nq2 0 d2 1\nq3 0 d5 2\n"
SENTINEL = "previous good output\n"


class W:
    """The workspace of one case: small valid inputs and the paths the case may write."""

    def __init__(self, root: Path):
        self.root = root
        self.run = self._w("run.txt", GOOD_RUN)
        self.qrels = self._w("qrels.txt", GOOD_QRELS)
        self.hyp = self._w("hyp.txt", "the cat sat on the mat\na dog barks\nhello world\n")
        self.hyp2 = self._w("hyp2.txt", "the cat is on a mat\nthe dog barks\nhello there world\n")
        self.ref = self._w("ref.txt", "the cat sat on the mat\nthe dog barks\nhello world\n")
        self.docs = self._w("docs.jsonl", "".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(
            ("a cat on a mat", "a dog", "the cat and the dog", "fish swim", "birds fly"), 1)))
        self.queries = self._w("queries.tsv", "q1\tcat\nq2\tdog mat\n")
        self.table = self._w("table.tsv", "system\tbleu\tmap\n" + "".join(f"s{i}\t{i}.5\t0.{i}\n" for i in range(1, 6)))
        self.good = self._w("good.out", SENTINEL)  # a previous good output that must survive
        self.outdir = root / "outdir"
        self.outdir.mkdir()
        self.ro = root / "readonly"
        self.ro.mkdir()
        self.out = root / "out"  # an output directory that must not appear after a failed run
        for name in ("a", "b", "c"):
            self._w(f"sys/{name}.txt", "the cat sat on a mat\nthe dog barks\nhello world\n")

    def _w(self, name: str, text: str) -> Path:
        p = self.root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        return p

    def bad(self, name: str, text: str | bytes) -> Path:
        p = self.root / name
        (p.write_bytes if isinstance(text, bytes) else p.write_text)(text)
        return p

    def config(self, data: dict | None = None, text: str | None = None, **top) -> Path:
        """A valid MT-only experiment (3 systems), changed by ``top``, or raw ``text``."""
        if text is None:
            data = data or {
                "name": "bad-inputs",
                "systems": [{"name": n, "hyp": f"sys/{n}.txt"} for n in ("a", "b", "c")],
                "mt": {"refs": ["ref.txt"], "metrics": ["bleu"]},
            }
            for k, v in top.items():
                if isinstance(v, dict) and isinstance(data.get(k), dict):
                    data[k] = {**data[k], **v}
                else:
                    data[k] = v
            text = yaml.safe_dump(data, allow_unicode=True)
        return self.bad("config.yaml", text)

    def run_cmd(self, cfg: Path, *extra) -> list:
        return ["run", cfg, "--out", self.out, "--jobs", "1", "-q", *extra]


@dataclass
class Case:
    id: str
    argv: Callable[[W], list]
    expect: str  # regex searched in the error line
    guard: str | None = None  # attribute of W naming an output that must be absent or untouched after the error
    fault: str | None = None  # "readonly" or "disk-full"


def _report_dir(w: W, results) -> Path:
    d = w.root / "report-dir"
    shutil.copytree(GOOD_REPORT_DIR, d)
    (d / "results.json").write_text(results if isinstance(results, str) else json.dumps(results))
    return d


def _bomb_config(w: W) -> Path:
    """Billion laughs in a system attribute: 9 levels of 9 aliases = 9**9 strings once expanded."""
    levels = ["        l0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"]
    levels += [f"        l{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9)]
    return w.config(text="name: bomb\nmt: {refs: [ref.txt], metrics: [bleu]}\nsystems:\n"
                         "  - name: a\n    hyp: sys/a.txt\n    attrs:\n" + "".join(levels)
                    + "  - {name: b, hyp: sys/b.txt, attrs: {big: *a8}}\n  - {name: c, hyp: sys/c.txt}\n")


RUN_FILES = {
    "rank-not-numeric": ("q1 Q0 d1 one 1.5 t\n", r"run\.bad:1: rank 'one' is not an integer"),
    "score-nan": ("q1 Q0 d1 1 nan t\n", r"run\.bad:1: score 'nan' is not a finite number"),
    "score-inf": ("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 -inf t\n", r"run\.bad:2: score '-inf' is not a finite number"),
    "score-text": ("q1 Q0 d1 1 high t\n", r"run\.bad:1: score 'high' is not a number"),
    "five-columns": ("q1 Q0 d1 1 2.0\n", r"run\.bad:1: a TREC run line needs 6 columns"),
    "duplicate-doc": ("q1 Q0 d1 1 2.0 t\nq1 Q0 d1 2 1.0 t\n", r"run\.bad:2: document 'd1' appears twice"),
}
QRELS_FILES = {
    "rel-not-int": ("q1 0 d1 yes\n", r"qrels\.bad:1: relevance 'yes' is not an integer"),
    "rel-float": ("q1 0 d1 0.5\n", r"qrels\.bad:1: relevance '0.5' is not an integer"),
    "rel-huge": ("q1 0 d1 99999999999999999999\n", r"qrels\.bad:1: relevance 99999999999999999999 is out of range"),
    "three-columns": ("q1 d1 1\n", r"qrels\.bad:1: a qrels line needs 4 columns"),
    "conflicting": ("q1 0 d1 1\nq1 0 d1 0\n", r"qrels\.bad:2: document 'd1' judged twice"),
}

CASES: list[Case] = []
for key, (text, pat) in RUN_FILES.items():
    CASES.append(Case(f"ir-score-run-{key}", lambda w, t=text: ["ir-score", "--run", w.bad("run.bad", t),
                                                                "--qrels", w.qrels, "--out", w.good], pat, "good"))
for key, (text, pat) in list(RUN_FILES.items())[:3]:
    CASES.append(Case(f"pseudo-qrels-run-{key}", lambda w, t=text: ["pseudo-qrels", "--run", w.bad("run.bad", t),
                                                                    "--out", w.good], pat, "good"))
    CASES.append(Case(f"ir-score-reference-run-{key}", lambda w, t=text: [
        "ir-score", "--run", w.run, "--reference-run", w.bad("run.bad", t), "--pseudo-qrels", "2"], pat))
for key, (text, pat) in QRELS_FILES.items():
    CASES.append(Case(f"ir-score-qrels-{key}", lambda w, t=text: ["ir-score", "--run", w.run, "--qrels",
                                                                  w.bad("qrels.bad", t), "--out", w.good], pat, "good"))

CASES += [
    # ---- retrieve
    Case("retrieve-out-is-dir", lambda w: ["retrieve", "--docs", w.docs, "--queries", w.queries, "--out", w.outdir],
         r"--out .*outdir is an existing directory; give a file path"),
    Case("retrieve-out-readonly", lambda w: ["retrieve", "--docs", w.docs, "--queries", w.queries,
                                             "--out", w.ro / "run.txt"], r"readonly.*permission denied", fault="readonly"),
    Case("retrieve-out-parent-is-file", lambda w: ["retrieve", "--docs", w.docs, "--queries", w.queries,
                                                   "--out", w.good / "run.txt"], r"good\.out is a file, not a directory",
         "good"),
    Case("retrieve-depth-huge", lambda w: ["retrieve", "--docs", w.docs, "--queries", w.queries, "--out", w.good,
                                           "--depth", "1000000000"], r"--depth: 1000000000 is too large; the maximum is",
         "good"),
    Case("retrieve-depth-zero", lambda w: ["retrieve", "--docs", w.docs, "--queries", w.queries, "--out", w.good,
                                           "--depth", "0"], r"--depth 0 must be a positive integer", "good"),
    Case("retrieve-docs-missing", lambda w: ["retrieve", "--docs", w.root / "nope.jsonl", "--queries", w.queries,
                                             "--out", w.good], r"nope\.jsonl", "good"),
    Case("retrieve-docs-is-dir", lambda w: ["retrieve", "--docs", w.outdir, "--queries", w.queries,
                                            "--out", w.good], r"outdir", "good"),
    Case("retrieve-docs-bad-json", lambda w: ["retrieve", "--docs", w.bad("d.jsonl", '{"id": "d1", "text": "x"}\n{oops\n'),
                                              "--queries", w.queries, "--out", w.good], r"d\.jsonl:2: invalid JSON", "good"),
    Case("retrieve-docs-duplicate-id", lambda w: ["retrieve", "--docs", w.bad("d.tsv", "d1\tcat\nd1\tdog\n"),
                                                  "--queries", w.queries, "--out", w.good], r"duplicate document id 'd1'",
         "good"),
    Case("retrieve-tag-with-space", lambda w: ["retrieve", "--docs", w.docs, "--queries", w.queries, "--out", w.good,
                                               "--tag", "my tag"], r"--tag 'my tag' must be one word", "good"),
    Case("retrieve-unknown-backend", lambda w: ["retrieve", "--docs", w.docs, "--queries", w.queries, "--out", w.good,
                                                "--backend", "lucene9"], r"lucene9", "good"),
    Case("retrieve-queries-missing", lambda w: ["retrieve", "--docs", w.docs, "--queries", w.root / "q.tsv",
                                                "--out", w.good], r"q\.tsv", "good"),
    Case("retrieve-out-disk-full", lambda w: ["retrieve", "--docs", w.docs, "--queries", w.queries, "--out", w.good],
         r"no space left writing .*good\.out; free space and re-run", "good", fault="disk-full"),
    # ---- ir-score / pseudo-qrels
    Case("ir-score-out-is-dir", lambda w: ["ir-score", "--run", w.run, "--qrels", w.qrels, "--out", w.outdir],
         r"--out .*outdir is an existing directory"),
    Case("ir-score-out-readonly", lambda w: ["ir-score", "--run", w.run, "--qrels", w.qrels, "--out", w.ro / "s.json"],
         r"permission denied", fault="readonly"),
    Case("ir-score-out-disk-full", lambda w: ["ir-score", "--run", w.run, "--qrels", w.qrels, "--out", w.good],
         r"no space left writing .*good\.out", "good", fault="disk-full"),
    Case("ir-score-qrels-and-pseudo", lambda w: ["ir-score", "--run", w.run, "--qrels", w.qrels, "--pseudo-qrels", "5"],
         r"give exactly one of --qrels FILE or --pseudo-qrels K"),
    Case("ir-score-no-relevance", lambda w: ["ir-score", "--run", w.run], r"give exactly one of --qrels"),
    Case("ir-score-pseudo-without-reference", lambda w: ["ir-score", "--run", w.run, "--pseudo-qrels", "5"],
         r"--pseudo-qrels needs --reference-run"),
    Case("ir-score-pseudo-huge", lambda w: ["ir-score", "--run", w.run, "--reference-run", w.run,
                                            "--pseudo-qrels", "1000000000"], r"--pseudo-qrels: 1000000000 is too large"),
    Case("ir-score-bad-format", lambda w: ["ir-score", "--run", w.run, "--qrels", w.qrels, "--format", "xml"],
         r"--format must be json or tsv"),
    Case("ir-score-unknown-measure", lambda w: ["ir-score", "--run", w.run, "--qrels", w.qrels, "--measures", "map,bogus"],
         r"bogus"),
    Case("ir-score-run-not-utf8", lambda w: ["ir-score", "--run", w.bad("run.bad", b"q1 Q0 d\xff 1 1.0 t\n"),
                                             "--qrels", w.qrels], r"run\.bad:1: not valid UTF-8"),
    Case("ir-score-run-truncated-gz", lambda w: ["ir-score", "--run", w.bad("run.gz", gzip.compress(GOOD_RUN.encode())[:40]),
                                                 "--qrels", w.qrels], r"run\.gz: cannot read .*check the file is complete"),
    Case("ir-score-run-missing", lambda w: ["ir-score", "--run", w.root / "none.run", "--qrels", w.qrels],
         r"file not found: .*none\.run"),
    Case("pseudo-qrels-out-is-dir", lambda w: ["pseudo-qrels", "--run", w.run, "--out", w.outdir],
         r"--out .*outdir is an existing directory"),
    Case("pseudo-qrels-top-k-zero", lambda w: ["pseudo-qrels", "--run", w.run, "--out", w.good, "--top-k", "0"],
         r"pseudo-qrels depth must be a positive integer", "good"),
    Case("pseudo-qrels-top-k-huge", lambda w: ["pseudo-qrels", "--run", w.run, "--out", w.good, "--top-k", "1000000000"],
         r"--top-k: 1000000000 is too large; the maximum is 100000", "good"),
    Case("pseudo-qrels-out-disk-full", lambda w: ["pseudo-qrels", "--run", w.run, "--out", w.good],
         r"no space left writing .*good\.out", "good", fault="disk-full"),
    # ---- mt-score / mt-compare
    Case("mt-score-report-is-dir", lambda w: ["mt-score", "--hyp", w.hyp, "--ref", w.ref, "--report", w.outdir],
         r"--report .*outdir is an existing directory"),
    Case("mt-score-report-readonly", lambda w: ["mt-score", "--hyp", w.hyp, "--ref", w.ref, "--report", w.ro / "t.tsv"],
         r"permission denied", fault="readonly"),
    Case("mt-score-report-disk-full", lambda w: ["mt-score", "--hyp", w.hyp, "--ref", w.ref, "--report", w.good],
         r"no space left writing .*good\.out", "good", fault="disk-full"),
    Case("mt-score-seed-negative", lambda w: ["mt-score", "--hyp", w.hyp, "--ref", w.ref, "--bootstrap", "10",
                                              "--seed", "-1"], r"--seed: -1 is not a valid seed; use an integer from 0"),
    Case("mt-score-bootstrap-huge", lambda w: ["mt-score", "--hyp", w.hyp, "--ref", w.ref, "--bootstrap", "1000000000"],
         r"--bootstrap: 1000000000 is too large; the maximum is 100000"),
    Case("mt-score-bootstrap-negative", lambda w: ["mt-score", "--hyp", w.hyp, "--ref", w.ref, "--bootstrap", "-5"],
         r"--bootstrap must be >= 1"),
    Case("mt-score-line-mismatch", lambda w: ["mt-score", "--hyp", w.bad("short.txt", "one line\n"), "--ref", w.ref],
         r"short\.txt.*1.*3"),
    Case("mt-score-unknown-metric", lambda w: ["mt-score", "--hyp", w.hyp, "--ref", w.ref, "--metrics", "bleu,comet99"],
         r"comet99"),
    Case("mt-score-bad-format", lambda w: ["mt-score", "--hyp", w.hyp, "--ref", w.ref, "--format", "yaml"],
         r"--format must be json or text"),
    Case("mt-score-hyp-missing", lambda w: ["mt-score", "--hyp", w.root / "nohyp.txt", "--ref", w.ref], r"nohyp\.txt"),
    Case("mt-score-hyp-empty", lambda w: ["mt-score", "--hyp", w.bad("empty.txt", ""), "--ref", w.ref],
         r"empty\.txt is empty"),
    Case("mt-compare-one-system", lambda w: ["mt-compare", "--hyp", w.hyp, "--ref", w.ref],
         r"mt-compare needs a baseline and at least one system"),
    Case("mt-compare-same-file-twice", lambda w: ["mt-compare", "--hyp", w.hyp, "--hyp", w.hyp, "--ref", w.ref],
         r"the same --hyp file is given twice"),
    Case("mt-compare-ar-trials-huge", lambda w: ["mt-compare", "--hyp", w.hyp, "--hyp", w.hyp2, "--ref", w.ref,
                                                 "--ar-trials", "1000000000"], r"--ar-trials: 1000000000 is too large"),
    Case("mt-buckets-plot-is-dir", lambda w: ["mt-buckets", "--hyp", w.hyp, "--ref", w.ref, "--plot", w.outdir],
         r"--plot .*outdir is an existing directory"),
    Case("mt-buckets-plot-readonly", lambda w: ["mt-buckets", "--hyp", w.hyp, "--ref", w.ref, "--plot", w.ro / "b.png"],
         r"permission denied", fault="readonly"),
    Case("mt-buckets-bad-buckets", lambda w: ["mt-buckets", "--hyp", w.hyp, "--ref", w.ref, "--buckets", "100,10"],
         r"--buckets must be increasing positive integers"),
    Case("favoritism-out-is-dir", lambda w: ["favoritism", "--hyp", w.hyp, "--hyp", w.hyp2, "--ref", w.ref,
                                             "--out", w.outdir], r"--out .*outdir is an existing directory"),
    Case("favoritism-out-disk-full", lambda w: ["favoritism", "--hyp", w.hyp, "--hyp", w.hyp2, "--ref", w.ref,
                                                "--out", w.good], r"no space left writing .*good\.out", "good",
         fault="disk-full"),
    Case("favoritism-one-system", lambda w: ["favoritism", "--hyp", w.hyp, "--ref", w.ref],
         r"favoritism needs exactly two systems"),
    Case("favoritism-top-huge", lambda w: ["favoritism", "--hyp", w.hyp, "--hyp", w.hyp2, "--ref", w.ref,
                                           "--top", "1000000000"], r"--top: 1000000000 is too large"),
    Case("favoritism-src-mismatch", lambda w: ["favoritism", "--hyp", w.hyp, "--hyp", w.hyp2, "--ref", w.ref,
                                               "--src", w.bad("src.txt", "one\n")], r"line count mismatch: .*src\.txt"),
    Case("mt-compare-bootstrap-zero", lambda w: ["mt-compare", "--hyp", w.hyp, "--hyp", w.hyp2, "--ref", w.ref,
                                                 "--bootstrap", "0"], r"--bootstrap 0 must be a positive integer"),
    Case("mt-compare-bootstrap-huge", lambda w: ["mt-compare", "--hyp", w.hyp, "--hyp", w.hyp2, "--ref", w.ref,
                                                 "--bootstrap", "1000000000"], r"--bootstrap: 1000000000 is too large"),
    Case("mt-compare-seed-negative", lambda w: ["mt-compare", "--hyp", w.hyp, "--hyp", w.hyp2, "--ref", w.ref,
                                                "--seed", "-1"], r"--seed -1 must be >= 0 and <= 4294967295"),
    # ---- correlate
    Case("correlate-out-is-dir", lambda w: ["correlate", "--table", w.table, "--x", "bleu", "--y", "map",
                                            "--out", w.outdir], r"--out .*outdir is an existing directory"),
    Case("correlate-out-readonly", lambda w: ["correlate", "--table", w.table, "--x", "bleu", "--y", "map",
                                              "--out", w.ro / "c.json"], r"permission denied", fault="readonly"),
    Case("correlate-out-disk-full", lambda w: ["correlate", "--table", w.table, "--x", "bleu", "--y", "map",
                                               "--out", w.good], r"no space left writing .*good\.out", "good",
         fault="disk-full"),
    Case("correlate-ci-huge", lambda w: ["correlate", "--table", w.table, "--x", "bleu", "--y", "map",
                                         "--ci", "1000000000"], r"--ci: 1000000000 is too large; the maximum is 100000"),
    Case("correlate-ci-negative", lambda w: ["correlate", "--table", w.table, "--x", "bleu", "--y", "map", "--ci", "-1"],
         r"--ci -1 must be >= 0 and <= 100000"),
    Case("correlate-seed-negative", lambda w: ["correlate", "--table", w.table, "--x", "bleu", "--y", "map",
                                               "--ci", "10", "--seed", "-1"], r"--seed: -1 is not a valid seed"),
    Case("correlate-alpha-out-of-range", lambda w: ["correlate", "--table", w.table, "--x", "bleu", "--y", "map",
                                                    "--alpha", "2"], r"--alpha 2\.0 must be strictly between 0 and 1"),
    Case("correlate-bad-format", lambda w: ["correlate", "--table", w.table, "--x", "bleu", "--y", "map",
                                            "--format", "xlsx"], r"unknown --format 'xlsx'"),
    Case("correlate-unknown-column", lambda w: ["correlate", "--table", w.table, "--x", "chrf", "--y", "map"], r"chrf"),
    Case("correlate-table-missing", lambda w: ["correlate", "--table", w.root / "t.tsv", "--x", "bleu", "--y", "map"],
         r"t\.tsv"),
    Case("correlate-round-bad", lambda w: ["correlate", "--table", w.table, "--x", "bleu", "--y", "map",
                                           "--round", "two"], r"bad rounding 'two'"),
    Case("correlate-round-huge", lambda w: ["correlate", "--table", w.table, "--x", "bleu", "--y", "map",
                                            "--round", "1000000000"], r"decimals must be 0 to 15"),
    Case("correlate-filter-empty", lambda w: ["correlate", "--table", w.table, "--x", "bleu", "--y", "map",
                                              "--filter", "system=zzz"], r"no rows left after --filter"),
    # ---- report DIR
    Case("report-results-empty-object", lambda w: ["report", _report_dir(w, {})], r"results\.json: the key 'name' is missing"),
    Case("report-results-no-systems", lambda w: ["report", _report_dir(w, {**GOOD_RESULTS, "systems": None})],
         r"systems must be an object, found null"),
    Case("report-results-lacks-systems", lambda w: ["report", _report_dir(
        w, {k: v for k, v in GOOD_RESULTS.items() if k != "systems"})], r"the key 'systems' is missing"),
    Case("report-results-is-list", lambda w: ["report", _report_dir(w, [GOOD_RESULTS])],
         r"expected a JSON object, found a list"),
    Case("report-results-truncated", lambda w: ["report", _report_dir(w, json.dumps(GOOD_RESULTS)[:60])],
         r"results\.json:1: not valid JSON .*truncated"),
    Case("report-results-empty-file", lambda w: ["report", _report_dir(w, "")], r"results\.json:1: not valid JSON"),
    Case("report-results-score-string", lambda w: ["report", _report_dir(
        w, {**GOOD_RESULTS, "systems": {**GOOD_RESULTS["systems"], "s1": {"mt": {"bleu": "high"}, "ir": {}}}})],
         r"systems\.s1\.mt\.bleu must be a number or null"),
    Case("report-results-correlations-object", lambda w: ["report", _report_dir(w, {**GOOD_RESULTS, "correlations": {}})],
         r"correlations must be a list, found an object"),
    Case("report-no-results", lambda w: ["report", w.outdir], r"outdir/results\.json: not found"),
    Case("report-dir-is-file", lambda w: ["report", w.good], r"good\.out: not a directory"),
    # ---- run / validate: config files and fields
    Case("run-config-is-dir", lambda w: w.run_cmd(w.outdir), r"outdir is a directory", "out"),
    Case("run-config-missing", lambda w: w.run_cmd(w.root / "nope.yaml"), r"config not found: .*nope\.yaml", "out"),
    Case("run-config-not-utf8", lambda w: w.run_cmd(w.bad("config.yaml", b"name: caf\xe9\n")),
         r"config\.yaml: not valid UTF-8", "out"),
    Case("run-config-yaml-syntax", lambda w: w.run_cmd(w.config(text="name: [unclosed\n")), r"invalid YAML", "out"),
    Case("run-config-python-tag", lambda w: w.run_cmd(w.config(text="name: !!python/object/apply:os.system ['true']\n")),
         r"invalid YAML", "out"),
    Case("run-config-alias-bomb", lambda w: w.run_cmd(_bomb_config(w)),
         r"the YAML expands to more than 100000 values", "out"),
    Case("run-config-recursive-alias", lambda w: w.run_cmd(w.config(text="a: &a [1, *a]\n")),
         r"refers to its own anchor", "out"),
    Case("run-config-too-deep", lambda w: w.run_cmd(w.config(text="a: " + "[" * 5000 + "]" * 5000 + "\n")),
         r"nested too deeply", "out"),
    Case("run-config-unknown-key", lambda w: w.run_cmd(w.config(mt={"metricz": ["bleu"]})), r"mt\.metricz: unknown key",
         "out"),
    Case("run-system-name-tab", lambda w: w.run_cmd(w.config(systems=[{"name": n, "hyp": f"sys/{n}.txt"}
                                                                     for n in ("a\tb", "b", "c")])),
         r"systems\[0\]\.name: system name 'a\\tb' contains the control character", "out"),
    Case("run-system-name-newline", lambda w: w.run_cmd(w.config(systems=[{"name": n, "hyp": f"sys/{n}.txt"}
                                                                         for n in ("a", "b\nx", "c")])),
         r"systems\[1\]\.name: .*control character '\\n'", "out"),
    Case("run-system-name-zero-width", lambda w: w.run_cmd(w.config(systems=[{"name": n, "hyp": f"sys/{n}.txt"}
                                                                            for n in ("a", "b", "c\u200b")])),
         r"systems\[2\]\.name: .*control character", "out"),
    Case("run-system-name-too-long", lambda w: w.run_cmd(w.config(systems=[{"name": n, "hyp": f"sys/{n}.txt"}
                                                                          for n in ("a" * 300, "b", "c")])),
         r"systems\[0\]\.name: system name of 300 characters is too long", "out"),
    Case("run-system-name-from-pattern", lambda w: w.run_cmd(w.config(systems={"pattern": "sys/{n}.txt",
                                                                                "name": "{n}\t{n}"})),
         r"systems\.name .*control character '\\t'", "out"),
    Case("run-pattern-expected-system-gone", lambda w: w.run_cmd(w.config(systems={
        "pattern": "sys/{n}.txt", "name": "{n}", "expect": ["a", "b", "c", "d"]})),
         r"systems\.expect: 'd' not matched by systems\.pattern sys/\{n\}\.txt \(matched: a, b, c\)", "out"),
    Case("run-bootstrap-huge", lambda w: w.run_cmd(w.config(correlation={"bootstrap": 1_000_000_000})),
         r"correlation\.bootstrap: 1000000000 is too large; the maximum is 100000", "out"),
    Case("run-permutation-huge", lambda w: w.run_cmd(w.config(correlation={"permutation": 10**12})),
         r"correlation\.permutation: 1000000000000 is too large", "out"),
    Case("run-bootstrap-exponent", lambda w: w.run_cmd(w.config(text=w.config().read_text()
                                                                + "correlation: {bootstrap: 1e9}\n")),
         r"correlation\.bootstrap: expected an integer", "out"),
    Case("run-round-huge", lambda w: w.run_cmd(w.config(correlation={"round": {"bleu": 10**9}})),
         r"correlation\.round\.bleu: 1000000000 decimals is out of range", "out"),
    Case("run-depth-huge", lambda w: w.run_cmd(w.config(retrieval={"depth": 10**9})),
         r"retrieval\.depth: 1000000000 is too large", "out"),
    Case("run-top-k-huge", lambda w: w.run_cmd(w.config(relevance={"pseudo": {"top_k": 10**9}})),
         r"relevance\.pseudo\.top_k: 1000000000 is too large", "out"),
    Case("run-keywords-huge", lambda w: w.run_cmd(w.config(queries={"generate": "keywords", "k": 10**9})),
         r"queries\.k: 1000000000 is too large", "out"),
    Case("run-seed-negative", lambda w: w.run_cmd(w.config(seed=-1)), r"seed: must be >= 0", "out"),
    Case("run-seed-huge", lambda w: w.run_cmd(w.config(seed=2**40)), r"seed: 1099511627776 is too large", "out"),
    Case("run-config-jobs-huge", lambda w: w.run_cmd(w.config(jobs=10**6)), r"jobs: 1000000 is too large", "out"),
    Case("run-jobs-option-huge", lambda w: ["run", w.config(), "--out", w.out, "--jobs", "1000000"],
         r"--jobs: 1000000 is too large", "out"),
    Case("run-jobs-zero", lambda w: ["run", w.config(), "--out", w.out, "--jobs", "0"], r"--jobs", "out"),
    Case("run-hyp-missing", lambda w: w.run_cmd(w.config(systems=[{"name": n, "hyp": f"sys/{n}x.txt"}
                                                                 for n in ("a", "b", "c")])),
         r"systems\[0\]\.hyp: file not found", "out"),
    Case("run-out-is-file", lambda w: ["run", w.config(), "--out", w.good], r"--out .*good\.out is an existing file",
         "good"),
    Case("run-out-readonly", lambda w: ["run", w.config(), "--out", w.ro / "exp"], r"permission denied",
         fault="readonly"),
    Case("run-disk-full", lambda w: w.run_cmd(w.config()), r"no space left writing .*; free space and re-run",
         fault="disk-full"),
    Case("validate-alias-bomb", lambda w: ["validate", _bomb_config(w)], r"expands to more than 100000 values"),
    Case("validate-config-is-dir", lambda w: ["validate", w.outdir], r"outdir is a directory"),
    # ---- demo
    Case("demo-out-is-file", lambda w: ["demo", "--out", w.good, "-q"], r"--out .*good\.out is an existing file", "good"),
    Case("demo-out-readonly", lambda w: ["demo", "--out", w.ro / "demo", "-q"], r"permission denied", fault="readonly"),
    Case("demo-seed-negative", lambda w: ["demo", "--out", w.out, "--seed", "-1", "-q"], r"--seed", "out"),
    Case("demo-seed-huge", lambda w: ["demo", "--out", w.out, "--seed", str(2**40), "-q"],
         r"--seed: 1099511627776 is not a valid seed", "out"),
]

GOOD_RESULTS = {
    "name": "good",
    "systems": {f"s{i}": {"attrs": {"name": f"s{i}"}, "mt": {"bleu": 10.0 * i}, "ir": {"map": 0.1 * i}} for i in (1, 2, 3)},
    "correlations": [],
    "comparisons": [],
    "english": None,
    "score_kinds": {"mt": ["bleu"], "ir": ["map"], "human": [], "lower_is_better": []},
    "notes": [],
    "signature": {},
}
GOOD_REPORT_DIR: Path


@pytest.fixture(scope="module", autouse=True)
def _good_report(tmp_path_factory):
    """A report directory rendered from a good results.json, copied by the report cases."""
    global GOOD_REPORT_DIR
    d = tmp_path_factory.mktemp("good-report")
    (d / "results.json").write_text(json.dumps(GOOD_RESULTS))
    assert main(["report", str(d)]) == 0
    GOOD_REPORT_DIR = d


def _readonly(monkeypatch, d: Path) -> None:
    """Make ``d`` read-only; for root (who ignores modes) also refuse creating in it."""
    d.chmod(0o555)
    if os.geteuid() != 0:
        return
    real_open, real_mkdir = os.open, os.mkdir
    inside = lambda p: Path(os.path.abspath(p)).is_relative_to(d)  # noqa: E731

    def fake_open(path, flags, *a, **k):
        if flags & os.O_CREAT and inside(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *a, **k)

    def fake_mkdir(path, *a, **k):
        if inside(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_mkdir(path, *a, **k)

    monkeypatch.setattr(os, "open", fake_open)
    monkeypatch.setattr(os, "mkdir", fake_mkdir)


def _disk_full(monkeypatch, root: Path) -> None:
    """Every atomic write under ``root`` goes to /dev/full (ENOSPC on the first flush)."""
    real_fdopen = os.fdopen

    def fake_fdopen(fd, *a, **k):
        target = os.readlink(f"/proc/self/fd/{fd}")
        if Path(target).is_relative_to(root) and "b" in (a[0] if a else k.get("mode", "r")):
            full = os.open("/dev/full", os.O_WRONLY)
            os.dup2(full, fd)
            os.close(full)
        return real_fdopen(fd, *a, **k)

    monkeypatch.setattr(os, "fdopen", fake_fdopen)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path, capsys, monkeypatch):
    if case.fault == "disk-full" and not Path("/dev/full").exists():
        pytest.skip("/dev/full is not available to simulate a full disk")
    w = W(tmp_path)
    argv = [str(a) for a in case.argv(w)]
    capsys.readouterr()
    before = _snapshot(tmp_path)
    if case.fault == "readonly":
        _readonly(monkeypatch, w.ro)
    elif case.fault == "disk-full":
        _disk_full(monkeypatch, tmp_path)
    try:
        code = main(argv)
    finally:
        w.ro.chmod(0o755)
        monkeypatch.undo()
    out, err = capsys.readouterr()
    assert_one_line_error(code, err, case.expect)
    if case.guard:
        target = getattr(w, case.guard)
        if case.guard == "out":
            assert not target.exists(), f"{target} was created by a failed command"
        else:
            assert target.read_text() == SENTINEL, f"{target} was clobbered"
    after = _snapshot(tmp_path)
    changed = sorted(k for k in after if before.get(k) != after[k] and not k.startswith(("out/", "readonly/")))
    stray = [k for k in after if Path(k).name.endswith(".tmp") or ".clir-eval-probe" in k]
    assert not stray, f"temporary files left behind: {stray}"
    if case.fault != "disk-full":
        assert not changed, f"files written by a failed command: {changed}"
    if "report-dir" in " ".join(argv):
        d = tmp_path / "report-dir"
        for name in ("scores.tsv", "correlations.tsv", "report.md", "report.html"):
            assert (d / name).read_bytes() == (GOOD_REPORT_DIR / name).read_bytes(), f"{name} was overwritten"


COMMANDS = ("retrieve", "ir-score", "pseudo-qrels", "mt-score", "mt-compare", "mt-buckets", "favoritism", "correlate",
            "report", "run", "validate", "demo")


def test_cases_cover_every_command():
    """The issue asks for at least 60 bad-input cases across all commands."""
    covered = {cmd for c in CASES for cmd in COMMANDS if c.id.startswith(cmd + "-")}
    assert len(CASES) >= 60
    assert covered == set(COMMANDS)


def test_pattern_note_names_the_matched_systems(tmp_path):
    """A pattern says which systems it matched (in the config's notes, hence results.json)."""
    from clir_eval.config.load import load_config

    w = W(tmp_path)
    cfg = load_config(w.config(systems={"pattern": "sys/{n}.txt", "name": "{n}", "expect": ["a", "c"]}))
    assert [s.name for s in cfg.systems] == ["a", "b", "c"]
    assert cfg.notes[-1] == "systems.pattern sys/{n}.txt matched 3 file(s): a, b, c."
    (tmp_path / "sys" / "b.txt").rename(tmp_path / "sys" / "b.old")
    for n in ("d", "e"):
        (tmp_path / "sys" / f"{n}.txt").write_text(w.hyp.read_text())
    cfg = load_config(w.config(systems={"pattern": "sys/{n}.txt", "name": "{n}"}))
    assert cfg.notes[-1] == "systems.pattern sys/{n}.txt matched 4 file(s): a, c, d, e."
