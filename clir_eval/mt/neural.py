"""Neural MT metrics from local checkpoints: COMET (``unbabel-comet``) and BLEURT (``bleurt-pytorch``).

``comet:model=DIR`` and ``bleurt:model=DIR`` score every segment with the library's own loading and
scoring code (optional extra ``pip install 'clir-eval[neural]'``); nothing is downloaded: the
checkpoint, its tokenizer and its encoder configuration come from ``DIR`` (Hugging Face offline,
``local_files_only``), and a directory that lacks a file is a one-line error naming the file and
how to obtain it.

* COMET: ``DIR/hparams.yaml`` and ``DIR/checkpoints/model.ckpt`` as the COMET models are
  published; the checkpoint names its pretrained encoder (``pretrained_model``, e.g.
  ``xlm-roberta-large``), whose tokenizer and ``config.json`` are read from that path when it is
  a directory (relative to ``DIR``) or else from ``DIR/<its last path component>/``. Weights are
  not loaded from the encoder (``load_pretrained_weights=False``): the checkpoint holds them all.
  COMET reads the source segment, so it needs the source (WMT XML ``<src>``, ``mt.source``,
  ``mt-score --src``).
* BLEURT: a ``bleurt-pytorch`` directory (``config.json`` with ``model_type: bleurt``, weights,
  and ``vocab.txt``/``tokenizer.json`` or ``spm.model``), scored as ``BleurtForSequenceClassification``
  on tokenizer(references, candidates).

Statistics per segment: [score, 1]; the corpus score is the mean of the segment scores (what
both libraries report as the system score), so document-level scores are the means of their
segments' rows. With several references each segment's score is the mean over the references
(each scored on its own). Segments are scored in batches sorted by length (padding is masked;
the batch size does not change the scores beyond float32 rounding), on ``cpu`` or ``cuda``.

Segment scores are cached (when the caller gives a store) per checkpoint content hash, library
versions, hypothesis, reference and source text, so a cached re-run never loads the model. The
signature names the checkpoint directory and its content hash and the library versions.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from .. import lazylibs
from ..errors import UserError
from ..io.files import file_checksum, text_checksum
from .base import MTMetric, Param, check_streams, register, resampling_fields

__all__ = ["CometMetric", "BleurtMetric", "NeuralRuntime", "set_runtime", "neural_metrics", "checkpoint_hash",
           "DEVICES"]

INSTALL = "pip install 'clir-eval[neural]'"
DEFAULT_BATCH = 16
_MODELS: dict[tuple, Any] = {}
LOADS: list[str] = []  # one entry per model load in this process (tests count them)


class SegmentStore(Protocol):
    """Where segment scores are kept between runs: ``load`` gives None when absent or damaged."""

    def load(self, key: dict) -> list[float] | None: ...

    def save(self, key: dict, scores: list[float]) -> None: ...

    # A store may also keep a checkpoint's file hashes for the run's other processes:
    # ``load_file_hashes(root) -> rows | None`` and ``save_file_hashes(root, rows)`` (see checkpoint_hash).


@dataclass
class NeuralRuntime:
    """How a neural metric runs; none of it changes a score (beyond float rounding across devices)."""

    device: str = "cpu"
    batch_size: int = DEFAULT_BATCH
    store: SegmentStore | None = None
    progress: bool = True  # a bar with ETA on a terminal, else a line every 30 s once scoring takes long
    # or the caller's display: (label, segments) -> advance(n) (a row of its own live display), or None
    display: Callable[[str, int], Callable[[int], None] | None] | None = field(default=None, repr=False)
    on_load: Callable[[str], None] | None = field(default=None, repr=False)


def set_runtime(metrics: Sequence[MTMetric], **settings: Any) -> None:
    """Give every neural metric among ``metrics`` its runtime settings (device, batch size, store, ...)."""
    for m in metrics:
        if isinstance(m, NeuralMetric):
            m.runtime = NeuralRuntime(**{**m.runtime.__dict__, **settings})


def neural_metrics(metrics: Sequence[MTMetric]) -> list["NeuralMetric"]:
    return [m for m in metrics if isinstance(m, NeuralMetric)]


def check_device(device: str) -> str:
    """``cpu``, ``cuda`` or ``cuda:N`` (syntax only; availability is checked when a model is loaded)."""
    d = str(device).strip().lower()
    if d == "cpu" or d == "cuda" or (d.startswith("cuda:") and d[5:].isdigit()):
        return d
    raise UserError(f"device {device!r} is not cpu, cuda or cuda:N")


DEVICES = "cpu | cuda | cuda:N"
MAX_BATCH = 4096


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "absent"


# --------------------------------------------------------------------------- checkpoint files
_HASHES: dict[tuple, str] = {}


def _files(root: Path) -> list[Path]:
    """Every file under ``root``, hidden files and folders (download metadata) left out, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        out.extend(Path(dirpath) / f for f in filenames if not f.startswith("."))
    return sorted(out, key=lambda p: p.relative_to(root).as_posix())


