"""Where does the C* annealing of nabla-S3VM and Newton start? Three readings of JMLR 2008, measured.

JMLR 2008 states the C* schedule of nabla-S3VM and Newton two ways. Sec. 4.2 sets C* to
"2^(i-10) C*" at step i of 10, which our solvers read as i = 1..10 (``anneal_start = 2^-9``,
``anneal_steps = 10``). Table 12's caption says the same schedule goes "from its final value
divided by 1000", and Sec. 5.4.4 starts CCCP at "10^-3 C" (our CCCP). This probe runs the common
protocol (``harness.protocol.run_split``) on the JMLR 2008 splits of the named data sets with the
three readings -- ours, ``2^-10`` in 11 steps (i = 0..10), ``1e-3`` in 10 steps -- and prints the
mean +- sd of the unlabeled error (%) and the mean objective per solver and reading::

    OPENBLAS_NUM_THREADS=1 python scripts/probe_anneal_start.py g50c coil3 2moons --solver grad_s3vm --solver newton

Nothing is stored: the output is for a stop note and reports/DIFFERENCES.md (E).
"""

from __future__ import annotations

import argparse

import numpy as np

from s3vm_bench.data_registry import load_dataset, make_splits
from s3vm_bench.harness.protocol import ProtocolSettings, run_split
from s3vm_bench.solvers import get_solver

#: The three readings: our solvers' default first, then i = 0..10 of Sec. 4.2, then Table 12's caption.
READINGS = {"2^-9 x10 (ours)": {"anneal_start": 2.0 ** -9, "anneal_steps": 10},
            "2^-10 x11": {"anneal_start": 2.0 ** -10, "anneal_steps": 11},
            "1e-3 x10": {"anneal_start": 1e-3, "anneal_steps": 10}}


def probe(dataset: str, solver: str, n_splits: int = 10) -> dict:
    """``{reading: (errors in %, objectives)}`` over the first ``n_splits`` JMLR 2008 splits."""
    ds = load_dataset(dataset)
    splits = make_splits(ds, "jmlr2008")[:n_splits]
    settings = ProtocolSettings.for_dataset(ds.name)
    out = {}
    for name, params in READINGS.items():
        res = [run_split(get_solver(solver), dict(params), ds, sp, settings) for sp in splits]
        out[name] = (np.array([100.0 * r.unlabeled_error for r in res]), np.array([r.objective for r in res]))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="+")
    ap.add_argument("--solver", action="append", help="grad_s3vm and/or newton (default both)")
    ap.add_argument("--splits", type=int, default=10)
    args = ap.parse_args(argv)
    for dataset in args.datasets:
        for solver in args.solver or ["grad_s3vm", "newton"]:
            cells = []
            for name, (err, obj) in probe(dataset, solver, args.splits).items():
                sd = f" +- {err.std(ddof=1):.2f}" if err.size > 1 else ""
                cells.append(f"{name}: {err.mean():.2f}{sd} (objective {obj.mean():.1f})")
            print(f"{dataset} {solver}: " + " | ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
