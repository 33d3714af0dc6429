"""WMT document-level test sets (XML, 2021+) and WMT human (DA) system scores.

The XML format (``<dataset>`` → ``<doc id origlang [testsuite]>`` → ``<src lang>``,
``<ref translator=A|B>``, ``<hyp system=NAME>``, each holding ``<p><seg id>``) carries the
source, every reference and every system output with the same document and segment ids,
so one file gives both the MT-scoring data (line-aligned segments) and the CLIR data
(per-document translations). A translation may lack documents (newstest2021 ru-en:
reference B lacks the 9 TED-talk test-suite documents); that coverage is exposed, never
silently dropped. Within a document every translation must have exactly the source's
segment ids, in order, so segment *i* of any translation aligns with source segment *i*.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from typing import Collection, Iterable, Mapping, Sequence, Union

from ..errors import UserError
from ..io.files import READ_ERRORS, PathLike, iter_lines, open_binary

Segments = tuple[str, ...]
DocTranslation = Mapping[str, Sequence[str]]
"""A translation of a document set: ``{docid: [segment, ...]}``."""

UNNAMED_TRANSLATOR = "ref"
"""Translator name given to a ``<ref>`` without a ``translator`` attribute."""

HUMAN_SYSTEM_NAME = "HUMAN"
"""Name of the human translation evaluated as a system in WMT21 DA tables. In the pairs
with two references (cs-en, de-en, ru-en) it is reference B: reference A is the standard
reference of WMT21 to-English (mt-metrics-eval ``std_ref='refA'``), and is-en, which has
only reference A, has no HUMAN row."""


@dataclass(frozen=True)
class WmtTestSet:
    """A parsed WMT XML test set. Treat the mappings as read-only.

    Translations are addressed by *labels*: ``"src"`` (the source), ``"ref:A"`` (the
    reference by translator A), ``"hyp:NAME"`` or plain ``"NAME"`` (system NAME).
    """

    path: str
    dataset_id: str | None
    src_lang: str | None
    tgt_lang: str | None
    docids: tuple[str, ...]
    origlang: dict[str, str | None]
    testsuite: dict[str, str | None]
    """docid -> test-suite name (``testsuite`` attribute) or None for a regular document."""
    domain: dict[str, str | None]
    """docid -> ``domain`` attribute (WMT22+: news, conversation, ecommerce, social, ...) or None."""
    attributes: dict[str, dict[str, str]]
    """docid -> all attributes of its ``<doc>`` element."""
    source: dict[str, Segments]
    references: dict[str, dict[str, Segments]]
    """translator -> {docid: segments}, translators and docs in file order."""
    hypotheses: dict[str, dict[str, Segments]]
    """system -> {docid: segments}, systems and docs in file order."""

    @property
    def translators(self) -> tuple[str, ...]:
        return tuple(self.references)

    @property
    def systems(self) -> tuple[str, ...]:
        return tuple(self.hypotheses)

    def n_segments(self, docids: Iterable[str] | None = None) -> int:
        """Number of source segments (in ``docids``, default all documents)."""
        return sum(len(self.source[d]) for d in (self.docids if docids is None else docids))

    def translation(self, label: str) -> dict[str, Segments]:
        """The ``{docid: segments}`` of ``src``, ``ref:X``, ``hyp:NAME`` or ``NAME``."""
        if label == "src":
            return self.source
        if label.startswith("ref:"):
            name = label[4:]
            if name not in self.references:
                raise UserError(
                    f"{self.path}: no reference by translator {name!r}; "
                    f"available: {', '.join(self.translators) or 'none'}"
                )
            return self.references[name]
        name = label[4:] if label.startswith("hyp:") else label
        if name not in self.hypotheses:
            raise UserError(
                f"{self.path}: no system {name!r}; available systems: {', '.join(self.systems) or 'none'}"
                f" (references are addressed as ref:{'|ref:'.join(self.translators) or 'X'})"
            )
        return self.hypotheses[name]

    def missing_docs(self, translator: str | None = None, *, system: str | None = None) -> tuple[str, ...]:
        """Documents (file order) that reference ``translator`` or ``system`` does not translate."""
        if (translator is None) == (system is None):
            raise ValueError("give exactly one of translator, system")
        docs = self.translation(f"ref:{translator}" if translator is not None else f"hyp:{system}")
        return tuple(d for d in self.docids if d not in docs)

    def coverage(self) -> dict[str, tuple[int, int]]:
        """``{label: (documents translated, documents in the set)}`` for every translation."""
        n = len(self.docids)
        out = {f"ref:{t}": (len(docs), n) for t, docs in self.references.items()}
        out.update({f"hyp:{s}": (len(docs), n) for s, docs in self.hypotheses.items()})
        return out

    def subset(self, docids: Iterable[str]) -> "WmtTestSet":
        """The same test set restricted to ``docids`` (kept in file order)."""
        keep = set(docids)
        unknown = keep - set(self.docids)
        if unknown:
            raise UserError(f"{self.path}: unknown document ids {sorted(unknown)[:5]}; check the id list")
        order = tuple(d for d in self.docids if d in keep)

        def sel(m: Mapping[str, Segments]) -> dict[str, Segments]:
            return {d: m[d] for d in order if d in m}

        return replace(
            self,
            docids=order,
            origlang={d: self.origlang[d] for d in order},
            testsuite={d: self.testsuite[d] for d in order},
            domain={d: self.domain[d] for d in order},
            attributes={d: self.attributes[d] for d in order},
            source=sel(self.source),
            references={t: sel(m) for t, m in self.references.items()},
            hypotheses={s: sel(m) for s, m in self.hypotheses.items()},
        )

    def without_testsuites(self) -> "WmtTestSet":
        """Only the regular (news) documents: drops ``<doc testsuite=...>`` documents.

        These are what WMT scores and human-evaluates (sacrebleu skips them too); their
        first segment is not a headline (e.g. TED talks in newstest2021 ru-en).
        """
        return self.subset(d for d in self.docids if self.testsuite[d] is None)

    def direction(self, docid: str) -> str | None:
        """``source-original`` when the document was written in the source language,
        ``target-original`` when in the target language (Edunov et al. 2020), else None
        (no ``origlang``, no language on ``<src>``/``<ref>``, or a third language)."""
        orig = self.origlang.get(docid)
        if not orig:
            return None
        if self.src_lang and _lang_equal(orig, self.src_lang):
            return "source-original"
        if self.tgt_lang and _lang_equal(orig, self.tgt_lang):
            return "target-original"
        return None

    def has_headline(self, docid: str, headline_domains: Collection[str] = ("news",)) -> str | None:
        """None when the first segment of ``docid`` is a headline, else why it is not.

        A test-suite document has none; a document with a ``domain`` attribute has one only
        when the domain is in ``headline_domains``; a document without one (WMT news test
        sets up to 2021) is news.
        """
        if self.testsuite.get(docid):
            return f"test-suite document ({self.testsuite[docid]}), no headline"
        dom = self.domain.get(docid)
        if dom is not None and dom not in headline_domains:
            return f"domain {dom!r} has no headline"
        return None

    def aligned_segments(
        self, hyp: str, refs: Sequence[str] = ("A",), *, docids: Iterable[str] | None = None
    ) -> "AlignedSegments":
        """Line-aligned segments of translation ``hyp`` (a label) vs references ``refs`` (translator
        names), over the documents all of them translate (file order); see :func:`aligned_segments`."""
        if isinstance(refs, str):
            refs = (refs,)
        return aligned_segments(
            self.translation(hyp),
            [self.translation(f"ref:{r}") for r in refs],
            docids=self.docids if docids is None else docids,
            hyp_label=hyp,
            ref_labels=[f"ref:{r}" for r in refs],
        )

    def collection(
        self, label: str, *, drop: "Drop" = None, docids: Iterable[str] | None = None
    ) -> list[tuple[str, str]]:
        """The translation ``label`` as ``[(docid, text)]``; see :func:`build_collection`."""
        docs = self.translation(label)
        if docids is None:
            docids = [d for d in self.docids if d in docs]
        return build_collection(docs, drop=drop, docids=docids, label=label)


@dataclass(frozen=True)
class AlignedSegments:
    """Line-aligned MT-scoring input: ``hyp[i]`` translates the same source segment as
    ``refs[j][i]`` (``refs`` is one stream per reference, as sacrebleu takes them)."""

    hyp: list[str]
    refs: list[list[str]]
    docids: tuple[str, ...]
    """Documents included (translated by the hypothesis and every reference)."""
    excluded: tuple[str, ...] = field(default=())
    """Requested documents left out because the hypothesis or a reference lacks them."""
    seg_docids: tuple[str, ...] = field(default=())
    """Document id of each line."""


def aligned_segments(
    hyp: DocTranslation,
    refs: Sequence[DocTranslation],
    *,
    docids: Iterable[str] | None = None,
    hyp_label: str = "hypothesis",
    ref_labels: Sequence[str] | None = None,
) -> AlignedSegments:
    """Concatenate the segments of the documents that ``hyp`` and every reference translate.

    ``docids`` gives the order (default: ``hyp``'s order); requested documents lacking on
    any side are listed in ``excluded``. A document with different segment counts on two
    sides is an error: segments would no longer align.
    """
    if not refs:
        raise UserError("at least one reference is needed for line-aligned segments")
    ref_labels = list(ref_labels) if ref_labels is not None else [f"reference {i + 1}" for i in range(len(refs))]
    order = list(hyp) if docids is None else list(docids)
    included, excluded, seg_docids = [], [], []
    out_hyp: list[str] = []
    out_refs: list[list[str]] = [[] for _ in refs]
    for d in order:
        if d not in hyp or any(d not in r for r in refs):
            excluded.append(d)
            continue
        h = hyp[d]
        for label, r in zip(ref_labels, refs):
            if len(r[d]) != len(h):
                raise UserError(
                    f"document {d!r}: {hyp_label} has {len(h)} segments but {label} has {len(r[d])}; "
                    "segments must align one to one"
                )
        included.append(d)
        out_hyp.extend(h)
        for stream, r in zip(out_refs, refs):
            stream.extend(r[d])
        seg_docids.extend([d] * len(h))
    return AlignedSegments(out_hyp, out_refs, tuple(included), tuple(excluded), tuple(seg_docids))


Drop = Union[Mapping[str, Collection[int]], Collection[int], None]
"""Segments to leave out of documents: 0-based indices per docid, or one set for all docs."""


def build_collection(
    docs: DocTranslation,
    *,
    drop: Drop = None,
    docids: Iterable[str] | None = None,
    label: str = "translation",
) -> list[tuple[str, str]]:
    """``[(docid, text)]`` with each document's segments joined by single spaces.

    ``drop`` removes segments by 0-based index: ``{0}`` gives bodies (segments 2..n of a
    news document, without the headline); a mapping gives indices per document (as
    :class:`clir_eval.querygen.GeneratedQueries.drop` does). Documents that end up empty
    are kept with empty text. ``docids`` (default: ``docs`` order) must all be in ``docs``.
    """
    order = list(docs) if docids is None else list(docids)
    missing = [d for d in order if d not in docs]
    if missing:
        raise UserError(
            f"{label} lacks {len(missing)} requested document(s), e.g. {missing[0]!r}; "
            "restrict the collection to the documents it translates"
        )
    per_doc = isinstance(drop, Mapping)
    out = []
    for d in order:
        skip = (drop.get(d, ()) if per_doc else drop) or ()
        text = " ".join(s.strip() for i, s in enumerate(docs[d]) if i not in skip and s.strip())
        out.append((d, " ".join(text.split())))
    return out


# --- XML reader -------------------------------------------------------------------------

_TRANSLATION_TAGS = ("src", "ref", "hyp")
_POSITION = re.compile(r": line \d+, column \d+$")


def _describe(elem: ET.Element) -> str:
    attrs = " ".join(f'{k}="{v}"' for k, v in elem.attrib.items())
    return f"<{elem.tag}{' ' + attrs if attrs else ''}>"


def read_wmt_xml(path: PathLike) -> WmtTestSet:
    """Parse a WMT XML test set (plain or .gz).

    Malformed XML and structural problems (missing ids, duplicate documents or
    translations, segment ids differing from the source's) raise :class:`UserError`
    naming the file, the document and the element.
    """
    p = str(path)
    state = _Parser(p)
    try:
        with open_binary(path) as fh:
            for event, elem in ET.iterparse(fh, events=("start", "end")):
                if event == "start":
                    state.start(elem)
                else:
                    state.end(elem)
    except ET.ParseError as e:
        line, col = getattr(e, "position", (0, 0))
        msg = _POSITION.sub("", str(e))
        raise UserError(
            f"{p}:{line}:{col}: malformed XML ({msg}); "
            "fix the file or get an intact copy"
        ) from None
    except (LookupError, ValueError) as e:  # the XML declaration names an encoding the parser lacks
        if "encoding" not in str(e):
            raise
        raise UserError(f"{p}: cannot decode the XML ({e}); re-encode the file as UTF-8 and declare "
                        "encoding=\"utf-8\" (or drop the declaration)") from None
    except READ_ERRORS as e:
        raise UserError(f"{p}: cannot read ({e}); check the file is complete") from None
    return state.result()


class _Parser:
    """Streaming state for :func:`read_wmt_xml` (one document in memory at a time)."""

    def __init__(self, path: str):
        self.path = path
        self.root: ET.Element | None = None
        self.dataset_id: str | None = None
        self.docids: list[str] = []
        self.origlang: dict[str, str | None] = {}
        self.testsuite: dict[str, str | None] = {}
        self.domain: dict[str, str | None] = {}
        self.attributes: dict[str, dict[str, str]] = {}
        self.source: dict[str, Segments] = {}
        self.references: dict[str, dict[str, Segments]] = {}
        self.hypotheses: dict[str, dict[str, Segments]] = {}
        self.langs: dict[str, str] = {}
        self.doc: ET.Element | None = None
        self.docid: str | None = None
        self.trans: ET.Element | None = None
        self.segs: list[tuple[str, str]] = []
        self.doc_trans: dict[str, list[tuple[str, str]]] = {}
        self.trans_elems: dict[str, str] = {}

    def fail(self, what: str, elem: ET.Element | None = None) -> UserError:
        where = f" in document {self.docid!r}" if self.docid is not None else ""
        el = f", element {_describe(elem)}" if elem is not None else ""
        return UserError(f"{self.path}{where}{el}: {what}")

    def start(self, elem: ET.Element) -> None:
        if self.root is None:
            if elem.tag != "dataset":
                raise self.fail(f"expected the root element <dataset>, found <{elem.tag}>; is this a WMT XML test set?")
            self.root = elem
            self.dataset_id = elem.get("id")
            return
        if elem.tag == "doc":
            if self.doc is not None:
                raise self.fail("a <doc> inside another <doc>", elem)
            docid = elem.get("id")
            if not docid:
                raise self.fail("a <doc> without an id attribute; every document needs a unique id", elem)
            if docid in self.attributes:
                raise UserError(f"{self.path}: document id {docid!r} appears twice; document ids must be unique")
            self.doc, self.docid, self.doc_trans, self.trans_elems = elem, docid, {}, {}
            self.attributes[docid] = dict(elem.attrib)
        elif elem.tag in _TRANSLATION_TAGS:
            if self.doc is None:
                raise self.fail(f"<{elem.tag}> outside a <doc>", elem)
            if self.trans is not None:
                raise self.fail(f"<{elem.tag}> inside <{self.trans.tag}>", elem)
            self.trans, self.segs = elem, []
        elif elem.tag == "seg" and self.trans is None:
            raise self.fail("a <seg> outside <src>, <ref> or <hyp>", elem)

    def end(self, elem: ET.Element) -> None:
        tag = elem.tag
        if tag == "seg" and self.trans is not None:
            sid = elem.get("id")
            if sid is None:
                raise self.fail("a <seg> without an id attribute", self.trans)
            self.segs.append((sid, "".join(elem.itertext())))
        elif tag in _TRANSLATION_TAGS and elem is self.trans:
            self._end_translation(elem)
            self.trans = None
        elif tag == "doc" and elem is self.doc:
            self._end_doc(elem)
            self.doc, self.docid = None, None
            elem.clear()
            if self.root is not None:
                self.root.clear()

    def _lang(self, side: str, elem: ET.Element) -> None:
        lang = elem.get("lang")
        if lang is None:
            return
        seen = self.langs.setdefault(side, lang)
        if seen != lang:
            raise self.fail(f"{side} language {lang!r} differs from {seen!r} used earlier; one language pair per file", elem)

    def _end_translation(self, elem: ET.Element) -> None:
        tag = elem.tag
        if tag == "src":
            key = "src"
            self._lang("source", elem)
        elif tag == "ref":
            key = "ref:" + (elem.get("translator") or UNNAMED_TRANSLATOR)
            self._lang("target", elem)
        else:
            system = elem.get("system")
            if not system:
                raise self.fail("a <hyp> without a system attribute", elem)
            key = "hyp:" + system
            self._lang("target", elem)
        if key in self.doc_trans:
            raise self.fail(f"{key} appears twice in this document", elem)
        ids = [s for s, _ in self.segs]
        if len(set(ids)) != len(ids):
            dup = next(s for s in ids if ids.count(s) > 1)
            raise self.fail(f"segment id {dup!r} appears twice", elem)
        self.doc_trans[key] = self.segs
        self.trans_elems[key] = _describe(elem)

    def _end_doc(self, elem: ET.Element) -> None:
        docid = self.docid
        assert docid is not None
        src = self.doc_trans.get("src")
        if src is None:
            raise self.fail("no <src> in this document; every document needs its source", elem)
        src_ids = [s for s, _ in src]
        for key, segs in self.doc_trans.items():
            ids = [s for s, _ in segs]
            if ids != src_ids:
                extra = [s for s in ids if s not in set(src_ids)]
                lacking = [s for s in src_ids if s not in set(ids)]
                detail = (
                    f"extra segment ids {extra[:5]}" if extra else
                    f"missing segment ids {lacking[:5]}" if lacking else "segment ids in a different order"
                )
                raise UserError(
                    f"{self.path} in document {docid!r}, element {self.trans_elems[key]}: "
                    f"{detail} compared with <src>; every translation must have the source's segment ids in order"
                )
        self.docids.append(docid)
        self.origlang[docid] = elem.get("origlang")
        self.testsuite[docid] = elem.get("testsuite")
        self.domain[docid] = elem.get("domain") or None
        for key, segs in self.doc_trans.items():
            texts = tuple(t for _, t in segs)
            if key == "src":
                self.source[docid] = texts
            elif key.startswith("ref:"):
                self.references.setdefault(key[4:], {})[docid] = texts
            else:
                self.hypotheses.setdefault(key[4:], {})[docid] = texts

    def result(self) -> WmtTestSet:
        if self.root is None or not self.docids:
            raise UserError(f"{self.path}: no <doc> elements found; is this a WMT XML test set?")
        return WmtTestSet(
            path=self.path,
            dataset_id=self.dataset_id,
            src_lang=self.langs.get("source"),
            tgt_lang=self.langs.get("target"),
            docids=tuple(self.docids),
            origlang=self.origlang,
            testsuite=self.testsuite,
            domain=self.domain,
            attributes=self.attributes,
            source=self.source,
            references=self.references,
            hypotheses=self.hypotheses,
        )


# --- human scores -----------------------------------------------------------------------

HUMAN_COLUMNS = ("raw", "z", "n", "n_all", "system_id", "system")
"""Columns of WMT21 ``ad-sys-ranking-*-z-names.csv`` / ``human-*-sys-z.csv`` (no header,
space separated): mean raw DA, mean z-score, judgements kept, judgements collected,
the evaluation's system id (e.g. ``Nemo.3``), and the system name as in the XML/txt files."""


def read_wmt_human_scores(
    path: PathLike, *, rename: Mapping[str, str] | None = None
) -> dict[str, dict[str, float | int | str]]:
    """``{system: {"raw", "z", "n", "n_all", "system_id"}}`` from a WMT DA system table.

    Keys are the last column (``system``), which matches the XML ``<hyp system>`` and the
    txt file names; ``system_id`` (e.g. ``Nemo.3`` for ``NVIDIA-NeMo``) does not.
    ``rename`` maps names, e.g. ``{HUMAN_SYSTEM_NAME: "ref-B"}`` to line the human
    translation up with reference B scored as a system. A header line naming the
    columns (``raw z n n_all system.id system``) is accepted; rows are whitespace
    or comma separated.
    """
    rename = dict(rename or {})
    out: dict[str, dict[str, float | int | str]] = {}
    columns = HUMAN_COLUMNS
    for lineno, line in iter_lines(path):
        parts = line.replace(",", " ").split()
        if not parts:
            continue
        if lineno == 1 and not _is_number(parts[0]):
            header = [c.replace(".", "_").lower() for c in parts]
            if set(HUMAN_COLUMNS) - set(header):
                raise UserError(
                    f"{path}:1: header {parts} lacks columns {sorted(set(HUMAN_COLUMNS) - set(header))}; "
                    f"expected {' '.join(HUMAN_COLUMNS)}"
                )
            columns = tuple(header)
            continue
        if len(parts) != len(columns):
            raise UserError(
                f"{path}:{lineno}: expected {len(columns)} columns ({' '.join(columns)}), found {len(parts)}"
            )
        row = dict(zip(columns, parts))
        rec: dict[str, float | int | str] = {}
        for key, conv in (("raw", float), ("z", float), ("n", int), ("n_all", int)):
            try:
                value = conv(row[key])
            except ValueError:
                raise UserError(f"{path}:{lineno}: column {key} = {row[key]!r} is not a number") from None
            if isinstance(value, float) and not math.isfinite(value):
                raise UserError(f"{path}:{lineno}: column {key} = {row[key]!r} is not a finite number")
            rec[key] = value
        rec["system_id"] = row["system_id"]
        name = rename.get(row["system"], row["system"])
        if name in out:
            raise UserError(f"{path}:{lineno}: system {name!r} appears twice; keep one row per system")
        out[name] = rec
    if not out:
        raise UserError(f"{path}: no system rows found")
    return out


def human_scores_for(
    scores: Mapping[str, Mapping[str, float | int | str]],
    systems: Iterable[str],
    *,
    key: str = "z",
    strict: bool = True,
    source: str = "human scores",
) -> dict[str, float]:
    """``{system: score[key]}`` for ``systems`` (in their order).

    With ``strict`` a system without a human score is an error naming the unmatched
    names on both sides (fix with ``rename`` in :func:`read_wmt_human_scores`); otherwise
    it is left out and the caller reports it.
    """
    systems = list(systems)
    missing = [s for s in systems if s not in scores]
    if missing and strict:
        unused = [s for s in scores if s not in set(systems)]
        raise UserError(
            f"{source}: no score for system(s) {', '.join(missing)}; unmatched names there: "
            f"{', '.join(unused) or 'none'}; map names with rename (e.g. HUMAN -> the reference-B system)"
        )
    out = {}
    for s in systems:
        if s in scores:
            if key not in scores[s]:
                raise UserError(f"{source}: no column {key!r}; available: {', '.join(scores[s])}")
            out[s] = float(scores[s][key])
    return out


def _lang_equal(a: str, b: str) -> bool:
    """Language codes equal up to case and region (``en`` = ``en-US``, ``zh`` = ``zh_CN``)."""
    return re.split(r"[-_]", a.lower())[0] == re.split(r"[-_]", b.lower())[0]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
