"""The small problems of the asv suites and the once-per-run quality table.

Only the stable API of the project is used -- ``solvers.REGISTRY``/``get_solver``,
``harness.protocol`` (``ProtocolSettings``, ``run_split``), ``harness.optima`` (reference sets and
stored branch-and-bound optima) and ``data_registry`` -- because asv runs this working-tree suite
against the code of *older* commits too.

Profiles (``S3VM_ASV_PROFILE``):

``commit`` (default)
    every registered solver on a two-moons realization (NIPS 2006 Table 1 realization 0), a
    Coil3 split (split 0 of the stored optima), g50c (JMLR 2008 split 0) and Uspst digit 4
    against 9 (split 0 restricted to those digits); JMLR 2008 Table 5 hyperparameters; sized to
    run in minutes per commit.
``full``
    the same and text (split 0's labeled points with 250 of its unlabeled ones, linear kernel),
    where the feature-space solvers take tens of seconds each.
``tiny``
    the CI smoke profile: the two-moons realization only, with a few fast solvers.

Outside solvers join every profile through ``S3VM_ASV_SOLVERS``: comma-separated registered
names, ``package.module:Class`` or ``/absolute/path/to/file.py:Class`` (README, "Add your solver").

Data files come through ``data_registry`` (pooch); offline, set ``S3VM_DATA_MIRROR`` to
``../shared/data`` (an absolute path: asv runs the benchmarks from another directory) and
``S3VM_DATA_DIR`` to a cache folder.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
import traceback
import warnings
from dataclasses import dataclass

import numpy as np

import importlib

#: Extra solvers to benchmark beside the registered ones: comma-separated names, each a registered
#: name, "package.module:Class" or "path/to/file.py:Class" (absolute: asv runs from its own folders).
EXTRA_SOLVERS_ENV = "S3VM_ASV_SOLVERS"


def project(name: str):
    """The project's module ``name`` (``"harness.protocol"``): ``s3vm_bench.<name>`` when installed
    so, else the top-level ``<name>`` of the older layout -- asv runs this suite against older
    commits too."""
    try:
        return importlib.import_module(f"s3vm_bench.{name}")
    except ModuleNotFoundError as exc:
        if exc.name not in ("s3vm_bench", f"s3vm_bench.{name.split('.')[0]}"):
            raise
        return importlib.import_module(name)


solvers = project("solvers")


def warm_up_bb() -> None:
    """Compile (or load from numba's cache) the branch-and-bound kernels, so that a timed fit does not
    include it; nothing on a commit before the compiled kernels."""
    try:
        warm_up = project("solvers.bb").warm_up
    except (ImportError, AttributeError):
        return
    warm_up()


def gram(X, settings):
    """The protocol's kernel matrix of ``X`` (Gaussian of width ``settings.sigma``, or linear)."""
    try:
        kernels = project("solvers.numerics")
    except ModuleNotFoundError:  # commits before the public numerics module
        kernels = project("solvers._kernels")
    if settings.kernel == "linear":
        return kernels.linear_kernel(X)
    return kernels.gaussian_kernel(X, sigma=settings.sigma)

# harness.optima and harness.protocol (scikit-learn, scipy, the solvers' numerics: about a second
# to import) are imported where a problem is built or run, not here: asv starts a process for
# every (benchmark, parameters), and the track benchmarks only read the once-per-run table.


def run_split(*args, **kwargs):
    """:func:`harness.protocol.run_split` (imported on first use)."""
    return project("harness.protocol").run_split(*args, **kwargs)

PROFILE_ENV = "S3VM_ASV_PROFILE"

#: Problem names in display order (the second asv parameter), per profile.
FULL_PROBLEMS = ("two_moons", "coil3", "g50c", "text_u250", "uspst_4v9")
COMMIT_PROBLEMS = ("two_moons", "coil3", "g50c", "uspst_4v9")
TINY_PROBLEMS = ("two_moons",)
PROFILES = {"commit": COMMIT_PROBLEMS, "full": FULL_PROBLEMS, "tiny": TINY_PROBLEMS}
#: The CI smoke run must stay around a minute: the cheapest solvers of three families
#: (supervised baseline, combinatorial, continuous with the dichotomic search).
TINY_SOLVERS = ("svm", "s3vm_light", "newton")

#: Kernel of each problem (known without loading the data, so skips are decided cheaply).
KERNEL = {"two_moons": "rbf", "coil3": "rbf", "g50c": "rbf", "text_u250": "linear", "uspst_4v9": "rbf"}

#: Uspst binary task: digit 4 (positive class) against digit 9.
USPST_PAIR = (4, 9)
#: Unlabeled documents kept from text's split 0.
TEXT_U = 250

#: Solver x problem pairs that are infeasible, not merely slow: they are skipped in ``setup``.
#: Branch and bound is exponential in the number of unlabeled points; only the 100-point two-moons
#: realization is certified within seconds (the others have 210-500 unlabeled points, far beyond
#: what a benchmark sample can certify).
INFEASIBLE = {("bb", p): "branch and bound is exponential in u; only two_moons (u = 100) is tractable"
              for p in FULL_PROBLEMS[1:]}

def has_objective(solver_cls) -> bool:
    """Whether the protocol gives the solver a transductive objective.

    Not so for ``evaluation != "transductive"`` (``svm_5cv``: 5-fold CV error with every true
    label, JMLR 2008 Table 8 "SVM-5cv", a reference): it is timed and its error is tracked, but
    it has no objective, so no ratio and no rank.
    """
    return getattr(solver_cls, "evaluation", "transductive") == "transductive"


def profile() -> str:
    """The selected profile: ``"commit"`` (default), ``"full"`` or ``"tiny"``."""
    name = os.environ.get(PROFILE_ENV, "commit").strip() or "commit"
    if name not in PROFILES:
        raise ValueError(f"{PROFILE_ENV} must be one of {', '.join(PROFILES)}, got {name!r}")
    return name


def extra_solvers() -> list[str]:
    """The solvers named by :data:`EXTRA_SOLVERS_ENV` (empty when it is not set)."""
    return [s.strip() for s in os.environ.get(EXTRA_SOLVERS_ENV, "").split(",") if s.strip()]


def solver_names() -> list[str]:
    """Every registered solver (read at import: solvers added later are picked up automatically),
    then the extra ones of :data:`EXTRA_SOLVERS_ENV`."""
    names = sorted(solvers.REGISTRY)
    if profile() == "tiny":
        names = [n for n in TINY_SOLVERS if n in solvers.REGISTRY]
    return names + [n for n in extra_solvers() if n not in names]


def problem_names() -> list[str]:
    """Problems of the selected profile."""
    return list(PROFILES[profile()])


@dataclass(frozen=True)
class Problem:
    """One protocol problem: data set, split, shared settings and the reference set it belongs to."""

    name: str
    ds: object
    split: object
    settings: object  # harness.protocol.ProtocolSettings
    reference_set: str | None = None  # harness.optima set holding its branch-and-bound optimum


def load_problem(name: str) -> Problem:
    """Build problem ``name`` exactly as the protocol (and, for reference sets, ``optima``) does."""
    data_registry, optima = project("data_registry"), project("harness.optima")
    derive_seed, jmlr2008_splits, load_dataset = (data_registry.derive_seed, data_registry.jmlr2008_splits,
                                                   data_registry.load_dataset)
    ProtocolSettings = project("harness.protocol").ProtocolSettings

    if name in ("two_moons", "coil3"):
        # Realization / split 0 of the reference set: same data, split and settings as the stored
        # optimum (ref.settings is what the entries' digests were computed with).
        ref = optima.REFERENCE_SETS[name]
        ds, split = ref.make(0)
        return Problem(name, ds, split, ref.settings, name)
    if name == "g50c":
        ds = load_dataset(name)
        return Problem(name, ds, jmlr2008_splits(ds, n_splits=1)[0], ProtocolSettings.for_dataset(name))
    if name == "text_u250":
        # Split 0's 50 labeled documents and a stratified 250 of its 1896 unlabeled ones, so the
        # Gram-based solvers work on a 300-point problem (the feature-space ones, cs3vm,
        # grad_s3vm and newton, still work in d = 7511 dimensions, the slowest of a run). Linear
        # kernel (SIGIR 2006's setting for text; C from JMLR 2008 Table 5) so that the
        # linear-only SIGIR 2006 solvers (tsvm_linear, mfa) are measured on at least one problem.
        ds = load_dataset("text")
        split = jmlr2008_splits(ds, n_splits=1)[0]
        rng = np.random.default_rng(derive_seed("text", "asv", 0))
        unl = split.unlabeled
        keep = np.concatenate([rng.choice(unl[ds.y[unl] == c], size=int(round(TEXT_U * np.mean(ds.y[unl] == c))),
                                          replace=False) for c in (0, 1)])
        split = dataclasses.replace(split, unlabeled=np.sort(keep))
        return Problem(name, ds, split, ProtocolSettings.for_dataset("text", kernel=KERNEL[name]))
    if name == "uspst_4v9":
        # Uspst digits 4 (positive) against 9, the classic confusable pair: split 0 restricted to
        # the points of the two digits (9 labeled, 367 unlabeled), Table 5 settings of uspst.
        ds = load_dataset("uspst")
        split = jmlr2008_splits(ds, n_splits=1)[0]
        pos, neg = USPST_PAIR
        pair = np.isin(ds.y, USPST_PAIR)
        split = dataclasses.replace(split, labeled=split.labeled[pair[split.labeled]],
                                    unlabeled=split.unlabeled[pair[split.unlabeled]])
        y = (ds.y == pos).astype(np.int64)
        ds2 = dataclasses.replace(ds, name="uspst", y=y, class_names=(str(neg), str(pos)),
                                  splits={}, X_test=None, y_test=None)
        return Problem(name, ds2, split, ProtocolSettings.for_dataset("uspst"))
    raise ValueError(f"unknown benchmark problem {name!r}")


def skip_reason(solver: str, problem: str) -> str | None:
    """Why a combination is not run (None: it is run)."""
    if solver not in solvers.REGISTRY and solver not in extra_solvers():
        return f"solver {solver!r} is not registered in this commit"
    if (solver, problem) in INFEASIBLE:
        return INFEASIBLE[(solver, problem)]
    cls = solvers.get_solver(solver)
    kernels = _kernels(cls)
    settings_kernel = KERNEL[problem]
    if kernels is not None and settings_kernel not in kernels:
        return f"{solver} supports kernels {sorted(kernels)}, the problem uses {settings_kernel!r}"
    return None


def _kernels(cls) -> set[str] | None:
    """Kernels a solver accepts, or None when it cannot be told (then it is simply run).

    Solvers check their kernel in ``fit`` (scikit-learn style), so the only general way to ask is
    a fit on a 4-point toy problem (milliseconds); a ``ValueError`` that names the rejected kernel
    ("kernel must be 'linear', got 'rbf'") means no.
    """
    try:
        params = cls().get_params(deep=False)
    except Exception:  # a solver that needs arguments: let the run say what is wrong
        return None
    if "kernel" not in params:
        return None
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.1, 0.0], [0.9, 1.0]])
    y = np.array([0, 1, -1, -1])
    accepted = set()
    for kernel in ("rbf", "linear"):
        est = cls().set_params(kernel=kernel, **({"r": 0.5} if "r" in params else {}))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, y)
        except ValueError as exc:
            if "kernel" in str(exc) and repr(kernel) in str(exc):
                continue
        except Exception:  # noqa: BLE001 - any other failure is not a kernel incompatibility
            pass
        accepted.add(kernel)
    return accepted


