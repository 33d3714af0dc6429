"""``clir-eval ir-score`` / ``pseudo-qrels``: the JSON/TSV contract and one-line user errors."""

from __future__ import annotations

import json

import pytest

from clir_eval.io.trec import read_qrels
from clir_eval.report.blocks import TSV_DECIMALS

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 x 1\n"
RUN = "1 Q0 a 1 3.0 sys\n1 Q0 b 2 2.0 sys\n1 Q0 d 3 1.0 sys\n2 Q0 y 1 1.0 sys\n9 Q0 a 1 1.0 sys\n"
REF = "1 Q0 a 1 3.0 en\n1 Q0 d 2 2.0 en\n1 Q0 c 3 1.0 en\n2 Q0 x 1 1.0 en\n"


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, text in (("qrels", QRELS), ("run", RUN), ("ref", REF)):
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text(text)
    return paths


def test_json_contract(cli, files):
    code, out, err = cli("ir-score", "--qrels", files["qrels"], "--run", files["run"], "--reference-run", files["ref"],
                         "--collection-size", "100", "--measures", "map,ndcg,P_10,aqwv,rbo", "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    assert list(res["aggregate"]) == ["map", "ndcg", "P_10", "aqwv", "rbo"]
    assert all(isinstance(v, float) for v in res["aggregate"].values())
    assert set(res["per_query"]) == {"1", "2"}
    assert res["per_query"]["1"]["map"] == pytest.approx(0.5)
    assert res["per_query"]["2"]["map"] == 0.0
    assert res["aggregate"]["map"] == pytest.approx(0.25)
    assert res["per_query"]["1"]["aqwv"] == pytest.approx(1 - 1 / 2 - 40 * 2 / 98)
    assert set(res["signatures"]) == set(res["aggregate"])


def test_parameterised_measures_and_tsv(cli, files, tmp_path):
    args = ["ir-score", "--qrels", files["qrels"], "--run", files["run"], "--reference-run", files["ref"],
            "--collection-size", "100", "--measures", "rbo:p=0.9,variant=min,aqwv:beta=20,cutoff=1,mqwv"]
    code, out, err = cli(*args, "--format", "tsv")
    assert code == 0, err
    rows = [line.split("\t") for line in out.splitlines()]
    assert all(len(r) == 3 for r in rows)
    names = {r[0] for r in rows}
    assert names == {"rbo:p=0.9,variant=min", "aqwv:beta=20,cutoff=1", "mqwv"}
    agg = {r[0]: float(r[2]) for r in rows if r[1] == "all"}
    code, out, _ = cli(*args, "--format", "json")
    exact = json.loads(out)["aggregate"]
    assert agg == {k: round(v, TSV_DECIMALS) for k, v in exact.items()}  # TSV drops binary noise only
    target = tmp_path / "out.json"
    code, out, _ = cli(*args, "--out", target)
    assert code == 0 and out == "" and json.loads(target.read_text())["aggregate"] == exact


def test_pseudo_qrels_option_and_command(cli, files, tmp_path):
    code, out, err = cli("ir-score", "--pseudo-qrels", "2", "--reference-run", files["ref"], "--run", files["run"],
                         "--measures", "P_2")
    assert code == 0, err
    res = json.loads(out)
    assert res["per_query"]["1"]["P_2"] == pytest.approx(0.5)  # a, d relevant; run has a, b
    assert res["qrels"] == "qrels:pseudo|top_k:2|rel:1"
    target = tmp_path / "pq.txt.gz"
    code, _, err = cli("pseudo-qrels", "--run", files["ref"], "--top-k", "2", "--out", target)
    assert code == 0, err
    assert read_qrels(target).judgements == {"1": {"a": 1, "d": 1}, "2": {"x": 1}}


def test_trec_order_flag(cli, tmp_path, files):
    run = tmp_path / "unsorted.txt"
    run.write_text("1 Q0 d 1 1.0 s\n1 Q0 a 2 3.0 s\n")
    base = ["ir-score", "--qrels", files["qrels"], "--run", run, "--measures", "recip_rank"]
    assert json.loads(cli(*base)[1])["per_query"]["1"]["recip_rank"] == 0.5
    assert json.loads(cli(*base, "--trec-order")[1])["per_query"]["1"]["recip_rank"] == 1.0


@pytest.mark.parametrize("which, text, message", [
    ("run", "1 Q0 a 1 3.0\n", "6 columns"),
    ("run", "1 Q0 a 1 high sys\n", "not a number"),
    ("run", "1 Q0 a 1 3.0 sys\n1 Q0 a 2 2.0 sys\n", "appears twice"),
    ("qrels", "1 0 a\n", "4 columns"),
    ("qrels", "1 0 a yes\n", "not an integer"),
])
def test_malformed_files(cli, files, which, text, message):
    files[which].write_text(text)
    code, out, err = cli("ir-score", "--qrels", files["qrels"], "--run", files["run"], "--measures", "map")
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err
    assert f"{files[which]}:" in err  # names the file and line


@pytest.mark.parametrize("extra, message", [
    (["--measures", "map,rbo"], "--reference-run"),
    (["--measures", "aqwv"], "--collection-size"),
    (["--measures", "mqwv"], "--collection-size"),
    (["--measures", "map,nosuch"], "unknown measure 'nosuch'"),
    (["--measures", "map", "--format", "xml"], "json or tsv"),
    (["--measures", "map", "--pseudo-qrels", "5"], "exactly one of"),
    (["--measures", "aqwv", "--collection-size", "0"], "positive integer"),
])
def test_user_errors(cli, files, extra, message):
    code, out, err = cli("ir-score", "--qrels", files["qrels"], "--run", files["run"], *extra)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err
    assert "Traceback" not in err
