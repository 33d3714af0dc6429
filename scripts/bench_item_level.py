"""Benchmark: what the item-level analysis adds to a run. Runs a config from an empty cache with
`item_level: false` and with the default (on), and prints wall and CPU time (the process tree:
the command and its workers, user + system) of both and the ratio, with the machine's load.

`--before DIR` measures another checkout (e.g. the code before a change) in the same run, the
cases alternating, and checks that its results.json equals this checkout's apart from timing;
`--repeat N` runs every case N times and prints medians. The machine may be shared: CPU time is
less noisy than wall time.

    python scripts/bench_item_level.py configs/wmt21_ru_en.yaml [--jobs 2] [--data-root ../shared/data]
    python scripts/bench_item_level.py configs/wmt21_ru_en.yaml --before /path/to/old/checkout --repeat 3
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

import benchlib
import yaml


def _run(checkout: Path, cfg: Path, out: Path, jobs: int, data_root: str | None) -> tuple[float, float, dict]:
    args = benchlib.clir_eval("run", cfg, "--out", out, "--jobs", jobs, "--quiet")
    if data_root:
        args += ["--data-root", data_root]
    with benchlib.Tree() as t:  # `-m` puts the working directory first on the path: cwd is the checkout
        subprocess.run(args, check=True, env=benchlib.env(checkout), cwd=checkout)
    return t.wall, t.cpu, json.loads((out / "results.json").read_text())


def arguments():
    ap = benchlib.parser(__doc__, repeat=1, jobs=2, before=True)
    ap.add_argument("config")
    ap.add_argument("--data-root", default=None, help="--data-root of the run (default: the config's data_root)")
    return ap


def main() -> None:
    a = arguments().parse_args()
    src = Path(a.config).resolve()
    tmp = Path(tempfile.mkdtemp(prefix="bench-item-level-"))
    checkouts = benchlib.checkouts(a.before)
    try:
        cfg = yaml.safe_load(src.read_text())
        cfg.setdefault("data_root", None)
        data_root = a.data_root or str((src.parent / (cfg.get("data_root") or ".")).resolve())
        for name, c in (("off", dict(cfg, item_level=False)), ("on", cfg)):
            (tmp / f"{name}.yaml").write_text(yaml.safe_dump(c, allow_unicode=True))
        load0 = os.getloadavg()
        seen: dict[tuple[str, str], list] = {}
        n = 0
        for _ in range(a.repeat):
            for case in ("off", "on"):
                for who, path in checkouts.items():
                    n += 1
                    out = tmp / f"out-{n}"
                    seen.setdefault((who, case), []).append(_run(path, tmp / f"{case}.yaml", out, a.jobs, data_root))
                    shutil.rmtree(out, ignore_errors=True)
        load1 = os.getloadavg()
        print(f"{src.name}, --jobs {a.jobs}, {a.repeat} run(s) each (medians); load average at start "
              f"{' '.join(f'{x:.2f}' for x in load0)}, at end {' '.join(f'{x:.2f}' for x in load1)}")
        for who in checkouts:
            (w0, c0), (w1, c1) = [[statistics.median(r[i] for r in seen[who, case]) for i in (0, 1)]
                                  for case in ("off", "on")]
            t_on = seen[who, "on"][-1][2]["timing"]
            print(f"{who:>6}: item level off: wall {w0:.1f} s, CPU {c0:.1f} s; on: wall {w1:.1f} s, CPU {c1:.1f} s; "
                  f"added: wall {100 * (w1 / w0 - 1):+.0f}%, CPU {100 * (c1 / c0 - 1):+.0f}% ({c1 - c0:+.1f} CPU-s; "
                  f"items stage {t_on.get('items', 0):.1f} s, item-level correlations {t_on.get('item_level', 0):.1f} s wall)")
        if a.before:
            def part(r: dict, verdicts: bool):
                """results.json without timing and item-level verdicts, or those verdicts only."""
                il = r.get("item_level") or {}
                if verdicts:
                    return il.get("verdicts")
                return {k: v for k, v in r.items() if k != "timing"} | {
                    "item_level": {k: v for k, v in il.items() if k != "verdicts"}}

            runs = [r[2] for who in checkouts for r in seen[who, "on"]]
            for what, verdicts in (("results.json without timing and item-level verdicts", False),
                                   ("item-level verdicts", True)):
                same = all(part(r, verdicts) == part(runs[0], verdicts) for r in runs)
                print(f"{what}: identical across checkouts and runs: {'yes' if same else 'NO'}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
