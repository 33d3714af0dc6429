"""The correlation stage's settings, declared once: the config's ``correlation:`` and ``item_level:`` sections,
read into these records, and the choices the statistics accept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..limits import MAX_DECIMALS, MAX_RESAMPLES, MAX_SEED
from ..settings import SettingError, Settings, setting

METHODS = ("kendall", "pearson", "spearman")
VARIANTS = ("b", "c", "acc23")
CORRECTIONS = ("holm", "bh", "none")
RESOLUTIONS = ("sequential", "fixed")
FAMILIES = ("target", "all")


MIN_SEPARATED_SHARE = 0.10  # a target separating fewer system pairs than this is uninformative


@dataclass(frozen=True)
class CorrelationSettings(Settings):
    """The ``correlation:`` section: coefficient, significance level, resampling, seed, per-score rounding,
    and how the verdicts adjust and resolve their comparisons."""

    method: str = setting("kendall", "Correlation coefficient: kendall, pearson or spearman.", choices=METHODS,
                          label="correlation method")
    variant: str = setting("b", "Kendall τ variant: b, c or acc23.", choices=VARIANTS, label="Kendall variant")
    alpha: float = setting(0.05, "Significance level.", ge=0, le=1)
    bootstrap: int = setting(1000, "Bootstrap resamples of the τ confidence intervals (0: none).", ge=0,
                             le=MAX_RESAMPLES)
    permutation: int = setting(1000, "Permutation draws of the tests between two metrics' τ (0: none).", ge=0,
                               le=MAX_RESAMPLES)
    seed: int = setting(13, "Random seed of the resampling (default: the config's seed).", ge=0, le=MAX_SEED)
    round: Mapping[str, int] = setting(default_factory=dict, help="Decimals per score name, rounded half-up "
                                                                  "before correlating, e.g. {chrf1: 1}.")
    correction: str = setting("holm", "Multiple-testing correction of the verdicts: holm, bh or none.",
                              choices=CORRECTIONS, label="correction")
    family: str = setting("target", "What the correction adjusts over: target (each target's metric pairs) or all "
                                    "(every pair of every target).", choices=FAMILIES, label="family")
    resolution: str = setting("sequential", "Permutation draws of the verdicts: sequential (draw until each decision "
                                            "is settled, up to a cap from the family size and alpha) or fixed (exactly "
                                            "the permutation count).", choices=RESOLUTIONS, label="resolution")

    def check(self) -> None:
        rnd = self.round
        if not isinstance(rnd, Mapping) or not all(isinstance(v, int) and not isinstance(v, bool) for v in rnd.values()):
            raise SettingError("round", rnd, "expected a mapping score_name: decimals, e.g. {chrf1: 1}", shows_value=True)
        for k, v in rnd.items():
            if not 0 <= v <= MAX_DECIMALS:
                raise SettingError(f"round.{k}", v, f"{v} decimals is out of range; use 0 to {MAX_DECIMALS}",
                                   shows_value=True)
        self.set("round", {str(k): int(v) for k, v in rnd.items()})


@dataclass(frozen=True)
class ItemLevelSettings(Settings):
    """The ``item_level:`` section: document- and query-level meta-evaluation (``docs/item-level.md``).
    ``bootstrap``/``permutation`` None = the correlation section's."""

    enabled: bool = setting(True, "Run the item-level analysis when the run has MT metrics and a collection with "
                                  "an English side (item_level: false switches it off).")
    metrics: tuple[str, ...] = setting((), "MT metrics scored per item (empty: every metric of mt.metrics that "
                                           "scores single items).")
    bootstrap: int | None = setting(None, "Bootstrap resamples of the item-level τ intervals (default: "
                                          "correlation.bootstrap).", ge=0, le=MAX_RESAMPLES)
    permutation: int | None = setting(None, "Permutation draws of the item-level tests between two metrics' τ "
                                            "(default: correlation.permutation).", ge=0, le=MAX_RESAMPLES)
