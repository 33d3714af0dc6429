"""Analyzers: text -> list of index terms, applied identically to documents and queries.

Two named tokenizers, each optionally followed by stopword removal and Snowball stemming
(PyStemmer, any of its languages):

- ``whitespace``: ``str.split()`` and nothing else (no case folding) -- what rank-bm25
  users typically feed it, needed for exact reference parity.
- ``default``: Unicode words (runs of letters, digits, ``_`` and combining marks, so
  Devanagari or Arabic words are not cut at vowel signs), lowercased. Format characters
  (category Cf: ZWJ, ZWNJ, soft hyphen, bidi marks...) and variation selectors (U+FE00-FE0F,
  U+E0100-E01EF, Mongolian FVS) are deleted first, as Unicode word segmentation (UAX #29,
  rule WB4) ignores them: they never form a token and never split one (version 2 of the
  tokenizer; version 1 made U+FE0F a token and split words at ZWJ/ZWNJ/soft hyphens).

Both tokenizers run on whole batches of documents: the batch is one UTF-32 code point array,
each code point is classified through a lookup table (numpy), separators become spaces, and
one ``str.lower()``/``str.split()`` call yields every token of the batch (no per-token
Python); stopwords and stemming apply per distinct word (:meth:`Analyzer.normalize`), which
the index builder caches per vocabulary entry. The output equals the per-document
definition (regex ``findall`` + lowercase, :func:`reference_tokens`) exactly; tests check it.

The index builder does not even make a Python string per token: :class:`SurfaceVocab` turns
a batch into UTF-8 bytes (:func:`token_bytes`; ASCII batches through ``bytes.translate``),
keys each token by its bytes, and finds its id in a numpy hash table; every key is checked
against the stored key of its id, so a hash collision cannot merge two tokens (it raises
:class:`HashCollision`, and the builder redoes the shard with strings).

A collection language other than English (:func:`analyzer_for`, ``retrieval.language``) adds
the rules of :mod:`.languages` to the ``default`` tokenizer: CJK width folding and character
bigrams, then the language's stopwords and Snowball stemmer; one token may then give several
terms (:meth:`Analyzer.terms`, once per distinct token in the index builder).

Every analyzer has a :attr:`Analyzer.signature` naming everything that changes its output
(tokenizer and its version, case, language and the version of the CJK rules, stopword list and
its checksum, stemmer language and PyStemmer version, Unicode database version), so indexes and
runs can be cached by it.
"""

from __future__ import annotations

import functools
import itertools
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Sequence

import numpy as np

from .. import lazylibs
from ..errors import UserError
from ..io.files import read_lines, text_checksum
from .languages import CJK_SIG, LANGUAGES, bigrams, cjk_pieces, fold_width, language_code, stopword_list
from .languages import language as language_profile
from .settings import ANALYZERS

#: Lucene's English stop set (``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``), the default of
#: Lucene/Anserini English BM25 baselines.
ENGLISH_STOPWORDS = (
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with",
)  # fmt: skip

#: Named stopword lists: ``english`` (the list above) and Lucene's list of each language by its
#: English name (``german``, ``russian``...; ``cjk``: CJKAnalyzer's), a language code as value.
STOPWORD_LISTS: dict[str, tuple[str, ...] | str] = {
    "english": ENGLISH_STOPWORDS,
    **{lang.name: code for code, lang in LANGUAGES.items() if lang.stopwords and lang.stopwords != "cjk.txt"},
    "cjk": "zh",
    "none": (),  # no list (switches off a language's own)
}
NONE = "none"  # stopwords/stem value switching off a language's default list or stemmer


#: Code points deleted before tokenizing by the ``default`` tokenizer (besides category Cf).
VARIATION_SELECTORS = ((0x180B, 0x180D), (0x180F, 0x180F), (0xFE00, 0xFE0F), (0xE0100, 0xE01EF))

_SEP, _WORD, _DROP = 0, 1, 2
_BATCH_CHARS = 1 << 22  # code points per tokenizer batch (16 MiB as UTF-32)


def _dropped(cp: int) -> bool:
    return unicodedata.category(chr(cp)) == "Cf" or any(lo <= cp <= hi for lo, hi in VARIATION_SELECTORS)


