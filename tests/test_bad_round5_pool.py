"""Reliability, round five (pool, results, verdicts): huge scores, mixed metric directions, copied runs,
degenerate thresholds, mixed units, missing cells, --out into a run, bad arguments, non-finite numbers, item
matrices that are FIFOs or devices, pool's memory bound and stale plots.

Every case generates its inputs: runs of tiny configs whose scores come from a generated table (``external:``),
the CLI in a subprocess (one ``error:`` line, exit 2), the Python API directly."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_one_line_error

from clir_eval.errors import UserError


def _sub(*args, env=None, timeout=180):
    """The CLI in a subprocess: (code, stdout, stderr)."""
    e = {**os.environ, **(env or {})}
    p = subprocess.run([sys.executable, "-m", "clir_eval", *map(str, args)], capture_output=True, text=True,
                       env=e, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def _write_run_config(d: Path, cols: dict, mt, ir, lower=(), alpha=None, seed=13, permutation=1000) -> Path:
    """A config whose systems' scores are the generated columns (a TSV beside it)."""
    d.mkdir(parents=True)
    n = len(next(iter(cols.values())))
    names = [f"sys{i:02d}" for i in range(n)]
    lines = ["\t".join(["system", *cols])]
    lines += ["\t".join([s, *(repr(float(cols[c][i])) for c in cols)]) for i, s in enumerate(names)]
    (d / "scores.tsv").write_text("\n".join(lines) + "\n")
    systems = "\n".join(f"  - {{name: {s}}}" for s in names)
    low = f"\n    lower_is_better: [{', '.join(lower)}]" if lower else ""
    al = f"\n  alpha: {alpha}" if alpha else ""
    cfg = d / "c.yaml"
    cfg.write_text(f"""name: {d.name}
seed: {seed}
jobs: 1
systems:
{systems}
external:
  - file: scores.tsv
    kind: mt
    columns: [{', '.join(mt)}]{low}
  - file: scores.tsv
    kind: ir
    columns: [{', '.join(ir)}]
correlation:
  permutation: {permutation}
  seed: {seed}{al}
""")
    return cfg


def _run(d: Path, cols: dict, mt=("m1", "m2"), ir=("map",), **kw) -> Path:
    """A finished run (in-process) of :func:`_write_run_config`; its output directory."""
    from clir_eval.config.load import load_config
    from clir_eval.pipeline.run import run_experiment

    cfg = _write_run_config(d, cols, mt, ir, **kw)
    run_experiment(load_config(cfg), d / "out", quiet=True)
    return d / "out"


def _cols(rng: np.random.Generator, n: int, noise=(0.5, 1.0), const_target=False) -> dict:
    q = rng.normal(size=n)
    cols = {f"m{k + 1}": 30 + 10 * (q + rng.normal(size=n) * s) for k, s in enumerate(noise)}
    cols["map"] = np.full(n, 0.5) if const_target else 0.5 + 0.1 * (q + rng.normal(size=n) * 0.7)
    return cols


