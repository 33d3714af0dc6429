"""COMET and BLEURT from local checkpoints (the [neural] extra): tiny random models built here in
each library's layout, scored through the libraries' own loading and scoring code, compared with
the libraries' own Python API on the same checkpoint and inputs. Skipped without the extra."""

from __future__ import annotations

import socket
from importlib.metadata import PackageNotFoundError, version

import numpy as np
import pytest
from neural_models import bleurt_checkpoint, comet_checkpoint

from clir_eval.errors import UserError
from clir_eval.mt import neural
from clir_eval.mt.base import collect_stats, load_metric


def _missing() -> list[str]:
    out = []
    for dist in ("unbabel-comet", "bleurt-pytorch", "torch", "transformers"):
        try:
            version(dist)
        except PackageNotFoundError:
            out.append(dist)
    return out


pytestmark = pytest.mark.skipif(
    bool(_missing()), reason=f"the [neural] extra is not installed ({', '.join(_missing())} missing): "
                             "pip install 'clir-eval[neural]'")

SRC = ["die Katze sitzt auf der Matte", "ein Hund bellt", "der Ausschuss nahm den Bericht an", "", "über straße",
       "Maschinelle Übersetzung", "der Mond"]
HYP = ["the cat sits on the mat", "a dog barks loudly at the moon tonight", "the committee adopted the report",
       "", "naïve café", "machine translation for retrieval", "the moon"]
REF = ["the cat sat on the mat", "a dog barks", "the committee adopted the report", "nothing", "over the street",
       "machine translation", "moon"]
REF2 = ["a cat sat on a mat", "the dog barks", "the report was adopted", "empty", "street", "translation by machine",
        "the moon"]


@pytest.fixture(scope="module")
def comet_dir(tmp_path_factory):
    return comet_checkpoint(tmp_path_factory.mktemp("comet") / "tiny-comet")


@pytest.fixture(scope="module")
def bleurt_dirs(tmp_path_factory):
    d = tmp_path_factory.mktemp("bleurt")
    return {"wordpiece": bleurt_checkpoint(d / "tiny-bleurt"), "spm": bleurt_checkpoint(d / "tiny-bleurt-20", "spm")}