@functools.cache
def _word_re() -> re.Pattern:
    """``[\\w<combining marks>]+``; stdlib ``\\w`` alone excludes marks (Mn/Mc/Me)."""
    ranges = []
    start = None
    for cp in range(sys.maxunicode + 2):
        is_mark = cp <= sys.maxunicode and unicodedata.category(chr(cp))[0] == "M" and not _dropped(cp)
        if is_mark and start is None:
            start = cp
        elif not is_mark and start is not None:
            ranges.append(f"{re.escape(chr(start))}-{re.escape(chr(cp - 1))}")
            start = None
    return re.compile(r"[\w" + "".join(ranges) + r"]+")


@functools.cache
def _drop_map() -> dict[int, None]:
    """``str.translate`` table deleting the code points the ``default`` tokenizer ignores."""
    return dict.fromkeys(cp for cp in range(sys.maxunicode + 1) if _dropped(cp))


def reference_tokens(name: str, text: str) -> list[str]:
    """The specification of a tokenizer on one text (slow; the batch code must equal it)."""
    if name == "whitespace":
        return text.split()
    words = _word_re().findall(text.translate(_drop_map()))
    # Tokenize first, then lowercase: lowercasing can create combining marks (İ -> i̇).
    return " ".join(words).lower().split() if words else []


_BLOCK = 8  # the class tables are filled lazily, 256 code points at a time
_TABLES: dict[str, tuple[np.ndarray, np.ndarray]] = {}


def _classify_block(name: str, block: int) -> np.ndarray:
    """_SEP | _WORD | _DROP for the 256 code points of ``block``."""
    chars = "".join(map(chr, range(block << _BLOCK, (block + 1) << _BLOCK)))
    if name == "whitespace":  # str.split() separators: exactly the str.isspace() characters
        return np.array([_SEP if c.isspace() else _WORD for c in chars], dtype=np.uint8)
    cats = [unicodedata.category(c) for c in chars]
    word = re.sub(r"\W", "\x00", chars)
    out = [_DROP if _dropped(ord(c)) else _WORD if (w != "\x00" or cat[0] == "M") else _SEP
           for c, w, cat in zip(chars, word, cats)]  # fmt: skip
    return np.array(out, dtype=np.uint8)


def _class_table(name: str, cps: np.ndarray) -> np.ndarray:
    """Code point -> class table of tokenizer ``name``, filled for every block in ``cps``."""
    if name not in _TABLES:
        _TABLES[name] = (np.zeros(sys.maxunicode + 1, dtype=np.uint8), np.zeros((sys.maxunicode >> _BLOCK) + 1, dtype=bool))
    table, known = _TABLES[name]
    top = int(cps.max()) >> _BLOCK if len(cps) else 0
    if top < 0x100 and known[: top + 1].all():  # the common case: every block up to the largest is known
        return table
    if top < 0x100:  # Basic Multilingual Plane: fill every block up to the largest (at most 256, once)
        blocks = np.arange(top + 1)
    else:
        present = np.zeros_like(known)
        present[cps >> _BLOCK] = True
        blocks = np.flatnonzero(present)
    for block in blocks[~known[blocks]].tolist():
        table[block << _BLOCK : (block + 1) << _BLOCK] = _classify_block(name, block)
        known[block] = True
    return table


