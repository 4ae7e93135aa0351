"""The continuous S3VMs of JMLR 2008 Sec. 4 under the common protocol (issue 5); a script, not a test.

Runs ``grad_s3vm``, ``cs3vm``, ``cccp`` (with and without annealing) and ``newton`` (flat and
quadratic loss) on the JMLR 2008 benchmark splits with the Table 5 hyperparameters (Gaussian
kernel, C* = C, exact r, one-versus-rest), through :func:`harness.protocol.run_split`, and appends
one row per (configuration, data set, split) to a CSV (resumable: cells already in the file are
skipped). Seconds are per binary classifier: ``fit`` time including annealing and the
dichotomic search, divided by the number of binary problems of the split. Cells run in
parallel over ``--jobs`` processes with single-threaded BLAS.

Then ``--summary`` prints Table 3 (Newton flat vs quadratic: error and seconds), Table 8
(columns nabla-S3VM, cS3VM, CCCP, Newton), Table 1 (Coil3, 2moons) and Table 12 (CCCP with and
without annealing) beside the paper's values, as mean over the splits that ran (and how many).

Run:  .venv/bin/python scripts/run_continuous_s3vms.py --out results/continuous.csv \\
          --configs newton_flat newton_quadratic --datasets g50c 2moons --splits 10 --jobs 2
      .venv/bin/python scripts/run_continuous_s3vms.py --out results/continuous.csv --summary
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from s3vm_bench.harness._atomic import append_line, read_lines  # noqa: E402

CONFIGS = {
    "grad_s3vm": ("grad_s3vm", {}),
    "cs3vm": ("cs3vm", {}),
    "cccp": ("cccp", {"anneal": True}),
    "cccp_noanneal": ("cccp", {"anneal": False}),
    "newton_flat": ("newton", {"loss": "flat"}),
    "newton_quadratic": ("newton", {"loss": "quadratic"}),
}

#: JMLR 2008 values: Table 8 (g50c..coil20) and Table 1 (coil3, 2moons) unlabeled errors (%).
PAPER_ERR = {
    "grad_s3vm": {"g50c": 6.7, "text": 5.1, "uspst": 15.6, "isolet": 25.8, "coil20": 25.6, "coil3": 61.6, "2moons": 61},
    "cs3vm": {"g50c": 6.4, "text": 5.3, "uspst": 36.2, "isolet": 59.8, "coil20": 30.7, "coil3": 61, "2moons": 37.7},
    "cccp": {"g50c": 6.3, "text": 8.3, "uspst": 16.4, "isolet": 26.7, "coil20": 26.6, "coil3": 56.6, "2moons": 63.1},
    "newton_flat": {"g50c": 6.1, "text": 5.4, "uspst": 18.6, "isolet": 32.2, "coil20": 24.1, "coil3": 61.5,
                    "2moons": 11},
    # Table 3 (quadratic column) and Table 12 (no annealing column)
    "newton_quadratic": {"g50c": 5.3, "text": 7.7, "uspst": 15.9, "isolet": 27.1, "coil20": 24.7, "coil3": 58.4,
                         "2moons": 66.4},
    "cccp_noanneal": {"g50c": 7.9, "text": 14.7, "uspst": 21.3, "isolet": 32.4, "coil20": 26.1, "coil3": 49.3,
                      "2moons": 67.1},
}
# Table 12 "Annealing" column equals Table 8 / Table 1 CCCP values.
#: Table 3 training times (s per binary classifier), flat / quadratic.
PAPER_SECONDS = {"newton_flat": {"g50c": 15, "text": 2180, "uspst": 233, "isolet": 168, "coil20": 152, "coil3": 6,
                                 "2moons": 1.7},
                 "newton_quadratic": {"g50c": 39, "text": 2165, "uspst": 2152, "isolet": 1253, "coil20": 1244,
                                      "coil3": 8, "2moons": 1.2}}
DATASETS = ["g50c", "text", "uspst", "isolet", "coil20", "coil3", "2moons"]


def run_cell(config: str, dataset: str, split_index: int) -> dict:
    """One (configuration, data set, split) under the common protocol; returns one result row."""
    from s3vm_bench.data_registry import load_dataset
    from s3vm_bench.data_registry.splits import make_splits
    from s3vm_bench.harness.protocol import ProtocolSettings, run_split
    from s3vm_bench.solvers import get_solver

    solver, params = CONFIGS[config]
    ds = load_dataset(dataset)
    split = make_splits(ds, "jmlr2008")[split_index]
    settings = ProtocolSettings.for_dataset(dataset)
    t0 = time.perf_counter()
    res = run_split(get_solver(solver), dict(params), ds, split, settings)
    wall = time.perf_counter() - t0
    nb = len(res.binary)
    return dict(config=config, dataset=dataset, split=split_index, unlabeled_error=res.unlabeled_error,
                objective=res.objective, seconds_per_binary=res.fit_seconds / nb, wall=wall, n_binary=nb,
                balance_exact=res.balance_exact,
                iter_per_binary=float(np.mean([b.n_iter for b in res.binary])),
                dichotomic_per_binary=float(np.mean([b.dichotomic_iter for b in res.binary])),
                search_exact_fraction=float(np.mean([b.search.get("search_exact", True) for b in res.binary])),
                max_threshold_shift=float(max(b.search.get("threshold_shift", 0.0) for b in res.binary)))


def summary(df: pd.DataFrame) -> str:
    g = df.groupby(["config", "dataset"])
    stats = g.agg(err=("unlabeled_error", "mean"), err_std=("unlabeled_error", "std"), n=("split", "count"),
                  sec=("seconds_per_binary", "median"), it=("iter_per_binary", "median"),
                  dich=("dichotomic_per_binary", "median"), exact=("balance_exact", "all"),
                  search=("search_exact_fraction", "mean"), shift=("max_threshold_shift", "median"))
    lines = []

    def cell(cfg, ds, paper):
        if (cfg, ds) not in stats.index:
            return f"| {ds} | - | {paper} | |"
        s = stats.loc[(cfg, ds)]
        return (f"| {ds} | {100 * s.err:.1f} +- {100 * (s.err_std if s.n > 1 else 0):.1f} ({int(s.n)}) | {paper} "
                f"| {s.sec:.3g} | {s.it:.0f} | {s.dich:.1f} | {bool(s.exact)} | {100 * s.search:.0f}% | {s.shift:.2g} |")

    for cfg in CONFIGS:
        lines.append(f"\n### {cfg}\n\n| data set | error % (splits) | paper | s/binary (median) | "
                     "inner iter/binary | dichotomic/binary | balance exact | search exact | shift (median of max) |"
                     "\n|---|---|---|---|---|---|---|---|---|")
        for ds in DATASETS:
            lines.append(cell(cfg, ds, PAPER_ERR[cfg].get(ds, "-")))
    lines.append("\n### Newton speed (JMLR Table 3): seconds per binary classifier, ours vs paper\n")
    lines.append("| data set | flat ours | flat paper | ratio | quadratic ours | quadratic paper | ratio |\n"
                 "|---|---|---|---|---|---|---|")
    for ds in DATASETS:
        row = [ds]
        for cfg in ("newton_flat", "newton_quadratic"):
            p = PAPER_SECONDS[cfg][ds]
            if (cfg, ds) in stats.index:
                s = stats.loc[(cfg, ds)].sec
                row += [f"{s:.3g}", f"{p}", f"{p / s:.0f}x"]
            else:
                row += ["-", f"{p}", "-"]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "results" / "continuous.csv"))
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument("--datasets", nargs="+", default=DATASETS, choices=DATASETS)
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--first-split", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--summary", action="store_true", help="only print the tables from --out")
    args = ap.parse_args(argv)
    out = Path(args.out)
    # Rows are appended whole (harness._atomic.append_line); a last row cut short by a killed run is
    # left out (read_lines), not read with its numbers truncated.
    lines = [x for x in read_lines(out) if x.strip()]
    done = (pd.read_csv(io.StringIO("\n".join(lines) + "\n")) if len(lines) > 1
            else pd.DataFrame(columns=["config", "dataset", "split"]))
    if args.summary:
        print(summary(done))
        return 0
    have = set(zip(done["config"], done["dataset"], done["split"].astype(int)))
    cells = [(c, d, s) for d in args.datasets for c in args.configs
             for s in range(args.first_split, args.first_split + args.splits) if (c, d, s) not in have]
    print(f"{len(cells)} cells to run", flush=True)
    from joblib import Parallel, delayed

    out.parent.mkdir(parents=True, exist_ok=True)
    for row in Parallel(n_jobs=args.jobs, return_as="generator_unordered")(delayed(run_cell)(*c) for c in cells):
        frame = pd.DataFrame([row])
        if not read_lines(out):
            append_line(out, frame.to_csv(index=False, header=True).splitlines()[0])  # the header, once
        append_line(out, frame.to_csv(index=False, header=False).strip("\n"))
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
