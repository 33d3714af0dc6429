"""``clir-eval validate``: a dry run that opens every input cheaply and checks every setting.

What ``run`` would find late (after the English retrieval, or without naming the field) is
found here first: measure/analyzer/parameter strings, collection formats, WMT references,
systems, domains and generated queries, and score tables that join too few systems. Its checks
are ``run``'s (:func:`check_settings` is called by both; score tables join as ``run`` joins
them, a system without a row is a note). Every error names the YAML field; the checks passed
are returned as report lines, the notes in ``facts["notes"]``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable, TypeVar

from ..config.schema import Config, SystemSpec
from ..errors import UserError
from ..io.files import READ_ERRORS, InputFile, read_lines
from ..io.readers import guess_doc_format, read_documents
from ..io.trec import read_qrels
from ..mt.base import metric_spec
from ..mt.rates import cpu_estimate
from ..pipeline.inputs import read_config_queries
from ..pipeline.item_level import item_metric_names
from ..pipeline.stages import ids_differ, misaligned
from ..retrieval.analysis import get_analyzer
from .collection import read_distractors
from .item_tables import describe_item_table
from .materialize import (
    check_join,
    direction_summary,
    query_counts,
    select_wmt_documents,
    table_scores,
    wmt_generate,
    wmt_labels,
)
from .wmt import HUMAN_SYSTEM_NAME, read_wmt_human_scores, read_wmt_xml

T = TypeVar("T")


def _at(field: str, fn: Callable[[], T]) -> T:
    """Run ``fn``; a UserError not already naming ``field`` is prefixed with it."""
    try:
        return fn()
    except UserError as e:
        msg = str(e)
        if msg.startswith(field) or f": {field}" in msg.split(";")[0]:
            raise
        raise UserError(f"{field}: {msg}") from None


def check_settings(cfg: Config) -> list[str]:
    """Every check of ``cfg`` that reads no data: the MT metrics (``mt.metrics``,
    ``item_level.metrics``), IR measures and analyzer, and score names that clash (an external
    column named like a metric, two external columns with one score name). ``run`` makes these
    checks before any work (:func:`clir_eval.pipeline.run.run_experiment`) and ``validate`` first:
    one function, so the two never disagree. Returns ``validate``'s report lines."""
    lines = []
    mt_names = _check_metrics(cfg)
    ir_names: list[str] = []
    if cfg.has_retrieval:
        ir_names = [m.name for m in cfg.ir.parsed]  # parsed and checked when the record was made (IRSettings.check)
        lines.append(_retrieval_line(cfg))
    _check_score_names(cfg, mt_names + ir_names)
    return lines


def _retrieval_line(cfg: Config) -> str:
    """The analyzer ``cfg.retrieval`` builds (each of its settings checked, naming the field), as a report line."""
    r = cfg.retrieval
    _at("retrieval.analyzer", lambda: get_analyzer(r.analyzer, language=r.language))
    if r.stopwords:
        _at("retrieval.stopwords", lambda: get_analyzer(r.analyzer, stopwords=r.stopwords, language=r.language))
    if r.stem:
        an = _at("retrieval.stem", lambda: get_analyzer(r.analyzer, stopwords=r.stopwords, stem=r.stem, language=r.language))
    else:
        an = get_analyzer(r.analyzer, stopwords=r.stopwords, language=r.language)
    return f"ir.measures: {', '.join(cfg.ir.measures)}; retrieval: {an.signature}"


def _check_metrics(cfg: Config) -> list[str]:
    """The canonical names of ``mt.metrics``; each of them and of ``item_level.metrics`` must load."""
    if cfg.mt is None:
        return []

    mt = cfg.mt  # mt.metrics were parsed and checked when the record was made (MTSettings.check)
    names = [m.name for m in mt.specs]
    for i, spec in enumerate(cfg.item_level.metrics):
        _at(f"item_level.metrics[{i}]", lambda: metric_spec(spec, mt.tokenize, mt.lowercase))
    return names


def item_names_taken(cfg: Config) -> list[str]:
    """The score names the item-level analysis gives its own metrics: an external per-document
    column may not reuse one."""
    if cfg.mt is None:
        return list(cfg.item_level.metrics)

    return list(cfg.item_level.metrics or cfg.mt.metrics) + item_metric_names(cfg, True)[0]


