"""Embedded demo data: a generated bilingual collection, queries, qrels and simulated MT systems.

Nothing here is third-party text. The English side is built from a small hand-written list of
function words plus content words assembled from syllables, with Zipfian frequencies and a
topic structure (each topic owns a set of rare content words). The "foreign" side (language
code ``xx``) maps every English word to a generated foreign word and reorders each phrase
(content words reversed, function words after them, like postpositions).

The MT systems are simulations of the errors that matter for CLIR, each with its own *profile*
(:data:`PROFILES`): rare content words a system does not know (rarer words are unknown more
often; an unknown word is copied from the source, deleted or replaced by a synonym,
consistently for every occurrence), token-level slips, function-word errors, phrases left in
source order, adjacent-word swaps, dropped sentences, truncated and empty documents. Systems
that are fluent but lose rare words score well on BLEU and badly on MacroF1 and retrieval;
systems that garble order and function words but keep rare words do the opposite, so BLEU and
MacroF1 can disagree as in Gowda et al. (2021).

Two MT test sets are written, both line-aligned with one sentence per line:

* ``mt/`` — held-out generated documents that are *not* in the collection (the Europarl-style
  setup: MT scored on one text, retrieval on another, same systems and vocabulary);
* ``mt-in/`` — the collection's own sentences in document order ("In" domain). A sentence a
  system dropped (or lost by truncation / an empty document) is an empty line.

Everything derives from ``seed`` through independent named streams (``random.Random`` seeded
with a string), so the same seed and parameters give byte-identical files.
"""

from __future__ import annotations

import json
import math
import random
from bisect import bisect
from dataclasses import asdict, dataclass
from itertools import accumulate
from pathlib import Path

from ..errors import UserError
from ..io.files import atomic_write, write_json
from ..limits import RUN_SEED

DEMO_VERSION = "2"
SOURCE_LANG = "xx"
RARITY_EXP = 1.0
QUERY_WORD_RANKS = 20

# Common English function words, most frequent first (hand-written list, not a corpus).
FUNCTION_WORDS = (
    "the of and to a in is that for it was on with as by at be this from or are an not but "
    "had has have were which they their its we will can all one would been there so if more "
    "no out up about into than them some could these other over only then also after most"
).split()

_EN_ONSETS = ("b c d f g h k l m n p r s t v w br cl cr dr fl gr pl pr sh st tr th ch sp bl gl").split()
_EN_VOWELS = ("a e i o u a e i o u ea ou ai oo").split()
_EN_CODAS = ("- - - - - - n r s t l m nd st ck ng rt").split()
_EN_SUFFIXES = ("- - - - - - - - - ing er ion ly ment ness ed al").split()

_XX_ONSETS = ("z q x j kv dz ts zr xr qu zv y").split()
_XX_VOWELS = ("a o u y a o u aa ei").split()
_XX_CODAS = ("- - - - - k z q x rr").split()
_XX_SUFFIXES = ("- - - - - ak uz ij").split()


@dataclass(frozen=True)
class Profile:
    """Error rates of one simulated MT system (all probabilities).

    ``oov_base + oov_rare * rarity**2`` is the chance that the system does not know a content
    word (``rarity`` in [0, 1]: 0 = most frequent content word, 1 = rarest); an unknown word is
    copied / deleted / replaced by a synonym in the proportions ``oov_split``, at every
    occurrence. ``tok_*`` are per-token slips on known content words. ``func_err``: a function
    word is replaced (half) or deleted (half); ``func_ins``: a spurious function word is inserted
    after a phrase. ``src_order``: a phrase keeps the source order; ``swap``: adjacent output
    words are swapped. ``drop_sent``: a sentence is dropped; ``trunc``: a document keeps only
    its first 30-70% sentences; ``empty``: the document's translation is empty.
    """

    oov_base: float = 0.0
    oov_rare: float = 0.0
    oov_split: tuple[float, float, float] = (0.5, 0.2, 0.3)
    tok_copy: float = 0.0
    tok_del: float = 0.0
    tok_syn: float = 0.0
    func_err: float = 0.0
    func_ins: float = 0.0
    src_order: float = 0.0
    swap: float = 0.0
    drop_sent: float = 0.0
    trunc: float = 0.0
    empty: float = 0.0