@pytest.fixture(scope="module")
def two(tmp_path_factory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("round5")
    rng = np.random.default_rng(5)
    return [_run(tmp / "a", _cols(rng, 8)), _run(tmp / "b", _cols(rng, 9))]


def _strict_json(text: str):
    def bad(c):
        raise AssertionError(f"{c} in JSON output")

    return json.loads(text, parse_constant=bad)


def _tamper(src: Path, dst: Path, edit) -> Path:
    shutil.copytree(src, dst)
    res = json.loads((dst / "results.json").read_text())
    edit(res)
    (dst / "results.json").write_text(json.dumps(res))
    return dst


# ---------------------------------------------------------------------------- huge scores

def _huge_table(path: Path, big: float | None, scale: float = 1.0) -> Path:
    rng = np.random.default_rng(0)
    cols = _cols(rng, 10, noise=(0.5, 1.5))
    cols["m1"] = cols["m1"] * scale
    if big is not None:
        cols["m1"][0] = big
    lines = ["system\tm1\tm2\tmap"] + [f"s{i}\t{float(cols['m1'][i])!r}\t{float(cols['m2'][i])!r}\t{float(cols['map'][i])!r}"
                                       for i in range(10)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("big", [1e155, 1e100, 1e20])
def test_verdicts_refuse_scores_whose_z_scores_would_tie(tmp_path, big):
    """At 1e155 the z-scores overflowed (Δ NaN, p 0, "significant"); at 1e100 the other systems' z-scores became
    equal (a Δ of another, tied metric). Both are one error line naming the metric now."""
    t = _huge_table(tmp_path / "t.tsv", big)
    code, out, err = _sub("correlate", "--table", t, "--x", "m1,m2", "--y", "map", "--verdicts", "--format", "json")
    assert_one_line_error(code, err, r"^error: m1: its scores span too wide a range for the pairwise test")
    assert out == ""


def test_verdicts_on_scores_scaled_by_a_power_of_two_are_the_same(tmp_path):
    """Scores near the largest float (scaled by 2**1000, an exact scaling) give the same Δτ and p as the scores
    themselves: no overflow, no lost resolution; and the Δτ is the difference of scipy's τ on the raw scores."""
    from scipy.stats import kendalltau

    res = []
    for scale in (1.0, 2.0 ** 1000):
        t = _huge_table(tmp_path / f"t{scale:g}.tsv", None, scale)
        code, out, err = _sub("correlate", "--table", t, "--x", "m1,m2", "--y", "map", "--verdicts", "--format", "json")
        assert code == 0, err
        d = _strict_json(out)
        res.append([(p["a"], p["b"], p["delta"], p["p_value"]) for v in d["verdicts"] for p in v["pairwise"]])
    assert res[0] == res[1] and len(res[0]) == 1
    rows = [line.split("\t") for line in (tmp_path / "t1.tsv").read_text().splitlines()[1:]]
    m1, m2, y = ([float(r[k]) for r in rows] for k in (1, 2, 3))
    a, b, delta, _ = res[0][0]
    tau = {"m1": kendalltau(m1, y).statistic, "m2": kendalltau(m2, y).statistic}
    assert delta == pytest.approx(tau[a] - tau[b], abs=1e-12)


def test_standardize_is_zscore_without_overflow():
    from scipy.stats import zscore

    from clir_eval.correlation.statistics import standardize

    x = np.random.default_rng(1).normal(30, 10, 25)
    assert np.array_equal(standardize(x), zscore(x))  # the same floats where zscore does not overflow
    assert np.array_equal(standardize(x * 2.0 ** 1000), zscore(x))
    with np.errstate(over="ignore", invalid="ignore"):
        assert not np.array_equal(zscore(x * 2.0 ** 1000), zscore(x))  # what the test drew from before (all 0)
    with pytest.raises(UserError, match="m1: its scores span too wide a range"):
        standardize(np.r_[x, 1e100], "m1")


def test_run_with_a_huge_external_score(tmp_path):
    """An external score of 1e155: without verdicts the run finishes and its report plots it (the SVG's fit line
    overflowed); with verdicts it is one error line naming the metric."""
    rng = np.random.default_rng(3)
    cols = _cols(rng, 8)
    cols["m1"][0] = 1e155
    cfg = _write_run_config(tmp_path / "p0", cols, ("m1", "m2"), ("map",), permutation=0)
    code, _, err = _sub("run", cfg, "--out", tmp_path / "p0" / "out", "-q", "--jobs", "1")
    assert code == 0, err
    assert "<svg" in (tmp_path / "p0" / "out" / "report.html").read_text()
    cfg = _write_run_config(tmp_path / "p1", cols, ("m1", "m2"), ("map",))
    code, _, err = _sub("run", cfg, "--out", tmp_path / "p1" / "out", "-q", "--jobs", "1")
    assert_one_line_error(code, err, r"m1: its scores span too wide a range")


def test_pool_of_a_run_holding_a_huge_score_is_one_error_line_and_json_is_strict(two, tmp_path):
    def edit(res):
        res["systems"]["sys00"]["mt"]["m1"] = 1e155

    bad = _tamper(two[0], tmp_path / "huge", edit)
    code, out, err = _sub("pool", two[1], bad, "--format", "json", "--bootstrap", "200")
    assert_one_line_error(code, err, r"huge: m1: its scores span too wide a range")
    assert out == ""
    code, out, err = _sub("pool", *two, "--format", "json", "--bootstrap", "200")
    assert code == 0, err
    _strict_json(out)  # no NaN / Infinity


# ---------------------------------------------------------------------------- directions, copies, units

def test_mixed_direction_is_oriented_per_run(tmp_path):
    """ter is lower-is-better in two runs and higher-is-better (its scores flipped) in the third: each run's τ is
    oriented by its own direction, so the pooled mean is the mean of |τ| here and ter ranks first; Δτ lies in its
    own CI; a note says so."""
    from clir_eval.pooling import pool

    rng = np.random.default_rng(5)
    dirs = []
    for name, flip in (("a", False), ("b", True), ("c", True)):
        n = 10
        q = rng.normal(size=n)
        cols = {"ter": 30 + 10 * (q + rng.normal(size=n) * 0.3), "bleu": 30 + 10 * (q + rng.normal(size=n) * 1.5),
                "map": 0.5 + 0.1 * (q + rng.normal(size=n) * 0.3)}
        if flip:
            cols["ter"] = 100 - cols["ter"]
        dirs.append(_run(tmp_path / name, cols, mt=("ter", "bleu"), lower=("ter",) if flip else ()))
    res = pool(dirs, bootstrap=200, thresholds=False, item_level=False)
    own = [{c["x"]: c["tau"] for c in json.loads((d / "results.json").read_text())["correlations"]} for d in dirs]
    assert own[0]["ter"] > 0.5 and own[1]["ter"] < -0.5 and own[2]["ter"] < -0.5  # good in every run, once oriented
    lb = {r["metric"]: r for r in res.leaderboard}
    assert lb["ter"]["mean_tau"] == pytest.approx(np.mean([own[0]["ter"], -own[1]["ter"], -own[2]["ter"]]), abs=1e-12)
    assert [r["metric"] for r in res.leaderboard][0] == "ter"
    (p,) = res.pairs
    assert (p["a"], p["b"]) == ("ter", "bleu")
    assert p["delta"] == pytest.approx(lb["ter"]["mean_tau"] - lb["bleu"]["mean_tau"], abs=1e-12)
    assert p["ci"][0] <= p["delta"] <= p["ci"][1]
    assert any("ter is lower-is-better in b, c and higher-is-better in a" in n for n in res.notes)


def test_a_byte_copy_of_a_run_is_refused(two, tmp_path):
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(two[0]), str(copy)], check=True)
    code, _, err = _sub("pool", two[0], two[1], copy)
    assert_one_line_error(code, err, r"copy: the same systems with the same scores as .*pass each run once")


