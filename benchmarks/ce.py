"""CPU cost of the kernel S3VMs in Cholesky equivalents on one Uspst one-vs-rest problem.

The command-line measurement behind the asv suite :mod:`benchmarks.bench_ce`, run as ::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 S3VM_DATA_MIRROR=$PWD/../shared/data \\
        .venv/bin/python -m benchmarks.ce [--solvers cccp newton grad_s3vm cs3vm] [--repeat N] [--digits D ...]

The problem is the first one-versus-rest problem of the common protocol (JMLR 2008 Sec. 5.2) on
Uspst split 0: digit 0 (class index 0) against the nine others (``--digits``: others), exact r, Table 5 settings
(sigma = 7.4, C = C* = 38). It is run through :func:`harness.protocol.run_split` on the two-class
relabeling of the data set, which builds the same binary problem (labels, unlabeled block, exact r,
protocol objective) as the multi-class run does for class 0, and applies the protocol's handling
of each solver (its own dichotomic search for the mean-output solvers, the harness's search or
threshold shift otherwise).

Reported per solver, median over ``--repeat`` runs:

* fit CPU seconds (``time.process_time`` around every ``fit`` call the protocol makes, the
  dichotomic search included; the protocol's own L2-SVM objective is not counted, nor the
  process's start-up, paid by a first fit on a tiny problem, :func:`warm_up`, and printed apart)
  and wall seconds;
* CE, the fit CPU seconds divided by the CPU seconds of one dense Cholesky factorization
  (``scipy.linalg.cho_factor``) of the 2007 x 2007 Gaussian kernel (plus the identity, so that it
  is numerically positive definite), timed in the same process (median of ``--chol`` runs);
* the protocol objective, the unlabeled error and the number of positive unlabeled outputs, so
  that a faster solver can be checked to give the same result;
* for the solvers trained on explicit features that record them (nabla-S3VM, cS3VM), the inner
  iterations of the whole dichotomic search and a floor under their CE at that many iterations
  (:func:`gemv_seconds`: nabla-S3VM and cS3VM read their n x (n - 1) features at least once per
  evaluation, so they cannot cost less than one ``Z w`` per iteration, whatever the code).

With ``--table3``, it measures instead Newton S3VM's seconds per binary classifier against JMLR
2008 Table 3's published ones: one cell of the table (``harness.grid.execute_cell``, split 0 unless
``--splits`` says more) per data set and loss, its CPU seconds (the whole cell: fits, dichotomic
search and the protocol's objective) divided by its number of binary problems, and the ratio
paper / ours; each loss first fits a tiny problem, untimed (:func:`warm_up`).

With ``--ovr``, it measures instead a whole Uspst split (split 0: the ten one-versus-rest
problems of the multi-class protocol) run once with the binary problems fitted one after another
and once together (``batched_ovr``, :func:`s3vm_bench.solvers.base.run_together`): the split's CPU
and wall seconds (``run_split`` as a whole, so the protocol objective is included), CE per binary
problem (split CPU / 10 / Cholesky), the ratio alone / together, and whether the two runs gave
identical outputs.

Keep BLAS on one thread (the environment variables above): CE is meant to be comparable across
machines, not to measure BLAS's threading.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
import warnings

import numpy as np
import scipy.linalg as sla
from sklearn.metrics.pairwise import rbf_kernel

from ._problems import project

DEFAULT_SOLVERS = ("cccp", "newton", "grad_s3vm", "cs3vm")
DIGIT = 0


def uspst_problem(split_index: int = 0, digit: int = DIGIT):
    """Uspst split ``split_index`` as the two-class data set "``digit`` against the rest".

    Returns
    -------
    ds : data_registry.Dataset
        Uspst with ``y = 1`` on ``digit`` and 0 elsewhere (no separate test set).
    split : data_registry.Split
        The JMLR 2008 split (Table 4's l = 50) of the original data set.
    settings : harness.protocol.ProtocolSettings
        JMLR 2008 Table 5 settings of uspst, exact r.
    """
    data_registry = project("data_registry")
    load_dataset, make_splits = data_registry.load_dataset, data_registry.make_splits
    ProtocolSettings = project("harness.protocol").ProtocolSettings

    ds = load_dataset("uspst")
    split = make_splits(ds, "jmlr2008")[split_index]
    y = (ds.y == digit).astype(np.int64)
    binary = dataclasses.replace(ds, y=y, class_names=("rest", ds.class_names[digit]), splits={}, X_test=None,
                                 y_test=None)
    return binary, split, ProtocolSettings.for_dataset("uspst")


def cholesky_seconds(ds, split, settings, repeat: int = 5) -> float:
    """Median CPU seconds of ``cho_factor`` on the Gaussian kernel of the training points (+ I)."""
    X = ds.X[np.r_[split.labeled, split.unlabeled]]
    K = rbf_kernel(X, gamma=1.0 / (2.0 * settings.sigma ** 2))
    K[np.diag_indices_from(K)] += 1.0
    times = []
    for _ in range(repeat):
        A = K.copy()
        t0 = time.process_time()
        sla.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
        times.append(time.process_time() - t0)
    return statistics.median(times)


def gemv_seconds(n: int, repeat: int = 20) -> float:
    """Median CPU seconds of one product ``Z w`` (BLAS ``dgemv``) with a C-contiguous n x (n - 1) ``Z``.

    The shape of the kernel-PCA map of nabla-S3VM and cS3VM (JMLR 2008 Sec. 4, Method 1) on the
    n training points: every evaluation of their objective (14) reads Z at least once (its
    gradient needs ``Z^T d``), so their inner iterations (each at least one evaluation) times
    this is a floor under their CPU time at the given number of iterations.
    """
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((n, n - 1))
    w = rng.standard_normal(n - 1)
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        Z @ w
        times.append(time.process_time() - t0)
    return statistics.median(times)


def warm_up(name: str, params: dict | None = None) -> float:
    """CPU seconds of one fit of solver ``name`` (with ``params``) on a tiny problem (16 points, 4
    labeled), run before its timed fits.

    The first fit in a process also pays the process's start-up: numba's compiled functions loaded
    from its cache, first calls into scipy and BLAS (about 0.4 CPU s). A run of many cells pays it
    once per worker process, and whichever solver is timed first would pay it alone, so the
    timed fits come after this one and CE leaves it out; it is printed beside them.
    """
    get_solver = project("solvers").get_solver
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(-1.0, 1.0, (8, 3)), rng.normal(1.0, 1.0, (8, 3))]
    y = np.full(16, -1)
    y[[0, 1, 8, 9]] = [0, 0, 1, 1]
    est = get_solver(name)(**(params or {}))
    if "sigma" in est.get_params():
        est.set_params(sigma=1.0)
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a tiny problem may stop at a limit; only its start-up matters
        est.fit(X, y)
    return time.process_time() - t0


def _timed(cls, clock: list, iters: list | None = None):
    """A subclass of ``cls`` whose ``fit`` adds its CPU seconds to ``clock[0]`` (same parameters),
    and appends to ``iters`` the inner iterations of each binary fit's whole dichotomic search
    (``info["total_iter"]``, recorded by the mean-output solvers)."""

    def fit(self, X, y):
        t0 = time.process_time()
        try:
            return cls.fit(self, X, y)
        finally:
            clock[0] += time.process_time() - t0
            if iters is not None:
                iters.extend(int(f.info["total_iter"]) for f in getattr(self, "binary_fits_", None) or []
                             if "total_iter" in f.info)

    return type(cls.__name__, (cls,), {"fit": fit, "__module__": cls.__module__, "__doc__": cls.__doc__})


def run_solver(name: str, ds, split, settings):
    """One protocol run of solver ``name``.

    Returns
    -------
    tuple
        (fit CPU s, wall s, objective, unlabeled error, n_pos, n_pos target, inner iterations of
        the dichotomic search, or None unless the solver records them and is trained on the
        explicit features of JMLR 2008 Sec. 4's Method 1 (a ``kernel_map`` parameter)).
    """
    run_split = project("harness.protocol").run_split
    get_solver = project("solvers").get_solver

    clock, iters = [0.0], []
    cls = _timed(get_solver(name), clock, iters)
    t0 = time.perf_counter()
    res = run_split(cls, {}, ds, split, settings)
    wall = time.perf_counter() - t0
    b = res.binary[0]
    method1 = "kernel_map" in get_solver(name)().get_params()  # trained on the kernel-PCA features Z
    return (clock[0], wall, res.objective, res.unlabeled_error, b.n_pos, b.n_pos_target,
            sum(iters) if iters and method1 else None)


def table3(splits: int = 1, losses=("Flat", "Quadratic"), echo=print) -> list[dict]:
    """Newton S3VM's CPU seconds per binary classifier on the rows of JMLR 2008 Table 3, beside the paper's."""
    execute_cell = project("harness.grid").execute_cell
    reproduce = project("harness.reproduce")
    build_cells, load_targets = reproduce.build_cells, reproduce.load_targets
    get_spec = project("harness.specs").get_spec

    spec = get_spec("jmlr2008-table3")
    paper = load_targets(spec.key)
    config_names = [c.label for c in spec.configs]
    planned = [p for p in build_cells(spec, n_splits=splits)[0] if config_names[p.config] in losses]
    echo(f"{'data set':<10} {'loss':<10} {'split':>5} {'CPU s/binary':>13} {'paper s':>9} {'paper/ours':>11}")
    out, started = [], {}
    for p in planned:
        loss = config_names[p.config]
        if loss not in started:  # the process's start-up is not the first cell's cost (warm_up)
            started[loss] = warm_up(p.cell.solver, p.cell.params)
        row = execute_cell(p.cell)
        if row["status"] != "done":
            echo(f"{p.row:<10} {loss:<10} {p.cell.split:>5} {row['status']}: {row.get('error', '')[-200:]}")
            continue
        per = row["cpu_seconds"] / row["n_binary"]
        ref = paper.get((p.row, f"{loss} time"), (None,))[0]
        ratio = ref / per if ref else float("nan")
        out.append({"dataset": p.row, "loss": loss, "split": p.cell.split, "cpu_per_binary": per, "paper": ref,
                    "ratio": ratio})
        echo(f"{p.row:<10} {loss:<10} {p.cell.split:>5} {per:13.3f} {ref if ref else float('nan'):9.1f} "
             f"{ratio:10.1f}x", flush=True)
    echo("not counted: a first fit on a tiny problem per loss (the process's start-up, warm_up), CPU s: "
         + ", ".join(f"{loss} {cpu:.3f}" for loss, cpu in started.items()))
    return out


def ovr(solvers, chol_repeat: int = 5, echo=print) -> list[dict]:
    """The ten one-versus-rest problems of Uspst split 0, fitted alone and together, per solver."""
    data_registry = project("data_registry")
    run_split = project("harness.protocol").run_split
    get_solver = project("solvers").get_solver
    ProtocolSettings = project("harness.protocol").ProtocolSettings

    ds = data_registry.load_dataset("uspst")
    split = data_registry.make_splits(ds, "jmlr2008")[0]
    settings = ProtocolSettings.for_dataset("uspst")
    chol = cholesky_seconds(ds, split, settings, chol_repeat)
    k = ds.n_classes
    echo(f"uspst split {split.index}, {k} one-vs-rest problems; one dense Cholesky: {chol:.4f} CPU s")
    echo(f"{'solver':<12} {'mode':<9} {'CPU s':>9} {'wall s':>9} {'CE/binary':>10} {'ratio':>6} {'identical':>9}")
    out = []
    for name in solvers:
        cls = get_solver(name)
        runs = {}
        for mode, batched in (("alone", False), ("together", True)):
            mode_cls = type(cls.__name__, (cls,), {"batched_ovr": batched, "__module__": cls.__module__})
            c0, t0 = time.process_time(), time.perf_counter()
            res = run_split(mode_cls, {}, ds, split, settings)
            runs[mode] = (time.process_time() - c0, time.perf_counter() - t0, res)
        same = all(np.array_equal(a.unlabeled_outputs, b.unlabeled_outputs)
                   for a, b in zip(runs["alone"][2].binary, runs["together"][2].binary))
        for mode, (cpu, wall, _) in runs.items():
            ratio = runs["alone"][0] / cpu
            echo(f"{name:<12} {mode:<9} {cpu:9.1f} {wall:9.1f} {cpu / k / chol:10.1f} {ratio:6.2f} {str(same):>9}",
                 flush=True)
            out.append({"solver": name, "mode": mode, "cpu": cpu, "wall": wall, "ce_per_binary": cpu / k / chol,
                        "identical": same})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.ce", description=__doc__.splitlines()[0])
    count = project("harness.cli").positive_int  # the command line's own rule for counts
    ap.add_argument("--solvers", nargs="+", default=list(DEFAULT_SOLVERS))
    ap.add_argument("--repeat", type=count, default=1, help="protocol runs per solver (median reported)")
    ap.add_argument("--chol", type=count, default=5, help="Cholesky factorizations timed (median)")
    ap.add_argument("--digits", type=int, nargs="+", default=[DIGIT], choices=range(10), metavar="D",
                    help="the one-vs-rest problems to measure (digit D against the rest; default 0; "
                         "the cost varies by more than 10x across digits)")
    ap.add_argument("--table3", action="store_true", help="Newton's seconds per binary classifier against "
                    "JMLR 2008 Table 3 instead")
    ap.add_argument("--splits", type=count, default=1, help="with --table3: splits per data set")
    ap.add_argument("--losses", nargs="+", default=["Flat", "Quadratic"], help="with --table3: columns to run")
    ap.add_argument("--ovr", action="store_true", help="a whole Uspst split (ten one-vs-rest problems) fitted "
                    "alone and together instead")
    args = ap.parse_args(argv)
    for name in args.solvers:  # every name checked before the first measurement
        try:
            project("solvers").get_solver(name)
        except (TypeError, ValueError) as exc:
            ap.error(f"--solvers: {exc}")
    if args.ovr:
        ovr(args.solvers, args.chol, echo=lambda *a, **k: print(*a, **k))
        return 0
    if args.table3:
        table3(args.splits, tuple(args.losses), echo=lambda *a, **k: print(*a, **k))
        return 0

    chol, started = None, {}
    for digit in args.digits:
        ds, split, settings = uspst_problem(digit=digit)
        if chol is None:
            chol = cholesky_seconds(ds, split, settings, args.chol)
            n = split.labeled.size + split.unlabeled.size
            print(f"uspst split {split.index}: n = {n}, l = {split.labeled.size}, sigma = {settings.sigma}, "
                  f"C = C* = {settings.C}")
            print(f"one dense Cholesky of the {n} x {n} kernel: {chol:.4f} CPU s (median of {args.chol})")
            gemv = gemv_seconds(n)
            print(f"one product Z w with Z of {n} x {n - 1}: {gemv * 1e3:.3f} CPU ms (median of 20); "
                  f"floor CE = inner iterations x that / Cholesky")
            print(f"{'solver':<12} {'digit':>5} {'CPU s':>9} {'wall s':>9} {'CE':>8} {'objective':>22} "
                  f"{'unl. error':>10} {'n_pos':>11} {'inner it':>8} {'floor CE':>8}")
        for name in args.solvers:
            if name not in started:
                started[name] = warm_up(name)
            runs = [run_solver(name, ds, split, settings) for _ in range(args.repeat)]
            cpu = statistics.median(r[0] for r in runs)
            wall = statistics.median(r[1] for r in runs)
            _, _, obj, err, n_pos, target, iters = runs[-1]
            floor = "" if iters is None else f"{iters:>8} {iters * gemv / chol:8.1f}"
            print(f"{name:<12} {digit:>5} {cpu:9.3f} {wall:9.3f} {cpu / chol:8.1f} {obj:22.15g} {err:10.6f} "
                  f"{n_pos:>5}/{target:<5} {floor}".rstrip(), flush=True)
    print("not counted: a first fit on a tiny problem (the process's start-up, warm_up), CPU s: "
          + ", ".join(f"{name} {cpu:.3f}" for name, cpu in started.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
