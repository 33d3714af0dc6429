"""MT metric interface, declared parameters, the registry of parameterised names, and scoring helpers.

Every metric turns each segment into a row of *sufficient statistics* and computes a corpus
score from their column sums (``score_from_stats``), so bootstrap resampling and paired
significance tests resample statistics and never re-tokenise text (as sacrebleu does).

Canonical names (the result column keys): ``bleu``, ``chrf`` (β=2), ``chrf1``, ``chrf++``,
``ter``, ``bleu-sbp``, ``macrof1``, ``microf1``; any other parameter setting is written
``name:k=v,...`` with only non-default parameters, e.g. ``macrof:beta=2``. A metric is added
with one class and its ``@register(...)`` line; modules holding metrics are imported by
``clir_eval/mt/__init__.py``.
"""

from __future__ import annotations

import copy
import difflib
import functools
import itertools
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from .. import lazylibs
from ..errors import UserError
from ..io.files import iter_lines, read_lines
from ..limits import memory_bytes
from ..params import Param, format_spec, parse_params, parse_spec
from .tok13a import fast_13a

Refs = Sequence[Sequence[str]]

TOKENIZE = "13a"  # sacrebleu's default tokenizer: the default of mt.tokenize (MTSettings) and of the functions here
LOWERCASE = False  # case-sensitive scoring: the default of mt.lowercase (MTSettings) and of the functions here
_TOKENIZER_INSTANCES: dict[str, Any] = {}


@dataclass(frozen=True)
class MetricScore:
    """One corpus-level score with its reproducibility signature and metric-specific extras."""

    name: str
    score: float
    signature: str
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.score, "signature": self.signature, **self.extra}


def resampling_fields(extra: dict) -> list[str]:
    """``bs``/``ar``/``seed`` items popped from ``extra`` as signature fields, in sacrebleu's
    order and names (its significance tests write them right after ``nrefs``)."""
    return [f"{k}:{extra.pop(k)}" for k in ("bs", "ar", "seed") if k in extra]


