"""Seconds and nodes to certify the S3VM optimum by branch and bound (issue: <= 10 s per problem).

Runs :func:`solvers.bb.branch_and_bound` on two-moons realizations (100 unlabeled points) and,
optionally, Coil3 splits (210 unlabeled, three one-versus-rest problems), ``--repeat`` times each,
with the NIPS 2006 bound alone (``lookahead=False``, the paper's algorithm) and with the dual
look-ahead bound (the default), and prints medians and the ratio measured in the same run::

    OPENBLAS_NUM_THREADS=1 python scripts/bench_bb.py --moons 10 --repeat 3 [--coil3 1 --time-limit 60]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from harness.optima import REFERENCE_SETS, binary_problems
from harness.protocol import _gram
from solvers.bb import branch_and_bound


def _problems(set_name, n):
    ref = REFERENCE_SETS[set_name]
    for i in range(n):
        ds, split = ref.make(i)
        probs = binary_problems(set_name, ds, split, ref.settings)
        yield i, probs, _gram(probs[0].X, ref.settings), ref.settings


def run(set_name, n, repeat, time_limit):
    print(f"== {set_name}: {n} problems x {repeat} repeats, time limit {time_limit} s per binary problem ==")
    print(f"{'problem':>8} {'variant':>10} {'median s':>9} {'nodes':>8} {'status':>10} {'objective':>10}")
    per_variant = {"nips": [], "lookahead": []}
    for i, probs, K, s in _problems(set_name, n):
        for variant, look in (("nips", False), ("lookahead", True)):
            secs, nodes, status, obj = [], 0, [], 0.0
            for _ in range(repeat):
                t0 = time.perf_counter()
                res = [branch_and_bound(K, p.y_masked, p.k, s.C, s.c_star, lookahead=look, time_limit=time_limit)
                       for p in probs]
                secs.append(time.perf_counter() - t0)
                nodes = sum(r.nodes for r in res)
                status = sorted({r.status for r in res})
                obj = float(np.mean([r.objective for r in res]))
            med = float(np.median(secs))
            per_variant[variant].append((med, nodes))
            print(f"{i:>8} {variant:>10} {med:>9.3f} {nodes:>8} {'/'.join(status):>10} {obj:>10.4f}", flush=True)
    a = np.array(per_variant["nips"])
    b = np.array(per_variant["lookahead"])
    print(f"median over problems: NIPS bound {np.median(a[:, 0]):.3f} s ({np.median(a[:, 1]):.0f} nodes); "
          f"look-ahead {np.median(b[:, 0]):.3f} s ({np.median(b[:, 1]):.0f} nodes); "
          f"median ratio look-ahead / NIPS {np.median(b[:, 0] / a[:, 0]):.2f}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--moons", type=int, default=10, help="two-moons realizations (0 to skip)")
    p.add_argument("--coil3", type=int, default=0, help="Coil3 splits (needs the COIL-20 file)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--time-limit", type=float, default=None)
    args = p.parse_args(argv)
    if args.moons:
        run("two_moons", args.moons, args.repeat, args.time_limit)
    if args.coil3:
        run("coil3", args.coil3, args.repeat, args.time_limit)


if __name__ == "__main__":
    main()