def test_content_id_is_the_systems_block():
    from clir_eval.pooling.runs import content_id

    a = {"systems": {"s1": {"mt": {"bleu": 1.0}}, "s2": {"mt": {"bleu": 2.0}}}, "name": "a"}
    b = {"systems": {"s2": {"mt": {"bleu": 2.0}}, "s1": {"mt": {"bleu": 1.0}}}, "name": "b", "timing": {"x": 1}}
    c = {"systems": {"s1": {"mt": {"bleu": 1.0}}, "s2": {"mt": {"bleu": 2.5}}}, "name": "a"}
    assert content_id(a) == content_id(b) != content_id(c)


def _separated_cols(rng, n):
    q = np.sort(rng.normal(size=n))
    return {"m1": 30 + 10 * q, "m2": 30 + 10 * (q + rng.normal(size=n)), "map": 0.5 + 0.1 * q}


def test_thresholds_under_perfect_separation_say_the_fit_is_degenerate(tmp_path):
    """m1 orders the systems exactly as map does in both runs: no finite fit; the Δ80/90/95 and their CIs are not
    0.00 but absent, marked separated, with the smallest observed difference in a note."""
    from clir_eval.pooling import pool
    from clir_eval.pooling.report import markdown

    rng = np.random.default_rng(2)
    dirs = [_run(tmp_path / k, _separated_cols(rng, 8)) for k in ("a", "b")]
    res = pool(dirs, bootstrap=200, item_level=False)
    rows = [r for r in res.thresholds if r["metric"] == "m1"]
    assert len(rows) == 3  # pooled + two runs
    for r in rows:
        assert r["accuracy"] == 1.0 and r["fit"] == "separated" and r["beta"] == "inf"
        assert all(v is None for v in r["delta_at"].values())
        assert all(ci == [None, None] for ci in r["delta_at_ci"].values())
    pooled = next(r for r in rows if "run" not in r)
    dx = []
    for d in dirs:
        x = [s["mt"]["m1"] for s in json.loads((d / "results.json").read_text())["systems"].values()]
        dx += [abs(u - v) for i, u in enumerate(x) for v in x[i + 1:] if u != v]
    assert pooled["min_delta"] == pytest.approx(min(dx), rel=1e-12)
    assert any("m1 / map (pooled): the fit is degenerate" in n for n in res.notes)
    assert "| separated | separated | separated |" in markdown(res)
    m2 = next(r for r in res.thresholds if r["metric"] == "m2" and "run" not in r)
    assert "fit" not in m2