# Two families between a strong and a very weak system: "literal" systems keep rare words but
# garble function words (low BLEU, chrF and MicroF1; good retrieval) and "fluent" systems write
# clean sentences but lose rare words (high BLEU; worse retrieval). Every metric ranks the ends
# alike; only a metric that weighs rare words (MacroF1) also orders the two families as
# retrieval does, which is the demo's clear answer. Tests check the measured rare-word
# preservation against expected_rare_kept().
PROFILES: dict[str, Profile] = {
    "strong": Profile(oov_base=0.002, oov_rare=0.01, tok_copy=0.002, tok_del=0.002, tok_syn=0.002,
                      func_err=0.02, func_ins=0.01, src_order=0.02, swap=0.01, drop_sent=0.003),
    "literal": Profile(oov_base=0.003, oov_rare=0.04, oov_split=(0.8, 0.1, 0.1), func_err=0.6, func_ins=0.4,
                       src_order=0.05, swap=0.03, drop_sent=0.005),
    "truncating": Profile(oov_base=0.02, oov_rare=0.30, tok_syn=0.01, func_err=0.03, func_ins=0.01,
                          src_order=0.04, swap=0.02, drop_sent=0.03, trunc=0.06, empty=0.01),
    "medium": Profile(oov_base=0.01, oov_rare=0.06, tok_syn=0.005, func_err=0.6, func_ins=0.4, src_order=0.08,
                      swap=0.04, drop_sent=0.01),
    "paraphraser": Profile(oov_base=0.01, oov_rare=0.15, oov_split=(0.05, 0.05, 0.9), tok_syn=0.03,
                           func_err=0.01, func_ins=0.005, src_order=0.01, swap=0.005, drop_sent=0.01),
    "deleter": Profile(oov_base=0.03, oov_rare=0.45, oov_split=(0.0, 1.0, 0.0), tok_del=0.01,
                       func_err=0.01, func_ins=0.005, src_order=0.01, swap=0.005, drop_sent=0.01),
    "fluent-oov": Profile(oov_base=0.02, oov_rare=0.90, oov_split=(0.6, 0.2, 0.2), tok_syn=0.005,
                          func_err=0.005, func_ins=0.005, src_order=0.01, swap=0.005, drop_sent=0.003),
    "copier": Profile(oov_base=0.06, oov_rare=0.70, oov_split=(1.0, 0.0, 0.0), tok_copy=0.02, func_err=0.02,
                      func_ins=0.01, src_order=0.03, swap=0.01, drop_sent=0.01),
    "weak": Profile(oov_base=0.01, oov_rare=0.10, tok_copy=0.002, tok_del=0.002, tok_syn=0.002, func_err=0.6,
                    func_ins=0.4, src_order=0.05, swap=0.03, drop_sent=0.02, trunc=0.01, empty=0.005),
    "very-weak": Profile(oov_base=0.30, oov_rare=0.60, tok_copy=0.05, tok_del=0.05, tok_syn=0.05,
                         func_err=0.25, func_ins=0.10, src_order=0.50, swap=0.15, drop_sent=0.10,
                         trunc=0.10, empty=0.03),
    "word-by-word": Profile(oov_base=0.01, oov_rare=0.18, tok_syn=0.003, func_err=0.6, func_ins=0.4,
                            src_order=0.05, swap=0.03, drop_sent=0.01),
    "smooth-oov": Profile(oov_base=0.02, oov_rare=0.75, oov_split=(0.3, 0.3, 0.4), tok_syn=0.005,
                          func_err=0.005, func_ins=0.005, src_order=0.01, swap=0.005, drop_sent=0.005),
}


def _rng(seed: int, stream: str) -> random.Random:
    """An independent, reproducible stream per purpose (str seeds hash with SHA-512)."""
    return random.Random(f"clir-eval-demo:{seed}:{stream}")


def _make_words(r: random.Random, n: int, parts, taken: set[str]) -> list[str]:
    onsets, vowels, codas, suffixes = parts
    out: list[str] = []
    while len(out) < n:
        k = r.choice((1, 2, 2, 2, 2, 3))
        w = "".join(r.choice(onsets) + r.choice(vowels) + r.choice(codas) for _ in range(k))
        w = (w + r.choice(suffixes)).replace("-", "")
        if len(w) < 4 or w in taken:
            continue
        taken.add(w)
        out.append(w)
    return out


def _zipf_cum(n: int, s: float, q: float = 2.7) -> list[float]:
    return list(accumulate(1.0 / (i + q) ** s for i in range(n)))


