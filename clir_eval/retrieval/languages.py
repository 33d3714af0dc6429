"""Per-language analysis: which stopword list and Snowball stemmer a collection language gets,
CJK character bigrams and CJK width folding (the rules of Lucene's ``CJKAnalyzer``).

A language other than English analyses like this Lucene chain (the reference the tests compare
with, ``scripts/lucene/LuceneAnalyze.java``): Unicode words, lowercased; CJK width folding
(``CJKWidthFilter``: fullwidth ASCII to ASCII, halfwidth katakana to fullwidth, a halfwidth
voiced/semi-voiced mark merged into the kana before it); runs of adjacent Han, Hiragana,
Katakana and Hangul characters become overlapping character bigrams, a lone one a unigram
(``CJKBigramFilter``); then the language's stopwords (Lucene's list) and its Snowball stemmer
(PyStemmer). English (``en``) keeps the analyzer exactly as configured (no list and no stemmer
unless set), as before languages existed. A language without a list or a stemmer here (Icelandic,
and any code not in :data:`LANGUAGES`) gets the tokenizer, width folding and bigrams only.

The stopword lists are Lucene 8.7's files (``lucene-analyzers-common``), shipped unchanged in
``stopwords/``; they are parsed as Lucene's ``WordlistLoader`` does, and the checksum of each
parsed list is part of the analyzer's signature.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from dataclasses import dataclass
from importlib.resources import files

from ..io.files import text_checksum


@dataclass(frozen=True)
class Language:
    """What one collection language gets: a Lucene stopword list (file in ``stopwords/`` and its
    format: ``snowball`` with ``|`` comments, or ``lines`` with ``#`` comments) and a Snowball
    stemmer (a PyStemmer algorithm), either of which may be absent."""

    name: str
    stopwords: str | None = None
    format: str = "snowball"
    stemmer: str | None = None


_SNOWBALL = {"da": "danish", "de": "german", "es": "spanish", "fi": "finnish", "fr": "french", "hu": "hungarian",
             "it": "italian", "no": "norwegian", "pt": "portuguese", "ru": "russian", "sv": "swedish"}  # fmt: skip
_LINES = {"ar": "arabic", "ca": "catalan", "et": "estonian", "eu": "basque", "ga": "irish", "hy": "armenian",
          "lt": "lithuanian", "ro": "romanian", "tr": "turkish"}  # fmt: skip

#: Collection languages (ISO 639-1) with what each gets. Dutch uses ``dutch_porter``, the Snowball
#: algorithm Lucene's ``DutchStemmer`` implements (Snowball 3 renamed it when it replaced ``dutch``).
LANGUAGES: dict[str, Language] = {
    "en": Language("english"),
    **{c: Language(n, f"{c}.txt", "snowball", n) for c, n in _SNOWBALL.items()},
    "nl": Language("dutch", "nl.txt", "snowball", "dutch_porter"),
    **{c: Language(n, f"{c}.txt", "lines", n) for c, n in _LINES.items()},
    "is": Language("icelandic"),
    "zh": Language("chinese", "cjk.txt", "lines"),
    "ja": Language("japanese", "cjk.txt", "lines"),
    "ko": Language("korean", "cjk.txt", "lines"),
}

_CODE = re.compile(r"[a-z]{2,3}")


def language_code(code: str | None) -> str:
    """``code`` normalised (stripped, lowercased); a ``ValueError`` unless it looks like an ISO 639
    code (two or three letters). Codes not in :data:`LANGUAGES` are accepted (generic analysis)."""
    key = (code or "").strip().lower()
    if not _CODE.fullmatch(key):
        raise ValueError(f"{code!r} is not an ISO 639 language code (two letters, e.g. de, ja; or three)")
    return key


def language(code: str) -> Language:
    """The profile of ``code`` (:data:`LANGUAGES`; a code not there gets no list and no stemmer)."""
    return LANGUAGES.get(code, Language("generic"))


def parse_stopwords(text: str, fmt: str) -> tuple[str, ...]:
    """The words of a Lucene stopword file, as Lucene's ``WordlistLoader`` reads it (sorted, distinct):
    ``snowball``: text after ``|`` dropped, whitespace-separated words; ``lines``: one word per
    trimmed line, lines starting with ``#`` skipped."""
    if fmt == "snowball":
        words = (w for line in text.splitlines() for w in line.split("|", 1)[0].split())
    else:
        words = (w for w in (line.strip() for line in text.splitlines()) if w and not w.startswith("#"))
    return tuple(sorted(set(words)))


@functools.cache
def stopword_list(code: str) -> tuple[tuple[str, ...], str]:
    """The stopwords of language ``code`` and their signature part (``lucene-<file>:<checksum>``)."""
    lang = language(code)
    if lang.stopwords is None:
        return (), "none"
    text = files(__package__).joinpath("stopwords", lang.stopwords).read_text(encoding="utf-8")
    words = parse_stopwords(text, lang.format)
    name = "cjk" if lang.stopwords == "cjk.txt" else lang.name
    return words, f"lucene-{name}{len(words)}:{text_checksum(*words)[:12]}"


# ------------------------------------------------------------------ CJK width folding and bigrams

#: Code points bigrammed as CJK: Unicode scripts Han, Hiragana, Katakana and Hangul, and
#: Word_Break=Katakana (the prolonged sound mark, kana repeat marks...): the characters Lucene's
#: StandardTokenizer types IDEOGRAPHIC, HIRAGANA, KATAKANA or HANGUL, which CJKBigramFilter joins.
#: Derived with the ``regex`` package (2026.11.19) less U+3005 and U+303B, which Lucene treats as
#: letters (checked against Lucene 8.7 on every word character; Lucene 8.7 knows Unicode 9.0, so
#: ideographs assigned since then are CJK here and unknown to it).
CJK_RANGES = (
    (0x1100, 0x11FF), (0x2E80, 0x2E99), (0x2E9B, 0x2EF3), (0x2F00, 0x2FD5), (0x3007, 0x3007), (0x3021, 0x3029),
    (0x302E, 0x302F), (0x3031, 0x3035), (0x3038, 0x303A), (0x3041, 0x3096), (0x309B, 0x30FA), (0x30FC, 0x30FF),
    (0x3131, 0x318E), (0x31F0, 0x321E), (0x3260, 0x327E), (0x32D0, 0x32FE), (0x3300, 0x3357), (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF), (0xA960, 0xA97C), (0xAC00, 0xD7A3), (0xD7B0, 0xD7C6), (0xD7CB, 0xD7FB), (0xF900, 0xFA6D),
    (0xFA70, 0xFAD9), (0xFF66, 0xFF9D), (0xFFA0, 0xFFBE), (0xFFC2, 0xFFC7), (0xFFCA, 0xFFCF), (0xFFD2, 0xFFD7),
    (0xFFDA, 0xFFDC), (0x16FE2, 0x16FE3), (0x16FF0, 0x16FF6), (0x1AFF0, 0x1AFF3), (0x1AFF5, 0x1AFFB),
    (0x1AFFD, 0x1AFFE), (0x1B000, 0x1B128), (0x1B132, 0x1B132), (0x1B150, 0x1B152), (0x1B155, 0x1B155),
    (0x1B164, 0x1B168), (0x1F200, 0x1F200), (0x20000, 0x2A6DF), (0x2A700, 0x2B81E), (0x2B820, 0x2CEAD),
    (0x2CEB0, 0x2EBE0), (0x2EBF0, 0x2EE5D), (0x2F800, 0x2FA1D), (0x30000, 0x3134A), (0x31350, 0x33479),
)  # fmt: skip

#: Version of the CJK rules below (part of the analyzer signature).
CJK_SIG = "cjk:bigram-v1|width:lucene-cjkwidth-v1"


_WIDE = re.compile("[\uff01-\uff9f]")  # what fold_width changes
_VOICED = {0xFF9E: "\u3099", 0xFF9F: "\u309a"}  # halfwidth (semi-)voiced sound marks, as combining marks


def fold_width(token: str) -> str:
    """Lucene's ``CJKWidthFilter`` on one token: fullwidth ASCII variants (U+FF01-FF5E) to ASCII,
    halfwidth katakana (U+FF65-FF9F) to their fullwidth forms, and a halfwidth (semi-)voiced mark
    after a katakana U+30A6-30FD that has a voiced form merged into it (ｶﾞ -> ガ)."""
    if not _WIDE.search(token):
        return token
    out: list[str] = []
    for c in token:
        cp = ord(c)
        if 0xFF01 <= cp <= 0xFF5E:
            out.append(chr(cp - 0xFEE0))
        elif 0xFF65 <= cp <= 0xFF9F:
            if cp in _VOICED and out and 0x30A6 <= ord(out[-1]) <= 0x30FD:
                merged = unicodedata.normalize("NFC", out[-1] + _VOICED[cp])
                if len(merged) == 1:
                    out[-1] = merged
                    continue
            out.append(unicodedata.normalize("NFKC", c))
        else:
            out.append(c)
    return "".join(out)


@functools.cache
def _cjk_run() -> re.Pattern:
    """A CJK character, then CJK characters or combining marks: one run of :func:`cjk_pieces`."""
    marks, start = [], None
    for cp in range(sys.maxunicode + 2):
        is_mark = cp <= sys.maxunicode and unicodedata.category(chr(cp))[0] == "M"
        if is_mark and start is None:
            start = cp
        elif not is_mark and start is not None:
            marks.append((start, cp - 1))
            start = None
    cls = "".join(f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in CJK_RANGES)
    mark_cls = "".join(f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in marks)
    return re.compile(f"[{cls}][{cls}{mark_cls}]*")


def cjk_pieces(token: str) -> list[tuple[str, bool]]:
    """``token`` cut into maximal runs of CJK and of other characters: ``[(run, is_cjk), ...]``.
    A combining mark belongs to the run of the character before it (Lucene's tokenizer keeps it in
    that character's token: a voiced mark that does not merge is a character of the CJK run)."""
    if token.isascii():
        return [(token, False)]
    pieces: list[tuple[str, bool]] = []
    end = 0
    for m in _cjk_run().finditer(token):
        if m.start() > end:
            pieces.append((token[end : m.start()], False))
        pieces.append((m.group(), True))
        end = m.end()
    if end < len(token):
        pieces.append((token[end:], False))
    return pieces


def bigrams(run: str) -> list[str]:
    """Overlapping character bigrams of a CJK run; a lone character as itself."""
    return [run] if len(run) < 2 else [run[i : i + 2] for i in range(len(run) - 1)]
