"""The collections as indexed: line ids from ``collection.ids`` and distractor documents
(Gowda et al. 2021 "In+Ext": retrieval over a superset of the MT-scored documents)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..config.schema import Config, SystemSpec
from ..errors import UserError
from ..io.files import safe_filename, text_checksum
from ..io.readers import read_documents
from ..templates import substitute
from .materialize import write_docs
from .settings import DistractorSource
from .wmt import read_wmt_xml


@dataclass(frozen=True)
class Distractors:
    """One distractor source read: English documents, and per system its translations
    (``None`` when the English documents go unchanged into every collection)."""

    source: DistractorSource
    prefix: str
    ids: tuple[str, ...]
    english: tuple[str, ...]
    translated: Mapping[str, tuple[str, ...]] | None

    def describe(self) -> str:
        what = Path(self.source.file or self.source.xml or "").name
        if self.source.xml:
            what += f" reference {self.source.reference}"
        how = "translated by each system" if self.translated is not None else "English, unchanged in every collection"
        return f"{what}: {len(self.ids)} documents ({how}; ids {self.prefix}...)"


def finish_collection(cfg: Config, cache, res) -> None:
    """Set the English side from ``collection:``, apply ``collection.ids`` (line ids for
    the English side and every system) and add ``collection.distractors``; rewritten
    collections go to ``cache/sources/collection/`` as JSONL."""
    c = cfg.collection
    if c is None:
        return
    if c.english:
        res.english = c.english
        res.doc_format = c.format
    if not c.ids and not c.distractors:
        return
    if res.english is None:
        raise UserError("collection.distractors: there is no English side to add them to; give collection.english or a wmt: source")

    english = read_documents(res.english, fmt=res.doc_format, ids_path=c.ids)
    systems = {s.name: s for s in res.systems if s.docs}
    sys_docs = {n: read_documents(s.docs, fmt=res.doc_format, ids_path=c.ids) for n, s in systems.items()}
    sources = [read_distractors(d, i, list(systems.values()), cfg.base_dir) for i, d in enumerate(c.distractors)]
    clash = set(english.ids) & {x for src in sources for x in src.ids}
    if clash:
        raise UserError(
            f"collection.distractors: id {sorted(clash)[0]!r} is also an id of the English side; distractor ids are "
            "prefixed ext<N>-, so rename the collection's documents"
        )
    d = cache.root / "sources" / "collection"
    d.mkdir(parents=True, exist_ok=True)

    def write(name: str, pairs: list[tuple[str, str]]) -> str:
        h = text_checksum(*(f"{a}\t{b}" for a, b in pairs))[:12]
        return write_docs(d / f"{safe_filename(name)}-{h}.jsonl", pairs)

    extra_en = [(x, t) for src in sources for x, t in zip(src.ids, src.english)]
    res.english = write("english", list(english) + extra_en)
    res.doc_format = "jsonl"
    new = []
    for s in res.systems:
        if s.name not in sys_docs:
            new.append(s)
            continue
        extra = [
            (x, t)
            for src in sources
            for x, t in zip(src.ids, src.english if src.translated is None else src.translated[s.name])
        ]
        new.append(SystemSpec(s.name, s.hyp, write(f"docs-{s.name}", list(sys_docs[s.name]) + extra), dict(s.attrs)))
    res.systems = new
    if c.ids:
        res.notes.append(f"Document ids from {Path(c.ids).name} (one per line of every collection)")
    if sources:
        n_extra = sum(len(src.ids) for src in sources)
        res.notes.append(
            f"Distractors (In+Ext): {len(english)} documents + {n_extra} distractor documents from "
            + "; ".join(src.describe() for src in sources)
            + "; they are never relevant to a generated query but can outrank its target"
        )
        res.signature["collection"] = {
            "documents": len(english),
            "distractors": [
                {"source": Path(src.source.file or src.source.xml or "").name, "reference": src.source.reference if src.source.xml else None,
                 "documents": len(src.ids), "translated": src.translated is not None, "ids": f"{src.prefix}*"}
                for src in sources
            ],
            "total": len(english) + n_extra,
        }


def read_distractors(src: DistractorSource, index: int, systems: list[SystemSpec], base_dir: str) -> Distractors:
    """Read one ``collection.distractors`` entry (ids prefixed ``ext<index+1>-``)."""
    prefix = f"ext{index + 1}-"
    w = src.where or f"collection.distractors[{index}]"
    if src.xml:
        ts = read_wmt_xml(src.xml)
        if src.reference not in ts.translators:
            raise UserError(
                f"{w}.reference: translator {src.reference!r} is not in {src.xml} (has: {', '.join(ts.translators)}; "
                "a <ref> without a translator attribute is called 'ref')"
            )
        docids = [x for x in ts.docids if x in ts.references[src.reference]][: src.limit]
        english = [t for _, t in ts.collection(f"ref:{src.reference}", docids=docids)]
        translated = None
        if src.translated:
            translated = {}
            for s in systems:
                label = s.attrs.get("label") or f"hyp:{s.name}"
                try:
                    docs = ts.translation(label)
                except UserError as e:
                    raise UserError(f"{w}.translated: system {s.name!r} has no translation there ({e})") from None
                have = dict(ts.collection(label, docids=[x for x in docids if x in docs]))
                translated[s.name] = tuple(have.get(x, "") for x in docids)
        return Distractors(src, prefix, tuple(prefix + x for x in docids), tuple(english), translated)

    docs = read_documents(src.file, fmt=src.format)
    ids, english = list(docs.ids)[: src.limit], list(docs.texts)[: src.limit]
    translated = None
    if src.translations:
        translated = {}
        for s in systems:
            try:
                path = Path(substitute(src.translations, s.attrs, "translations"))
            except (KeyError, IndexError, ValueError) as e:
                raise UserError(f"{w}.translations: cannot fill {src.translations!r} for system {s.name!r} ({e})") from None
            if not path.is_absolute():
                path = Path(base_dir) / path
            if not path.exists():
                raise UserError(f"{w}.translations: {path} not found for system {s.name!r}")
            tr = dict(read_documents(path, fmt=src.format))
            extra = set(tr) - set(docs.ids)
            if extra:
                raise UserError(f"{w}.translations: {path} has document {sorted(extra)[0]!r}, which is not in {src.file}")
            translated[s.name] = tuple(tr.get(x, "") for x in ids)
    return Distractors(src, prefix, tuple(prefix + x for x in ids), tuple(english), translated)