def _check_score_names(cfg: Config, taken: list[str]) -> None:
    """No external column's score name repeats a metric's, a measure's or another column's (the
    names of tables in other formats are read from their files, and checked when they are read)."""
    used = {False: set(taken), True: set(item_names_taken(cfg)) if any(t.per_item for t in cfg.external) else set()}
    for t in cfg.external:
        if t.format != "table":
            continue
        for name in t.columns.values():
            if name in used[t.per_item]:
                raise UserError(f"{t.where}.columns: score name {name!r} is already used; rename it "
                                "(columns: {column: new_name})")
            used[t.per_item].add(name)


def dry_run(cfg: Config, facts: dict | None = None) -> list[str]:
    """Open every input of ``cfg`` cheaply (see the module docstring); return what was checked.
    ``facts`` (when given) receives what ``summary`` reports: systems, queries, documents, ..."""
    facts = {} if facts is None else facts
    lines = check_settings(cfg)
    systems = list(cfg.systems)
    if cfg.wmt is not None:
        wlines, labels, lang = _check_wmt(cfg, facts)
        filled = replace(cfg, retrieval=cfg.retrieval.for_collection(lang))
        if filled.retrieval != cfg.retrieval:  # run uses the WMT file's target language (the config names none)
            cfg = filled
            lines = [_retrieval_line(cfg) if ln.startswith("ir.measures: ") else ln for ln in lines]
            lines.append(f"retrieval.language: {cfg.retrieval.language} (wmt.xml's target language; "
                         "retrieval.language: sets another)")
        lines += wlines
        systems = [SystemSpec(n, attrs={"name": n, "label": lb}) for n, lb in labels] + systems
    if cfg.europarl is not None:
        systems += [SystemSpec(n, attrs={"name": n, "lang": lang}) for n, lang in cfg.europarl.lang_systems.items()]
    if cfg.collection is not None:
        lines += _check_collection(cfg, systems, facts)
    lines += _check_alignment(cfg)
    if cfg.queries is not None and cfg.queries.file:
        q = _at("queries.file", lambda: read_config_queries(cfg.queries))
        facts["queries"] = len(q)
        lines.append(f"queries.file: {len(q)} queries")
        if cfg.relevance is not None and cfg.relevance.qrels:
            qrels = _at("relevance.qrels", lambda: read_qrels(cfg.relevance.qrels))
            judged = [x for x in q if x in qrels.judgements]
            if not judged:
                raise UserError(
                    f"relevance.qrels: no query of queries.file is judged in {cfg.relevance.qrels} "
                    f"(query ids e.g. {', '.join(list(q)[:3])}; qrels ids e.g. {', '.join(list(qrels.judgements)[:3])})"
                )
            lines.append(f"relevance.qrels: {len(judged)} of {len(q)} queries judged")
            facts["judged"] = len(judged)
            facts["no_relevant"] = [x for x in q if not qrels.relevant(x)]
        elif cfg.relevance is not None and cfg.relevance.pseudo_top_k and cfg.has_retrieval:
            line = _pseudo_coverage(cfg, q, facts)
            if line:
                lines.append(line)
    lines += _check_external(cfg, systems, facts.setdefault("notes", []))
    facts["systems"] = [s.name for s in systems]
    return lines


# Above this size the English side is not read to check which queries it can answer (a run reads it anyway).
COVERAGE_MAX_MB = 200.0


def _pseudo_coverage(cfg: Config, queries: dict[str, str], facts: dict) -> str | None:
    """With pseudo-qrels (the English run's top k): how many documents of the English side share a term with
    each query, capped at k. A query that matches none gets no relevant document (it is not evaluated); one that
    matches fewer than k caps the English side's own P@k below 1. Facts: ``unmatched`` (query ids), ``below_k``
    (how many match fewer than k) and ``p_at_k_ceiling`` (the English side's P@k over the matched queries)."""
    c, k = cfg.collection, cfg.relevance.pseudo_top_k
    size = _size_mb(c.english) if c is not None and c.english else None
    if size is None or size > COVERAGE_MAX_MB:
        return None
    r = cfg.retrieval
    an = get_analyzer(r.analyzer, stopwords=r.stopwords, stem=r.stem, language=r.language)
    terms = {qid: set(an.tokenize(text)) for qid, text in queries.items()}
    wanted = set().union(*terms.values()) if terms else set()
    hits = dict.fromkeys(terms, 0)
    docs = _at("collection.english", lambda: read_documents(c.english, c.format, c.ids))
    for text in docs.texts:
        present = wanted.intersection(an.tokenize(text))
        if present:
            for qid, t in terms.items():
                if hits[qid] < k and t & present:
                    hits[qid] += 1
    unmatched = [qid for qid, n in hits.items() if not n]
    matched = [n for n in hits.values() if n]
    facts.update(unmatched=unmatched, below_k=sum(0 < n < k for n in hits.values()), top_k=k,
                 p_at_k_ceiling=sum(matched) / (k * len(matched)) if matched else None)
    return (f"relevance.pseudo: {len(hits) - len(unmatched)} of {len(hits)} queries share a term with an English-side "
            f"document; {facts['below_k']} with fewer than {k}")


