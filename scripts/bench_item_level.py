"""Benchmark: what the item-level analysis adds to a run. Runs a config twice from an empty cache, with
`item_level: false` and with the default (on), and prints both wall and CPU times and the ratio.

    python scripts/bench_item_level.py configs/wmt21_ru_en.yaml [--jobs 2] [--data-root ../shared/data]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml


def _run(cfg: Path, out: Path, jobs: int, data_root: str | None) -> tuple[float, float, dict]:
    import json

    args = [sys.executable, "-m", "clir_eval", "run", str(cfg), "--out", str(out), "--jobs", str(jobs), "--quiet"]
    if data_root:
        args += ["--data-root", data_root]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(args, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads((out / "results.json").read_text())["timing"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--data-root", default=None)
    a = ap.parse_args()
    src = Path(a.config).resolve()
    tmp = Path(tempfile.mkdtemp(prefix="bench-item-level-"))
    try:
        cfg = yaml.safe_load(src.read_text())
        cfg.setdefault("data_root", None)
        data_root = a.data_root or str((src.parent / (cfg.get("data_root") or ".")).resolve())
        off = dict(cfg, item_level=False)
        for name, c in (("off", off), ("on", cfg)):
            (tmp / f"{name}.yaml").write_text(yaml.safe_dump(c, allow_unicode=True))
        w0, c0, t_off = _run(tmp / "off.yaml", tmp / "out-off", a.jobs, data_root)
        w1, c1, t_on = _run(tmp / "on.yaml", tmp / "out-on", a.jobs, data_root)
        print(f"{src.name}: item level off: wall {w0:.1f} s, CPU {c0:.1f} s; on: wall {w1:.1f} s, CPU {c1:.1f} s; "
              f"added: wall {100 * (w1 / w0 - 1):+.0f}%, CPU {100 * (c1 / c0 - 1):+.0f}% "
              f"(items stage {t_on.get('items', 0):.1f} s, item-level correlations {t_on.get('item_level', 0):.1f} s)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
