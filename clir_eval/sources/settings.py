"""The sources' settings, declared once: the config's ``wmt:``, ``europarl:`` and ``queries:`` sections are read
into these records (the loader resolves their paths and templates relative to the config file)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..io.readers import QUERY_FORMATS
from ..limits import MAX_KEYWORDS
from ..settings import Settings, setting

DIRECTIONS = ("source-original", "target-original", "both")
GRANULARITIES = ("speaker", "file")
QUERY_KINDS = ("headline", "first-sentence", "keywords")  # generated queries (querygen.py)


@dataclass(frozen=True)
class WMTSource(Settings):
    """Systems, references and collections taken from a WMT document-level XML file."""

    xml: str = setting(help="The WMT document-level XML file (<doc><src><ref><hyp system>).")
    reference: str = setting("A", "The reference used as the English side (the other references may be systems).")
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
