"""Measured CPU cost of the MT metrics: run-time estimates and the warning before a slow metric.

The rates are CPU-seconds per 1000 lines, one metric at a time in one process, measured with
``python scripts/measure_mt_rates.py --lines 5000 --metrics bleu,chrf1,macrof1,microf1,ter``
(WMT21 de-en, Facebook-AI vs reference A repeated to 5000 lines, sacrebleu 2.x, a shared 2-core
machine). TER's rate is the one measured for it by scripts/bench_ter.py
(``TER_SEGMENTS_PER_CPU_S`` here, one home for it); that script's
figure and this one's agreed within 12% (4.17 vs 3.74 CPU-s per 1000 lines). They are estimates
for planning, not guarantees; re-measure after changing a metric.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from ..errors import UserError
from ..io.files import InputFile
from .base import load_metric

#: TER's cost is sacrebleu's own: its tercom edit distance with shifts, in Python, is ~98% of a
#: TER run (clir-eval adds imports only: 1.06x ``sacrebleu -m ter`` whole-command CPU). Measured
#: rate, in segments per CPU-second, on News Commentary de-en (5000 segments, ~22 reference
#: words each) by scripts/bench_ter.py on a shared 2-core machine; the cost per segment grows
#: roughly with the square of its length, so treat it as an order of magnitude for a warning.
TER_SEGMENTS_PER_CPU_S = 240
TER_RATE_MEAN_REF_WORDS = 22  # mean reference length of the segments that rate was measured on

CPU_PER_1000_LINES = {
    "bleu": 0.076,
    "chrf": 0.27,
    "chrf1": 0.27,
    "macrof1": 0.017,
    "macrof": 0.017,
    "microf1": 0.023,
    "microf": 0.023,
}
# Neural metrics on CPU: (CPU-s per 1000 lines, encoder layers, hidden size) of the architecture
# measured by ``python scripts/bench_neural.py --n 64`` and ``--n 128`` (random-weight checkpoints of
# wmt22-comet-da's and BLEURT-20-D12's size (12 x 1024, inferred from its 167M parameters), WMT21
# de-en segments evenly spaced, batch 16, 2 torch threads on a shared 2-core machine at load 1-4:
# COMET 0.57-0.69, BLEURT 0.17-0.27 CPU-s per segment, clir-eval and the libraries' APIs). Another
# checkpoint's rate is scaled by layers x hidden^2 of its encoder (config.json). On a GPU: not estimated.
NEURAL_CPU_PER_1000_LINES = {"comet": (650.0, 24, 1024), "bleurt": (220.0, 12, 1024)}
MEASURED_WITH = {"ter": "scripts/bench_ter.py, News Commentary de-en, 5000 segments",
                 "comet": "scripts/bench_neural.py, XLM-R large on CPU, scaled to the checkpoint's encoder size",
                 "bleurt": "scripts/bench_neural.py, BLEURT-20-D12 size (12x1024) on CPU, scaled to the checkpoint's encoder size"}
MEASURED_DEFAULT = "scripts/measure_mt_rates.py, WMT21 de-en, 5000 lines"
SLOW = 1.0  # CPU-s per 1000 lines at or above which a metric is slow
WARN_CPU = 60.0  # warn before a slow metric whose estimated CPU over the run reaches this


def base(metric: str) -> str:
    return metric.split(":", 1)[0].strip().lower()


def rate(metric: str, device: str = "cpu") -> float | None:
    """CPU-seconds per 1000 lines of ``metric`` (None when never measured, and for a neural metric
    on a GPU)."""
    if base(metric) in NEURAL_CPU_PER_1000_LINES:
        return neural_rate(metric) if device == "cpu" else None
    if base(metric) == "ter":
        return 1000 / TER_SEGMENTS_PER_CPU_S
    return CPU_PER_1000_LINES.get(base(metric))


def neural_rate(metric: str) -> float:
    """The measured CPU rate of a neural metric's architecture, scaled by layers x hidden^2 of the
    checkpoint's encoder (unscaled when its config.json cannot be read)."""
    r, layers, hidden = NEURAL_CPU_PER_1000_LINES[base(metric)]
    try:
        cfg = load_metric(metric).encoder_config()
        return r * (int(cfg["num_hidden_layers"]) * int(cfg["hidden_size"]) ** 2) / (layers * hidden ** 2)
    except (UserError, KeyError, TypeError, ValueError):
        return r


def is_neural(metric: str) -> bool:
    return base(metric) in NEURAL_CPU_PER_1000_LINES


def cpu_estimate(metric: str, lines: int, device: str = "cpu") -> float | None:
    """Estimated CPU-seconds of ``metric`` on ``lines`` lines (None for an unmeasured metric)."""
    r = rate(metric, device)
    return None if r is None else r * lines / 1000


def slow_metric_warnings(lines_per_metric: Mapping[str, Iterable[int]], jobs: int, device: str = "cpu") -> list[str]:
    """One warning per slow metric whose estimated CPU over the systems still to score reaches
    :data:`WARN_CPU`: ``{metric: [lines of each system]}``. Neural metrics are scored in the main
    process before the systems run (torch's own threads), so the workers do not divide their time."""
    out = []
    for metric, lines in lines_per_metric.items():
        lines = list(lines)
        r = rate(metric, device)
        if r is None or r < SLOW or not lines:
            continue
        cpu = r * sum(lines) / 1000
        if cpu < WARN_CPU:
            continue
        how = MEASURED_WITH.get(base(metric), MEASURED_DEFAULT)
        if is_neural(metric):
            where = "in the main process (device: cuda is faster where there is a GPU)"
        else:
            where = f"{_human(cpu / max(1, min(jobs, len(lines))))} with {min(jobs, len(lines))} worker(s)"
        out.append(f"{metric} is slow: {r:.2f} CPU-s per 1000 lines (measured: {how}); "
                   f"{len(lines)} system(s), {sum(lines):,} lines: about {_human(cpu)} CPU, {where}. "
                   "Leave it out of mt.metrics if you do not need it.")
    return out


def _human(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else (f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h")


def count_lines(path: str) -> int:
    """Lines of a plain or gzipped text file (a last line without a newline counts)."""
    n, last = 0, b"\n"
    with InputFile(path) as fh:
        while block := fh.read(1 << 20):
            n += block.count(b"\n")
            last = block[-1:]
    return n + (last != b"\n")
