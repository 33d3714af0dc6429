"""The sources' settings, declared once: the config's ``wmt:``, ``europarl:``, ``queries:``, ``collection:`` and
``external:`` sections are read into these records (the loader resolves their paths and templates relative to the config file)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..io.readers import DOC_FORMATS, QUERY_FORMATS
from ..limits import MAX_KEYWORDS
from ..settings import SettingError, Settings, default, setting

DIRECTIONS = ("source-original", "target-original", "both")
GRANULARITIES = ("speaker", "file")
QUERY_KINDS = ("headline", "first-sentence", "keywords")  # generated queries (querygen.py)
EXTERNAL_KINDS = ("mt", "ir", "human")  # what an external table's columns are joined as
UNKNOWN_DOCUMENTS = ("error", "ignore")  # an item table's documents outside the collection
EXTERNAL_FORMATS = ("table", "wmt-human", "mtme")  # a TSV/CSV score table, a WMT DA system table, mt-metrics-eval score files
ARCHITECTURES = ("documents", "queries")  # translate: what each MT system translates (the CLIR architecture)
ARCHITECTURE_NAMES = {"documents": "document translation", "queries": "query translation"}
QT_QUERY_KINDS = ("headline", "first-sentence")  # generated queries that are a segment every system translates


@dataclass(frozen=True)
class WMTSource(Settings):
    """Systems, references and collections taken from a WMT document-level XML file."""

    xml: str = setting(help="The WMT document-level XML file (<doc><src><ref><hyp system>).")
    reference: str = setting("A", "The reference used as the reference side, in the collection's language (the "
                                  "other references may be systems).")
    references_as_systems: tuple[str, ...] = setting((), "References scored as if they were MT systems.")
    systems: tuple[str, ...] = setting((), "The systems to evaluate (empty: all).")
    human: str | None = setting(None, "A WMT human-judgement system table (DA z-scores).")
    include_testsuites: bool = setting(False, "Also the test-suite documents.")
    domains: tuple[str, ...] = setting((), "Only documents of these domains (empty: all).")
    docs: tuple[str, ...] = setting((), "Only these document ids or fnmatch patterns (empty: all).")
    headline_domains: tuple[str, ...] = setting(("news",), "Domains whose first segment is a headline (a query).")
    direction: str | None = setting(None, "Evaluate per original direction: source-original, target-original or both.",
                                    choices=DIRECTIONS, label="direction")


@dataclass(frozen=True)
class EuroparlSource(Settings):
    """Collections from the Europarl v7 source release (``txt/<lang>/ep-*.txt``)."""

    root: str = setting(help="The release directory (holding txt/<lang>/).")
    english: str = setting("en", "The language of the English side.")
    granularity: str = setting("speaker", "A document per speaker turn or per file.", choices=GRANULARITIES,
                               label="granularity")
    translations: str | None = setting(None, "Template over system attributes: a release-layout directory or a "
                                             "documents file of each system's translations.")
    lang_systems: Mapping[str, str] = setting(default_factory=dict, help="Stand-in system name -> language.")


@dataclass(frozen=True)
class QueriesConfig(Settings):
    """The ``queries:`` section: query files, or queries generated from the collection's documents."""

    file: tuple[str, ...] | None = setting(None, "One or more query files or directories (TREC topics, TSV, JSONL).")
    format: str | None = setting(None, "trec, tsv or jsonl (default: guessed per file).", choices=QUERY_FORMATS,
                                 label="query format")
    fields: tuple[str, ...] = setting(("title",), "TREC topic fields, e.g. [title, desc].")
    generate: str | None = setting(None, "Generate the queries from the documents: headline, first-sentence or "
                                         "keywords.", choices=QUERY_KINDS, label="query generator")
    k: int = setting(5, "Words per generated keyword query.", ge=1, le=MAX_KEYWORDS)
    limit: int | None = setting(None, "At most this many queries.", ge=1)