# ------------------------------------------------------------------------ the quality table
#: Relative tolerance under which two protocol objectives count as equal for ranking: solvers
#: that reach the same labeling get the same L2-SVM objective up to the Newton solver's precision.
RANK_RTOL = 1e-6
#: Per-run time limit inside the quality table (seconds): a hung solver is recorded as a failure
#: instead of taking the whole ``setup_cache`` (and every track benchmark) down with it.
RUN_LIMIT = 300


class _RunTimeout(Exception):
    pass


def _with_limit(seconds, func, *args):
    """``func(*args)`` under a SIGALRM time limit (asv runs benchmarks in a process's main thread)."""
    import signal

    if not hasattr(signal, "SIGALRM"):
        return func(*args)

    def alarm(signum, frame):  # noqa: ARG001 - signal handler signature
        raise _RunTimeout(f"exceeded the {seconds} s limit of one quality-table run")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(int(seconds))
    try:
        return func(*args)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def reference_optimum(problem: Problem) -> tuple[float | None, bool]:
    """The stored branch-and-bound objective of the problem (mean over its binary problems).

    Returns ``(objective, certified)``; ``(None, False)`` when the problem has no reference set or
    an entry is missing or stale (digest mismatch: data, split or settings changed).
    """
    if problem.reference_set is None:
        return None, False
    optima = project("harness.optima")
    store = optima.load_store(problem.reference_set)
    entries = [optima.lookup(b, store) for b in
               optima.binary_problems(problem.reference_set, problem.ds, problem.split, problem.settings)]
    if not entries or any(e is None for e in entries):
        return None, False
    return float(np.mean([e["objective"] for e in entries])), all(e["certified"] for e in entries)


