"""Query translation (``translate: queries``) where the answer is known by construction.

Every document of the generated test set has a headline of words found only in that document's body. System
``S<k>`` translates the headlines of the first ``k`` documents into words found nowhere (and every body into
noise): its translated query retrieves its target first when the headline is intact and nothing otherwise, so
its mean reciprocal rank is exactly ``(n - k) / n``, whatever its bodies, and the systems' retrieval ranking is
known. The same data given as files (collection, human queries, per-system query files, qrels) must give the
same scores. A small real-data check on WMT21 en-is (skipped without ../shared/data) compares each query's
reciprocal rank with rank_bm25 run by hand.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from wmt_gen import write_xml

from clir_eval.config.load import load_config
from clir_eval.errors import UserError
from clir_eval.pipeline.run import run_experiment

N_DOCS = 12
CORRUPTED = (0, 3, 6, 9)  # S<k> garbles the headlines of k documents
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wmt21-docs"


def _unique_words(n: int, rng: random.Random, seen: set[str]) -> list[str]:
    out = []
    while len(out) < n:
        w = "".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(4))
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out


def _data(seed: int = 3):
    """(reference {doc: segments}, {system: {doc: segments}}): headline words recur in their own body only."""
    rng = random.Random(seed)
    seen: set[str] = set()
    ref = {}
    for i in range(N_DOCS):
        head = _unique_words(5, rng, seen)
        filler = _unique_words(12, rng, seen)
        body = [" ".join(head[:3] + filler[:4]), " ".join(head[3:] + filler[4:8]), " ".join(filler[8:] + head)]
        ref[f"doc{i:02d}"] = [" ".join(head), *body]
    systems = {}
    for k in CORRUPTED:
        docs = {}
        for j, (d, segs) in enumerate(ref.items()):
            head = " ".join(_unique_words(5, rng, seen)) if j < k else segs[0]
            docs[d] = [head, *(" ".join(_unique_words(7, rng, seen)) for _ in segs[1:])]
        systems[f"S{k}"] = docs
    return ref, systems


def _write_config(tmp: Path, body: dict) -> Path:
    cfg = {"name": "qt", "seed": 5, "translate": "queries", "mt": {"metrics": ["bleu", "chrf1"]},
           "retrieval": {"depth": 20}, "ir": {"measures": ["recip_rank", "map", "rbo:p=0.9"]},
           "correlation": {"bootstrap": 0, "permutation": 50}, **body}
    p = tmp / "exp.yaml"
    p.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return p


def _wmt_config(tmp: Path, **kw) -> Path:
    ref, systems = _data()
    xml = write_xml(tmp / "gen.xml", {"A": ref}, systems, src_lang=kw.pop("src_lang", "de"),
                    tgt_lang=kw.pop("tgt_lang", "en"))
    return _write_config(tmp, {"wmt": {"xml": str(xml), "reference": "A"}, "queries": {"generate": "headline"}, **kw})


def _run(cfg: Path, out: Path) -> dict:
    run_experiment(load_config(cfg), out, quiet=True, executor="serial")
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def wmt_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("qt")
    return tmp, _run(_wmt_config(tmp), tmp / "out")


def test_each_system_retrieves_exactly_its_intact_queries(wmt_run):
    tmp, r = wmt_run
    for k in CORRUPTED:
        ir = r["systems"][f"S{k}"]["ir"]
        assert ir["recip_rank"] == pytest.approx((N_DOCS - k) / N_DOCS, abs=1e-12)
        assert ir["map"] == pytest.approx((N_DOCS - k) / N_DOCS, abs=1e-12)
    assert r["english"]["ir"]["recip_rank"] == pytest.approx(1.0)
    mrr = [r["systems"][f"S{k}"]["ir"]["recip_rank"] for k in CORRUPTED]
    bleu = [r["systems"][f"S{k}"]["mt"]["bleu"] for k in CORRUPTED]
    assert mrr == sorted(mrr, reverse=True) and bleu == sorted(bleu, reverse=True)
    tau = {(c["x"], c["y"]): c["tau"] for c in r["correlations"]}
    assert tau[("bleu", "recip_rank")] == pytest.approx(1.0)


def test_the_run_says_its_architecture_and_language(wmt_run):
    _, r = wmt_run
    assert r["signature"]["architecture"] == {"translate": "queries", "name": "query translation", "language": "en"}
    assert r["config"]["translate"] == "queries"
    assert "relevance comes from the English reference side" in " ".join(r["confounds"]["notes"])
    assert any(n.startswith("Query translation: each system's translation of the headline of 12 documents")
               for n in r["notes"])
    report = (wmt_run[0] / "out" / "report.md").read_text(encoding="utf-8")
    assert "**Architecture: query translation.**" in report and "architecture.translate: queries" in report


def test_one_index_for_all_systems(wmt_run):
    tmp, r = wmt_run
    manifests = sorted((tmp / "out" / "cache" / "index").glob("*.manifest.json"))
    assert len(manifests) == 1, manifests
    assert all(v["collection"]["n_docs"] == N_DOCS for v in r["systems"].values())


def test_a_process_pool_gives_the_same_bytes(tmp_path, wmt_run):
    """The reference side runs first and the systems then share its index: the same results in worker processes."""
    qt_tmp, serial = wmt_run
    run_experiment(load_config(qt_tmp / "exp.yaml"), tmp_path / "local", quiet=True, executor="local", jobs=2)
    local = json.loads((tmp_path / "local" / "results.json").read_text(encoding="utf-8"))
    assert {k: v for k, v in local.items() if k != "timing"} == {k: v for k, v in serial.items() if k != "timing"}


def test_mt_metrics_score_the_query_translations(wmt_run):
    _, r = wmt_run
    assert r["systems"]["S0"]["mt"]["bleu"] == pytest.approx(100.0)  # intact headlines, whatever the bodies
    assert r["systems"]["S0"]["mt"]["chrf1"] == pytest.approx(100.0)


def test_item_level_items_are_the_queries(wmt_run):
    _, r = wmt_run
    block = r["item_level"]
    assert "skipped" not in block, block.get("skipped")
    assert block["items"]["queries"]["n"] == N_DOCS
    assert block["signals"]["S3"]["pairs_not_retrieved"] == 3


def test_files_give_the_same_scores_as_the_wmt_file(tmp_path, wmt_run):
    ref, systems = _data()
    coll = tmp_path / "collection.jsonl"
    coll.write_text("".join(json.dumps({"id": d, "text": " ".join(s[1:])}) + "\n" for d, s in ref.items()))
    (tmp_path / "queries.tsv").write_text("".join(f"{d}\t{s[0]}\n" for d, s in ref.items()))
    (tmp_path / "qrels.txt").write_text("".join(f"{d} 0 {d} 1\n" for d in ref))
    for name, docs in systems.items():
        (tmp_path / f"{name}.tsv").write_text("".join(f"{d}\t{s[0]}\n" for d, s in docs.items()))
    cfg = _write_config(tmp_path, {
        "collection": {"reference": str(coll)}, "queries": {"file": str(tmp_path / "queries.tsv")},
        "relevance": {"qrels": str(tmp_path / "qrels.txt")},
        "systems": {"pattern": str(tmp_path / "S{k}.tsv"), "name": "S{k}", "queries": "{path}"}})
    r = _run(cfg, tmp_path / "out")
    _, w = wmt_run
    for name in systems:
        assert r["systems"][name]["ir"] == w["systems"][name]["ir"]
        assert r["systems"][name]["mt"] == w["systems"][name]["mt"]
    assert r["signature"]["architecture"] == {"translate": "queries", "name": "query translation"}
    assert len(list((tmp_path / "out" / "cache" / "index").glob("*.manifest.json"))) == 1


def test_document_translation_of_the_same_set_differs(tmp_path):
    """The default architecture on the same XML searches each system's garbled bodies: not the QT scores."""
    cfg = _wmt_config(tmp_path)
    data = yaml.safe_load(cfg.read_text())
    data.pop("translate")
    cfg.write_text(yaml.safe_dump(data))
    r = _run(cfg, tmp_path / "out")
    assert r["signature"]["architecture"]["translate"] == "documents"
    assert "translate" not in r["config"]
    assert r["systems"]["S0"]["ir"]["recip_rank"] < 0.5  # its bodies share no word with the headlines


