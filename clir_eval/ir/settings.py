"""The IR stage's settings, declared once: the config's ``ir:`` section and the IR task read this record."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UserError
from ..settings import SettingError, Settings, setting

DEFAULT_MEASURES = ("map", "ndcg", "P_10", "rbo:p=0.98")


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
        from .measures import parse_measure  # pytrec_eval: loaded when measures are checked, not with the package

        for i, spec in enumerate(self.measures):
            try:
                parse_measure(spec)
            except UserError as e:
                raise SettingError(f"measures[{i}]", spec, str(e), shows_value=True) from None
