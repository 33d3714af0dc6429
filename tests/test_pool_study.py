"""The shipped study's CLSSTS configs (configs/study/clssts_*_in.yaml) reproduce Table 4 of Gowda et
al. 2021 ("In" rows; configs/replication/gowda2021_table4.md) as runs, and pool. Needs ../shared/data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
METRICS = ("bleu", "macrof1", "microf1", "chrf1", "bleurt_mean", "bleurt_median")
# Table 4, "In" rows: tau-b of BLEU, MacroF1, MicroF1, chrF1, BLEURTmean, BLEURTmedian
TABLE4 = {
    "lt": {"aqwv": (.429, .363, .508, .385, .451, .420), "map": (.495, .429, .575, .451, .473, .486)},
    "ps": {"aqwv": (.559, .653, .574, .581, .584, .581), "map": (.493, .632, .487, .494, .558, .554)},
    "bg": {"aqwv": (.455, .550, .527, .382, .418, .418), "map": (.491, .661, .564, .491, .527, .527)},
}


def test_clssts_in_runs_reproduce_table4_and_pool(shared_data, tmp_path):
    from clir_eval.config.load import load_config
    from clir_eval.pipeline.run import run_experiment
    from clir_eval.pooling import pool

    outs = []
    for lang, rows in TABLE4.items():
        out = tmp_path / lang
        run_experiment(load_config(ROOT / "configs" / "study" / f"clssts_{lang}_in.yaml", data_root=str(shared_data)),
                       out, quiet=True, jobs=1)
        res = json.loads((out / "results.json").read_text())
        tau = {(c["x"], c["y"]): c["tau"] for c in res["correlations"]}
        for target, want in rows.items():
            assert [round(tau[(m, target)], 3) for m in METRICS] == list(want), (lang, target)
        outs.append(out)
    pooled = pool(outs, bootstrap=200)
    row = next(r for r in pooled.leaderboard if r["target"] == "map" and r["metric"] == "macrof1")
    assert row["n_tasks"] == 3 and row["mean_tau"] == pytest.approx((.429 + .632 + .661) / 3, abs=2e-3)
    chrf = next(r for r in pooled.thresholds if "run" not in r and r["metric"] == "chrf1" and r["target"] == "map")
    assert "units" not in chrf  # the three CLSSTS tables share chrF's 0-1 scale
