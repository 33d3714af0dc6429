"""BM25 retrieval over a document collection: two backends with identical results, five variants.

- ``rank_bm25``: the reference, the ``rank-bm25`` package (BM25Okapi, BM25L, BM25Plus).
- ``sparse`` (default): numpy over the streaming, shardable inverted index of
  :mod:`clir_eval.retrieval.index`, reproducing rank-bm25 0.2.2 bit for bit. At query time
  each query token's posting weights are computed from (tf, document length, idf) with
  rank-bm25's exact floating-point expression and added, token by token in query order
  (duplicates counted, unknown tokens skipped -- rank-bm25 adds 0 for them), into a dense
  score vector per shard: the same sequence of additions rank-bm25 performs per document.

Variants: ``okapi``, ``l``, ``plus`` (rank-bm25's classes and defaults k1=1.5, b=0.75) and
Lucene's BM25 (``BM25Similarity`` of Lucene >= 8, as in Anserini/pyserini; defaults k1=0.9,
b=0.4): idf = log(1 + (N - df + 0.5) / (df + 0.5)), term score = idf * tf / (tf + k1 * (1 -
b + b * dl / avgdl)), no (k1 + 1) factor. ``lucene`` uses exact document lengths in double
precision, equal to bm25s ``method="lucene"``. ``lucene-byte`` reproduces what Lucene
itself computes: document lengths through Lucene's one-byte norm (``SmallFloat.intToByte4``,
exact up to 39 terms, 4 significant bits above), single-precision arithmetic in
``BM25Scorer``'s order (``weight - weight / (1 + tf * normInverse)``), N and avgdl over the
documents with at least one term (Lucene's ``docCount``), a repeated query term as a boost
(Anserini's bag-of-words queries), and per-term scores summed in double and rounded to float;
it equals Lucene 8.7 in float32 on the test fixture.

Exactness details copied from rank-bm25 0.2.2: the vocabulary is in first-occurrence order;
Okapi idf = ``math.log(N - n + 0.5) - math.log(n + 0.5)``; negative idfs become
``epsilon * mean idf`` with the mean a left-to-right float sum over the vocabulary;
avgdl = total tokens / N (Python int division).

Rankings: trec_eval order (score descending, then document id descending), top ``depth``;
documents with score <= 0 (non-matching) or NaN (rank-bm25 computes 0/0 for an empty
document when b=1; the sparse backend reproduces that) are not returned, so a run is a
prefix of the full ranking. A sharded index ranks each shard and merges the shards'
candidates in the same order, so its runs equal the unsharded index's.

API: ``build_index(docs, analyzer, backend, variant, k1, b, epsilon, delta, shards, jobs)``
-> index with ``search(queries, depth)``, ``get_scores(tokens)``, ``signature``;
``index_signature(docs, analyzer, backend, params)`` is the cache key (collection checksum,
analyzer, backend, BM25 settings, rank-bm25 version). ``save_index(index, dir)`` writes plain
``.npy`` arrays and JSON with SHA-256 checksums and a format version (no pickle; see
:mod:`clir_eval.retrieval.index`); ``load_index(dir, signature=None)`` verifies every file and
raises ``IndexCorrupt`` (a ``UserError``) on any mismatch, or ``UserError`` when the index was
built with another signature; ``build_or_load(dir, docs, analyzer, ...)`` does both.
"""

from __future__ import annotations

import math
from importlib.metadata import version
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from .. import lazylibs
from ..errors import UserError
from ..io.files import PathLike
from ..io.readers import Documents, DocumentStream
from ..io.trec import Run
from ..settings import default
from .analysis import Analyzer, get_analyzer
from .index import (
    IndexCorrupt,
    InvertedIndex,
    build_inverted_index,
    build_streamed,
    load_inverted_index,
    read_index_header,
)
from .settings import BACKENDS, LUCENE_VARIANTS, IndexSettings, RetrievalSettings

RANK_BM25_VERSION = version("rank-bm25")