class _Lexicon:
    """Word ids: function words, background content words, topic words; their synonyms and
    foreign forms; sampling tables and rarity."""

    def __init__(self, seed: int, n_topics: int, n_background: int, words_per_topic: int):
        r = _rng(seed, "vocab")
        taken = set(FUNCTION_WORDS)
        en = (_EN_ONSETS, _EN_VOWELS, _EN_CODAS, _EN_SUFFIXES)
        self.n_func = len(FUNCTION_WORDS)
        self.func_ids = list(range(self.n_func))
        n_content = n_background + n_topics * words_per_topic
        content = _make_words(r, n_content, en, taken)
        self.words = list(FUNCTION_WORDS) + content
        self.synonyms = [""] * self.n_func + _make_words(r, n_content, en, taken)
        xx = (_XX_ONSETS, _XX_VOWELS, _XX_CODAS, _XX_SUFFIXES)
        self.foreign = _make_words(r, len(self.words), xx, taken)
        self.background = list(range(self.n_func, self.n_func + n_background))
        start = self.n_func + n_background
        self.topics = [list(range(start + t * words_per_topic, start + (t + 1) * words_per_topic))
                       for t in range(n_topics)]
        self.func_cum = _zipf_cum(self.n_func, 1.0, 1.5)
        self.bg_cum = _zipf_cum(n_background, 1.05)
        self.topic_cum = _zipf_cum(words_per_topic, 0.8, 1.0)
        self.rarity: dict[int, float] = {}
        # Shared across systems: a word one system does not know is likelier unknown to a
        # weaker one too (as with real MT), which keeps the quality order stable across seeds.
        dr = _rng(seed, "difficulty")
        self.difficulty = [dr.random() for _ in self.words]

    def set_rarity(self, counts: dict[int, int]) -> None:
        """Rarity in [0, 1] of every content word from its collection frequency rank."""
        content = range(self.n_func, len(self.words))
        order = sorted(content, key=lambda w: (-counts.get(w, 0), w))
        n = max(len(order) - 1, 1)
        self.rarity = {w: i / n for i, w in enumerate(order)}


def _pick(r: random.Random, items: list[int], cum: list[float]) -> int:
    return items[bisect(cum, r.random() * cum[-1])]


# A sentence is a list of phrases; a phrase is (function word ids, content word ids).
Phrase = tuple[list[int], list[int]]


def _gen_doc(r: random.Random, lex: _Lexicon, topic: int, second: int) -> list[list[Phrase]]:
    sentences = []
    for _ in range(r.randint(3, 10)):
        phrases = []
        for _ in range(r.randint(2, 6)):
            nf = r.choice((0, 1, 1, 1, 2))
            funcs = [_pick(r, lex.func_ids, lex.func_cum) for _ in range(nf)]
            conts = []
            for _ in range(r.choice((1, 1, 2))):
                u = r.random()
                if u < 0.28:
                    conts.append(_pick(r, lex.topics[topic], lex.topic_cum))
                elif u < 0.31:
                    conts.append(_pick(r, lex.topics[second], lex.topic_cum))
                else:
                    conts.append(_pick(r, lex.background, lex.bg_cum))
            phrases.append((funcs, conts))
        sentences.append(phrases)
    return sentences


def _render(words: list[str]) -> str:
    if not words:
        return ""
    return words[0][:1].upper() + words[0][1:] + (" " + " ".join(words[1:]) if len(words) > 1 else "") + "."


def _english(lex: _Lexicon, sent: list[Phrase]) -> list[str]:
    return [lex.words[w] for f, c in sent for w in f + c]


def _foreign(lex: _Lexicon, sent: list[Phrase]) -> list[str]:
    return [lex.foreign[w] for f, c in sent for w in c[::-1] + f]


