"""WMT experiments on generated XML: domains, document filters, headline-less documents,
unnamed references, table joins, collection ids and distractors (issue 12)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from wmt_gen import documents, make_set, noisy, write_xml

from clir_eval.config.load import load_config
from clir_eval.errors import UserError
from clir_eval.io.readers import read_documents
from clir_eval.pipeline.run import Cache, resolve_inputs


def _config(tmp: Path, xml: Path, **extra) -> Path:
    cfg = {
        "name": "gen",
        "wmt": {"xml": str(xml), "reference": "A", **extra.pop("wmt", {})},
        "queries": extra.pop("queries", {"generate": "headline"}),
        "retrieval": {"depth": 50},
        "ir": {"measures": ["map"]},
        "correlation": {"bootstrap": 0, "permutation": 0},
        **extra,
    }
    p = tmp / "exp.yaml"
    p.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return p


def _resolve(tmp: Path, cfg_path: Path):
    return resolve_inputs(load_config(cfg_path), Cache(tmp / "cache"))


def _ids(path: str) -> list[str]:
    return list(read_documents(path).ids)


# --------------------------------------------------------------------------- domains and docs
def _mixed(tmp: Path) -> Path:
    attrs = {f"d{i}": {"domain": "news" if i < 6 else ("conversation" if i < 9 else "ecommerce")} for i in range(12)}
    return make_set(tmp / "mixed.xml", 12, attrs=attrs)


def test_headline_queries_only_from_news_and_counted_per_domain(tmp_path):
    res = _resolve(tmp_path, _config(tmp_path, _mixed(tmp_path)))
    assert sorted(res.queries) == [f"d{i}" for i in range(6)]
    note = next(n for n in res.notes if n.startswith("Generated headline queries per domain"))
    assert "news: 6 of 6 documents" in note
    assert "conversation: 0 of 3 documents (skipped: 3 domain 'conversation' has no headline)" in note
    assert "ecommerce: 0 of 3 documents" in note
    # documents without a headline keep every segment (nothing is a query there)
    english = dict(read_documents(res.english))
    xml_docs = documents(12, seed=1)
    assert english["d7"] == " ".join(xml_docs["d7"])
    assert english["d0"] == " ".join(xml_docs["d0"][1:])


def test_domains_filter(tmp_path):
    res = _resolve(tmp_path, _config(tmp_path, _mixed(tmp_path), wmt={"domains": ["news", "ecommerce"]}))
    assert _ids(res.english) == [f"d{i}" for i in (0, 1, 2, 3, 4, 5, 9, 10, 11)]
    assert all(_ids(s.docs) == _ids(res.english) for s in res.systems)
    assert any("domains news, ecommerce: 9 of 12 documents used" in n for n in res.notes)
    with pytest.raises(UserError, match=r"wmt\.domains: 'social' not in .*news \(6\), conversation \(3\), ecommerce \(3\)"):
        _resolve(tmp_path, _config(tmp_path, _mixed(tmp_path), wmt={"domains": ["social"]}))


def test_domains_on_a_file_without_domains(tmp_path):
    xml = make_set(tmp_path / "plain.xml", 6)
    with pytest.raises(UserError, match=r"wmt\.domains: 'news' not in .*\(none\) \(6\).*remove wmt\.domains"):
        _resolve(tmp_path, _config(tmp_path, xml, wmt={"domains": ["news"]}))


def test_docs_filter_ids_and_patterns(tmp_path):
    xml = make_set(tmp_path / "t.xml", 12)
    res = _resolve(tmp_path, _config(tmp_path, xml, wmt={"docs": ["d1", "d1?"]}))
    assert _ids(res.english) == ["d1", "d10", "d11"]
    with pytest.raises(UserError, match=r"wmt\.docs: 'x\*' matches no document"):
        _resolve(tmp_path, _config(tmp_path, xml, wmt={"docs": ["x*"]}))


def test_one_segment_documents_explain_the_empty_query_set(tmp_path):
    xml = make_set(tmp_path / "one.xml", 6, segments=1)
    with pytest.raises(UserError) as e:
        _resolve(tmp_path, _config(tmp_path, xml))
    msg = str(e.value)
    assert msg.startswith("queries.generate: headline gave no query from the 6 documents")
    assert "6 no text left after segment 1" in msg
    assert "queries.generate: keywords" in msg and "queries.file" in msg and "relevance.pseudo" in msg
    # keywords work on the same file
    res = _resolve(tmp_path, _config(tmp_path, xml, queries={"generate": "keywords", "k": 3}))
    assert len(res.queries) == 6


def test_only_non_news_documents_explain_the_empty_query_set(tmp_path):
    xml = make_set(tmp_path / "chat.xml", 4, attrs={f"d{i}": {"domain": "conversation"} for i in range(4)})
    with pytest.raises(UserError, match=r"conversation: 0 of 4 documents \(skipped: 4 domain 'conversation' has no headline\)"):
        _resolve(tmp_path, _config(tmp_path, xml))
    res = _resolve(tmp_path, _config(tmp_path, xml, wmt={"headline_domains": ["conversation"]}))
    assert len(res.queries) == 4


def test_keywords_note_says_nothing_is_removed(tmp_path):
    xml = make_set(tmp_path / "t.xml", 6)
    res = _resolve(tmp_path, _config(tmp_path, xml, queries={"generate": "keywords", "k": 3}))
    note = next(n for n in res.notes if n.startswith("Queries:"))
    assert "removed from every collection" not in note and "left in every collection's documents" in note
    english = dict(read_documents(res.english))
    for qid, q in res.queries.items():
        assert all(t in english[qid].split() for t in q.split())
    head = _resolve(tmp_path, _config(tmp_path, xml))
    assert "the query text is removed from every collection's documents" in next(n for n in head.notes if n.startswith("Queries:"))


def test_unnamed_reference_is_called_ref(tmp_path):
    ref = documents(6)
    xml = write_xml(tmp_path / "u.xml", {None: ref}, {f"S{i}": noisy(ref, 0.1 * i, i) for i in range(3)})
    res = _resolve(tmp_path, _config(tmp_path, xml, wmt={"reference": "ref"}))
    assert len(res.queries) == 6 and len(res.systems) == 3
    with pytest.raises(UserError, match=r"wmt\.reference: translator 'A' is not in .*has: ref; a <ref> without a translator attribute is called 'ref'"):
        _resolve(tmp_path, _config(tmp_path, xml))


# --------------------------------------------------------------------------- human tables
def _human(tmp: Path, names) -> Path:
    p = tmp / "human.csv"
    p.write_text("".join(f"70.0 {0.1 * i:.3f} 100 120 X.{i} {n}\n" for i, n in enumerate(names)), encoding="utf-8")
    return p


def test_human_table_missing_systems_are_all_named_with_closest_rows(tmp_path):
    xml = make_set(tmp_path / "t.xml", 6)
    human = _human(tmp_path, ["S0", "S1", "S2", "S-3"])
    res = _resolve(tmp_path, _config(tmp_path, xml, wmt={"human": str(human)}))
    assert set(res.human) == {"S0", "S1", "S2"}
    assert any("human.csv: no row for 1 of 4 system(s): S3 (closest: S-3)" in n for n in res.notes)


def test_human_table_of_another_pair_is_an_error(tmp_path):
    xml = make_set(tmp_path / "t.xml", 6)
    human = _human(tmp_path, ["S0", "S1", "Online-W", "Facebook-AI"])
    with pytest.raises(UserError, match=r"wmt\.human: .*matches 2 of 4 systems \(at least 3 needed\); no row for: S2; S3;.*Online-W, Facebook-AI"):
        _resolve(tmp_path, _config(tmp_path, xml, wmt={"human": str(human)}))


def _lines_experiment(tmp: Path, n_sys: int = 4, **collection) -> Path:
    """Line-aligned collections (one document per line) with qrels by line id."""
    ref = documents(8, seed=3, segments=1)
    lines = [segs[0] for segs in ref.values()]
    (tmp / "ref.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    systems = []
    for i in range(n_sys):
        hyp = [segs[0] for segs in noisy(ref, 0.15 * i, 50 + i).values()]
        (tmp / f"S{i}.txt").write_text("\n".join(hyp) + "\n", encoding="utf-8")
        systems.append({"name": f"S{i}", "docs": str(tmp / f"S{i}.txt")})
    (tmp / "ids.txt").write_text("\n".join(f"news-{k}" for k in range(8)) + "\n", encoding="utf-8")
    (tmp / "q.tsv").write_text("".join(f"q{k}\t{' '.join(lines[k].split()[:3])}\n" for k in range(8)), encoding="utf-8")
    docid = (lambda k: f"news-{k}") if "ids" in collection else (lambda k: str(k + 1))
    (tmp / "qrels.txt").write_text("".join(f"q{k} 0 {docid(k)} 1\n" for k in range(8)), encoding="utf-8")
    cfg = {
        "name": "lines",
        "systems": systems,
        "collection": {"english": str(tmp / "ref.txt"), "format": "lines", **collection},
        "queries": {"file": str(tmp / "q.tsv")},
        "relevance": {"qrels": str(tmp / "qrels.txt")},
        "ir": {"measures": ["map"]},
        "correlation": {"bootstrap": 0, "permutation": 0},
    }
    p = tmp / "lines.yaml"
    p.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return p


def test_collection_ids_are_the_document_ids(tmp_path, cli):
    cfg = _lines_experiment(tmp_path, ids=str(tmp_path / "ids.txt"))
    code, _, err = cli("run", cfg, "--out", tmp_path / "out", "-j", "1", "-q")
    assert code == 0, err
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert res["systems"]["S0"]["ir"]["map"] > 0.5  # qrels name news-K, found only with the ids applied
    assert res["english"]["ir"]["map"] > 0.5


def test_collection_ids_need_the_lines_format(tmp_path):
    cfg = _lines_experiment(tmp_path, ids=str(tmp_path / "ids.txt"))
    data = yaml.safe_load(cfg.read_text())
    data["collection"]["format"] = "jsonl"
    cfg.write_text(yaml.safe_dump(data))
    with pytest.raises(UserError, match=r"collection\.ids: an id file applies to format: lines"):
        load_config(cfg)


def _with_external(tmp_path, rows: str):
    """The lines experiment with an external MT table ``ext.tsv`` (``rows``: its lines after the header)."""
    cfg = _lines_experiment(tmp_path)
    table = tmp_path / "ext.tsv"
    table.write_text("system\tbleurt\n" + rows, encoding="utf-8")
    data = yaml.safe_load(cfg.read_text())
    data["external"] = [{"file": str(table), "kind": "mt", "columns": ["bleurt"]}]
    cfg.write_text(yaml.safe_dump(data))
    return cfg


def test_external_table_join_names_every_unmatched_system(tmp_path):
    cfg = _with_external(tmp_path, "S0\t0.5\nS1\t0.4\nS_2\t0.3\nS3\t0.2\n")
    from clir_eval.pipeline.run import run_experiment

    res = run_experiment(load_config(cfg), tmp_path / "out", jobs=1, quiet=True)
    assert any("ext.tsv: no row for 1 system(s) (S2; closest rows: S2 (closest: S_2))" in n for n in res["notes"])
    (tmp_path / "ext.tsv").write_text("system\tbleurt\nS0\t0.5\nS1\t0.4\ncs-x\t0.3\nde-y\t0.2\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"external\[0\]\.match: .*ext\.tsv matches 2 of 4 systems.*no row for: S2; S3"):
        run_experiment(load_config(cfg), tmp_path / "out2", jobs=1, quiet=True)


# --------------------------------------------------------------------------- distractors
def test_distractors_from_another_wmt_file_and_a_documents_file(tmp_path, cli):
    xml = make_set(tmp_path / "t.xml", 8)
    other_ref = documents(5, seed=9, prefix="o")
    other = write_xml(tmp_path / "other.xml", {"A": other_ref}, {f"S{i}": noisy(other_ref, 0.5, 7 + i) for i in range(4)})
    extra = tmp_path / "extra.jsonl"
    extra.write_text("".join(json.dumps({"id": f"e{k}", "text": f"extra text {k}"}) + "\n" for k in range(3)), encoding="utf-8")
    cfg = _config(tmp_path, xml, collection={"distractors": [{"xml": str(other), "limit": 4}, {"file": str(extra)}]})
    res = _resolve(tmp_path, cfg)
    english = dict(read_documents(res.english))
    assert len(english) == 8 + 4 + 3
    assert english["ext1-o0"] == " ".join(other_ref["o0"]) and english["ext2-e2"] == "extra text 2"
    for s in res.systems:
        docs = dict(read_documents(s.docs))
        assert set(docs) == set(english)
        assert docs["ext1-o3"] == english["ext1-o3"]  # English, unchanged
    assert res.signature["collection"]["total"] == 15
    assert [d["documents"] for d in res.signature["collection"]["distractors"]] == [4, 3]
    out = tmp_path / "out"
    code, _, err = cli("run", cfg, "--out", out, "-j", "1", "-q")
    assert code == 0, err
    results = json.loads((out / "results.json").read_text())
    assert results["signature"]["collection"]["distractors"][0] == {
        "source": "other.xml", "reference": "A", "documents": 4, "translated": False, "ids": "ext1-*"}
    assert results["english"]["n_docs"] == 15
    assert all(s["collection"]["n_docs"] == 15 for s in results["systems"].values())
    assert set(results["ir_queries"] if "ir_queries" in results else results["systems"]["S0"]["ir_per_query"]) <= {f"d{i}" for i in range(8)}


def test_translated_distractors_use_each_systems_own_output(tmp_path):
    xml = make_set(tmp_path / "t.xml", 6)
    other_ref = documents(3, seed=9, prefix="o")
    hyps = {f"S{i}": noisy(other_ref, 0.5, 7 + i) for i in range(4)}
    other = write_xml(tmp_path / "other.xml", {"A": other_ref}, hyps)
    res = _resolve(tmp_path, _config(tmp_path, xml, collection={"distractors": [{"xml": str(other), "translated": True}]}))
    english = dict(read_documents(res.english))
    assert english["ext1-o1"] == " ".join(other_ref["o1"])
    for s in res.systems:
        assert dict(read_documents(s.docs))["ext1-o1"] == " ".join(hyps[s.name]["o1"])
    del hyps["S3"]
    write_xml(other, {"A": other_ref}, hyps)
    with pytest.raises(UserError, match=r"collection\.distractors\[0\]\.translated: system 'S3' has no translation"):
        _resolve(tmp_path, _config(tmp_path, xml, collection={"distractors": [{"xml": str(other), "translated": True}]}))


def test_distractor_config_errors_name_the_field(tmp_path):
    xml = make_set(tmp_path / "t.xml", 6)
    with pytest.raises(UserError, match=r"collection\.distractors\[0\]: give either file:"):
        load_config(_config(tmp_path, xml, collection={"distractors": [{}]}))
    with pytest.raises(UserError, match=r"collection\.english: the wmt:/europarl: source gives the reference side"):
        load_config(_config(tmp_path, xml, collection={"english": str(xml)}))
    with pytest.raises(UserError, match=r"collection\.distractors\[0\]\.reference: translator 'B' is not in"):
        _resolve(tmp_path, _config(tmp_path, xml, collection={"distractors": [{"xml": str(xml), "reference": "B"}]}))


# --------------------------------------------------------------------------- real data (../shared/data)
def _ru_en(tmp: Path, shared: Path, **extra) -> Path:
    return _config(tmp, shared / "wmt21-docs" / "newstest2021.ru-en.all.xml.gz", **extra)


def test_real_ted_talks_give_no_headline_queries(tmp_path, shared_data):
    res = _resolve(tmp_path, _ru_en(tmp_path, shared_data, wmt={"include_testsuites": True}))
    assert len(res.queries) == 107 and not any(q.startswith("tsuite") for q in res.queries)
    note = next(n for n in res.notes if n.startswith("Generated headline queries per domain"))
    assert "no domain: 107 of 116 documents (skipped: 9 test-suite document (tsuite-tedtalks-enru-rev), no headline)" in note


def test_real_human_table_of_another_pair_names_the_unmatched(tmp_path, shared_data):
    res = _resolve(tmp_path, _ru_en(tmp_path, shared_data, wmt={"human": str(shared_data / "wmt21-docs" / "human-is-en-sys-z.csv")}))
    note = next(n for n in res.notes if "no row for" in n)
    assert note.startswith("human-is-en-sys-z.csv: no row for 3 of 10 system(s): Online-W")
    assert "AFRL" in note and "NVIDIA-NeMo" in note and len(res.human) == 7


def test_real_domains_and_direction_errors(tmp_path, shared_data):
    with pytest.raises(UserError, match=r"wmt\.domains: 'news' not in .*\(none\) \(107\)"):
        _resolve(tmp_path, _ru_en(tmp_path, shared_data, wmt={"domains": ["news"]}))
    with pytest.raises(UserError, match=r"wmt\.direction: no target-original document .*origlang of the 107 documents: ru \(107\); pair ru-en"):
        _resolve(tmp_path, _ru_en(tmp_path, shared_data, wmt={"direction": "target-original"}))


def test_real_distractors_from_the_is_en_reference(tmp_path, shared_data):
    is_en = shared_data / "wmt21-docs" / "newstest2021.is-en.all.xml.gz"
    both = ["Facebook-AI", "Online-Y", "Online-G", "Manifold", "NiuTrans", "Online-B", "Online-A"]
    res = _resolve(tmp_path, _ru_en(tmp_path, shared_data, wmt={"systems": both},
                                    collection={"distractors": [{"xml": str(is_en), "translated": True}]}))
    assert res.signature["collection"]["total"] == 107 + 47
    english = dict(read_documents(res.english))
    online_b = dict(read_documents(next(s.docs for s in res.systems if s.name == "Online-B")))
    first = next(k for k in english if k.startswith("ext1-"))
    assert online_b[first] != english[first] and online_b[first]  # Online-B's own is-en translation
    with pytest.raises(UserError, match=r"translated: system 'AFRL' has no translation there"):
        _resolve(tmp_path, _ru_en(tmp_path, shared_data, wmt={"systems": ["Online-B", "AFRL", "Online-A"]},
                                  collection={"distractors": [{"xml": str(is_en), "translated": True}]}))


# --------------------------------------------------------------------------- validate (dry run)
def _validate(cli, cfg: Path):
    return cli("validate", cfg)


@pytest.mark.parametrize(
    "edit, expect",
    [
        ({"wmt": {"reference": "Z"}}, r"wmt\.reference: translator 'Z' is not in .*has: A"),
        ({"wmt": {"references_as_systems": ["B"]}}, r"wmt\.references_as_systems: translator 'B' is not in"),
        ({"wmt": {"systems": ["S-2"]}}, r"wmt\.systems: system 'S-2' is not in .*\(closest: S2"),
        ({"ir": {"measures": ["map", "rbo:q=1"]}}, r"ir\.measures\[1\]: .*'q'"),
        ({"retrieval": {"analyzer": "snowball", "depth": 50}}, r"retrieval\.analyzer: unknown analyzer 'snowball'; choose one of"),
        ({"retrieval": {"stem": "klingon", "depth": 50}}, r"retrieval\.stem: unknown stemmer language 'klingon'"),
        ({"wmt": {"domains": ["news"]}}, r"wmt\.domains: 'news' not in"),
        ({"queries": {"generate": "headline", "limit": 3}, "wmt": {"docs": ["nothing"]}}, r"wmt\.docs: 'nothing' matches no document"),
    ],
)
def test_validate_opens_the_data(tmp_path, cli, edit, expect):
    xml = make_set(tmp_path / "t.xml", 6)
    cfg = _config(tmp_path, xml, **edit)
    code, out, err = _validate(cli, cfg)
    assert code == 2 and out == "", err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1
    assert __import__("re").search(expect, err), err


def test_validate_reports_queries_per_domain_and_joins(tmp_path, cli):
    attrs = {f"d{i}": {"domain": "news" if i < 4 else "social"} for i in range(6)}
    xml = make_set(tmp_path / "t.xml", 6, attrs=attrs)
    human = _human(tmp_path, ["S0", "S1", "S2", "S3"])
    code, out, err = cli("validate", _config(tmp_path, xml, wmt={"human": str(human)}), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["wmt"]["human"] == str(human)
    assert "ok: queries.generate: headline: 4 queries; news: 4 of 4 documents; social: 0 of 2 documents (skipped: 2 domain 'social' has no headline)" in err
    assert "ok: wmt.human: every system has a row of human.csv" in err
    # run joins 3 of 4 and notes it; validate says the same (one rule: sources/validate.py)
    _human(tmp_path, ["S0", "S1", "S2", "S_3"])
    code, _, err = _validate(cli, _config(tmp_path, xml, wmt={"human": str(human)}))
    assert code == 0 and "note: human.csv: no row for 1 of 4 system(s): S3 (closest: S_3)" in err, err


def test_validate_summary_names_where_relevance_comes_from(tmp_path, cli):
    """Generated queries without a relevance: section are known-item (run takes each query's own document)."""
    xml = make_set(tmp_path / "t.xml", 6)
    code, out, err = _validate(cli, _config(tmp_path, xml))
    assert code == 0, err
    assert "relevance: known-item, each generated query's own document (headline queries)" in out.splitlines()
    code, out, err = _validate(cli, _config(tmp_path, xml, relevance={"pseudo": {"top_k": 3}}))
    assert code == 0, err
    assert "relevance: pseudo-qrels, the top 3 documents of the English-side run" in out.splitlines()


def test_validate_wrong_human_header_and_unknown_collection_format(tmp_path, cli):
    xml = make_set(tmp_path / "t.xml", 6)
    bad = tmp_path / "h.csv"
    bad.write_text("score system\n0.1 S0\n", encoding="utf-8")
    code, _, err = _validate(cli, _config(tmp_path, xml, wmt={"human": str(bad)}))
    assert code == 2 and err.startswith("error: wmt.human: ") and "lacks columns" in err
    cfg = _lines_experiment(tmp_path)
    data = yaml.safe_load(cfg.read_text())
    for name in ["ref.txt"] + [f"S{i}.txt" for i in range(4)]:
        (tmp_path / name).rename(tmp_path / (name[:-4] + ".docs"))
    data["collection"] = {"english": str(tmp_path / "ref.docs")}
    for s in data["systems"]:
        s["docs"] = s["docs"][:-4] + ".docs"
    cfg.write_text(yaml.safe_dump(data))
    code, _, err = _validate(cli, cfg)
    assert code == 2 and err.startswith("error: collection.format: cannot tell the document format"), err
    data["collection"]["format"] = "lines"
    cfg.write_text(yaml.safe_dump(data))
    code, _, err = _validate(cli, cfg)
    assert code == 0 and "ok: relevance.qrels: 8 of 8 queries judged" in err


def test_validate_external_table_joins_as_run_does(tmp_path, cli):
    cfg = _with_external(tmp_path, "S0\t0.5\nS1\t0.4\nS2\t0.3\nsys3\t0.2\n")
    code, _, err = _validate(cli, cfg)
    assert code == 0 and "note: ext.tsv: no row for 1 of 4 system(s): S3 (closest: sys3)" in err, err
    cfg = _with_external(tmp_path, "S0\t0.5\nS1\t0.4\ns2\t0.3\nsys3\t0.2\n")
    code, _, err = _validate(cli, cfg)
    assert code == 2 and "error: external[0].match: " in err and "matches 2 of 4 systems" in err, err
    data = yaml.safe_load(cfg.read_text())
    data["external"][0]["columns"] = ["bluert"]
    cfg.write_text(yaml.safe_dump(data))
    code, _, err = _validate(cli, cfg)
    assert code == 2 and "error: external[0]: column 'bluert' is not in" in err


def test_run_checks_measures_before_any_work(tmp_path, cli):
    xml = make_set(tmp_path / "t.xml", 6)
    out = tmp_path / "out"
    code, _, err = cli("run", _config(tmp_path, xml, ir={"measures": ["rbo:q=1"]}), "--out", out, "-q")
    assert code == 2 and err.startswith("error: ") and "ir.measures[0]: " in err and not out.exists()


def test_validate_real_ru_en_config(cli, shared_data):
    code, out, err = cli("validate", Path(__file__).resolve().parent.parent / "configs" / "wmt21_ru_en.yaml",
                         "--data-root", shared_data)
    assert code == 0, err
    assert "ok: queries.generate: headline: 107 queries; no domain: 107 of 107 documents" in err
    assert "ok: wmt.human: every system has a row of human-ru-en-sys-z.csv" in err


# --------------------------------------------------------------------------- translation direction
def _two_directions(tmp: Path) -> Path:
    """12 documents, 6 written in German (source-original), 6 in English (target-original);
    system quality is reversed between the two halves."""
    ref = documents(12, seed=5, segments=5, words=10)
    src_half = {d: s for d, s in ref.items() if int(d[1:]) < 6}
    tgt_half = {d: s for d, s in ref.items() if int(d[1:]) >= 6}
    rates = [(0.05, 0.7), (0.25, 0.5), (0.5, 0.25), (0.7, 0.05)]
    systems = {f"S{i}": {**noisy(src_half, a, 10 + i), **noisy(tgt_half, b, 20 + i)} for i, (a, b) in enumerate(rates)}
    attrs = {d: {"origlang": "de" if int(d[1:]) < 6 else "en"} for d in ref}
    return write_xml(tmp / "dir.xml", {"A": ref}, systems, attrs=attrs)


def test_direction_both_reports_subsets_side_by_side(tmp_path, cli):
    xml = _two_directions(tmp_path)
    out = tmp_path / "out"
    cfg = _config(tmp_path, xml, wmt={"direction": "both"}, mt={"metrics": ["bleu", "chrf1"]})
    code, _, err = cli("run", cfg, "--out", out, "-j", "1", "-q")
    assert code == 0, err
    res = json.loads((out / "results.json").read_text())
    d = res["direction"]
    assert d["source-original"]["documents"] == 6 and d["target-original"]["documents"] == 6
    src, tgt = d["source-original"]["systems"], d["target-original"]["systems"]
    assert [s for s in sorted(src, key=lambda s: -src[s]["mt"]["bleu"])] == ["S0", "S1", "S2", "S3"]
    assert [s for s in sorted(tgt, key=lambda s: -tgt[s]["mt"]["bleu"])] == ["S3", "S2", "S1", "S0"]
    table = (out / "direction.tsv").read_text().splitlines()
    assert table[0].split("\t") == ["kind", "x", "y", "tau_all", "p_all", "tau_source-original", "p_source-original",
                                    "tau_target-original", "p_target-original"]
    bleu_map = next(r.split("\t") for r in table if r.startswith("mt-ir\tbleu\tmap"))
    assert all(v != "-" for v in bleu_map[3:])
    assert any(n.startswith("Translation direction (Edunov et al. 2020") for n in res["notes"])
    assert (out / "direction" / "target-original" / "results.json").exists()
    # the reports show the same τ side by side (report.md, report.tex, report.html)
    from clir_eval.report.tables import fmt_tau

    taus = [fmt_tau(float(v)) for v in bleu_map[3::2]]
    md = (out / "report.md").read_text()
    section = md[md.index("## Translation direction"):]
    row = next(r for r in section.splitlines() if r.startswith("| bleu | map |"))
    assert [c.strip().lstrip("×") for c in row.strip("|").split("|")[2:]] == taus
    assert "source-original (6 docs)" in section and "does not test whether τ differs" in section
    for name in ("report.tex", "report.html"):
        text = (out / name).read_text()
        assert "Translation direction" in text and all(t in text for t in taus), name


def test_direction_one_side_and_missing_side(tmp_path):
    xml = _two_directions(tmp_path)
    res = _resolve(tmp_path, _config(tmp_path, xml, wmt={"direction": "target-original"}))
    assert _ids(res.english) == [f"d{i}" for i in range(6, 12)]
    assert any("target-original documents only: 6 of 12 (origlang of the 6 documents: en (6); pair de-en)" in n for n in res.notes)
    plain = make_set(tmp_path / "p.xml", 6)
    with pytest.raises(UserError, match=r"wmt\.direction: no target-original document .*de \(6\)"):
        _resolve(tmp_path, _config(tmp_path, plain, wmt={"direction": "target-original"}))
    from clir_eval.sources.direction import by_direction

    runs = []

    def fake_run(cfg, out, **kw):
        runs.append(cfg.wmt.direction)
        return {"systems": {}, "correlations": []}

    d = by_direction(load_config(_config(tmp_path, plain, wmt={"direction": "both"})), tmp_path / "o", fake_run, jobs=1)
    assert runs == ["source-original"] and d["source-original"]["documents"] == 6
    assert d["target-original"] == {"documents": 0, "reason": "no target-original documents (origlang of the 6 documents: de (6); pair de-en)"}


def test_file_distractors_with_each_systems_translations(tmp_path):
    cfg = _lines_experiment(tmp_path)
    extra = tmp_path / "extra.jsonl"
    extra.write_text("".join(json.dumps({"id": f"e{k}", "text": f"english {k}"}) + "\n" for k in range(3)), encoding="utf-8")
    (tmp_path / "tr").mkdir()
    for i in range(4):
        rows = [{"id": f"e{k}", "text": f"S{i} says {k}"} for k in range(3) if not (i == 2 and k == 1)]
        (tmp_path / "tr" / f"S{i}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    data = yaml.safe_load(cfg.read_text())
    data["collection"]["distractors"] = [{"file": str(extra), "translations": str(tmp_path / "tr" / "{name}.jsonl")}]
    cfg.write_text(yaml.safe_dump(data))
    res = _resolve(tmp_path, cfg)
    assert dict(read_documents(res.english))["ext1-e0"] == "english 0"
    docs = {s.name: dict(read_documents(s.docs)) for s in res.systems}
    assert docs["S1"]["ext1-e2"] == "S1 says 2" and docs["S3"]["ext1-e0"] == "S3 says 0"
    assert docs["S2"]["ext1-e1"] == ""  # untranslated distractor: an empty document
    assert res.signature["collection"]["distractors"][0]["translated"] is True
    (tmp_path / "tr" / "S0.jsonl").write_text(json.dumps({"id": "zz", "text": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"collection\.distractors\[0\]\.translations: .*S0\.jsonl has document 'zz'"):
        _resolve(tmp_path, cfg)


def test_direction_both_with_a_shared_cache(tmp_path, cli):
    """The per-direction runs use the run's shared cache (the lock it already holds, no deadlock)
    and give what a run with its own cache gives."""
    xml = _two_directions(tmp_path)
    cfg = _config(tmp_path, xml, wmt={"direction": "both"}, mt={"metrics": ["bleu"]})
    code, _, err = cli("run", cfg, "--out", tmp_path / "a", "--cache", tmp_path / "shared", "-j", "1", "-q")
    assert code == 0, err
    assert not (tmp_path / "a" / "cache").exists() and not (tmp_path / "a" / "direction" / "source-original" / "cache").exists()
    assert cli("run", cfg, "--out", tmp_path / "b", "-j", "1", "-q")[0] == 0
    a, b = (json.loads((tmp_path / d / "results.json").read_text()) for d in "ab")
    assert a["direction"] == b["direction"]
