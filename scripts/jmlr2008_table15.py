"""JMLR 2008 Table 15: LapSVM, S3VM-light and the LapSVM-S3VM-light hybrid (Sec. 5.6.2); a script.

Runs, under the common protocol (:func:`harness.protocol.run_split`: JMLR 2008 Table 5 sigma and
C, C* = C, one-versus-rest, the harness's objective and errors), on the JMLR 2008 splits
(``make_splits(ds, "jmlr2008")``, as ``s3vm-bench run`` uses):

* ``lapsvm`` -- LapSVM: the deformed kernel (Sindhwani, Niyogi & Belkin 2005) in the L2-SVM on
  the labeled points. It has no balance constraint, so r does not enter and it runs once (the
  paper prints one LapSVM column);
* ``s3vm_light`` and ``lapsvm_s3vm_light`` with r exact (the Table 8 setting) and r estimated
  from the labeled points (the Table 13 setting).

Graph parameters (:data:`GRAPH`): JMLR 2008 footnote 16 only says they "were chosen based on
experiments in Sindhwani et al. (2005) without any extensive tuning". That paper is not among
../shared/papers; the numbers of neighbours and Laplacian powers for g50c, Text, Uspst and Coil20
below are the ones later LapSVM work attributes to it (Melacci & Belkin, JMLR 2011, Table of
parameters; recalled, not checked against a copy): g50c 50 / 5, Text (PCMAC) 50 / 5, Uspst 10 / 2,
Coil20 2 / 1. Coil3 takes Coil20's, Isolet Uspst's (it was not in that paper), 2moons the
reference code's defaults (6 neighbours, p = 1). Everywhere binary weights, the normalized
Laplacian, and gamma_I / gamma_A = 100 (one value for all data sets, fixed after one look at
LapSVM with 1, 100 and 1e4 on splits 0-2 of g50c, 2moons and Coil3; not tuned per data set).
The base kernel and C are the protocol's (Table 5), not Sindhwani et al.'s.

Rows go to a CSV (default ``results/jmlr2008_table15.csv``; ``results/`` is not versioned), one per
(configuration, data set, split); rows already there are skipped, so an interrupted run resumes.
Cells run one after the other in this process (single-threaded BLAS).

    nice .venv/bin/python scripts/jmlr2008_table15.py --datasets 2moons coil3 g50c --splits 10
    .venv/bin/python scripts/jmlr2008_table15.py --report reports/jmlr2008-table15-graph.md
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
import traceback
import warnings
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATASETS = ["2moons", "coil3", "g50c", "coil20", "isolet", "uspst", "text"]  # cheapest first
#: target-CSV row label of each data set
ROW = {"g50c": "g50c", "text": "Text", "uspst": "Uspst", "isolet": "Isolet", "coil20": "Coil20", "coil3": "Coil3",
       "2moons": "2moons"}

_COMMON = {"gamma_ratio": 100.0, "graph_weights": "binary", "normalized_laplacian": True}
#: data set -> graph parameters of lapsvm / lapsvm_s3vm_light (see the module docstring)
GRAPH = {
    "g50c": {"n_neighbors": 50, "laplacian_power": 5} | _COMMON,
    "text": {"n_neighbors": 50, "laplacian_power": 5} | _COMMON,
    "uspst": {"n_neighbors": 10, "laplacian_power": 2} | _COMMON,
    "isolet": {"n_neighbors": 10, "laplacian_power": 2} | _COMMON,
    "coil20": {"n_neighbors": 2, "laplacian_power": 1} | _COMMON,
    "coil3": {"n_neighbors": 2, "laplacian_power": 1} | _COMMON,
    "2moons": {"n_neighbors": 6, "laplacian_power": 1} | _COMMON,
}

#: configuration -> (registered solver, uses the graph, r mode, Table 15 column)
CONFIGS = {
    "lapsvm": ("lapsvm", True, "exact", "LapSVM"),
    "light_exact": ("s3vm_light", False, "exact", "S3VM-light exact r"),
    "hybrid_exact": ("lapsvm_s3vm_light", True, "exact", "LapSVM-S3VM-light exact r"),
    "light_est": ("s3vm_light", False, "estimated", "S3VM-light estimated r"),
    "hybrid_est": ("lapsvm_s3vm_light", True, "estimated", "LapSVM-S3VM-light estimated r"),
}
FIELDS = ["config", "dataset", "split", "status", "unlabeled_error", "objective", "balance_exact", "fit_seconds",
          "wall_seconds", "n_binary", "n_warnings", "params", "error"]


def run_cell(config: str, dataset: str, split_index: int) -> dict:
    """One (configuration, data set, split) through :func:`harness.protocol.run_split`."""
    from data_registry import load_dataset, make_splits
    from harness.protocol import ProtocolSettings, run_split
    from solvers import get_solver

    solver, graph, r_mode, _ = CONFIGS[config]
    params = dict(GRAPH[dataset]) if graph else {}
    row = {"config": config, "dataset": dataset, "split": split_index, "params": repr(params)}
    ds = load_dataset(dataset)
    split = make_splits(ds, "jmlr2008")[split_index]
    settings = ProtocolSettings.for_dataset(dataset, r_mode=r_mode)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            res = run_split(get_solver(solver), params, ds, split, settings)
    except Exception as exc:  # recorded, the next cell runs
        return row | {"status": "failed", "wall_seconds": time.perf_counter() - t0,
                      "error": "".join(traceback.format_exception_only(exc)).strip()[-500:]}
    return row | {"status": "done", "unlabeled_error": res.unlabeled_error, "objective": res.objective,
                  "balance_exact": res.balance_exact, "fit_seconds": res.fit_seconds,
                  "wall_seconds": time.perf_counter() - t0, "n_binary": len(res.binary),
                  "n_warnings": sum("connected components" in str(w.message) for w in caught), "error": ""}


def _read(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def run(out: Path, datasets, configs, splits: range) -> None:
    have = {(r["config"], r["dataset"], int(r["split"])) for r in _read(out) if r["status"] == "done"}
    cells = [(c, d, s) for d in datasets for s in splits for c in configs if (c, d, s) not in have]
    print(f"{len(cells)} cells to run ({len(have)} done in {out})", flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    for i, (c, d, s) in enumerate(cells, 1):
        row = run_cell(c, d, s)
        new = not out.exists()
        with out.open("a", newline="") as fh:
            w = csv.DictWriter(fh, FIELDS)
            if new:
                w.writeheader()
            w.writerow({k: row.get(k, "") for k in FIELDS})
        err = row.get("unlabeled_error")
        print(f"[{i}/{len(cells)} {time.perf_counter() - t0:7.0f}s] {c:12s} {d:7s} split {s}: {row['status']} "
              f"err={'' if err is None else f'{100 * err:.1f}%'} wall={row['wall_seconds']:.1f}s "
              f"{row.get('error', '')}", flush=True)


def _targets() -> dict:
    with (ROOT / "reports" / "targets" / "jmlr2008-table15.csv").open(newline="") as fh:
        return {(r["row"], r["column"]): float(r["value"]) for r in csv.DictReader(fh)}


def report(out: Path, dest: Path) -> str:
    rows = [r for r in _read(out) if r["status"] == "done"]
    failed = [r for r in _read(out) if r["status"] != "done"]
    paper = _targets()
    by = {}
    for r in rows:
        by.setdefault((r["config"], r["dataset"]), []).append(r)
    lines = ["# JMLR 2008 Table 15 (reproduced) -- unlabeled error %, LapSVM / S3VM-light / hybrid", "",
             "Produced by `scripts/jmlr2008_table15.py` from its results CSV; protocol and graph choices in its "
             "docstring. Unlike `jmlr2008-table15.md` (`s3vm-bench reproduce`, one graph setting, the solvers' "
             "defaults, for every data set), the graph parameters here are per data set, as Sindhwani et al. "
             "(2005) chose them as far as we could recover them (see the docstring). Each cell: ours, mean +- standard deviation over the splits that ran (number of splits), "
             "then the paper's value in brackets and ours minus the paper's. `-`: not run.", "",
             "| data set | " + " | ".join(CONFIGS[c][3] for c in CONFIGS) + " |",
             "|---|" + "---|" * len(CONFIGS)]
    for d in DATASETS:
        cells = []
        for c in CONFIGS:
            p = paper.get((ROW[d], CONFIGS[c][3]))
            rs = by.get((c, d), [])
            if not rs:
                cells.append(f"- [{p:g}]")
                continue
            e = 100 * np.array([float(r["unlabeled_error"]) for r in rs])
            sd = e.std(ddof=1) if e.size > 1 else 0.0
            cells.append(f"{e.mean():.1f} +- {sd:.1f} ({e.size}) [{p:g}] {e.mean() - p:+.1f}")
        lines.append(f"| {ROW[d]} | " + " | ".join(cells) + " |")
    lines += ["", "## Runs", "", "| data set | splits run | graph (n_neighbors, p, gamma_I/gamma_A) | "
              "median wall s per split: " + " / ".join(CONFIGS) + " | balance exact (S3VM-light, hybrid) | "
              "splits with a disconnected graph |", "|---|---|---|---|---|---|"]
    for d in DATASETS:
        rs = [r for r in rows if r["dataset"] == d]
        if not rs:
            continue
        splits = sorted({int(r["split"]) for r in rs})
        g = GRAPH[d]
        med = " / ".join(f"{np.median([float(r['wall_seconds']) for r in by[(c, d)]]):.3g}" if (c, d) in by else "-"
                         for c in CONFIGS)
        bal = all(r["balance_exact"] == "True" for r in rs if r["config"] != "lapsvm")
        disc = len({r["split"] for r in rs if r["config"] == "lapsvm" and int(r["n_warnings"] or 0) > 0})
        lines.append(f"| {ROW[d]} | {','.join(map(str, splits))} | {g['n_neighbors']}, {g['laplacian_power']}, "
                     f"{g['gamma_ratio']:g} | {med} | {bal} | {disc} |")
    lines += ["", "## Setting", "",
              "* Protocol: `harness.protocol.run_split` -- JMLR 2008 Table 5 Gaussian sigma and C, C* = C, "
              "one-versus-rest beyond two classes, the JMLR 2008 splits of each data file; S3VM-light and the "
              "hybrid have exactly round(u r) positive unlabeled outputs per binary problem (r exact, or "
              "estimated from the labeled points). LapSVM has no balance constraint and runs once.",
              "* LapSVM = `lapsvm`: the L2-SVM (squared hinge) on the labeled points with the deformed kernel "
              "k~(x, z) = k(x, z) - k_x^T (I + M K)^{-1} M k_z, M = gamma_ratio L^p (Sindhwani, Niyogi & Belkin "
              "2005), L the normalized Laplacian of the binary kNN graph on labeled + unlabeled points. The "
              "paper's LapSVM (hinge loss, its own sigma and C) may differ.",
              "* Hybrid = `lapsvm_s3vm_light`: the unchanged `s3vm_light` (JMLR 2008 Alg. 1) on the same k~.",
              "* Graph parameters (JMLR 2008 footnote 16 prints none): see the table above and the script's "
              "docstring; one gamma_I/gamma_A = 100 for all data sets. It was fixed after one look at LapSVM "
              "with gamma_I/gamma_A in {1, 100, 1e4} on splits 0-2 of g50c, 2moons and Coil3 (1e4 breaks g50c, "
              "is best on 2moons); no other value was tried.",
              "* The last column counts the splits whose kNN graph is disconnected (a UserWarning of the solver)."]
    total = sum(float(r["wall_seconds"]) for r in rows)
    lines += ["", f"Total wall time of the cells: {total / 60:.1f} min (one process, single-threaded BLAS, "
              "`nice`, on a 2-core machine shared with other work).", ""]
    missing = [ROW[d] for d in DATASETS if not any(r["dataset"] == d for r in rows)]
    if missing:
        lines.append(f"Not run (time budget): {', '.join(missing)}.")
    partial = []
    for d in DATASETS:
        done = {int(r["split"]) for r in rows if r["dataset"] == d}
        if done and len(done) < 10:
            partial.append(f"{ROW[d]} splits {min(set(range(10)) - done)}-9")
    if partial:
        lines.append(f"Splits not run (time budget): {'; '.join(partial)}.")
    if failed:
        lines.append(f"Failed cells: {len(failed)} (see the CSV).")
    text = "\n".join(lines) + "\n"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text)
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "results" / "jmlr2008_table15.csv"))
    ap.add_argument("--datasets", nargs="+", default=DATASETS, choices=DATASETS)
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--first-split", type=int, default=0)
    ap.add_argument("--report", help="only write the Markdown report (from --out) to this path")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.report:
        print(report(out, Path(args.report)))
        return 0
    run(out, args.datasets, args.configs, range(args.first_split, args.first_split + args.splits))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
