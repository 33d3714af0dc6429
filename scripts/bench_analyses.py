"""Benchmark the issue-15 analyses on two Lignos et al. 2019 nc-test systems (5000 segments each).

    .venv/bin/python scripts/bench_analyses.py [--data ../shared/data] [--lang cs]

1. Favoritism of BLEU and MacroF1 (statistics of both systems + leave-one-out δ for every segment),
   target < 10 s; beside it the naive O(n²) way (re-scoring the corpus without each segment with
   sacrebleu, timed on 20 segments and extrapolated to all).
2. 4-GRR and WRR against sacrebleu ``corpus_bleu`` on the same input, target 4-GRR within 3×.
3. Paired approximate randomization (10000 trials) for BLEU and MacroF1, beside sacrebleu's own
   ``--paired-ar`` for BLEU.
CPU times (process time) are printed; wall time on a shared machine is noisy.
"""

from __future__ import annotations

import benchlib
import sacrebleu
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from clir_eval.io.files import read_lines
from clir_eval.mt.base import load_metric
from clir_eval.mt.favoritism import favoritism
from clir_eval.mt.sacrebleu_metrics import clear_reference_cache
from clir_eval.mt.significance import paired_ar


def clear() -> None:
    Tokenizer13a.__call__.cache_clear()
    clear_reference_cache()


def timed(fn):
    """(fn(), CPU s, wall s) with the tokenizer and reference caches cleared first."""
    clear()
    return benchlib.timed(fn)


def arguments():
    ap = benchlib.parser(__doc__, data=True)
    ap.add_argument("--lang", default="cs", help="the nc-test language pair LANG-en (default cs)")
    return ap


def main() -> None:
    args = arguments().parse_args()
    d = benchlib.need(args.data / "lignos2019" / "nc-test" / f"{args.lang}-en", "Lignos et al. 2019 nc-test")
    ref = read_lines(d / "reference.en.txt.gz")
    a = read_lines(d / "systems" / "nc200000.bpe32000.txt.gz")
    b = read_lines(d / "systems" / "nc25000.bpe32000.txt.gz")
    n = len(ref)
    print(f"data: {d} ({n} segments), systems nc200000.bpe32000 vs nc25000.bpe32000, sacrebleu {sacrebleu.__version__}")

    print("\n1. favoritism (statistics of both systems + leave-one-out for every segment)")
    for spec in ("bleu", "macrof1"):
        m = load_metric(spec)
        f, cpu, wall = timed(lambda: favoritism(m, m.segment_stats(a, [ref]), m.segment_stats(b, [ref])))
        print(f"   {spec:8s} cpu {cpu:6.2f} s  wall {wall:6.2f} s  (target < 10 s)  max |fav| {abs(f.values).max():.4f}")
    k = 20
    bleu = sacrebleu.BLEU()
    _, cpu, _ = timed(lambda: [bleu.corpus_score(a[:i] + a[i + 1:], [ref[:i] + ref[i + 1:]]) for i in range(k)])
    print(f"   naive sacrebleu re-scoring without each segment: {cpu / k:.3f} s per segment "
          f"-> {cpu / k * n * 2:.0f} s for both systems (extrapolated from {k})")

    print("\n2. recognition rates vs sacrebleu BLEU (one system, CPU)")
    _, t_bleu, _ = timed(lambda: sacrebleu.corpus_bleu(a, [ref]))
    print(f"   sacrebleu corpus_bleu   {t_bleu:6.2f} s")
    for spec in ("4grr", "wrr"):
        m = load_metric(spec)
        r, cpu, _ = timed(lambda: m.corpus_score(a, [ref]))
        print(f"   {spec:22s}  {cpu:6.2f} s  ratio {cpu / t_bleu:4.2f}x  (target 4grr <= 3x)  score {r.score:.2f}")

    print("\n3. paired approximate randomization, 10000 trials (CPU)")
    from sacrebleu.significance import PairedTest

    _, cpu, _ = timed(lambda: PairedTest([("base", b), ("sys", a)], {"BLEU": sacrebleu.BLEU()}, [ref],
                                         test_type="ar", n_samples=10000)())
    print(f"   sacrebleu --paired-ar BLEU (incl. statistics) {cpu:6.2f} s")
    for spec in ("bleu", "macrof1"):
        m = load_metric(spec)
        r, cpu, _ = timed(lambda: paired_ar(m, *m.paired_stats(b, a, [ref]), n_samples=10000))
        print(f"   clir_eval {spec:8s} (incl. statistics)  {cpu:6.2f} s  p = {r.p_value:.5f}")


if __name__ == "__main__":
    main()
