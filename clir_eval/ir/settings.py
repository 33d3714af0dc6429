"""The IR stage's settings, declared once: the config's ``ir:`` and ``relevance:`` sections are read into these
records (the IR task embeds ``IRSettings``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import UserError
from ..limits import MAX_DEPTH
from ..settings import SettingError, Settings, like, setting
from .measures import parse_measure

if TYPE_CHECKING:
    from .measures import Measure

DEFAULT_MEASURES = ("map", "ndcg", "P_10", "rbo:p=0.98")
SCORE_MEASURES = ("map", "ndcg", "P_10", "recall_100", "recip_rank")  # ir-score's: rbo would need --reference-run
PSEUDO_TOP_K = 100  # pseudo-qrels depth of `pseudo: {}` and of generated queries without a relevance: section


@dataclass(frozen=True)
class IRSettings(Settings):
    """The ``ir:`` section: the measures, and the collection size AQWV/MQWV count false alarms against
    (default: the number of documents)."""

    measures: tuple[str, ...] = setting(DEFAULT_MEASURES, "IR measures: trec_eval or ir_measures names, rbo, aqwv, "
                                                          "mqwv (e.g. map,ndcg_cut_10,P@10,rbo:p=0.9).", nonempty="measure")
    collection_size: int | None = setting(None, "Documents in the collection for AQWV/MQWV (default: counted).", ge=1)

    def check(self) -> None:
        if not self.measures:
            raise SettingError("measures", self.measures, "an empty list; name at least one measure", shows_value=True)

        parsed = []
        for i, spec in enumerate(self.measures):
            try:
                m = parse_measure(spec)
            except UserError as e:
                raise SettingError(f"measures[{i}]", spec, str(e), shows_value=True) from None
            if m not in parsed:
                parsed.append(m)
        object.__setattr__(self, "_parsed", tuple(parsed))  # not a field: derived, and not keyed

    @property
    def parsed(self) -> tuple[Measure, ...]:
        """The measures, parsed once when the record was made (distinct, in order): the IR stage
        evaluates these."""
        return self.__dict__["_parsed"]


@dataclass(frozen=True)
class ScoreSettings(IRSettings):
    """``ir-score``'s measures (one run, no config): the section's except the default, which leaves out rbo
    (it needs a reference run)."""

    measures: tuple[str, ...] = like(IRSettings, "measures", SCORE_MEASURES, "Comma list, e.g. map,ndcg_cut_10,P_10,"
                                     "rbo:p=0.98,aqwv:beta=40,cutoff=10,mqwv.")
    collection_size: int | None = like(IRSettings, "collection_size", None, "Number of documents in the collection "
                                       "(needed by aqwv/mqwv).")


@dataclass(frozen=True)
class RelevanceConfig(Settings):
    """The ``relevance:`` section: a qrels file, or pseudo-qrels (the top documents of the English-side run
    are relevant)."""

    qrels: str | None = setting(None, "A TREC qrels file (or irds:<dataset id>).")
    pseudo_top_k: int | None = setting(None, f"Pseudo-qrels: the top K documents of the English-side run of each "
                                             f"query are relevant (pseudo: {{}} gives {PSEUDO_TOP_K}).", ge=1,
                                       le=MAX_DEPTH, yaml="pseudo.top_k")

    def check(self) -> None:
        if (self.qrels is None) == (self.pseudo_top_k is None):
            raise SettingError("", None, f"give either qrels: FILE or pseudo: {{top_k: {PSEUDO_TOP_K}}}",
                               shows_value=True)
