"""Does drawing the labeled points without stratification explain JMLR 2008 Table 13?

JMLR 2008 Sec. 5.4.5 (Table 13) estimates r from the labeled points. Our Isolet and Coil20 splits
are stratified (``data_registry.splits._random_split``), so there the estimated r equals the exact
r up to rounding and Table 13 barely differs from Table 8, while the paper's Isolet row rises by
6-23 points (reports/DIFFERENCES.md, Table 13, "suspected B"). The paper says only that it split
"randomly" (Sec. 5.2). This probe draws the labeled points uniformly at random instead (redrawn,
with a seed, until every class has a labeled point: the one-versus-rest protocol needs one) and
runs the common protocol (``harness.protocol.run_split``) with exact and with estimated r on the
same unstratified splits, beside the stratified splits of the tables. Per mode it prints the mean
+- sd of the unlabeled error over the splits and the mean over splits of the largest |r_est - r|
of a binary problem.

    OPENBLAS_NUM_THREADS=1 python scripts/probe_unstratified_r.py isolet --solver svm --solver s3vm_light

Nothing is stored: the output is for a stop note and reports/DIFFERENCES.md. Seeds derive from
(data set, "probe-unstratified", split index) only.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from s3vm_bench.data_registry import jmlr2008_splits, load_dataset
from s3vm_bench.data_registry.splits import JMLR2008_LABELED, Split, derive_seed
from s3vm_bench.harness.protocol import ProtocolSettings, run_split
from s3vm_bench.solvers import get_solver

_PROTOCOL = "probe-unstratified"


def unstratified_splits(ds, n_splits: int, n_labeled: int, max_draws: int = 10_000) -> list[Split]:
    """``n_splits`` labeled/unlabeled splits with the labeled points drawn uniformly at random.

    A draw that leaves a class without a labeled point is redrawn from the same generator (at
    most ``max_draws`` times), so the classes' labeled counts follow the hypergeometric law
    conditioned on every class being present.
    """
    splits = []
    n = ds.y.size
    for i in range(n_splits):
        seed = derive_seed(ds.name, _PROTOCOL, i)
        rng = np.random.default_rng(seed)
        for _ in range(max_draws):
            lab = np.sort(rng.choice(n, size=n_labeled, replace=False))
            if np.unique(ds.y[lab]).size == ds.n_classes:
                break
        else:
            raise ValueError(f"no draw of {n_labeled} points labels all {ds.n_classes} classes of {ds.name} "
                             f"in {max_draws} tries")
        unl = np.setdiff1d(np.arange(n), lab)
        empty = np.empty(0, np.int64)
        splits.append(Split(_PROTOCOL, i, seed, lab, unl, empty, empty))
    return splits


def r_error(ds, split: Split) -> float:
    """The largest |r_est - r_exact| over the one-versus-rest problems of ``split``."""
    classes = range(1, 2) if ds.n_classes == 2 else range(ds.n_classes)
    yl, yu = ds.y[split.labeled], ds.y[split.unlabeled]
    return max(abs(float(np.mean(yl == k)) - float(np.mean(yu == k))) for k in classes)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", help="a JMLR 2008 data set with seeded splits, e.g. isolet, coil20")
    ap.add_argument("--solver", action="append", required=True, help="registry name (repeatable)")
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--kinds", nargs="+", choices=("stratified", "unstratified"),
                    default=["stratified", "unstratified"], help="which splits to run the solvers on")
    args = ap.parse_args(argv)

    ds = load_dataset(args.dataset)
    kinds = {"stratified": jmlr2008_splits(ds, n_splits=args.splits),
             "unstratified": unstratified_splits(ds, args.splits, JMLR2008_LABELED[args.dataset])}
    kinds = {k: kinds[k] for k in args.kinds}
    for kind, splits in kinds.items():
        errs = [r_error(ds, s) for s in splits]
        counts = [np.bincount(ds.y[s.labeled], minlength=ds.n_classes) for s in splits]
        print(f"{args.dataset} {kind}: largest |r_est - r| per split, mean {np.mean(errs):.3f} "
              f"(max {np.max(errs):.3f}); labeled per class min {min(c.min() for c in counts)}, "
              f"max {max(c.max() for c in counts)}", flush=True)
    for name in args.solver:
        cls = get_solver(name)
        for kind, splits in kinds.items():
            for r_mode in ("exact", "estimated"):
                settings = ProtocolSettings.for_dataset(args.dataset, r_mode=r_mode)
                t0 = time.perf_counter()
                err = np.array([run_split(cls, {}, ds, s, settings).unlabeled_error for s in splits]) * 100
                print(f"{args.dataset} {name:12s} {kind:12s} r {r_mode:9s}: {err.mean():5.1f} +- {err.std(ddof=1):4.1f} "
                      f"({len(err)} splits, {time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