def quality_table() -> dict:
    """Run every solver once on every problem of the profile; objectives, errors, ratios, ranks.

    This is the once-per-benchmark-run computation behind the ``track_*`` benchmarks (asv's
    ``setup_cache``): each (solver, problem) is fitted exactly once per commit, never inside a
    timed benchmark. The reference of the objective ratio is the certified branch-and-bound
    optimum when the stored one is certified; otherwise the best objective known -- the lowest of
    the solvers' objectives and of the stored (uncertified) branch-and-bound labeling.

    Returns
    -------
    dict
        ``{"runs": {(solver, problem): row}, "problems": {problem: info}}``; a row has
        ``status`` ("done", "skipped", "failed"), ``objective``, ``unlabeled_error``, ``seconds``,
        ``ratio``, ``rank`` and ``error``/``reason`` text.
    """
    runs, problems = {}, {}
    for pname in problem_names():
        problem = None
        for sname in solver_names():
            try:  # a solver that cannot even be loaded fails alone, below
                reason = skip_reason(sname, pname)
                if reason is not None:
                    runs[(sname, pname)] = {"status": "skipped", "reason": reason}
                    continue
                problem = problem or load_problem(pname)
                cls = solvers.get_solver(sname)
                t0 = time.perf_counter()
                res = _with_limit(RUN_LIMIT, run_split, cls, {}, problem.ds, problem.split, problem.settings)
                runs[(sname, pname)] = {
                    "status": "done", "seconds": time.perf_counter() - t0,
                    "objective": float(res.objective) if has_objective(cls) else math.nan,
                    "unlabeled_error": float(res.unlabeled_error)}
            except Exception as exc:  # noqa: BLE001 - recorded; the track benchmarks report it
                runs[(sname, pname)] = {"status": "failed", "error": "".join(
                    traceback.format_exception_only(type(exc), exc)).strip()}
        problems[pname] = _rank_problem(pname, problem, runs)
    return {"runs": runs, "problems": problems}


def _rank_problem(pname: str, problem: Problem | None, runs: dict) -> dict:
    mine = {s: r for (s, p), r in runs.items() if p == pname and r["status"] == "done"
            and np.isfinite(r["objective"])}
    optimum, certified = reference_optimum(problem) if problem is not None else (None, False)
    best_solver = min((r["objective"] for r in mine.values()), default=None)
    if optimum is not None and certified:
        reference, kind = optimum, "certified optimum (branch and bound)"
    else:
        known = [v for v in (optimum, best_solver) if v is not None]
        reference = min(known) if known else None
        kind = ("best known: stored branch-and-bound labeling (not certified)"
                if optimum is not None and reference == optimum else "best objective any solver reached")
    for r in mine.values():
        r["ratio"] = r["objective"] / reference
        r["rank"] = 1 + sum(o["objective"] < r["objective"] * (1 - RANK_RTOL) for o in mine.values())
    return {"reference": reference, "reference_kind": kind, "optimum": optimum, "certified": certified,
            "n_ranked": len(mine)}
