"""Queries generated from parallel documents, for CLIR without human topics.

Each generator turns English reference documents (``{docid: [segment, ...]}``, segment 1
being a news headline) into known-item queries: query ``qid == docid``, the one relevant
document is that document. So that the query is not trivially contained in its target,
the generator also says which segments to leave out of *every* document of the collection
(same indices in every translation, since WMT segments align):

- ``headline``: query = segment 1 (the headline); documents = segments 2..n (the body).
- ``first-sentence``: query = segment 2 (the lead, the first body sentence); documents =
  segments 3..n. The headline is dropped too: it usually paraphrases the lead and would
  make the match a near-duplicate instead of a retrieval.
- ``keywords``: query = the ``k`` highest-idf terms of the whole document (idf over the
  given documents); nothing is dropped — rare content words are exactly what MT must
  carry over for retrieval. Ties: lower df, then higher in-document tf, then earlier
  first occurrence.

Documents whose query text or remaining text would be empty are not used as queries
(listed in ``skipped`` with the reason) but stay in the collection. ``headline`` and
``first-sentence`` assume news structure: documents the caller marks as having no headline
(``no_headline``: other domains, test suites) are skipped with that reason and keep all
their segments. With ``limit``, that
many of the usable documents are sampled with ``random.Random(seed)`` (file order kept).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from ..errors import UserError
from ..io.trec import Qrels
from ..limits import QUERY_SEED
from ..params import coerce, parse_spec
from .settings import QUERY_KINDS
from .wmt import build_collection

Analyzer = Callable[[str], Sequence[str]]

_WORD = re.compile(r"\w+")


def keyword_terms(text: str) -> list[str]:
    """Default keyword analyzer: lowercased ``\\w+`` tokens, pure digit strings removed.

    No stemming: the chosen terms become query text that the retrieval analyzer
    processes again.
    """
    return [t for t in _WORD.findall(text.lower()) if not t.isdigit()]


keyword_terms.signature = "lc-word-nodigits"  # type: ignore[attr-defined]


@dataclass(frozen=True)
class GeneratedQueries:
    """Generated queries with their known-item qrels and the collection's segment drops."""

    kind: str
    queries: dict[str, str]
    """qid (= the docid of its target) -> query text, in document order."""
    qrels: Qrels
    """qid -> {docid: 1}."""
    drop: dict[str, frozenset[int]]
    """docid -> 0-based segment indices to leave out, for every input document."""
    skipped: dict[str, str]
    """docid -> why it is not a query (it stays in the collection)."""
    signature: str

    def by_group(self, groups: Mapping[str, str | None], default: str = "(none)") -> dict[str, dict]:
        """Per group (e.g. domain) of the input documents: ``{"documents", "queries",
        "skipped": {reason: count}}``, groups in first-seen document order."""
        out: dict[str, dict] = {}
        for d in self.drop:
            g = groups.get(d) or default
            row = out.setdefault(g, {"documents": 0, "queries": 0, "skipped": {}})
            row["documents"] += 1
            if d in self.queries:
                row["queries"] += 1
            elif d in self.skipped:
                reason = self.skipped[d]
                row["skipped"][reason] = row["skipped"].get(reason, 0) + 1
        return out

    def collection(self, docs: Mapping[str, Sequence[str]], **kwargs) -> list[tuple[str, str]]:
        """The collection ``[(docid, text)]`` of a translation with this generator's drops applied."""
        return build_collection(docs, drop=self.drop, **kwargs)


def parse_query_spec(spec: str) -> tuple[str, dict]:
    """``"keywords:k=8,seed=1,limit=50"`` -> ("keywords", {"k": 8, "seed": 1, "limit": 50})."""
    kind, raw = parse_spec(spec, what="query generator")
    _check_kind(kind)
    types = {"k": int, "seed": int, "limit": int}
    kwargs = {}
    for key, value in raw.items():
        if key not in types or (key == "k" and kind != "keywords"):
            allowed = ", ".join(k for k in types if kind == "keywords" or k != "k")
            raise UserError(f"unknown parameter {key!r} for query generator {kind!r}; allowed: {allowed}")
        kwargs[key] = coerce(value, types[key], key=key, spec=spec)
    return kind, kwargs