def token_ids(lines: Sequence[str], tok, lowercase: bool, vocab: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """(token ids, tokens per line) of ``lines`` pre-processed as sacrebleu's BLEU does (lowercase
    if asked, ``tok`` on the right-stripped line, split on whitespace); new types are added to
    ``vocab`` in order of appearance."""
    ids: list[int] = []
    lens = np.empty(len(lines), dtype=np.int64)
    get = vocab.setdefault
    for i, line in enumerate(lines):
        if lowercase:
            line = line.lower()
        toks = tok(line.rstrip()).split()
        lens[i] = len(toks)
        ids.extend([get(t, len(vocab)) for t in toks])
    return np.asarray(ids, dtype=np.int64), lens


Encoded = tuple[tuple[np.ndarray, np.ndarray], list[tuple[np.ndarray, np.ndarray]], list[str]]
_ENCODED: dict[tuple, Encoded] = {}  # the last few (hypotheses, references) encoded: BLEU, MacroF, MicroF share them
_REF_SIDE: dict[tuple, tuple[np.ndarray, np.ndarray, list[str]]] = {}  # a reference stream's own numbering
_ENCODED_MAX = 2


def _remember(cache: dict, key: tuple, value):
    cache.pop(key, None)
    cache[key] = value  # most recently used last
    while len(cache) > _ENCODED_MAX:
        del cache[next(iter(cache))]
    return value


def _frozen(*arrays: np.ndarray) -> None:
    for a in arrays:
        a.flags.writeable = False


def encode(hyps: Sequence[str], refs: Refs, tok, lowercase: bool) -> Encoded:
    """((hypothesis ids, lengths), [(reference ids, lengths) per stream], types): what
    :func:`token_ids` gives on the hypotheses and then each reference stream with one vocabulary
    (types numbered in order of first appearance, hypotheses first), the same numbers.

    The last few results are kept (read-only arrays), so BLEU, MacroF and MicroF of one scoring
    tokenise and number the text once; each reference stream is numbered on its own once and
    renumbered per hypothesis set by its types (a loop over the reference's types, not its
    tokens), so scoring several systems against one reference numbers its tokens once."""
    key = (tok, lowercase, tuple(hyps), tuple(tuple(r) for r in refs))
    if key in _ENCODED:
        return _remember(_ENCODED, key, _ENCODED[key])
    vocab: dict[str, int] = {}
    hyp = token_ids(hyps, tok, lowercase, vocab)
    ref_enc = []
    for stream in key[3]:
        rkey = (tok, lowercase, stream)
        side = _REF_SIDE.get(rkey)
        if side is None:
            own: dict[str, int] = {}
            ids, lens = token_ids(stream, tok, lowercase, own)
            _frozen(ids, lens)
            side = (ids, lens, list(own))  # a dict keeps insertion order: types by own id
        own_ids, lens, types = _remember(_REF_SIDE, rkey, side)
        # the reference's types in order of first appearance: a type the vocabulary lacks gets
        # the next number exactly where token_ids, reading the reference's tokens, would add it
        renumber = np.fromiter((vocab.setdefault(t, len(vocab)) for t in types), dtype=np.int64, count=len(types))
        ref_enc.append((renumber[own_ids], lens))
    _frozen(*hyp, *(a for enc in ref_enc for a in enc))
    return _remember(_ENCODED, key, (hyp, ref_enc, list(vocab)))


def tokenizer(name: str):
    """One shared sacrebleu tokenizer instance per name, so its LRU cache is shared by every
    metric of a run (BLEU, BLEU-SBP, MacroF, MicroF tokenise each line once); ``13a`` with its
    punctuation rule as a translation table (:mod:`.tok13a`, the same output)."""
    if name not in _TOKENIZER_INSTANCES:
        sacrebleu = lazylibs.sacrebleu()
        tokenizers = tuple(sacrebleu.BLEU.TOKENIZERS)  # its public names for its word tokenizers
        if name not in tokenizers:
            raise UserError(
                f"unknown tokenizer {name!r}; choose one of {', '.join(tokenizers)} (sacrebleu's)"
            )
        try:
            tok = sacrebleu.BLEU(tokenize=name).tokenizer
            if name == "13a":
                tok = fast_13a(tok)
            _TOKENIZER_INSTANCES[name] = tok
        except (ImportError, RuntimeError) as e:
            raise UserError(f"tokenizer {name!r} is not usable here ({e}); install its extra dependency or choose another") from None
    return _TOKENIZER_INSTANCES[name]


def check_streams(hyps: Sequence[str], refs: Refs) -> None:
    """Hypotheses are a list of segments; refs a list of streams, each aligned with them."""
    if isinstance(hyps, str):
        raise TypeError("hyps must be a sequence of segments, not a single string")
    if not refs or isinstance(refs, str) or isinstance(refs[0], str):
        raise TypeError("refs must be a list of reference streams (refs[i] is a list[str] aligned with hyps)")
    for i, stream in enumerate(refs):
        if len(stream) != len(hyps):
            raise UserError(
                f"reference stream {i + 1} has {len(stream)} segments but the hypotheses have {len(hyps)}; "
                "every reference must be line-aligned with the hypotheses"
            )


def totals(stats) -> np.ndarray:
    """Column sums of a (segments x k) matrix (dense or sparse); a 1-D vector is returned as is."""
    if lazylibs.scipy_sparse().issparse(stats):
        return np.asarray(stats.sum(axis=0)).ravel()
    arr = np.asarray(stats)
    return arr.sum(axis=0) if arr.ndim == 2 else arr


class MTMetric:
    """A metric with fixed parameters: per-segment statistics -> corpus score.

    ``segment_stats(hyps, refs)`` returns an (n_segments x k) matrix (numpy; a
    ``scipy.sparse.csr_array`` for MacroF/MicroF whose k grows with the vocabulary);
    ``score_from_stats`` takes those rows (summing them) or their column sums.
    """

    base: str = ""
    higher_is_better: bool = True
    uses_source: bool = False  # segment_stats(hyps, refs, sources=...) also reads the source segments
    # scores single items (a document, a segment) from that item's own statistics row
    # (``item_scores``); metrics that need a model or a corpus do not
    item_level: bool = False

    def __init__(self, name: str, params: dict[str, Any], tokenize: str, lowercase: bool):
        self.name = name
        self.params = params
        self.tokenize = tokenize
        self.lowercase = lowercase

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} tok={self.tokenize} lc={self.lowercase}>"

    def stats_key(self) -> tuple:
        """Metrics with equal keys produce identical statistics (so they can be shared)."""
        return (self.name, self.tokenize, self.lowercase)

    def segment_stats(self, hyps: Sequence[str], refs: Refs):
        raise NotImplementedError

    # peak bytes per character of one segment (its hypothesis and references together) while its statistics
    # are counted, as measured by scripts/bench_memory_bounds.py with a margin; 0: not modelled (neural
    # metrics: their model's memory)
    segment_bytes: float = 0.0

    def segment_memory(self, hyp: str, refs: Sequence[str]) -> float:
        """Estimated peak bytes of counting one segment's statistics (beyond the process's base)."""
        return self.segment_bytes * (len(hyp) + sum(len(r) for r in refs))

    def paired_stats(self, hyps_a: Sequence[str], hyps_b: Sequence[str], refs: Refs):
        """Statistics of two systems on the same references with compatible columns."""
        return self.segment_stats(hyps_a, refs), self.segment_stats(hyps_b, refs)

    streamable: bool = False  # statistics of any chunks of segments sum to the corpus totals

    def accumulator(self) -> "Accumulator | None":
        """Something that takes the corpus in chunks (``add(hyps, refs)``) and gives the column
        sums of the statistics (``totals()``) without keeping the text; None when the metric
        cannot score that way."""
        return Accumulator(self) if self.streamable else None

    def score_from_stats(self, stats) -> float:
        return self.score_totals(totals(stats))[0]

    def score_totals(self, totals: np.ndarray) -> tuple[float, dict]:
        """(corpus score, extras) from column sums of the statistics."""
        raise NotImplementedError

    def signature(self, nrefs: int, **extra) -> str:
        """Reproducibility signature; ``extra`` adds fields such as ``bs=1000, seed=12345``."""
        raise NotImplementedError

    def item_scores(self, stats) -> np.ndarray:
        """One score per row of ``stats`` (an item: a document or a segment), each from its own
        row, as the corpus score of that one item."""
        n = stats.shape[0]
        return np.array([self.score_from_stats(stats[i:i + 1]) for i in range(n)], dtype=float)

    def item_signature(self, nrefs: int) -> str:
        """Signature of :meth:`item_scores` (the corpus signature unless the item score differs)."""
        return self.signature(nrefs)

    def score_stats(self, stats, nrefs: int) -> MetricScore:
        """The corpus score from already computed segment statistics."""
        score, extra = self.score_totals(totals(stats))
        return MetricScore(self.name, float(score), self.signature(nrefs), extra)

    def corpus_score(self, hyps: Sequence[str], refs: Refs) -> MetricScore:
        return self.score_stats(self.segment_stats(hyps, refs), len(refs))


