"""Experiment configs: YAML validated into frozen dataclasses.

Every error names the YAML path of the offending field (``systems[3].hyp: file not found``).
Paths are relative to the config file; ``${VAR}`` expands environment variables and
``${DATA_ROOT}`` expands to the data root (``--data-root`` flag, else ``CLIR_EVAL_DATA``,
else the config's ``data_root`` key, relative to the config file).
"""

from __future__ import annotations

import contextlib
import glob as _glob
import os
import re
import reprlib
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import yaml

from ..correlation.settings import CorrelationSettings, ItemLevelSettings
from ..errors import UserError
from ..io.files import check_system_name, read_bytes
from ..io.mtme import read_scores
from ..io.safe_yaml import load_yaml
from ..ir.settings import PSEUDO_TOP_K, IRSettings, RelevanceConfig
from ..limits import MAX_CONFIG_BYTES
from ..pipeline.settings import RunSettings
from ..retrieval.analysis import STOPWORD_LISTS
from ..retrieval.settings import RetrievalSettings
from ..sources import irds
from ..sources.settings import (
    ARCHITECTURES,
    QT_QUERY_KINDS,
    QUERY_KINDS,
    CollectionConfig,
    DistractorSource,
    EuroparlSource,
    ExternalTable,
    QueriesConfig,
    WMTSource,
)

if TYPE_CHECKING:  # the mt package registers its metrics (sacrebleu) when imported: only configs using it load it
    from ..mt.settings import AnalysesConfig, MTSettings
from ..ir.measures import parse_measure
from ..mt.base import metric_spec
from ..mt.settings import AnalysesConfig, MTSettings
from ..templates import substitute
from .schema import Config, SystemSpec
from .sections import Loader, Section


def _input(s: "Loader", value: str, where: str, part: str, fields=("title",)) -> str:
    """A path, or ``irds:<id>``: that ir_datasets part exported as a plain file (sources.irds)."""
    if irds.is_irds(value):
        return irds.export(value, part, fields, where=f"{s.path}: {where}")
    return s.path_of(value, where, kind="path" if part == "queries" else "file")


