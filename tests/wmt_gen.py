"""Generated WMT XML test sets for tests: invented words, seeded noise per system.

Each document is a list of English reference segments (segment 1 a headline for news);
a system's translation replaces each word with an invented one with its own probability,
so systems differ in quality by construction; the source side is the reference reversed.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Mapping, Sequence
from xml.sax.saxutils import escape, quoteattr

SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "do", "fe", "gi", "hu")


def word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))


def documents(n: int, *, seed: int = 1, segments: int = 4, words: int = 8, prefix: str = "d") -> dict[str, list[str]]:
    """``n`` documents of ``segments`` segments (``words`` invented words each)."""
    rng = random.Random(seed)
    return {f"{prefix}{i}": [" ".join(word(rng) for _ in range(words)) for _ in range(segments)] for i in range(n)}


def noisy(docs: Mapping[str, Sequence[str]], rate: float, seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    return {
        d: [" ".join(word(rng) if rng.random() < rate else w for w in s.split()) for s in segs] for d, segs in docs.items()
    }


def write_xml(
    path: Path,
    refs: Mapping[str | None, Mapping[str, Sequence[str]]],
    systems: Mapping[str, Mapping[str, Sequence[str]]],
    *,
    attrs: Mapping[str, Mapping[str, str]] | None = None,
    src_lang: str = "de",
    tgt_lang: str = "en",
) -> Path:
    """WMT XML with references (translator None = no translator attribute) and systems;
    ``attrs`` gives extra ``<doc>`` attributes (domain, origlang, testsuite) per document."""
    first = next(iter(refs.values()))
    lines = ["<?xml version='1.0' encoding='utf-8'?>", '<dataset id="gen">']

    def block(tag: str, extra: str, segs: Sequence[str]) -> None:
        lines.append(f"    <{tag}{extra}><p>")
        lines.extend(f'      <seg id="{i}">{escape(s)}</seg>' for i, s in enumerate(segs, 1))
        lines.append(f"    </p></{tag}>")

    for d, segs in first.items():
        a = {"origlang": src_lang, **(attrs or {}).get(d, {})}
        lines.append(f"  <doc id={quoteattr(d)} " + " ".join(f"{k}={quoteattr(v)}" for k, v in a.items()) + ">")
        block("src", f' lang="{src_lang}"', [" ".join(reversed(s.split())) for s in segs])
        for t, docs in refs.items():
            if d in docs:
                block("ref", f' lang="{tgt_lang}"' + (f" translator={quoteattr(t)}" if t is not None else ""), docs[d])
        for name, docs in systems.items():
            if d in docs:
                block("hyp", f' lang="{tgt_lang}" system={quoteattr(name)}', docs[d])
        lines.append("  </doc>")
    lines.append("</dataset>")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def make_set(path: Path, n: int = 12, *, rates=(0.05, 0.2, 0.4, 0.6), seed: int = 1, attrs=None, **kw) -> Path:
    """A test set of ``n`` documents, reference A and one system per noise rate (S0, S1, ...)."""
    ref = documents(n, seed=seed, **kw)
    systems = {f"S{i}": noisy(ref, r, seed=100 + i) for i, r in enumerate(rates)}
    return write_xml(path, {"A": ref}, systems, attrs=attrs)
