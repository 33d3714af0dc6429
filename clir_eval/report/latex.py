"""report.tex and ``--format latex``: the blocks of :mod:`.blocks` as LaTeX (booktabs tables, escaped text)."""

from __future__ import annotations

from typing import Sequence

from .blocks import Block, Bullets, Heading, Para, Table, inline_spans

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
            "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
            ">": r"\textgreater{}", "|": r"\textbar{}", "\n": " "}
# Symbols the reports use, as commands, so the output compiles with pdflatex without extra packages.
_UNICODE = {"τ": r"\ensuremath{\tau}", "ρ": r"\ensuremath{\rho}", "α": r"\ensuremath{\alpha}",
            "β": r"\ensuremath{\beta}", "δ": r"\ensuremath{\delta}", "Δ": r"\ensuremath{\Delta}",
            "×": r"\ensuremath{\times}", "≥": r"\ensuremath{\geq}", "≤": r"\ensuremath{\leq}",
            "≠": r"\ensuremath{\neq}", "≈": r"\ensuremath{\approx}", "±": r"\ensuremath{\pm}",
            "→": r"\ensuremath{\rightarrow}", "·": r"\ensuremath{\cdot}", "−": r"\ensuremath{-}",
            "–": "--", "—": "---", "…": r"\dots{}", "\u00a0": "~"}

PREAMBLE = r"""\documentclass[a4paper,10pt]{article}
\usepackage{iftex}
\ifPDFTeX
  \usepackage[T1]{fontenc}
  \usepackage[utf8]{inputenc}
\else
  \usepackage{fontspec}
\fi
\usepackage[margin=2cm]{geometry}
\usepackage{booktabs}
\usepackage{array}
\usepackage{graphicx}
\usepackage{float}
\usepackage{caption}
\setlength{\parindent}{0pt}
\setlength{\parskip}{0.5em}
"""

# What pdflatex (T1 + utf8) typesets besides ASCII: Latin-1, Latin Extended-A and common punctuation.
_PDFTEX_EXTRA = set("‘’‚“”„†‡•…‰‹›€")
PDFTEX_MISSING_NOTE = ("pdflatex shows characters outside the Latin script as ? (here: {n} distinct); compile with "
                       "lualatex or xelatex, with a font that has them, to see them.")

FRAGMENT_HEAD = ("% clir-eval LaTeX tables: needs \\usepackage{booktabs} and \\usepackage{graphicx} "
                 "(pdflatex: also [T1]{fontenc} for names with accents)\n")


def latex_escape(text: str) -> str:
    """``text`` as LaTeX text: the specials & % $ # _ { } ~ ^ \\ < > | escaped, the report's Greek
    and math symbols as commands, control characters as spaces, and ``--`` kept from turning into a dash."""
    out = []
    for i, ch in enumerate(text):
        if ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0:  # control characters: a space
            ch = " "
        out.append(_SPECIAL.get(ch) or _UNICODE.get(ch) or ch)
        if ch == "-" and text[i + 1:i + 2] == "-":
            out.append("{}")
    return "".join(out)


def _breakable(text: str) -> str:
    """Escaped ``text`` that may break after | , / : (signatures and paths are long)."""
    out = []
    for ch in text:
        out.append(latex_escape(ch) + (r"\allowbreak{}" if ch in "|,/:" else ""))
    return "".join(out)


def latex_inline(text: str) -> str:
    """Markdown-inline text of the report blocks (``**bold**``, ```code```) as LaTeX."""
    wrap = {"code": lambda t: r"\texttt{" + _breakable(t) + "}", "b": lambda t: r"\textbf{" + latex_escape(t) + "}",
            "": latex_escape}
    return "".join(wrap[kind](t) for kind, t in inline_spans(text))


def _cell(text: str, cls: str) -> str:
    t = latex_escape(text)
    return {"best": r"\textbf{" + t + "}", "em": r"\emph{" + t + "}"}.get(cls, t)


def latex_tabular(header: Sequence[str], rows: Sequence[Sequence[tuple[str, str]]], align: str) -> str:
    """A booktabs tabular: header, \\midrule, one line per row; ``best`` cells bold, ``em`` italic."""
    cols = "".join({"n": "r", "w": r">{\raggedright\arraybackslash}p{0.2\linewidth}"}.get(a, a) for a in align)
    lines = [r"\begin{tabular}{" + cols + "}", r"\toprule",
             " & ".join(latex_escape(h) for h in header) + r" \\", r"\midrule"]
    lines += [" & ".join(_cell(t, cls) for t, cls in r) + r" \\" for r in rows]
    return "\n".join(lines + [r"\bottomrule", r"\end{tabular}"]) + "\n"


def _table(b: Table, placement: str) -> list[str]:
    """A table float: the first caption line as \\caption, further lines as notes under the tabular;
    shrunk to the line width when wider."""
    caption, *notes = b.caption.split("\n") if b.caption else [""]
    lines = [rf"\begin{{table}}[{placement}]", r"\centering\small"]
    if caption:
        lines.append(r"\caption{" + latex_inline(caption) + "}")
    lines += [r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
              latex_tabular(b.header, b.rows, b.align).rstrip("\n") + "}"]
    if notes:
        lines.append(r"\par\smallskip{\footnotesize " + r"\\ ".join(latex_inline(n) for n in notes) + r"\par}")
    return lines + [r"\end{table}"]


def blocks_latex(blocks: Sequence[Block], placement: str = "htbp") -> str:
    """The blocks as LaTeX body text (headings unnumbered, tables as floats at ``placement``)."""
    lines: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            lines.append({1: r"\section*", 2: r"\subsection*"}.get(b.level, r"\subsubsection*")
                         + "{" + latex_escape(b.text) + "}")
        elif isinstance(b, Para):
            lines.append(r" \\".join(latex_inline(t) for t in b.text.split("\n")))
        elif isinstance(b, Bullets):
            lines += ([latex_inline(b.lead)] if b.lead else []) + [r"\begin{itemize}"]
            lines += [r"\item " + latex_inline(i) for i in b.items] + [r"\end{itemize}"]
        elif isinstance(b, Table):
            lines += _table(b, placement)
        else:
            lines += [r"{\footnotesize\ttfamily\raggedright"] + [_breakable(t) + r"\par" for t in b.lines] + ["}"]
        lines.append("")
    return "\n".join(lines)


def latex_fragment(blocks: Sequence[Block]) -> str:
    """``--format latex``: the blocks to paste into a paper (tables as ``table`` floats)."""
    return FRAGMENT_HEAD + "\n" + blocks_latex(blocks)


def pdftex_missing(text: str) -> list[str]:
    """Characters of ``text`` that pdflatex with T1 + utf8 cannot typeset (sorted)."""
    return sorted({ch for ch in text if ord(ch) >= 0x180 and ch not in _PDFTEX_EXTRA})
