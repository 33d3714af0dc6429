"""The answer is where users look: the README's first screen states what the shipped study found, with the
numbers of docs/findings.md (read from its tables here), the command that reproduces it and a link; the README
shows `clir-eval pool`; docs/index.md links the findings; docs/pooling.md's sample answer line is the line
`clir-eval pool` writes for findings.md's MAP pairs; docs/progress.md shows every progress row a run draws."""

from __future__ import annotations

import re
from pathlib import Path

from clir_eval.pooling.summary import summaries

ROOT = Path(__file__).resolve().parents[1]
FINDINGS = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
FIRST_SCREEN = 40  # lines of the README a reader sees before scrolling far


def _num(text: str) -> float:
    return float(text.replace("−", "-"))


def map_pairs() -> list[dict]:
    """findings.md's pooled MAP pairs table: a − b, Δτ, 95% CI, p (Holm), equivalent."""
    block = FINDINGS.split("| a − b | Δτ | 95% CI | p (Holm) | equivalent within ±0.1 |")[1].split("\n\n")[0]
    rows = []
    for line in block.strip().splitlines()[1:]:
        ab, delta, ci, p, eq = [c.strip() for c in line.strip("|").split("|")]
        a, b = ab.split(" − ")
        lo, hi = (_num(x) for x in ci.strip("[]").split(","))
        rows.append({"target": "map", "a": a, "b": b, "delta": _num(delta), "ci": [lo, hi], "p_adjusted": _num(p),
                     "significant": _num(p) < 0.05, "equivalent": eq.startswith("yes")})
    return rows


def bleu_threshold() -> tuple[float, str, str]:
    """findings.md's pooled BLEU Δ at 90% agreement with retrieval on MAP, and its 90% CI."""
    row = next(line for line in FINDINGS.splitlines() if line.startswith("| BLEU | "))
    cells = [c.strip() for c in row.strip("|").split("|")]
    lo, hi = cells[-1].strip("[]").split(", ")
    return float(cells[4]), lo, hi


def test_readme_first_screen_states_the_findings_with_their_numbers_command_and_link():
    head = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:FIRST_SCREEN])
    bound = max(abs(v) for p in map_pairs() for v in p["ci"])
    assert f"within ±{bound:.2f}" in head and not any(p["significant"] for p in map_pairs())
    d90, lo, hi = bleu_threshold()
    assert f"BLEU difference of about {round(d90)} points" in head and f"(90% CI {lo}–{hi})" in head
    assert "configs/study/run_study.sh out/study" in head and "(docs/findings.md)" in head
    n = re.search(r"MAP is the one target all (\w+) collections share \((\d+) systems", FINDINGS)
    assert n and f"{n.group(1)} real collections, {n.group(2)} MT systems" in head


def test_readme_shows_pool_and_index_links_the_findings():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Pool runs")[1].split("\n## ")[0]
    assert re.search(r"```bash\nclir-eval pool \S+ \S+", section) and "(docs/pooling.md)" in section
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert "(findings.md)" in index and "run_study.sh" in index


class _Pooled:
    """What summaries() reads of a PoolResult, from findings.md's MAP pairs over its nine runs."""

    def __init__(self, pairs: list[dict], n_tasks: int):
        self.pairs = pairs
        metrics = dict.fromkeys(m for p in pairs for m in (p["a"], p["b"]))
        self.leaderboard = [{"target": "map", "metric": m, "cluster": 1, "n_tasks": n_tasks} for m in metrics]
        self.settings = {"margin": 0.1, "correction": "holm", "alpha": 0.05}


def test_pooling_md_sample_line_is_what_pool_writes_for_the_findings():
    runs = len(re.search(r"\(\d+ systems: ([\d,\s]+)\)\. Equal weights", FINDINGS).group(1).split(","))
    (row,) = summaries(_Pooled(map_pairs(), runs))
    quoted = re.search(r"one line per target — the answer — for example:\n\n((?:> .*\n)+)",
                       (ROOT / "docs" / "pooling.md").read_text(encoding="utf-8")).group(1)
    assert " ".join(line[2:] for line in quoted.splitlines()) == row["text"]


def test_progress_md_shows_every_row_a_run_draws():
    src = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "clir_eval" / "pipeline").glob("*.py"))
    labels = set(re.findall(r"progress\.(?:stage|bar)\(\s*\"([^\"{]+)\"", src))
    labels |= set(re.findall(r"progress\.stage\(\n\s+\"([^\"{]+)\"", src))
    assert {"systems: MT + BM25", "IR measures", "item scores", "item-level statistics", "correlations",
            "reports"} <= labels, labels
    page = (ROOT / "docs" / "progress.md").read_text(encoding="utf-8")
    shown = page.split("```")[1]
    missing = [lb for lb in labels if lb.strip() not in page or (lb != "index shards" and "resampling" not in lb
                                                                 and lb.strip() not in shown)]
    assert not missing, missing
