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
* ``balance_exact`` -- whether that labeling meets the balance constraint (JMLR 2008 eq. 3) in every
  binary problem. The optimum is over balanced labelings only, so the gap of an unbalanced row
  (a solver without a balance rule: ``svm``, ``lapsvm``, the soft-balance variants) compares
  different problems: it is marked, and the summary's median gap is over the balanced rows;
* unlabeled (and test) error of the solver and of the optimum (the L2-SVM of the optimal
  labeling, one-versus-rest argmax for several classes), and the seconds of both.

For a data set with stored certified lower bounds instead (:data:`harness.optima.BOUND_SETS`:
g50c, Text, Uspst -- too large for branch and bound; bounds from :mod:`harness.certify`), each
binary problem's row (:class:`BoundRow`) sets the solver's objective J beside the certified
lower bound L on the balanced optimum and the certified gap ``(J - L) / L``: the solver is
within that fraction of optimal ("certified optimal" where it closes). The gap is a
certificate only for a labeling that meets the balance constraint (JMLR 2008 eq. 3), as the
bound is over those labelings. A split of a one-versus-rest set (Uspst) whose bounds are stored for
some of its binary problems only is compared on those (the solver still runs the whole split, as
the protocol does), and the others are named; a split with no stored bound is an error unless
``compute_missing``.

With ``record_best``, a balanced objective below the best objective stored beside a problem's
bound (or where none is stored) becomes that problem's best objective in the bound store of the
work folder, with the solver (and its parameters) as ``best_solver`` and the gap recomputed
(lower by more than :data:`RECORD_BEST_RTOL` relative: the same labeling recomputed in another
order of floating-point operations does not replace the stored solver):
the store then holds, per binary problem, the best objective any solver compared reached, which
one-versus-rest sets need because their Table 8 rows hold only the mean over the binary problems.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from s3vm_bench import is_int
from s3vm_bench.solvers import get_solver

from .optima import (BOUND_SETS, CERTIFIED_GAP_TOL, binary_problems, bound_problems, build_bounds, certify,
                     check_bound_count, evaluate_optimum, get_reference_set, labels_from_str, load_bounds, load_store,
                     lookup, lookup_bound, save_bounds, save_store)
from .grid import check_solver_params
from .protocol import fit_binary_problems, run_split

__all__ = ["BoundRow", "CompareRow", "RECORD_BEST_RTOL", "SolverFailed", "compare", "gap_table", "write_csv"]

#: ``record_best`` replaces a stored best objective only by one lower by more than this fraction of it
#: (rounding differences between runs of one solver are about 1e-15 relative).
RECORD_BEST_RTOL = 1e-9
#: Added to a bound store's ``best_objective_from`` once ``record_best`` has stored a best objective.
RECORD_BEST_SOURCE = "`s3vm-bench compare SOLVER --record-best` (best_solver of each entry)"


class SolverFailed(RuntimeError):
    """The compared solver raised on a problem: the message names the solver, the problem (data set,
    split and the classes being fitted) and the exception (type and message); the exception is its
    ``__cause__``."""


def _fit_or_fail(solver, set_name, split, labels, fit):
    """``fit()``, the solver's fits on one split; an exception of the solver becomes :class:`SolverFailed`.

    ``labels`` are the classes of the binary problems being fitted (named in the message when the
    split has one, or when they are a subset of its problems).
    """
    try:
        return fit()
    except Exception as exc:  # whatever the solver raises: compare has no row of a failed fit
        name = solver.rsplit(":", 1)[-1] if ":" in solver else solver
        where = f"{set_name} split {split.index}"
        if len(labels) == 1:
            where += f" class {labels[0]}"
        elif labels:
            where += f" (classes {', '.join(str(c) for c in labels)})"
        first = str(exc).strip().splitlines()
        raise SolverFailed(f"{name} failed on {where}: {type(exc).__name__}"
                           + (f": {first[0]}" if first else "")) from exc


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
    balance_exact: bool
    unlabeled_error: float
    optimum_unlabeled_error: float
    test_error: float | None
    optimum_test_error: float | None
    seconds: float
    optimum_seconds: float


