"""Newton S3VM speed beside JMLR 2008 Table 3 (issue 5); a script, not a test.

Seconds to train one binary classifier with annealing and the dichotomic search on r~ (what
Table 3's "training time" column measures), for the flat and the quadratic loss, on the first
``--splits`` splits of the seven JMLR data sets with the Table 5 hyperparameters, exact r. For
the multi-class sets the first ``--binary`` one-versus-rest problems of each split are timed.
Each problem is fitted ``--repeats`` times; the table reports the median over all fits, the
paper's time, their ratio, and per binary classifier the Levenberg-Marquardt iterations (all
stages and all r~ of the search), the dichotomic solves, and -- for the retained solve (the last
r~) -- the median number of support vectors over the annealing stages (points with non-zero loss
curvature, the size of each step's linear system: what the flat loss is meant to reduce, JMLR
2008 Sec. 4.4) and its LM iterations with how many of them were accepted steps. BLAS is
single-threaded.

Run:  .venv/bin/python scripts/bench_newton.py [--repeats 3] [--splits 1] [--binary 2]
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

from s3vm_bench.data_registry import load_dataset  # noqa: E402
from s3vm_bench.data_registry.splits import make_splits  # noqa: E402
from s3vm_bench.harness.protocol import ProtocolSettings  # noqa: E402
from s3vm_bench.solvers._balance import exact_r  # noqa: E402
from s3vm_bench.solvers.newton import NewtonS3VM  # noqa: E402

PAPER = {"g50c": (15, 39), "text": (2180, 2165), "uspst": (233, 2152), "isolet": (168, 1253), "coil20": (152, 1244),
         "coil3": (6, 8), "2moons": (1.7, 1.2)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(PAPER))
    ap.add_argument("--losses", nargs="+", default=["flat", "quadratic"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--splits", type=int, default=1)
    ap.add_argument("--binary", type=int, default=2, help="one-vs-rest problems timed per multi-class split")
    args = ap.parse_args(argv)
    print("| data set | loss | s/binary (median) | fits | paper s | paper/ours | LM iter/binary | dichotomic/binary "
          "| n_sv (retained) | LM iter (retained) | accepted (retained) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.datasets:
        ds = load_dataset(name)
        st = ProtocolSettings.for_dataset(name)
        for li, loss in enumerate(args.losses):
            secs, iters, dich, nsv, kept, acc = [], [], [], [], [], []
            for split in make_splits(ds, "jmlr2008")[:args.splits]:
                idx = np.r_[split.labeled, split.unlabeled]
                X, y = ds.X[idx], ds.y[idx]
                n_lab = split.labeled.size
                problems = [1] if ds.n_classes == 2 else list(range(min(args.binary, ds.n_classes)))
                for k in problems:
                    y01 = (y == k).astype(int)
                    r = exact_r(np.where(y01[n_lab:] == 1, 1.0, -1.0))
                    y01[n_lab:] = -1
                    for _ in range(args.repeats):
                        est = NewtonS3VM(sigma=st.sigma, C=st.C, r=r, loss=loss)
                        t0 = time.perf_counter()
                        est.fit(X, y01)
                        secs.append(time.perf_counter() - t0)
                        info = est.binary_fits_[0].info
                        iters.append(info["total_iter"])
                        dich.append(info["dichotomic_iter"])
                        nsv.append(statistics.median(s["n_sv"] for s in info["trace"]))
                        kept.append(sum(s["n_iter"] for s in info["trace"]))
                        acc.append(sum(s["n_accepted"] for s in info["trace"]))
            med = statistics.median(secs)
            paper = PAPER[name][li] if loss in ("flat", "quadratic") else float("nan")
            print(f"| {name} | {loss} | {med:.3g} | {len(secs)} | {paper} | {paper / med:.0f}x | "
                  f"{statistics.median(iters):.0f} | {statistics.median(dich):.0f} | {statistics.median(nsv):.0f} | "
                  f"{statistics.median(kept):.0f} | {statistics.median(acc):.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
