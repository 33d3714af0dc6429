"""``clir-eval validate``: a dry run that opens every input cheaply and checks every setting.

What ``run`` would find late (after the English retrieval, or without naming the field) is
found here first: measure/analyzer/parameter strings, collection formats, WMT references,
systems, domains and generated queries, and score tables that do not join every system.
Every error names the YAML field; the checks passed are returned as report lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, TypeVar

from ..config.schema import Config, SystemSpec
from ..errors import UserError

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
    """Parse every IR measure and the analyzer (no data read); run does this first too."""
    lines = []
    if cfg.has_retrieval:
        from ..ir.measures import parse_measure
        from ..retrieval.analysis import get_analyzer

        for i, spec in enumerate(cfg.ir.measures):
            _at(f"ir.measures[{i}]", lambda: parse_measure(spec))
        r = cfg.retrieval
        _at("retrieval.analyzer", lambda: get_analyzer(r.analyzer))
        if r.stopwords:
            _at("retrieval.stopwords", lambda: get_analyzer(r.analyzer, stopwords=r.stopwords))
        if r.stem:
            an = _at("retrieval.stem", lambda: get_analyzer(r.analyzer, stopwords=r.stopwords, stem=r.stem))
        else:
            an = get_analyzer(r.analyzer, stopwords=r.stopwords)
        lines.append(f"ir.measures: {', '.join(cfg.ir.measures)}; retrieval: {an.signature}")
    return lines


def dry_run(cfg: Config, facts: dict | None = None) -> list[str]:
    """Open every input of ``cfg`` cheaply (see the module docstring); return what was checked.
    ``facts`` (when given) receives what ``summary`` reports: systems, queries, documents, ..."""
    facts = {} if facts is None else facts
    lines = check_settings(cfg)
    systems = list(cfg.systems)
    if cfg.wmt is not None:
        wlines, labels = _check_wmt(cfg, facts)
        lines += wlines
        systems = [SystemSpec(n, attrs={"name": n, "label": lb}) for n, lb in labels] + systems
    if cfg.europarl is not None:
        systems += [SystemSpec(n, attrs={"name": n, "lang": lang}) for n, lang in cfg.europarl.lang_systems.items()]
    if cfg.collection is not None:
        lines += _check_collection(cfg, systems, facts)
    if cfg.queries is not None and cfg.queries.file:
        from ..pipeline.inputs import read_config_queries

        q = _at("queries.file", lambda: read_config_queries(cfg.queries))
        facts["queries"] = len(q)
        lines.append(f"queries.file: {len(q)} queries")
        if cfg.relevance is not None and cfg.relevance.qrels:
            from ..io.trec import read_qrels

            qrels = _at("relevance.qrels", lambda: read_qrels(cfg.relevance.qrels))
            judged = [x for x in q if x in qrels.judgements]
            if not judged:
                raise UserError(
                    f"relevance.qrels: no query of queries.file is judged in {cfg.relevance.qrels} "
                    f"(query ids e.g. {', '.join(list(q)[:3])}; qrels ids e.g. {', '.join(list(qrels.judgements)[:3])})"
                )
            lines.append(f"relevance.qrels: {len(judged)} of {len(q)} queries judged")
            facts["judged"] = len(judged)
    lines += _check_external(cfg, systems)
    facts["systems"] = [s.name for s in systems]
    return lines


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
    import gzip

    try:
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rb") as fh:
            return sum(1 for line in fh if line.strip())
    except OSError:
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
        docs = facts.get("documents")
        out.append(f"documents: {docs if docs is not None else 'counted at run time'} per collection "
                   f"({len(systems)} systems + the English side)")
        rel = cfg.relevance
        if rel is not None and rel.qrels:
            judged = f" ({facts['judged']} queries judged)" if "judged" in facts else ""
            out.append(f"relevance: qrels {Path(rel.qrels).name}{judged}")
        elif rel is not None and rel.pseudo_top_k:
            out.append(f"relevance: pseudo-qrels, the top {rel.pseudo_top_k} documents of the English-side run")
        elif cfg.queries is not None and cfg.queries.generate:
            out.append(f"relevance: known-item, each generated query's own document ({cfg.queries.generate} queries)")
        else:
            out.append("relevance: none (only measures that need no judgements, such as RBO)")
    else:
        out.append("retrieval: none (no collection): correlations with external scores only")
    out.append("estimated run cost: " + _cost(cfg, facts, len(systems), metrics))
    return out


def _cost(cfg: Config, facts: dict, n_systems: int, metrics: list[str]) -> str:
    from ..mt.rates import cpu_estimate

    parts, total = [], 0.0
    coll = _size_mb(cfg.collection.english) if cfg.collection is not None else None
    if cfg.has_retrieval and coll:
        t = (n_systems + 1) * coll * RETRIEVAL_CPU_S_PER_MB
        total += t
        parts.append(f"retrieval ~{t:.0f}")
    refs = cfg.mt.refs if cfg.mt is not None else ()
    lines = _count_lines(refs[0]) if refs and not str(refs[0]).startswith("irds:") else None
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


def _check_wmt(cfg: Config, facts: dict) -> tuple[list[str], list[tuple[str, str]]]:
    from .materialize import check_join, query_counts, select_wmt_documents, wmt_generate, wmt_labels
    from .wmt import HUMAN_SYSTEM_NAME, read_wmt_human_scores, read_wmt_xml

    w = cfg.wmt
    ts = _at("wmt.xml", lambda: read_wmt_xml(w.xml))
    notes: list[str] = []
    sel = select_wmt_documents(w, ts, notes)
    labels = wmt_labels(w, sel)
    names = [n for n, _ in labels]
    facts["documents"] = len(sel.docids)
    lines = [
        f"wmt.xml: {Path(w.xml).name}: {len(ts.docids)} documents, {len(sel.docids)} used; "
        f"references {', '.join(ts.translators)}; systems: {', '.join(names)}"
    ] + [f"wmt: {n}" for n in notes]
    if w.direction == "both":
        from .materialize import direction_summary

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
        _strict_join("wmt.human", w.human, {n: n for n in names}, list(human), check_join)
        lines.append(f"wmt.human: every system has a row of {Path(w.human).name}")
    return lines, labels


def _strict_join(field, path, wanted, rows, check_join) -> None:
    """Every system must have a row (run would only note the gaps, or fail below 3)."""
    from .materialize import join_gaps

    check_join(field, path, wanted, rows, None)
    missing, detail, _ = join_gaps(wanted, rows)
    if missing:
        raise UserError(
            f"{field}: {Path(path).name}: no row for {len(missing)} of {len(wanted)} system(s): {detail}; "
            "make the names agree (a run would leave them out of its correlations)"
        )


def _check_collection(cfg: Config, systems: list[SystemSpec], facts: dict) -> list[str]:
    from ..io.readers import guess_doc_format

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
        from .collection import read_distractors

        for i, d in enumerate(c.distractors):
            src = _at(d.where or f"collection.distractors[{i}]", lambda: read_distractors(d, i, systems, cfg.base_dir))
            lines.append(f"{d.where}: {src.describe()}")
    return lines


def _check_external(cfg: Config, systems: list[SystemSpec]) -> list[str]:
    """Every external table: columns present and a row for every system that can fill
    its match templates."""
    from .materialize import _table_scores, check_join

    lines = []
    for t in cfg.external:
        if t.per_item:
            from .item_tables import describe_item_table

            lines.append(_at(t.where, lambda: describe_item_table(t, systems)))
            continue
        keys: dict = {}
        _at(t.where, lambda: _table_scores(t, systems, keys))
        _strict_join(f"{t.where}.match", t.file, keys.get("wanted", {}), keys.get("rows", []), check_join)
        lines.append(f"{t.where}: {Path(t.file).name} has a row for each of the {len(keys.get('wanted', {}))} systems")
    return lines