@dataclass
class BoundRow:
    """One binary problem of a data set with certified lower bounds (:mod:`harness.certify`)."""

    set_name: str
    split: int
    label: int
    objective: float
    lower_bound: float
    gap: float
    certified_optimal: bool
    balance_exact: bool
    best_objective: float | None
    best_solver: str | None
    unlabeled_error: float
    seconds: float
    bound_seconds: float


def _record_best(set_name, found, who, directory, echo):
    """Store each balanced ``(problem, row)`` of ``found`` whose objective is below its stored best
    objective as the new best, by ``who`` (module docstring); the store is re-read first, so that
    a bound build saving at the same time keeps its entries, and written once."""
    store = load_bounds(set_name, directory)
    changed = []
    for prob, row in found:
        e = lookup_bound(prob, store)
        if e is None or not row.balance_exact or not np.isfinite(row.objective):
            continue
        best = e.get("best_objective")
        if best is not None and row.objective >= best - RECORD_BEST_RTOL * abs(best):
            continue
        lb = float(e["lower_bound"])
        gap = None if lb <= 0 else (row.objective - lb) / lb
        e.update(best_objective=float(row.objective), best_solver=who, gap=gap,
                 certified_optimal=gap is not None and gap <= CERTIFIED_GAP_TOL)
        changed.append(prob.key)
    if changed:
        source = store.get("best_objective_from", "")
        if RECORD_BEST_SOURCE not in source:
            store["best_objective_from"] = f"{source} and {RECORD_BEST_SOURCE}" if source else RECORD_BEST_SOURCE
        path = save_bounds(store, directory)
        echo(f"recorded {who} as the best objective of {len(changed)} {set_name} problem(s) "
             f"({', '.join(changed)}) in {path}")


def _compare_bounds(solver, solver_cls, params, set_name, n, *, compute_missing, time_limit, directory, echo,
                    record_best=False):
    """The rows of one bound set (module docstring); see :func:`compare`."""
    count = check_bound_count(set_name, BOUND_SETS[set_name] if n is None else int(n))
    store = load_bounds(set_name, directory)
    todo = []
    for i in range(count):  # every bound is looked up (or computed) before any solver runs
        ds, split, s, problems = bound_problems(set_name, i)
        entries = [lookup_bound(p, store) for p in problems]
        missing = [p.key for p, e in zip(problems, entries) if e is None]
        if missing and compute_missing:
            store = build_bounds(set_name, i + 1, only=missing, time_limit=240.0 if time_limit is None else time_limit,
                                 directory=directory, echo=echo)
            entries = [lookup_bound(p, store) for p in problems]
        elif len(missing) == len(problems):
            raise ValueError(f"no stored lower bound for {set_name} split {i}; run `s3vm-bench optima build "
                             f"{set_name} --bounds --n {count}` or pass --compute-missing")
        elif missing:
            echo(f"{set_name} split {i}: no stored lower bound for {len(missing)} of its {len(problems)} binary "
                 f"problems ({', '.join(missing)}); compared on the other {len(problems) - len(missing)} "
                 f"(`s3vm-bench optima build {set_name} --bounds --n {i + 1} --only KEY...` computes them)")
        todo.append((ds, split, s, problems, entries))
    rows = []
    for ds, split, s, problems, entries in todo:
        if not rows:
            echo(f"{solver} vs certified lower bounds on {set_name} (JMLR 2008 Table 8 protocol, splits 0..{count - 1}), "
                 f"sigma={s.sigma} C={s.C} C*={s.c_star}")
            echo(f"{'problem':>14} {'objective':>10} {'bound':>10} {'gap%':>8} {'best':>10} {'best gap%':>9} "
                 f"{'unl.err%':>8} {'seconds':>8}")
        bounded = [(prob, e) for prob, e in zip(problems, entries) if e is not None]  # the others are named above
        labels = [prob.label for prob, _ in bounded]
        t0 = time.perf_counter()
        fitted, _ = _fit_or_fail(solver, set_name, split, labels,
                                 lambda: fit_binary_problems(solver_cls, params, ds, split, s, classes=labels))
        seconds = time.perf_counter() - t0
        found = []
        for (prob, e), b in zip(bounded, fitted):
            lb = float(e["lower_bound"])
            gap = (b.objective - lb) / lb if lb > 0 else float("inf")
            balanced = b.n_pos == b.n_pos_target
            err = float(np.mean(np.where(b.unlabeled_outputs > 0, 1.0, -1.0) != prob.y[prob.n_lab:]))
            row = BoundRow(set_name, split.index, prob.label, b.objective, lb, gap, balanced and gap <= CERTIFIED_GAP_TOL,
                           balanced, e.get("best_objective"), e.get("best_solver"), err, seconds / len(bounded),
                           float(e["seconds"]))
            rows.append(row)
            found.append((prob, row))
            best_gap = ("" if row.best_objective is None or lb <= 0 else
                        f"{100 * (row.best_objective - lb) / lb:>9.1f}")
            note = ("  certified optimal" if row.certified_optimal else
                    "" if balanced else "  (not balanced: the bound does not apply)")
            echo(f"{prob.key:>14} {row.objective:>10.4f} {lb:>10.4f} {100 * gap:>8.1f} "
                 f"{row.best_objective if row.best_objective is not None else float('nan'):>10.4f} {best_gap:>9} "
                 f"{100 * err:>8.1f} {row.seconds:>8.2f}{note}")
        if record_best:
            who = solver + ("" if not params else " " + json.dumps(params, sort_keys=True))
            _record_best(set_name, found, who, directory, echo)
    ok = [r for r in rows if r.balance_exact]
    echo(f"summary {set_name}: {len(rows)} binary problems, median certified gap "
         f"{_median_gap([r.gap for r in ok], 1)} "
         f"(mean objective {np.mean([r.objective for r in rows]):.4f}, mean bound "
         f"{np.mean([r.lower_bound for r in rows]):.4f}), certified optimal {sum(r.certified_optimal for r in rows)}/"
         f"{len(rows)}, unlabeled error {100 * np.mean([r.unlabeled_error for r in rows]):.1f}%")
    return rows