# Rough cost of retrieval in CPU-seconds per MB of collection text: BM25 indexing plus 150
# queries at depth 1000 (scripts/bench_bm25.py: 1M documents of ~150 tokens, 41 CPU-s on a
# 2-core machine). The MT metrics' rates are clir_eval.mt.rates (measured per 1000 lines).
RETRIEVAL_CPU_S_PER_MB = 0.07


def _size_mb(path: str | None) -> float | None:
    try:
        if not path or str(path).startswith("irds:"):
            return None
        return Path(path).stat().st_size / 1e6 * (3 if str(path).endswith(".gz") else 1)  # text compresses ~3x
    except OSError:
        return None


def _count_lines(path: str) -> int | None:
    """Non-empty lines of a plain or gzipped file (documents of a jsonl/tsv/lines collection); None if unreadable."""
    try:
        with InputFile(path) as fh:  # a FIFO, a device or a .gz bomb refused as run refuses it
            return sum(1 for _, line in fh.lines() if line.strip())
    except READ_ERRORS:
        return None


def summary(cfg: Config, facts: dict) -> list[str]:
    """A few plain lines: what ``run`` would do with this config, and roughly what it costs."""
    systems = facts.get("systems", [])
    shown = ", ".join(systems[:8]) + (f", ... ({len(systems) - 8} more)" if len(systems) > 8 else "")
    out = [f"config: {cfg.name} ({cfg.path})", f"systems: {len(systems)} matched: {shown}"]
    metrics = list(cfg.mt.metrics) if cfg.mt is not None else []
    out.append(f"MT metrics: {', '.join(metrics) if metrics else 'none (no mt: section)'}")
    ext = [f"{t.kind}{' per document' if t.per_item else ''}: {', '.join(t.columns.values())} from "
           f"{Path(t.file).name}" + (f" (lower is better: {', '.join(t.lower_is_better)})" if t.lower_is_better else "")
           for t in cfg.external]
    if ext:
        out.append("external scores: " + "; ".join(ext))
    if cfg.has_retrieval:
        out.append(f"IR measures: {', '.join(cfg.ir.measures)}")
        out.append(f"queries: {facts['queries'] if 'queries' in facts else 'read at run time'}")
        out += _query_warnings(facts)
        docs = facts.get("documents")
        docs = docs if docs is not None else "counted at run time"
        out.append(f"architecture: query translation: one collection of {docs} documents, indexed once and searched "
                   f"with each of the {len(systems)} systems' translated queries and the reference side's" if
                   cfg.query_translation else
                   f"documents: {docs} per collection ({len(systems)} systems + the English side)")
        rel = cfg.relevance
        if rel is not None and rel.qrels:
            judged = f" ({facts['judged']} queries judged)" if "judged" in facts else ""
            out.append(f"relevance: qrels {Path(rel.qrels).name}{judged}")
        elif rel is not None and rel.pseudo_top_k:
            ceiling = facts.get("p_at_k_ceiling")
            out.append(f"relevance: pseudo-qrels, the top {rel.pseudo_top_k} documents of the English-side run"
                       + (f"; the English side scores 1 on MAP and nDCG by construction, and P@{rel.pseudo_top_k} "
                          f"{ceiling:.2f} ({facts['below_k']} queries share a term with fewer than "
                          f"{rel.pseudo_top_k} documents)" if ceiling is not None and facts.get("below_k") else ""))
        elif cfg.queries is not None and cfg.queries.generate:
            out.append(f"relevance: known-item, each generated query's own document ({cfg.queries.generate} queries)")
        else:
            out.append("relevance: none (only measures that need no judgements, such as RBO)")
    else:
        out.append("retrieval: none (no collection): correlations with external scores only")
    out.append("estimated run cost: " + _cost(cfg, facts, len(systems), metrics))
    return out