def _pattern_to_regex(pattern: str) -> tuple[str, re.Pattern, list[str]]:
    """``dir/nc{size}.bpe{bpe}.txt.gz`` -> (glob, regex with named groups, field names)."""
    fields: list[str] = []
    glob_parts: list[str] = []
    rx_parts: list[str] = []
    pos = 0
    for m in re.finditer(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", pattern):
        lit = pattern[pos : m.start()]
        glob_parts.append(_glob.escape(lit))
        rx_parts.append(re.escape(lit))
        name = m.group(1)
        if name in fields:
            rx_parts.append(f"(?P={name})")
        else:
            fields.append(name)
            rx_parts.append(f"(?P<{name}>[^/]+?)")
        glob_parts.append("*")
        pos = m.end()
    lit = pattern[pos:]
    glob_parts.append(_glob.escape(lit))
    rx_parts.append(re.escape(lit))
    return "".join(glob_parts), re.compile("^" + "".join(rx_parts) + "$"), fields


def _fmt(template: str, attrs: Mapping[str, str], where: str, cfg_path: Path) -> str:
    try:
        return substitute(template, attrs, f"{cfg_path}: {where}")
    except KeyError as e:
        raise UserError(
            f"{cfg_path}: {where}: template {template!r} uses {e} which is not a system attribute "
            f"(known: {', '.join(sorted(attrs))})"
        ) from None


def _systems(s: Loader, raw: Any, has_mt: bool) -> tuple[SystemSpec, ...]:
    if raw is None:
        return ()
    if isinstance(raw, dict):
        out = _systems_from_pattern(s, Section(raw, "systems", s), has_mt)
    elif isinstance(raw, list):
        out = [_system_from_item(s, Section(item, f"systems[{i}]", s)) for i, item in enumerate(raw)]
    else:
        raise UserError(f"{s.path}: systems: expected a list of systems or a mapping with 'pattern'")
    names = [x.name for x in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise UserError(f"{s.path}: systems: duplicate system name {dup[0]!r}; names must be unique")
    return tuple(out)


def _system_from_item(s: Loader, sec: Section) -> SystemSpec:
    w = sec.where
    nm = check_system_name(sec.str("name", required=True), f"{w}.name")
    hyp = sec.str("hyp")
    docs = sec.str("docs")
    queries = sec.str("queries")
    attrs = sec.raw("attrs", {}) or {}
    if not isinstance(attrs, dict):
        raise sec.err("attrs", "expected a mapping of attribute: value")
    sec.done()
    attrs = {str(k): str(v) for k, v in attrs.items()}
    attrs["name"] = nm
    return SystemSpec(
        nm,
        s.path_of(hyp, f"{w}.hyp") if hyp else None,
        s.path_of(docs, f"{w}.docs") if docs else None,
        attrs,
        s.path_of(queries, f"{w}.queries") if queries else None,
    )


def _systems_from_pattern(s: Loader, sec: Section, has_mt: bool) -> list[SystemSpec]:
    where = sec.where
    pattern = sec.str("pattern", required=True)
    name_t = sec.str("name")
    hyp_t = s.expand(sec.str("hyp", "{path}"), f"{where}.hyp")
    docs_t = sec.str("docs")
    docs_t = s.expand(docs_t, f"{where}.docs") if docs_t else None
    queries_t = sec.str("queries")
    queries_t = s.expand(queries_t, f"{where}.queries") if queries_t else None
    attrs_extra = sec.raw("attrs", {}) or {}
    if not isinstance(attrs_extra, dict):
        raise sec.err("attrs", "expected a mapping of attribute: value")
    expect = sec.str_list("expect")
    sec.done()
    out = []
    for p, groups in _pattern_matches(s, pattern, where):
        attrs = {k: str(v) for k, v in attrs_extra.items()}
        attrs.update(groups)
        attrs["path"] = p
        nm = _fmt(name_t, attrs, f"{where}.name", s.path) if name_t else _stem(p)
        check_system_name(nm, f"{where}.name ({p})")
        attrs["name"] = nm
        hyp = _fmt(hyp_t, attrs, f"{where}.hyp", s.path) if has_mt and not queries_t else None
        docs = _fmt(docs_t, attrs, f"{where}.docs", s.path) if docs_t else None
        queries = _fmt(queries_t, attrs, f"{where}.queries", s.path) if queries_t else None
        hyp_p = s.path_of(hyp, f"{where}[{nm}].hyp") if hyp else None
        docs_p = s.path_of(docs, f"{where}[{nm}].docs") if docs else None
        queries_p = s.path_of(queries, f"{where}[{nm}].queries") if queries else None
        attrs.pop("path")
        out.append(SystemSpec(nm, hyp_p, docs_p, attrs, queries_p))
    _check_pattern_match(s, pattern, [x.name for x in out], expect)
    return out


def _check_pattern_match(s: Loader, pattern: str, names: list[str], expect: tuple[str, ...]) -> None:
    """Note which systems the pattern matched; fail when a system listed in ``expect`` is missing."""
    missing = [n for n in expect if n not in names]
    if missing:
        raise UserError(
            f"{s.path}: systems.expect: {', '.join(map(repr, missing))} not matched by systems.pattern {pattern} "
            f"(matched: {', '.join(names)}); restore the file(s) or remove the name(s) from expect"
        )
    shown = ", ".join(names[:50]) + (f", ... ({len(names) - 50} more)" if len(names) > 50 else "")
    s.notes.append(f"systems.pattern {pattern} matched {len(names)} file(s): {shown}.")


def _pattern_matches(s: Loader, pattern: str, where: str) -> list[tuple[str, dict[str, str]]]:
    """(path, {field: value}) of every file matching a ``systems.pattern``, sorted by path."""
    expanded = s.expand(pattern, f"{where}.pattern")
    if not os.path.isabs(expanded):
        expanded = str(s.base / expanded)
    expanded = os.path.normpath(expanded)
    gl, rx, _ = _pattern_to_regex(expanded)
    matches = []
    for p in sorted(_glob.glob(gl)):
        m = rx.match(p)
        if m:
            matches.append((p, m.groupdict()))
    if not matches:
        raise UserError(f"{s.path}: {where}.pattern: no file matches {expanded}; check the path or --data-root")
    return matches


def _str_map(sec: "Section", key: str) -> dict[str, str]:
    v = sec.raw(key, {}) or {}
    if not isinstance(v, dict) or not all(isinstance(x, (str, int)) for x in v.values()):
        raise sec.err(key, "expected a mapping name: value")
    return {str(k): str(x) for k, x in v.items()}


def _stem(p: str) -> str:
    name = Path(p).name
    for suf in (".gz", ".jsonl", ".tsv", ".txt"):
        if name.endswith(suf):
            name = name[: -len(suf)]
    return name


def load_config(path: str | os.PathLike, *, data_root: str | None = None) -> Config:
    """Read and validate a YAML experiment config."""
    p = Path(path)
    return _build(p, _read_yaml(p), data_root)


def config_from_dict(data: Mapping[str, Any], *, base_dir: str | os.PathLike | None = None,
                     data_root: str | None = None) -> Config:
    """Validate a config given as a mapping (the YAML's content); relative paths are relative to
    ``base_dir`` (default: the working directory), and the name defaults to ``config``."""
    if not isinstance(data, Mapping):
        raise UserError(f"a config is a mapping of sections (name, systems, mt, ...), not {type(data).__name__}")
    _check_text(data)
    return _build(Path(base_dir or ".").resolve() / "config", dict(data), data_root)


def _check_text(data: Mapping[str, Any]) -> None:
    """Every text of a config given as a mapping (keys and values, at any depth) is encodable as UTF-8, as
    a YAML file's text is: a lone surrogate (``"\\udcff"``, from a file name decoded with surrogateescape)
    is a UserError naming its field, not an encoding error when results.json is written."""
    stack: list[tuple[str, Any]] = [("", data)]
    seen: set[int] = set()
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as e:
                raise UserError(f"config: {where}: {reprlib.repr(value)} is not valid text (a lone "
                                f"surrogate at character {e.start}); give UTF-8 text") from None
        elif isinstance(value, (Mapping, list, tuple)) and id(value) not in seen:
            seen.add(id(value))
            items = value.items() if isinstance(value, Mapping) else enumerate(value)
            for k, v in items:
                at = (f"{where}.{k}" if where else str(k)) if isinstance(value, Mapping) else f"{where}[{k}]"
                stack.extend([(at, v), (f"{where} (a key)" if where else "a key", k)])  # the key first: `at` shows it


def _build(p: Path, raw: Any, data_root: str | None) -> Config:
    s = Loader(p, data_root)
    top = Section(raw, "", s)
    s.data_root = _data_root(s, top.str("data_root"), data_root)
    name = top.str("name", p.stem)
    run = top.settings(RunSettings, rest=True)  # seed, jobs, executor, shard_docs
    notes = top.str_list("notes")
    translate = _load_translate(top)
    mt = _load_mt(s, top.section("mt"), has_wmt=top.data.get("wmt") is not None, qt=translate == "queries")
    wmt = _load_wmt(s, top.section("wmt"))
    europarl = _load_europarl(s, top.section("europarl"))
    systems = _systems(s, top.raw("systems"), has_mt=mt is not None)
    collection = _load_collection(s, top.section("collection"), has_source=wmt is not None or europarl is not None)
    queries = _load_queries(s, top.section("queries"))
    relevance = _load_relevance(s, top.section("relevance"))
    retrieval = _load_retrieval(s, top.section("retrieval"))
    ir = _load_ir(top.section("ir"))
    external = _load_external(s, top.raw("external"))
    corr = _load_correlation(s, top.section("correlation"), run.seed)
    item_level = _load_item_level(top)
    analyses = _load_analyses(s, top.section("analyses"), has_mt=mt is not None,
                              systems=None if wmt or europarl else [x.name for x in systems if x.hyp])
    top.done()
    cfg = Config(
        name=name, path=str(p.resolve()), base_dir=str(s.base), data_root=s.data_root, seed=run.seed, jobs=run.jobs,
        systems=systems, mt=mt, collection=collection, queries=queries, relevance=relevance,
        retrieval=retrieval, ir=ir, external=external, correlation=corr, wmt=wmt, europarl=europarl,
        notes=notes + tuple(s.notes), executor=run.executor, analyses=analyses, shard_docs=run.shard_docs,
        item_level=item_level, translate=translate,
    )
    _check_consistency(cfg, p)
    return cfg


def _read_yaml(p: Path) -> Any:
    if not p.exists():
        raise UserError(f"config not found: {p}; check the path")
    data = read_bytes(p, MAX_CONFIG_BYTES + 1)  # a regular file (a FIFO or device is refused), read within the bound
    if len(data) > MAX_CONFIG_BYTES:
        raise UserError(f"{p}: more than {MAX_CONFIG_BYTES} bytes is too large for a config")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{p}: not valid UTF-8; save the config as UTF-8") from None
    try:
        return load_yaml(text, p)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise UserError(f"{p}{where}: invalid YAML ({problem}); fix the syntax") from None


def _resolved(path: str, what: str) -> str:
    """``path`` made absolute with its links resolved; a symbolic-link loop is a UserError naming ``what``."""
    try:
        return str(Path(path).expanduser().resolve())
    except (RuntimeError, OSError) as e:  # RuntimeError: a symlink loop (Python < 3.13)
        raise UserError(f"{what} {path}: cannot resolve the path ({e}); fix the symbolic links") from None


def _data_root(s: Loader, key: str | None, flag: str | None) -> str | None:
    """The data root: the --data-root flag, else $CLIR_EVAL_DATA, else the config's data_root."""
    if flag:
        return _resolved(flag, "--data-root")
    if os.environ.get("CLIR_EVAL_DATA"):
        return _resolved(os.environ["CLIR_EVAL_DATA"], "CLIR_EVAL_DATA")
    if key:
        return os.path.normpath(str(s.base / s.expand(key, "data_root")))
    return None




def _load_translate(top: Section) -> str:
    """``translate: documents`` (the default: each system translates the collection) or ``queries``."""
    v = top.str("translate", "documents")
    if v not in ARCHITECTURES:
        raise top.err("translate", f"{v!r} is not a CLIR architecture; use documents (each system translates the "
                                   "collection) or queries (each system translates the queries)")
    return v


def _load_mt(s: Loader, sec: Section | None, *, has_wmt: bool, qt: bool = False) -> "MTSettings | None":
    if sec is None:
        return None

    refs = sec.str_list("refs") or sec.str_list("ref")
    if refs and qt:
        raise sec.err("refs", "with translate: queries the MT reference is the human translation of the queries "
                              "(queries.file, or the WMT file's reference headlines); remove mt.refs")
    mt = sec.settings(MTSettings, refs=tuple(s.path_of(r, f"mt.refs[{i}]") for i, r in enumerate(refs)),
                      source=s.path_of(sec.str("source"), "mt.source") if sec.has("source") else None)
    if not mt.refs and not has_wmt and not qt:
        raise UserError(f"{s.path}: mt.refs: give at least one reference file")
    if mt.source and has_wmt:
        raise UserError(f"{s.path}: mt.source: with a wmt: source the source segments come from the XML's <src>; "
                        "remove mt.source")
    return mt


def _load_wmt(s: Loader, sec: Section | None) -> WMTSource | None:
    if sec is None:
        return None
    human = sec.str("human")
    return sec.settings(WMTSource, xml=s.path_of(sec.str("xml", required=True), "wmt.xml"),
                        human=s.path_of(human, "wmt.human") if human else None)


def _load_europarl(s: Loader, sec: Section | None) -> EuroparlSource | None:
    if sec is None:
        return None
    translations = sec.str("translations")
    return sec.settings(EuroparlSource,
                        root=s.path_of(sec.str("root", required=True), "europarl.root", kind="directory"),
                        translations=s.expand(translations, "europarl.translations") if translations else None,
                        lang_systems=_str_map(sec, "lang_systems"))


def _load_collection(s: Loader, sec: Section | None, *, has_source: bool) -> CollectionConfig | None:
    """``collection:``: the reference side (``reference``, or ``english`` as older configs spell it) and its
    format, line ids, distractor documents. With a wmt:/europarl: source only ``distractors`` may be given."""
    if sec is None:
        return None
    key = "reference" if sec.has("reference") else "english"
    if sec.has("reference") and sec.has("english"):
        raise sec.err("english", "collection.reference and collection.english name the same thing (the reference "
                                 "side's documents); keep one")
    english = sec.str(key, required=not has_source)
    if english is not None and has_source:
        raise sec.err(key, "the wmt:/europarl: source gives the reference side; with it, collection: takes only "
                           "distractors")
    raw = sec.raw("distractors")
    if raw is not None and not isinstance(raw, list):
        raise sec.err("distractors", "expected a list of {file: DOCS} or {xml: WMT_XML, reference: A} entries")
    c = sec.settings(CollectionConfig, english=english, ids=sec.str("ids"))
    distractors = tuple(_distractor(s, item, f"collection.distractors[{i}]") for i, item in enumerate(raw or []))
    return replace(c, english=_input(s, english, f"collection.{key}", "docs") if english else None,
                   ids=s.path_of(c.ids, "collection.ids") if c.ids else None, distractors=distractors)


def _distractor(s: Loader, item: Any, w: str) -> DistractorSource:
    ds = Section(item, w, s)
    file_, xml, translations = ds.str("file"), ds.str("xml"), ds.str("translations")
    return ds.settings(DistractorSource, file=s.path_of(file_, f"{w}.file") if file_ else None,
                       xml=s.path_of(xml, f"{w}.xml") if xml else None,
                       translations=s.expand(translations, f"{w}.translations") if translations else None, where=w)


def _load_queries(s: Loader, sec: Section | None) -> QueriesConfig | None:
    if sec is None:
        return None
    key = "file" if "file" in sec.data else "files"
    listed = isinstance(sec.data.get(key), list)  # a single value is named without an index
    qfiles = sec.str_list("file") or sec.str_list("files")
    qfields = sec.str_list("fields", QueriesConfig.fields)
    queries = sec.settings(QueriesConfig, fields=qfields, file=tuple(
        _input(s, f, f"queries.{key}[{i}]" if listed or len(qfiles) > 1 else f"queries.{key}", "queries", qfields)
        for i, f in enumerate(qfiles)) or None)
    if (queries.file is None) == (queries.generate is None):
        raise UserError(f"{s.path}: queries: give either file: or generate: ({', '.join(QUERY_KINDS)})")
    return queries


def _load_relevance(s: Loader, sec: Section | None) -> RelevanceConfig | None:
    """``relevance: {qrels: FILE}`` or ``relevance: {pseudo: {top_k: K}}``."""
    if sec is None:
        return None
    qrels = sec.str("qrels")
    psec = sec.section("pseudo")
    top_k = None
    if psec is not None:
        top_k = psec.int("top_k", PSEUDO_TOP_K)
        psec.done()
    return sec.settings(RelevanceConfig, qrels=_input(s, qrels, "relevance.qrels", "qrels") if qrels else None,
                        pseudo_top_k=top_k)


def _load_retrieval(s: Loader, sec: Section | None) -> RetrievalSettings:
    if sec is None:
        return RetrievalSettings()
    stopwords = sec.str("stopwords")
    if stopwords and stopwords.strip().lower() not in STOPWORD_LISTS:
        stopwords = s.path_of(stopwords, "retrieval.stopwords")
    return sec.settings(RetrievalSettings, stopwords=stopwords)


def _load_ir(sec: Section | None) -> IRSettings:
    return IRSettings() if sec is None else sec.settings(IRSettings)


def _load_external(s: Loader, raw: Any) -> tuple[ExternalTable, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise UserError(f"{s.path}: external: expected a list of tables")
    return tuple(_external_table(s, Section(item, f"external[{i}]", s)) for i, item in enumerate(raw))


def _external_table(s: Loader, es: Section) -> ExternalTable:
    """An ``external:`` entry: its file resolved (format mtme: score files named by a pattern, every metric of
    them unless ``columns`` are given), ``key``/``system_key`` as the one-column ``match`` they stand for."""
    w = es.where
    fmt = es.setting(ExternalTable, "format")
    file_ = s.path_of(es.str("file", required=True), f"{w}.file", must_exist=fmt != "mtme")
    cols = es.raw("columns")
    if fmt == "mtme":
        names = {f.name for f in read_scores(file_)[1]}
        cols = {n: n for n in sorted(names)} if cols in (None, "all") else cols
    match = es.raw("match")
    key, system_key = es.str("key"), es.str("system_key")
    if match is None:
        match = {key or "system": system_key or "{name}"}
    docs = es.str("documents")
    return es.settings(ExternalTable, file=file_, format=fmt, columns={} if cols is None else cols, match=match,
                       documents=s.path_of(docs, f"{w}.documents") if docs else None, where=w)


def _load_correlation(s: Loader, sec: Section | None, seed: int) -> CorrelationSettings:
    if sec is None:
        return CorrelationSettings(seed=seed)
    given = {"round": sec.raw("round", {}) or {}}
    if not sec.has("seed"):
        given["seed"] = seed  # the config's top-level seed
    return sec.settings(CorrelationSettings, **given)


def _load_item_level(top: Section) -> ItemLevelSettings:
    """``item_level: false`` switches the item-level analysis off; a mapping sets it."""
    raw = top.data.get("item_level")
    if isinstance(raw, bool):
        top.raw("item_level")
        return ItemLevelSettings(enabled=raw)
    sec = top.section("item_level")
    return ItemLevelSettings() if sec is None else sec.settings(ItemLevelSettings)


def _load_analyses(s: Loader, sec: Section | None, *, has_mt: bool,
                   systems: list[str] | None) -> "AnalysesConfig | None":
    """``analyses: {favoritism: {systems: [S, U], metrics: [...], top: 10},
    frequency_buckets: {buckets: [10, 100, 1000], systems: all, beta: 1}}``; ``systems``: the
    names with MT output when known before the sources are read (else checked at run time)."""
    if sec is None:
        return None

    fb = sec.data.get("frequency_buckets")
    if isinstance(fb, dict):  # YAML shorthands: buckets as "10,100,1000", systems: all
        fb = dict(fb)
        if isinstance(fb.get("buckets"), str):
            fb["buckets"] = [int(x) if x.isdigit() else x for x in (y.strip() for y in fb["buckets"].split(",")) if x]
        if fb.get("systems") == "all":
            del fb["systems"]
        sec.data["frequency_buckets"] = fb
    out = sec.settings(AnalysesConfig)
    if not has_mt:
        raise UserError(f"{s.path}: analyses: needs the mt section (system hypotheses and references); "
                        "add mt: {refs: [...]} or remove analyses")
    if systems is not None:
        out.check_systems(str(s.path), systems)
    return out


def _check_query_translation(cfg: Config, p: Path) -> None:
    """``translate: queries``: each system's query translations (files, or the WMT file's headlines), one
    collection in its own language; ``queries:`` holds the human translations of the queries."""
    if not cfg.query_translation:
        for s in cfg.systems:
            if s.queries is not None:
                raise UserError(f"{p}: systems[{s.name}].queries: a system's query translations need translate: "
                                "queries at the top level; add it or remove the system's queries")
        return
    if cfg.europarl is not None:
        raise UserError(f"{p}: translate: queries works with a wmt: source or a collection: with per-system query "
                        "files, not with europarl:; remove translate or the europarl: section")
    if cfg.wmt is not None:
        if cfg.queries is None or cfg.queries.generate not in QT_QUERY_KINDS:
            raise UserError(f"{p}: queries.generate: translate: queries with a wmt: source takes each system's "
                            f"translation of a segment as its query: set queries.generate to "
                            f"{' or '.join(QT_QUERY_KINDS)}")
        if cfg.systems:
            raise UserError(f"{p}: systems[{cfg.systems[0].name}]: with translate: queries and a wmt: source the "
                            "systems come from the WMT file; remove systems")
        for i, d in enumerate(cfg.collection.distractors if cfg.collection is not None else ()):
            if d.translated or d.translations:
                raise UserError(f"{p}: collection.distractors[{i}]: with translate: queries no system translates "
                                "documents; give the distractors in the collection's language, without translated/"
                                "translations")
        return
    if cfg.collection is None or cfg.collection.english is None:
        raise UserError(f"{p}: collection.reference: translate: queries needs the one collection every system "
                        "searches (documents in their own language); add collection: {reference: DOCS}")
    if cfg.collection.distractors:
        raise UserError(f"{p}: collection.distractors: with translate: queries there is one collection; put the "
                        "extra documents into collection.reference")
    for s in cfg.systems:
        if s.docs is not None or s.hyp is not None:
            what = "docs" if s.docs is not None else "hyp"
            raise UserError(f"{p}: systems[{s.name}].{what}: with translate: queries a system gives only its "
                            "translations of the queries (queries: FILE); the collection is shared and MT "
                            f"metrics score the query translations; remove {what}")
        if s.queries is None:
            raise UserError(f"{p}: systems[{s.name}].queries: missing; with translate: queries every system needs "
                            "its translations of the queries (a TSV/JSONL/TREC file with the queries' ids)")
    if cfg.queries is None or cfg.queries.file is None:
        raise UserError(f"{p}: queries.file: translate: queries needs the human translations of the queries (the "
                        "reference side's queries, and the MT reference)")


def _check_consistency(cfg: Config, p: Path) -> None:
    _check_query_translation(cfg, p)
    if cfg.mt is not None and cfg.wmt is None and not cfg.query_translation:
        for s in cfg.systems:
            if s.hyp is None:
                raise UserError(f"{p}: systems[{s.name}].hyp: missing; the mt section needs a hypothesis file per system")
    if cfg.collection is not None and not cfg.query_translation:
        for s in cfg.systems:
            if s.docs is None:
                raise UserError(
                    f"{p}: systems[{s.name}].docs: missing; with a collection every system needs its translated documents"
                )
    if cfg.has_retrieval:
        if cfg.queries is None:
            raise UserError(f"{p}: queries: missing; retrieval needs queries (a file or generate: headline)")
        if cfg.relevance is None and cfg.queries.generate is None:
            raise UserError(f"{p}: relevance: missing; give qrels: FILE or pseudo: {{top_k: 100}}")
        if cfg.queries.generate is not None and cfg.wmt is None:
            raise UserError(
                f"{p}: queries.generate: generated queries need a wmt: source (documents split into segments); "
                "with a collection or europarl: source give queries.file and relevance"
            )
    n_sys = len(cfg.systems) + (1 if cfg.wmt else 0) + (1 if cfg.europarl else 0)
    if n_sys == 0:
        raise UserError(f"{p}: systems: no systems; list them or give a pattern")
    if cfg.wmt is None and cfg.europarl is None and len(cfg.systems) < 3:
        raise UserError(
            f"{p}: systems: {len(cfg.systems)} system(s); correlations need at least 3 systems — add more systems"
        )
    if cfg.mt is None and not cfg.external:
        if not cfg.has_retrieval:
            raise UserError(f"{p}: nothing to do; add an mt section, a collection, or external score tables")
    _check_round_names(cfg, p)


def _check_round_names(cfg: Config, p: Path) -> None:
    """Every ``correlation.round`` key names a score of the run (a misspelt key would round nothing)."""
    if not cfg.correlation.round:
        return
    if (cfg.wmt is not None and cfg.wmt.human) or any(t.format != "table" for t in cfg.external):
        return  # score names read from the data: checked when the scores are known

    known: set[str] = set()
    for spec in cfg.mt.metrics if cfg.mt else ():
        known.add(spec)
        with contextlib.suppress(UserError):
            known.add(metric_spec(spec).name)
    for spec in cfg.ir.measures if cfg.has_retrieval and cfg.ir is not None else ():
        known.add(spec)
        with contextlib.suppress(UserError):
            known.add(parse_measure(spec).name)
    for t in cfg.external:
        known.update(t.columns.values())
    unknown = [k for k in cfg.correlation.round if k not in known]
    if unknown:
        raise UserError(f"{p}: correlation.round.{unknown[0]}: no score of this run is called {unknown[0]!r}; "
                        f"use one of: {', '.join(sorted(known)) or 'none'}")