class Accumulator:
    """Column sums of a fixed-width metric's statistics, chunk by chunk."""

    def __init__(self, metric: MTMetric):
        self.metric = metric
        self._total: np.ndarray | None = None

    def add(self, hyps: Sequence[str], refs: Refs) -> None:
        t = totals(self.metric.segment_stats(hyps, refs))
        self._total = t.copy() if self._total is None else self._total + t

    def totals(self) -> np.ndarray:
        return self._total if self._total is not None else totals(self.metric.segment_stats([], [[]]))


# --------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class MetricInfo:
    cls: type
    params: tuple[Param, ...]
    help: str


_REGISTRY: dict[str, MetricInfo] = {}
# alias -> (base, parameters); an alias is also the canonical name of exactly that setting.
_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {}
KNOWN_METRICS: dict[str, str] = {}


def register(name: str, params: Sequence[Param], help: str,
             aliases: dict[str, tuple[dict[str, Any], str]] | None = None):
    """Class decorator: register a metric under ``name`` with its declared parameters and
    aliases (``{alias: (preset parameters, help)}``)."""

    def deco(cls: type) -> type:
        if name in _REGISTRY or name in _ALIASES:
            raise ValueError(f"metric {name!r} registered twice")
        cls.base = name
        _REGISTRY[name] = MetricInfo(cls, tuple(params), help)
        KNOWN_METRICS[name] = help
        for alias, (preset, ahelp) in (aliases or {}).items():
            _ALIASES[alias] = (name, dict(preset))
            KNOWN_METRICS[alias] = ahelp
        return cls

    return deco