def _query_warnings(facts: dict) -> list[str]:
    """``warning:`` lines for queries that will get no relevant document (a run skips them)."""
    n = facts.get("queries")
    out = []
    if facts.get("unmatched"):
        u = facts["unmatched"]
        out.append(f"warning: {len(u)} of {n} queries share no term with any English-side document ({_ids(u)}): "
                   "they get no pseudo-qrels and are not evaluated; use queries written for this collection")
    if facts.get("no_relevant"):
        u = facts["no_relevant"]
        out.append(f"warning: {len(u)} of {n} queries have no relevant document in the qrels ({_ids(u)}): "
                   "the IR measures skip them")
    return out


def _ids(qids: list[str]) -> str:
    return ", ".join(qids[:5]) + (f", ... ({len(qids) - 5} more)" if len(qids) > 5 else "")


def _cost(cfg: Config, facts: dict, n_systems: int, metrics: list[str]) -> str:
    parts, total = [], 0.0
    coll = _size_mb(cfg.collection.english) if cfg.collection is not None else facts.get("collection_mb")
    if cfg.has_retrieval and coll:
        t = (n_systems + 1) * coll * RETRIEVAL_CPU_S_PER_MB
        total += t
        parts.append(f"retrieval ~{t:.0f}")
    refs = cfg.mt.refs if cfg.mt is not None else ()
    lines = (_count_lines(refs[0]) if refs and not str(refs[0]).startswith("irds:") else None) or facts.get("mt_lines")
    if metrics and lines:
        device = cfg.mt.device if cfg.mt is not None else "cpu"
        per = {m: cpu_estimate(m, lines, device) for m in metrics}
        known = {m: n_systems * v for m, v in per.items() if v is not None}
        total += sum(known.values())
        slow = sorted(known, key=known.get, reverse=True)[:1]
        part = f"MT metrics ~{sum(known.values()):.0f}"
        if slow and known[slow[0]] >= 0.5 * sum(known.values()) and len(known) > 1:
            part += f", of which {slow[0]} ~{known[slow[0]]:.0f}"
        unknown = [m for m, v in per.items() if v is None]
        parts.append(part + (f"; not estimated: {', '.join(unknown)}" if unknown else "")
                     + (f" (neural metrics on {device} are not estimated)" if device != "cpu" and unknown else ""))
    if not parts:
        return "not estimated here (the sizes are known only at run time)"
    return (f"~{max(total, 1):.0f} CPU-s ({'; '.join(parts)}) plus correlations and reports; a rough estimate "
            "(within a few times) from rates measured on one machine, before caching")


def _check_wmt(cfg: Config, facts: dict) -> tuple[list[str], list[tuple[str, str]], str | None]:
    """The WMT file's report lines, its systems (name, label) and its target language (the collection's)."""
    w = cfg.wmt
    ts = _at("wmt.xml", lambda: read_wmt_xml(w.xml))
    notes: list[str] = []
    sel = select_wmt_documents(w, ts, notes)
    labels = wmt_labels(w, sel)
    names = [n for n, _ in labels]
    facts["documents"] = len(sel.docids)
    # the sizes the cost estimate needs: MT-scored lines, and the English side's text (the reference documents)
    ref = ts.references.get(w.reference) or {}
    facts["mt_lines"] = ts.n_segments([d for d in sel.docids if d in ts.source])
    facts["collection_mb"] = sum(len(seg.encode("utf-8")) + 1 for d in sel.docids for seg in ref.get(d, ())) / 1e6
    lines = [
        f"wmt.xml: {Path(w.xml).name}: {len(ts.docids)} documents, {len(sel.docids)} used; "
        f"references {', '.join(ts.translators)}; systems: {', '.join(names)}"
    ] + [f"wmt: {n}" for n in notes]
    if w.direction == "both":
        lines.append(f"wmt.direction: {direction_summary(sel)}")
    if cfg.queries is not None and cfg.queries.generate:
        docids = [d for d in sel.docids if d in sel.references[w.reference]]
        gq = wmt_generate(cfg, sel, docids)
        if not gq.queries:
            raise UserError(f"queries.generate: {cfg.queries.generate} gives no query ({query_counts(gq, sel)})")
        lines.append(f"queries.generate: {cfg.queries.generate}: {len(gq.queries)} queries; {query_counts(gq, sel)}")
        facts["queries"] = len(gq.queries)
    if w.human:
        rename = {HUMAN_SYSTEM_NAME: f"ref-{w.references_as_systems[0]}"} if w.references_as_systems else {}
        human = _at("wmt.human", lambda: read_wmt_human_scores(w.human, rename=rename))
        if not check_join("wmt.human", w.human, {n: n for n in names}, list(human), facts.setdefault("notes", [])):
            lines.append(f"wmt.human: every system has a row of {Path(w.human).name}")
    return lines, labels, ts.tgt_lang


