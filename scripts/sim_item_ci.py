"""Coverage of the item-level intervals on the crossed systems x items design (docs/statistics.md, "Item level").

    python scripts/sim_item_ci.py [--n 200] [--fresh 2000] [--bootstrap 1000] [--seed 1] [--sizes 8x50,12x150,...]

Two generators, both the model of tests/test_item_level_validity.py (metric X = a[s] + b[i] + e[s, i], target
Y = c[s] + d[i] + f[s, i]; the systems' overall qualities a, c correlated 0.5, item difficulties b, d 0.7):

- ``crossed``: that test's generator, the within-item parts e, f correlated ρ = 0.4 in every cell;
- ``heterogeneous``: ρ varies by system and by item, ρ[s, i] = 0.4 + 0.3·u[s] + 0.2·v[i] (u, v uniform on
  [−1, 1]): some systems' (and items') scores track retrieval better than others', so the systems carry part of
  the within-item coefficient too (test_item_ci_coverage.py holds it).

The estimand of every interval: the expected coefficient of a study of the same design (as many systems and items,
drawn anew), the mean over ``--fresh`` fresh studies. For each size, grouping (``within``, ``item``) and interval
(``ci_crossed``, ``ci_items``, ``ci_systems``, as a run computes them), the share of ``--n`` studies whose
interval contains it, its Monte Carlo standard error, and in brackets the mean width relative to 2 × 1.96 × the
spread of the coefficient over the fresh studies.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_item_ci_coverage import GENERATORS, coverage  # noqa: E402

SIZES = "8x50,8x150,8x300,12x50,12x150,12x300,24x50,24x150,24x300"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--fresh", type=int, default=2000)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sizes", default=SIZES)
    ap.add_argument("--generators", default=",".join(GENERATORS))
    a = ap.parse_args()
    t0 = time.perf_counter()
    print("| generator | systems | items | grouping | `ci_crossed` | `ci_items` | `ci_systems` |")
    print("|---|---|---|---|---|---|---|")
    for gen in a.generators.split(","):
        for size in a.sizes.split(","):
            S, I = map(int, size.split("x"))
            res = coverage(gen, S, I, a.n, a.fresh, a.bootstrap, a.seed)
            for g in ("within", "item"):
                cells = []
                for ci in ("ci_crossed", "ci_items", "ci_systems"):
                    if ci not in res[g]:  # --bootstrap 0: ci_crossed alone
                        cells.append("—")
                        continue
                    p, w = res[g][ci]
                    cells.append(f"{p:.1%} ± {math.sqrt(p * (1 - p) / a.n):.1%} ({w:.2f})")
                print(f"| {gen} | {S} | {I} | `{g}` | " + " | ".join(cells) + " |", flush=True)
    print(f"({a.n} studies per row, estimand from {a.fresh} fresh studies, {a.bootstrap} bootstrap draws, "
          f"seed {a.seed}, {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
