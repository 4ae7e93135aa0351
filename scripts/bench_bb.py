"""Seconds and nodes to certify the S3VM optimum by branch and bound (issue: <= 10 s per problem).

Runs :func:`solvers.bb.branch_and_bound` on two-moons realizations (100 unlabeled points) and,
optionally, Coil3 splits (210 unlabeled, three one-versus-rest problems), ``--repeat`` times each,
in up to four variants -- ``nips``: the NIPS 2006 bound and branching alone (``lookahead=False,
branching="nips"``, the paper's algorithm); ``lookahead``: plus the dual look-ahead bounds;
``fixing``: plus fixing the labels those bounds force (the default of ``branch_and_bound``);
``product``: that, branching on the product of the two children's bound gains -- and prints
medians and the ratios to the first variant measured in the same run::

    OPENBLAS_NUM_THREADS=1 python scripts/bench_bb.py --moons 10 --repeat 3 [--coil3 1 --time-limit 60]

``--jobs 2`` searches each binary problem on two processes
(:func:`solvers.bb.parallel_branch_and_bound`); the seconds are then wall time on both cores,
starting the workers included.

``--per-problem`` adds one row per binary problem (nodes, inverse rebuilds, lower bound, gap,
unlabeled error of the returned labeling) -- the numbers that say how far from certified a
time-limited Coil3 run is. ``--seed-truth`` starts from the true labeling as the incumbent (as
``s3vm-bench optima build --seed-truth`` does): a valid upper bound that only speeds pruning.
``--seed-stored`` starts from the stored optimum's labeling (``harness/optima``): the seconds to
certify a known optimum, which is not always the true labeling (Coil3 split 2 class 2).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from s3vm_bench.harness.optima import REFERENCE_SETS, binary_problems, labels_from_str, load_store, lookup
from s3vm_bench.harness.protocol import _gram
from s3vm_bench.solvers import _bb_kernels
from s3vm_bench.solvers.bb import parallel_branch_and_bound

VARIANTS = {"nips": {"lookahead": False, "fixing": False, "branching": "nips"},  # the paper's algorithm
            "lookahead": {"lookahead": True, "fixing": False, "branching": "nips"},
            "fixing": {"lookahead": True, "fixing": True, "branching": "nips"},  # the default
            "product": {"lookahead": True, "fixing": True, "branching": "product"}}


def _problems(set_name, indices):
    ref = REFERENCE_SETS[set_name]
    for i in indices:
        ds, split = ref.make(i)
        probs = binary_problems(set_name, ds, split, ref.settings)
        yield i, probs, _gram(probs[0].X, ref.settings), ref.settings


def _seed(p, seed, store):
    """The incumbent a search of problem ``p`` starts from (None, the truth, or the stored optimum)."""
    if seed == "truth":
        return p.y[p.n_lab:]
    if seed == "stored":
        entry = lookup(p, store)
        if entry is None:
            raise SystemExit(f"no stored optimum for {p.key}: run `s3vm-bench optima build` first")
        return labels_from_str(entry["labels"])
    return None


def run(set_name, n, repeat, time_limit, *, variants=("nips", "lookahead", "fixing", "product"), per_problem=False,
        seed=None, node_limit=None, jobs=1):
    store = load_store(set_name) if seed == "stored" else None
    seeded = {"truth": ", seeded with the true labeling", "stored": ", seeded with the stored optimum"}
    indices = range(n) if isinstance(n, int) else list(n)
    print(f"== {set_name}: {len(indices)} problems x {repeat} repeats, time limit {time_limit} s per binary problem"
          f"{seeded.get(seed, '')} ==")
    print(f"{'problem':>8} {'variant':>10} {'median s':>9} {'nodes':>8} {'status':>10} {'objective':>10}")
    per_variant = {v: [] for v in variants}
    for i, probs, K, s in _problems(set_name, indices):
        for variant in variants:
            secs, res = [], []
            for _ in range(repeat):
                seeds = [_seed(p, seed, store) for p in probs]
                t0 = time.perf_counter()
                res = [parallel_branch_and_bound(K, p.y_masked, p.k, s.C, s.c_star, n_jobs=jobs, time_limit=time_limit,
                                                 node_limit=node_limit, initial_labels=init, **VARIANTS[variant])
                       for p, init in zip(probs, seeds)]
                secs.append(time.perf_counter() - t0)
            nodes = sum(r.nodes for r in res)
            status = sorted({r.status for r in res})
            obj = float(np.mean([r.objective for r in res]))
            med = float(np.median(secs))
            per_variant[variant].append((med, nodes))
            print(f"{i:>8} {variant:>10} {med:>9.3f} {nodes:>8} {'/'.join(status):>10} {obj:>10.4f}", flush=True)
            if per_problem:
                for p, r in zip(probs, res):
                    err = float(np.mean(r.labels != p.y[p.n_lab:]))
                    print(f"{'':>8} {p.key:>14}: {r.status:>10} nodes {r.nodes:>7} rebuilds {r.n_refactor:>6} "
                          f"s {r.seconds:7.2f} objective {r.objective:9.4f} lower {r.lower_bound:9.4f} "
                          f"gap {100 * r.gap:6.2f}% depth {r.max_depth:>4} unl.err {100 * err:5.1f}%", flush=True)
    base = np.array(per_variant[variants[0]])
    for v in variants:
        a = np.array(per_variant[v])
        line = f"median over problems: {v} {np.median(a[:, 0]):.3f} s ({np.median(a[:, 1]):.0f} nodes)"
        if v != variants[0]:
            line += (f"; median ratio {v} / {variants[0]}: seconds {np.median(a[:, 0] / base[:, 0]):.2f}, "
                     f"nodes {np.median(a[:, 1] / base[:, 1]):.2f}")
        print(line)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--moons", type=int, default=10, help="two-moons realizations (0 to skip)")
    p.add_argument("--coil3", type=int, default=0, help="Coil3 splits (needs the COIL-20 file)")
    p.add_argument("--coil3-splits", type=int, nargs="+", metavar="I",
                   help="these Coil3 splits (0-9) instead of the first --coil3")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--time-limit", type=float, default=None)
    p.add_argument("--variants", nargs="+", choices=sorted(VARIANTS), default=["nips", "lookahead", "fixing", "product"],
                   help="nips: the paper's bound and branching (NIPS 2006 Alg. 1, eq. 7); lookahead: plus the "
                        "dual look-ahead bounds; fixing: plus the labels they force (the default); product: that, "
                        "branching on the product of both children's bound gains")
    p.add_argument("--jobs", type=int, default=1, help="processes per search (parallel_branch_and_bound)")
    p.add_argument("--node-limit", type=int, default=None)
    p.add_argument("--per-problem", action="store_true", help="one row per binary problem")
    seed = p.add_mutually_exclusive_group()
    seed.add_argument("--seed-truth", action="store_true", help="seed the incumbent with the true labeling")
    seed.add_argument("--seed-stored", action="store_true", help="seed the incumbent with the stored optimum")
    args = p.parse_args(argv)
    if args.jobs < 1:
        p.error(f"--jobs must be at least 1, got {args.jobs}")
    _bb_kernels.warm_up()  # compiled or loaded from numba's cache before any clock starts
    kw = dict(variants=tuple(args.variants), per_problem=args.per_problem,
              seed="truth" if args.seed_truth else "stored" if args.seed_stored else None,
              node_limit=args.node_limit, jobs=args.jobs)
    if args.moons:
        run("two_moons", args.moons, args.repeat, args.time_limit, **kw)
    if args.coil3 or args.coil3_splits:
        run("coil3", args.coil3_splits or args.coil3, args.repeat, args.time_limit, **kw)


if __name__ == "__main__":
    main()