def _split_batch(name: str, texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """All tokens of ``texts`` in order, and the number of tokens of each text."""
    big = "\n".join(texts)  # "\n" is a separator for both tokenizers
    cps = np.frombuffer(big.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    if not len(cps):
        return [], np.zeros(len(texts), dtype=np.int64)
    cls = _class_table(name, cps)[cps]
    bounds = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1, out=bounds[1:])
    if name != "whitespace":
        keep = cls != _DROP
        if not keep.all():
            kept_before = np.concatenate(([0], np.cumsum(keep)))
            bounds = kept_before[np.minimum(bounds, len(cps))]
            cps, cls = cps[keep], cls[keep]
    word = cls == _WORD
    starts = np.flatnonzero(word & ~np.concatenate(([False], word[:-1])))
    counts = np.diff(np.searchsorted(starts, bounds))
    if name == "whitespace":
        tokens = big.split()
    else:
        mapped = np.where(word, cps, np.uint32(32)).astype(np.uint32)
        tokens = mapped.tobytes().decode("utf-32-le", "surrogatepass").lower().split()
    if len(tokens) != int(counts.sum()):  # pragma: no cover - guarded by the code point tests
        raise RuntimeError(f"tokenizer {name}: {len(tokens)} tokens but {int(counts.sum())} word starts")
    return tokens, counts


def batch_slices(texts: Sequence[str], max_chars: int = _BATCH_CHARS):
    """Yield ``(i, j)``: consecutive ranges of ``texts`` of about ``max_chars`` code points
    (at least one text each)."""
    i, n = 0, len(texts)
    while i < n:
        j, size = i, 0
        while j < n and (j == i or size + len(texts[j]) < max_chars):
            size += len(texts[j]) + 1
            j += 1
        yield i, j
        i = j


def split_batches(name: str, texts: Sequence[str], max_chars: int = _BATCH_CHARS):
    """Yield ``(tokens, counts)`` for consecutive batches of ``texts`` (see :func:`_split_batch`)."""
    for i, j in batch_slices(texts, max_chars):
        yield _split_batch(name, texts[i:j])


# ------------------------------------------------------------------ surface ids without Python strings

_WORDS = 4  # tokens of up to 8 * _WORDS UTF-8 bytes are keyed by their bytes; longer ones by Python strings
_PAD = 8 * _WORDS + 8
_LEN_MASK = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
_MIX = tuple(np.uint64(c) for c in (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                                    0xD6E8FEB86659FD93, 0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53))  # fmt: skip
_ASCII_MAP: dict[str, bytes] = {}


class HashCollision(Exception):
    """Two different tokens got the same 64-bit key hash (the caller falls back to strings)."""


def _ascii_map(name: str) -> bytes:
    """``bytes.translate`` table for ASCII text: word characters stay (lowercased for
    ``default``), b'\\n' stays, every other separator becomes b' '."""
    if name not in _ASCII_MAP:
        cls = _class_table(name, np.arange(128, dtype=np.uint32))[:128]
        lut = bytearray(b" " * 256)
        for c in np.flatnonzero(cls == _WORD).tolist():
            lut[c] = ord(chr(c).lower() if name != "whitespace" else chr(c))
        lut[10] = 10
        _ASCII_MAP[name] = bytes(lut)
    return _ASCII_MAP[name]


def token_bytes(name: str, texts: Sequence[str]) -> tuple[np.ndarray, int, np.ndarray]:
    """The tokens of ``texts`` as UTF-8 bytes (lowercased for ``default``), separated by
    b' ' and with b'\\n' between texts, then ``_PAD`` zero bytes: ``(array, length without
    padding, positions of the b'\\n's)``.
    Splitting it at b' ' and b'\\n' gives exactly :func:`_split_batch`'s tokens."""
    big = "\n".join(texts)
    n = len(texts)
    joins = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=n) + 1)[:-1] - 1  # the "\n"s
    if big.isascii():  # one byte per code point; ASCII lowercasing is A-Z -> a-z, as str.lower()
        raw = big.encode("ascii").translate(_ascii_map(name)) + bytes(_PAD)
        b = np.frombuffer(raw, dtype=np.uint8)
        if raw.count(b"\n") != len(joins):  # a text contains "\n" (a separator) itself
            b = b.copy()
            b[b == 10] = 32
            b[joins] = 10
        return b, len(raw) - _PAD, joins
    cps = np.frombuffer(big.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    cls = _class_table(name, cps)[cps]
    if name != "whitespace" and cls.max() == _DROP:
        keep = cls != _DROP
        joins = np.cumsum(keep)[joins] - 1  # the joining "\n"s are kept
        cps, cls = cps[keep], cls[keep]
    mapped = np.where(cls == _WORD, cps, np.uint32(32))
    mapped[joins] = 10
    text = mapped.tobytes().decode("utf-32-le", "surrogatepass")
    if name != "whitespace":  # after separating tokens: lowercasing looks at neighbours (final sigma)
        text = text.lower()
    raw = text.encode("utf-8", "surrogatepass")
    b = np.frombuffer(raw + bytes(_PAD), dtype=np.uint8)
    return b, len(raw), np.flatnonzero(b[: len(raw)] == 10)


def _decode_ranges(b: np.ndarray, st: np.ndarray, en: np.ndarray) -> list[str]:
    """The tokens at byte ranges ``[st, en)`` of ``b`` (ascending), as strings."""
    if len(st) == 0 or len(st) * 500 < en[-1] - st[0]:  # few tokens: slicing beats a pass over the whole range
        return [b[x:y].tobytes().decode("utf-8", "surrogatepass") for x, y in zip(st.tolist(), en.tolist())]
    lo, hi = int(st[0]), int(en[-1]) + 1
    edge = np.zeros(hi - lo + 1, dtype=np.int8)
    edge[st - lo] = 1
    edge[en - lo] = -1
    keep = np.cumsum(edge[:-1], dtype=np.int8) > 0
    keep[en - lo] = True  # a separator after each token (the last one may be padding: made b' ')
    part = b[lo:hi].copy()
    part[en - lo] = 32
    return part[keep].tobytes().decode("utf-8", "surrogatepass").split()


class SurfaceVocab:
    """Distinct tokens (surface forms) of a stream of batches, numbered in first-occurrence
    order: :meth:`add` gives every token's id without a Python object per token.

    A token of up to 32 UTF-8 bytes is keyed by (byte length, its bytes as four 64-bit words),
    hashed to 64 bits and looked up in an open-addressing table of numpy arrays; longer
    tokens go through a dict of strings. Every looked-up token's key is then compared with
    the stored key of the id it got, so a hash collision can never merge two tokens: it
    raises :class:`HashCollision` (the caller redoes the work with strings).
    """

    def __init__(self, name: str):
        self.name = name
        self.strings: list[str] = []  # id -> surface form
        self._long: dict[str, int] = {}
        self._keys = np.zeros((_WORDS + 1, 1024), dtype=np.uint64)  # (length, words) x id: typed gathers
        self._table = np.zeros(1 << 16, dtype=np.uint64)  # hash (0: empty slot)
        self._table_id = np.zeros(1 << 16, dtype=np.int64)
        self._filled = 0

    def __len__(self) -> int:
        return len(self.strings)

    def _slots(self, h: np.ndarray) -> np.ndarray:
        return (h >> np.uint64(65 - len(self._table).bit_length())).astype(np.int64)

    def _lookup(self, h: np.ndarray) -> np.ndarray:
        """Id of each hash, -1 where absent (linear probing, vectorised)."""
        if not self._filled:
            return np.full(len(h), -1, dtype=np.int64)
        mask = len(self._table) - 1
        slot = self._slots(h)
        cur = self._table[slot]
        out = np.where(cur == h, self._table_id[slot], -1)
        todo = np.flatnonzero((cur != h) & (cur != 0))
        slot = (slot[todo] + 1) & mask
        while len(todo):
            cur = self._table[slot]
            hit = cur == h[todo]
            out[todo[hit]] = self._table_id[slot[hit]]
            go = ~hit & (cur != 0)
            todo, slot = todo[go], (slot[go] + 1) & mask
        return out

    def _insert(self, h: np.ndarray, ids: np.ndarray) -> None:
        """Add distinct new hashes; the table stays at most a quarter full."""
        if 4 * (self._filled + len(h)) > len(self._table):
            size = len(self._table)
            while 4 * (self._filled + len(h)) > size:
                size *= 4
            used = self._table != 0
            old_h, old_id = self._table[used], self._table_id[used]
            self._table = np.zeros(size, dtype=np.uint64)
            self._table_id = np.zeros(size, dtype=np.int64)
            self._filled = 0
            self._place(old_h, old_id)
        self._place(h, ids)

    def _place(self, h: np.ndarray, ids: np.ndarray) -> None:
        self._filled += len(h)
        mask = len(self._table) - 1
        slot = self._slots(h)
        while len(h):
            free = self._table[slot] == 0
            cand = np.flatnonzero(free)
            _, first = np.unique(slot[cand], return_index=True)  # one key per free slot per round
            win = cand[first]
            self._table[slot[win]] = h[win]
            self._table_id[slot[win]] = ids[win]
            rest = np.ones(len(h), dtype=bool)
            rest[win] = False
            h, ids, slot, moved = h[rest], ids[rest], slot[rest], ~free[rest]
            slot[moved] = (slot[moved] + 1) & mask

    def add(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Ids of all tokens of ``texts`` in order (int64) and the number of tokens per text."""
        if not len(texts):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        b, nb, joins = token_bytes(self.name, texts)
        word = np.zeros(nb + 2, dtype=bool)
        if self.name == "default":  # no word byte is a control character or b' '
            np.greater(b[:nb], 32, out=word[1:-1])
        else:
            np.not_equal(b[:nb], 32, out=word[1:-1])
            word[1:-1] &= b[:nb] != 10
        edges = np.flatnonzero(word[1:] != word[:-1])  # alternately a token's first byte and one past its last
        starts, ends = edges[0::2], edges[1::2]
        cuts = np.searchsorted(starts, joins)
        counts = np.diff(np.concatenate(([0], cuts, [len(starts)])))
        n = len(starts)
        if not n:
            return np.zeros(0, dtype=np.int64), counts
        length = ends - starts
        # every 8-byte window of b as a little-endian integer (unaligned view, no copy)
        win = np.lib.stride_tricks.as_strided(b, shape=(len(b) - 7, 8), strides=(1, 1)).view("<u8")[:, 0]
        keys = np.zeros((_WORDS + 1, n), dtype=np.uint64)  # a token's key is a column
        keys[0] = length
        keys[1] = win[starts] & _LEN_MASK[np.minimum(length, 8)]
        h = keys[0] * _MIX[0] ^ keys[1] * _MIX[1]
        for k in range(1, _WORDS):
            sel = np.flatnonzero(length > 8 * k)
            if not len(sel):
                break
            keys[k + 1, sel] = win[starts[sel] + 8 * k] & _LEN_MASK[np.minimum(length[sel] - 8 * k, 8)]
            h[sel] ^= keys[k + 1, sel] * _MIX[k + 1]
        h ^= h >> np.uint64(31)
        h *= _MIX[5]
        h ^= h >> np.uint64(29)
        h[h == 0] = 1  # 0 marks an empty slot
        long_ = np.flatnonzero(length > 8 * _WORDS)
        short = np.flatnonzero(length <= 8 * _WORDS) if len(long_) else None
        hs = h if short is None else h[short]
        ids = np.empty(n, dtype=np.int64)
        sid = self._lookup(hs)
        missing = np.flatnonzero(sid < 0)
        new = []
        if len(missing):
            _, first = np.unique(hs[missing], return_index=True)
            new.append(missing[first] if short is None else short[missing[first]])
        if len(long_):
            long_str = _decode_ranges(b, starts[long_], ends[long_])
            seen = {}
            for p, t in zip(long_.tolist(), long_str):
                if t not in self._long and t not in seen:
                    seen[t] = p
            new.append(np.fromiter(seen.values(), dtype=np.int64, count=len(seen)))
        new = np.sort(np.concatenate(new)) if new else np.zeros(0, dtype=np.int64)
        if len(new):  # first occurrences of new tokens, in order: the next ids
            base, k = len(self.strings), len(new)
            if base + k > self._keys.shape[1]:
                grown = np.zeros((_WORDS + 1, max(2 * self._keys.shape[1], base + k)), dtype=np.uint64)
                grown[:, :base] = self._keys[:, :base]
                self._keys = grown
            self._keys[:, base : base + k] = keys[:, new]
            self.strings.extend(_decode_ranges(b, starts[new], ends[new]))
            is_long = length[new] > 8 * _WORDS
            for i in np.flatnonzero(is_long).tolist():
                self._long[self.strings[base + i]] = base + i
            self._insert(h[new[~is_long]], np.arange(base, base + k)[~is_long])
            if len(missing):
                sid[missing] = self._lookup(hs[missing])
        # the key check: each token's key must equal the stored key of the id it got
        got = keys if short is None else keys[:, short]
        same = (self._keys[0][sid] == got[0]) & (self._keys[1][sid] == got[1])
        for k in range(1, _WORDS):
            sel = np.flatnonzero(got[0] > 8 * k)
            if not len(sel):
                break
            same[sel] &= self._keys[k + 1][sid[sel]] == got[k + 1, sel]
        if not same.all():
            raise HashCollision(f"tokenizer {self.name}: two tokens share a 64-bit key hash")
        if short is None:
            return sid, counts
        ids[short] = sid
        ids[long_] = np.fromiter(map(self._long.__getitem__, long_str), dtype=np.int64, count=len(long_))
        return ids, counts


class StringSurfaceVocab:
    """:class:`SurfaceVocab` through Python strings and a dict (slower; no hashing of its own)."""

    def __init__(self, name: str):
        self.name = name
        self.strings: list[str] = []
        self._ids: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.strings)

    def add(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        tokens, counts = _split_batch(self.name, texts)
        ids, before = self._ids, len(self._ids)
        out = np.fromiter((ids.setdefault(t, len(ids)) for t in tokens), dtype=np.int64, count=len(tokens))
        self.strings.extend(itertools.islice(ids, before, None))
        return out, counts


_TOKENIZER_SIGS = {
    "whitespace": "tok:whitespace|case:mixed",
    "default": f"tok:unicode-words-v2|case:lc|unicode:{unicodedata.unidata_version}",
}


def _pystemmer_version() -> str:
    try:
        return version("PyStemmer")
    except PackageNotFoundError:  # pragma: no cover
        return "unknown"


@dataclass(frozen=True)
class Analyzer:
    """A configured analyzer; call :meth:`tokenize` on documents and queries alike."""

    name: str
    stopwords: str | None = None
    stem: str | None = None
    language: str = "en"
    _stopset: frozenset[str] = field(repr=False, compare=False, default=frozenset())
    _stemmer: object = field(repr=False, compare=False, default=None)
    signature: str = field(compare=False, default="")

    @property
    def cjk(self) -> bool:
        """True when tokens are width-folded and CJK runs bigrammed (every language but English)."""
        return self.language != "en"

    @property
    def identity(self) -> bool:
        """True when every token is its own term (no stopwords, no stemming, no CJK rules)."""
        return not self._stopset and self._stemmer is None and not self.cjk

    def normalize(self, token: str) -> str | None:
        """The index term of one token, None for a stopword (analyzers without CJK rules: one term
        per token at most; :meth:`terms` in general)."""
        if token in self._stopset:
            return None
        return self._stemmer.stemWord(token) if self._stemmer is not None else token

    def terms(self, token: str) -> list[str]:
        """The index terms of one token: width folded, CJK runs cut into bigrams, stopwords
        dropped, stemmed (in that order; as :meth:`normalize` without the CJK rules)."""
        if not self.cjk:
            term = self.normalize(token)
            return [] if term is None else [term]
        out: list[str] = []
        for piece, is_cjk in cjk_pieces(fold_width(token)):
            out.extend(bigrams(piece) if is_cjk else (piece,))
        if self._stopset:
            out = [t for t in out if t not in self._stopset]
        return self._stemmer.stemWords(out) if self._stemmer is not None and out else out

    def tokenize(self, text: str) -> list[str]:
        """The index terms of ``text`` in order (duplicates kept)."""
        tokens, _ = _split_batch(self.name, [text])
        if self.cjk:
            return [t for tok in tokens for t in self.terms(tok)]
        if self._stopset:
            stop = self._stopset
            tokens = [t for t in tokens if t not in stop]
        if self._stemmer is not None and tokens:
            tokens = self._stemmer.stemWords(tokens)
        return tokens

    def __reduce__(self):  # rebuild by name, so analyzers pass to worker processes
        return (get_analyzer, (self.name, self.stopwords, self.stem, self.language))

    def spec(self) -> dict:
        """The arguments that rebuild this analyzer with :func:`get_analyzer` (``language`` only
        when not English, so specs saved before languages existed still match)."""
        out = {"name": self.name, "stopwords": self.stopwords, "stem": self.stem}
        return out if self.language == "en" else {**out, "language": self.language}


def _load_stopwords(stopwords: str) -> tuple[frozenset[str], str]:
    key = stopwords.strip()
    if key.lower() in STOPWORD_LISTS:
        words = STOPWORD_LISTS[key.lower()]
        if isinstance(words, str):  # a language's Lucene list
            listed, sig = stopword_list(words)
            return frozenset(listed), sig
        return frozenset(words), f"{key.lower()}-lucene{len(words)}"
    p = Path(key)
    if p.is_file():
        words = [w for line in read_lines(p) for w in line.split()]
        return frozenset(words), f"file:{p.name}:{text_checksum(*sorted(set(words)))[:12]}"
    raise UserError(
        f"unknown stopword list {stopwords!r}; use one of {sorted(STOPWORD_LISTS)} or the path of a file "
        "with one stopword per line"
    )


def _off(value: str | None) -> bool:
    return value is not None and value.strip().lower() == NONE


def get_analyzer(name: str = "default", stopwords: str | None = None, stem: str | None = None,
                 language: str | None = "en") -> Analyzer:
    """Build a named analyzer (``whitespace`` or ``default``) for a collection language.

    ``stopwords``: ``"english"`` (Lucene's 33-word list), a language's Lucene list by its English
    name (``german``, ``cjk``...), ``"none"``, or a file of words, applied to the tokens as produced
    (i.e. after lowercasing for ``default``). ``stem``: a Snowball language known to PyStemmer
    (``english``, ``german``, ``hindi``...) or ``"none"``. ``language``: an ISO 639-1 code; ``en``
    (the default) applies exactly ``stopwords`` and ``stem``; any other language needs the
    ``default`` tokenizer, adds CJK width folding and bigrams (:mod:`.languages`), and takes its
    stopword list and stemmer where ``stopwords``/``stem`` are left unset (None). Unknown names
    raise :class:`UserError`.
    """
    key = (name or "").strip().lower()
    if key not in _TOKENIZER_SIGS:
        raise UserError(f"unknown analyzer {name!r}; choose one of {', '.join(ANALYZERS)}")
    try:
        lang = language_code(language or "en")
    except ValueError as e:
        raise UserError(f"retrieval.language: {e}") from None
    sig = _TOKENIZER_SIGS[key]
    if lang != "en":
        if key != "default":
            raise UserError(f"retrieval.language {lang} needs analyzer default (got {key}): the CJK rules and "
                            "the language's stopwords apply to Unicode words")  # fmt: skip
        sig += f"|lang:{lang}|{CJK_SIG}"
        profile = language_profile(lang)
        if stopwords is None and profile.stopwords:
            stopwords = profile.name if profile.stopwords != "cjk.txt" else "cjk"
        if stem is None and profile.stemmer:
            stem = profile.stemmer
    stop_spec, stem_spec = (NONE if _off(v) else v for v in (stopwords, stem))  # "none" kept: specs rebuild it
    stopwords, stem = (None if _off(v) else v for v in (stopwords, stem))
    stopset: frozenset[str] = frozenset()
    if stopwords:
        stopset, stop_sig = _load_stopwords(stopwords)
        sig += f"|stop:{stop_sig}"
    else:
        sig += "|stop:none"
    stemmer = None
    if stem:
        Stemmer = lazylibs.stemmer()
        stem_lang = stem.strip().lower()
        if stem_lang not in Stemmer.algorithms():
            raise UserError(
                f"unknown stemmer language {stem!r}; PyStemmer knows: {', '.join(Stemmer.algorithms())}"
            )
        stemmer = Stemmer.Stemmer(stem_lang)
        sig += f"|stem:snowball-{stem_lang}|pystemmer:{_pystemmer_version()}"
    else:
        sig += "|stem:none"
    return Analyzer(
        name=key,
        stopwords=stop_spec or None,
        stem=stem.strip().lower() if stem else (stem_spec or None),
        language=lang,
        _stopset=stopset,
        _stemmer=stemmer,
        signature=f"analyzer:{key}|{sig}",
    )


def analyzer_for(language: str | None, name: str = "default", stopwords: str | None = None,
                 stem: str | None = None) -> Analyzer:
    """The analyzer of a collection in ``language`` (ISO 639-1, e.g. the target language of a WMT
    file): :func:`get_analyzer` with the language first. ``analyzer_for("de")`` is Unicode words,
    lowercased, CJK bigrams, Lucene's German stopwords and the Snowball German stemmer;
    ``analyzer_for("en")`` is the plain ``default`` analyzer (as configured)."""
    return get_analyzer(name, stopwords=stopwords, stem=stem, language=language)