@pytest.fixture(autouse=True)
def _fresh_models(monkeypatch):
    monkeypatch.setattr(neural, "_MODELS", {})
    monkeypatch.setattr(neural, "LOADS", [])


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a network connection fails the test."""
    def refuse(*a, **k):
        raise AssertionError(f"network access attempted: {a!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def comet_api(path, samples, monkeypatch, batch_size=8):
    """unbabel-comet's own API: load_from_checkpoint + predict (its encoder name resolved from the
    checkpoint directory, as a relative path)."""
    import comet

    monkeypatch.chdir(path)
    model = comet.load_from_checkpoint(str(path / "checkpoints" / "model.ckpt"), local_files_only=True)
    return model.predict(samples, batch_size=batch_size, gpus=0, progress_bar=False)


def test_comet_equals_the_library_api(comet_dir, monkeypatch, no_network):
    m = load_metric(f"comet:model={comet_dir}")
    st = collect_stats([m], HYP, [REF], sources=SRC)[m.name]
    want = comet_api(comet_dir, [{"src": s, "mt": h, "ref": r} for s, h, r in zip(SRC, HYP, REF)], monkeypatch)
    assert np.ptp(want.scores) > 0.01  # the tiny model's scores differ by segment
    np.testing.assert_allclose(st[:, 0], want.scores, rtol=0, atol=1e-6)
    assert (st[:, 1] == 1).all()
    res = m.score_stats(st, 1)
    assert res.score == pytest.approx(want.system_score, abs=1e-6)
    assert res.signature.startswith("nrefs:1|model:tiny-comet|sha1:") and "|unbabel-comet:" in res.signature
    assert "|torch:" in res.signature and res.signature.endswith("|src:yes") and neural.LOADS == [f"comet:{comet_dir}"]


def test_comet_batch_size_and_references(comet_dir):
    m = load_metric(f"comet:model={comet_dir}")
    one = m.segment_stats(HYP, [REF], sources=SRC)[:, 0]
    for bs in (1, 3, 100):
        neural.set_runtime([m], batch_size=bs)
        np.testing.assert_allclose(m.segment_stats(HYP, [REF], sources=SRC)[:, 0], one, rtol=0, atol=1e-6)
    other = m.segment_stats(HYP, [REF2], sources=SRC)[:, 0]
    both = m.segment_stats(HYP, [REF, REF2], sources=SRC)[:, 0]
    assert np.abs(other - one).max() > 1e-3
    np.testing.assert_allclose(both, (one + other) / 2, rtol=0, atol=1e-12)
    assert len(neural.LOADS) == 1  # one load per process and directory


def test_comet_reads_the_source(comet_dir):
    m = load_metric(f"comet:model={comet_dir}")
    a = m.segment_stats(HYP, [REF], sources=SRC)[:, 0]
    b = m.segment_stats(HYP, [REF], sources=SRC[::-1])[:, 0]
    assert np.abs(a - b).max() > 1e-4
    with pytest.raises(UserError, match=r"needs the source segments: give --src FILE \(mt-score, mt-compare\)"):
        collect_stats([m], HYP, [REF])
    with pytest.raises(UserError, match="source has 2 segments but the hypotheses have 7"):
        m.segment_stats(HYP, [REF], sources=SRC[:2])


def test_comet_encoder_named_by_a_local_path(tmp_path, monkeypatch):
    """A checkpoint whose hparams name the encoder by an absolute local path (comet's own way
    to use a local encoder) loads from there and scores as comet's API does."""
    d = comet_checkpoint(tmp_path / "c2", encoder_name="enc", encoder_path=str(tmp_path / "c2" / "enc"))
    m = load_metric(f"comet:model={d}")
    want = comet_api(d, [{"src": s, "mt": h, "ref": r} for s, h, r in zip(SRC, HYP, REF)], monkeypatch, 3)
    np.testing.assert_allclose(m.segment_stats(HYP, [REF], sources=SRC)[:, 0], want.scores, atol=1e-6, rtol=0)


@pytest.mark.parametrize("kind", ["wordpiece", "spm"])
def test_bleurt_equals_the_library_api(bleurt_dirs, kind, no_network):
    """Our scores are bleurt-pytorch's README usage applied to the batches we form, exactly. The
    library's own float32 scores move with a batch's composition (its padded length changes the
    order of the sums), so across batch sizes they agree to float32 rounding only."""
    import torch
    from bleurt_pytorch import BleurtForSequenceClassification, BleurtTokenizer

    path = bleurt_dirs[kind]
    tok = BleurtTokenizer.from_pretrained(str(path))
    model = BleurtForSequenceClassification.from_pretrained(str(path)).eval()

    def library(rows):  # bleurt-pytorch's README usage on the segments ``rows``
        with torch.no_grad():
            inputs = tok([REF[i] for i in rows], [HYP[i] for i in rows], padding="longest", return_tensors="pt")
            return model(**inputs).logits.flatten().tolist()

    whole = np.asarray(library(range(len(HYP))))
    assert np.ptp(whole) > 0.01
    m = load_metric(f"bleurt:model={path}")
    for bs in (1, 4, 16):
        neural.set_runtime([m], batch_size=bs)
        batches = m.batches(HYP, REF, None)
        assert sorted(i for b in batches for i in b) == list(range(len(HYP))) and max(map(len, batches)) <= bs
        want = np.zeros(len(HYP))
        for rows in batches:
            want[rows] = library(rows)
        got = m.segment_stats(HYP, [REF])[:, 0]
        np.testing.assert_array_equal(got, want)  # same batches: the same numbers
        ulp = np.spacing(np.float32(np.abs(whole).max()))
        assert np.abs(got - whole).max() <= 16 * ulp  # other batches: float32 rounding of the library itself
    assert m.corpus_score(HYP, [REF]).score == pytest.approx(np.mean(whole), abs=1e-6)
    assert m.corpus_score(HYP, [REF]).signature.startswith(f"nrefs:1|model:{path.name}|sha1:")
    assert "|bleurt-pytorch:" in m.signature(1) and len(neural.LOADS) == 1