def checkpoint_hash(root: str | os.PathLike, record: Any = None) -> str:
    """SHA-1 over the relative paths and SHA-1s of a checkpoint directory's files, memoised per
    file path, size, modification time (ns) and inode: a process hashes a large checkpoint once.
    ``record`` (a run's segment store) carries those memos between processes: the run's driver
    hashes the files and saves (path, size, mtime, inode, SHA-1) rows; a worker whose files still
    have the recorded size, mtime and inode takes the recorded SHA-1s without reading them. (A file
    rewritten in place with the same size and modification time to the nanosecond would be missed,
    as by make or rsync.)"""
    root = Path(root)
    rid = str(root.resolve())
    load, save = getattr(record, "load_file_hashes", None), getattr(record, "save_file_hashes", None)
    files = _files(root)
    keys = []
    for p in files:
        try:
            st = p.stat()
        except OSError as e:
            raise UserError(f"cannot read {p} ({e.strerror or e}); the checkpoint directory must be readable") from None
        keys.append((str(p), st.st_size, st.st_mtime_ns, st.st_ino))
    recorded: set[tuple] = set()
    if load is not None:
        for row in load(rid) or []:
            if isinstance(row, list) and len(row) == 5 and all(isinstance(x, int) for x in row[1:4]) and isinstance(row[4], str):
                recorded.add(tuple(row[:4]))
                _HASHES.setdefault(tuple(row[:4]), row[4])
    for k in keys:
        if k not in _HASHES:
            try:
                _HASHES[k] = file_checksum(k[0])
            except OSError as e:
                raise UserError(f"cannot read {k[0]} ({e.strerror or e}); the checkpoint directory must be readable") from None
    if save is not None and not recorded.issuperset(keys):
        save(rid, [[*k, _HASHES[k]] for k in keys])
    h = hashlib.sha1()
    for p, k in zip(files, keys):
        h.update(f"{p.relative_to(root).as_posix()}:{_HASHES[k]}\n".encode())
    return h.hexdigest()


def _json(p: Path) -> dict:
    try:
        got = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise UserError(f"cannot read {p} ({_short(e)})") from None
    if not isinstance(got, dict):
        raise UserError(f"{p} is not a JSON object")
    return got


def _need(root: Path, rel: str, what: str, how: str) -> Path:
    p = root / rel
    if not p.is_file():
        raise UserError(f"{what}: {root} lacks {rel}; {how}")
    return p


# --------------------------------------------------------------------------- progress
class _Progress:
    """Segments scored so far, with rate and time left: a rich bar on a terminal, else a line
    on stderr every 30 s (nothing for short jobs)."""

    def __init__(self, label: str, total: int, enabled: bool):
        self.label, self.total, self.done = label, total, 0
        self.t0 = self.last = time.perf_counter()
        self._bar = None
        if enabled and total and sys.stderr.isatty():
            rp = lazylibs.rich_progress()
            self._bar = rp.Progress(rp.TextColumn("{task.description:<22}"), rp.BarColumn(), rp.MofNCompleteColumn(),
                                    rp.TimeElapsedColumn(), rp.TextColumn("ETA"), rp.TimeRemainingColumn(),
                                    transient=False)
            self._bar.__enter__()
            self._tid = self._bar.add_task(label, total=total)
        self.lines = enabled and self._bar is None

    def advance(self, n: int) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.advance(self._tid, n)
            return
        now = time.perf_counter()
        if self.lines and now - self.last >= 30 and self.done < self.total:
            self.last = now
            rate = self.done / (now - self.t0)
            left = (self.total - self.done) / rate if rate > 0 else float("inf")
            sys.stderr.write(f"{self.label}: {self.done}/{self.total} segments, {rate:.1f}/s, about "
                             f"{_duration(left)} left\n")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


