"""The MT stage's settings, declared once: the config's ``mt:`` section (read by the MT task) and the ``analyses:``
section (favoritism, frequency buckets on the MT test set)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..correlation.settings import CORRECTIONS
from ..errors import UserError
from ..limits import MAX_DEPTH, MAX_RESAMPLES, MAX_SEED, SACREBLEU_SEED
from ..settings import SettingError, Settings, setting
from .base import LOWERCASE, TOKENIZE, MetricSpec, metric_spec
from .neural import DEVICES, MAX_BATCH, check_device

DEFAULT_METRICS = ("bleu", "chrf1", "macrof1", "microf1")


@dataclass(frozen=True)
class SignificanceSettings(Settings):
    """Resampling of MT scores (``mt-compare``, ``mt-score --bootstrap``): sacrebleu's defaults."""

    bootstrap: int = setting(1000, "Paired bootstrap resamples.", ge=1, le=MAX_RESAMPLES)
    ar_trials: int = setting(10000, "Approximate randomization trials (sacrebleu's default 10000).", ge=1,
                             le=MAX_RESAMPLES)
    correction: str = setting("holm", "p-value adjustment over all system x metric comparisons of a test.",
                              choices=CORRECTIONS, label="correction")
    seed: int = setting(SACREBLEU_SEED, "Random seed (recorded in the output).", ge=0, le=MAX_SEED)


@dataclass(frozen=True)
class MTSettings(Settings):
    """The ``mt:`` section: reference and source files, metrics, tokenization, and where neural metrics run."""

    refs: tuple[str, ...] = setting((), "Reference files, line-aligned with every system's hypotheses.", input=True)
    metrics: tuple[str, ...] = setting(DEFAULT_METRICS, "MT metrics: registry names, e.g. bleu, chrf:beta=1.",
                                       nonempty="metric")
    tokenize: str = setting(TOKENIZE, "sacrebleu tokenizer for BLEU, BLEU-SBP, MacroF, MicroF (13a, intl, zh, char, none, ...).")
    lowercase: bool = setting(LOWERCASE, "Case-insensitive scoring (all metrics).")
    source: str | None = setting(None, "Source segments, line-aligned with the references (COMET reads them).",
                                 input=True)
    device: str = setting("cpu", f"Where neural metrics (comet, bleurt) run: {DEVICES}.", key=False)
    batch_size: int = setting(16, "Segments per batch of the neural metrics (never changes a score).", ge=1,
                              le=MAX_BATCH, key=False)

    def check(self) -> None:
        try:
            self.set("device", check_device(self.device))
        except UserError as e:
            raise SettingError("device", self.device, str(e), shows_value=True) from None
        specs: dict[str, MetricSpec] = {}
        for i, spec in enumerate(self.metrics):
            try:
                m = metric_spec(spec, self.tokenize, self.lowercase)
            except UserError as e:
                raise SettingError(f"metrics[{i}]", spec, str(e), shows_value=True) from None
            specs.setdefault(m.name, m)
        object.__setattr__(self, "_specs", tuple(specs.values()))  # not a field: derived, and not keyed

    @property
    def specs(self) -> tuple[MetricSpec, ...]:
        """The metrics, parsed once when the record was made (distinct canonical names, in order): the
        stages build the metrics from these (:func:`~clir_eval.mt.base.build_metrics`)."""
        return self.__dict__["_specs"]

    def specs_for(self, metrics: Sequence[str]) -> tuple[MetricSpec, ...]:
        """Other metric specs (e.g. ``item_level.metrics``) parsed with this section's tokenizer and case."""
        return tuple(metric_spec(spec, self.tokenize, self.lowercase) for spec in metrics)


@dataclass(frozen=True)
class FavoritismAnalysis(Settings):
    """Favoritism of each metric towards ``systems[0]`` over ``systems[1]`` (Gowda et al. 2021 §4.1)."""

    systems: tuple[str, str] = setting(help="Two different systems [S, U]: favoritism towards S over U.")
    metrics: tuple[str, ...] = setting(("bleu", "macrof1"), "MT metrics compared.")
    top: int = setting(10, "Segments listed per metric, largest absolute favoritism first.", ge=1, le=MAX_DEPTH)

    def check(self) -> None:
        if len(self.systems) != 2 or self.systems[0] == self.systems[1]:
            raise SettingError("systems", self.systems, "give two different system names [S, U] (favoritism towards "
                               f"S over U), got {list(self.systems)}", shows_value=True)
        if not self.metrics:
            raise SettingError("metrics", self.metrics, "give at least one MT metric, e.g. [bleu, macrof1]",
                               shows_value=True)
        for i, spec in enumerate(self.metrics):
            try:
                metric_spec(spec)
            except UserError as e:
                raise SettingError(f"metrics[{i}]", spec, str(e), shows_value=True) from None


@dataclass(frozen=True)
class BucketsAnalysis(Settings):
    """MacroF per reference-frequency rank bucket (Gowda et al. 2021 Fig. 1)."""

    buckets: tuple[int, ...] = setting((10, 100, 1000), "Increasing rank boundaries: [10, 100, 1000] are the "
                                                        "ranks 1-10, 11-100, 101-1000 and 1001+.")
    systems: tuple[str, ...] = setting((), "The systems (empty or all: every system with MT output).")
    beta: float = setting(1.0, "MacroF's beta.", gt=0, le=100)

    def check(self) -> None:
        b = self.buckets
        if (not b or any(isinstance(x, bool) or not isinstance(x, int) or x < 1 for x in b)
                or any(x >= y for x, y in zip(b, b[1:]))):
            raise SettingError("buckets", b, "give increasing positive rank boundaries such as [10, 100, 1000] (ranks "
                               f"1-10, 11-100, 101-1000, 1001+), got {list(b)!r}", shows_value=True)
        if len(set(self.systems)) != len(self.systems):
            raise SettingError("systems", self.systems, f"a system is listed twice: {list(self.systems)}",
                               shows_value=True)


@dataclass(frozen=True)
class AnalysesConfig(Settings):
    """The ``analyses:`` section: analyses on the MT test set, reported in results.json and the reports."""

    favoritism: FavoritismAnalysis | None = setting(None, "Favoritism towards one system over another")
    frequency_buckets: BucketsAnalysis | None = setting(None, "MacroF per reference-frequency bucket")

    def check(self) -> None:
        if self.favoritism is None and self.frequency_buckets is None:
            raise SettingError("", None, "empty; give favoritism: and/or frequency_buckets: (see docs/configs.md "
                               "'Analyses on the MT test set') or remove the section", shows_value=True)

    def check_systems(self, where: str, names: Sequence[str]) -> None:
        """Every system an analysis names is one of ``names`` (the systems with a hypothesis file)."""
        wanted = [("favoritism", n) for n in (self.favoritism.systems if self.favoritism else ())]
        wanted += [("frequency_buckets", n) for n in (self.frequency_buckets.systems if self.frequency_buckets else ())]
        for part, n in wanted:
            if n not in names:
                shown = ", ".join(names[:20]) + (f", ... ({len(names) - 20} more)" if len(names) > 20 else "")
                raise UserError(f"{where}: analyses.{part}.systems: {n!r} is not a system with MT output in this "
                                f"experiment; use one of: {shown}")