@pytest.mark.parametrize("src,tgt", [("en", "is"), ("de", "fr")])
def test_any_direction_takes_the_collection_language_from_the_file(tmp_path, src, tgt):
    r = _run(_wmt_config(tmp_path, src_lang=src, tgt_lang=tgt), tmp_path / "out")
    assert r["signature"]["architecture"]["language"] == tgt
    assert r["systems"]["S3"]["ir"]["recip_rank"] == pytest.approx((N_DOCS - 3) / N_DOCS)
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert f"*reference side, {tgt}*" in report and "*English reference*" not in report
    notes = " ".join(r["confounds"]["notes"])
    assert f"relevance comes from the reference side ({tgt}) of the same documents" in notes
    assert "English" not in notes


FRENCH = ("maison", "voiture", "fleur", "chanson", "jardin", "bateau")  # plural: + s (bateau: + x)
SAME = "arbre"  # one more document whose headline word is its body's, unchanged


def _french_config(tmp: Path, **body) -> Path:
    """A generated de-fr set whose headlines (queries) name a plural that each body has in the singular only:
    a match only through French stemming (and one headline that matches as it is). The one system copies the
    reference."""
    rng = random.Random(7)
    seen: set[str] = set(FRENCH)
    ref = {f"doc{i}": [w + ("x" if w.endswith("au") else "s"), " ".join(_unique_words(6, rng, seen) + [w])]
           for i, w in enumerate(FRENCH)}
    ref["doc_same"] = [SAME, " ".join(_unique_words(6, rng, seen) + [SAME])]
    xml = write_xml(tmp / "fr.xml", {"A": ref}, {"S": ref}, src_lang="de", tgt_lang="fr")
    return _write_config(tmp, {"wmt": {"xml": str(xml), "reference": "A"}, "queries": {"generate": "headline"},
                               **body})


