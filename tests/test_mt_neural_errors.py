"""COMET/BLEURT user errors that need neither the [neural] extra nor a model: a missing extra, a
missing or incomplete checkpoint directory, bad device or batch size (one line each)."""

from __future__ import annotations

import json
import re

import pytest

from clir_eval.errors import UserError
from clir_eval.mt import neural
from clir_eval.mt.base import load_metric


@pytest.fixture
def installed(monkeypatch):
    """Pretend the libraries are installed: the layout checks come next."""
    monkeypatch.setattr(neural, "_version", lambda dist: "1.0")


def test_missing_extra_names_it(monkeypatch, tmp_path):
    monkeypatch.setattr(neural, "_version", lambda dist: "absent" if dist in ("unbabel-comet", "torch") else "1.0")
    with pytest.raises(UserError, match=re.escape("metric comet needs unbabel-comet, torch; install them with "
                                                  "pip install 'clir-eval[neural]'")):
        load_metric(f"comet:model={tmp_path}")


def test_no_model_parameter(installed):
    m = load_metric("bleurt")  # listing the metric needs no model; scoring does
    with pytest.raises(UserError, match=re.escape("metric bleurt needs a model: bleurt:model=DIR")):
        m.segment_stats(["a"], [["a"]])


def _touch(root, *names, text=""):
    for n in names:
        p = root / n
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def _layout_error(metric, d, files, message):
    """Loading ``metric`` from directory ``d`` holding ``files`` (name -> text; None: no directory) is the
    UserError ``metric: message`` (``{d}`` in ``message`` stands for the directory)."""
    if files is not None:
        d.mkdir()
        for name, text in files.items():
            _touch(d, name, text=text)
    with pytest.raises(UserError, match=re.escape(f"{metric}: " + message.format(d=d))):
        load_metric(f"{metric}:model={d}")


HP = "class_identifier: regression_metric\npretrained_model: xlm-roberta-large\n"


@pytest.mark.parametrize("files, message", [
    (None, "checkpoint directory not found: {d}; copy a COMET model there (e.g. huggingface-cli download "
           "Unbabel/wmt22-comet-da --local-dir DIR)"),
    ({}, "{d} lacks hparams.yaml; copy a COMET model there"),
    ({"hparams.yaml": "x: [1"}, "cannot read {d}/hparams.yaml"),
    ({"hparams.yaml": "a: 1\n"}, "{d}/hparams.yaml lacks class_identifier or pretrained_model"),
    ({"hparams.yaml": HP}, "{d} lacks checkpoints/model.ckpt"),
    ({"hparams.yaml": HP, "checkpoints/model.ckpt": ""},
     "{d} lacks the encoder directory xlm-roberta-large/ (tokenizer and config.json of xlm-roberta-large, which the "
     "checkpoint names); download them there, e.g. huggingface-cli download xlm-roberta-large config.json "
     "tokenizer.json sentencepiece.bpe.model --local-dir {d}/xlm-roberta-large"),
    ({"hparams.yaml": HP, "checkpoints/model.ckpt": "", "xlm-roberta-large/tokenizer.json": ""},
     "{d}/xlm-roberta-large lacks config.json"),
    ({"hparams.yaml": HP, "checkpoints/model.ckpt": "", "xlm-roberta-large/config.json": ""},
     "{d}/xlm-roberta-large lacks a tokenizer file (tokenizer.json or sentencepiece.bpe.model"),
])
def test_comet_layout(installed, tmp_path, files, message):
    _layout_error("comet", tmp_path / "wmt22-comet-da", files, message)


def test_comet_complete_layout_loads_without_the_library(installed, tmp_path):
    d = tmp_path / "c"
    _touch(d, "checkpoints/model.ckpt", "xlm-roberta-large/config.json", "xlm-roberta-large/sentencepiece.bpe.model")
    _touch(d, "hparams.yaml", text=HP)
    m = load_metric(f"comet:model={d}")
    assert m.name == f"comet:model={d}" and m.uses_source


@pytest.mark.parametrize("files, message", [
    (None, "checkpoint directory not found: {d}; copy a bleurt-pytorch model there"),
    ({}, "{d} lacks config.json; copy a bleurt-pytorch model there"),
    ({"config.json": json.dumps({"model_type": "bert"})},
     "{d}/config.json is not a bleurt-pytorch config (model_type is 'bert', not 'bleurt')"),
    ({"config.json": json.dumps({"model_type": "bleurt"})}, "{d} lacks the weights (model.safetensors or "
                                                            "pytorch_model.bin)"),
    ({"config.json": json.dumps({"model_type": "bleurt"}), "model.safetensors": ""},
     "{d} lacks a tokenizer file (tokenizer.json or vocab.txt or spm.model)"),
])
def test_bleurt_layout(installed, tmp_path, files, message):
    _layout_error("bleurt", tmp_path / "BLEURT-20-D12", files, message)


def test_cli_error_is_one_line(cli, tmp_path):
    (tmp_path / "h.txt").write_text("a b\n")
    code, out, err = cli("mt-score", "--hyp", tmp_path / "h.txt", "--ref", tmp_path / "h.txt",
                         "--metrics", f"bleurt:model={tmp_path / 'no-such-dir'}")
    assert code == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1, err
    assert "no-such-dir" in err or "pip install 'clir-eval[neural]'" in err


@pytest.mark.parametrize("args, message", [
    (["--device", "gpu"], "device 'gpu' is not cpu, cuda or cuda:N"),
    (["--batch-size", "0"], "--batch-size 0 must be a positive integer <= 4096"),
])
def test_cli_runtime_options(cli, tmp_path, args, message):
    (tmp_path / "h.txt").write_text("a b\n")
    code, out, err = cli("mt-score", "--hyp", tmp_path / "h.txt", "--ref", tmp_path / "h.txt", "--metrics", "bleu",
                         *args)
    assert code == 2 and err == f"error: {message}\n"


