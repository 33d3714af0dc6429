"""Numbers quoted in the docs come from the commands the docs give: docs/replications.md's sentence on the
verdicts of Gowda et al. 2021 Table 4 is what its documented command prints."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_replication_table4 import _script_args

ROOT = Path(__file__).resolve().parents[1]
LABELS = {"2B": "LT", "2C": "PS", "2S": "BG", "ANALYSIS": "In", "DEVANALYSIS": "In+Ext", "mAQWV": "AQWV"}


def _label(group: str, y: str) -> str:
    lang, dom = group.split("-")[:2]
    return f"{LABELS[lang]} {LABELS[dom]}, {LABELS.get(y, y)}"


@pytest.mark.shared_data
def test_replications_table4_sentence_is_what_the_command_prints(cli, shared_data):
    text = " ".join((ROOT / "docs" / "replications.md").read_text(encoding="utf-8").split())
    m = re.search(r"Holm-adjusted within each row \(its (\d+) metric pairs\), no difference between two metrics is "
                  r"significant; the closest is ([A-Z]{2} In(?:\+Ext)?, [A-Z]+): (\w+) > (\w+) \(Δτ ([+-]\d\.\d+), p_adj ([\d.]+), "
                  r"(\d+) systems\)\. No row has a single winner, so MacroF1's highest τ in (\d+) of (\d+) rows is not "
                  r"evidence that it beats the others on these (\d+)–(\d+) systems", text)
    assert m, "docs/replications.md: the Table 4 verdict sentence changed; update this test with it"
    code, out, err = cli(*_script_args(shared_data, "json"))
    assert code == 0, err
    res = json.loads(out)
    vds = res["verdicts"]
    assert {v["family_size"] for v in vds} == {int(m.group(1))}
    assert not any(p["significant"] for v in vds for p in v["pairwise"])
    v, p = min(((v, p) for v in vds for p in v["pairwise"]), key=lambda vp: vp[1]["p_adjusted"])
    assert (_label(v["group"], v["y"]), p["a"], p["b"]) == (m.group(2), m.group(3), m.group(4))
    assert f"{p['delta']:+.3f}" == m.group(5) and f"{p['p_adjusted']:.2g}" == m.group(6)
    assert str(p.get("n", v["n_systems"])) == m.group(7)
    assert all(w["winner"] is None for w in vds) and len(vds) == int(m.group(9))
    rows: dict = {}
    for c in res["correlations"]:
        rows.setdefault((c["group"], c["y"]), {})[c["x"]] = c["tau"]
    wins = sum(max(r, key=r.get) == "MacroF1" for r in rows.values())
    assert wins == int(m.group(8))
    n = sorted({v["n_systems"] for v in vds})
    assert (n[0], n[-1]) == (int(m.group(10)), int(m.group(11)))


def test_the_docs_extra_holds_only_the_sites_tools_and_the_readme_installs_it():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    name = lambda req: re.split(r"[<>=!~\[ ;]", req, maxsplit=1)[0].lower()  # noqa: E731
    docs = {name(r) for r in extras["docs"]}
    assert docs == {"mkdocs", "mkdocs-material"}  # mkdocs.yml: theme material, its markdown extensions
    assert docs <= {name(r) for r in extras["test"]}  # the docs tests build the site
    assert "pip install -e '.[docs]' && mkdocs serve" in (ROOT / "README.md").read_text()


def test_architecture_lists_every_field_of_an_external_table():
    from dataclasses import fields

    from clir_eval.sources.settings import ExternalTable

    (row,) = [ln for ln in (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines()
              if ln.startswith("|") and "`ExternalTable`" in ln]
    listed = set(re.findall(r"`(\w+)`", row.split("|")[3]))
    assert listed == {f.name for f in fields(ExternalTable)} - {"where"}  # where: the YAML path, for messages