def _defaults(base: str) -> dict[str, Any]:
    return {p.name: p.default for p in _REGISTRY[base].params}


def _canonical(base: str, values: dict[str, Any]) -> str:
    for alias, (abase, aparams) in _ALIASES.items():
        if abase == base and values == {**_defaults(base), **aparams}:
            return alias
    return format_spec(base, {k: v for k, v in values.items() if v != _defaults(base)[k]})


def load_metric(spec: str, tokenize: str = TOKENIZE, lowercase: bool = LOWERCASE) -> MTMetric:
    """Build a metric from a spec such as ``bleu``, ``chrf1``, ``chrf:beta=1``, ``macrof:beta=2``,
    ``microf:k=0``. Raises UserError for unknown names or bad parameters."""
    return metric_spec(spec, tokenize, lowercase).build()


def _parse_metric(spec: str, tokenize: str, lowercase: bool) -> tuple[type, str, dict[str, Any]]:
    """(the metric's class, its canonical name, its parameter values) of ``spec``; UserError when it is not valid."""
    name, raw = parse_spec(spec, what="metric")
    key = name.lower()
    if key in _ALIASES:
        base, preset = _ALIASES[key]
    elif key in _REGISTRY:
        base, preset = key, {}
    else:
        close = difflib.get_close_matches(key, [*_REGISTRY, *_ALIASES], n=1, cutoff=0.6)
        where = f" in {spec!r}" if spec != name else ""
        raise UserError(f"unknown metric {name!r}{where}" + (f" (did you mean {close[0]!r}?)" if close else "")
                        + f"; known metrics: {', '.join(KNOWN_METRICS)}")
    info = _REGISTRY[base]
    values = {**_defaults(base), **preset, **parse_params(raw, info.params, spec=spec, what="metric", owner=base)}
    if lowercase not in (True, False):
        raise UserError(f"lowercase must be true or false, got {lowercase!r}")
    tokenizer(tokenize)  # validate early
    return info.cls, _canonical(base, values), values


@dataclass(frozen=True)
class MetricSpec:
    """A metric spec parsed and checked once (:func:`metric_spec`): its canonical name and what the
    stages ask of it without building the metric again; :meth:`build` makes the metric (from the parsed
    parameters: the spec is not read again). The config's records hold their metrics' specs
    (``MTSettings.specs``), and the stages build the metrics from them."""

    spec: str
    tokenize: str
    lowercase: bool
    name: str
    kind: type  # the metric's class (e.g. a NeuralMetric subclass)
    higher_is_better: bool
    uses_source: bool
    item_level: bool
    params: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def build(self) -> MTMetric:
        """A new instance of the metric (metrics hold runtime state, e.g. a neural metric's device)."""
        return self.kind(self.name, copy.deepcopy(dict(self.params)), self.tokenize, self.lowercase)


@functools.lru_cache(maxsize=None)
def metric_spec(spec: str, tokenize: str = TOKENIZE, lowercase: bool = LOWERCASE) -> MetricSpec:
    """``spec`` parsed and checked as :func:`load_metric` checks it, once per process and distinct
    (spec, tokenize, lowercase): the settings records, the config checks and the item level ask
    this instead of building the metric again."""
    cls, name, values = _parse_metric(spec, tokenize, lowercase)
    params = copy.deepcopy(values)
    m = cls(name, values, tokenize, bool(lowercase))
    return MetricSpec(spec, tokenize, bool(lowercase), m.name, type(m), m.higher_is_better, m.uses_source,
                      m.item_level, params)