class CountingStore:
    def __init__(self):
        self.data, self.saves = {}, 0

    def load(self, key):
        import json
        return self.data.get(json.dumps(key, sort_keys=True))

    def save(self, key, scores):
        import json
        self.saves += 1
        self.data[json.dumps(key, sort_keys=True)] = list(scores)


def test_stored_scores_are_used_without_loading_the_model(comet_dir, bleurt_dirs):
    store = CountingStore()
    specs = [f"comet:model={comet_dir}", f"bleurt:model={bleurt_dirs['wordpiece']}"]
    ms = [load_metric(s) for s in specs]
    neural.set_runtime(ms, store=store)
    first = collect_stats(ms, HYP, [REF, REF2], sources=SRC)
    assert store.saves == 4 and len(neural.LOADS) == 2
    neural._MODELS.clear()
    neural.LOADS.clear()
    again = [load_metric(s) for s in specs]
    neural.set_runtime(again, store=store)
    second = collect_stats(again, HYP, [REF, REF2], sources=SRC)
    assert neural.LOADS == [] and store.saves == 4
    for k in first:
        assert (first[k] == second[k]).all()
    collect_stats(again[:1], HYP, [REF], sources=SRC[::-1])  # another source: another key
    assert store.saves == 5 and len(neural.LOADS) == 1


def test_cuda_asked_for_without_one_is_a_user_error(comet_dir):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    m = load_metric(f"comet:model={comet_dir}")
    neural.set_runtime([m], device="cuda")
    with pytest.raises(UserError, match="device cuda asked for, but torch .* finds no CUDA device here"):
        m.segment_stats(HYP, [REF], sources=SRC)


def test_mt_score_cli(cli, comet_dir, bleurt_dirs, tmp_path):
    for name, lines in (("h", HYP), ("r", REF), ("s", SRC)):
        (tmp_path / f"{name}.txt").write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    spec = f"comet:model={comet_dir},bleurt:model={bleurt_dirs['spm']},chrf"
    code, out, err = cli("mt-score", "--hyp", tmp_path / "h.txt", "--ref", tmp_path / "r.txt", "--src",
                         tmp_path / "s.txt", "--metrics", spec, "--batch-size", "2")
    assert code == 0 and err == "", err
    import json
    res = json.loads(out)
    m = load_metric(f"comet:model={comet_dir}")
    want = float(np.mean(m.segment_stats(HYP, [REF], sources=SRC)[:, 0]))
    assert res[m.name]["score"] == pytest.approx(want, abs=1e-6)  # batch 2 vs 16: float32 rounding
    assert res[m.name]["segments"] == 7 and "chrf" in res
    code, out, err = cli("mt-score", "--hyp", tmp_path / "h.txt", "--ref", tmp_path / "r.txt", "--metrics", spec)
    assert code == 2 and err.startswith("error: metric comet needs the source segments") and err.count("\n") == 1
    (tmp_path / "h2.txt").write_text("".join(x + "\n" for x in REF2), encoding="utf-8")
    code, out, err = cli("mt-compare", "--hyp", tmp_path / "h.txt", "--hyp", tmp_path / "h2.txt", "--ref",
                         tmp_path / "r.txt", "--src", tmp_path / "s.txt", "--metrics", f"comet:model={comet_dir}",
                         "--bootstrap", "20", "--ar-trials", "20")
    assert code == 0, err
    row = json.loads(out)["comparisons"][0]
    assert row["score_baseline"] == pytest.approx(want, abs=1e-6)
    assert row["score_system"] == pytest.approx(float(np.mean(m.segment_stats(REF2, [REF], sources=SRC)[:, 0])), abs=1e-6)


# --------------------------------------------------------------------------- in the pipeline
def _experiment(root, comet_dir, bleurt_dir, **mt):
    import yaml
    from test_pipeline import make_experiment

    exp = make_experiment(root, n_docs=16, drop_rates=(0.0, 0.3, 0.7))
    refs = (root / "ref.txt").read_text().splitlines()
    (root / "src.txt").write_text("".join(" ".join(reversed(r.split())) + "\n" for r in refs))
    cfg = yaml.safe_load(exp.read_text())
    cfg["mt"].update({"metrics": ["bleu", f"comet:model={comet_dir}", f"bleurt:model={bleurt_dir}"],
                      "source": "src.txt", "batch_size": 4, **mt})
    cfg["correlation"] = {"bootstrap": 0, "permutation": 0}
    exp.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return exp