def test_the_collection_language_sets_the_analyzer_unless_configured(tmp_path):
    r = _run(_french_config(tmp_path), tmp_path / "out")
    assert r["signature"]["retrieval_settings"]["language"] == "fr"
    assert r["english"]["ir"]["recip_rank"] == pytest.approx(1.0)  # maisons -> maison: French stemming
    assert r["systems"]["S"]["ir"]["recip_rank"] == pytest.approx(1.0)
    cfg = _french_config(tmp_path, retrieval={"depth": 20, "language": "en"})
    r = _run(cfg, tmp_path / "out_en")  # a configured language wins: no stemmer, no headline matches its body
    assert r["signature"]["retrieval_settings"]["language"] == "en"
    assert r["english"]["ir"]["recip_rank"] == pytest.approx(1 / (len(FRENCH) + 1))  # the unchanged headline only


def test_validate_says_the_language_it_will_use(tmp_path):
    cfg = _french_config(tmp_path)
    p = subprocess.run([sys.executable, "-m", "clir_eval", "validate", str(cfg)], capture_output=True, text=True,
                       cwd=Path(__file__).resolve().parents[1])
    assert p.returncode == 0, p.stderr
    assert "retrieval.language: fr (wmt.xml's target language" in p.stdout + p.stderr


def _bad(tmp: Path, body: dict, match: str) -> None:
    with pytest.raises(UserError, match=match):
        load_config(_write_config(tmp, body))


def test_config_errors_name_the_field(tmp_path):
    cfg = _wmt_config(tmp_path)
    base = yaml.safe_load(cfg.read_text())
    for key, value, match in [
        ("translate", "sentences", "translate: 'sentences' is not a CLIR architecture"),
        ("queries", {"generate": "keywords"}, "queries.generate: translate: queries with a wmt: source"),
        ("mt", {"metrics": ["bleu"], "refs": [str(cfg)]}, "mt.refs: with translate: queries"),
        ("collection", {"distractors": [{"xml": str(tmp_path / "gen.xml"), "translated": True}]},
         r"collection.distractors\[0\]: with translate: queries no system translates documents"),
    ]:
        _bad(tmp_path, {**{k: v for k, v in base.items() if k not in ("name",)}, key: value}, match)
    (tmp_path / "q.tsv").write_text("q1\thello\n")
    (tmp_path / "c.jsonl").write_text('{"id": "a", "text": "hello"}\n')
    files = {"collection": {"reference": str(tmp_path / "c.jsonl")}, "queries": {"file": str(tmp_path / "q.tsv")},
             "relevance": {"pseudo": {"top_k": 1}}}
    _bad(tmp_path, {**files, "systems": [{"name": f"s{i}", "docs": str(tmp_path / "c.jsonl")} for i in range(3)]},
         r"systems\[s0\].docs: with translate: queries")
    _bad(tmp_path, {**files, "systems": [{"name": f"s{i}"} for i in range(3)]}, r"systems\[s0\].queries: missing")
    _bad(tmp_path, {**files, "translate": "documents", "mt": None,
                    "systems": [{"name": f"s{i}", "docs": str(tmp_path / "c.jsonl"), "queries": str(tmp_path / "q.tsv")}
                                for i in range(3)]}, "need translate: queries")
    both = {**files, "collection": {"reference": str(tmp_path / "c.jsonl"), "english": str(tmp_path / "c.jsonl")}}
    _bad(tmp_path, both, "collection.english: collection.reference and collection.english name the same thing")