def build_metrics(specs: Iterable[MetricSpec]) -> list[MTMetric]:
    """The metrics of parsed specs, duplicates (same canonical name) dropped, order kept."""
    out: dict[str, MTMetric] = {}
    for s in specs:
        if s.name not in out:
            out[s.name] = s.build()
    if not out:
        raise UserError(f"no metrics given; choose from {', '.join(KNOWN_METRICS)}")
    return list(out.values())


def lower_is_better(metrics: Sequence[MTMetric]) -> list[str]:
    """The names of the metrics whose scores fall as quality rises (each declares ``higher_is_better``)."""
    return [m.name for m in metrics if not m.higher_is_better]


def load_metrics(specs: Sequence[str], tokenize: str = TOKENIZE, lowercase: bool = LOWERCASE) -> list[MTMetric]:
    """Metrics for a list of specs, duplicates (same canonical name) dropped, order kept."""
    return build_metrics(metric_spec(spec, tokenize, lowercase) for spec in specs)


BASE_MEMORY = 200 * 2**20  # a scoring process before its statistics: interpreter, numpy, sacrebleu


def check_segment_memory(metrics: Sequence[MTMetric], hyps: Sequence[str], refs: Refs, first: int = 1) -> None:
    """Refuse, before counting, a segment whose statistics some metric is estimated
    (:meth:`MTMetric.segment_memory`) to need more memory for than :func:`clir_eval.limits.memory_bytes`
    allows (a single line of tens of MiB: chrF's n-grams of it); ``first``: the number of ``hyps[0]``
    (its line in the hypothesis file)."""
    modelled = [m for m in metrics if m.segment_bytes or type(m).segment_memory is not MTMetric.segment_memory]
    if not modelled or not len(hyps):
        return
    sizes = np.fromiter((len(h) for h in hyps), dtype=np.int64, count=len(hyps))
    for stream in refs:
        sizes += np.fromiter((len(r) for r in stream), dtype=np.int64, count=len(hyps))
    i = int(np.argmax(sizes))
    bound = memory_bytes()
    for m in modelled:
        need = BASE_MEMORY + m.segment_memory(hyps[i], [stream[i] for stream in refs])
        if need > bound:
            raise UserError(
                f"segment {first + i} (line {first + i} of the hypotheses) has {sizes[i]} characters with its "
                f"reference(s); {m.name} would need about {need / 2**30:.2f} GiB to count its statistics, over the "
                f"bound of {bound / 2**30:.2f} GiB; split the line (e.g. into sentences), score without {m.name}, "
                "or raise the bound with CLIR_EVAL_MAX_MEMORY_BYTES"
            )


def collect_stats(metrics: Sequence[MTMetric], hyps: Sequence[str], refs: Refs,
                  sources: Sequence[str] | None = None) -> dict[str, Any]:
    """Segment statistics per metric name, computed once per ``stats_key`` (MacroF and
    MicroF of any β/k share a single tokenisation and counting pass); ``sources`` (the source
    segments, line-aligned) go to the metrics that read them (``uses_source``)."""
    check_segment_memory(metrics, hyps, refs)
    memo: dict[tuple, Any] = {}
    out: dict[str, Any] = {}
    for m in metrics:
        key = m.stats_key()
        if key not in memo:
            memo[key] = m.segment_stats(hyps, refs, sources=sources) if m.uses_source else m.segment_stats(hyps, refs)
        out[m.name] = memo[key]
    return out


def score_metrics(specs: Sequence[str], hyps: Sequence[str], refs: Refs,
                  tokenize: str = TOKENIZE, lowercase: bool = LOWERCASE, sources: Sequence[str] | None = None,
                  setup: Callable[[list[MTMetric]], None] | None = None) -> dict[str, MetricScore]:
    """Corpus scores keyed by canonical metric name; ``setup`` may configure the loaded metrics
    (e.g. the neural metrics' device and segment store) before they score."""
    metrics = load_metrics(specs, tokenize, lowercase)
    if setup is not None:
        setup(metrics)
    stats = collect_stats(metrics, hyps, refs, sources=sources)
    return {m.name: m.score_stats(stats[m.name], len(refs)) for m in metrics}