def test_mixed_units_below_ten_times_are_flagged(tmp_path):
    """m1 on 0-1 in one run (largest .6) and on 0-100 in the other (largest 8, under 10 times .6): pooled
    deltas are withheld as for a larger ratio, with the note."""
    from clir_eval.pooling import pool

    rng = np.random.default_rng(4)
    a, b = _cols(rng, 8), _cols(rng, 8)
    a["m1"] = 0.2 + 0.4 * (a["m1"] - a["m1"].min()) / np.ptp(a["m1"])
    b["m1"] = 2 + 6 * (b["m1"] - b["m1"].min()) / np.ptp(b["m1"])
    dirs = [_run(tmp_path / "a", a), _run(tmp_path / "b", b)]
    res = pool(dirs, bootstrap=200, item_level=False)
    row = next(r for r in res.thresholds if r["metric"] == "m1" and "run" not in r)
    assert row["units"] == "mixed" and row["beta"] is None
    assert any("m1's scales differ between runs" in n for n in res.notes)
    assert "units" not in next(r for r in res.thresholds if r["metric"] == "m2" and "run" not in r)


def test_missing_cells_never_make_a_negative_delta_significant(tmp_path):
    """With missing cells the ranking uses each metric's own systems and Δτ the common ones: a pair ranked a above
    b whose Δτ is negative is not called significant, does not split the clusters, and a note says why."""
    found = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        n = 10
        q = rng.normal(size=n)
        cols = {f"m{k}": 30 + 10 * (q + rng.normal(size=n) * rng.uniform(0.3, 2)) for k in range(4)}
        cols["map"] = 0.5 + 0.1 * (q + rng.normal(size=n) * 0.7)
        lines = ["system\t" + "\t".join(cols)]
        for i in range(n):
            lines.append(f"s{i}\t" + "\t".join("" if (c != "map" and rng.random() < 0.25) else repr(float(cols[c][i]))
                                               for c in cols))
        (tmp_path / "t.tsv").write_text("\n".join(lines) + "\n")
        code, out, err = _sub("correlate", "--table", tmp_path / "t.tsv", "--x", "m0,m1,m2,m3", "--y", "map",
                              "--verdicts", "--format", "json")
        assert code == 0, err
        for v in _strict_json(out)["verdicts"]:
            for p in v["pairwise"]:
                if p["delta"] is not None and p["delta"] < 0:
                    found += 1
                    assert p["significant"] is False and p["against_ranking"] is True
                    assert any(f"{p['a']} is ranked above {p['b']}" in x and f"{p['delta']:+.3f}" in x
                               for x in v["notes"])
        if found >= 2:
            break
    assert found >= 2


# ---------------------------------------------------------------------------- --out, crashes, arguments

def test_out_into_an_input_run_is_refused_and_the_run_kept(two, tmp_path):
    before = {p.name: p.read_bytes() for p in two[0].iterdir() if p.is_file()}
    code, _, err = _sub("pool", *two, "--out", two[0])
    assert_one_line_error(code, err, r"--out .* is the run directory .* given to pool")
    other = tmp_path / "other"
    shutil.copytree(two[1], other)  # a run's directory that is not an input of this pool
    code, _, err = _sub("pool", two[0], "--out", other)
    assert_one_line_error(code, err, r"--out .*other holds a run's results\.json")
    assert {p.name: p.read_bytes() for p in two[0].iterdir() if p.is_file()} == before


