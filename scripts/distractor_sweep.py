"""Distractors of increasing size on a WMT config: IR discriminability and τ.

For each distractor setting the config is run (a copy with ``collection.distractors``
added; bootstrap/permutation off, since neither τ nor the discriminability uses them) and
the script prints: documents indexed, English-side MAP, the systems' MAP range, how many
system pairs a paired randomization test over queries separates on MAP (uncorrected and
Holm, α = .05), and Kendall τ-b of each MT metric and of the human score with MAP.
Queries the English side answers with no relevant document (pseudo-qrels) are not scored.

    python scripts/distractor_sweep.py configs/wmt21_ru_en.yaml --data-root ../shared/data
    python scripts/distractor_sweep.py configs/wmt21_is_en.yaml --data-root ../shared/data
    python scripts/distractor_sweep.py configs/wmt21_de_en_sentences.yaml --data-root ../shared/data

Distractor sources (English, added unchanged to every collection): the other WMT21
document-level XML file's reference A (is-en for ru-en and vice versa), then the
sentence-level de-en and cs-en references A (one sentence = one document); for the de-en
sentence config, both XML references A and the cs-en reference A.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def paired_randomization(per_query: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """p-values of every system pair (upper triangle order); B's correlation.significance
    version is used when it is there (same test: sign flips, mean difference, (c+1)/(k+1))."""
    try:
        from clir_eval.correlation.significance import paired_randomization as pr

        return np.asarray(pr(per_query, n_resamples, seed)[2])
    except ImportError:
        pass
    s, q = per_query.shape
    rng = np.random.default_rng(seed)
    signs = np.where(rng.random((n_resamples, q)) < 0.5, -1.0, 1.0)
    d = np.stack([per_query[i] - per_query[j] for i in range(s) for j in range(i + 1, s)])
    obs = d.mean(axis=1)
    sims = (signs @ d.T) / q
    c = (np.abs(sims) >= np.abs(obs) - 1e-12 * np.maximum(1.0, np.abs(obs))).sum(axis=0)
    return (c + 1) / (n_resamples + 1)


def holm(p: np.ndarray) -> np.ndarray:
    order = np.argsort(p, kind="stable")
    m = len(p)
    adj = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adj[i] = running
    return adj


def settings(config: str, data: Path) -> list[tuple[str, list[dict]]]:
    docs = data / "wmt21-docs"
    de = data / "wmt21" / "de-en" / "newstest2021.de-en.ref.A.en.gz"
    cs = data / "wmt21" / "cs-en" / "newstest2021.cs-en.ref.A.en.gz"
    ru = {"xml": str(docs / "newstest2021.ru-en.all.xml.gz"), "reference": "A"}
    is_ = {"xml": str(docs / "newstest2021.is-en.all.xml.gz"), "reference": "A"}
    if "de_en_sentences" in config:
        return [
            ("none", []),
            ("is-en ref A", [is_]),
            ("+ ru-en ref A", [is_, ru]),
            ("+ cs-en ref A 1000 sentences", [is_, ru, {"file": str(cs), "format": "lines"}]),
        ]
    xml = is_ if "ru_en" in config else ru
    return [
        ("none", []),
        (f"{'is-en' if xml is is_ else 'ru-en'} ref A", [xml]),
        ("+ de-en ref A 250 sentences", [xml, {"file": str(de), "format": "lines", "limit": 250}]),
        ("+ de-en ref A 1000 sentences", [xml, {"file": str(de), "format": "lines"}]),
        ("+ cs-en ref A 1000 sentences", [xml, {"file": str(de), "format": "lines"}, {"file": str(cs), "format": "lines"}]),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config")
    ap.add_argument("--data-root", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--measure", default="map")
    args = ap.parse_args()
    from clir_eval.config.load import load_config
    from clir_eval.pipeline.run import run_experiment

    data = Path(args.data_root).resolve()
    base = yaml.safe_load(Path(args.config).read_text(encoding="utf-8"))
    base["data_root"] = str(data)
    base["correlation"] = {**base.get("correlation", {}), "bootstrap": 0, "permutation": 0}
    tmp = Path(tempfile.mkdtemp(prefix="distractors-"))
    m = args.measure
    print(f"{args.config}: measure {m}; paired randomization k={args.resamples}, seed {args.seed}, α=.05")
    print("| distractors | docs | English MAP | systems MAP | pairs separated (uncorr. / Holm) | "
          "τ BLEU | τ chrF1 | τ MacroF1 | τ MicroF1 | τ human |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, dis in settings(args.config, data):
        cfg = dict(base)
        if dis:
            cfg["collection"] = {**base.get("collection", {}), "distractors": dis}
        path = tmp / f"c{len(dis)}-{abs(hash(label))}.yaml"
        path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
        res = run_experiment(load_config(path), tmp / path.stem, jobs=1, quiet=True)
        systems = list(res["systems"])
        qids = sorted({q for s in systems for q in res["systems"][s]["ir_per_query"]})
        pq = np.array([[res["systems"][s]["ir_per_query"].get(q, {}).get(m, 0.0) for q in qids] for s in systems])
        p = paired_randomization(pq, args.resamples, args.seed)
        sep, sep_holm = int((p < 0.05).sum()), int((holm(p) < 0.05).sum())
        vals = np.array([res["systems"][s]["ir"][m] for s in systems])

        corr = {(c["x"], c["y"]): c for c in res["correlations"]}

        def tau(x: str, y: str) -> str:
            c = corr.get((x, y))
            if c is None or c["tau"] is None:
                return "-"
            return f"{c['tau']:+.2f}{'*' if c['significant'] else ''}"

        taus = [tau(k, m) for k in ("bleu", "chrf1", "macrof1", "microf1")] + [tau(m, "human_z")]
        n_docs = res["english"]["n_docs"]
        print(f"| {label} | {n_docs} | {res['english']['ir'][m]:.3f} | {vals.min():.3f}–{vals.max():.3f} | "
              f"{sep} / {sep_holm} of {len(p)} | " + " | ".join(taus) + " |", flush=True)
    print(f"(* = τ significant at .05; {len(qids)} queries, {len(systems)} systems; runs in {tmp})")


if __name__ == "__main__":
    main()
