"""Benchmark the four paper metrics (BLEU, chrF1, MacroF1, MicroF1) on the Lignos et al. 2019
nc-test systems (32 x 5000 segments) against sacrebleu in the same run.

    /work/venv/bin/python scripts/bench_mt_metrics.py [--data ../shared/data] [--systems 32]

For each metric the CPU time over all systems is printed, together with sacrebleu's own
BLEU and chrF1 (``BLEU(references=...)`` / ``CHRF(beta=1, references=...)`` then
``corpus_score(hyps, None)``, i.e. references pre-processed once per language as clir_eval
also does) and the ratios. Tokenizer LRU caches are cleared before every timed block so no
block profits from an earlier one's tokenisation. Target: MacroF1+MicroF1 together
cost no more than sacrebleu BLEU. Memory: tracemalloc peak of one system's statistics, ours
vs sacrebleu BLEU's, and the process's max RSS. Timings on a shared machine are noisy.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from pathlib import Path

import benchlib
import numpy as np
import sacrebleu
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

from clir_eval import __version__
from clir_eval.io.files import read_lines
from clir_eval.mt.base import collect_stats, load_metrics
from clir_eval.mt.resampling import bootstrap_ci
from clir_eval.mt.sacrebleu_metrics import clear_reference_cache


def clear_caches() -> None:
    Tokenizer13a.__call__.cache_clear()
    TokenizerRegexp.__call__.cache_clear()
    gc.collect()


def load(data: Path, n_systems: int):
    """[(lang, system, hyps)], {lang: [ref stream]}; files are read line by line (gz)."""
    systems, refs = [], {}
    for lang in ("cs", "de"):
        base = data / "lignos2019" / "nc-test" / f"{lang}-en"
        refs[lang] = [read_lines(base / "reference.en.txt.gz")]
        for p in sorted((base / "systems").glob("*.txt.gz")):
            systems.append((lang, p.name[: -len(".txt.gz")], read_lines(p)))
    # --systems N takes both languages; systems stay grouped by language (one reference set
    # at a time, as a pipeline scores them), so cached reference n-grams are reused
    picked = sorted(systems, key=lambda s: (s[1], s[0]))[:n_systems]
    return sorted(picked, key=lambda s: (s[0], s[1])), refs


def time_ours(specs, systems, refs) -> float:
    """CPU seconds of this process (wall time is meaningless on a shared, overloaded machine)."""
    clear_caches()
    clear_reference_cache()
    t = time.process_time()
    for lang, _, hyps in systems:
        metrics = load_metrics(specs)  # a fresh metric object per system, as the pipeline does
        stats = collect_stats(metrics, hyps, refs[lang])
        for m in metrics:
            m.score_from_stats(stats[m.name])
    return time.process_time() - t


def time_sacre(make, systems, refs) -> float:
    clear_caches()
    t = time.process_time()
    objs = {lang: make(r) for lang, r in refs.items()}
    for lang, _, hyps in systems:
        objs[lang].corpus_score(hyps, None)
    return time.process_time() - t


def peak_bytes(fn) -> int:
    clear_caches()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def arguments():
    ap = benchlib.parser(__doc__, data=True)
    ap.add_argument("--systems", type=int, default=32)
    ap.add_argument("--bootstrap", type=int, default=1000, help="resamples for the bootstrap timing (0 = skip)")
    return ap


def main() -> None:
    args = arguments().parse_args()
    benchlib.need(args.data / "lignos2019", "Lignos et al. 2019")

    t = time.perf_counter()
    systems, refs = load(args.data, args.systems)
    n_seg = sum(len(h) for _, _, h in systems)
    print(f"clir_eval {__version__}, sacrebleu {sacrebleu.__version__}, numpy {np.__version__}")
    print(f"{len(systems)} systems, {n_seg} segments, read in {time.perf_counter() - t:.2f} s\n")

    sb_bleu = time_sacre(lambda r: sacrebleu.BLEU(references=r), systems, refs)
    sb_chrf = time_sacre(lambda r: sacrebleu.CHRF(beta=1, references=r), systems, refs)
    rows = [
        ("bleu", time_ours(["bleu"], systems, refs), sb_bleu, "sacrebleu BLEU"),
        ("chrf1", time_ours(["chrf1"], systems, refs), sb_chrf, "sacrebleu chrF1"),
        ("macrof1", time_ours(["macrof1"], systems, refs), sb_bleu, "sacrebleu BLEU"),
        ("microf1", time_ours(["microf1"], systems, refs), sb_bleu, "sacrebleu BLEU"),
        ("macrof1+microf1", time_ours(["macrof1", "microf1"], systems, refs), sb_bleu, "sacrebleu BLEU"),
        ("all four", time_ours(["bleu", "chrf1", "macrof1", "microf1"], systems, refs), sb_bleu + sb_chrf,
         "sacrebleu BLEU + chrF1"),
    ]
    print("times are CPU seconds of this process (time.process_time)")
    print(f"sacrebleu BLEU  : {sb_bleu:8.2f} s")
    print(f"sacrebleu chrF1 : {sb_chrf:8.2f} s\n")
    print(f"{'clir_eval':<16} {'CPU s':>8}  {'ratio':>6}  vs")
    for name, ours, ref, what in rows:
        print(f"{name:<16} {ours:8.2f}  {benchlib.ratio(ours, ref):>6}  {what}")

    lang, _, hyps = systems[0]
    [fm] = load_metrics(["macrof1"])
    [bm] = load_metrics(["bleu"])
    p_ours = peak_bytes(lambda: fm.segment_stats(hyps, refs[lang]))
    p_bleu = peak_bytes(lambda: sacrebleu.BLEU()._extract_corpus_statistics(hyps, refs[lang]))
    print(f"\npeak traced memory, one system ({len(hyps)} segments): MacroF/MicroF statistics "
          f"{p_ours / 2**20:.1f} MiB, sacrebleu BLEU statistics {p_bleu / 2**20:.1f} MiB "
          f"(ratio {p_ours / p_bleu:.2f})")

    if args.bootstrap:
        clear_caches()
        st = fm.segment_stats(hyps, refs[lang])
        t = time.process_time()
        bootstrap_ci(fm, st, n_samples=args.bootstrap, seed=12345)
        t_f = time.process_time() - t
        st = bm.segment_stats(hyps, refs[lang])
        t = time.process_time()
        bootstrap_ci(bm, st, n_samples=args.bootstrap, seed=12345)
        t_b = time.process_time() - t
        clear_caches()
        t = time.process_time()
        sacrebleu.BLEU().corpus_score(hyps, refs[lang], n_bootstrap=args.bootstrap)
        t_sb = time.process_time() - t
        print(f"bootstrap x{args.bootstrap}, one system: clir_eval macrof1 {t_f:.2f} s, clir_eval bleu {t_b:.2f} s, "
              f"sacrebleu BLEU corpus_score(n_bootstrap) {t_sb:.2f} s (incl. its statistics)")
    rss = benchlib.peak_rss_mib()
    print(f"max RSS of this process: {rss:.0f} MiB")


if __name__ == "__main__":
    main()
