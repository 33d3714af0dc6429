"""Stage tasks: frozen, typed records of everything a stage reads (its cache key is derived from them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from ..correlation.settings import CorrelationInputs
from ..io.files import text_checksum
from ..ir.settings import IRSettings
from ..retrieval.settings import IndexSettings, RetrievalSettings

if TYPE_CHECKING:  # the mt package registers its metrics (sacrebleu) when imported; MT tasks copy the config's record
    from ..mt.settings import MTSettings

INPUT = {"input": True}  # field metadata: a file path, keyed by its content, not its name
NOT_KEYED = {"key": False}  # field metadata: a check that cannot change the output


@dataclass(frozen=True)
class MTTask:
    """Score one system's MT test-set hypotheses against the references."""

    STAGE: ClassVar[str] = "mt"
    system: str
    hyp: str = field(metadata=INPUT)
    mt: MTSettings  # with the experiment's reference and source files (keyed by content)
    # metrics whose per-segment scores the stage also keeps, in an entry of their own (:class:`SegmentItemsTask`)
    segments: tuple[str, ...] = field(default=(), metadata=NOT_KEYED)


@dataclass(frozen=True)
class SegmentItemsTask:
    """Per-segment scores of one system's MT test set (item level), from the statistics the MT
    stage computes: an entry beside the MT stage's, keyed by that task and the metrics."""

    STAGE: ClassVar[str] = "segments"
    system: str
    mt: MTTask
    metrics: tuple[str, ...]
    kind: str = "segments"


@dataclass(frozen=True)
class SegmentScoresTask:
    """One neural metric's segment scores of one hypothesis/reference/source triple (``key``: the
    checkpoint hash, library versions and the texts' checksums, ``mt/neural.py``), kept apart from
    the MT stage's entry so a changed metric list or setting never re-runs the model."""

    STAGE: ClassVar[str] = "neural"
    system: str  # the metric (entry file names)
    key: str


@dataclass(frozen=True)
class ShardTask:
    """Pass 1 of one span of a collection's lines (``first`` .. ``first + lines - 1``): its
    documents analysed into (document, term, tf) triples (:mod:`.shards`)."""

    STAGE: ClassVar[str] = "shards"
    system: str
    docs: str = field(metadata=INPUT)
    format: str | None
    analyzer: str
    stopwords: str | None
    stem: str | None
    first: int
    lines: int
    offset: int | None = field(default=None, metadata=NOT_KEYED)  # byte offset of line ``first``: a seek hint
    stopwords_file: str | None = field(default=None, metadata=INPUT)
    memory: int = field(default=0, metadata=NOT_KEYED)  # estimated peak bytes
    language: str | None = None  # the collection's (retrieval.language; None: en)


@dataclass(frozen=True)
class IndexTask:
    """Build (or load) the BM25 index of one collection: cached apart from the runs, so other
    queries, depth or measures re-search it but never rebuild it."""

    STAGE: ClassVar[str] = "index"
    system: str
    docs: str = field(metadata=INPUT)
    format: str | None
    settings: IndexSettings
    stopwords_file: str | None = field(default=None, metadata=INPUT)  # keyed by content
    shards: tuple[ShardTask, ...] = field(default=(), metadata=NOT_KEYED)  # built from these spans (same index)
    shard_docs: int = field(default=0, metadata=NOT_KEYED)  # not yet planned: a build makes its own spans (0: planned)


@dataclass(frozen=True)
class RetrieveTask:
    """Index one collection with BM25 and run the queries (the English side or a system)."""

    STAGE: ClassVar[str] = "runs"
    system: str
    docs: str = field(metadata=INPUT)
    format: str | None
    retrieval: RetrievalSettings
    queries: tuple[tuple[str, str], ...]  # (qid, text) in query order
    want_ids: bool = False
    stopwords_file: str | None = field(default=None, metadata=INPUT)  # retrieval.stopwords when a file
    memory: int = field(default=0, metadata=NOT_KEYED)  # estimated bytes of building the index
    shards: tuple[ShardTask, ...] = field(default=(), metadata=NOT_KEYED)  # the index's spans, when sharded
    shard_docs: int = field(default=0, metadata=NOT_KEYED)  # config shard_docs until the driver planned the spans
    # the index's name where it is not the system's own (query translation: every system searches the reference
    # side's index); the run depends on the index's content only, so it is not keyed
    index_name: str | None = field(default=None, metadata=NOT_KEYED)

    @property
    def index(self) -> IndexTask:
        return IndexTask(self.index_name or self.system, self.docs, self.format, self.retrieval.index,
                         self.stopwords_file, self.shards, self.shard_docs)