def test_checkpoint_hash_covers_content_not_hidden_files(tmp_path):
    _touch(tmp_path, "a.bin", text="x")
    h = neural.checkpoint_hash(tmp_path)
    _touch(tmp_path, ".cache/huggingface/download/a.bin.metadata", text="etag")
    assert neural.checkpoint_hash(tmp_path) == h
    _touch(tmp_path, "sub/b.txt", text="y")
    h2 = neural.checkpoint_hash(tmp_path)
    assert h2 != h
    (tmp_path / "sub" / "b.txt").write_text("z")
    assert neural.checkpoint_hash(tmp_path) not in (h, h2)


def test_checkpoint_hash_record_spares_other_processes_the_reading(tmp_path, monkeypatch):
    """A run's store keeps the checkpoint files' hashes: a fresh process (empty memo) whose files
    still have the recorded size, mtime and inode takes them without reading; a changed file is read
    again and changes the digest."""
    from clir_eval.pipeline.cache import Cache
    from clir_eval.pipeline.stages import SegmentStore

    ckpt = tmp_path / "ckpt"
    _touch(ckpt, "a.bin", text="x" * 100)
    _touch(ckpt, "sub/b.txt", text="y")
    store = SegmentStore(Cache(tmp_path / "cache"))
    monkeypatch.setattr(neural, "_HASHES", {})
    h = neural.checkpoint_hash(ckpt, store)
    assert h == neural.checkpoint_hash(ckpt)  # the same digest with or without a record

    monkeypatch.setattr(neural, "_HASHES", {})  # another process
    read = []
    real = neural.file_checksum
    monkeypatch.setattr(neural, "file_checksum", lambda p: read.append(str(p)) or real(p))
    assert neural.checkpoint_hash(ckpt, store) == h and read == []

    (ckpt / "sub" / "b.txt").write_text("z")
    monkeypatch.setattr(neural, "_HASHES", {})
    h2 = neural.checkpoint_hash(ckpt, store)
    assert h2 != h and read == [str(ckpt / "sub" / "b.txt")]
    monkeypatch.setattr(neural, "_HASHES", {})
    assert neural.checkpoint_hash(ckpt) == h2  # equals a full re-hash


def test_neural_cost_estimate_and_warning():
    """COMET/BLEURT have CPU rates (their published architectures' measured rate when the checkpoint
    cannot be read); on a GPU they are not estimated; the slow-metric warning says they run in the
    main process, so the workers do not divide the time."""
    from clir_eval.mt import rates

    assert rates.rate("comet:model=/nonexistent") == rates.NEURAL_CPU_PER_1000_LINES["comet"][0]
    assert rates.cpu_estimate("bleurt:model=/nonexistent", 2000) == pytest.approx(
        2 * rates.NEURAL_CPU_PER_1000_LINES["bleurt"][0])
    assert rates.cpu_estimate("comet:model=/nonexistent", 1000, "cuda") is None
    (w,) = rates.slow_metric_warnings({"comet:model=/x": [1000] * 3, "bleu": [1000] * 3}, jobs=3)
    assert w.startswith("comet:model=/x is slow") and "in the main process" in w and "worker" not in w
    assert rates.slow_metric_warnings({"comet:model=/x": [1000] * 3}, jobs=3, device="cuda") == []


def test_progress_line_gives_rate_and_time_left(monkeypatch, capsys):
    """Off a terminal, scoring that takes long prints a line every 30 s: done, rate, time left."""
    clock = iter([0.0, 10.0, 40.0, 50.0])
    monkeypatch.setattr(neural.time, "perf_counter", lambda: next(clock))
    p = neural._Progress("comet (wmt22-comet-da)", 100, True)
    p.advance(10)  # 10 s: nothing yet
    p.advance(20)  # 40 s: 30 done at 0.75/s, 70 left
    p.advance(70)  # done: nothing
    p.close()
    assert capsys.readouterr().err == "comet (wmt22-comet-da): 30/100 segments, 0.8/s, about 1m33s left\n"


class _Lengths(neural.NeuralMetric):
    """A stand-in model (no library): a segment's score is its hypothesis' length."""

    library = "none"

    def check(self):
        pass

    def check_layout(self):
        pass

    def _load(self, device):
        return "model"

    def _score(self, model, hyps, refs, srcs):
        return [float(len(h)) for h in hyps]


def test_batches_and_a_callers_progress_display(monkeypatch, tmp_path):
    monkeypatch.setattr(neural, "_MODELS", {})
    monkeypatch.setattr(neural, "LOADS", [])
    monkeypatch.setattr(neural, "_offline", lambda: None)
    m = _Lengths("lengths", {"model": str(tmp_path)}, "13a", False)
    rows, steps = [], []
    neural.set_runtime([m], batch_size=3, display=lambda label, total: rows.append((label, total)) or steps.append)
    hyps = ["aaaa", "b", "ccc", "dd", "eeeee"]
    assert m.batches(hyps, ["x"] * 5, None) == [[1, 3, 2], [0, 4]]  # by length, 3 at a time
    (scores,), = m.fill([(hyps, [["x"] * 5], None)])
    assert scores.tolist() == [4.0, 1.0, 3.0, 2.0, 5.0]
    assert rows == [(f"{m.base} ({tmp_path.name})", 5)] and steps == [3, 2] and len(neural.LOADS) == 1