@dataclass(frozen=True)
class DistractorSource(Settings):
    """English documents added to every collection (Gowda et al. 2021 "In+Ext"): a documents
    file, or a reference of another WMT XML file. With ``translations`` (a template over
    system attributes naming a documents file) or ``translated`` (XML: each system's own
    ``<hyp>`` of those documents) a system's collection gets its translations instead."""

    file: str | None = setting(None, "English documents (jsonl, tsv or lines).")
    format: str | None = setting(None, "Their format (file: entries; default: from the extension).",
                                 choices=DOC_FORMATS, label="document format")
    xml: str | None = setting(None, "A WMT XML file whose reference documents are the distractors.")
    reference: str = setting("A", "The XML file's reference used (xml: entries).")
    limit: int | None = setting(None, "Only the first N documents (file order).", ge=1)
    translations: str | None = setting(None, "Template over system attributes naming a documents file of each "
                                             "system's translations of them (file: entries).")
    translated: bool = setting(False, "Each system's own <hyp> of those documents (xml: entries).")
    where: str = ""  # the YAML path, for messages

    def check(self) -> None:
        if (self.file is None) == (self.xml is None):
            raise SettingError("", None, "give either file: (English documents) or xml: (a WMT XML file)",
                               shows_value=True)
        kind, other = ("xml", "file") if self.xml is not None else ("file", "xml")
        for name in ("format", "translations") if kind == "xml" else ("reference", "translated"):
            if getattr(self, name) != default(DistractorSource, name):
                raise SettingError(name, getattr(self, name), f"applies to {other}: entries, not to {kind}: ones; "
                                   "remove it", shows_value=True)


@dataclass(frozen=True)
class CollectionConfig(Settings):
    """The ``collection:`` section: the reference side's documents (human text in the collection's language; the
    key ``reference``, or ``english`` as older configs spell it), their format and line ids, and distractor
    documents added to every collection."""

    english: str | None = setting(None, "The reference side's documents, in the collection's language (key "
                                        "reference or english; left out with a wmt:/europarl: source).")
    format: str | None = setting(None, "jsonl, tsv or lines (default: from the extension).", choices=DOC_FORMATS,
                                 label="document format")
    ids: str | None = setting(None, "For format lines: a file of document ids, one per line.")
    distractors: tuple[DistractorSource, ...] = setting((), "English documents added to every collection: "
                                                            "{file: DOCS} or {xml: WMT_XML, reference: A} entries")

    def check(self) -> None:
        if self.ids is not None and self.format != "lines":
            raise SettingError("ids", self.ids, f"an id file applies to format: lines (one document per line), not "
                               f"{self.format or 'a format guessed from the file name'}; set format: lines or drop ids "
                               "(JSONL/TSV documents carry their own ids)", shows_value=True)


