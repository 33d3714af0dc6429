"""The sources' settings, declared once: the config's ``wmt:`` and ``europarl:`` sections are read into these
records (the loader resolves their paths and templates relative to the config file)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..settings import Settings, setting

DIRECTIONS = ("source-original", "target-original", "both")
GRANULARITIES = ("speaker", "file")


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
