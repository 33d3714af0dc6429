"""Nothing wrong, ever silently: damaged cache entries are recomputed with a note, edited inputs
re-run like fresh runs, one run per --out at a time, results.json last, no orphaned workers."""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml
from test_pipeline import make_experiment

from clir_eval.config.load import load_config
from clir_eval.errors import UserError
from clir_eval.pipeline.executor import WorkerLost
from clir_eval.pipeline.output import locked
from clir_eval.pipeline.run import run_experiment, run_systems
from clir_eval.pipeline.tasks import SystemTask

RECOMPUTED = "failed verification"


@pytest.fixture(autouse=True)
def _reports_without_plots(monkeypatch):
    """The reports are rendered (after the stages under test) without their plots, which cost
    seconds per run and are covered by the report tests."""
    import functools

    import clir_eval.report as report

    monkeypatch.setattr(report, "render_reports", functools.partial(report.render_reports, plots=False))


def _configure(path: Path) -> None:
    """The tiny experiment with every kind of input file: stopwords, qrels, a human table."""
    root = path.parent
    cfg = yaml.safe_load(path.read_text())
    (root / "stop.txt").write_text("the of and\n")
    cfg["retrieval"]["stopwords"] = "stop.txt"
    english = [json.loads(x) for x in (root / "english.jsonl").read_text().splitlines()]
    words = {q: t.split() for q, t in (x.split("\t") for x in (root / "queries.tsv").read_text().splitlines())}
    lines = [f"{q} 0 {d['id']} 1" for q, ws in words.items() for d in english if ws[0] in d["text"].split()][:200]
    (root / "qrels.txt").write_text("\n".join(lines) + "\n")
    cfg["relevance"] = {"qrels": "qrels.txt"}
    (root / "human.tsv").write_text("system\tz\n" + "".join(f"sys{k}\t{1 - k / 5}\n" for k in range(5)))
    cfg["external"] = [{"file": "human.tsv", "kind": "human", "columns": {"z": "human_z"}}]
    cfg["correlation"] = {"bootstrap": 0, "permutation": 0}
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))


def _run(config: Path, out: Path) -> dict:
    return run_experiment(load_config(config), out, jobs=1, quiet=True, log=lambda s: None)


def _stable(results: dict) -> dict:
    r = json.loads(json.dumps(results))
    r.pop("timing", None)
    r.pop("config", None)
    return r


def _without_notes(results: dict) -> dict:
    r = _stable(results)
    r["notes"] = [n for n in r["notes"] if RECOMPUTED not in n]
    return r


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """Two copies of one experiment: one kept as is (a clean run), one to damage."""
    root = tmp_path_factory.mktemp("exp")
    config = make_experiment(root)
    _configure(config)
    pseudo = tmp_path_factory.mktemp("pseudo")
    pconfig = make_experiment(pseudo)
    out, pout = root / "clean-out", pseudo / "clean-out"
    return {"qrels": (config, out, _run(config, out)), "pseudo": (pconfig, pout, _run(pconfig, pout))}