def read_segments(hyp_path, ref_paths: Sequence) -> tuple[list[str], list[list[str]]]:
    """Read a hypothesis file and one or more line-aligned reference files (plain or .gz,
    strict UTF-8). Errors name the file (and line, for bad bytes) and both line counts."""
    if not ref_paths:
        raise UserError("no reference given; pass at least one --ref FILE")
    hyps = read_lines(hyp_path)
    if not hyps:
        raise UserError(f"{hyp_path} is empty; the hypothesis file needs one segment per line")
    refs = []
    for rp in ref_paths:
        lines = read_lines(rp)
        if not lines:
            raise UserError(f"{rp} is empty; the reference file needs one segment per line")
        if len(lines) != len(hyps):
            raise UserError(
                f"line count mismatch: {hyp_path} has {len(hyps)} lines but {rp} has {len(lines)}; "
                "hypothesis and reference files must be line-aligned"
            )
        refs.append(lines)
    return hyps, refs


def iter_segment_chunks(hyp_path, ref_paths: Sequence, size: int = 2_000) -> Iterator[tuple[list[str], list[list[str]]]]:
    """(hypotheses, [references...]) in chunks of ``size`` lines, the files read side by side
    (never whole); the same checks and messages as :func:`read_segments`."""
    if not ref_paths:
        raise UserError("no reference given; pass at least one --ref FILE")
    counts = [0] * (1 + len(ref_paths))

    def counted(k: int, path) -> Iterator[str]:
        for _, line in iter_lines(path):
            counts[k] += 1
            yield line

    streams = [counted(k, p) for k, p in enumerate([hyp_path, *ref_paths])]
    while True:
        rows = list(itertools.islice(zip(*streams), size))
        if len(rows) < size:  # one file ended: the others must end there too
            for st in streams:
                for _ in st:
                    pass
            bad = next((k for k in range(1, len(counts)) if counts[k] != counts[0]), None)
            if counts[0] == 0:
                raise UserError(f"{hyp_path} is empty; the hypothesis file needs one segment per line")
            if bad is not None:
                what = "is empty; the reference file needs one segment per line" if counts[bad] == 0 else None
                if what:
                    raise UserError(f"{ref_paths[bad - 1]} {what}")
                raise UserError(
                    f"line count mismatch: {hyp_path} has {counts[0]} lines but {ref_paths[bad - 1]} has {counts[bad]}; "
                    "hypothesis and reference files must be line-aligned"
                )
        if rows:
            cols = list(zip(*rows))
            yield list(cols[0]), [list(c) for c in cols[1:]]
        if len(rows) < size:
            return


def stream_scores(metrics: Sequence[MTMetric], chunks, nrefs: int) -> dict[str, MetricScore] | None:
    """Corpus scores from chunks of segments, keeping only each metric's summed statistics
    (memory bounded by the statistics, not the text); None when a metric cannot stream."""
    accs: dict[tuple, Any] = {}
    for m in metrics:
        if m.stats_key() not in accs:
            acc = m.accumulator()
            if acc is None:
                return None
            accs[m.stats_key()] = acc

    sacre_log = logging.getLogger("sacrebleu")  # its data warnings (e.g. tokenized periods): once, not once a chunk
    level = sacre_log.level
    try:
        first = 1
        for k, (hyps, refs) in enumerate(chunks):
            check_segment_memory(metrics, hyps, refs, first)
            first += len(hyps)
            for acc in accs.values():
                acc.add(hyps, refs)
            if k == 0:
                sacre_log.setLevel(logging.ERROR)
    finally:
        sacre_log.setLevel(level)
    return {m.name: m.score_stats(accs[m.stats_key()].totals(), nrefs) for m in metrics}


def read_source(path, n: int, hyp_path) -> list[str]:
    """The source segments of a file line-aligned with a hypothesis file of ``n`` lines."""
    lines = read_lines(path)
    if len(lines) != n:
        raise UserError(
            f"line count mismatch: {hyp_path} has {n} lines but the source {path} has {len(lines)}; "
            "the source file must be line-aligned with the hypotheses"
        )
    return lines