def _direct(spec, hyp_file, ref_file, src_file):
    m = load_metric(spec)
    lines = [p.read_text(encoding="utf-8").splitlines() for p in (hyp_file, ref_file, src_file)]
    return float(np.mean(collect_stats([m], lines[0], [lines[1]], sources=lines[2])[m.name][:, 0]))  # batch 16


def test_run_scores_caches_and_correlates_neural_metrics(cli, comet_dir, bleurt_dirs, tmp_path):
    import json

    import yaml

    exp = _experiment(tmp_path, comet_dir, bleurt_dirs["wordpiece"])
    out = tmp_path / "out"
    code, _, err = cli("run", exp, "--out", out, "-j", "1", "-q")
    assert code == 0, err
    res = json.loads((out / "results.json").read_text())
    comet, bleurt = f"comet:model={comet_dir}", f"bleurt:model={bleurt_dirs['wordpiece']}"
    for k in range(3):
        got = res["systems"][f"sys{k}"]["mt"]
        hyp = tmp_path / "systems" / f"sys{k}.txt"
        assert got[comet] == pytest.approx(_direct(comet, hyp, tmp_path / "ref.txt", tmp_path / "src.txt"), abs=1e-6)
        assert got[bleurt] == pytest.approx(_direct(bleurt, hyp, tmp_path / "ref.txt", tmp_path / "src.txt"), abs=1e-6)
    assert {c["mt_metric"] for c in res["correlations"]} >= {comet, bleurt}
    assert res["signature"]["mt"][comet].startswith("nrefs:1|model:tiny-comet|sha1:")
    assert res["signature"]["mt_settings"]["source"].startswith("sha1:")
    entries = [p.name for p in (out / "cache" / "neural").glob("*.manifest.json")]
    # 2 metrics x 3 systems' MT test sets + bleurt's item-level lines of 3 systems' collections
    assert len([n for n in entries if n.startswith(("comet-", "bleurt-"))]) == 9
    assert len([n for n in entries if n.startswith("checkpoint-files-")]) == 2  # hashed once, for the workers
    assert len(neural.LOADS) == 2  # one load per metric for the whole run (scored before the systems run)
    code, table, err = cli("correlate", "--table", out / "scores.tsv", "--x", f"{comet},{bleurt}", "--y", "map",
                           "--ci", "0")  # the run's scores table, read back by correlate
    assert code == 0, err
    got = {r["x"]: r["tau"] for r in json.loads(table)}
    want = {c["mt_metric"]: c["tau"] for c in res["correlations"] if c["ir_measure"] == "map" and c["kind"] == "mt-ir"}
    assert got == {comet: want[comet], bleurt: want[bleurt]}

    neural._MODELS.clear()
    neural.LOADS.clear()
    assert cli("run", exp, "--out", out, "-j", "1", "-q")[0] == 0
    assert neural.LOADS == []  # cached re-run
    cfg = yaml.safe_load(exp.read_text())
    cfg["mt"]["metrics"].append("chrf")  # the MT stage re-runs; the segment scores come from the store
    exp.write_text(yaml.safe_dump(cfg, sort_keys=False))
    assert cli("run", exp, "--out", out, "-j", "1", "-q")[0] == 0
    again = json.loads((out / "results.json").read_text())
    assert neural.LOADS == [] and "chrf" in again["systems"]["sys0"]["mt"]
    assert all(again["systems"][s]["mt"][comet] == res["systems"][s]["mt"][comet] for s in res["systems"])


def test_run_without_a_source_for_comet_is_one_error(cli, comet_dir, bleurt_dirs, tmp_path):
    import yaml

    exp = _experiment(tmp_path, comet_dir, bleurt_dirs["wordpiece"])
    cfg = yaml.safe_load(exp.read_text())
    del cfg["mt"]["source"]
    exp.write_text(yaml.safe_dump(cfg, sort_keys=False))
    code, out, err = cli("run", exp, "--out", tmp_path / "out", "-j", "1", "-q")
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert "metric comet needs the source segments" in err