def check_backend(backend: str) -> str:
    key = (backend or "").strip().lower().replace("-", "_")
    if key not in BACKENDS:
        raise UserError(f"unknown BM25 backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    return key


def index_signature(docs: Documents, analyzer: Analyzer, backend: str, params: IndexSettings) -> str:
    """The cache key of an index: collection checksum, analyzer, backend, BM25 settings."""
    return signature_of(docs.checksum, len(docs), analyzer, backend, params)


def signature_of(checksum: str, n_docs: int, analyzer: Analyzer, backend: str, params: IndexSettings) -> str:
    """:func:`index_signature` from the collection's :attr:`Documents.checksum` and size."""
    return (
        f"{params.signature}|backend:{check_backend(backend)}|rank_bm25:{RANK_BM25_VERSION}"
        f"|docs:{checksum[:16]}|ndocs:{n_docs}|{analyzer.signature}"
    )


def _top_k(scores: np.ndarray, depth: int, id_rank: np.ndarray) -> np.ndarray:
    """Indices of the ``depth`` best positive scores, score desc then docid desc."""
    cand = np.flatnonzero(scores > 0)
    if cand.size > depth:
        s = scores[cand]
        kth = np.partition(s, cand.size - depth)[cand.size - depth]
        cand = cand[s >= kth]  # keeps every document tied with the depth-th score
    order = np.lexsort((id_rank[cand], scores[cand]))[::-1]
    return cand[order[:depth]]


def _merge_top(cands: list[tuple[np.ndarray, np.ndarray, np.ndarray]], depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Global top ``depth`` of per-shard candidates (doc index, score, id rank), trec_eval order."""
    idx = np.concatenate([c[0] for c in cands])
    sc = np.concatenate([c[1] for c in cands])
    rk = np.concatenate([c[2] for c in cands])
    order = np.lexsort((rk, sc))[::-1][:depth]
    return idx[order], sc[order]


class _Index:
    """Shared search logic; subclasses provide :meth:`get_scores` (and may rank by shard)."""

    backend: str

    def __init__(self, docids: Sequence[str], analyzer: Analyzer, params: IndexSettings, signature: str):
        self.docids = list(docids)
        self.analyzer = analyzer
        self.params = params
        self.signature = signature
        self._id_rank = np.empty(len(self.docids), dtype=np.int64)
        self._id_rank[sorted(range(len(self.docids)), key=self.docids.__getitem__)] = np.arange(len(self.docids))

    def __len__(self) -> int:
        return len(self.docids)

    def get_scores(self, tokens: Sequence[str]) -> np.ndarray:  # pragma: no cover - abstract
        """Scores of all documents for an analyzed query (as rank-bm25's ``get_scores``)."""
        raise NotImplementedError

    def _rank(self, tokens: list[str], depth: int) -> tuple[np.ndarray, np.ndarray]:
        scores = self.get_scores(tokens)
        top = _top_k(scores, depth, self._id_rank)
        return top, scores[top]

    def search(self, queries: Mapping[str, str], depth: int = default(RetrievalSettings, "depth"),
               tag: str = "clir-eval") -> Run:
        """Rank documents for each query; an empty query gets an empty ranking."""
        if isinstance(depth, bool) or not isinstance(depth, int) or depth <= 0:
            raise UserError(f"depth={depth!r} must be a positive integer")
        ranking: dict[str, list[tuple[str, float]]] = {}
        ids = self.docids
        for qid, text in queries.items():
            if not isinstance(text, str):
                raise UserError(f"query {qid!r}: text must be a string")
            top, scores = self._rank(self.analyzer.tokenize(text), depth)
            ranking[qid] = list(zip([ids[i] for i in top.tolist()], scores.tolist()))
        return Run(ranking, tag)

    def _meta(self) -> dict:
        return {
            "backend": self.backend,
            "signature": self.signature,
            "params": self.params.bm25,
            "analyzer": self.analyzer.spec(),
            "analyzer_signature": self.analyzer.signature,
        }

    def save(self, directory: PathLike) -> None:
        """Write the index to ``directory`` (verified format of :mod:`clir_eval.retrieval.index`)."""
        self.inverted.save(directory, self._meta())


def lucene_doclen(dl: np.ndarray) -> np.ndarray:
    """Document lengths as Lucene stores them: ``byte4ToInt(intToByte4(dl))`` (SmallFloat)."""
    dl = np.asarray(dl, dtype=np.int64)
    free = 24  # NUM_FREE_VALUES = 255 - longToInt4(Integer.MAX_VALUE)
    out = dl.copy()
    big = dl >= free
    v = dl[big] - free
    nbits = np.zeros(v.shape, dtype=np.int64)
    nz = v > 0
    nbits[nz] = np.floor(np.log2(v[nz])).astype(np.int64) + 1
    fix = nz & (np.left_shift(1, np.maximum(nbits - 1, 0)) > v)  # guard float log2 rounding
    nbits[fix] -= 1
    fix = nz & (np.left_shift(1, nbits) <= v)
    nbits[fix] += 1
    shift = np.maximum(nbits - 4, 0)
    kept = np.where(nbits < 4, v, np.left_shift(np.right_shift(v, shift), shift))
    out[big] = free + kept
    return out


class SparseBM25(_Index):
    """BM25 over an :class:`~clir_eval.retrieval.index.InvertedIndex`; see the module docstring."""

    backend = "sparse"

    def __init__(self, docids, analyzer, params, signature, inverted: InvertedIndex):
        super().__init__(docids, analyzer, params, signature)
        self.inverted = inverted
        self._prepared = False

    @classmethod
    def build(cls, docs: Documents, analyzer: Analyzer, params: IndexSettings, signature: str,
              shards: int = 1, jobs: int = 1) -> "SparseBM25":  # fmt: skip
        inv = build_inverted_index(docs.ids, docs.texts, analyzer, shards=shards, jobs=jobs)
        return cls(docs.ids, analyzer, params, signature, inv)

    def _prepare(self) -> None:
        """Per-document normalisers and per-term idf for the variant (once per index)."""
        if self._prepared:
            return
        p, inv = self.params, self.inverted
        n_docs, total, dl = inv.n_docs, inv.total_tokens, inv.dl
        avgdl = total / n_docs
        k1, b = p.k1, p.b
        self._base = None
        self._nan_rows = np.flatnonzero(dl == 0) if b == 1.0 and p.variant not in LUCENE_VARIANTS else np.zeros(0, np.int64)
        with np.errstate(divide="ignore", invalid="ignore"):
            if p.variant == "l":
                self._norm = 1 - b + b * dl / avgdl
            elif p.variant == "lucene":
                self._norm = k1 * ((1 - b) + b * dl / avgdl)
            elif p.variant == "lucene-byte":  # Lucene's docCount: documents with at least one term
                f32 = np.float32
                n_docs = max(int(np.count_nonzero(dl)), 1)
                avg32 = f32(total / n_docs)
                self._norm = f32(1) / (f32(k1) * ((f32(1) - f32(b)) + f32(b) * lucene_doclen(dl).astype(f32) / avg32))
            else:
                self._norm = k1 * (1 - b + b * dl / avgdl) if total else np.zeros(n_docs)
        idf = _idf(p, n_docs, inv.df)
        self._idf = idf
        if p.variant == "plus":
            self._base = [x * (p.bm25_delta + 0.0) for x in idf]
        self._prepared = True

    def _weights(self, j: int, rows: np.ndarray, tf_raw: np.ndarray, start: int, boost: int = 1) -> np.ndarray:
        """Posting weights of term ``j`` (rank-bm25's expression, evaluated in its order)."""
        p, idf = self.params, self._idf[j]
        norm = self._norm[start + rows] if start else self._norm[rows]
        k1 = p.k1
        with np.errstate(divide="ignore", invalid="ignore"):
            if p.variant == "lucene-byte":
                weight = np.float32(boost) * np.float32(idf)
                return weight - weight / (np.float32(1) + tf_raw.astype(np.float32) * norm)
            tf = tf_raw.astype(np.float64)
            if p.variant == "okapi":
                return idf * (tf * (k1 + 1) / (tf + norm))
            if p.variant == "l":
                ctd = tf / norm
                return idf * tf * (k1 + 1) * (ctd + p.bm25_delta) / (k1 + ctd + p.bm25_delta)
            if p.variant == "plus":
                return idf * (p.bm25_delta + (tf * (k1 + 1)) / (norm + tf))
            return idf * (tf / (norm + tf))  # lucene (as bm25s: idf * tfc)

    def _term_ids(self, tokens: Sequence[str]) -> list[int]:
        vocab = self.inverted.vocab
        return [j for j in map(vocab.get, tokens) if j is not None]

    def _shard_scores(self, shard, tokens: Sequence[str]) -> np.ndarray:
        self._prepare()
        if self.params.variant == "lucene-byte":
            return self._shard_scores_lucene(shard, tokens)
        scores = np.zeros(shard.n_docs)
        cache: dict[int, np.ndarray] = {}
        base = self._base
        for j in self._term_ids(tokens):
            lo, hi = shard.indptr[j], shard.indptr[j + 1]
            r = shard.rows[lo:hi]
            w = cache.get(j)
            if w is None:
                w = cache[j] = self._weights(j, r, shard.tf[lo:hi], shard.start)
            if base is None:
                scores[r] += w
            else:  # BM25Plus also adds idf*delta to documents without the term
                tmp = scores[r] + w
                scores += base[j]
                scores[r] = tmp
        if len(tokens) and self._nan_rows.size:
            nan = self._nan_rows[(self._nan_rows >= shard.start) & (self._nan_rows < shard.start + shard.n_docs)]
            scores[nan - shard.start] = np.nan
        return scores

    def _shard_scores_lucene(self, shard, tokens: Sequence[str]) -> np.ndarray:
        counts: dict[int, int] = {}
        for j in self._term_ids(tokens):
            counts[j] = counts.get(j, 0) + 1
        acc = np.zeros(shard.n_docs)  # Lucene sums the clauses' float scores in double
        for j, boost in counts.items():
            lo, hi = shard.indptr[j], shard.indptr[j + 1]
            r = shard.rows[lo:hi]
            acc[r] += self._weights(j, r, shard.tf[lo:hi], shard.start, boost)
        return acc.astype(np.float32).astype(np.float64)

    def get_scores(self, tokens: Sequence[str]) -> np.ndarray:
        return np.concatenate([self._shard_scores(s, tokens) for s in self.inverted.shards])

    def _rank(self, tokens: list[str], depth: int) -> tuple[np.ndarray, np.ndarray]:
        cands = []
        for s in self.inverted.shards:
            scores = self._shard_scores(s, tokens)
            rank = self._id_rank[s.start : s.start + s.n_docs]
            top = _top_k(scores, depth, rank)
            cands.append((top + s.start, scores[top], rank[top]))
        return _merge_top(cands, depth)


def _idf(params: IndexSettings, n_docs: int, df: np.ndarray) -> list[float]:
    """rank-bm25's (or Lucene's) idf per term in vocabulary order (same math.log calls, same float
    sum); each distinct document frequency is computed once (the same float for the same df)."""
    if params.variant in LUCENE_VARIANTS:
        f = lambda n: math.log(1 + (n_docs - n + 0.5) / (n + 0.5))  # noqa: E731
    elif params.variant == "l":
        f = lambda n: math.log(n_docs + 1) - math.log(n + 0.5)  # noqa: E731
    elif params.variant == "plus":
        f = lambda n: math.log((n_docs + 1) / n)  # noqa: E731
    else:
        f = lambda n: math.log(n_docs - n + 0.5) - math.log(n + 0.5)  # noqa: E731
    df = np.asarray(df, dtype=np.int64)
    if not len(df):
        return []
    values = np.flatnonzero(np.bincount(df))  # the distinct dfs (0 <= df <= n_docs)
    table = np.zeros(int(values[-1]) + 1)
    table[values] = [f(n) for n in values.tolist()]
    idf = table[df]
    if params.variant in LUCENE_VARIANTS or params.variant in ("l", "plus"):
        return idf.tolist()
    idf_sum = float(np.cumsum(idf)[-1])  # cumsum adds left to right, as rank-bm25's loop
    eps = params.epsilon * (idf_sum / len(idf))
    return np.where(idf < 0, eps, idf).tolist()


class RankBM25Index(_Index):
    """The reference backend: the rank-bm25 package on the analyzer's tokens."""

    backend = "rank_bm25"

    def __init__(self, docids, analyzer, params, signature, model, inverted: InvertedIndex):
        super().__init__(docids, analyzer, params, signature)
        self.model = model  # None when the collection has no tokens at all
        self.inverted = inverted  # what save() writes; load() rebuilds the model from it

    @classmethod
    def build(cls, docs: Documents, analyzer: Analyzer, params: IndexSettings, signature: str,
              shards: int = 1, jobs: int = 1) -> "RankBM25Index":  # fmt: skip
        corpus = [analyzer.tokenize(t) for t in docs.texts]
        inv = build_inverted_index(docs.ids, docs.texts, analyzer, shards=shards, jobs=jobs)
        return cls(docs.ids, analyzer, params, signature, cls._model(params, corpus), inv)

    @staticmethod
    def _model(params: IndexSettings, corpus: list[list[str]]):
        rank_bm25 = lazylibs.rank_bm25()
        if not any(corpus):  # rank-bm25 divides by zero on a collection without any token
            return None
        if params.variant == "okapi":
            return rank_bm25.BM25Okapi(corpus, k1=params.k1, b=params.b, epsilon=params.epsilon)
        if params.variant == "l":
            return rank_bm25.BM25L(corpus, k1=params.k1, b=params.b, delta=params.bm25_delta)
        return rank_bm25.BM25Plus(corpus, k1=params.k1, b=params.b, delta=params.bm25_delta)

    @classmethod
    def from_inverted(cls, docids, analyzer, params, signature, inv: InvertedIndex) -> "RankBM25Index":
        """Rebuild the rank-bm25 model from saved postings: each document's terms in global
        first-occurrence order, repeated tf times (rank-bm25 sees the same vocabulary order)."""
        sp = lazylibs.scipy_sparse()
        terms = np.array(inv.terms, dtype=object)
        corpus = []
        for s in inv.shards:
            m = sp.csc_matrix((s.tf, s.rows, s.indptr), shape=(s.n_docs, len(inv.terms))).tocsr()
            m.sort_indices()
            for k in range(s.n_docs):
                lo, hi = m.indptr[k], m.indptr[k + 1]
                corpus.append(list(np.repeat(terms[m.indices[lo:hi]], m.data[lo:hi].astype(np.int64))))
        return cls(docids, analyzer, params, signature, cls._model(params, corpus), inv)

    def get_scores(self, tokens: Sequence[str]) -> np.ndarray:
        if self.model is None:
            return np.zeros(len(self.docids))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(self.model.get_scores(list(tokens)), dtype=np.float64)


BM25Index = SparseBM25 | RankBM25Index


def build_index(docs: Documents, analyzer: Analyzer, backend: str = "sparse", variant: str = "okapi",
                k1: float | None = None, b: float | None = None, epsilon: float = 0.25, delta: float | None = None,
                shards: int = 1, jobs: int = 1) -> BM25Index:  # fmt: skip
    """Index ``docs`` with ``analyzer``; backend sparse|rank_bm25, variant okapi|l|plus|lucene|lucene-byte.

    ``shards`` document ranges are indexed separately (``jobs`` processes) and searched with
    the same scores and tie order as one index.
    """
    params = IndexSettings(backend=check_backend(backend), analyzer=analyzer.name, stopwords=analyzer.stopwords,
                           stem=analyzer.stem, language=analyzer.language, variant=(variant or "").strip().lower(), k1=k1, b=b, epsilon=epsilon,
                           delta=delta)  # fmt: skip
    return build_with(docs, analyzer, params, shards=shards, jobs=jobs)


def streams(backend: str, shards: int = 1, jobs: int = 1) -> bool:
    """Whether a build with these settings reads its collection as a stream
    (:class:`~clir_eval.io.readers.DocumentStream`: the sparse backend in one process and one
    shard) rather than holding every text."""
    return check_backend(backend) == "sparse" and type(shards) is int and type(jobs) is int and shards == jobs == 1


def build_with(docs: Documents | DocumentStream, analyzer: Analyzer, params: IndexSettings, shards: int = 1,
               jobs: int = 1) -> BM25Index:  # fmt: skip
    """:func:`build_index` from the index settings (``analyzer`` built from them). ``docs``
    may be a :class:`DocumentStream`: read batch by batch where :func:`streams` says so,
    else read whole first."""
    backend = params.backend
    if isinstance(docs, DocumentStream):
        if streams(backend, shards, jobs):
            inv = build_streamed(docs, analyzer)
            return SparseBM25(inv.docids, analyzer, params, index_signature(docs, analyzer, backend, params), inv)
        docs = docs.read()
    if not len(docs):
        raise UserError("cannot index an empty collection")
    if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1 or isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise UserError(f"shards={shards!r} and jobs={jobs!r} must be positive integers")
    sig = index_signature(docs, analyzer, backend, params)
    cls = SparseBM25 if backend == "sparse" else RankBM25Index
    return cls.build(docs, analyzer, params, sig, shards=shards, jobs=jobs)


def load_index(directory: PathLike, signature: str | None = None) -> BM25Index:
    """Load and verify a saved index; with ``signature``, refuse (UserError) an index built
    differently. An altered, truncated or foreign directory raises ``IndexCorrupt``."""
    d = Path(directory)
    meta = read_index_header(d).get("meta")
    if not isinstance(meta, dict):
        raise IndexCorrupt(f"index in {d} has no settings (index.json 'meta'); delete {d} and rebuild")
    if signature is not None and meta.get("signature") != signature:
        raise UserError(f"index in {d} was built with different settings or documents; rebuild it")
    try:
        spec, backend = meta["analyzer"], check_backend(meta["backend"])
        analyzer = get_analyzer(spec["name"], spec["stopwords"], spec["stem"], spec.get("language", "en"))
        params = IndexSettings(backend=backend, analyzer=analyzer.name, stopwords=analyzer.stopwords, stem=analyzer.stem,
                               language=analyzer.language, **meta["params"])
    except (KeyError, TypeError, UserError) as e:
        raise IndexCorrupt(f"index in {d} has unusable settings in index.json ({e}); delete {d} and rebuild") from None
    if analyzer.signature != meta.get("analyzer_signature"):
        raise UserError(
            f"index in {d} was built with analyzer {meta.get('analyzer_signature')!r}, "
            f"this installation gives {analyzer.signature!r}; rebuild it"
        )
    inv, _ = load_inverted_index(d)
    cls = SparseBM25 if backend == "sparse" else RankBM25Index
    if cls is SparseBM25:
        return SparseBM25(inv.docids, analyzer, params, str(meta["signature"]), inv)
    return RankBM25Index.from_inverted(inv.docids, analyzer, params, str(meta["signature"]), inv)


def save_index(index: BM25Index, directory: PathLike) -> None:
    """Write ``index`` to ``directory`` in the verified format (``index.json`` last)."""
    index.save(directory)


def build_or_load(directory: PathLike | None, docs: Documents | DocumentStream, analyzer: Analyzer, backend: str = "sparse",
                  shards: int = 1, jobs: int = 1, **params) -> tuple[BM25Index, bool]:  # fmt: skip
    """Reuse the index saved in ``directory`` if its signature matches, else build (and save).

    A directory whose index was built with other settings is rebuilt; one that is corrupt
    (altered, truncated, not an index) raises ``IndexCorrupt`` and is never used.
    Returns (index, loaded_from_cache).
    """
    backend = check_backend(backend)
    p = IndexSettings(backend=backend, analyzer=analyzer.name, stopwords=analyzer.stopwords, stem=analyzer.stem,
                      language=analyzer.language, **{"variant": "okapi", **params})
    if directory is not None:
        d = Path(directory)
        if (d / "index.json").is_file():
            if isinstance(docs, DocumentStream) and docs.checksum is None:
                docs.scan()  # the collection's checksum first (its errors before the index's)
            sig = index_signature(docs, analyzer, backend, p)
            meta = read_index_header(d).get("meta")
            if isinstance(meta, dict) and meta.get("signature") == sig:
                return load_index(d, sig), True
    idx = build_with(docs, analyzer, p, shards=shards, jobs=jobs)
    if directory is not None:
        idx.save(directory)
    return idx, False