def _duration(s: float) -> str:
    if s == float("inf"):
        return "?"
    m, s = divmod(int(s + 0.5), 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s"


# --------------------------------------------------------------------------- the metrics
class NeuralMetric(MTMetric):
    """A learned metric: [score, 1] per segment from a local checkpoint; corpus score = mean."""

    library = ""  # distribution name of the scoring library
    runtime: NeuralRuntime

    def __init__(self, name: str, params: dict[str, Any], tokenize: str, lowercase: bool):
        super().__init__(name, params, tokenize, lowercase)
        self.root = Path(params["model"])
        self.runtime = NeuralRuntime()
        if params["model"]:  # checked early (config validation); without a model, when used
            self.check()

    def check(self) -> None:
        """The library is installed and the checkpoint directory has every file it needs."""
        if not self.params["model"]:
            raise UserError(f"metric {self.base} needs a model: {self.base}:model=DIR (a local checkpoint directory; "
                            "see docs/neural-metrics.md)")
        self.check_library()
        self.check_layout()

    def stats_key(self) -> tuple:
        return (self.name,)  # tokenisation and case are the model's own

    # -- to implement per library
    def check_layout(self) -> None:
        raise NotImplementedError

    def _load(self, device: str):
        raise NotImplementedError

    def encoder_config(self) -> dict:
        """The encoder's config.json (its size: cost estimates)."""
        raise NotImplementedError

    def _score(self, model, hyps: list[str], refs: list[str], srcs: list[str] | None) -> list[float]:
        """Scores of one batch (the library's scoring code)."""
        raise NotImplementedError

    # -- shared
    def check_library(self) -> None:
        missing = [d for d in (self.library, "torch", "transformers") if _version(d) == "absent"]
        if missing:
            raise UserError(f"metric {self.base} needs {', '.join(missing)}; install them with {INSTALL}")

    def model(self):
        """The loaded model (once per process, directory and device)."""
        device = self.runtime.device
        key = (type(self).__name__, str(self.root.resolve()), device)
        if key not in _MODELS:
            self.check_layout()
            _offline()
            _check_cuda(device)
            _MODELS[key] = self._load(device)
            LOADS.append(f"{self.base}:{self.root}")
        return _MODELS[key]

    def key(self, hyps: Sequence[str], ref: Sequence[str], srcs: Sequence[str] | None) -> dict:
        """What one reference stream's segment scores depend on (the store's key)."""
        return {
            "metric": self.base, "checkpoint": checkpoint_hash(self.root, self.runtime.store), "versions": self.versions(),
            "hyp": text_checksum(*hyps), "ref": text_checksum(*ref), "n": len(hyps),
            "src": text_checksum(*srcs) if srcs is not None and self.uses_source else None,
        }

    def versions(self) -> list[list[str]]:
        return [[d, _version(d)] for d in (self.library, "torch", "transformers")]

    def segment_stats(self, hyps: Sequence[str], refs, sources: Sequence[str] | None = None) -> np.ndarray:
        check_streams(hyps, refs)
        self.check()
        srcs = self._sources(hyps, sources)
        per_ref = self.segment_scores(list(hyps), [list(r) for r in refs], srcs)
        out = np.ones((len(hyps), 2), dtype=np.float64)
        out[:, 0] = np.mean(per_ref, axis=0) if per_ref else 0.0
        return out

    def _sources(self, hyps: Sequence[str], sources: Sequence[str] | None) -> list[str] | None:
        if not self.uses_source:
            return None
        if sources is None:
            raise UserError(f"metric {self.base} needs the source segments: give --src FILE (mt-score, mt-compare), mt.source in the "
                            "config, or a WMT XML source (its <src>)")
        if len(sources) != len(hyps):
            raise UserError(f"metric {self.base}: the source has {len(sources)} segments but the hypotheses have "
                            f"{len(hyps)}; the source must be line-aligned with them")
        return list(sources)

    def segment_scores(self, hyps: list[str], refs: list[list[str]], srcs: list[str] | None) -> list[np.ndarray]:
        """One score vector per reference stream, from the store when it has them (the model is then
        not loaded), else computed and stored."""
        return self.fill([(hyps, refs, srcs)])[0]

    def fill(self, items: Sequence[tuple[list[str], list[list[str]], list[str] | None]]) -> list[list[np.ndarray]]:
        """Segment scores of several (hypotheses, reference streams, sources) items, e.g. every
        system of a run: what the store lacks is computed with one model load and one progress bar."""
        store = self.runtime.store
        got: list[list[Any]] = []
        todo = []
        for i, (hyps, refs, srcs) in enumerate(items):
            row = []
            for j, ref in enumerate(refs):
                key = self.key(hyps, ref, srcs)
                scores = store.load(key) if store is not None else None
                if scores is None or len(scores) != len(hyps):
                    todo.append((i, j, key))
                row.append(scores)
            got.append(row)
        if todo:
            total = sum(len(items[i][0]) for i, _, _ in todo)
            label = f"{self.base} ({self.root.name})"
            shown = self.runtime.display(label, total) if self.runtime.display is not None else None
            progress = _Progress(label, total, self.runtime.progress and shown is None)
            try:
                for i, j, key in todo:
                    hyps, refs, srcs = items[i]
                    got[i][j] = self.compute(hyps, refs[j], srcs, shown or progress.advance)
                    if store is not None:
                        store.save(key, [float(x) for x in got[i][j]])
            finally:
                progress.close()
        return [[np.asarray(g, dtype=np.float64) for g in row] for row in got]

    def batches(self, hyps: Sequence[str], ref: Sequence[str], srcs: Sequence[str] | None) -> list[list[int]]:
        """The segments of each batch, in scoring order: sorted by length in characters (ties by
        position), ``batch_size`` at a time. A float32 model's score of a segment depends on its
        batch (the padded length changes the order of the sums) by a few units in the last place;
        scoring the same batches through the library's own API gives the same numbers exactly."""
        bs = self.runtime.batch_size
        order = sorted(range(len(hyps)), key=lambda i: (len(hyps[i]) + len(ref[i]) + (len(srcs[i]) if srcs else 0), i))
        return [order[s:s + bs] for s in range(0, len(order), bs)]

    def compute(self, hyps: list[str], ref: list[str], srcs: list[str] | None,
                advance: Callable[[int], None] = lambda n: None) -> np.ndarray:
        """Scores of every segment against one reference stream, in length-sorted batches."""
        model = self.model()
        out = np.zeros(len(hyps), dtype=np.float64)
        for idx in self.batches(hyps, ref, srcs):
            scores = self._score(model, [hyps[i] for i in idx], [ref[i] for i in idx],
                                 [srcs[i] for i in idx] if srcs is not None else None)
            out[idx] = scores
            advance(len(idx))
        return out

    def score_totals(self, totals):
        total, n = float(totals[0]), float(totals[1])
        return (total / n if n else 0.0), {"segments": int(n)}

    def signature(self, nrefs: int, **extra) -> str:
        self.check()
        return "|".join([
            f"nrefs:{nrefs}", *resampling_fields(extra), f"model:{self.root.name}",
            f"sha1:{checkpoint_hash(self.root, self.runtime.store)[:12]}", *(f"{d}:{v}" for d, v in self.versions()),
        ])


def _offline() -> None:
    """Hugging Face libraries never reach the network from here (set before they are imported)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _check_cuda(device: str) -> None:
    if not device.startswith("cuda"):
        return
    torch = lazylibs.torch()
    if not torch.cuda.is_available():
        raise UserError(f"device {device} asked for, but torch {torch.__version__} finds no CUDA device here; "
                        "use device cpu (the default)")
    n = torch.cuda.device_count()
    if ":" in device and int(device.split(":")[1]) >= n:
        raise UserError(f"device {device} asked for, but torch finds {n} CUDA device(s) (cuda:0 .. cuda:{n - 1})")


def _quiet_loggers() -> None:
    """stderr carries the harness's own lines: the libraries' info messages and tips are silenced."""
    for name in ("comet", "pytorch_lightning", "lightning", "lightning.pytorch", "lightning_fabric", "transformers"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", message=".*pkg_resources.*")
    try:
        hf_logging = lazylibs.transformers_logging()
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except ImportError:
        pass


def _short(e: BaseException) -> str:
    return " ".join(str(e).split())[:240]


_COMET_HOW = ("copy a COMET model there (e.g. huggingface-cli download Unbabel/wmt22-comet-da --local-dir DIR) and its "
              "encoder's tokenizer and config.json (see docs/neural-metrics.md)")
_ENCODER_TOKENIZERS = ("tokenizer.json", "sentencepiece.bpe.model", "spm.model", "vocab.txt")


@register("comet", (
    Param("model", str, "", "local COMET checkpoint directory (hparams.yaml, checkpoints/model.ckpt, encoder files)",
          bool, "a directory path"),
), "COMET (unbabel-comet) from a local checkpoint: mean segment score; needs the source (comet:model=DIR)")
class CometMetric(NeuralMetric):
    """COMET segment scores (Rei et al. 2020) through unbabel-comet's own model classes."""

    library = "unbabel-comet"
    uses_source = True

    def hparams(self) -> dict:
        yaml = lazylibs.yaml()
        p = _need(self.root, "hparams.yaml", "comet", _COMET_HOW)
        try:
            hp = yaml.safe_load(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
            raise UserError(f"comet: cannot read {p} ({_short(e)}); it must be the hparams.yaml of a COMET model") from None
        if not isinstance(hp, dict) or not hp.get("class_identifier") or not hp.get("pretrained_model"):
            raise UserError(f"comet: {p} lacks class_identifier or pretrained_model; it must be the hparams.yaml of a "
                            "COMET model")
        return hp

    def encoder_config(self) -> dict:
        return _json(self.encoder_dir(self.hparams()) / "config.json")

    def encoder_dir(self, hp: dict) -> Path:
        """The directory holding the pretrained encoder's tokenizer and config.json."""
        name = str(hp["pretrained_model"])
        p = Path(name) if Path(name).is_absolute() else self.root / name
        cand = p if p.is_dir() else self.root / Path(name).name
        if not cand.is_dir():
            raise UserError(
                f"comet: {self.root} lacks the encoder directory {Path(name).name}/ (tokenizer and config.json of "
                f"{name}, which the checkpoint names); download them there, e.g. huggingface-cli download {name} "
                f"config.json tokenizer.json sentencepiece.bpe.model --local-dir {self.root / Path(name).name}")
        _need(cand, "config.json", "comet", f"copy the config.json of {name} there")
        if not any((cand / t).is_file() for t in _ENCODER_TOKENIZERS):
            raise UserError(f"comet: {cand} lacks a tokenizer file ({' or '.join(_ENCODER_TOKENIZERS)}); copy the "
                            f"tokenizer files of {name} there")
        return cand

    def check_layout(self) -> None:
        if not self.root.is_dir():
            raise UserError(f"comet: checkpoint directory not found: {self.root}; {_COMET_HOW}")
        hp = self.hparams()
        _need(self.root, "checkpoints/model.ckpt", "comet", _COMET_HOW)
        self.encoder_dir(hp)

    def _load(self, device: str):
        _quiet_loggers()
        torch = lazylibs.torch()
        str2model = lazylibs.comet_models().str2model
        hp = self.hparams()
        cls = str2model.get(hp["class_identifier"])
        if cls is None:
            raise UserError(f"comet: {self.root}/hparams.yaml: class_identifier {hp['class_identifier']!r} is not one "
                            f"of unbabel-comet {_version('unbabel-comet')}'s models ({', '.join(str2model)})")
        kwargs: dict[str, Any] = {}
        # as comet.load_from_checkpoint does (its workaround for checkpoints of comet < 2.2.4)
        Version = lazylibs.packaging_version().Version
        if hp.get("layer_transformation") == "sparsemax_patch" and Version(_version("unbabel-comet")) >= Version("2.2.4"):
            kwargs["layer_transformation"] = "softmax"
        try:
            model = cls.load_from_checkpoint(
                checkpoint_path=self.root / "checkpoints" / "model.ckpt", load_pretrained_weights=False,
                pretrained_model=str(self.encoder_dir(hp)), local_files_only=True, hparams_file=None,
                map_location=torch.device("cpu"), strict=False, **kwargs)
        except Exception as e:  # noqa: BLE001 - any failure to read the user's files (unpickling, shapes, ...)
            raise UserError(f"comet: cannot load the checkpoint in {self.root} ({type(e).__name__}: {_short(e)}); it "
                            "must be a COMET model with its encoder's tokenizer and config.json") from None
        model.eval()
        return model.to(torch.device(device))

    def _score(self, model, hyps, refs, srcs):
        torch = lazylibs.torch()
        move_data_to_device = lazylibs.lightning_utilities().move_data_to_device
        batch = model.prepare_for_inference([{"src": s, "mt": h, "ref": r} for s, h, r in zip(srcs, hyps, refs)])
        with torch.inference_mode():
            pred = model.predict_step(move_data_to_device(batch, model.device))
        return pred["scores"].double().cpu().numpy()

    def signature(self, nrefs: int, **extra) -> str:
        return super().signature(nrefs, **extra) + "|src:yes"


_BLEURT_HOW = ("copy a bleurt-pytorch model there (e.g. huggingface-cli download lucadiliello/BLEURT-20-D12 --local-dir "
               "DIR; see docs/neural-metrics.md)")


@register("bleurt", (
    Param("model", str, "", "local bleurt-pytorch checkpoint directory (config.json, weights, tokenizer)", bool,
          "a directory path"),
), "BLEURT (bleurt-pytorch) from a local checkpoint: mean segment score (bleurt:model=DIR)")
class BleurtMetric(NeuralMetric):
    """BLEURT segment scores (Sellam et al. 2020) through bleurt-pytorch's model and tokenizer."""

    library = "bleurt-pytorch"

    def encoder_config(self) -> dict:
        return _json(self.root / "config.json")

    def check_layout(self) -> None:
        if not self.root.is_dir():
            raise UserError(f"bleurt: checkpoint directory not found: {self.root}; {_BLEURT_HOW}")
        p = _need(self.root, "config.json", "bleurt", _BLEURT_HOW)
        try:
            cfg = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise UserError(f"bleurt: cannot read {p} ({_short(e)}); {_BLEURT_HOW}") from None
        if not isinstance(cfg, dict) or cfg.get("model_type") != "bleurt":
            raise UserError(f"bleurt: {p} is not a bleurt-pytorch config (model_type is "
                            f"{cfg.get('model_type') if isinstance(cfg, dict) else None!r}, not 'bleurt'); {_BLEURT_HOW}")
        weights = ("model.safetensors", "pytorch_model.bin")
        if not any((self.root / w).is_file() for w in weights):
            raise UserError(f"bleurt: {self.root} lacks the weights ({' or '.join(weights)}); {_BLEURT_HOW}")
        toks = ("tokenizer.json", "vocab.txt", "spm.model")
        if not any((self.root / t).is_file() for t in toks):
            raise UserError(f"bleurt: {self.root} lacks a tokenizer file ({' or '.join(toks)}); {_BLEURT_HOW}")

    def _load(self, device: str):
        _quiet_loggers()
        torch = lazylibs.torch()
        bleurt = lazylibs.bleurt_pytorch()
        try:
            tok = bleurt.BleurtTokenizer.from_pretrained(str(self.root), local_files_only=True)
            model = bleurt.BleurtForSequenceClassification.from_pretrained(str(self.root), local_files_only=True)
        except Exception as e:  # noqa: BLE001 - any failure to read the user's files (safetensors, shapes, ...)
            raise UserError(f"bleurt: cannot load the checkpoint in {self.root} ({type(e).__name__}: {_short(e)}); "
                            f"{_BLEURT_HOW}") from None
        model.eval()
        limit = min(tok.model_max_length or 10**9, model.config.max_position_embeddings)
        return tok, model.to(torch.device(device)), limit

    def _score(self, model, hyps, refs, srcs):
        torch = lazylibs.torch()
        tok, net, limit = model
        inputs = tok(refs, hyps, padding="longest", truncation=True, max_length=limit, return_tensors="pt")
        with torch.inference_mode():
            logits = net(**{k: v.to(net.device) for k, v in inputs.items()}).logits
        return logits.flatten().double().cpu().numpy()
