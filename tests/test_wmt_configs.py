"""End-to-end runs of the shipped WMT21 configs on the real data (skipped without ../shared/data).

Each config is run once per module (``clir-eval run``) from a copy whose only changes are
fewer bootstrap/permutation draws (100 each, for speed) and an absolute data root; the
retrieval, queries and MT settings are the shipped ones. Assertions are sanity checks
(every system present, human scores joined, τ in [-1, 1], documented notes) plus two
*pinned observations* about reference B on ru-en, documented in configs/wmt21_ru_en.yaml
and docs/tutorials/wmt-documents.md: they are what the data gave, not what the
issue expected, and a change in them means retrieval, query generation or scoring changed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from clir_eval.cli import main as cli_main

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
DRAWS = 100


def _run(config: str, shared_data: Path, tmp: Path) -> dict:
    cfg = yaml.safe_load((CONFIGS / config).read_text(encoding="utf-8"))
    cfg["correlation"] = {**cfg.get("correlation", {}), "bootstrap": DRAWS, "permutation": DRAWS}
    cfg["data_root"] = str(shared_data)
    path = tmp / config
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    out = tmp / (config + ".out")
    code = cli_main(["run", str(path), "--out", str(out), "--quiet", "--jobs", "1"])
    assert code == 0, f"clir-eval run {config} exited with {code}"
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def ru_en(shared_data, tmp_path_factory):
    return _run("wmt21_ru_en.yaml", shared_data, tmp_path_factory.mktemp("ru_en"))


@pytest.fixture(scope="module")
def is_en(shared_data, tmp_path_factory):
    return _run("wmt21_is_en.yaml", shared_data, tmp_path_factory.mktemp("is_en"))


@pytest.fixture(scope="module")
def de_en(shared_data, tmp_path_factory):
    return _run("wmt21_de_en_sentences.yaml", shared_data, tmp_path_factory.mktemp("de_en"))


@pytest.fixture(scope="module")
def ru_en_xml(shared_data):
    from clir_eval.sources.wmt import read_wmt_xml

    return read_wmt_xml(shared_data / "wmt21-docs" / "newstest2021.ru-en.all.xml.gz")


def _check_sane(res: dict, systems: set[str], mt: list[str], ir: list[str], human: str = "human_z") -> None:
    assert set(res["systems"]) == systems
    for name, s in res["systems"].items():
        for m in mt:
            assert math.isfinite(s["mt"][m]), (name, m)
        for m in ir:
            assert 0.0 <= s["ir"][m] <= 1.0, (name, m)
        assert math.isfinite(s["human"][human]), name
    kinds = {c["kind"] for c in res["correlations"]}
    assert {"mt-ir", "mt-human", "ir-human"} <= kinds
    pairs = {(c["x"], c["y"]) for c in res["correlations"]}
    assert {(m, i) for m in mt for i in ir} <= pairs
    for c in res["correlations"]:
        assert c["tau"] is not None and -1.0 <= c["tau"] <= 1.0, c
        assert 0.0 <= c["p_value"] <= 1.0, c


# --------------------------------------------------------------------------- ru-en
def test_ru_en_every_system_and_ref_b(ru_en, ru_en_xml):
    assert len(ru_en_xml.systems) == 10
    _check_sane(
        ru_en,
        set(ru_en_xml.systems) | {"ref-B"},
        ["bleu", "chrf1", "macrof1", "microf1"],
        ["map", "recip_rank", "recall_10", "rbo:p=0.9"],
    )
    assert math.isfinite(ru_en["systems"]["ref-B"]["ir"]["map"])
    assert ru_en["systems"]["ref-B"]["attrs"]["label"] == "ref:B"


def test_ru_en_ref_b_coverage_is_the_test_suites(ru_en, ru_en_xml):
    """Reference B lacks exactly the test-suite documents, which are left out; the notes say so."""
    suites = {d for d in ru_en_xml.docids if ru_en_xml.testsuite[d]}
    lacking = {d for d in ru_en_xml.docids if d not in ru_en_xml.references["B"]}
    assert len(ru_en_xml.docids) == 116 and lacking == suites and len(suites) == 9
    notes = " ".join(ru_en["notes"])
    assert "9 test-suite document(s) left out" in notes and "107 documents used" in notes
    assert "Reference B lacks 9 of 116 documents, all of them test-suite documents" in notes
    assert ru_en["systems"]["ref-B"]["collection"]["n_empty_docs"] == 0
    assert ru_en["english"]["n_docs"] == 107


def test_ru_en_human_row_is_ref_b(ru_en):
    assert any("'HUMAN' row is taken to be reference B" in n for n in ru_en["notes"])


def _rank(values: dict[str, float], name: str) -> int:
    """1 + the number of systems strictly better than ``name``."""
    return 1 + sum(v > values[name] for k, v in values.items() if k != name)


def test_ru_en_ref_b_rank_pinned_observation(ru_en):
    """Pinned observation (not the issue's expectation "near the top"): with reference A's
    headlines as queries, reference B has the lowest MAP, RR and RBO of the 11 systems, and its
    BLEU against reference A is below that of 9 of the 10 MT systems — the second human
    translation paraphrases where MT stays literal, and reference-A headlines reward
    literalness. The per-query gap is small (see docs/tutorials/wmt-documents.md); this pins the rank only."""
    sys = ru_en["systems"]
    n = len(sys)
    for measure in ("map", "recip_rank", "rbo:p=0.9"):
        assert _rank({k: v["ir"][measure] for k, v in sys.items()}, "ref-B") == n, measure
    assert _rank({k: v["mt"]["bleu"] for k, v in sys.items()}, "ref-B") == n - 1


# --------------------------------------------------------------------------- is-en
def test_is_en_sane(is_en, shared_data):
    from clir_eval.sources.wmt import read_wmt_xml

    ts = read_wmt_xml(shared_data / "wmt21-docs" / "newstest2021.is-en.all.xml.gz")
    assert len(ts.systems) == 10
    _check_sane(is_en, set(ts.systems), ["bleu", "chrf1", "macrof1", "microf1"], ["map", "recip_rank", "recall_10"])


# --------------------------------------------------------------------------- de-en sentences
def test_de_en_sentences_sane(de_en, shared_data):
    names = sorted(
        p.name.removeprefix("newstest2021.de-en.hyp.").removesuffix(".en.gz")
        for p in (shared_data / "wmt21" / "de-en").glob("newstest2021.de-en.hyp.*.en.gz")
    )
    assert len(names) == 19
    _check_sane(de_en, set(names), ["bleu", "chrf1", "macrof1", "microf1"], ["map", "ndcg", "P_10", "rbo"])
    assert de_en["english"]["n_docs"] == 1000 and de_en["english"]["n_queries"] == 150


def test_de_en_sentences_queries_evaluated(de_en, shared_data):
    """Only GOV2 titles sharing an index term with some reference-A sentence get pseudo-qrels
    (an empty English-side run gives none); counted here independently of BM25."""
    from clir_eval.io.files import read_lines
    from clir_eval.io.readers import read_queries
    from clir_eval.retrieval.analysis import get_analyzer

    an = get_analyzer("default", stopwords="english")
    vocab = {t for line in read_lines(shared_data / "wmt21/de-en/newstest2021.de-en.ref.A.en.gz") for t in an.tokenize(line)}
    queries: dict[str, str] = {}
    for f in sorted((shared_data / "gov2-topics").glob("topics.terabyte0*.txt")):
        queries.update(read_queries(f, fmt="trec", fields=("title",)))
    matching = {q for q, text in queries.items() if set(an.tokenize(text)) & vocab}
    for name, s in de_en["systems"].items():
        assert set(s["ir_per_query"]) == matching, name
    assert 0 < len(matching) < len(queries)


# --------------------------------------------------------------------------- config check (no data needed)
def test_generated_queries_need_a_wmt_source(tmp_path, cli):
    """`queries.generate` only works on WMT XML documents; with a plain collection it is a
    config error naming the field, not an empty evaluation."""
    lines = tmp_path / "en.txt"
    lines.write_text("a b c\nd e f\n", encoding="utf-8")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "systems": [{"name": n, "hyp": str(lines), "docs": str(lines)} for n in ("s1", "s2", "s3")],
                "mt": {"refs": [str(lines)]},
                "collection": {"english": str(lines), "format": "lines"},
                "queries": {"generate": "keywords"},
            }
        ),
        encoding="utf-8",
    )
    code, out, err = cli("validate", cfg)
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "queries.generate: generated queries need a wmt: source" in err