def _check_collection(cfg: Config, systems: list[SystemSpec], facts: dict) -> list[str]:
    c = cfg.collection
    lines = []
    if c.english and not str(c.english).startswith("irds:"):
        facts["documents"] = _count_lines(c.english)
    if c.english:
        fmt = c.format or _at("collection.format", lambda: guess_doc_format(c.english))
        for s in cfg.systems:
            if s.docs and not c.format:
                _at("collection.format", lambda: guess_doc_format(s.docs))
        lines.append(f"collection: {Path(c.english).name} ({fmt}{', ids from ' + Path(c.ids).name if c.ids else ''})")
    if c.distractors:
        for i, d in enumerate(c.distractors):
            src = _at(d.where or f"collection.distractors[{i}]", lambda: read_distractors(d, i, systems, cfg.base_dir))
            lines.append(f"{d.where}: {src.describe()}")
    return lines


def _local(path: str | None) -> bool:
    return bool(path) and not str(path).startswith("irds:")


def _check_alignment(cfg: Config) -> list[str]:
    """What run checks of each system's files, with run's message: every MT file line-aligned with its
    hypotheses, every translated collection holding the English side's document ids."""
    refs = [r for r in (cfg.mt.refs if cfg.mt is not None else ()) if _local(r)]
    source = cfg.mt.source if cfg.mt is not None and _local(cfg.mt.source) else None
    others = [("reference", r, len(_at("mt.refs", lambda r=r: read_lines(r)))) for r in refs]
    if source:
        others.append(("source", source, len(_at("mt.source", lambda: read_lines(source)))))
    c = cfg.collection
    english = (_at("collection.english", lambda: read_documents(c.english, c.format, c.ids)).ids
               if c is not None and _local(c.english) and any(s.docs for s in cfg.systems) else None)
    for s in cfg.systems:
        if s.hyp and others:
            n = len(_at(f"systems[{s.name}].hyp", lambda s=s: read_lines(s.hyp)))
            for what, path, m in others:
                if m != n:
                    raise UserError(misaligned(s.name, s.hyp, n, what, path, m))
        if s.docs and english is not None:
            why = ids_differ(s.name, s.docs, _at(f"systems[{s.name}].docs",
                                                 lambda s=s: read_documents(s.docs, c.format).ids), english)
            if why:
                raise UserError(why)
    out = []
    if others and any(s.hyp for s in cfg.systems):
        out.append(f"systems: every hypothesis file line-aligned with {', '.join(w for w, _, _ in others)}")
    if english is not None:
        out.append(f"systems: every translated collection has the English side's {len(english)} document ids")
    return out


def _check_external(cfg: Config, systems: list[SystemSpec], notes: list[str]) -> list[str]:
    """Every external table: columns present, and rows joined as ``run`` joins them (a system
    without a row is noted, too few matched systems is an error)."""
    lines = []
    for t in cfg.external:
        if t.per_item:
            lines.append(_at(t.where, lambda: describe_item_table(t, systems)))
            continue
        keys: dict = {}
        _at(t.where, lambda: table_scores(t, systems, keys))
        wanted = keys.get("wanted", {})
        missing = check_join(f"{t.where}.match", t.file, wanted, keys.get("rows", []), notes)
        lines.append(f"{t.where}: {Path(t.file).name} has a row for {len(wanted) - len(missing)} of the {len(wanted)} systems")
    return lines
