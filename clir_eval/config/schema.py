"""Experiment configs as frozen records; ``load.py`` builds them from YAML."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from ..correlation.settings import CorrelationSettings, ItemLevelSettings
from ..ir.settings import IRSettings, RelevanceConfig
from ..pipeline.settings import RunSettings
from ..retrieval.settings import RetrievalSettings
from ..settings import default, same_as
from ..sources.settings import CollectionConfig, EuroparlSource, ExternalTable, QueriesConfig, WMTSource

if TYPE_CHECKING:  # the mt package registers its metrics (sacrebleu) when imported: only configs with mt: load it
    from ..mt.settings import AnalysesConfig, MTSettings


@dataclass(frozen=True)
class SystemSpec:
    """One MT system: MT test-set hypothesis and/or translated collection (document translation), or its
    translations of the queries (query translation)."""

    name: str
    hyp: str | None = None
    docs: str | None = None
    attrs: Mapping[str, str] = field(default_factory=dict)
    queries: str | None = None  # With translate: queries, the system's translations of the queries (ids of queries.file).


@dataclass(frozen=True)
class Config:
    name: str
    path: str
    base_dir: str
    data_root: str | None
    seed: int = same_as(RunSettings, "seed")
    jobs: int | None = same_as(RunSettings, "jobs")
    systems: tuple[SystemSpec, ...] = ()
    mt: MTSettings | None = None
    collection: CollectionConfig | None = None
    queries: QueriesConfig | None = None
    relevance: RelevanceConfig | None = None
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    ir: IRSettings = field(default_factory=IRSettings)
    external: tuple[ExternalTable, ...] = ()
    correlation: CorrelationSettings = field(default_factory=CorrelationSettings)
    wmt: WMTSource | None = None
    europarl: EuroparlSource | None = None
    notes: tuple[str, ...] = ()
    executor: str = same_as(RunSettings, "executor")
    analyses: AnalysesConfig | None = None
    shard_docs: int = same_as(RunSettings, "shard_docs")
    item_level: ItemLevelSettings = field(default_factory=ItemLevelSettings)
    translate: str = "documents"  # The CLIR architecture: documents (each system translates the collection) or queries (each system translates the queries, which search one collection in its own language).

    @property
    def query_translation(self) -> bool:
        return self.translate == "queries"

    @property
    def has_retrieval(self) -> bool:
        return self.collection is not None or self.wmt is not None or self.europarl is not None

    def to_dict(self) -> dict[str, Any]:
        """The config as recorded in results.json: everything but the executor and shard size, so
        that every executor and sharding gives byte-identical results; the optional settings in ``_LISTED_WHEN_SET``
        appear only when set, so results of configs that do not use them keep their form."""
        d = _plain(asdict(self))
        d.pop("executor")
        d.pop("shard_docs")
        for section, keys in _LISTED_WHEN_SET.items():
            record, sec = getattr(self, section), d.get(section)
            if record is not None and isinstance(sec, dict):
                for k in keys:
                    if k in sec and sec[k] == _plain(default(type(record), k)):
                        del sec[k]
        if d["analyses"] is None:  # configs without analyses record what they did before
            d.pop("analyses")
        if self.item_level == ItemLevelSettings():  # the default is recorded in results.json's item_level block
            d.pop("item_level")
        if self.translate == "documents":  # document translation, the default: recorded in the signature
            d.pop("translate")
        for s in d["systems"]:
            if s.get("queries") is None:
                s.pop("queries", None)
        return d


# settings left out of results.json while they have their record's declared default
_LISTED_WHEN_SET: dict[str, tuple[str, ...]] = {
    "mt": ("source", "device", "batch_size"),
    "wmt": ("domains", "docs", "headline_domains", "direction"),
    "collection": ("distractors",),
}


def _plain(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj
