"""``s3vm-bench compare``: any solver against the stored branch-and-bound optima.

For every problem of a reference set (:mod:`harness.optima`) the solver is run under the common
protocol (:func:`harness.protocol.run_split`: same kernel, C, C*, exact r, objective recomputed by
the harness) and set beside the stored optimum:

* ``objective`` -- the solver's protocol objective (mean over the binary problems, JMLR 2008
  Sec. 5.2) and ``optimum`` -- the mean of the stored optima of the same binary problems;
* ``gap`` -- ``(objective - optimum) / optimum`` (>= 0 up to the optimality tolerance when every
  optimum is certified; a negative gap against an uncertified entry means the solver beat the
  best labeling known);
* ``optimal_labeling`` -- whether the solver's labeling (the sign of its balanced outputs) is the
  stored optimal labeling in every binary problem;
* unlabeled (and test) error of the solver and of the optimum (the L2-SVM of the optimal
  labeling, one-versus-rest argmax for several classes), and the seconds of both.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from s3vm_bench.solvers import get_solver

from .optima import (binary_problems, certify, evaluate_optimum, get_reference_set, labels_from_str, load_store,
                     lookup, save_store)
from .grid import check_solver_params
from .protocol import run_split

__all__ = ["CompareRow", "compare", "write_csv"]


@dataclass
class CompareRow:
    """One problem (split or realization) of one reference set."""

    set_name: str
    split: int
    objective: float
    optimum: float
    gap: float
    optimal_labeling: bool
    certified: bool
    unlabeled_error: float
    optimum_unlabeled_error: float
    test_error: float | None
    optimum_test_error: float | None
    seconds: float
    optimum_seconds: float


def compare(solver: str, set_names=("two_moons", "coil3"), n: int | None = None, *, params=None,
            compute_missing=False, time_limit=None, directory=None, echo=print) -> list[CompareRow]:
    """Run ``solver`` on the first ``n`` problems of each reference set; print and return the rows.

    Parameters
    ----------
    solver : str
        Registry name or ``"package.module:Class"``.
    compute_missing : bool
        Run branch and bound (``time_limit`` seconds per binary problem) for problems without a
        stored optimum and store them; otherwise such problems raise ``ValueError``.
    """
    solver_cls = get_solver(solver)
    params = check_solver_params(params)
    solver_cls(**params)  # unknown parameter names fail before any work
    rows = []
    for set_name in set_names:
        ref = get_reference_set(set_name)
        count = ref.n_default if n is None else int(n)
        if count < 1:
            raise ValueError(f"the number of problems must be >= 1, got {count}")
        store = load_store(set_name, directory)
        s = ref.settings
        echo(f"{solver} vs branch and bound on {set_name} ({ref.description}; {ref.paper}), sigma={s.sigma} "
             f"C={s.C} C*={s.c_star}")
        echo(f"{'split':>5} {'objective':>10} {'optimum':>10} {'gap%':>8} {'opt.lab':>7} {'unl.err%':>8} "
             f"{'opt.err%':>8} {'seconds':>8} {'bb s':>7}")
        for i in range(count):
            ds, split = ref.make(i)
            problems = binary_problems(set_name, ds, split, s)
            entries = []
            for prob in problems:
                entry = lookup(prob, store)
                if entry is None:
                    if not compute_missing:
                        raise ValueError(f"no stored optimum for {set_name} {prob.key}; run `s3vm-bench optima build "
                                         f"{set_name} --n {count}` or pass --compute-missing")
                    entry = certify(prob, time_limit=time_limit)
                    store["entries"][prob.key] = entry
                    save_store(store, directory)
                entries.append(entry)
            t0 = time.perf_counter()
            res = run_split(solver_cls, params, ds, split, s)
            seconds = time.perf_counter() - t0
            same = all(np.array_equal(np.where(b.unlabeled_outputs > 0, 1.0, -1.0), labels_from_str(e["labels"]))
                       for e, b in zip(entries, res.binary))
            opt = evaluate_optimum(ds, split, problems, entries)
            row = CompareRow(set_name, split.index, res.objective, opt.objective,
                             (res.objective - opt.objective) / opt.objective, same, opt.certified,
                             res.unlabeled_error, opt.unlabeled_error, res.test_error, opt.test_error, seconds,
                             float(sum(e["seconds"] for e in entries)))
            rows.append(row)
            mark = "" if row.certified else "  (optimum not certified)"
            echo(f"{row.split:>5} {row.objective:>10.4f} {row.optimum:>10.4f} {100 * row.gap:>8.2f} "
                 f"{'yes' if row.optimal_labeling else 'no':>7} {100 * row.unlabeled_error:>8.1f} "
                 f"{100 * row.optimum_unlabeled_error:>8.1f} {row.seconds:>8.2f} {row.optimum_seconds:>7.2f}{mark}")
        mine = [r for r in rows if r.set_name == set_name]
        echo(f"summary {set_name}: {len(mine)} problems, mean objective {np.mean([r.objective for r in mine]):.4f} vs "
             f"optimum {np.mean([r.optimum for r in mine]):.4f}, median gap {100 * np.median([r.gap for r in mine]):.2f}%, "
             f"optimal labeling {sum(r.optimal_labeling for r in mine)}/{len(mine)}, unlabeled error "
             f"{100 * np.mean([r.unlabeled_error for r in mine]):.1f}% vs {100 * np.mean([r.optimum_unlabeled_error for r in mine]):.1f}%"
             f", certified {sum(r.certified for r in mine)}/{len(mine)}")
    return rows


def write_csv(rows: list[CompareRow], path, solver: str) -> Path:
    """Write ``rows`` (one line per problem, the fields of :class:`CompareRow`, plus the solver spec)
    to the CSV file ``path``, atomically; return the path."""
    import csv
    import dataclasses
    import io

    from ._atomic import atomic_write

    buf = io.StringIO()
    fields = ["solver"] + [f.name for f in dataclasses.fields(CompareRow)]
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({"solver": solver, **dataclasses.asdict(row)})
    path = Path(path)
    atomic_write(path, buf.getvalue())
    return path
