"""`clir-eval design` says when the assumed model had to be changed to be simulated: a pair's assumed Δτ gives the
two metrics loadings that do not fit the pilot's correlation between them, so the nearest valid correlation matrix
is simulated instead; the note and each row's ``corr_change`` say by how much, and the simulated studies show it."""

from __future__ import annotations

import json
import math

import numpy as np
import scipy.stats

from clir_eval.correlation import design as dz

N, Q = 12, 30


def pilot() -> tuple[np.ndarray, np.ndarray]:
    """Two metrics that load about .79 on the systems' quality and correlate about .72: a Δτ of .2 around their
    mean τ fits, one of .6 does not (the upper metric's loading would be capped while their correlation stays)."""
    rng = np.random.default_rng(5)
    u = rng.standard_normal(N)
    X = np.stack([u + 0.6 * rng.standard_normal(N), u + 0.6 * rng.standard_normal(N)], 1)
    pq = 0.1 * u[:, None] + 0.2 * rng.standard_normal((1, Q)) + 0.3 * rng.standard_normal((N, Q))
    return X, pq


def fit() -> dz.Fit:
    X, pq = pilot()
    data = dz.DesignData(tuple(f"s{i}" for i in range(N)), {"m0": X[:, 0], "m1": X[:, 1]},
                         {"y": dz.Target("y", pq.mean(axis=1), pq)})
    return dz.fit_target(data, "y")


def test_corr_change_is_what_the_simulated_studies_show():
    f = fit()
    assert not f.notes  # the pilot's own model is valid
    assert dz.corr_change(f.metrics, dz._pair_loadings(f, 0, 1, 0.2)[0], f.corr) is None
    r = dz._pair_loadings(f, 0, 1, 0.6)[0]
    change = dz.corr_change(f.metrics, r, f.corr)
    assert change is not None and change["metrics"] == ["m0", "m1"]
    X, _ = pilot()
    tau01 = scipy.stats.kendalltau(X[:, 0], X[:, 1]).statistic
    assert change["assumed"] == math.sin(math.pi / 2 * tau01)  # the pilot's correlation (Greiner), as fitted
    X_sim, _ = dz.simulate_family(f, r, 50, Q, 4000, np.random.default_rng(1))
    a, b = X_sim[:, :, 0].ravel(), X_sim[:, :, 1].ravel()  # unit-variance metrics: the pooled correlation
    observed = float(np.corrcoef(a, b)[0, 1])
    assert abs(observed - change["simulated"]) < 0.01, (observed, change)
    assert abs(observed - change["assumed"]) > 0.1  # the change is real, not rounding
    assert change["max_change"] == abs(change["simulated"] - change["assumed"])


def test_design_notes_the_change_in_text_and_json(tmp_path, cli):
    X, pq = pilot()
    lines = ["system\tquery\tm0\tm1\tmap"] + [f"s{i}\tq{j}\t{X[i, 0]:.9f}\t{X[i, 1]:.9f}\t{pq[i, j]:.9f}"
                                              for i in range(N) for j in range(Q)]
    (tmp_path / "t.tsv").write_text("\n".join(lines) + "\n")
    args = ("design", "--table", tmp_path / "t.tsv", "--system-col", "system", "--query-col", "query", "--x",
            "m0,m1", "--y", "map", "--systems", "8", "--queries", "30", "--effect", "0.2,0.6", "--reps", "20",
            "--jobs", "1")
    code, out, err = cli(*args, "--format", "json")
    assert code == 0, err
    pairs = [r for r in json.loads(out) if "b" in r]
    assert {r["effect"] for r in pairs} == {0.2, 0.6}
    assert all("corr_change" not in r for r in pairs if r["effect"] == 0.2)
    changed = [r["corr_change"] for r in pairs if r["effect"] == 0.6]
    assert changed and all(c["metrics"] == ["m0", "m1"] and c["max_change"] > 0.1 for c in changed)
    code, out, err = cli(*args)
    assert code == 0, err
    c = changed[0]
    note = [line for line in err.splitlines() if "nearest valid one is simulated" in line]  # a note: on stderr
    assert len(note) == 1, err
    assert f"{c['assumed']:.3f} assumed → {c['simulated']:.3f} simulated" in note[0]
    assert "Δτ 0.6" in note[0] and "m0 above m1" in note[0]