def test_a_system_lacking_a_query_is_an_error(tmp_path):
    (tmp_path / "q.tsv").write_text("q1\thello world\nq2\tgood day\n")
    (tmp_path / "c.jsonl").write_text('{"id": "a", "text": "hello world"}\n{"id": "b", "text": "good day"}\n')
    for i in range(3):
        (tmp_path / f"s{i}.tsv").write_text("q1\thello\n")
    cfg = _write_config(tmp_path, {
        "collection": {"reference": str(tmp_path / "c.jsonl")}, "queries": {"file": str(tmp_path / "q.tsv")},
        "relevance": {"pseudo": {"top_k": 1}},
        "systems": [{"name": f"s{i}", "queries": str(tmp_path / f"s{i}.tsv")} for i in range(3)]})
    with pytest.raises(UserError, match=r"systems\[s0\].queries: .* lacks 1 of the 2 queries \(e.g. 'q2'\)"):
        run_experiment(load_config(cfg), tmp_path / "out", quiet=True, executor="serial")
    assert not (tmp_path / "out" / "results.json").exists()


def test_collection_reference_is_collection_english(tmp_path):
    (tmp_path / "c.jsonl").write_text('{"id": "a", "text": "hello"}\n')
    for key in ("english", "reference"):
        cfg = load_config(_write_config(tmp_path, {
            "translate": "documents", "collection": {key: str(tmp_path / "c.jsonl")},
            "queries": {"file": str(tmp_path / "c.jsonl")}, "relevance": {"pseudo": {"top_k": 1}}, "mt": None,
            "systems": [{"name": f"s{i}", "docs": str(tmp_path / "c.jsonl")} for i in range(3)]}))
        assert cfg.collection.english == str(tmp_path / "c.jsonl")


def test_pool_refuses_mixed_architectures_unless_asked(tmp_path, wmt_run):
    from clir_eval.pooling import pool

    qt_tmp, _ = wmt_run
    cfg = _wmt_config(tmp_path)
    data = yaml.safe_load(cfg.read_text())
    data.pop("translate")
    cfg.write_text(yaml.safe_dump(data))
    _run(cfg, tmp_path / "dt")
    runs = [str(tmp_path / "dt"), str(qt_tmp / "out")]
    with pytest.raises(UserError, match=r"different CLIR architectures \(document translation: .*dt; query "
                                        r"translation: .*out\)"):
        pool(runs, bootstrap=100, thresholds=False, item_level=False)
    res = pool(runs, bootstrap=100, thresholds=False, item_level=False, mix_architectures=True)
    assert any(w.startswith("MIXED ARCHITECTURES") for w in res.warnings)
    assert [t["architecture"] for t in res.tasks] == ["documents", "queries"]
    alone = pool([str(qt_tmp / "out")], bootstrap=100, thresholds=False, item_level=False)
    assert any(n.startswith("architecture: query translation") for n in alone.notes)