def generate_queries(
    kind: str,
    english_docs: Mapping[str, Sequence[str]],
    *,
    k: int = 5,
    seed: int = QUERY_SEED,
    limit: int | None = None,
    analyzer: Analyzer | None = None,
    no_headline: Mapping[str, str] | None = None,
) -> GeneratedQueries:
    """Generate known-item queries of ``kind`` (see the module docstring) from English documents.

    ``k`` and ``analyzer`` (str -> terms; default :func:`keyword_terms`) apply to
    ``keywords``; ``seed`` only to the sampling done when ``limit`` is given;
    ``no_headline`` (docid -> reason) only to ``headline`` and ``first-sentence``.
    """
    _check_kind(kind)
    if not english_docs:
        raise UserError(f"no documents to generate {kind} queries from")
    for d in english_docs:
        if not d or any(c.isspace() for c in d):
            raise UserError(f"document id {d!r} cannot be a query id (empty or contains whitespace)")
    if limit is not None and limit < 1:
        raise UserError(f"query limit must be a positive integer, got {limit}")
    params = ""
    if kind == "keywords":
        if k < 1:
            raise UserError(f"keywords needs k >= 1 terms per query, got {k}")
        analyzer = analyzer or keyword_terms
        candidates, skipped, drop = _keywords(english_docs, k, analyzer)
        aname = getattr(analyzer, "signature", getattr(analyzer, "__name__", type(analyzer).__name__))
        params = f"|k:{k}|analyzer:{aname}|idf:ln(N/df)|ties:df,-tf,first-pos"
    else:
        n_drop = 1 if kind == "headline" else 2
        candidates, skipped, drop = _leading_segment(english_docs, n_drop, no_headline or {})
        if no_headline:
            params = f"|no-headline:{sum(1 for d in english_docs if d in no_headline)}"
    usable = list(candidates)
    if limit is not None and limit < len(usable):
        chosen = set(random.Random(seed).sample(usable, limit))
        usable = [d for d in usable if d in chosen]
    queries = {d: candidates[d] for d in usable}
    qrels = Qrels({d: {d: 1} for d in usable})
    signature = (
        f"querygen:{kind}|docs:{len(english_docs)}|queries:{len(queries)}|skipped:{len(skipped)}"
        f"|limit:{limit if limit is not None else 'none'}|seed:{seed}{params}"
    )
    return GeneratedQueries(kind, queries, qrels, drop, skipped, signature)


def _check_kind(kind: str) -> None:
    if kind not in QUERY_KINDS:
        raise UserError(f"unknown query generator {kind!r}; choose one of {', '.join(QUERY_KINDS)}")


def _leading_segment(docs: Mapping[str, Sequence[str]], n_drop: int, no_headline: Mapping[str, str]):
    """Query = segment ``n_drop`` (1-based); documents lose segments 1..n_drop, except those
    without a headline, which are not queries and keep every segment."""
    dropped = frozenset(range(n_drop))
    what = "headline" if n_drop == 1 else "first body sentence (segment 2)"
    queries: dict[str, str] = {}
    skipped: dict[str, str] = {}
    drop: dict[str, frozenset[int]] = {}
    for d, segs in docs.items():
        if d in no_headline:
            skipped[d] = no_headline[d]
            drop[d] = frozenset()
            continue
        drop[d] = dropped
        query = " ".join(segs[n_drop - 1].split()) if len(segs) >= n_drop else ""
        rest = any(s.strip() for s in segs[n_drop:])
        if not query:
            skipped[d] = f"empty {what}"
        elif not rest:
            skipped[d] = f"no text left after segment {n_drop}"
        else:
            queries[d] = query
    return queries, skipped, drop


def _keywords(docs: Mapping[str, Sequence[str]], k: int, analyzer: Analyzer):
    terms = {d: list(analyzer(" ".join(segs))) for d, segs in docs.items()}
    df: Counter[str] = Counter()
    for toks in terms.values():
        df.update(set(toks))
    queries: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for d, toks in terms.items():
        if not toks:
            skipped[d] = "no terms"
            continue
        tf = Counter(toks)
        first: dict[str, int] = {}
        for i, t in enumerate(toks):
            first.setdefault(t, i)
        best = sorted(tf, key=lambda t: (df[t], -tf[t], first[t]))[:k]  # = idf desc
        queries[d] = " ".join(best)
    return queries, skipped, {d: frozenset() for d in docs}