def test_constant_target_and_different_alpha_pool(tmp_path):
    """A target constant over a run's systems (no threshold pairs) used to crash --out and --format md; runs with
    different α crashed pool."""
    rng = np.random.default_rng(6)
    a = _run(tmp_path / "a", _cols(rng, 8))
    c = _run(tmp_path / "c", _cols(rng, 8, const_target=True))
    d = _run(tmp_path / "d", _cols(rng, 9), alpha=0.1)
    code, out, err = _sub("pool", a, c, "--format", "md", "--out", tmp_path / "pooled", "--bootstrap", "200")
    assert code == 0, err
    assert "## CLIR thresholds (pooled)" in out and (tmp_path / "pooled" / "report.json").is_file()
    code, out, err = _sub("pool", a, d, "--format", "json", "--bootstrap", "200")
    assert code == 0, err
    assert any("different α (0.05, 0.1)" in n for n in _strict_json(out)["notes"])


def test_cli_seed_out_of_range(two):
    code, _, err = _sub("pool", *two, "--seed", "-1")
    assert_one_line_error(code, err, r"--seed: -1 is not a valid seed")


@pytest.mark.parametrize("kw, says", [
    ({"seed": -1}, r"--seed: -1 is not a valid seed"),
    ({"seed": 1.5}, r"--seed 1\.5"),
    ({"bootstrap": 150.5}, r"--bootstrap 150\.5: give a whole number"),
    ({"bootstrap": None}, r"--bootstrap None: give a whole number"),
    ({"bootstrap": 10 ** 6}, r"--bootstrap: 1000000 is too large"),
    ({"weights": None}, r"--weights None"),
    ({"margin": True}, r"--margin True"),
    ({"correction": None}, r"--correction None"),
])
def test_python_pool_arguments_are_checked(two, kw, says):
    from clir_eval.pooling import pool

    with pytest.raises(UserError, match=says) as e:
        pool(two, **kw)
    assert "\n" not in str(e.value)


def test_python_pool_dirs(two):
    from clir_eval.pooling import pool

    with pytest.raises(UserError, match="dirs: give a list of run directories, not str"):
        pool(str(two[0]))
    with pytest.raises(UserError, match="dirs: 3 is not a path"):
        pool([two[0], 3])
    a = pool((d for d in two), bootstrap=200, thresholds=False, item_level=False).to_dict()
    b = pool(list(two), bootstrap=200, thresholds=False, item_level=False).to_dict()
    assert a == b


@pytest.mark.parametrize("value", ["Infinity", "-Infinity", "NaN", "1e400", "1" + "0" * 400])
def test_non_finite_score_in_results_json_is_refused(two, tmp_path, value):
    bad = tmp_path / "bad"
    shutil.copytree(two[0], bad)
    text = (bad / "results.json").read_text()
    res = json.loads(text)
    old = res["systems"]["sys01"]["mt"]["m2"]
    (bad / "results.json").write_text(text.replace(repr(old), value, 1))
    assert value in (bad / "results.json").read_text()
    code, _, err = _sub("pool", bad, two[1])
    assert_one_line_error(code, err, r"results\.json: systems\.sys01\.mt\.m2 is .* \(not a finite number\)")


# ---------------------------------------------------------------------------- item matrices

def _with_item_level(src: Path, dst: Path, text: str | None = None, sha: str | None = None) -> Path:
    """A copy of a run whose results.json names an item documents matrix (``text``: the file, else none)."""
    import hashlib

    def edit(res):
        systems = list(res["systems"])
        res["item_level"] = {
            "systems": systems, "items": {"documents": {"n": 2}},
            "correlations": [{"grouping": "within", "items": "documents", "target": "map", "mt_metric": "m1",
                              "tau": 0.1}],
            "documents_file": {"file": "item_documents.json",
                               "sha256": sha or (hashlib.sha256(text.encode()).hexdigest() if text else "0" * 64)}}

    out = _tamper(src, dst, edit)
    if text is not None:
        (out / "item_documents.json").write_text(text)
    return out


def test_fifo_item_matrix_does_not_block_pool(two, tmp_path):
    d = _with_item_level(two[0], tmp_path / "fifo")
    os.mkfifo(d / "item_documents.json")
    code, _, err = _sub("pool", d, two[1], "--bootstrap", "200", timeout=120)
    assert_one_line_error(code, err, r"item_documents\.json is a FIFO \(named pipe\), not a regular file")


