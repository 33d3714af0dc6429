"""Peak memory (RSS) and wall time of the commands whose memory grew with an input or an option
(gzip bombs, the item-level bootstrap, mt-score's bootstrap, per-type report and TER; one long segment
per metric, correlate's rows with Kendall draws, design's item-level study): each case
runs as its own process and its peak RSS is read from the kernel (wait4), so the numbers are those
of the command alone.

    python scripts/bench_memory_bounds.py [--before DIR] [--lines N] [--items N,N,..] [--cases a,b,..]

``--before DIR``: also run every case with the clir_eval package of another checkout (DIR on
PYTHONPATH) and print the ratio after/before. A refused case prints its one error line. The
bound every case must keep: 4 GiB, or a refusal up front that names the bound.
"""

from __future__ import annotations

import gzip
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib

BOUND = 4 * 2**30
BOUND_CASES = ("segment-", "correlate-", "design-item-")  # bound_cases' names (built only when asked for)


_WRAP = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
         "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def run(argv: list[str], pythonpath: str | None) -> tuple[float, int, int, str]:
    """(wall seconds, peak RSS bytes, exit code, last stderr line) of ``clir-eval argv``, run under a
    fresh wrapper process whose only child it is (so RUSAGE_CHILDREN's peak is this command's)."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", _WRAP, sys.executable, "-m", "clir_eval", *map(str, argv)],
                       capture_output=True, text=True, env=env, cwd="/")  # not a checkout: -m would import it
    wall = time.perf_counter() - t0
    code, kb = p.stdout.split()
    lines = p.stderr.strip().splitlines()
    return wall, int(kb) * 1024, int(code), (lines[-1] if lines else "")


def text_lines(n: int, seed: int) -> str:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(30000)]
    return "".join(" ".join(rng.choice(words) for _ in range(rng.randint(5, 30))) + "\n" for _ in range(n))


def cases(d: Path, lines: int, items: list[int], systems: int) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    line = b"x" * 1023 + b"\n"  # bombs of identical 1 KiB lines (~1000x): 1 GiB in ~1 MB
    bomb = d / "bomb.txt.gz"
    with gzip.open(bomb, "wb", 6) as fh:
        for _ in range(64):
            fh.write(line * (1 << 14))
    ok = d / "ok.txt"
    ok.write_text("the cat sat\n")
    out["bomb-mt-score"] = ["mt-score", "--hyp", bomb, "--ref", ok, "--metrics", "bleu"]
    nl = d / "bomb-lines.tsv.gz"  # 300 MiB of one long query
    with gzip.open(nl, "wb", 6) as fh:
        for _ in range(300):
            fh.write((b"q\t" + line[2:]) * (1 << 10))
    docs = d / "docs.jsonl"
    docs.write_text('{"id": "d1", "text": "a cat"}\n{"id": "d2", "text": "a dog"}\n{"id": "d3", "text": "fish"}\n')
    out["bomb-retrieve-queries"] = ["retrieve", "--docs", docs, "--queries", nl, "--out", d / "x.run"]
    dz = d / "docs-bomb.jsonl.gz"  # 300 MiB of blank lines of spaces (skipped by the reader)
    with gzip.open(dz, "wb", 6) as fh:
        for _ in range(300):
            fh.write((b" " * 1023 + b"\n") * (1 << 10))
    out["bomb-retrieve-docs"] = ["retrieve", "--docs", dz, "--queries", d / "q.tsv", "--out", d / "x.run"]
    (d / "q.tsv").write_text("q1\tcat\n")
    hyp, ref = d / "hyp.txt", d / "ref.txt"
    hyp.write_text(text_lines(lines, 1))
    ref.write_text(text_lines(lines, 2))
    small_h, small_r = d / "hyp-small.txt", d / "ref-small.txt"  # the largest --bootstrap on a smaller test set
    small_h.write_text(text_lines(min(lines, 5000), 1))
    small_r.write_text(text_lines(min(lines, 5000), 2))
    out["mt-bootstrap-max-5k-lines"] = ["mt-score", "--hyp", small_h, "--ref", small_r, "--bootstrap", "100000"]
    out["mt-bootstrap-1000"] = ["mt-score", "--hyp", hyp, "--ref", ref, "--bootstrap", "1000"]
    out["mt-report"] = ["mt-score", "--hyp", hyp, "--ref", ref, "--report", d / "rep.tsv"]
    out["mt-ter"] = ["mt-score", "--hyp", hyp, "--ref", ref, "--metrics", "ter"]
    rng = random.Random(3)
    for n in items:
        t = d / f"items{n}.tsv"
        with open(t, "w") as fh:
            fh.write("system\titem\tbleu\tmap\n")
            for s in range(systems):
                for i in range(n):
                    fh.write(f"s{s}\ti{i}\t{rng.random():.4f}\t{rng.random():.4f}\n")
        for ci, perm in ((200, 100), (40000, 100), (100000, 100), (0, 100000), (0, 10000)):
            out[f"item-ci{ci}-perm{perm}-{n}"] = ["correlate", "--table", t, "--x", "bleu", "--y", "map", "--item-col",
                                                 "item", "--ci", str(ci), "--permutation", str(perm)]
        out[f"item-acc23-{n}"] = ["correlate", "--table", t, "--x", "bleu", "--y", "map", "--item-col", "item",
                                  "--variant", "acc23", "--permutation", "100"]
    return out


def long_line(n: int, seed: int) -> str:
    """One line of ``n`` characters: words drawn from 200,000 random 3-9 character words of 62 letters and digits
    (almost every character n-gram distinct: chrF's worst case per character)."""
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    vocab = ["".join(rng.choices(alphabet, k=rng.randint(3, 9))) for _ in range(200_000)]
    return " ".join(rng.choices(vocab, k=n // 6 + 1))[:n]


def accepted_max(fits, lo: int, hi: int) -> int:
    """The largest n in lo..hi with ``fits(n)`` (monotone), by bisection."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return lo


def bound_cases(d: Path, want) -> dict[str, list[str]]:
    """Each bound of one long input at the largest size its estimate accepts and one step past it: a long
    segment per metric (mt-score; the segment is hypothesis + reference, half each), correlate's rows with
    Kendall draws, design's item-level study (systems at a 60-item pilot); correlate on 12,000 rows without
    draws (no bound: O(n) memory). Sizes come from the code's own estimates, so a changed estimate is measured;
only the inputs of the cases ``want(name)`` asks for are written."""
    from clir_eval.cli.design import item_memory
    from clir_eval.correlation.statistics import StatsSettings
    from clir_eval.correlation.tables import table_memory
    from clir_eval.limits import memory_bytes
    from clir_eval.mt.base import BASE_MEMORY, load_metric

    out: dict[str, list[str]] = {}
    bound = memory_bytes()
    for spec in ("chrf", "chrf++", "bleu", "macrof1"):
        m = load_metric(spec)
        chars = accepted_max(lambda c: BASE_MEMORY + m.segment_memory("x" * c, ["x" * c]) <= bound, 1, 2**27)
        for tag, n in (("max", chars), ("over", chars + 2**20)):
            name = f"segment-{spec}-{tag}-{n / 2**20:.1f}Mi"
            if not want(name):
                continue
            h, r = d / f"seg-{spec}-{tag}.hyp", d / f"seg-{spec}-{tag}.ref"
            h.write_text(long_line(n, 1) + "\n")
            r.write_text(long_line(n, 2) + "\n")
            out[name] = ["mt-score", "--hyp", h, "--ref", r, "--metrics", spec]
    kendall = StatsSettings(resamples=1)
    rows = accepted_max(lambda n: table_memory(n, kendall, False) <= bound, 3, 10**6)
    rng = random.Random(4)
    for tag, n in (("max", rows), ("over", rows + 500), ("no-draws", 12_000)):
        if not want(f"correlate-{tag}-{n}-rows"):
            continue
        t = d / f"rows-{tag}.tsv"
        t.write_text("system\tbleu\tmap\n" + "".join(f"s{i}\t{rng.random():.6f}\t{rng.random():.6f}\n"
                                                      for i in range(n)))
        extra = [] if tag == "no-draws" else ["--ci", "1"]
        out[f"correlate-{tag}-{n}-rows"] = ["correlate", "--table", t, "--x", "bleu", "--y", "map", *extra]
    pilot = d / "pilot.tsv"
    with open(pilot, "w") as fh:
        fh.write("system\titem\ta\tb\ty\n")
        for s in range(8):
            base = [rng.gauss(0, 1) for _ in range(60)]
            for i in range(60):
                fh.write(f"s{s}\ti{i}\t{base[i] + rng.gauss(0, .5):.5f}\t{base[i] + rng.gauss(0, 1):.5f}\t"
                         f"{base[i] + rng.gauss(0, .7):.5f}\n")
    need = lambda S: 100 * 2**20 + max(item_memory(S, 60, 2, 1000, 20, p) for p in (False, True))  # noqa: E731
    systems = accepted_max(lambda S: need(S) <= bound, 3, 1000)
    for tag, S in (("max", systems), ("over", systems + 10)):
        out[f"design-item-{tag}-{S}-systems"] = ["design", "--table", pilot, "--level", "item", "--x", "a,b", "--y",
                                                 "y", "--query-col", "item", "--systems", str(S), "--reps", "20",
                                                 "--effect", "0.2", "--jobs", "1", "-q"]
    return out


def arguments():
    ap = benchlib.parser(__doc__, before=True, full_doc=True)
    ap.add_argument("--lines", type=int, default=100_000, help="lines of the mt-score cases")
    ap.add_argument("--items", default="1000,3000,5000", help="items of the item-level cases (12 systems)")
    ap.add_argument("--systems", type=int, default=12)
    ap.add_argument("--cases", default="", help="comma list of case-name prefixes to run (default: all)")
    return ap


def main() -> None:
    args = arguments().parse_args()
    here = str(benchlib.ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        wanted = [c for c in args.cases.split(",") if c]
        todo = cases(Path(tmp), args.lines, [int(x) for x in args.items.split(",") if x], args.systems) if (
            not wanted or any(not w.startswith(BOUND_CASES) for w in wanted)) else {}
        todo.update(bound_cases(Path(tmp), lambda name: not wanted or any(name.startswith(w) for w in wanted)))
        print(f"{'case':34s} {'code':>8s} {'wall s':>8s} {'peak MiB':>9s}" + ("  before: wall s, peak MiB, ratio"
                                                                            if args.before else ""))
        for name, argv in todo.items():
            if wanted and not any(name.startswith(w) for w in wanted):
                continue
            wall, rss, code, last = run(argv, here)
            line = f"{name:34s} {code:8d} {wall:8.1f} {rss / 2**20:9.0f}"
            if args.before:
                bw, brss, bcode, _ = run(argv, str(args.before.resolve()))
                line += f"  {bw:8.1f} {brss / 2**20:9.0f} (rc {bcode})  x{rss / max(brss, 1):.2f}"
            flag = "" if rss <= BOUND else "  OVER 4 GiB"
            print(line + flag + (f"\n    {last}" if code else ""), flush=True)


if __name__ == "__main__":
    main()
