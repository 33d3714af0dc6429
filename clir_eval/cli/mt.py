"""``clir-eval mt-score`` (MT metrics of one system, optional bootstrap CI and per-type
report) and ``clir-eval mt-compare`` (systems against a baseline: paired bootstrap, approximate
randomization and sign test with adjusted p-values)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, List, Optional

import typer

from ..errors import UserError
from ..io.files import InputFile, atomic_write, check_output_file
from ..limits import MAX_RESAMPLES, check_max, check_seed, memory_bytes
from ..mt.base import (
    KNOWN_METRICS,
    collect_stats,
    iter_segment_chunks,
    load_metric,
    load_metrics,
    read_segments,
    read_source,
    stream_scores,
)
from ..mt.frequency import frequency_buckets, parse_buckets, plot_buckets
from ..mt.neural import NeuralMetric, check_device, set_runtime
from ..mt.resampling import bootstrap_ci
from ..mt.settings import DEFAULT_METRICS, BucketsAnalysis, MTSettings, SignificanceSettings
from ..mt.significance import compare_to_baseline
from ..mt.typebased import TypeFMetric
from ..params import split_list
from .app import app
from .options import build, check_option, setting_option

_DEFAULT_METRICS = ",".join(DEFAULT_METRICS)
_METRICS_HELP = f"Comma list of metrics, e.g. bleu,chrf:beta=1,macrof:beta=2. Known: {', '.join(KNOWN_METRICS)}."


def _check_format(fmt: str) -> None:
    if fmt not in ("json", "text"):
        raise UserError(f"--format must be json or text, got {fmt!r}")


def _write_report(path: str, metrics, hyps, refs) -> None:
    fm = next((m for m in metrics if isinstance(m, TypeFMetric)), None)
    if fm is None:  # the breakdown does not depend on β except for F; default MacroF1
        fm = load_metric("macrof1", tokenize=metrics[0].tokenize, lowercase=metrics[0].lowercase)
    rows = fm.type_report(hyps, refs)
    with atomic_write(path, parents=False) as fh:
        fh.write("type\trefs\tpreds\tmatch\tP\tR\tF\n")
        for r in rows:
            fh.write(f"{r['type']}\t{r['refs']}\t{r['preds']}\t{r['match']}\t{r['P']:.4f}\t{r['R']:.4f}\t{r['F']:.4f}\n")


@app.command("mt-score")
def mt_score_cmd(
    hyp: str = typer.Option(..., "--hyp", help="System output, one segment per line (.gz ok)."),
    ref: List[str] = typer.Option(..., "--ref", help="Reference file, line-aligned; repeat for several references."),
    metrics: str = typer.Option(_DEFAULT_METRICS, "--metrics", help=_METRICS_HELP),
    tokenize: str = setting_option(MTSettings, "tokenize"),
    lowercase: bool = setting_option(MTSettings, "lowercase"),
    report: Optional[str] = typer.Option(None, "--report", help="Write the per-type MacroF/MicroF breakdown TSV here."),
    bootstrap: int = typer.Option(0, "--bootstrap", help="Bootstrap resamples for a 95% CI (0 = none; 1000 is usual)."),
    seed: int = setting_option(SignificanceSettings, "seed", extra="Used by --bootstrap."),
    fmt: str = typer.Option("json", "--format", help="json | text"),
    src: Optional[str] = typer.Option(None, "--src", help="Source segments, line-aligned with --hyp (COMET reads them)."),
    device: str = setting_option(MTSettings, "device"),
    batch_size: int = setting_option(MTSettings, "batch_size"),
) -> None:
    """Score one system against one or more references.

    \b
    Examples (after 'clir-eval demo --out demo-out'):
      clir-eval mt-score --hyp demo-out/data/mt/copier.txt --ref demo-out/data/mt/ref.en.txt --metrics bleu,chrf1,macrof1
      clir-eval mt-score --hyp demo-out/data/mt/copier.txt --ref demo-out/data/mt/ref.en.txt --metrics bleu --bootstrap 100 --format text
    """
    _check_format(fmt)
    check_max(bootstrap, MAX_RESAMPLES, "--bootstrap")
    check_seed(seed)
    if report:
        check_output_file(report, "--report")
    ms = load_metrics(split_list(metrics), tokenize=tokenize, lowercase=lowercase)
    set_runtime(ms, device=check_device(device), batch_size=check_option(MTSettings, "batch_size", batch_size))
    if not (bootstrap or report or src) and all(m.streamable for m in ms):
        # the text is read in chunks and only each metric's summed statistics kept
        scores = stream_scores(ms, iter_segment_chunks(hyp, ref), len(ref))
        if scores is not None:
            _print_scores({name: sc.to_dict() for name, sc in scores.items()}, fmt)
            return
    check_memory(ms, [hyp, *ref, *([src] if src else [])], report=bool(report))
    hyps, refs = read_segments(hyp, ref)
    sources = read_source(src, len(hyps), hyp) if src else None
    stats = collect_stats(ms, hyps, refs, sources=sources)
    out: dict[str, Any] = {}
    for m in ms:
        res = m.score_stats(stats[m.name], len(refs))
        entry = res.to_dict()
        if bootstrap:
            ci = bootstrap_ci(m, stats[m.name], n_samples=bootstrap, seed=seed)
            entry.update(ci.to_dict())
            entry["signature"] = m.signature(len(refs), bs=bootstrap, seed=seed)
        out[m.name] = entry
    if report:
        _write_report(report, ms, hyps, refs)
    _print_scores(out, fmt)


def text_bytes(path: str) -> int:
    """The (decompressed) size of a text input: a .gz's own record of its size (mod 2**32), at
    least three times its compressed size."""
    size = os.stat(path).st_size
    if not str(path).endswith(".gz") or size < 18:
        return size
    with open(path, "rb") as fh:  # regular: checked by the readers before (a FIFO never gets here)
        fh.seek(-4, os.SEEK_END)
        isize = int.from_bytes(fh.read(4), "little")
    return max(isize, 3 * size)


def memory_need(metrics, text: int, report: bool) -> int:
    """Estimated peak bytes of scoring ``text`` bytes of hypotheses and references with every
    segment's statistics in memory (the bootstrap, --report, --src, metrics that do not stream):
    per byte of text about 24 bytes for the costliest metric's statistics pass (10 for TER), 6
    more per further statistics pass, 30 for the per-type report; measured by
    scripts/bench_memory_bounds.py. Neural metrics (their model's memory) are not counted."""
    passes = {m.stats_key(): (10 if m.name.startswith("ter") else 24) for m in metrics
              if not isinstance(m, NeuralMetric)}
    per_byte = (max(passes.values()) + 6 * (len(passes) - 1)) if passes else 0
    if report:
        per_byte = max(per_byte, 30)
    return 200 * 2**20 + per_byte * text


def check_memory(metrics, paths, *, report: bool) -> None:
    """Refuse up front, naming the bound, a scoring estimated (:func:`memory_need`) to need more
    memory than :func:`clir_eval.limits.memory_bytes` (4 GiB unless raised)."""
    for p in paths:
        _check_input(p)
    text = sum(text_bytes(p) for p in paths)
    need, bound = memory_need(metrics, text, report), memory_bytes()
    if need > bound:
        raise UserError(
            f"scoring {text / 2**20:.0f} MiB of text with every segment's statistics in memory (--bootstrap, "
            f"--report, --src or a metric that does not stream) would need about {need / 2**30:.1f} GiB, over the "
            f"bound of {bound / 2**30:.1f} GiB; score without those options (streamed in chunks), split the test "
            "set, or raise the bound with CLIR_EVAL_MAX_MEMORY_BYTES"
        )


def _check_input(path: str) -> None:
    """A FIFO, device or missing file is refused as the readers refuse it (before its size is read)."""
    InputFile(path).close()


def _print_scores(out: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        sys.stdout.write(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
        return
    width = max(len(k) for k in out)
    for name, e in out.items():
        ci = f"  95% CI [{e['ci_low']:.2f}, {e['ci_high']:.2f}]" if "ci_low" in e else ""
        if "ci_note" in e:
            ci += f" (excludes the score; bias {e['bs_bias']:+.2f}, {e['bc_method']} [{e['bc_low']:.2f}, {e['bc_high']:.2f}])"
        sys.stdout.write(f"{name:<{width}}  {e['score']:7.2f}{ci}  {e['signature']}\n")


@app.command("mt-compare")
def mt_compare_cmd(
    hyp: List[str] = typer.Option(..., "--hyp", help="Baseline first, then one or more systems: --hyp BASE --hyp S1 [--hyp S2 ...]."),
    ref: List[str] = typer.Option(..., "--ref", help="Reference file, line-aligned; repeat for several references."),
    metrics: str = typer.Option(_DEFAULT_METRICS, "--metrics", help=_METRICS_HELP),
    tokenize: str = setting_option(MTSettings, "tokenize"),
    lowercase: bool = setting_option(MTSettings, "lowercase"),
    bootstrap: int = setting_option(SignificanceSettings, "bootstrap"),
    ar_trials: int = setting_option(SignificanceSettings, "ar_trials"),
    correction: str = setting_option(SignificanceSettings, "correction"),
    seed: int = setting_option(SignificanceSettings, "seed"),
    fmt: str = typer.Option("json", "--format", help="json | text"),
    src: Optional[str] = typer.Option(None, "--src", help="Source segments, line-aligned with each --hyp (COMET reads them)."),
    device: str = setting_option(MTSettings, "device"),
    batch_size: int = setting_option(MTSettings, "batch_size"),
) -> None:
    """Compare systems with a baseline, with significance tests.

    The baseline is the first --hyp. Tests: paired bootstrap (Koehn 2004), paired approximate
    randomization (sacrebleu --paired-ar) and the sign test, p-values (c+1)/(k+1), adjusted
    over the comparisons.

    \b
    Examples (after 'clir-eval demo --out demo-out'):
      clir-eval mt-compare --hyp demo-out/data/mt/copier.txt --hyp demo-out/data/mt/deleter.txt --ref demo-out/data/mt/ref.en.txt --metrics bleu,macrof1 --bootstrap 100 --ar-trials 100
    """
    _check_format(fmt)
    if len(hyp) < 2:
        raise UserError(f"mt-compare needs a baseline and at least one system (--hyp BASE --hyp SYS ...), got {len(hyp)}")
    if len(set(hyp)) != len(hyp):
        raise UserError("the same --hyp file is given twice; give each system once")
    build(SignificanceSettings, bootstrap=bootstrap, ar_trials=ar_trials, correction=correction, seed=seed)
    ms = load_metrics(split_list(metrics), tokenize=tokenize, lowercase=lowercase)
    set_runtime(ms, device=check_device(device), batch_size=check_option(MTSettings, "batch_size", batch_size))
    check_memory(ms, [*hyp, *ref, *([src] if src else [])], report=False)
    base, refs = read_segments(hyp[0], ref)
    systems = [(h, read_segments(h, ref)[0]) for h in hyp[1:]]
    sources = read_source(src, len(base), hyp[0]) if src else None
    res = compare_to_baseline(ms, (hyp[0], base), systems, refs, n_bootstrap=bootstrap, n_ar=ar_trials,
                              seed=seed, correction=correction, sources=sources)
    if fmt == "json":
        sys.stdout.write(json.dumps(res, indent=1, ensure_ascii=False) + "\n")
        return
    sys.stdout.write(f"baseline = {res['baseline']}; p-values (c+1)/(k+1), {correction}-adjusted over "
                     f"{res['family_size']} comparisons per test (bootstrap {bootstrap}, AR {ar_trials}, seed {seed})\n")
    sys.stdout.write("system\tmetric\tbaseline\tsystem\tdelta\tp_bs\tp_bs_adj\tp_ar\tp_ar_adj\tsign(w/l/t)\tp_sign_adj\n")
    short = dict(zip(hyp[1:], _short_names(hyp[1:])))
    for r in res["comparisons"]:
        s = r["sign"]
        sys.stdout.write(
            f"{short[r['system']]}\t{r['metric']}\t{r['score_baseline']:.2f}\t{r['score_system']:.2f}\t{r['delta']:+.2f}\t"
            f"{r['bootstrap']['p_value']:.4f}\t{r['bootstrap']['p_adjusted']:.4f}\t{r['ar']['p_value']:.4f}\t"
            f"{r['ar']['p_adjusted']:.4f}\t{s['wins']}/{s['losses']}/{s['ties']}\t{s['p_adjusted']:.4f}\n")


def _short_names(paths: List[str]) -> List[str]:
    """File names without .gz/.txt when they are unique, else the paths as given."""
    names = [Path(p).name.removesuffix(".gz").removesuffix(".txt") for p in paths]
    return names if len(set(names)) == len(names) else list(paths)


def _bucket_tsv(res) -> str:
    lines = ["system\tbucket\tn_types\tref_tokens\tmacro_f\tprecision\trecall"]
    fmt = lambda v: "" if v is None else f"{v:.4f}"  # noqa: E731
    for name, rows in res.systems.items():
        for r in rows:
            lines.append(f"{name}\t{r['bucket']}\t{r['n_types']}\t{r['ref_tokens']}\t{fmt(r['macro_f'])}\t"
                         f"{fmt(r['precision'])}\t{fmt(r['recall'])}")
    return "\n".join(lines) + "\n"


@app.command("mt-buckets")
def mt_buckets_cmd(
    hyp: List[str] = typer.Option(..., "--hyp", help="System output; repeat for several systems."),
    ref: List[str] = typer.Option(..., "--ref", help="Reference file, line-aligned; repeat for several references."),
    buckets: str = setting_option(BucketsAnalysis, "buckets", extra="A comma list, e.g. 500 or 10,100,1000."),
    beta: float = setting_option(BucketsAnalysis, "beta"),
    tokenize: str = setting_option(MTSettings, "tokenize"),
    lowercase: bool = setting_option(MTSettings, "lowercase"),
    plot: Optional[str] = typer.Option(None, "--plot", help="Also write a PNG line plot (MacroF per bucket per system) here."),
    fmt: str = typer.Option("json", "--format", help="json | tsv"),
) -> None:
    """MacroF per bucket of reference word frequency.

    Does a system win on frequent or on rare words?

    As Figure 1 of Gowda et al. (2021).

    \b
    Examples (after 'clir-eval demo --out demo-out'):
      clir-eval mt-buckets --hyp demo-out/data/mt/literal.txt --hyp demo-out/data/mt/fluent-oov.txt --ref demo-out/data/mt/ref.en.txt --buckets 10,100 --format tsv
    """
    if fmt not in ("json", "tsv"):
        raise UserError(f"--format must be json or tsv, got {fmt!r}")
    if len(set(hyp)) != len(hyp):
        raise UserError("the same --hyp file is given twice; give each system once")
    bounds = parse_buckets(buckets)
    check_option(BucketsAnalysis, "beta", beta)
    if plot:
        check_output_file(plot, "--plot")
    systems, refs = [], None
    for h, name in zip(hyp, _short_names(hyp)):
        hyps, refs = read_segments(h, ref)
        systems.append((name, hyps))
    res = frequency_buckets(systems, refs, bounds, beta=beta, tokenize=tokenize, lowercase=lowercase)
    if plot:
        png = plot_buckets(res)
        with atomic_write(plot, "wb", parents=False) as fh:
            fh.write(png)
    sys.stdout.write(json.dumps(res.to_dict(), indent=1, ensure_ascii=False) + "\n" if fmt == "json" else _bucket_tsv(res))