def test_device_item_matrix_is_refused(two, tmp_path):
    d = _with_item_level(two[0], tmp_path / "dev")
    (d / "item_documents.json").symlink_to("/dev/zero")
    code, _, err = _sub("pool", d, two[1], "--bootstrap", "200", timeout=120)
    assert_one_line_error(code, err, r"item_documents\.json is a character device")


def test_oversized_item_matrix_is_refused_before_reading(two, tmp_path, monkeypatch):
    from clir_eval.io.item_matrix import read_documents_file

    d = _with_item_level(two[0], tmp_path / "big")
    with open(d / "item_documents.json", "wb") as fh:
        fh.truncate(2 * 2 ** 20)  # sparse: two megabytes of zeros, on disk only in name
    monkeypatch.setenv("CLIR_EVAL_MAX_MEMORY_BYTES", str(4 * 2 ** 20))  # a quarter of it: 1 MiB
    with pytest.raises(UserError, match=r"item_documents\.json: 2097152 bytes, over the bound of 1048576 bytes "
                                        r".*CLIR_EVAL_MAX_MEMORY_BYTES"):
        read_documents_file(d, json.loads((d / "results.json").read_text()))


@pytest.mark.parametrize("cell", ['"inf"', "true", "Infinity", "NaN", '"0.5"', "1e400"])
def test_item_matrix_types_are_checked_even_when_its_sha256_matches(two, tmp_path, cell):
    from clir_eval.io.item_matrix import FORMAT, read_documents_file

    res = json.loads((two[0] / "results.json").read_text())
    systems = list(res["systems"])
    rows = [[0.5, 0.25] for _ in systems]
    good = {"format": FORMAT, "systems": systems, "documents": ["d1", "d2"], "queries_per_document": [1, 1],
            "n_queries": 2, "metrics": {"m1": rows}, "targets": {"retrievability": rows}}
    text = json.dumps(good)
    d = _with_item_level(two[0], tmp_path / "ok", text)
    read_documents_file(d, json.loads((d / "results.json").read_text()))  # the well-formed file reads
    bad_text = text.replace("0.25", cell, 1)
    d = _with_item_level(two[0], tmp_path / "bad", bad_text)
    with pytest.raises(UserError, match=r"metrics\.m1 is not a \d+ x 2 matrix of finite numbers or null"):
        read_documents_file(d, json.loads((d / "results.json").read_text()))


# ---------------------------------------------------------------------------- memory and stale outputs

def test_pool_memory_bound_is_checked_before_work(two):
    from clir_eval.pooling.core import pool_memory

    need = pool_memory([8, 9], 200)
    assert pool_memory([8, 9], 400) > need > 0
    code, _, err = _sub("pool", *two, "--bootstrap", "100000", env={"CLIR_EVAL_MAX_MEMORY_BYTES": str(400 * 2 ** 20)})
    assert_one_line_error(code, err, r"--bootstrap 100000: .* would need about .* GiB, over the bound of 0\.4 GiB")


def test_stale_threshold_plots_are_removed(tmp_path):
    rng = np.random.default_rng(8)
    a = _run(tmp_path / "a", _cols(rng, 8, noise=(0.5, 1.0, 1.5)), mt=("m1", "m2", "m3"))
    b = _run(tmp_path / "b", _cols(rng, 8, noise=(0.5, 1.0, 1.5)), mt=("m1", "m2", "m3"))
    c = _run(tmp_path / "c", _cols(rng, 8))
    d = _run(tmp_path / "d", _cols(rng, 8))
    out = tmp_path / "pooled"
    code, _, err = _sub("pool", a, b, "--out", out, "--bootstrap", "200")
    assert code == 0, err
    assert (out / "thresholds_m3.png").is_file()
    (out / "notes.txt").write_text("mine")
    code, _, err = _sub("pool", c, d, "--out", out, "--bootstrap", "200")
    assert code == 0, err
    assert sorted(p.name for p in out.glob("thresholds_*.png")) == ["thresholds_m1.png", "thresholds_m2.png"]
    assert (out / "notes.txt").read_text() == "mine"  # only the pool's own earlier outputs go
    assert json.loads((out / "report.json").read_text())["settings"]["runs"] == [str(c), str(d)]
