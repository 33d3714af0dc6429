"""ir_datasets as a source, offline: a tiny dataset registered with ir_datasets from local files is
read through ir_datasets' real loading path (registry, TsvQueries/TrecQrels/TsvDocs, LocalDownload);
a dataset whose files are not local is an error that says how to fetch them, and nothing is
downloaded."""

from __future__ import annotations

import itertools
import json

import ir_datasets
import pytest
import yaml
from ir_datasets.datasets.base import Dataset
from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
from ir_datasets.util import LocalDownload, RequestsDownload

from clir_eval.errors import UserError
from clir_eval.sources import irds

_ids = itertools.count()


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home"))
    (tmp_path / "q.tsv").write_text("q1\tnational treasure\nq2\tpantsir missile\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
    (tmp_path / "docs.tsv").write_text("d1\ta national treasure of art\nd2\tweather report\nd3\tthe pantsir missile system\n")
    name = f"clir-eval-test/tiny-{next(_ids)}"
    ir_datasets.registry.register(name, Dataset(
        TsvQueries(LocalDownload(tmp_path / "q.tsv")),
        TrecQrels(LocalDownload(tmp_path / "qrels.txt"), {0: "not relevant", 1: "relevant", 2: "very"}),
        TsvDocs(LocalDownload(tmp_path / "docs.tsv")),
    ))
    return name


def test_exports_queries_qrels_docs(tiny):
    q = irds.export(f"irds:{tiny}", "queries", ("text",))
    assert open(q).read() == "q1\tnational treasure\nq2\tpantsir missile\n"
    assert open(irds.export(f"irds:{tiny}", "qrels")).read() == "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
    docs = [json.loads(x) for x in open(irds.export(f"irds:{tiny}", "docs"))]
    assert docs[0] == {"id": "d1", "text": "a national treasure of art"} and len(docs) == 3


def test_bad_field_and_unknown_id(tiny):
    with pytest.raises(UserError, match="no field 'title'; fields: query_id, text"):
        irds.export(f"irds:{tiny}", "queries", ("title",))
    with pytest.raises(UserError, match="not an ir_datasets id"):
        irds.export("irds:no/such/dataset", "queries")


def test_not_local_is_an_error_and_nothing_is_downloaded(tmp_path, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home"))
    name = f"clir-eval-test/remote-{next(_ids)}"
    ir_datasets.registry.register(name, Dataset(TsvQueries(RequestsDownload("http://127.0.0.1:9/q.tsv"))))
    with pytest.raises(UserError, match="not in the local store.*fetch them once"):
        irds.export(f"irds:{name}", "queries", ("text",))
    assert RequestsDownload.stream is not None and "stream" in RequestsDownload.__dict__  # restored


def test_config_reads_irds_inputs(tiny, tmp_path, cli):
    for i in range(3):
        (tmp_path / f"s{i}.jsonl").write_text("".join(f'{{"id": "d{k}", "text": "treasure"}}\n' for k in (1, 2, 3)))
    cfg = {"name": "t", "systems": [{"name": f"s{i}", "docs": f"s{i}.jsonl"} for i in range(3)],
           "collection": {"english": f"irds:{tiny}"},
           "queries": {"file": f"irds:{tiny}", "fields": ["text"]},
           "relevance": {"qrels": f"irds:{tiny}"}, "ir": {"measures": ["nDCG@20", "MAP", "R@100"]}}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    code, out, err = cli("validate", path, "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    assert open(res["queries"]["file"][0]).read().startswith("q1\tnational treasure\n")
    assert res["collection"]["english"].endswith(".jsonl") and res["relevance"]["qrels"].endswith(".txt")


def test_shipped_neuclir_example_is_valid_up_to_the_missing_local_data(tmp_path, monkeypatch, cli):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "empty-home"))
    monkeypatch.setenv("CLIR_EVAL_DATA", str(tmp_path))
    d = tmp_path / "neuclir" / "fa"
    (d / "translations").mkdir(parents=True)
    (d / "flores").mkdir()
    for name in ("sysA", "sysB", "sysC"):
        (d / "translations" / f"{name}.jsonl").write_text('{"id": "x", "text": "t"}\n')
        (d / "flores" / f"{name}.en.txt").write_text("a sentence\n")
    (d / "flores" / "ref.en.txt").write_text("a sentence\n")
    (d / "english.jsonl").write_text('{"id": "x", "text": "t"}\n')
    code, out, err = cli("validate", "configs/neuclir_fa_example.yaml")
    assert code == 2 and err.startswith("error: ") and "neuclir/1/fa/trec-2022" in err and "fetch them once" in err


def test_run_reads_irds_queries_with_dataset_fields(tiny, tmp_path, cli):
    """The dataset's own field names (``text``) are applied by the export; run must not
    re-check them against TREC topic fields (it did: validate passed, run failed)."""
    for i in range(3):
        (tmp_path / f"s{i}.jsonl").write_text("".join(
            json.dumps({"id": d, "text": t}) + "\n" for d, t in [("d1", "treasure art"), ("d2", "weather"), ("d3", "missile")]))
    cfg = {"name": "t", "systems": [{"name": f"s{i}", "docs": f"s{i}.jsonl"} for i in range(3)],
           "collection": {"english": f"irds:{tiny}"},
           "queries": {"file": f"irds:{tiny}", "fields": ["text"]},
           "relevance": {"qrels": f"irds:{tiny}"}, "ir": {"measures": ["MAP"]}}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    code, _, err = cli("run", path, "--out", tmp_path / "out", "-q", "--jobs", "1")
    assert code == 0, err
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert set(res["systems"]) == {"s0", "s1", "s2"}
