#!/usr/bin/env python
"""Benchmark start-up: CPU time and peak RSS of ``clir-eval --help``, ``--version``, each
command's ``--help``, and ``mt-score``, ``ir-score``, ``retrieve`` and ``run`` on tiny inputs
(so the figure is start-up: imports and set-up, not work), next to ``sacrebleu --help`` in the
same run; also the import of each command's module alone, next to ``import sacrebleu.metrics``.

Each command runs REPEAT times as a fresh process under ``/usr/bin/time``; CPU is user+sys of
that process, memory its own peak RSS; the median over the repeats is printed, with the
ratio to sacrebleu's. ``--before DIR`` also measures another checkout (e.g. the code
before the change) with the same interpreter, so before/after are in one table.
The machine may be shared: CPU time is less noisy than wall time, but repeat.

    python scripts/bench_startup.py
    python scripts/bench_startup.py --before /work/main
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import benchlib

HEAVY = ("numpy", "scipy", "scipy.stats", "scipy.sparse", "sacrebleu", "pytrec_eval", "matplotlib", "rich", "yaml")


def measure(argv: list[str], env: dict, repeat: int, cwd: str = "/") -> tuple[float, float]:
    """Median CPU seconds and median peak RSS (MiB) of ``argv`` run ``repeat`` times (exit code not checked:
    ``--help`` of a group may exit non-zero)."""
    m = benchlib.command(argv, env=env, cwd=cwd, repeat=repeat, check=False)
    return m.cpu, m.rss


def imported(args: list[str], env: dict, cwd: str = "/") -> list[str]:
    code = (
        "import sys; from clir_eval.cli import main\n"
        f"try: main({args!r})\nexcept SystemExit: pass\n"
        f"print('imported:', *[m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True).stdout
    return out.rsplit("imported:", 1)[-1].split()


def tiny_inputs(work: Path, env: dict) -> list[list[str]]:
    """Two-line MT files, a three-document collection, two queries, qrels and a one-system config."""
    (work / "hyp.txt").write_text("the cat sat on the mat\na dog barked\n", encoding="utf-8")
    (work / "ref.txt").write_text("the cat sat on a mat\nthe dog barked\n", encoding="utf-8")
    docs = "d1\tthe cat sat\nd2\ta dog barked\nd3\tcats and dogs\n"
    (work / "docs.tsv").write_text(docs, encoding="utf-8")
    (work / "english.tsv").write_text(docs, encoding="utf-8")
    (work / "q.tsv").write_text("q1\tcat\nq2\tdog\n", encoding="utf-8")
    (work / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n", encoding="utf-8")
    (work / "run.yaml").write_text(
        "name: tiny\nsystems:\n  - {name: s1, hyp: hyp.txt, docs: docs.tsv}\n  - {name: s2, hyp: ref.txt, docs: english.tsv}\n"
        "  - {name: s3, hyp: hyp.txt, docs: english.tsv}\n"
        "mt: {refs: [ref.txt], metrics: [bleu, chrf1, macrof1, microf1]}\n"
        "collection: {english: english.tsv}\nqueries: {file: q.tsv}\nrelevance: {qrels: qrels.txt}\n"
        "ir: {measures: [map, ndcg, P_10]}\ncorrelation: {bootstrap: 0, permutation: 0}\n", encoding="utf-8")
    cases = [["mt-score", "--hyp", "hyp.txt", "--ref", "ref.txt"],
             ["ir-score", "--qrels", "qrels.txt", "--run", "run.txt"],
             ["retrieve", "--docs", "docs.tsv", "--queries", "q.tsv", "--out", "run.txt"],
             ["run", "run.yaml", "--out", "out", "--jobs", "1"]]
    # a first retrieve writes the run that ir-score reads; a first run fills the cache, so the
    # timed "run" is start-up, config, cache look-ups and the report, not the stages' work
    for case in (cases[2], cases[3]):
        p = subprocess.run([sys.executable, "-c", "from clir_eval.cli import entry; entry()", *case], env=env,
                           cwd=work, capture_output=True, text=True)
        if p.returncode:
            sys.exit(f"{' '.join(case)} failed: {p.stderr.strip()}")
    return cases


def arguments():
    return benchlib.parser(__doc__, repeat=5, before=True)


def main() -> None:
    args = arguments().parse_args()

    cases = [["--version"], ["--help"]] + [[c, "--help"] for c in ("run", "retrieve", "correlate", "mt-score", "ir-score")]
    trees = [("after", benchlib.ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    sb = shutil.which("sacrebleu") or str(Path(sys.executable).with_name("sacrebleu"))
    base_cpu, base_rss = measure([sb, "--help"], benchlib.env(None), args.repeat)
    print(f"python {sys.version.split()[0]}, {args.repeat} runs each, medians; reference: sacrebleu --help "
          f"{base_cpu:.3f} s CPU, {base_rss:.0f} MiB")
    print(f"{'tree':<7} {'command':<22} {'CPU s':>7} {'x sb':>6} {'RSS MiB':>8} {'x sb':>6}  heavy modules imported")
    for label, tree in trees:
        env = benchlib.env(tree)
        for case in cases:
            cpu, rss = measure([sys.executable, "-c", "from clir_eval.cli import entry; entry()", *case], env, args.repeat)
            mods = imported(case, env)
            print(f"{label:<7} {' '.join(case):<22} {cpu:7.3f} {cpu / base_cpu:6.2f} {rss:8.0f} {rss / base_rss:6.2f}  "
                  f"{' '.join(mods) or '-'}")
        with tempfile.TemporaryDirectory() as work:
            for case in tiny_inputs(Path(work), env):
                cpu, rss = measure([sys.executable, "-c", "from clir_eval.cli import entry; entry()", *case], env,
                                   args.repeat, cwd=work)
                mods = imported(case, env, cwd=work)
                print(f"{label:<7} {case[0] + ' (tiny)':<22} {cpu:7.3f} {cpu / base_cpu:6.2f} {rss:8.0f} "
                      f"{rss / base_rss:6.2f}  {' '.join(mods) or '-'}")
    print("\nimport alone (CPU s, median):")
    ref = import_cpu("sacrebleu.metrics", benchlib.env(None), args.repeat)
    print(f"{'':<7} {'sacrebleu.metrics':<26} {ref:7.3f}")
    for label, tree in trees:
        env = benchlib.env(tree)
        for mod in ("clir_eval.cli.mt", "clir_eval.cli.ir", "clir_eval.cli.retrieve", "clir_eval.cli.run"):
            cpu = import_cpu(mod, env, args.repeat)
            print(f"{label:<7} {mod:<26} {cpu:7.3f} {cpu / ref:6.2f}x")


def import_cpu(module: str, env: dict, repeat: int) -> float:
    """Median CPU seconds of importing ``module`` in a fresh interpreter (the interpreter's own start excluded)."""
    code = f"import time; t = time.process_time(); import {module}; print(time.process_time() - t)"
    return statistics.median(float(subprocess.run([sys.executable, "-c", code], env=env, cwd="/", capture_output=True,
                                                  text=True, check=True).stdout) for _ in range(repeat))


if __name__ == "__main__":
    main()
