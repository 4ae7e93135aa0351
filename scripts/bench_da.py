"""DA(l2) speed: the f-step on the duplicated set against the pooled f-step; a script, not a test.

DA's quadratic-hinge f-step (ICML 2006 Sec. 3.1) used to run :func:`solvers._primal.kernel_newton`
on the "duplicated" training set (each unlabeled point twice, n + u rows); it now runs
:func:`solvers._primal.kernel_newton_terms`, which pools the two terms of a point in each
Newton system (at most n rows). This times whole ICML 2006 cells (``harness.grid.execute_cell``:
validation protocol, every one-vs-rest problem) with either f-step, alternately in one process
(old, new, old, new, ...), and reports the medians, their ratio, whether both give the same
errors and how far apart their objectives are. BLAS is single-threaded.

Run:  .venv/bin/python scripts/bench_da.py [--repeats 3] [--cells icml2006-table5:coil6:0 ...]

A cell is ``TABLE:DATASET:INDEX``, INDEX counting the table's DA(l2) cells of that data set in
spec order (for Table 5 the T_fixed columns come after the annealed DA's).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import s3vm_bench.solvers.da as da  # noqa: E402
from s3vm_bench.harness.grid import execute_cell  # noqa: E402
from s3vm_bench.harness.reproduce import build_cells  # noqa: E402
from s3vm_bench.harness.specs import SPECS  # noqa: E402
from s3vm_bench.solvers._primal import kernel_newton  # noqa: E402


def _duplicated_solve(self, p, beta0=None, b0=None):
    """The f-step as it was: kernel_newton on the duplicated set, warm-started, then collapsed."""
    if not hasattr(self, "_Kd"):
        self._Kd = self.K[np.ix_(self.idx, self.idx)]
        self._beta_d = None
    res = kernel_newton(self._Kd, self.yd, self.costs(p), beta0=self._beta_d, b0=self.b, tol=self.tol,
                        max_iter=self.max_iter)
    self._beta_d, self.b = res.coef, float(res.intercept)
    self.n_factorizations += res.n_inner_iter
    beta = self.collapse(res.coef)
    return beta, self.b, self.K @ beta + self.b, res.n_iter


def _cell(spec_key, dataset, index):
    cells = [p.cell for p in build_cells(SPECS[spec_key])[0]
             if p.dataset == dataset and p.cell.solver == "da" and p.cell.params.get("loss") == "l2"]
    return cells[index]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cells", nargs="+", default=["icml2006-table5:coil6:280", "icml2006-table4:coil6:0",
                                                   "icml2006-table4:usps2:0"])
    args = ap.parse_args(argv)
    new_solve = da._L2Step.solve
    print(f"{'cell':28s} {'params':34s} {'old s':>7s} {'new s':>7s} {'ratio':>6s}  results")
    for spec in args.cells:
        key, dataset, index = spec.split(":")
        cell = _cell(key, dataset, int(index))
        times = {"old": [], "new": []}
        rows = {}
        for _ in range(args.repeats):
            for name, solve in (("old", _duplicated_solve), ("new", new_solve)):
                da._L2Step.solve = solve
                t0 = time.perf_counter()
                row = execute_cell(cell)
                times[name].append(time.perf_counter() - t0)
                if row["status"] != "done":
                    raise RuntimeError(f"{spec} ({name}): {row['status']}: {row.get('error')}")
                rows[name] = row
        da._L2Step.solve = new_solve
        # Same iterates in exact arithmetic: the errors should agree exactly, the objective to rounding.
        errors = all(rows["old"].get(f) == rows["new"].get(f) for f in ("unlabeled_error", "test_error",
                                                                        "validation_error"))
        a, b = rows["old"]["objective"], rows["new"]["objective"]
        same = f"errors {'equal' if errors else 'DIFFER'}, objective rel. diff {abs(a - b) / abs(a):.1e}"
        old, new = statistics.median(times["old"]), statistics.median(times["new"])
        params = ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in cell.params.items())
        params += f" C={cell.settings['C']:.3g}"
        print(f"{spec:28s} {params:34s} "
              f"{old:7.2f} {new:7.2f} {old / new:6.2f}  {same}", flush=True)


if __name__ == "__main__":
    main()