@dataclass(frozen=True)
class IRTask:
    """Evaluate one run against the qrels (and against the English-side run, for RBO)."""

    STAGE: ClassVar[str] = "ir"
    system: str
    run: RetrieveTask
    qrels: str = field(metadata=INPUT)
    reference: RetrieveTask | None
    ir: IRSettings  # collection_size: the experiment's, else the English collection's document count


@dataclass(frozen=True)
class ItemsTask:
    """Item-level scores of one system: each judged relevant collection document's MT scores
    against the same document of the English side (its text as one item), and where each judged
    (query, relevant document) pair lands in the system's run."""

    STAGE: ClassVar[str] = "items"
    system: str
    docs: str = field(metadata=INPUT)
    english: str = field(metadata=INPUT)
    format: str | None
    metrics: tuple[str, ...]
    tokenize: str
    lowercase: bool
    run: RetrieveTask
    qrels: str = field(metadata=INPUT)
    device: str = field(metadata=NOT_KEYED)  # where the neural metrics run (the config's mt.device)
    batch_size: int = field(metadata=NOT_KEYED)  # their batch size (the config's mt.batch_size)
    # neural metrics (COMET, BLEURT): a document's score is the mean of its segments' scores (segment
    # store, mt/neural.py): its MT test-set segments when ``seg_docids`` names each segment's document
    # (``segments``: those segments' files), else its lines against the English side's lines
    neural: tuple[str, ...] = ()
    segments: MTTask | None = None
    seg_docids: str | None = field(default=None, metadata=INPUT)  # the document id of each segment


@dataclass(frozen=True)
class QrelsTask:
    """Write the relevance judgements every run is scored against (from a file, generated
    or pseudo-qrels) as a TREC qrels file."""

    STAGE: ClassVar[str] = "qrels"
    judgements: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]  # (qid, ((docid, rel), ...))
    system: str = "qrels"


@dataclass(frozen=True)
class SystemTask:
    """MT, retrieval and IR for one system: one unit of parallel work."""

    system: str
    mt: MTTask | None = None
    retrieve: RetrieveTask | None = None
    ir: IRTask | None = None

    @property
    def memory(self) -> int:
        """Estimated peak bytes (executors that schedule by memory read it)."""
        return self.retrieve.memory if self.retrieve is not None else 0


@dataclass(frozen=True)
class CorrelationTask:
    """Correlate every pair of score columns over the systems: cached, so a re-run whose scores
    and settings did not change does not recompute the resampling statistics. Keyed by what the
    stage reads (the ``correlation:`` section, and where relevance comes from for its
    circularity note), never by the config's name, notes or location."""

    STAGE: ClassVar[str] = "correlation"
    inputs: CorrelationInputs  # the correlation: section, and where relevance comes from
    systems: dict
    kinds: dict
    system: str = "correlations"
    resample_block: int = 0  # draws per seed block (statistics.RESAMPLE_BLOCK): fixes the draws above it
    procedure: str = ""  # version of the verdict procedure (driver.VERDICT_PROCEDURE): results computed by another are not reused


@dataclass(frozen=True)
class ItemLevelTask:
    """Item-level correlations and verdicts of a run (:mod:`clir_eval.correlation.items`), keyed by
    the item matrices' values and the settings: cached, so a re-run whose item scores and settings
    did not change does not redo their permutation tests and bootstraps."""

    STAGE: ClassVar[str] = "item_level"
    matrices: dict  # {item kind: {"systems", "ids", "x": {metric: rows}, "y": {target: rows}}}
    settings: dict  # correlation.items.ItemSettings as a dict
    lower: tuple[str, ...]  # metrics where lower is better (their verdict orientation)
    system: str = "item_level"
    procedure: str = ""  # version of the computation (correlation.items.ITEM_PROCEDURE): results of another are not reused


@dataclass(frozen=True)
class EnglishSide:
    """The human-English side after its retrieval: the RBO reference run, the qrels every
    system is scored against, and the collection's ids and size."""

    run: RetrieveTask
    doc_ids: tuple[str, ...]
    signature: str
    qrels: str  # path of the qrels file in the cache
    qrels_source: str
    collection_size: int | None
    judged: tuple[str, ...] = ()  # the queries with at least one judgement


def ids_checksum(ids) -> str:
    """Checksum of a collection's set of document ids (tasks carry this, not the ids)."""
    return text_checksum("\n".join(sorted(ids)))