class _System:
    """One simulated MT system: a per-type lexicon decision plus per-token noise."""

    def __init__(self, name: str, profile: Profile, lex: _Lexicon, seed: int):
        self.name, self.p, self.lex = name, profile, lex
        self.r = _rng(seed, f"system:{name}")
        lr = _rng(seed, f"lexicon:{name}")
        c, d, _s = profile.oov_split
        self.state: dict[int, str] = {}
        for w, rar in sorted(lex.rarity.items()):
            if lex.difficulty[w] < min(0.95, profile.oov_base + profile.oov_rare * rar ** RARITY_EXP):
                u = lr.random() * sum(profile.oov_split)
                self.state[w] = "copy" if u < c else "del" if u < c + d else "syn"
        self.counts = {"content": 0, "copy": 0, "del": 0, "syn": 0, "func": 0, "func_err": 0,
                       "sentences": 0, "sent_dropped": 0, "docs": 0, "docs_truncated": 0,
                       "docs_empty": 0}

    def _sentence(self, sent: list[Phrase]) -> list[str]:
        """One sentence's output tokens. The generator's draws, in order: per function word one (and
        two more on an error), per content word without a type decision one, then the phrase's order
        and insertion draws; last the adjacent swaps. (The counts are kept in locals and added once.)"""
        p, lex, cnt, state = self.p, self.lex, self.counts, self.state
        rand = self.r.random
        words, foreign, synonyms = lex.words, lex.foreign, lex.synonyms
        func_ids, func_cum = lex.func_ids, lex.func_cum
        func_err, src_order, func_ins, swap = p.func_err, p.src_order, p.func_ins, p.swap
        t_copy = p.tok_copy
        t_del = t_copy + p.tok_del
        t_syn = t_del + p.tok_syn
        n_func = n_err = n_content = n_copy = n_del = n_syn = 0
        out: list[str] = []
        for funcs, conts in sent:
            fo = []
            for w in funcs:
                n_func += 1
                if rand() < func_err:
                    n_err += 1
                    if rand() < 0.5:
                        fo.append(words[func_ids[bisect(func_cum, rand() * func_cum[-1])]])
                else:
                    fo.append(words[w])
            co = []
            for w in conts:
                n_content += 1
                st = state.get(w)
                if st is None:
                    u = rand()
                    if u >= t_syn:
                        co.append(words[w])
                        continue
                    st = "copy" if u < t_copy else "del" if u < t_del else "syn"
                if st == "copy":
                    n_copy += 1
                    co.append(foreign[w])
                elif st == "del":
                    n_del += 1
                else:
                    n_syn += 1
                    co.append(synonyms[w])
            if rand() < src_order:
                co.reverse()
                out.extend(co)
                out.extend(fo)
            else:
                out.extend(fo)
                out.extend(co)
            if rand() < func_ins:
                out.append(words[func_ids[bisect(func_cum, rand() * func_cum[-1])]])
        cnt["func"] += n_func
        cnt["func_err"] += n_err
        cnt["content"] += n_content
        cnt["copy"] += n_copy
        cnt["del"] += n_del
        cnt["syn"] += n_syn
        i, last = 0, len(out) - 1
        while i < last:
            if rand() < swap:
                out[i], out[i + 1] = out[i + 1], out[i]
                i += 1
            i += 1
        return out

    def translate(self, doc: list[list[Phrase]]) -> list[str]:
        """One output line per source sentence ("" where dropped, truncated or empty)."""
        p, r, cnt = self.p, self.r, self.counts
        cnt["docs"] += 1
        cnt["sentences"] += len(doc)
        if r.random() < p.empty:
            cnt["docs_empty"] += 1
            cnt["sent_dropped"] += len(doc)
            return [""] * len(doc)
        keep = len(doc)
        if r.random() < p.trunc:
            cnt["docs_truncated"] += 1
            keep = max(1, math.ceil(len(doc) * r.uniform(0.3, 0.7)))
        lines = []
        for i, sent in enumerate(doc):
            if i >= keep or r.random() < p.drop_sent:
                cnt["sent_dropped"] += 1
                lines.append("")
            else:
                lines.append(_render(self._sentence(sent)))
        return lines

    def rates(self) -> dict[str, float]:
        """Realised error rates over everything this system translated."""
        c = self.counts

        def ratio(a: str, b: str) -> float:
            return round(c[a] / c[b], 4) if c[b] else 0.0

        return {"content_copied": ratio("copy", "content"), "content_deleted": ratio("del", "content"),
                "content_synonym": ratio("syn", "content"), "function_errors": ratio("func_err", "func"),
                "sentences_dropped": ratio("sent_dropped", "sentences"),
                "docs_truncated": ratio("docs_truncated", "docs"), "docs_empty": ratio("docs_empty", "docs"),
                "unknown_content_types": round(len(self.state) / max(len(self.lex.rarity), 1), 4)}


def expected_rare_kept(profile: Profile, rarity: float = 0.9) -> float:
    """Expected fraction of a content word of the given rarity that survives intact in
    the translation of a kept sentence (ignores sentence/document loss)."""
    oov = min(0.95, profile.oov_base + profile.oov_rare * rarity ** RARITY_EXP)
    return (1 - oov) * (1 - profile.tok_copy - profile.tok_del - profile.tok_syn)