def _run(cli, tmp_path, cfg):
    """``clir-eval run`` of ``cfg`` (written to tmp_path/exp.yaml) into tmp_path/out, one job, quiet; it succeeds."""
    import yaml

    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump(cfg, sort_keys=False))
    out = tmp_path / "out"
    code, _, err = cli("run", exp, "--out", out, "-j", "1", "-q")
    assert code == 0, err
    return out


def test_wmt_run_takes_the_source_from_the_xml(cli, comet_dir, tmp_path):
    import json

    from wmt_gen import make_set

    xml = make_set(tmp_path / "t.xml", 6, rates=(0.1, 0.5, 0.9))
    cfg = {"name": "gen", "wmt": {"xml": str(xml), "reference": "A"}, "queries": {"generate": "headline"},
           "mt": {"metrics": [f"comet:model={comet_dir}"]}, "retrieval": {"depth": 20}, "ir": {"measures": ["map"]},
           "correlation": {"bootstrap": 0, "permutation": 0}}
    out = _run(cli, tmp_path, cfg)
    res = json.loads((out / "results.json").read_text())
    d = next((out / "cache" / "sources").glob("wmt-*"))
    src = next(d.glob("src.*.txt"))
    assert src.read_text().splitlines()[0].split() == next(d.glob("ref-A.*.txt")).read_text().splitlines()[0].split()[::-1]
    spec = f"comet:model={comet_dir}"
    for name in ("S0", "S2"):
        want = _direct(spec, next(d.glob(f"hyp-{name}.*.txt")), next(d.glob("ref-A.*.txt")), src)
        assert res["systems"][name]["mt"][spec] == pytest.approx(want, abs=1e-6)  # batch 16 vs all at once


@pytest.mark.parametrize("which", ["comet", "bleurt"])
def test_damaged_weights_are_one_error(cli, comet_dir, bleurt_dirs, tmp_path, which):
    import shutil

    src = comet_dir if which == "comet" else bleurt_dirs["wordpiece"]
    d = tmp_path / "damaged"
    shutil.copytree(src, d)
    (d / ("checkpoints/model.ckpt" if which == "comet" else "model.safetensors")).write_bytes(b"not weights\n")
    for name, lines in (("h", HYP), ("r", REF), ("s", SRC)):
        (tmp_path / f"{name}.txt").write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    code, out, err = cli("mt-score", "--hyp", tmp_path / "h.txt", "--ref", tmp_path / "r.txt", "--src",
                         tmp_path / "s.txt", "--metrics", f"{which}:model={d}")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"error: {which}: cannot load the checkpoint in {d} (")


