"""Inputs that are not plain files: external score tables joined to the systems, and
sources (WMT document-level XML, the Europarl source release) turned into plain files
in the cache so the rest of the pipeline only sees line files and JSONL collections."""

from __future__ import annotations

import difflib
import json
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Mapping

from ..config.schema import Config, SystemSpec
from ..errors import UserError
from ..io.files import atomic_write, file_checksum, safe_filename, text_checksum
from ..io.mtme import read_scores
from ..io.readers import read_documents
from ..io.tables import read_table, score_cell
from ..mt.base import load_metric, lower_is_better
from ..templates import substitute
from .europarl import align_collections, read_europarl, reader_signature
from .query_translation import wmt_query_translation
from .querygen import generate_queries
from .settings import ExternalTable
from .wmt import HUMAN_SYSTEM_NAME, read_wmt_human_scores, read_wmt_xml
from .wmt import UNNAMED_TRANSLATOR as UNNAMED_REF


# --------------------------------------------------------------------------- external tables
def read_score_table(path: str) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Header and rows (with line numbers) of a TSV/CSV score table (plain or .gz)."""
    t = read_table(path)
    return list(t.columns), [(ln, dict(zip(t.columns, row))) for ln, row in zip(t.linenos, t.rows)]


def table_scores(t: ExternalTable, systems: list[SystemSpec], keys: dict | None = None) -> dict[str, dict[str, float | None]]:
    """``{system: {score name: value}}`` for the systems with a row; ``keys`` (if given)
    receives ``{"wanted": {system: row key}, "rows": [row key, ...]}`` for join messages."""
    if t.format == "wmt-human":
        table = read_wmt_human_scores(t.file)
        rows = [(0, {"system": k, **{c: str(v) for c, v in vals.items()}}) for k, vals in table.items()]
        header = sorted({c for _, r in rows for c in r})
    elif t.format == "mtme":
        mt_table, files = read_scores(t.file)
        header = ["system", *(f.name for f in files)]
        rows = [(0, {"system": k, **{f.name: "NA" if vals.get(f.name) is None else repr(vals[f.name]) for f in files}})
                for k, vals in mt_table.items()]
    else:
        header, rows = read_score_table(t.file)
    for col in list(t.columns) + list(t.match):
        if col not in header:
            raise UserError(
                f"{t.where}: column {col!r} is not in {t.file} (columns: {', '.join(header)}); fix columns/match"
            )
    out: dict[str, dict[str, float | None]] = {}
    # A system whose attributes cannot fill the match templates (e.g. a Europarl stand-in,
    # which has only name and lang) has no row; it is an error only if no system can fill them.
    unfilled: list[UserError] = []
    for s in systems:
        want = {}
        for col, tmpl in t.match.items():
            try:
                want[col] = substitute(tmpl, s.attrs, f"{t.file}: columns")
            except (KeyError, IndexError, ValueError) as e:
                unfilled.append(UserError(
                    f"{t.where}.match: template {tmpl!r} cannot be filled for system {s.name!r} ({e}); "
                    f"known attributes: {', '.join(sorted(s.attrs))}"
                ))
                break
        if len(want) < len(t.match):
            continue
        if keys is not None:
            keys.setdefault("wanted", {})[s.name] = _row_key(want)
        hits = [(ln, r) for ln, r in rows if all(r[c].strip() == v for c, v in want.items())]
        if len(hits) > 1:
            raise UserError(
                f"{t.file}: {len(hits)} rows (lines {', '.join(str(h[0]) for h in hits[:3])}) match system {s.name!r} "
                f"by {want}; add match columns so one row matches"
            )
        if not hits:
            continue
        ln, r = hits[0]
        out[s.name] = {name: score_cell(r[col], t.file, ln, col) for col, name in t.columns.items()}
    if unfilled and len(unfilled) == len(systems):
        raise unfilled[0]
    if keys is not None:
        keys["rows"] = [_row_key({c: r[c].strip() for c in t.match}) for _, r in rows]
    return out


def _closest_rows(keys: dict, missing: list[str]) -> str:
    wanted, rows = keys.get("wanted", {}), keys.get("rows", [])
    unused = [r for r in rows if r not in set(wanted.values())]
    hints = [f"{m}{_closest(wanted[m], unused)}" for m in missing if m in wanted and _closest(wanted[m], unused)]
    return f"; closest rows: {'; '.join(hints)}" if hints else ""


def _row_key(values: Mapping[str, str]) -> str:
    return values[next(iter(values))] if len(values) == 1 else ",".join(f"{c}={v}" for c, v in values.items())


def join_external(cfg: Config, systems: list[SystemSpec], sys_results: dict[str, dict[str, Any]], res) -> dict[str, list[str]]:
    """Add external scores to ``sys_results``; return the score names of each kind."""
    kinds: dict[str, list[str]] = {"mt": [], "ir": [], "human": []}
    first = next(iter(sys_results.values()), {})
    kinds["mt"] = list(first.get("mt", {}))
    kinds["ir"] = list(first.get("ir", {}))
    for s in sys_results.values():
        for k in ("mt", "ir"):
            for n in s.get(k, {}):
                if n not in kinds[k]:
                    kinds[k].append(n)
    external: dict[str, str] = {}
    for t in cfg.external:
        res.notes += _undeclared_error_rates(t)
        if t.per_item:
            continue  # per-document scores: the item-level analysis joins them (sources/item_tables.py)
        keys: dict = {}
        scores = table_scores(t, systems, keys)
        if not scores:
            raise UserError(
                f"{t.where}: no row of {t.file} matches any system (match: {dict(t.match)}); check the match templates"
            )
        check_join(f"{t.where}.match", t.file, keys.get("wanted", {}), keys.get("rows", []), None)
        for name in t.columns.values():
            if name in kinds["mt"] + kinds["ir"] + kinds["human"]:
                raise UserError(f"{t.where}.columns: score name {name!r} is already used; rename it")
            kinds[t.kind].append(name)
            external[name] = t.file
        for sname, vals in scores.items():
            for name, v in vals.items():
                if v is not None:
                    sys_results[sname][t.kind][name] = v
                    sys_results[sname].setdefault("external", {})[name] = Path(t.file).name
        missing = [s.name for s in systems if s.name not in scores]
        if missing:
            res.notes.append(
                f"{Path(t.file).name}: no row for {len(missing)} system(s) ({', '.join(missing)}"
                f"{_closest_rows(keys, missing)}); they are left out of correlations with its scores"
            )
    kinds["lower_is_better"] = _lower_is_better(cfg, kinds["mt"])
    for sname, h in res.human.items():
        if sname in sys_results:
            for name, v in h.items():
                sys_results[sname]["human"][name] = v
                if name not in kinds["human"]:
                    kinds["human"].append(name)
    return kinds


def _undeclared_error_rates(t) -> list[str]:
    """A note for each MT score column of external table ``t`` that names a metric the registry knows
    as lower-is-better (TER) but that the table does not declare so: it is ranked as higher-is-better."""
    if t.kind != "mt":
        return []

    out = []
    for col, name in t.columns.items():
        if name in t.lower_is_better:
            continue
        for cand in dict.fromkeys([name, col]):
            try:
                lower = not load_metric(cand).higher_is_better
            except UserError:
                continue
            if lower:
                out.append(f"{t.where}: score {name!r} is taken as higher-is-better, but {cand!r} names a metric where "
                           f"lower is better; if its values are error rates, declare lower_is_better: [{name}]")
                break
    return out


def _lower_is_better(cfg: Config, names: list[str]) -> list[str]:
    """MT scores that fall as quality rises: computed metrics (TER) and the external tables' declared
    ``lower_is_better`` columns (per-system and per-document ones alike)."""
    out = []
    if cfg.mt is not None:
        out = [n for n in lower_is_better(cfg.mt.specs) if n in names]
    return list(dict.fromkeys(out + [n for t in cfg.external for n in t.lower_is_better]))


# --------------------------------------------------------------------------- sources
def materialize(cfg: Config, cache, res) -> None:
    """Write WMT / Europarl sources as plain files and fill ``res``."""
    if cfg.wmt is not None:
        _materialize_wmt(cfg, cache, res)
    if cfg.europarl is not None:
        _materialize_europarl(cfg, cache, res)


def write_docs(path: Path, pairs) -> str:
    """Write (docid, text) pairs as JSONL once (content-addressed name); return the path."""
    if not path.exists():
        with atomic_write(path) as fh:
            for d, t in pairs:
                fh.write(json.dumps({"id": d, "text": t}, ensure_ascii=False) + "\n")
    return str(path)


def _write_lines(path: Path, lines) -> str:
    if not path.exists():
        with atomic_write(path) as fh:
            for line in lines:
                fh.write(line.replace("\n", " ") + "\n")
    return str(path)


def _materialize_wmt(cfg: Config, cache, res) -> None:
    """Systems, references, collections and (generated) queries from a WMT XML file.

    Documents a translation lacks are kept as empty documents in its collection (an MT
    system that outputs nothing retrieves nothing) and left out of MT scoring; both are
    said in the report notes.
    """
    w = cfg.wmt
    ts = select_wmt_documents(w, read_wmt_xml(w.xml), res.notes)
    key = file_checksum(w.xml)[:12]
    labels = wmt_labels(w, ts)
    ref_docs = ts.references[w.reference]
    all_docids = [d for d in ts.docids if d in ref_docs]
    if w.docs or w.domains or w.direction in ("source-original", "target-original"):
        key = text_checksum(key, *all_docids)[:12]

    res.language = ts.tgt_lang  # the collection's language: the references' and systems' (the target side)
    # MT scoring on the documents every system and the reference translate (query translation: on the queries)
    common = [d for d in all_docids if all(d in ts.translation(lb) for _, lb in labels)]
    if cfg.mt is not None and not cfg.query_translation:
        lost = len(all_docids) - len(common)
        if lost:
            short = [n for n, lb in labels if len(ts.translation(lb)) < len(all_docids)]
            res.notes.append(
                f"MT metrics are computed on the {len(common)} documents every system translates; {lost} document(s) "
                f"are missing from {', '.join(short)} and left out of MT scoring"
            )
        d = cache.root / "sources" / f"wmt-{key}"
        d.mkdir(parents=True, exist_ok=True)
        seg_ref = [seg for doc in common for seg in ref_docs[doc]]
        res.mt_refs = (_write_lines(d / f"ref-{w.reference}.{len(common)}.txt", seg_ref),)
        res.mt_src = _write_lines(d / f"src.{len(common)}.txt", [seg for doc in common for seg in ts.source[doc]])
        seg_docs = [doc for doc in common for _ in ref_docs[doc]]
        res.mt_docids = _write_lines(d / f"docids-{text_checksum(*seg_docs)[:12]}.txt", seg_docs)
    drop = _wmt_queries(cfg, ts, all_docids, res)
    qkey = text_checksum(repr(sorted((k, sorted(v)) for k, v in (drop or {}).items())))[:10]
    d = cache.root / "sources" / f"wmt-{key}"
    d.mkdir(parents=True, exist_ok=True)
    res.english = write_docs(d / f"english-ref{w.reference}-{qkey}.jsonl", ts.collection(f"ref:{w.reference}", drop=drop, docids=all_docids))
    res.doc_format = "jsonl"
    if cfg.query_translation:
        wmt_query_translation(cfg, ts, labels, res.queries, d, res)
        if w.human:
            _wmt_human(w, [n for n, _ in labels], res)
        return
    systems = []
    for name, lb in labels:
        docs = ts.translation(lb)
        missing = [x for x in all_docids if x not in docs]
        have = [x for x in all_docids if x in docs]
        pairs = dict(ts.collection(lb, drop=drop, docids=have))
        coll = [(x, pairs.get(x, "")) for x in all_docids]
        if missing:
            res.notes.append(
                f"{name} lacks {len(missing)} of {len(all_docids)} documents (e.g. {missing[0]}); they are kept as empty "
                "documents in its collection, so they cost it retrieval quality"
            )
        docs_path = write_docs(d / f"docs-{safe_filename(name)}-{qkey}.jsonl", coll)
        hyp_path = None
        if cfg.mt is not None:
            hyp_path = _write_lines(d / f"hyp-{safe_filename(name)}.{len(common)}.txt", [seg for doc in common for seg in docs[doc]])
        systems.append(SystemSpec(name, hyp_path, docs_path, {"name": name, "label": lb}))
    res.systems = systems + list(res.systems)
    if w.human:
        _wmt_human(w, [n for n, _ in labels], res)


def select_wmt_documents(w, ts, notes: list[str]):
    """The documents of ``ts`` that the ``wmt:`` section selects: test suites (left out
    unless ``include_testsuites``), ``domains``, ``docs`` (ids or fnmatch patterns) and a
    one-sided ``direction``; each filter is noted, and one that selects nothing is an error
    naming its field and what the file has."""
    name = Path(w.xml).name
    if not w.include_testsuites:
        suites = [d for d in ts.docids if ts.testsuite.get(d)]
        if suites:
            n_all = len(ts.docids)
            lacking = {t: [d for d in ts.docids if d not in ts.references.get(t, {})] for t in w.references_as_systems}
            ts = ts.without_testsuites()
            if not ts.docids:
                raise UserError(
                    f"wmt.include_testsuites: every document of {w.xml} is a test-suite document; "
                    "set include_testsuites: true to use them"
                )
            notes.append(
                f"{name}: {len(suites)} test-suite document(s) left out (as sacrebleu and WMT do); "
                f"{len(ts.docids)} documents used"
            )
            for t, miss in lacking.items():
                if miss and set(miss) <= set(suites):
                    notes.append(
                        f"Reference {t} lacks {len(miss)} of {n_all} documents, all of them test-suite documents; "
                        f"with those left out it covers all {len(ts.docids)} documents used"
                    )
    if w.domains:
        have = _counts(ts.domain.get(d) or "(none)" for d in ts.docids)
        unknown = [x for x in w.domains if x not in have]
        if unknown:
            raise UserError(
                f"wmt.domains: {', '.join(map(repr, unknown))} not in {w.xml}; its documents' domains: "
                f"{_fmt_counts(have)}" + ("" if set(have) != {"(none)"} else " (no <doc domain=...> attributes: remove wmt.domains)")
            )
        n0 = len(ts.docids)
        ts = ts.subset(d for d in ts.docids if (ts.domain.get(d) or "(none)") in w.domains)
        notes.append(f"{name}: domains {', '.join(w.domains)}: {len(ts.docids)} of {n0} documents used")
    if w.docs:
        n0 = len(ts.docids)
        for pat in w.docs:
            if not any(fnmatchcase(d, pat) for d in ts.docids):
                raise UserError(
                    f"wmt.docs: {pat!r} matches no document of {w.xml}"
                    f"{' (after the domain filter)' if w.domains else ''}; ids there: {', '.join(ts.docids[:5])}, ..."
                )
        ts = ts.subset(d for d in ts.docids if any(fnmatchcase(d, pat) for pat in w.docs))
        notes.append(f"{name}: wmt.docs selects {len(ts.docids)} of {n0} documents")
    if w.direction in ("source-original", "target-original"):
        n0 = len(ts.docids)
        keep = [d for d in ts.docids if ts.direction(d) == w.direction]
        if not keep:
            raise UserError(f"wmt.direction: no {w.direction} document in {w.xml}; {direction_summary(ts)}")
        ts = ts.subset(keep)
        notes.append(f"{name}: {w.direction} documents only: {len(keep)} of {n0} ({direction_summary(ts)})")
    return ts


def direction_summary(ts) -> str:
    """``origlang`` counts and the language pair, for messages about translation direction."""
    orig = _counts(ts.origlang.get(d) or "(none)" for d in ts.docids)
    return f"origlang of the {len(ts.docids)} documents: {_fmt_counts(orig)}; pair {ts.src_lang or '?'}-{ts.tgt_lang or '?'}"


def _counts(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


def _fmt_counts(c: dict[str, int]) -> str:
    return ", ".join(f"{k} ({v})" for k, v in c.items())


def wmt_labels(w, ts) -> list[tuple[str, str]]:
    """(system name, translation label) of every system the ``wmt:`` section names."""
    if w.reference not in ts.translators:
        raise UserError(
            f"wmt.reference: translator {w.reference!r} is not in {w.xml} (has: {', '.join(ts.translators) or 'none'}; "
            f"a <ref> without a translator attribute is called {UNNAMED_REF!r})"
        )
    labels: list[tuple[str, str]] = []
    for name in list(w.systems) or list(ts.systems):
        if name not in ts.systems:
            raise UserError(
                f"wmt.systems: system {name!r} is not in {w.xml}{_closest(name, ts.systems)} (has: {', '.join(ts.systems)})"
            )
        labels.append((name, f"hyp:{name}"))
    for t in w.references_as_systems:
        if t not in ts.translators:
            raise UserError(f"wmt.references_as_systems: translator {t!r} is not in {w.xml} (has: {', '.join(ts.translators)})")
        if t == w.reference:
            raise UserError(f"wmt.references_as_systems: {t!r} is the MT reference; it cannot also be a system")
        labels.append((f"ref-{t}", f"ref:{t}"))
    return labels


def wmt_generate(cfg: Config, ts, docids: list[str]):
    """Generated queries from the reference's documents ``docids``, headline-type queries
    only from documents that have a headline (see :meth:`WmtTestSet.has_headline`)."""
    w = cfg.wmt
    ref_docs = ts.references[w.reference]
    no_headline = {d: r for d in docids if (r := ts.has_headline(d, w.headline_domains))}
    return generate_queries(
        cfg.queries.generate, {d: ref_docs[d] for d in docids}, k=cfg.queries.k, seed=cfg.seed,
        limit=cfg.queries.limit, no_headline=no_headline,
    )


def query_counts(gq, ts) -> str:
    """Per domain: documents, queries generated and why the rest were skipped."""
    parts = []
    for dom, row in gq.by_group(ts.domain, default="no domain").items():
        why = "; ".join(f"{n} {r}" for r, n in row["skipped"].items())
        parts.append(f"{dom}: {row['queries']} of {row['documents']} documents" + (f" (skipped: {why})" if why else ""))
    return "; ".join(parts)


def _wmt_queries(cfg: Config, ts, docids: list[str], res) -> dict | None:
    if cfg.queries is None or not cfg.queries.generate:
        return None
    w, kind = cfg.wmt, cfg.queries.generate
    gq = wmt_generate(cfg, ts, docids)
    if not gq.queries:
        raise UserError(
            f"queries.generate: {kind} gave no query from the {len(docids)} documents of {w.xml} "
            f"({query_counts(gq, ts)}); "
            + ("headline and first-sentence need news documents with a headline and a body: use "
               "queries.generate: keywords (needs no headline), or a topic set (queries.file: TOPICS with "
               "relevance.pseudo.top_k)" if kind != "keywords" else
               "use a topic set (queries.file: TOPICS with relevance.pseudo.top_k)")
        )
    res.queries = dict(gq.queries)
    if cfg.relevance is None:
        res.qrels = gq.qrels
        res.qrels_source = f"known-item ({gq.signature})"
    if gq.skipped:
        res.notes.append(f"{len(gq.skipped)} document(s) gave no {kind} query (kept in the collection)")
        for reason in gq.skipped.values():
            res.query_skips[reason] = res.query_skips.get(reason, 0) + 1
    if any(ts.domain.get(d) for d in docids) or any(ts.testsuite.get(d) for d in docids):
        res.notes.append(f"Generated {kind} queries per domain: {query_counts(gq, ts)}")
    removed = (
        "the query text is removed from every collection's documents" if kind != "keywords" else
        "the keywords are left in every collection's documents (they are the document's own rarest words; removing "
        "them would leave the target without its query terms), so the English side finds nearly every target"
    )
    res.notes.append(f"Queries: {len(gq.queries)} generated ({gq.signature}) from reference {w.reference}; {removed}")
    return gq.drop


def _closest(name: str, candidates) -> str:
    """`` (closest: a, b)``: up to 3 candidates most like ``name`` (difflib, ignoring case)."""
    by_lower: dict[str, str] = {}
    for c in candidates:
        by_lower.setdefault(c.lower(), c)
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=3, cutoff=0.5)
    return f" (closest: {', '.join(by_lower[c] for c in close)})" if close else ""


def _wmt_human(w, names: list[str], res) -> None:
    rename = {HUMAN_SYSTEM_NAME: f"ref-{w.references_as_systems[0]}"} if w.references_as_systems else {}
    human = read_wmt_human_scores(w.human, rename=rename)
    check_join("wmt.human", w.human, {n: n for n in names}, list(human), res.notes)
    for name in names:
        if name in human:
            res.human[name] = {"human_z": float(human[name]["z"])}
    if rename:
        res.notes.append(
            f"The WMT human table's {HUMAN_SYSTEM_NAME!r} row is taken to be reference {w.references_as_systems[0]}"
        )


MIN_MATCHED = 3


def join_gaps(wanted: Mapping[str, str], rows: list[str]) -> tuple[list[str], str, list[str]]:
    """(systems without a row, each with its closest unmatched rows, the unmatched rows)."""
    have = set(rows)
    missing = [s for s, k in wanted.items() if k not in have]
    used = set(wanted.values())
    unused = list(dict.fromkeys(r for r in rows if r not in used))
    return missing, "; ".join(f"{m}{_closest(wanted[m], unused)}" for m in missing), unused


def check_join(field: str, path: str, wanted: Mapping[str, str], rows: list[str], notes: list[str] | None) -> list[str]:
    """The systems (``wanted``: system -> the row key it needs) without a row of table
    ``path`` (``rows``: the row keys), each named with the closest unmatched row keys.
    Fewer than :data:`MIN_MATCHED` matched systems is an error naming the field (a table
    for another language pair, or names spelt differently); otherwise every unmatched
    system is noted."""
    missing, detail, unused = join_gaps(wanted, rows)
    if not missing:
        return []
    matched = len(wanted) - len(missing)
    if matched < MIN_MATCHED:
        raise UserError(
            f"{field}: {path} matches {matched} of {len(wanted)} systems (at least {MIN_MATCHED} needed); "
            f"no row for: {detail}; its unmatched rows: {', '.join(unused[:20]) or 'none'}"
            f"{', ...' if len(unused) > 20 else ''}. Is it the table of this language pair? Otherwise make the names agree"
        )
    if notes is not None:
        notes.append(
            f"{Path(path).name}: no row for {len(missing)} of {len(wanted)} system(s): {detail}; "
            "they are left out of correlations with its scores"
        )
    return missing


def _materialize_europarl(cfg: Config, cache, res) -> None:
    """The English side (and stand-in systems in other languages) from the Europarl source
    release; per-system translations from a directory in the same layout or a docs file."""
    e = cfg.europarl
    langs = {"english": e.english, **{name: lang for name, lang in e.lang_systems.items()}}
    colls = {name: read_europarl(e.root, lang, e.granularity) for name, lang in langs.items()}
    al = align_collections(colls)
    if any(al.dropped.values()):
        res.notes.append(f"Europarl alignment across languages: {al.summary()}")
    sig = reader_signature(e.granularity)
    res.notes.append(f"Europarl documents: {len(al.common)} ({sig})")
    d = cache.root / "sources" / "europarl"
    d.mkdir(parents=True, exist_ok=True)

    def write(name, pairs):
        h = text_checksum(*(f"{a}\t{b}" for a, b in pairs))[:12]
        return write_docs(d / f"{safe_filename(name)}-{h}.jsonl", pairs)

    res.english = write("english", al.collections["english"])
    res.doc_format = "jsonl"
    ids = al.common
    systems = []
    for s in res.systems:
        docs = s.docs
        if e.translations:
            try:
                src = substitute(e.translations, s.attrs, "translations")
            except (KeyError, IndexError, ValueError) as ex:
                raise UserError(f"europarl.translations: cannot fill {e.translations!r} for system {s.name!r} ({ex})") from None
            p = Path(src)
            if not p.is_absolute():
                p = Path(cfg.base_dir) / p
            if not p.exists():
                raise UserError(f"europarl.translations: {p} not found for system {s.name!r}; see the config's comments for the layout")
            if p.is_dir():
                pairs = dict(read_europarl(p, e.english, e.granularity, min_lines=1))
            else:
                pairs = dict(read_documents(p))
            missing = [x for x in ids if x not in pairs]
            if missing:
                res.notes.append(f"{s.name}: {len(missing)} Europarl document(s) untranslated, kept as empty documents")
            docs = write(f"sys-{s.name}", [(x, pairs.get(x, "")) for x in ids])
        systems.append(SystemSpec(s.name, s.hyp, docs, dict(s.attrs)))
    for name in e.lang_systems:
        systems.append(SystemSpec(name, None, write(name, al.collections[name]), {"name": name, "lang": e.lang_systems[name]}))
    res.systems = systems