def system_names(n_systems: int = len(PROFILES)) -> list[str]:
    """Names of the first ``n_systems`` simulated systems, in generation order."""
    if not 1 <= n_systems <= len(PROFILES):
        raise UserError(f"n_systems={n_systems}: the demo simulates 1..{len(PROFILES)} systems; "
                        f"choose a value in that range")
    return list(PROFILES)[:n_systems]


def _write_lines(path: Path, lines) -> Path:
    with atomic_write(path) as fh:
        for line in lines:
            fh.write(line + "\n")
    return path


def _write_jsonl(path: Path, records) -> Path:
    return _write_lines(path, (json.dumps(rec, ensure_ascii=False) for rec in records))


def generate_demo(out_dir, *, seed: int = RUN_SEED, n_docs: int = 400, n_queries: int = 60,
                  n_systems: int = len(PROFILES), n_topics: int | None = None, n_mt_docs: int = 100) -> dict[str, Path]:
    """Write the demo collection, queries, qrels, MT test sets and system outputs under ``out_dir``.

    Returns the paths: ``english``, ``source`` (JSONL ``{"id", "text"}``), ``systems_dir``
    (``<name>.jsonl`` each), ``queries`` (``qid<TAB>text``), ``qrels`` (TREC), ``mt_dir`` /
    ``mt_ref`` / ``mt_src`` (held-out MT test set: ``ref.en.txt``, ``src.xx.txt``,
    ``<name>.txt``), ``mt_in_dir`` / ``mt_in_ref`` / ``mt_in_src`` (the collection's own
    sentences) and ``manifest`` (seed, parameters, per-system error rates, files).
    """
    for name, value, low in (("n_docs", n_docs, 20), ("n_queries", n_queries, 1), ("n_mt_docs", n_mt_docs, 1)):
        if not isinstance(value, int) or value < low:
            raise UserError(f"{name}={value!r}: must be an integer >= {low}")
    names = system_names(n_systems)
    if n_topics is None:
        n_topics = min(60, max(30, n_docs // 10), n_docs // 2)
    if not 2 <= n_topics <= n_docs // 2:
        raise UserError(f"n_topics={n_topics}: must be between 2 and n_docs/2 ({n_docs // 2})")
    n_background, words_per_topic = 1500, 30
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    lex = _Lexicon(seed, n_topics, n_background, words_per_topic)

    # Collection: every topic gets at least two documents, the rest are random.
    r = _rng(seed, "collection")
    topics = [t % n_topics for t in range(n_docs)]
    r.shuffle(topics)
    docs, doc_topic = [], {}
    for i, t in enumerate(topics):
        second = r.choice([x for x in range(n_topics) if x != t])
        did = f"doc{i + 1:04d}"
        docs.append((did, _gen_doc(r, lex, t, second)))
        doc_topic[did] = t
    rm = _rng(seed, "mt-heldout")
    mt_docs = [_gen_doc(rm, lex, t, rm.choice([x for x in range(n_topics) if x != t]))
               for t in (rm.randrange(n_topics) for _ in range(n_mt_docs))]

    counts: dict[int, int] = {}
    for _, doc in docs:
        for sent in doc:
            for _f, conts in sent:
                for w in conts:
                    counts[w] = counts.get(w, 0) + 1
    lex.set_rarity(counts)

    en_sents = {did: [_render(_english(lex, s)) for s in doc] for did, doc in docs}
    xx_sents = {did: [_render(_foreign(lex, s)) for s in doc] for did, doc in docs}
    paths = {"english": out / "english.jsonl", "source": out / "source.jsonl",
             "systems_dir": out / "systems", "queries": out / "queries.tsv", "qrels": out / "qrels.txt",
             "mt_dir": out / "mt", "mt_ref": out / "mt" / "ref.en.txt", "mt_src": out / "mt" / f"src.{SOURCE_LANG}.txt",
             "mt_in_dir": out / "mt-in", "mt_in_ref": out / "mt-in" / "ref.en.txt",
             "mt_in_src": out / "mt-in" / f"src.{SOURCE_LANG}.txt", "manifest": out / "manifest.json"}
    written = [paths[k] for k in ("english", "source", "mt_in_ref", "mt_in_src", "mt_ref", "mt_src",
                                  "queries", "qrels")]
    _write_jsonl(paths["english"], ({"id": d, "text": " ".join(en_sents[d])} for d, _ in docs))
    _write_jsonl(paths["source"], ({"id": d, "text": " ".join(xx_sents[d])} for d, _ in docs))
    _write_lines(paths["mt_in_ref"], (s for d, _ in docs for s in en_sents[d]))
    _write_lines(paths["mt_in_src"], (s for d, _ in docs for s in xx_sents[d]))
    _write_lines(paths["mt_ref"], (_render(_english(lex, s)) for doc in mt_docs for s in doc))
    _write_lines(paths["mt_src"], (_render(_foreign(lex, s)) for doc in mt_docs for s in doc))

    queries, qrels = _make_queries(seed, lex, docs, doc_topic, n_topics, n_queries)
    _write_lines(paths["queries"], (f"{qid}\t{text}" for qid, text in queries))
    _write_lines(paths["qrels"], (f"{qid} 0 {did} {rel}" for qid, rels in qrels.items() for did, rel in rels))

    systems_meta = {}
    for name in names:
        sysm = _System(name, PROFILES[name], lex, seed)
        lines = {did: sysm.translate(doc) for did, doc in docs}
        written.append(_write_jsonl(out / "systems" / f"{name}.jsonl",
                                    ({"id": d, "text": " ".join(x for x in lines[d] if x)} for d, _ in docs)))
        written.append(_write_lines(out / "mt-in" / f"{name}.txt", (s for d, _ in docs for s in lines[d])))
        written.append(_write_lines(out / "mt" / f"{name}.txt",
                                    (s for doc in mt_docs for s in sysm.translate(doc))))
        systems_meta[name] = {"profile": asdict(PROFILES[name]), "realised": sysm.rates(),
                              "expected_rare_kept": round(expected_rare_kept(PROFILES[name]), 4)}

    files = sorted(p.relative_to(out).as_posix() for p in written)
    write_json(paths["manifest"], {
        "generator": f"clir_eval.demo v{DEMO_VERSION}", "seed": seed,
        "parameters": {"n_docs": n_docs, "n_queries": n_queries, "n_systems": n_systems,
                       "n_topics": n_topics, "n_mt_docs": n_mt_docs, "n_background_words": n_background,
                       "words_per_topic": words_per_topic, "rarity_exponent": RARITY_EXP,
                       "query_word_ranks": QUERY_WORD_RANKS},
        "languages": {"source": SOURCE_LANG, "target": "en"},
        "mt_test_sets": {"mt": "held-out generated documents, not in the collection",
                         "mt-in": "the collection's sentences in document order (In domain)"},
        "qrels": "relevant = documents whose main topic is the query's topic and that contain at "
                 "least one query word (grade 2 when they contain all of them)",
        "systems": systems_meta, "files": files + ["manifest.json"],
    })
    return paths


def _make_queries(seed, lex: _Lexicon, docs, doc_topic, n_topics, n_queries):
    """Queries of 2-4 topic words; relevant = topic documents containing a query word."""
    r = _rng(seed, "queries")
    doc_words = {did: {w for s in doc for _f, c in s for w in c} for did, doc in docs}
    by_topic: dict[int, list[str]] = {}
    for did, t in doc_topic.items():
        by_topic.setdefault(t, []).append(did)
    order = list(range(n_topics))
    r.shuffle(order)
    queries, qrels, seen = [], {}, set()
    attempts = 0
    while len(queries) < n_queries:
        attempts += 1
        if attempts > 200 * n_queries:
            raise UserError(f"could not build {n_queries} distinct queries with >= 2 relevant documents; "
                            f"lower n_queries or raise n_docs")
        t = order[len(queries) % n_topics]
        k = r.randint(2, 4)
        words = []
        while len(words) < k:
            w = r.choice(lex.topics[t][:QUERY_WORD_RANKS])
            if w not in words:
                words.append(w)
        key = tuple(sorted(words))
        rel = []
        for did in sorted(by_topic.get(t, [])):
            hits = len(set(words) & doc_words[did])
            if hits:
                rel.append((did, 2 if hits == len(words) else 1))
        if key in seen or len(rel) < 2:
            continue
        seen.add(key)
        qid = f"q{len(queries) + 1:03d}"
        queries.append((qid, " ".join(lex.words[w] for w in words)))
        qrels[qid] = rel
    return queries, qrels