def test_item_level_document_scores_are_the_mean_of_the_librarys_segment_scores(cli, comet_dir, tmp_path,
                                                                                 monkeypatch):
    """A WMT run with COMET: each document's item-level COMET score is the mean of unbabel-comet's
    own scores of that document's segments; the item-level correlations include it; the run loads
    the model once (before the systems run), and the items stage reads the stored segment scores."""
    import json

    from wmt_gen import documents, make_set, noisy

    from clir_eval.sources.wmt import read_wmt_xml

    xml = make_set(tmp_path / "t.xml", 6, rates=(0.1, 0.5, 0.9))
    spec = f"comet:model={comet_dir}"
    cfg = {"name": "gen", "wmt": {"xml": str(xml), "reference": "A"}, "queries": {"generate": "headline"},
           "mt": {"metrics": ["chrf", spec], "batch_size": 4}, "retrieval": {"depth": 20},
           "ir": {"measures": ["map"]}, "correlation": {"bootstrap": 0, "permutation": 0},
           "item_level": {"bootstrap": 20, "permutation": 0}}
    out = _run(cli, tmp_path, cfg)
    assert len(neural.LOADS) == 1  # the pre-pass; the items stage loaded nothing
    il = json.loads((out / "results.json").read_text())["item_level"]
    assert spec in il["metrics"] and il["signatures"][spec].endswith("|doc:mean-of-segments")
    assert {(r["mt_metric"], r["grouping"]) for r in il["correlations"] if r["items"] == "documents"} >= {
        (spec, g) for g in ("none", "item", "system")}
    assert any(n.startswith(f"{spec}: a document's score is the mean") for n in il["notes"])

    ref = documents(6, seed=1)
    src = read_wmt_xml(xml).source
    items = [e["value"] for e in (json.loads(p.read_text()) for p in (out / "cache" / "items").glob("*.json"))
             if "cache_key" in e]
    assert len(items) == 3  # one per system
    checked = 0
    for k, rate in enumerate((0.1, 0.5, 0.9)):
        hyp = noisy(ref, rate, seed=100 + k)
        samples = [{"src": s, "mt": h, "ref": r} for d in ref for s, h, r in zip(src[d], hyp[d], ref[d])]
        lib = comet_api(comet_dir, samples, monkeypatch).scores
        per_doc, i = {}, 0
        for d in ref:
            per_doc[d] = float(np.mean(lib[i:i + len(ref[d])]))
            i += len(ref[d])
        got = [v for v in items if all(
            abs(s - per_doc[d]) < 1e-6 for d, s in zip(v["documents"], v["mt"][spec]))]
        assert len(got) == 1, (k, per_doc)
        checked += len(got[0]["documents"])
    assert checked >= 6

    neural._MODELS.clear()
    neural.LOADS.clear()
    (out / "cache" / "items").rename(out / "cache" / "items-old")  # the items stage re-runs from the store
    assert cli("run", tmp_path / "exp.yaml", "--out", out, "-j", "1", "-q")[0] == 0
    assert neural.LOADS == []
    assert json.loads((out / "results.json").read_text())["item_level"]["correlations"] == il["correlations"]


def test_cost_estimate_scales_with_the_checkpoints_encoder(comet_dir, bleurt_dirs):
    """validate's estimate: the measured architecture's CPU rate times layers x hidden^2 of the
    checkpoint's encoder relative to it (the tiny test models: 2 layers of 16)."""
    import json

    from clir_eval.mt import rates

    for spec, cfg_file in ((f"comet:model={comet_dir}", comet_dir / "tiny-xlmr" / "config.json"),
                           (f"bleurt:model={bleurt_dirs['spm']}", bleurt_dirs["spm"] / "config.json")):
        cfg = json.loads(cfg_file.read_text())
        assert (cfg["num_hidden_layers"], cfg["hidden_size"]) == (2, 16)
        r, layers, hidden = rates.NEURAL_CPU_PER_1000_LINES[spec.split(":")[0]]
        assert rates.rate(spec) == pytest.approx(r * 2 * 16 ** 2 / (layers * hidden ** 2))


