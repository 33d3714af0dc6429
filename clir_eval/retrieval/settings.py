"""The retrieval stage's settings, declared once: the config's ``retrieval:`` section, ``clir-eval retrieve``'s
options, the index and run tasks and the BM25 engine all read these records.

:class:`IndexSettings` is what an index depends on (analyzer, backend, BM25 variant and parameters);
:class:`RetrievalSettings` adds what a run depends on besides its index (``depth``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from ..limits import MAX_DEPTH
from ..settings import SettingError, Settings, setting
from .languages import language_code

BACKENDS = ("sparse", "rank_bm25")
VARIANTS = ("okapi", "l", "plus", "lucene", "lucene-byte")
LUCENE_VARIANTS = ("lucene", "lucene-byte")
ANALYZERS = ("whitespace", "default")
DEFAULT_DELTA = {"l": 0.5, "plus": 1.0}
DEFAULT_K1_B = {"lucene": (0.9, 0.4), "lucene-byte": (0.9, 0.4)}  # Anserini's defaults; others rank-bm25's
RANK_BM25_K1_B = (1.5, 0.75)


@dataclass(frozen=True)
class IndexSettings(Settings):
    """How a collection is indexed: analyzer, backend, BM25 variant and parameters (k1/b default per variant)."""

    backend: str = setting("sparse", "sparse (fast, identical to rank-bm25) or rank_bm25 (reference).",
                           choices=BACKENDS, label="BM25 backend")
    analyzer: str = setting("default", "whitespace or default (Unicode words, lowercased).", choices=ANALYZERS,
                            label="analyzer")
    stopwords: str | None = setting(None, "'english', a language's Lucene list (german, cjk...), none, or a file of "
                                          "stopwords (default: the language's list; en: none).")
    stem: str | None = setting(None, "Snowball language for PyStemmer, e.g. english, or none (default: the "
                                     "language's stemmer; en: none).")
    language: str | None = setting(None, "Collection language, an ISO 639-1 code: its stopwords, stemmer and CJK "
                                         "bigrams (en: exactly the analyzer, stopwords and stem set). Unset: a WMT file's "
                                         "target language, else en.")
    variant: str = setting("okapi", "BM25 variant: okapi, l, plus (rank-bm25 classes), lucene (Lucene's BM25, exact "
                                    "lengths) or lucene-byte (Lucene's one-byte lengths, float32).",
                           choices=VARIANTS, label="BM25 variant")
    k1: float | None = setting(None, "BM25 k1. Default 1.5 (0.9 for lucene variants).", gt=0, le=100)
    b: float | None = setting(None, "BM25 b. Default 0.75 (0.4 for lucene variants).", ge=0, le=1)
    epsilon: float = setting(0.25, "Okapi idf floor factor (rank-bm25).", ge=0, le=100)
    delta: float | None = setting(None, "BM25L/BM25Plus delta (defaults 0.5/1).", ge=0, le=100)

    def check(self) -> None:
        if self.language is not None:  # None: unset (a source that knows the collection's language may set it)
            try:
                self.set("language", language_code(self.language))
            except ValueError as e:
                raise SettingError("language", self.language, str(e), shows_value=True) from None
        if self.language not in (None, "en") and self.analyzer != "default":
            raise SettingError("analyzer", self.analyzer, f"language {self.language} needs analyzer default (the "
                               "language rules apply to Unicode words)", shows_value=True)  # fmt: skip
        k1, b = DEFAULT_K1_B.get(self.variant, RANK_BM25_K1_B)
        self.set("k1", k1 if self.k1 is None else self.k1)
        self.set("b", b if self.b is None else self.b)
        if self.variant in LUCENE_VARIANTS and self.backend != "sparse":
            why = f"{self.variant} is only in the sparse backend (rank-bm25 has no Lucene BM25)"
            raise SettingError("variant", self.variant, why, shows_value=True, message="BM25 variant " + why)
        if self.delta is not None and self.variant not in DEFAULT_DELTA:
            raise SettingError("delta", self.delta, "delta applies to the BM25L and BM25Plus variants only "
                               "(variant l or plus)", shows_value=True)

    def for_collection(self, code: str | None):
        """These settings with ``language`` filled from the collection's language ``code`` (a source that knows
        it: a WMT file's target side) when the config left it unset. A configured language always wins; English,
        a code that is not ISO 639 and a non-default analyzer leave it unset (None is en: the same analyzer and
        signature as before)."""
        if self.language is not None or code is None or self.analyzer != "default":
            return self
        try:
            lang = language_code(code)
        except ValueError:
            return self
        return self if lang == "en" else replace(self, language=lang)

    @property
    def bm25_delta(self) -> float | None:
        """delta as BM25L/BM25Plus use it (their default when unset); None for the other variants."""
        if self.variant not in DEFAULT_DELTA:
            return None
        return DEFAULT_DELTA[self.variant] if self.delta is None else self.delta

    @property
    def bm25(self) -> dict:
        """The BM25 part as stored with a saved index (variant, k1, b, epsilon, delta)."""
        return {"variant": self.variant, "k1": self.k1, "b": self.b, "epsilon": self.epsilon, "delta": self.bm25_delta}

    @property
    def signature(self) -> str:
        """The BM25 settings in the index signature."""
        s = f"bm25:{self.variant}|k1:{self.k1!r}|b:{self.b!r}"
        if self.variant == "okapi":
            return s + f"|eps:{self.epsilon!r}"
        if self.variant == "lucene":
            return s + "|doclen:exact|float64"
        if self.variant == "lucene-byte":
            return s + "|doclen:lucene-smallfloat4|float32"
        return s + f"|delta:{self.bm25_delta!r}"


@dataclass(frozen=True)
class RetrievalSettings(IndexSettings):
    """The ``retrieval:`` section: the index settings and the run depth."""

    depth: int = setting(1000, "Documents kept per query.", ge=1, le=MAX_DEPTH)

    @property
    def index(self) -> IndexSettings:
        """The settings the index depends on (every field but depth)."""
        return IndexSettings(**{f.name: getattr(self, f.name) for f in fields(IndexSettings)})

