"""LaTeX output (issue 14 item 4): ``correlate --format latex`` and report.tex are the Markdown
content in booktabs tables with every special character escaped; the numbers equal the TSV's;
report.tex compiles with pdflatex when a TeX engine is installed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from clir_eval.report import REPORT_FILES, write_reports
from clir_eval.report.latex import latex_escape, latex_inline
from clir_eval.report.tables import first_screen_lines, fmt_tau, latex_report, markdown, render, tau_rows

SPECIALS = "&%$#_{}~^\\<>|"
NASTY = "sys&1%_#{x}~^\\$<>|--"  # every LaTeX special in one system name


def _scan(tex: str, allow_amp: bool = False) -> list[str]:
    """Problems in LaTeX text: unbalanced braces and unescaped specials (a command is a backslash
    and letters, or a backslash and one symbol; a % ending a line is the usual line-end comment)."""
    problems, depth, i = [], 0, 0
    while i < len(tex):
        ch = tex[i]
        if ch == "\\":
            j = i + 1
            while j < len(tex) and tex[j].isalpha():
                j += 1
            i = max(j, i + 2)
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                problems.append(f"unbalanced }} at {i}")
                depth = 0
        elif ch in "%$#_^~" and tex[i:i + 2] != "%\n" or (ch == "&" and not allow_amp):  # "%\n": the {%<eol> idiom
            problems.append(f"unescaped {ch!r} at {i}: {tex[max(0, i - 20):i + 20]!r}")
        i += 1
    if depth:
        problems.append(f"{depth} unclosed {{")
    return problems


DETEX = {r"\ensuremath{\rightarrow}": "→", r"\ensuremath{\tau}": "τ", r"\ensuremath{\times}": "×", r"\ensuremath{\geq}": "≥", r"\ensuremath{\alpha}": "α",
         r"\ensuremath{\Delta}": "Δ", r"\textless{}": "<", r"\textgreater{}": ">", r"\textbar{}": "|",
         r"\textbackslash{}": "\\", r"\textasciitilde{}": "~", r"\textasciicircum{}": "^", r"\allowbreak{}": "",
         "-{}": "-", "---": "—", "\\&": "&", "\\%": "%", "\\$": "$", "\\#": "#", "\\_": "_", "\\{": "{", "\\}": "}"}


def _detex(tex: str) -> str:
    """Plain text of a line of the report (written here, independently of the module's tables)."""
    for k, v in DETEX.items():
        if k.endswith("}"):
            tex = tex.replace(k, v)
    tex = re.sub(r"\\(?:textbf|emph|texttt)\{((?:[^{}\\]|\\[^{}]|\\[{}])*)\}", r"\1", tex)
    for k, v in DETEX.items():
        tex = tex.replace(k, v)
    return tex


def test_every_special_is_escaped():
    for ch in SPECIALS:
        esc = latex_escape(f"a{ch}b")
        assert not _scan(esc), (ch, esc)
        assert _detex(esc) == f"a{ch}b"
    assert latex_escape("a--b") == "a-{}-b"  # no en dash out of a name
    assert latex_escape("τ ≥ × Δ") == r"\ensuremath{\tau} \ensuremath{\geq} \ensuremath{\times} \ensuremath{\Delta}"
    assert not _scan(latex_escape(NASTY))
    assert latex_inline("**a_b** and `x|y`") == r"\textbf{a\_b} and \texttt{x\textbar{}\allowbreak{}y}"
    assert latex_inline("a ** b") == r"a ** b"  # an unpaired marker stays literal


def test_tau_table_in_latex_is_booktabs_with_marks():
    rows = tau_rows([(["map_1"], {"a": {"tau": 0.5, "significant": False}, "b&c": {"tau": 0.9, "significant": True}})],
                    ["a", "b&c"])
    tex = render(["", "a", "b&c"], rows, "latex")
    lines = tex.splitlines()
    assert lines[0] == r"\begin{tabular}{lrr}" and lines[1] == r"\toprule" and lines[3] == r"\midrule"
    assert lines[2] == r" & a & b\&c \\"
    assert lines[4] == r"map\_1 & \ensuremath{\times}.500 & \textbf{.900} \\"
    assert lines[-2:] == [r"\bottomrule", r"\end{tabular}"]
    assert not _scan(tex, allow_amp=True)


def _results():
    """A results.json with awkward names: every special in a system, metric and target name."""
    systems = {NASTY: {"mt": {"bleu": 30.0, "m_1%": 0.4}, "ir": {"map": 0.3, "P_10": 0.2}},
               "b": {"mt": {"bleu": 20.0, "m_1%": 0.5}, "ir": {"map": 0.2, "P_10": 0.25}},
               "c": {"mt": {"bleu": 10.0, "m_1%": 0.3}, "ir": {"map": 0.1, "P_10": 0.1}}}
    for e in systems.values():
        e["queries"] = {"evaluated": 40, "total": 42, "skipped": {"no relevant_doc": 2}}
    corr = []
    for y, taus in (("map", {"bleu": 1.0, "m_1%": -1 / 3}), ("P_10", {"bleu": 1 / 3, "m_1%": 1 / 3})):
        for x, t in taus.items():
            corr.append({"kind": "mt-ir", "x": x, "y": y, "mt_metric": x, "ir_measure": y, "tau": t, "p_value": 0.02 if t == 1 else 0.6,
                         "n": 3, "significant": t == 1.0, "method": "kendall", "variant": "b", "alpha": 0.05,
                         "reason": None})
    vds = [{"target": "map", "group": None, "kind": "mt-ir", "clusters": [["bleu"], ["m_1%"]], "winner": "bleu",
            "pairwise": [{"a": "bleu", "b": "m_1%", "delta": 1.333, "p_value": 0.01, "p_adjusted": 0.02, "significant": True}],
            "correction": "holm", "alpha": 0.05, "family": "2 pairs {x} & 100% of #targets", "min_significant_tau": 1.0,
            "n_systems": 3, "discriminability": {"pairs_separated": 2, "pairs": 3, "queries": 40}, "informative": True,
            "warnings": ["only 3 systems: ~nothing can be significant at α = 0.05 (p ≥ α)"], "notes": []},
           {"target": "P_10", "group": None, "kind": "mt-ir", "clusters": [["bleu", "m_1%"]], "winner": None,
            "pairwise": [], "correction": "holm", "alpha": 0.05, "family": "f", "min_significant_tau": None,
            "n_systems": 3, "discriminability": None, "informative": False, "warnings": [], "notes": []}]
    return {"name": "exp_1 & co", "systems": systems, "correlations": corr, "comparisons": [], "verdicts": vds,
            "english": {"ir": {"map": 0.5, "P_10": 0.4}}, "score_kinds": {"mt": ["bleu", "m_1%"], "ir": ["map", "P_10"],
                                                                         "human": [], "lower_is_better": []},
            "notes": ["a note with $5 and 50% and C:\\path_x"],
            "signature": {"versions": {"clir_eval": "0.1.0"}, "retrieval": "bm25:k1=1.5|path:/a_b/c#d"}}


def _body(tex: str) -> str:
    return tex.split("\\begin{document}")[1].split("\\end{document}")[0]


def test_report_tex_is_the_markdown_content():
    res = _results()
    tex = latex_report(res)
    body = _body(tex)
    assert not _scan(body, allow_amp=True)
    md = markdown(res)
    # the same bullet statements (the first screen's summary, verdicts, warnings, notes), nothing more, nothing less
    md_items = [ln[2:].replace("**", "") for ln in md.splitlines() if ln.startswith("- ")]
    tex_items = [_detex(ln[len("\\item "):]) for ln in body.splitlines() if ln.startswith("\\item ")]
    assert tex_items == md_items and len(md_items) == 4 + len(first_screen_lines(res)) and first_screen_lines(res)
    # the same headings
    md_heads = [ln.lstrip("# ") for ln in md.splitlines() if ln.startswith("#")]
    tex_heads = [_detex(m) for m in re.findall(r"\\(?:sub)?section\*\{(.*)\}", body)]
    assert tex_heads == md_heads
    # booktabs: one rule set per table, every body row with as many cells as its header
    assert body.count("\\toprule") == body.count("\\midrule") == body.count("\\bottomrule") == 4  # + pairwise Δτ
    for tab in re.findall(r"\\begin\{tabular\}\{(\w+)\}\n(.*?)\\end\{tabular\}", body, re.S):
        ncol = len(tab[0])
        for row in tab[1].splitlines():
            if row.endswith("\\\\"):
                assert len(re.split(r"(?<!\\)&", row)) == ncol, row
    assert "\\caption{" in body and "\\ensuremath{\\times} = p \\ensuremath{\\geq} \\ensuremath{\\alpha}" in body


def test_report_tex_numbers_equal_the_tsv(tmp_path):
    res = _results()
    write_reports(res, tmp_path, plots=False)
    assert "report.tex" in REPORT_FILES and (tmp_path / "report.tex").exists()
    body = _body((tmp_path / "report.tex").read_text(encoding="utf-8"))
    header = (tmp_path / "correlations.tsv").read_text().splitlines()[0].split("\t")
    tsv = [dict(zip(header, ln.split("\t"))) for ln in (tmp_path / "correlations.tsv").read_text().splitlines()[1:]]
    tab = re.search(r"\\begin\{tabular\}\{lrr\}\n(.*?)\\end\{tabular\}", body, re.S).group(1).splitlines()
    cols = [_detex(c.strip()) for c in re.split(r"(?<!\\)&", tab[1].rstrip("\\ "))][1:]
    cells = {}
    for row in tab[3:-1]:
        parts = [c.strip() for c in re.split(r"(?<!\\)&", row.rstrip("\\ "))]
        for x, c in zip(cols, parts[1:]):
            cells[(_detex(parts[0]), x)] = c
    assert len(cells) == len(tsv) == 4
    for r in tsv:
        c = cells[(r["y"], r["x"])]
        plain = _detex(c)
        assert plain.lstrip("×") == fmt_tau(float(r["tau"]))
        assert plain.startswith("×") == (r["significant"] == "false")
    assert cells[("map", "bleu")].startswith("\\textbf{")  # the row's highest τ, as **bold** in report.md
    head, *rows = [ln.split("\t") for ln in (tmp_path / "scores.tsv").read_text().splitlines()
                   if not ln.startswith("# ")]  # the English side's comment line: tests/test_report_tables.py
    for r in rows:  # every system's row of scores, same values as scores.tsv (4 decimals as in report.md)
        want = latex_escape(r[0]) + " & " + " & ".join(f"{float(v):.4f}" for v in r[1:]) + r" \\"
        assert want in body.splitlines(), want


def test_correlate_latex_matches_tsv_and_md(cli, tmp_path):
    t = tmp_path / "t.tsv"
    t.write_text("system\tlang_x\tBLEU\tchr&F\tMAP_1\tP%10\n"
                 + "".join(f"s{i}\t{g}\t{10 + i * k}\t{0.4 + (i % 3) / 10}\t{0.2 + i / 50}\t{0.1 + ((i * 7) % 5) / 20}\n"
                           for g, k in (("d$e", 1), ("c#s", -1)) for i in range(6)))
    args = ["correlate", "--table", t, "--x", "BLEU,chr&F", "--y", "MAP_1,P%10", "--group-by", "lang_x"]
    code, tex, err = cli(*args, "--format", "latex")
    assert code == 0, err
    assert not _scan(tex.split("\n", 1)[1], allow_amp=True)
    assert tex.count("\\toprule") == 2  # the τ table and the per-metric summary
    code, out, _ = cli(*args, "--format", "tsv")
    head, *rows = [ln.split("\t") for ln in out.splitlines()]
    tsv = {(r[0], r[2], r[1]): dict(zip(head, r)) for r in rows}
    tab = re.search(r"\\begin\{tabular\}\{llrr\}\n(.*?)\\end\{tabular\}", tex, re.S).group(1).splitlines()
    assert [_detex(c.strip()) for c in re.split(r"(?<!\\)&", tab[1].rstrip("\\ "))] == ["Group", "Measure", "BLEU", "chr&F"]
    seen, bold_tex = 0, []
    for row in tab[3:-1]:
        raw = [c.strip() for c in re.split(r"(?<!\\)&", row.rstrip("\\ "))]
        bold_tex += [_detex(c) for c in raw[2:] if c.startswith("\\textbf{")]
        g, y, *cells = [_detex(c) for c in raw]
        for x, c in zip(["BLEU", "chr&F"], cells):
            r = tsv[(g, y, x)]
            assert c.lstrip("×") == (fmt_tau(float(r["tau"])) if r["tau"] else "n/a")
            assert c.startswith("×") == (r["significant"] == "false")
            seen += 1
    assert seen == len(tsv) == 8
    code, md, _ = cli(*args, "--format", "md")
    bold_md = re.findall(r"\*\*([^*]+)\*\*", md.split("\n\n")[0])
    assert bold_md == bold_tex and bold_md


def test_correlate_latex_bad_format_is_one_error_line(cli, tmp_path):
    t = tmp_path / "t.tsv"
    t.write_text("system\ta\tb\ns1\t1\t2\ns2\t2\t3\ns3\t3\t1\n")
    code, out, err = cli("correlate", "--table", t, "--x", "a", "--y", "b", "--format", "tex")
    assert code == 2 and err.startswith("error: ") and "latex" in err and err.count("\n") == 1


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
def test_report_tex_and_correlate_fragment_compile_with_pdflatex(cli, tmp_path):
    res = _results()
    res["systems"]["Zürich-é"] = res["systems"].pop("c")  # Latin accents compile with pdflatex (T1 + utf8)
    res["systems"]["Система"] = res["systems"].pop("b")  # other scripts: a ? in pdflatex, with a note
    res["notes"].append("MT output in the reference: 中文 \x0c “quoted” 🙂")
    write_reports(res, tmp_path, plots=False)
    tex = (tmp_path / "report.tex").read_text(encoding="utf-8")
    for ch in "Сиcтема中文🙂":  # the third letter is a Latin c: ASCII, not declared
        assert (f"\\DeclareUnicodeCharacter{{{ord(ch):04X}}}" in tex) == (ch not in "c"), ch
    assert "\\DeclareUnicodeCharacter{201C}" not in tex  # typeset by pdflatex itself
    assert "shows characters outside the Latin script as ?" in tex
    t = tmp_path / "t.tsv"
    t.write_text("system\tBLEU_1\tMAP%\n" + "".join(f"s&{i}\t{i}\t{(i * 3) % 5}\n" for i in range(6)))
    code, frag, err = cli("correlate", "--table", t, "--x", "BLEU_1", "--y", "MAP%", "--format", "latex", "--verdicts",
                          "--permutation", "50")
    assert code == 0, err
    (tmp_path / "frag.tex").write_text("\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage{booktabs}"
                                       "\\usepackage{graphicx}\\begin{document}\n" + frag + "\\end{document}\n")
    for name in ("report.tex", "frag.tex"):
        p = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", name],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stdout[-2000:]
        assert (tmp_path / name.replace(".tex", ".pdf")).stat().st_size > 1000


def test_report_command_writes_report_tex(cli, tmp_path):
    (tmp_path / "results.json").write_text(json.dumps(_results()))
    code, out, err = cli("report", tmp_path)
    assert code == 0, err
    tex = (tmp_path / "report.tex").read_text(encoding="utf-8")
    assert tex.startswith("% report.tex") and tex.rstrip().endswith("\\end{document}")