@dataclass(frozen=True)
class ExternalTable(Settings):
    """A score table joined to the systems: extra MT metrics, published IR scores,
    or human judgements. ``match`` maps table columns to templates over system attributes
    (``{name}``, ``{size}``, ...); a row joins a system when every column matches."""

    file: str = setting(help="The score table (TSV/CSV, plain or .gz), WMT human table, or mt-metrics-eval score "
                             "files (a path or glob).")
    kind: str = setting(help="What the columns are joined as: mt, ir or human.", choices=EXTERNAL_KINDS,
                        label="table kind")
    columns: Mapping[str, str] = setting(help="The columns to use: a list, or a mapping column: score_name (format "
                                              "mtme: every metric of the score files when left out).")
    match: Mapping[str, str] = setting(help="Table column -> template over system attributes; a row joins a system "
                                            "when every column matches (default: {system: '{name}'}).")
    format: str = setting("table", "table (TSV/CSV), wmt-human (a WMT DA system table) or mtme (mt-metrics-eval "
                                   "score files).", choices=EXTERNAL_FORMATS, label="table format")
    item_col: str | None = setting(None, "Format table: the column of document ids. The table then holds one row "
                                         "per (system, document) and its columns join the item-level analysis as "
                                         "per-document MT scores (not the system-level correlations).")
    documents: str | None = setting(None, "Format mtme, .seg.score or .doc.score files: the test set's "
                                          "documents/<lp>.docs file (one line per segment: domain, document id). "
                                          "A document's score is the mean of its segments' scores; the scores "
                                          "join the item-level analysis (not the system-level correlations).")
    unknown_documents: str = setting("error", "Per-document scores of documents that are not in the run's "
                                              "collection: error, or ignore (left out, counted in the notes; for "
                                              "files that cover a whole test set when the run keeps a part).",
                                     choices=UNKNOWN_DOCUMENTS, label="unknown_documents")
    # Empty by default: mt-metrics-eval's files carry no orientation; its data.CompareMetrics ranks metrics by
    # their raw correlation with the gold scores (decreasing), so its score files are higher-is-better, error
    # counts stored negated (converters/score_mqm.py writes -MQM) -- google-research/mt-metrics-eval,
    # mt_metrics_eval/data.py. Tables that do not follow that convention (a raw TER column) declare it here.
    lower_is_better: tuple[str, ...] = setting((), "Score columns where lower is better (e.g. TER): ranked by "
                                                   "-tau, like correlate's --lower-is-better; each a column listed in "
                                                   "columns (or its score name). Kind mt only.")
    where: str = ""  # the YAML path, for messages

    @property
    def per_item(self) -> bool:
        """Whether the table holds per-document scores (item-level analysis) rather than per-system ones."""
        return self.item_col is not None or self.documents is not None

    def check(self) -> None:
        cols = self.columns
        if isinstance(cols, (list, tuple)):
            cols = {str(c): str(c) for c in cols}
        if not isinstance(cols, Mapping) or not cols:
            raise SettingError("columns", cols, "give the columns to use, as a list or a mapping column: score_name",
                               shows_value=True)
        if not isinstance(self.match, Mapping):
            raise SettingError("match", self.match, "expected a mapping table_column: template, e.g. "
                               "{lang: cs, size: '{size}'}", shows_value=True)
        self.set("columns", {str(k): str(v) for k, v in cols.items()})
        self.set("match", {str(k): str(v) for k, v in self.match.items()})
        if self.item_col is not None and self.format != "table":
            raise SettingError("item_col", self.item_col, f"applies to format: table, not {self.format}; for "
                               "mt-metrics-eval segment scores give documents: (the test set's .docs file)",
                               shows_value=True)
        if self.documents is not None and self.format != "mtme":
            raise SettingError("documents", self.documents, f"applies to format: mtme (segment score files), not "
                               f"{self.format}; for a table with a document column give item_col:", shows_value=True)
        if not self.per_item and self.unknown_documents != default(ExternalTable, "unknown_documents"):
            raise SettingError("unknown_documents", self.unknown_documents, "applies to per-document tables "
                               "(item_col or documents); remove it", shows_value=True)
        if self.per_item and self.kind != "mt":
            raise SettingError("kind", self.kind, "a per-document table (item_col/documents) holds MT scores: set "
                               "kind: mt", shows_value=True)
        if self.item_col is not None and self.item_col in self.columns:
            raise SettingError("item_col", self.item_col, f"column {self.item_col!r} is both the item column and a "
                               "score column; remove it from columns", shows_value=True)
        self.set("lower_is_better", self._lower_names())

    def _lower_names(self) -> tuple[str, ...]:
        """The score names of the ``lower_is_better`` columns (a column or its score name; a name that is
        neither is an error naming the table's score columns)."""
        if self.lower_is_better and self.kind != "mt":
            raise SettingError("lower_is_better", list(self.lower_is_better), f"orients MT metrics (kind: mt), not "
                               f"{self.kind} scores; remove it", shows_value=True)
        names = {**{n: n for n in self.columns.values()}, **self.columns}
        unknown = [c for c in self.lower_is_better if c not in names]
        if unknown:
            raise SettingError("lower_is_better", unknown[0], f"{unknown[0]!r} is not a score column of {self.file} "
                               f"(columns: {', '.join(self.columns)}); name one of them, or list it in columns",
                               shows_value=True)
        return tuple(dict.fromkeys(names[c] for c in self.lower_is_better))
