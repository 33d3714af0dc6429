"""The correlation stage's settings, declared once: the config's ``correlation:`` and ``item_level:`` sections,
read into these records, and the choices the statistics accept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..limits import MAX_DECIMALS, MAX_RESAMPLES, MAX_SEED, RUN_SEED, TABLE_SEED
from ..settings import SettingError, Settings, default, like, same_as, setting

METHODS = ("kendall", "pearson", "spearman")
VARIANTS = ("b", "c", "acc23")
CORRECTIONS = ("holm", "bh", "none")
RESOLUTIONS = ("sequential", "fixed")
FAMILIES = ("target", "all")


MIN_SEPARATED_SHARE = 0.10  # a target separating fewer system pairs than this is uninformative
DELTA_CI_RESAMPLES = 1000  # Δτ CI draws in ``correlate`` when --ci does not set them


CI_LEVEL = 0.95  # confidence level of the intervals (correlations, Δτ, item level, MT bootstrap) unless one is given

@dataclass(frozen=True)
class CorrelationSettings(Settings):
    """The ``correlation:`` section: coefficient, significance level, resampling, seed, per-score rounding,
    and how the verdicts adjust and resolve their comparisons."""

    method: str = setting("kendall", "Correlation coefficient: kendall, pearson or spearman.", choices=METHODS,
                          label="correlation method")
    variant: str = setting("b", "Kendall τ variant: b, c or acc23.", choices=VARIANTS, label="Kendall variant")
    alpha: float = setting(0.05, "Significance level: significant iff p < alpha.", gt=0, lt=1)
    bootstrap: int = setting(1000, "Bootstrap resamples of the τ confidence intervals (0: none).", ge=0,
                             le=MAX_RESAMPLES)
    permutation: int = setting(1000, "Permutation draws of the tests between two metrics' τ (0: none).", ge=0,
                               le=MAX_RESAMPLES)
    seed: int = setting(RUN_SEED, "Random seed of the resampling (default: the config's seed).", ge=0, le=MAX_SEED)
    round: Mapping[str, int] = setting(default_factory=dict, help="Decimals per score name, rounded half-up "
                                                                  "before correlating, e.g. {chrf1: 1}.")
    correction: str = setting("holm", "Multiple-testing correction of the verdicts: holm, bh or none.",
                              choices=CORRECTIONS, label="correction")
    family: str = setting("target", "What the correction adjusts over: target (each target's metric pairs) or all "
                                    "(every pair of every target).", choices=FAMILIES, label="family")
    resolution: str = setting("sequential", "Permutation draws of the verdicts: sequential (draw until each decision "
                                            "is settled, up to a cap from the family size and alpha) or fixed (exactly "
                                            "the permutation count).", choices=RESOLUTIONS, label="resolution")

    def stats(self) -> StatsSettings:
        """A run's statistics settings: the section's coefficient, level, bootstrap resamples and seed."""
        return StatsSettings(self.method, self.variant, self.alpha, self.bootstrap, self.seed)

    def verdicts(self) -> VerdictSettings:
        """A run's verdict settings: the section's permutation draws, correction, family and resolution; Δτ CIs
        with its bootstrap resamples."""
        return VerdictSettings(self.permutation, self.correction, family=self.family, resolution=self.resolution,
                               ci_resamples=self.bootstrap)

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
class CorrelationInputs:
    """What the correlation stage reads besides the scores: the ``correlation:`` section, and where
    relevance comes from (for its circularity note). The stage's cache key is built from it, so a
    config's name, notes or location key nothing."""

    correlation: CorrelationSettings
    qrels: bool = False  # relevance from human qrels
    pseudo_qrels: bool = False  # relevance from the English side's own top-k
    wmt: bool = False  # documents and references from a WMT test set
    reference_language: str | None = None  # the reference side's language, when not English (None: en)


@dataclass(frozen=True)
class StatsSettings(Settings):
    """How the driver (``correlation/driver.py``) correlates: the section's coefficient and level, and its
    resampling and seeding. A run makes it from its section (:meth:`CorrelationSettings.stats`); ``correlate``
    from its options, whose defaults are these (no bootstrap and seed 0: a score table has no config)."""

    method: str = same_as(CorrelationSettings, "method")
    variant: str | None = same_as(CorrelationSettings, "variant")
    alpha: float = same_as(CorrelationSettings, "alpha")
    resamples: int = like(CorrelationSettings, "bootstrap", 0, "Bootstrap resamples over systems for a CI per cell "
                                                               "(0 = none).")
    seed: int = like(CorrelationSettings, "seed", TABLE_SEED, "Seed of the bootstrap and permutation tests.")
    level: float = setting(CI_LEVEL, "Confidence level of the intervals.", gt=0, lt=1)
    seed_per_pair: bool = setting(True, "Pair i draws with seed + i (a run); else every pair uses the seed.")

    def check(self) -> None:
        self.set("variant", None if self.method != "kendall" else self.variant or default(CorrelationSettings, "variant"))


@dataclass(frozen=True)
class VerdictSettings(Settings):
    """Ranking with significance clusters: PERM-BOTH draws (the first round; ``sequential`` resolution draws
    more where a decision is open), correction and its family, discriminability, and the draws of the Δτ CIs
    (0: none). A run makes it from its section (:meth:`CorrelationSettings.verdicts`)."""

    resamples: int = like(CorrelationSettings, "permutation", default(CorrelationSettings, "permutation"),
                          "PERM-BOTH draws per pair: the first round; resolution sequential draws more where a "
                          "decision is still open.", ge=1)
    correction: str = same_as(CorrelationSettings, "correction")
    discriminability: bool = setting(True, "Report each target's discriminability (a run).")
    family: str = same_as(CorrelationSettings, "family")
    resolution: str = same_as(CorrelationSettings, "resolution")
    ci_resamples: int = like(CorrelationSettings, "bootstrap", DELTA_CI_RESAMPLES, "Bootstrap draws of the Δτ "
                             "CIs (0: none).")


@dataclass(frozen=True)
class ItemLevelSettings(Settings):
    """The ``item_level:`` section: document- and query-level meta-evaluation (``docs/item-level.md``).
    ``permutation`` None = the correlation section's; ``bootstrap`` 0 = no descriptive bootstrap intervals."""

    enabled: bool = setting(True, "Run the item-level analysis when the run has MT metrics and a collection with "
                                  "an English side (item_level: false switches it off).")
    metrics: tuple[str, ...] = setting((), "MT metrics scored per item (empty: every metric of mt.metrics that "
                                           "scores single items).")
    bootstrap: int = setting(0, "Bootstrap resamples of each item-level row's descriptive intervals ci_items and "
                                "ci_systems (resampling only the items or only the systems; no answer, test or "
                                "verdict uses them): 0 = not computed, e.g. 1000 to add them (correlation.bootstrap "
                                "does not).", ge=0, le=MAX_RESAMPLES)
    permutation: int | None = setting(None, "Permutation draws of the item-level tests between two metrics' τ "
                                            "(default: correlation.permutation).", ge=0, le=MAX_RESAMPLES)


@dataclass(frozen=True)
class DesignSettings(Settings):
    """``clir-eval design``: the simulation of new studies of other sizes (``docs/item-level.md``, Study design)."""

    reps: int = setting(400, "Simulated studies per question, size and effect (Monte Carlo se <= 0.5/sqrt(reps)).",
                        ge=20, le=MAX_RESAMPLES)
    power: float = setting(0.8, "Power the one-line answers aim at.", gt=0, lt=1)
    seed: int = setting(RUN_SEED, "Seed of the simulation.", ge=0, le=MAX_SEED)