def _truncate(b: bytes) -> bytes:
    return b[: len(b) // 2]


def _empty(b: bytes) -> bytes:
    return b""


def _flip(b: bytes) -> bytes:
    i = len(b) // 2
    return b[:i] + bytes([b[i] ^ 0x01]) + b[i + 1 :]


def _edit_number(b: bytes) -> bytes:
    text = b.decode()
    i = next(i for i in range(len(text) // 3, len(text)) if text[i] in "123456789")
    return (text[:i] + ("2" if text[i] == "1" else "1") + text[i + 1 :]).encode()


DAMAGE = {"truncate": _truncate, "empty": _empty, "flip-byte": _flip, "edit-number": _edit_number}
ENTRIES = [  # (experiment, cache stage, file pattern)
    ("qrels", "mt", "sys2-*.json"),
    ("qrels", "runs", "sys3-*.run"),
    ("qrels", "runs", "sys3-*.json"),
    ("pseudo", "runs", "english-*.run"),
    ("qrels", "qrels", "qrels-*.txt"),
    ("pseudo", "qrels", "qrels-*.txt"),
    ("qrels", "ir", "sys1-*.json"),
    ("qrels", "ir", "english-*.json"),
    ("qrels", "mt", "sys0-*.manifest.json"),
    ("qrels", "correlation", "correlations-*.json"),
]


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("exp, stage, pattern", ENTRIES)
def test_damaged_entry_is_recomputed_with_a_note(clean, tmp_path, exp, stage, pattern, damage):
    config, clean_out, clean_results = clean[exp]
    out = tmp_path / "out"
    shutil.copytree(clean_out, out)
    files = [p for p in (out / "cache" / stage).glob(pattern) if not (p.name.endswith(".manifest.json")
                                                                   and not pattern.endswith(".manifest.json"))]
    assert len(files) == 1, files
    _damage_and_rerun(files[0], damage, config, out, clean_results, stage)


def _damage_and_rerun(target: Path, damage: str, config: Path, out: Path, clean_results: dict, named: str) -> None:
    """Damage ``target``; the re-run equals the clean run but for one note (naming ``named``),
    on stderr and in results.json; the run after that equals the clean run with no note."""
    target.write_bytes(DAMAGE[damage](target.read_bytes()))
    warnings: list[str] = []
    again = run_experiment(load_config(config), out, jobs=1, quiet=True, log=warnings.append)
    assert _without_notes(again) == _without_notes(clean_results)
    assert len(warnings) == 1 and RECOMPUTED in warnings[0] and named in warnings[0], warnings
    assert warnings[0] in again["notes"]
    assert json.loads((out / "results.json").read_text())["notes"] == again["notes"]
    healed = _run(config, out)  # the recomputed entry verifies: no note the next time
    assert _stable(healed) == _stable(clean_results)


INPUTS = {
    "stopwords": ("stop.txt", lambda t: t + "t0w0 t1w1 t2w2\n"),
    "qrels": ("qrels.txt", lambda t: "\n".join(t.splitlines()[::2]) + "\n"),
    "topics": ("queries.tsv", lambda t: t.replace("\tt0w", "\tt3w", 1)),
    "hypothesis": ("systems/sys2.txt", lambda t: t.replace("the", "a")),
    "reference": ("ref.txt", lambda t: t.replace(" of ", " off ")),
    "human table": ("human.tsv", lambda t: t.replace("sys1\t0.8", "sys1\t0.1")),
}


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_edited_input_reruns_like_a_fresh_run(clean, tmp_path, name):
    config, clean_out, clean_results = clean["qrels"]
    root = tmp_path / "exp"
    shutil.copytree(config.parent, root, ignore=shutil.ignore_patterns("clean-out"))
    out = tmp_path / "out"
    shutil.copytree(clean_out, out)
    file, edit = INPUTS[name]
    p = root / file
    p.write_text(edit(p.read_text()))
    rerun = _run(root / config.name, out)
    fresh = _run(root / config.name, tmp_path / "fresh")
    assert _stable(rerun) == _stable(fresh)
    assert _stable(fresh) != _stable(clean_results), "the edit must change the results"


def test_stopwords_file_is_relative_to_the_config(clean, tmp_path, monkeypatch):
    config = clean["qrels"][0]
    monkeypatch.chdir(tmp_path)
    assert load_config(config).retrieval.stopwords == str(config.parent / "stop.txt")
    cfg = yaml.safe_load(config.read_text())
    cfg["retrieval"]["stopwords"] = "nope.txt"
    bad = config.parent / "bad-stop.yaml"
    bad.write_text(yaml.safe_dump(cfg))
    with pytest.raises(UserError, match="retrieval.stopwords: file not found"):
        load_config(bad)


def test_second_run_into_the_same_out_is_refused(clean, tmp_path, cli):
    config = clean["pseudo"][0]
    out = tmp_path / "out"
    out.mkdir()
    with locked(out):
        code, _, err = cli("run", config, "--out", out, "-j", "1", "-q")
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert "another clir-eval run" in err and f"pid {os.getpid()}" in err
    assert not (out / "results.json").exists()
    assert cli("run", config, "--out", out, "-j", "1", "-q")[0] == 0


def test_lock_of_a_killed_run_is_taken_over(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    code = f"from clir_eval.pipeline.output import locked\nimport pathlib, time\nwith locked(pathlib.Path({str(out)!r})):\n" \
           "    print('held', flush=True)\n    time.sleep(60)\n"
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    with pytest.raises(UserError, match="another clir-eval run"), locked(out):
        pass
    p.kill()
    p.wait()
    with locked(out):
        pass


def _outputs(out: Path) -> dict[str, bytes]:
    """The files of a run's --out but the lock file (which names the pid and start time of the last run)."""
    return {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name != ".clir-eval.lock"}


def test_a_failed_rerun_keeps_the_previous_outputs(clean, tmp_path, monkeypatch):
    """Reports and results.json are replaced as one set: a first run stopped while reporting
    leaves no results.json; a re-run with other results stopped while reporting, or failing on
    a full disk while writing, leaves the previous set byte-identical."""
    import clir_eval.report as report
    from clir_eval.io import files

    config = clean["pseudo"][0]
    out = tmp_path / "out"

    def killed(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "render_reports", killed)
    with pytest.raises(KeyboardInterrupt):
        _run(config, out)
    assert not (out / "results.json").exists()
    monkeypatch.undo()
    monkeypatch.setattr(report, "render_reports", functools.partial(report.render_reports, plots=False))
    _run(config, out)
    before = _outputs(out)
    assert "results.json" in before and "report.html" in before
    root = tmp_path / "exp"  # a re-run with other results
    shutil.copytree(config.parent, root, ignore=shutil.ignore_patterns("clean-out"))
    cfg = yaml.safe_load((root / config.name).read_text())
    cfg["ir"]["measures"] = ["map"]
    (root / config.name).write_text(yaml.safe_dump(cfg))
    monkeypatch.setattr(report, "render_reports", killed)
    with pytest.raises(KeyboardInterrupt):
        _run(root / config.name, out)
    assert _outputs(out) == before
    monkeypatch.undo()
    monkeypatch.setattr(report, "render_reports", functools.partial(report.render_reports, plots=False))
    real = files.atomic_write
    written = []

    def full_on_third(path, mode="w", **kw):  # the third staged output file hits a full disk
        if ".staging." in str(path):
            written.append(path)
            if len(written) == 3:
                raise UserError(f"no space left writing {path}")
        return real(path, mode, **kw)

    monkeypatch.setattr(files, "atomic_write", full_on_third)
    with pytest.raises(UserError, match="no space left"):
        _run(root / config.name, out)
    assert _outputs(out) == before
    assert len(written) == 3 and not [p for p in out.iterdir() if p.name.startswith(".staging")]


def test_dead_worker_is_one_error_naming_the_systems():
    class DeadWorker:
        def map(self, fn, tasks, on_done=None):
            raise WorkerLost((1, 2))

    tasks = [SystemTask(f"sys{i}") for i in range(4)]
    with pytest.raises(UserError, match=r"system\(s\) sys1, sys2 .*re-run to resume"):
        run_systems(DeadWorker(), tasks, None, None)


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d.name))
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find worker processes")
def test_workers_die_with_a_killed_main_process():
    script = textwrap.dedent(
        """
        import time
        from clir_eval.pipeline.executor import get_executor
        if __name__ == "__main__":
            with get_executor("local", 2) as ex:
                ex.map(time.sleep, [60, 60, 60])
        """
    )
    main = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.time() + 60
        workers: list[int] = []
        while time.time() < deadline and len(workers) < 2:
            time.sleep(0.2)
            workers = [c for c in _children(main.pid) if "spawn_main" in Path(f"/proc/{c}/cmdline").read_text()]
        assert len(workers) == 2, "the pool did not start"
        time.sleep(1.0)  # let the workers run their initializer
        os.kill(main.pid, signal.SIGKILL)
        main.wait()
        deadline = time.time() + 10
        while time.time() < deadline and any(Path(f"/proc/{w}").exists() and _alive(w) for w in workers):
            time.sleep(0.2)
        assert not [w for w in workers if Path(f"/proc/{w}").exists() and _alive(w)], "orphaned workers"
    finally:
        if main.poll() is None:
            main.kill()


def _alive(pid: int) -> bool:
    try:
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) != "Z"
    except OSError:
        return False


# --------------------------------------------------------------------------- materialised sources
def _wmt_experiment(root: Path) -> Path:
    """A generated WMT XML (16 documents, a reference, 3 systems of falling quality) and a
    config with headline queries, so every kind of file lands under cache/sources/."""
    import random
    from xml.sax.saxutils import escape

    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(60)]
    docs = []
    for d in range(16):
        topic = vocab[d * 3 : d * 3 + 3]
        segs = [" ".join(topic + rng.sample(vocab, 2))]
        segs += [" ".join(rng.sample(topic, 2) + rng.sample(vocab, 6)) for _ in range(3)]
        docs.append((f"doc{d}", segs))

    def block(tag: str, attrs: str, segs: list[str]) -> str:
        body = "".join(f'<seg id="{i + 1}">{escape(s)}</seg>' for i, s in enumerate(segs))
        return f"<{tag} {attrs}><p>{body}</p></{tag}>"

    parts = ['<?xml version="1.0" encoding="utf-8"?>\n<dataset id="gen2021">']
    for did, segs in docs:
        parts.append(f'<doc origlang="de" id="{did}">')
        parts.append(block("src", 'lang="de"', [s.upper() for s in segs]))
        parts.append(block("ref", 'lang="en" translator="A"', segs))
        for k, rate in enumerate((0.1, 0.4, 0.7)):
            srng = random.Random(100 * k + int(did[3:]))
            hyp = [" ".join(w for w in s.split() if srng.random() >= rate) or "x" for s in segs]
            parts.append(block("hyp", f'system="S{k}" lang="en"', hyp))
        parts.append("</doc>")
    parts.append("</dataset>\n")
    (root / "gen.xml").write_text("\n".join(parts), encoding="utf-8")
    cfg = {
        "name": "gen-wmt", "seed": 5,
        "wmt": {"xml": "gen.xml", "reference": "A"},
        "mt": {"metrics": ["bleu", "chrf1"]},
        "queries": {"generate": "headline"},
        "retrieval": {"depth": 20},
        "ir": {"measures": ["map", "recip_rank"]},
        "correlation": {"bootstrap": 0, "permutation": 0},
    }
    (root / "wmt.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return root / "wmt.yaml"


@pytest.fixture(scope="module")
def clean_wmt(tmp_path_factory):
    root = tmp_path_factory.mktemp("wmt")
    config = _wmt_experiment(root)
    out = root / "clean-out"
    return config, out, _run(config, out)


SOURCE_FILES = ["ref-A.*.txt", "hyp-S1.*.txt", "docids-*.txt", "docs-S2-*.jsonl", "english-refA-*.jsonl"]


@pytest.mark.parametrize("damage", ["truncate", "flip-byte"])
@pytest.mark.parametrize("pattern", SOURCE_FILES)
def test_damaged_source_file_is_regenerated_with_a_note(clean_wmt, tmp_path, pattern, damage):
    config, clean_out, clean_results = clean_wmt
    out = tmp_path / "out"
    shutil.copytree(clean_out, out)
    files = [p for p in (out / "cache" / "sources").glob(f"wmt-*/{pattern}") if not p.name.endswith(".manifest.json")]
    assert len(files) == 1, files
    _damage_and_rerun(files[0], damage, config, out, clean_results, files[0].name)


def test_unsealed_source_file_is_regenerated_silently(clean_wmt, tmp_path):
    """A source file without its manifest (a run killed between writing and sealing) is not
    trusted: it is rewritten, without a note, and the results equal a clean run."""
    config, clean_out, clean_results = clean_wmt
    out = tmp_path / "out"
    shutil.copytree(clean_out, out)
    (target,) = (out / "cache" / "sources").glob("wmt-*/docs-S0-*.jsonl")
    target.with_name(target.name + ".manifest.json").unlink()
    target.write_text("")  # damaged, and nothing to tell: must not be used
    warnings: list[str] = []
    again = run_experiment(load_config(config), out, jobs=1, quiet=True, log=warnings.append)
    assert _stable(again) == _stable(clean_results) and warnings == []
    assert target.with_name(target.name + ".manifest.json").exists()


def _replace_with_directory(target: Path, out: Path) -> None:
    target.unlink()
    target.mkdir()
    (target / "inside").write_text("x")


def _replace_with_fifo(target: Path, out: Path) -> None:
    target.unlink()
    os.mkfifo(target)


def _copy_from_other_entry(target: Path, out: Path) -> None:
    """The payload of another system's entry copied in, its manifest edited to match."""
    other = next(p for p in target.parent.glob("*" + "".join(target.suffixes[-1:]))
                 if p != target and p.name.split("-")[0] != target.name.split("-")[0]
                 and not p.name.endswith(".manifest.json") and p.suffixes[-1:] == target.suffixes[-1:])
    shutil.copyfile(other, target)
    manifest = target.with_name(target.name.rsplit(".", 1)[0] + ".manifest.json")
    m = json.loads(manifest.read_text())
    ext = target.name.rsplit(".", 1)[1]
    import hashlib

    m["files"][ext].update(bytes=target.stat().st_size, sha1=hashlib.sha1(target.read_bytes()).hexdigest())
    manifest.write_text(json.dumps(m))


REPLACE = {"directory": _replace_with_directory, "fifo": _replace_with_fifo, "copied": _copy_from_other_entry}


@pytest.mark.parametrize("how", sorted(REPLACE))
@pytest.mark.parametrize("exp, stage, pattern", [("qrels", "mt", "sys2-*.json"), ("qrels", "runs", "sys3-*.run"),
                                                 ("qrels", "ir", "sys1-*.json")])
def test_replaced_payload_is_recomputed_with_a_note(clean, tmp_path, exp, stage, pattern, how):
    """A payload replaced by a directory or a FIFO (never opened), or by another entry's payload
    with the manifest edited to match (the payload carries its own key), is recomputed."""
    config, clean_out, clean_results = clean[exp]
    out = tmp_path / "out"
    shutil.copytree(clean_out, out)
    (target,) = [p for p in (out / "cache" / stage).glob(pattern) if not p.name.endswith(".manifest.json")]
    REPLACE[how](target, out)
    warnings: list[str] = []
    again = run_experiment(load_config(config), out, jobs=1, quiet=True, log=warnings.append)
    assert _without_notes(again) == _without_notes(clean_results)
    assert len(warnings) == 1 and RECOMPUTED in warnings[0] and stage in warnings[0], warnings
    why = {"directory": "is a directory", "fifo": "is a FIFO", "copied": "carries another entry's key"}[how]
    assert why in warnings[0], warnings
    assert target.is_file()
    assert _stable(_run(config, out)) == _stable(clean_results)