@pytest.mark.skipif(not (DATA / "newstest2021.en-is.all.xml.gz").exists(), reason="../shared/data/wmt21-docs absent")
def test_real_en_is_reciprocal_ranks_match_rank_bm25_by_hand(tmp_path):
    """WMT21 en-is (English source, Icelandic collection): each system's per-query reciprocal rank equals
    rank_bm25's BM25Okapi over the reference bodies searched with that system's Icelandic headline."""
    from rank_bm25 import BM25Okapi

    from clir_eval.retrieval.analysis import get_analyzer
    from clir_eval.sources.wmt import read_wmt_xml

    xml = DATA / "newstest2021.en-is.all.xml.gz"
    systems = ["Facebook-AI", "Online-B", "Online-G"]
    r = _run(_write_config(tmp_path, {"wmt": {"xml": str(xml), "reference": "A", "systems": systems},
                                      "queries": {"generate": "headline"},
                                      "retrieval": {"depth": 1000, "backend": "rank_bm25"}}), tmp_path / "out")
    assert r["signature"]["architecture"]["language"] == "is"
    ts = read_wmt_xml(xml).without_testsuites()
    tokenize = get_analyzer("default", language="is").tokenize  # the file's target language: Icelandic analysis
    ids = list(ts.docids)
    bm25 = BM25Okapi([tokenize(" ".join(" ".join(ts.references["A"][d][1:]).split())) for d in ids])
    checked = 0
    for name in systems:
        per_query = r["systems"][name]["ir_per_query"]
        for d, qrow in per_query.items():
            tokens = tokenize(" ".join(ts.hypotheses[name][d][0].split()))
            scores = bm25.get_scores(tokens)
            order = sorted(sorted(range(len(ids)), key=lambda i: ids[i], reverse=True), key=lambda i: -scores[i])
            want = 1 / ([ids[i] for i in order].index(d) + 1) if tokens else 0.0
            assert qrow["recip_rank"] == pytest.approx(want, abs=1e-12), (name, d)
            checked += 1
    assert checked >= 3 * 60


STUDY = Path(__file__).resolve().parents[1] / "configs" / "study"


@pytest.mark.skipif(not DATA.exists(), reason="../shared/data/wmt21-docs absent")
@pytest.mark.parametrize("pair", ["ru_en", "is_en", "en_is", "de_fr"])
def test_study_configs_differ_only_in_the_architecture(pair):
    dt = load_config(STUDY / f"wmt21_{pair}_dt.yaml", data_root=str(DATA.parent))
    qt = load_config(STUDY / f"wmt21_{pair}_qt.yaml", data_root=str(DATA.parent))
    assert (dt.translate, qt.translate) == ("documents", "queries")
    a, b = dt.to_dict(), qt.to_dict()
    for d in (a, b):
        d.pop("name"), d.pop("path"), d.pop("translate", None)
    assert a == b


def test_the_tutorial_shows_the_shipped_config():
    """docs/tutorials/query-translation.md quotes configs/study/wmt21_en_is_qt.yaml: the same settings."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "tutorials" / "query-translation.md").read_text()
    quoted = yaml.safe_load(text.split("```yaml\n", 1)[1].split("```", 1)[0])
    shipped = yaml.safe_load((STUDY / "wmt21_en_is_qt.yaml").read_text())
    for key, value in quoted.items():
        want = shipped[key]
        assert value == ({k: want[k] for k in value} if isinstance(value, dict) else want), key


def test_a_system_lacking_documents_has_empty_queries_there(tmp_path):
    """A WMT system without some documents has no translation of their headlines: empty queries (nothing
    retrieved), said in a note, and MT scored on the queries every system translates."""
    ref, systems = _data()
    systems["S0"] = {d: s for j, (d, s) in enumerate(systems["S0"].items()) if j >= 2}
    xml = write_xml(tmp_path / "gen.xml", {"A": ref}, systems)
    r = _run(_write_config(tmp_path, {"wmt": {"xml": str(xml), "reference": "A"},
                                      "queries": {"generate": "headline"}}), tmp_path / "out")
    assert r["systems"]["S0"]["ir"]["recip_rank"] == pytest.approx((N_DOCS - 2) / N_DOCS)
    assert r["systems"]["S0"]["ir_per_query"]["doc00"]["recip_rank"] == 0
    assert "S0 lacks 2 of 12 query documents; their queries are empty (retrieve nothing) and left out of MT scoring" \
        in r["notes"]
    assert "MT metrics are computed on the 10 queries every system translates" in r["notes"]
    assert r["systems"]["S0"]["mt"]["bleu"] == pytest.approx(100.0)