def compare(solver: str, set_names=("two_moons", "coil3"), n: int | None = None, *, params=None,
            compute_missing=False, time_limit=None, directory=None, record_best=False,
            echo=print) -> list[CompareRow]:
    """Run ``solver`` on the first ``n`` problems of each reference set; print and return the rows.

    Parameters
    ----------
    solver : str
        Registry name or ``"package.module:Class"``.
    set_names : sequence of str
        Reference sets (:data:`harness.optima.REFERENCE_SETS`) and data sets with certified lower
        bounds (:data:`harness.optima.BOUND_SETS`; rows are then :class:`BoundRow`).
    compute_missing : bool
        Run branch and bound (``time_limit`` seconds per binary problem) for problems without a
        stored optimum and store them -- or, for a bound set, the bound optimizer
        (:func:`harness.optima.build_bounds`, default 240 s per problem); otherwise such problems
        raise ``ValueError``.
    record_best : bool
        For a bound set: record the solver's balanced objectives that are below the stored best
        objective of their problem in the bound store of the work folder (module docstring).

    Raises
    ------
    ValueError
        Before the solver runs at all: an unknown set name, more problems than a bound set has, a
        store that cannot be read, a split of a reference set without a stored optimum (without
        ``compute_missing``), an unknown solver or parameter; before it runs on a set: a stored
        optimum of another problem (its digest differs) or a missing bound of that set.
    SolverFailed
        The solver raised on a problem (nothing more is run).
    """
    if isinstance(set_names, str):  # it would be read as a list of one-letter names
        raise TypeError(f"set_names must be a list of names, not the str {set_names!r}: pass [{set_names!r}]")
    if params is not None and not isinstance(params, dict):
        raise TypeError(f"params must be a dict of solver parameters, got {type(params).__name__}")
    if n is not None and not is_int(n):
        raise TypeError(f"n must be an integer number of problems (or None), got {n!r}")
    for set_name in set_names:  # every name, count and store is checked before any solver runs
        if set_name in BOUND_SETS:
            check_bound_count(set_name, BOUND_SETS[set_name] if n is None else int(n))
            load_bounds(set_name, directory)
            continue
        try:
            ref = get_reference_set(set_name)
        except ValueError as exc:
            raise ValueError(f"{exc}; the sets with certified lower bounds: {', '.join(BOUND_SETS)}") from None
        count = ref.n_default if n is None else int(n)
        if count < 1:
            raise ValueError(f"the number of problems must be >= 1, got {count}")
        stored = {key.split("/")[0] for key in load_store(set_name, directory)["entries"]}
        absent = [i for i in range(count) if f"split{i}" not in stored]
        if absent and not compute_missing:
            raise ValueError(f"no stored optimum for {set_name} split {absent[0]}"
                             + (f" (nor for {len(absent) - 1} other split(s))" if len(absent) > 1 else "")
                             + f"; run `s3vm-bench optima build {set_name} --n {count}` or pass --compute-missing")
    if record_best and not any(name in BOUND_SETS for name in set_names):
        raise ValueError(f"--record-best records best objectives beside certified lower bounds: name one of "
                         f"{', '.join(BOUND_SETS)} in --datasets")
    solver_cls = get_solver(solver)
    params = check_solver_params(params, solver_cls)  # unknown names and refused values fail before any work
    rows = []
    for set_name in set_names:
        if set_name in BOUND_SETS:
            rows.extend(_compare_bounds(solver, solver_cls, params, set_name, n, compute_missing=compute_missing,
                                        time_limit=time_limit, directory=directory, echo=echo,
                                        record_best=record_best))
            continue
        ref = get_reference_set(set_name)
        count = ref.n_default if n is None else int(n)
        store = load_store(set_name, directory)
        s = ref.settings
        echo(f"{solver} vs branch and bound on {set_name} ({ref.description}; {ref.paper}), sigma={s.sigma} "
             f"C={s.C} C*={s.c_star}")
        echo(f"{'split':>5} {'objective':>10} {'optimum':>10} {'gap%':>8} {'opt.lab':>7} {'unl.err%':>8} "
             f"{'opt.err%':>8} {'seconds':>8} {'bb s':>7}")
        todo = []
        for i in range(count):  # every optimum is looked up (or computed) before any solver runs
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
            todo.append((ds, split, problems, entries))
        for ds, split, problems, entries in todo:
            t0 = time.perf_counter()
            res = _fit_or_fail(solver, set_name, split, [p.label for p in problems],
                               lambda: run_split(solver_cls, params, ds, split, s))
            seconds = time.perf_counter() - t0
            same = all(np.array_equal(np.where(b.unlabeled_outputs > 0, 1.0, -1.0), labels_from_str(e["labels"]))
                       for e, b in zip(entries, res.binary))
            opt = evaluate_optimum(ds, split, problems, entries)
            row = CompareRow(set_name, split.index, res.objective, opt.objective,
                             (res.objective - opt.objective) / opt.objective, same, opt.certified,
                             res.balance_exact, res.unlabeled_error, opt.unlabeled_error, res.test_error,
                             opt.test_error, seconds, float(sum(e["seconds"] for e in entries)))
            rows.append(row)
            mark = ("" if row.certified else "  (optimum not certified)") + (
                "" if row.balance_exact else "  (not balanced: the optimum does not apply)")
            echo(f"{row.split:>5} {row.objective:>10.4f} {row.optimum:>10.4f} {100 * row.gap:>8.2f} "
                 f"{'yes' if row.optimal_labeling else 'no':>7} {100 * row.unlabeled_error:>8.1f} "
                 f"{100 * row.optimum_unlabeled_error:>8.1f} {row.seconds:>8.2f} {row.optimum_seconds:>7.2f}{mark}")
        mine = [r for r in rows if r.set_name == set_name]
        echo(f"summary {set_name}: {len(mine)} problems, mean objective {np.mean([r.objective for r in mine]):.4f} vs "
             f"optimum {np.mean([r.optimum for r in mine]):.4f}, median gap "
             f"{_median_gap([r.gap for r in mine if r.balance_exact], 2)}, "
             f"optimal labeling {sum(r.optimal_labeling for r in mine)}/{len(mine)}, unlabeled error "
             f"{100 * np.mean([r.unlabeled_error for r in mine]):.1f}% vs {100 * np.mean([r.optimum_unlabeled_error for r in mine]):.1f}%"
             f", certified {sum(r.certified for r in mine)}/{len(mine)}")
    return rows