def test_item_level_scores_collection_documents_line_by_line(cli, comet_dir, bleurt_dirs, tmp_path, monkeypatch):
    """Without a WMT source, BLEURT scores each judged collection document as the mean of its lines
    against the English side's lines (bleurt-pytorch's README usage on the same batches, exactly);
    a document whose line count differs from the English side's is a missing cell; COMET, which
    needs each line's source, is left out with its note. One model load per metric for the run;
    the items stage re-runs from the store without loading."""
    import json

    exp = _experiment(tmp_path, comet_dir, bleurt_dirs["wordpiece"])
    english = [json.loads(x) for x in (tmp_path / "english.jsonl").read_text().splitlines()]

    def lines(text):  # 6 words a line
        w = text.split()
        return "\n".join(" ".join(w[i:i + 6]) for i in range(0, len(w), 6))

    (tmp_path / "english.jsonl").write_text("".join(json.dumps({"id": d["id"], "text": lines(d["text"])}) + "\n"
                                                    for d in english))
    texts = {}
    for k in range(3):
        f = tmp_path / "systems" / f"sys{k}.jsonl"
        rows = [json.loads(x) for x in f.read_text().splitlines()]
        by_line = {r["id"]: [" ".join(ln.split()[:max(1, len(ln.split()) - k)]) for ln in lines(e["text"]).split("\n")]
                   for r, e in zip(rows, english)}
        if k == 2:
            by_line["d000"] = [" ".join(by_line["d000"])]  # one line where the English side has several
        texts[f"sys{k}"] = by_line
        f.write_text("".join(json.dumps({"id": d, "text": "\n".join(t)}) + "\n" for d, t in by_line.items()))
    from clir_eval.mt import rates

    monkeypatch.setattr(rates, "SLOW", 0.0)  # warn about any neural job (the tiny models are fast)
    monkeypatch.setattr(rates, "WARN_CPU", 0.0)
    code, _, err = cli("run", exp, "--out", tmp_path / "out", "-j", "1")
    assert code == 0, err
    assert len(neural.LOADS) == 2  # comet and bleurt once each, for the MT test set and the documents
    warned = [ln for ln in err.splitlines() if ln.startswith("warning: item level, judged documents' lines: bleurt:")]
    assert len(warned) == 1 and "3 system(s)" in warned[0] and "out of item_level.metrics" in warned[0], err
    comet, bleurt = f"comet:model={comet_dir}", f"bleurt:model={bleurt_dirs['wordpiece']}"
    il = json.loads((tmp_path / "out" / "results.json").read_text())["item_level"]
    assert bleurt in il["metrics"] and comet not in il["metrics"]
    assert il["signatures"][bleurt].endswith("|doc:mean-of-lines")
    assert any(n.startswith(f"{comet}: not scored per document (it reads each segment's source") for n in il["notes"])
    note = next(n for n in il["notes"] if n.startswith(f"{bleurt}: a document's score is the mean of its lines"))
    items = [e["value"] for e in (json.loads(p.read_text()) for p in (tmp_path / "out" / "cache" / "items").glob("*.json"))
             if "cache_key" in e]
    assert len(items) == 3

    import torch
    from bleurt_pytorch import BleurtForSequenceClassification, BleurtTokenizer

    tok = BleurtTokenizer.from_pretrained(str(bleurt_dirs["wordpiece"]))
    model = BleurtForSequenceClassification.from_pretrained(str(bleurt_dirs["wordpiece"])).eval()
    m = load_metric(bleurt)
    neural.set_runtime([m], batch_size=4)  # the config's
    docs = items[0]["documents"]
    eng = {d["id"]: lines(d["text"]).split("\n") for d in english}
    matched = set()
    for name, by_line in texts.items():
        hyps, refs, where = [], [], {}
        for d in docs:
            if len(by_line[d]) == len(eng[d]):
                where[d] = range(len(hyps), len(hyps) + len(eng[d]))
                hyps += by_line[d]
                refs += eng[d]
        lib = np.zeros(len(hyps))
        for rows in m.batches(hyps, refs, None):  # bleurt-pytorch's README usage on the same batches
            with torch.no_grad():
                inputs = tok([refs[i] for i in rows], [hyps[i] for i in rows], padding="longest", return_tensors="pt")
                lib[rows] = model(**inputs).logits.flatten().tolist()
        want = [float(np.mean(lib[list(where[d])])) if d in where else None for d in docs]
        got = [v for v in items if v["mt"][bleurt] == want]
        assert len(got) == 1, name
        matched.add(name)
        assert (None in want) == (name == "sys2") and ("d000" not in where) == (name == "sys2")
    assert len(matched) == 3
    assert f"; 1 of {len(docs)} documents have a different number of lines" in note
    assert {(r["mt_metric"], r["grouping"]) for r in il["correlations"] if r["items"] == "documents"} >= {
        (bleurt, g) for g in ("none", "item", "system")}

    neural._MODELS.clear()
    neural.LOADS.clear()
    (tmp_path / "out" / "cache" / "items").rename(tmp_path / "out" / "cache" / "items-old")
    code, _, err = cli("run", exp, "--out", tmp_path / "out", "-j", "1")
    assert code == 0 and "item level, judged documents' lines" not in err, err  # nothing left to score
    assert neural.LOADS == []  # the items stage read the stored line scores
    assert json.loads((tmp_path / "out" / "results.json").read_text())["item_level"]["correlations"] == il["correlations"]