def _median_gap(gaps: list, decimals: int) -> str:
    """The summary's median gap (percent) over the balanced rows' ``gaps``, or that there is none."""
    if not gaps:
        return "none (no balanced row)"
    return f"{100 * float(np.median(gaps)):.{decimals}f}% over the {len(gaps)} balanced ones"


def write_csv(rows: list, path, solver: str) -> Path:
    """Write ``rows`` (one line per problem, the fields of :class:`CompareRow` and/or
    :class:`BoundRow` -- their union, in order of first appearance, when both kinds are present --
    plus the solver spec) to the CSV file ``path``, atomically; return the path."""
    import csv
    import dataclasses
    import io

    from ._atomic import atomic_write

    buf = io.StringIO()
    fields = ["solver"]
    for kind in dict.fromkeys(type(r) for r in rows) or [CompareRow]:
        fields += [f.name for f in dataclasses.fields(kind) if f.name not in fields]
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n", restval="")
    writer.writeheader()
    for row in rows:
        writer.writerow({"solver": solver, **dataclasses.asdict(row)})
    path = Path(path)
    atomic_write(path, buf.getvalue())
    return path


def gap_table(dataset: str, directory=None) -> list[dict]:
    """Per solver of the current JMLR 2008 Table 8 rows of ``dataset``: its median certified gap
    ``(J - L) / L`` over the splits with stored bounds for every binary problem (balanced rows
    only; for one-versus-rest, J and L are the means over the binary problems), beside its mean
    unlabeled error over all its splits.

    Returns a list of dicts: ``solver``, ``n_splits`` (rows), ``n_gaps`` (splits with a gap),
    ``median_gap``, ``max_gap`` (None without gaps), ``unlabeled_error``; a solver whose rows
    do not meet the balance constraint, or whose objective is not computed (SVM-5cv), has no gap.
    """
    from .optima import table8_rows, solver_spec

    store = load_bounds(dataset, directory)
    per_split = {}
    for e in store["entries"].values():
        per_split.setdefault(e["split"], []).append(e["lower_bound"])
    by_solver = {}
    for row in table8_rows(dataset):
        if row["status"] != "done":
            continue
        by_solver.setdefault(solver_spec(row), []).append(row)

    def bound(row):
        # one-versus-rest rows hold the mean of the binary objectives: their bound is the mean of
        # the binary bounds, when every binary problem of the split has one
        got = per_split.get(int(row["split"]), [])
        n = int(row["n_binary"] or 0)
        return float(np.mean(got)) if n >= 1 and len(got) == n else None

    out = []
    for spec, rows in sorted(by_solver.items()):
        gaps = [(float(r["objective"]) - bound(r)) / bound(r) if bound(r) > 0 else float("inf") for r in rows
                if r["balance_exact"] == "True" and r["objective"] and bound(r) is not None]
        out.append({"solver": spec, "n_splits": len(rows), "n_gaps": len(gaps),
                    "median_gap": float(np.median(gaps)) if gaps else None,
                    "max_gap": float(np.max(gaps)) if gaps else None,
                    "unlabeled_error": float(np.mean([float(r["unlabeled_error"]) for r in rows]))})
    return out
