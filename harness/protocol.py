"""The common protocol of JMLR 2008 Sec. 5.2, applied to any registered solver.

For every split and every binary problem (one-versus-rest beyond two classes):

1. r is the true positive fraction of the unlabeled points (``r_mode="exact"``, the Table 8
   setting) or is estimated from the labeled points (``"estimated"``, Sec. 5.4.5, Table 13);
2. the solver is trained on labeled + unlabeled points with the same kernel, C and C* as every
   other solver; solvers that enforce the mean-output constraint (eq. 12) are wrapped in the
   dichotomic search on r~ (Sec. 4) so that exactly round(u r) unlabeled outputs are positive;
3. the unlabeled points are labeled by the sign of the outputs, a standard L2-SVM (p = 2, C on
   labeled and C* on unlabeled losses) is trained on the completed set and *its* primal
   objective (eq. 1) is the objective reported -- the solver's own number is never used;
4. unlabeled (and test) error come from the outputs: the sign for two classes, the argmax of
   the binary outputs otherwise; the reported objective is the mean of the binary ones.
"""

from __future__ import annotations

import functools
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

from s3vm_bench import did_you_mean
from s3vm_bench.data_registry import Dataset, Split, derive_seed
from s3vm_bench.solvers.batch import run_together
from s3vm_bench.solvers.numerics import (SEARCH_MAX_ITER, SEARCH_XTOL, check_positive, check_r, dichotomic_search,
                                         estimate_r, exact_r, gaussian_kernel, kernel_newton, l2svm_mfn, linear_kernel,
                                         n_positive, threshold_shift, threshold_to_count)

__all__ = ["JMLR2008_TABLE5", "PROTOCOL_PARAMS", "ProtocolSettings", "check_solver_params", "BinaryResult",
           "SplitResult", "protocol_objective", "run_split", "fit_binary_problems", "break_ties"]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1

#: (sigma, C) per data set, JMLR 2008 Table 5 (C* = C unless an experiment says otherwise).
JMLR2008_TABLE5 = {"g50c": (38.0, 19.0), "text": (3.5, 31.0), "uspst": (7.4, 38.0), "isolet": (15.0, 43.0),
                   "coil20": (2900.0, 37.0), "coil3": (3000.0, 100.0), "2moons": (0.5, 10.0)}


@dataclass(frozen=True)
class ProtocolSettings:
    """Kernel and costs shared by every solver of a comparison, and the balance setting."""

    kernel: str = "rbf"
    sigma: float = 1.0
    C: float = 1.0
    C_star: float | None = None  # None: C* = C (JMLR 2008 Sec. 5.2)
    r_mode: str = "exact"

    def __post_init__(self):
        if self.kernel not in ("rbf", "linear"):
            raise ValueError(f"kernel must be 'rbf' or 'linear', got {self.kernel!r}")
        if self.kernel == "rbf":
            check_positive(self.sigma, "sigma")
        check_positive(self.C, "C")
        if self.C_star is not None:
            check_positive(self.C_star, "C_star")
        if self.r_mode not in ("exact", "estimated"):
            raise ValueError(f"r_mode must be 'exact' or 'estimated', got {self.r_mode!r}")

    @property
    def c_star(self) -> float:
        return self.C if self.C_star is None else self.C_star

    @classmethod
    def for_dataset(cls, name: str, **overrides) -> "ProtocolSettings":
        """JMLR 2008 Table 5 values for ``name`` (Gaussian kernel, C* = C), with overrides."""
        if name not in JMLR2008_TABLE5 and not {"sigma", "C"} <= overrides.keys():
            raise ValueError(f"JMLR 2008 Table 5 has no hyperparameters for {name!r} (its data sets: "
                             f"{', '.join(JMLR2008_TABLE5)}); pass sigma and C.{did_you_mean(name, JMLR2008_TABLE5)}")
        sigma, C = JMLR2008_TABLE5.get(name, (None, None))
        kw = {"sigma": sigma, "C": C} | overrides
        return cls(**kw)


@dataclass
class BinaryResult:
    """One binary problem of one split."""

    label: int
    objective: float
    r: float
    n_pos_target: int
    n_pos: int
    fit_seconds: float
    n_iter: int
    stop_reason: str
    unlabeled_outputs: np.ndarray = field(repr=False)
    test_outputs: np.ndarray | None = field(repr=False, default=None)
    dichotomic_iter: int = 0
    #: For the solvers with a dichotomic search (their own, or the harness's for a ``"mean_output"``
    #: solver): whether some r~ met constraint (3) exactly (``search_exact``) and the bias shift
    #: applied otherwise (``threshold_shift``).
    search: dict = field(default_factory=dict)


@dataclass
class SplitResult:
    """Protocol outcome of one solver on one split (all binary problems)."""

    objective: float
    unlabeled_error: float
    test_error: float | None
    fit_seconds: float
    binary: list[BinaryResult]
    balance_exact: bool


def _gram(X, settings: ProtocolSettings):
    return linear_kernel(X) if settings.kernel == "linear" else gaussian_kernel(X, sigma=settings.sigma)


def protocol_objective(X_lab, y_lab_pm, X_unl, unl_outputs, settings: ProtocolSettings, gram=None) -> float:
    """JMLR 2008 Sec. 5.2 "Objective value": the L2-SVM objective on the completed label set.

    Unlabeled points get ``sign(output)`` (0 counts as negative, as in ``predict``); a standard
    SVM with p = 2 and costs C (labeled) / C* (unlabeled) is trained on all points and its primal
    objective, eq. (1), is returned.

    Parameters
    ----------
    gram : ndarray, optional
        The kernel matrix of ``[X_lab; X_unl]`` if already computed (rbf kernel).

    Raises
    ------
    ValueError
        ``unl_outputs`` are not one finite number per row of ``X_unl`` (NaN would silently count
        as negative), ``y_lab_pm`` is not one -1/+1 label per row of ``X_lab``, or ``gram`` does
        not match the points.
    """
    unl_outputs = np.asarray(unl_outputs, dtype=float)
    if unl_outputs.shape != (X_unl.shape[0],):
        raise ValueError(f"unl_outputs must hold one output per unlabeled point, shape ({X_unl.shape[0]},), got "
                         f"shape {unl_outputs.shape}")
    if not np.all(np.isfinite(unl_outputs)):
        raise ValueError("unl_outputs contain NaN or inf: the fit that produced them failed and has no objective")
    y_lab_pm = np.asarray(y_lab_pm, dtype=float)
    if y_lab_pm.shape != (X_lab.shape[0],) or np.any((y_lab_pm != 1.0) & (y_lab_pm != -1.0)):
        raise ValueError(f"y_lab_pm must hold one label, -1 or +1, per labeled point (shape ({X_lab.shape[0]},)); "
                         f"got shape {y_lab_pm.shape} with values {np.unique(y_lab_pm)[:5].tolist()}")
    y_unl = np.where(unl_outputs > 0, 1.0, -1.0)
    y = np.r_[y_lab_pm, y_unl]
    cost = np.r_[np.full(len(y_lab_pm), settings.C), np.full(y_unl.size, settings.c_star)]
    if settings.kernel == "linear":
        Xall = sp.vstack([X_lab, X_unl]).tocsr() if sp.issparse(X_lab) else np.vstack([X_lab, X_unl])
        return float(l2svm_mfn(Xall, y, cost, lam=1.0, bias="free").objective)
    if gram is None:
        Xall = sp.vstack([X_lab, X_unl]).tocsr() if sp.issparse(X_lab) else np.vstack([X_lab, X_unl])
        gram = _gram(Xall, settings)
    elif np.shape(gram) != (y.size, y.size):
        raise ValueError(f"gram must be the ({y.size}, {y.size}) kernel matrix of [X_lab; X_unl], got shape "
                         f"{np.shape(gram)}")
    return float(kernel_newton(gram, y, cost).objective)


def _estimator_for(solver_cls, settings: ProtocolSettings, params: dict):
    """Instantiate a solver with the shared settings it accepts plus its own ``params``."""
    est = solver_cls(**params)
    names = est.get_params(deep=False)
    shared = {"kernel": settings.kernel, "sigma": settings.sigma, "C": settings.C, "C_star": settings.c_star}
    est.set_params(**{k: v for k, v in shared.items() if k in names and k not in params})
    return est


def _outputs(est, X) -> np.ndarray:
    """Real-valued outputs of a fitted binary estimator on ``X``, positive for class 1.

    ``decision_function`` where the estimator has one; else ``predict_proba(X)[:, 1] - 1/2``;
    else ``predict`` as +1 / -1. The harness asks nothing more of a solver than scikit-learn's
    contract. ValueError if they are not one number per point (e.g. a 2-D ``decision_function``:
    a classifier that took the unlabeled points' -1 for a class of its own).
    """
    if hasattr(est, "decision_function"):
        method, out = "decision_function", np.asarray(est.decision_function(X), dtype=float)
    elif hasattr(est, "predict_proba"):
        proba = np.asarray(est.predict_proba(X), dtype=float)
        if proba.ndim != 2 or proba.shape[1] != 2:
            raise ValueError(f"{type(est).__name__}.predict_proba gave shape {proba.shape}: a binary problem needs "
                             "two columns; the solver must read y == -1 as unlabeled, not as a class of its own")
        method, out = "predict_proba", proba[:, list(est.classes_).index(1)] - 0.5
    else:
        method, out = "predict", np.where(np.asarray(est.predict(X)) == 1, 1.0, -1.0)
    if out.shape != (X.shape[0],):
        raise ValueError(f"{type(est).__name__}.{method} gave shape {out.shape} on {X.shape[0]} points: a binary "
                         "problem needs one output per point; the solver must read y == -1 as unlabeled, not as a "
                         "class of its own")
    return out


def _fit_binary_problem(solver_cls, params, settings, X_tr, y_tr01, n_lab, X_test, r, r_fit=None):
    """Fit one binary problem.

    ``r`` sets the protocol's balance target round(u r) over the unlabeled block; ``r_fit``, if
    given, is the ``r`` handed to the solver instead (see :func:`_reveal`).

    Returns
    -------
    (estimator, outputs on the unlabeled points, outputs on the test points or None, seconds,
    dichotomic iterations, search notes (:attr:`BinaryResult.search`))
    """
    u = X_tr.shape[0] - n_lab
    target = n_positive(u, r)
    base = _estimator_for(solver_cls, settings, params)
    shift, search = 0.0, None
    names = base.get_params(deep=False)
    X_unl = X_tr[n_lab:]
    t0 = time.perf_counter()
    if getattr(base, "_internal_search", False) and "r_tilde" in names:
        # The solver runs the same dichotomic search inside fit (r_tilde=None), reusing its
        # per-fit preparation (centered kernel, feature map) for every r~.
        est = base.set_params(r=r)  # r_tilde left as given (None: search)
        est.fit(X_tr, y_tr01)
        unl_out = _outputs(est, X_unl)
        d_iter = int(sum(f.info.get("dichotomic_iter", 0) for f in est.binary_fits_))
    elif getattr(base, "balance", None) == "mean_output" and "r_tilde" in names:
        def solve(r_tilde):
            est = clone(base).set_params(r_tilde=r_tilde)
            if "r" in names:
                est.set_params(r=r)
            est.fit(X_tr, y_tr01)
            return _outputs(est, X_unl), est

        # The search of the solvers that run it themselves (solvers._mean_output), with the same
        # settings; when the count jumps over round(u r) between two r~ closer than SEARCH_XTOL,
        # the closest solution's threshold is shifted, on the test outputs too.
        res = dichotomic_search(solve, target, r0=r, max_iter=SEARCH_MAX_ITER, xtol=SEARCH_XTOL)
        est, unl_out, d_iter = res.payload, res.outputs, res.n_iter
        shift = 0.0 if res.exact else threshold_shift(unl_out, target)
        search = {"search_exact": bool(res.exact), "threshold_shift": float(shift)}
    else:
        est = base
        if "r" in names:
            est.set_params(r=r if r_fit is None else r_fit)
        est.fit(X_tr, y_tr01)
        unl_out, d_iter = _outputs(est, X_unl), 0
    seconds = time.perf_counter() - t0
    test_out = _outputs(est, X_test) if X_test is not None else None
    for name, out in (("unlabeled", unl_out), ("test", test_out)):
        if out is not None and not np.all(np.isfinite(out)):
            raise ValueError(f"{type(base).__name__} returned NaN or infinite outputs on the {name} points: "
                             "the fit failed (a cell with such outputs is recorded as failed, not scored)")
    if getattr(base, "balance", None) == "threshold":
        # Combinatorial solvers balance their internal labels; the protocol's predictions use the
        # outputs, so the same bias shift makes exactly round(u r) of them positive (DESIGN.md
        # pitfall 1).
        shift = threshold_shift(unl_out, target)
    if shift or getattr(base, "balance", None) == "threshold":
        # The shift moves the test outputs too: one threshold for every prediction.
        unl_out = np.asarray(unl_out, dtype=float) - shift
        test_out = None if test_out is None else np.asarray(test_out, dtype=float) - shift
    unl_out = np.asarray(unl_out, dtype=float)
    if getattr(base, "balance", None) in ("threshold", "mean_output"):
        unl_out = break_ties(unl_out, target, type(base).__name__)
    return est, unl_out, test_out, seconds, d_iter, (_search_notes(est) if search is None else search)


def break_ties(outputs, k: int, solver: str = "the solver") -> np.ndarray:
    """``outputs`` with exactly ``k`` positives when equal outputs straddle the threshold.

    A shift of the threshold (:func:`threshold_shift`, the dichotomic search) cannot separate
    equal outputs: on degenerate data (a constant kernel, all points far apart at this sigma, a
    solver whose outputs collapse to one value) the count would miss round(u r). Constraint (3)
    is then met as :func:`threshold_to_count` meets it -- the ``k`` largest outputs positive, equal
    ones taken in the order of the unlabeled points -- and only the outputs on the wrong side of 0
    are moved, to the smallest positive float or to 0. Outputs whose count is already ``k`` are
    returned as they are. A ``RuntimeWarning`` says when ties were broken.
    """
    o = np.asarray(outputs, dtype=float)
    if int(np.sum(o > 0)) == k:
        return o
    labels = threshold_to_count(o, k)
    out = o.copy()
    up = (labels > 0) & (out <= 0)
    down = (labels < 0) & (out > 0)
    out[up] = np.nextafter(0.0, 1.0)
    out[down] = 0.0
    equal = np.ptp(o) == 0 if o.size else False
    warnings.warn(f"{solver}: {int(up.sum() + down.sum())} unlabeled outputs tied at the balance threshold were "
                  f"assigned by position to meet round(u r) = {k} positives"
                  + (" (all unlabeled outputs are equal: the kernel is constant or diagonal at this sigma, or the "
                     "solver collapsed)" if equal else ""), RuntimeWarning, stacklevel=3)
    return out


def _reveal(y_fit, y01, n_lab, reveal, r):
    """Give the solver the true labels of unlabeled positions ``reveal``; its r for the rest.

    The returned ``r_fit`` makes the solver's balance over the still-hidden points complete
    the revealed positives to the protocol's round(u r) over the whole unlabeled set.
    """
    y_fit = y_fit.copy()
    pos = n_lab + reveal
    y_fit[pos] = y01[pos]
    u = y01.size - n_lab
    hidden = u - reveal.size
    m = n_positive(u, r) - int(y01[pos].sum())
    if not 0 < m < hidden:
        raise ValueError(f"revealing {reveal.size} of {u} unlabeled labels leaves {m} positives for {hidden} "
                         "hidden points: lower the revealed fraction")
    return y_fit, m / hidden


def _cv5(solver_cls, params, settings, ds: Dataset, split: Split, X_all, y_all):
    """JMLR 2008 Table 8 "SVM-5cv": 5-fold CV error with every training point's true label."""
    seed = derive_seed(ds.name, "svm5cv", split.index)
    skf = StratifiedKFold(n_splits=5, shuffle=True, random_state=seed % (2**32))
    wrong, t0 = 0, time.perf_counter()
    for tr, te in skf.split(np.zeros(y_all.size), y_all):
        est = _estimator_for(solver_cls, settings, params).fit(X_all[tr], y_all[tr])
        wrong += int(np.sum(est.predict(X_all[te]) != y_all[te]))
    return SplitResult(objective=float("nan"), unlabeled_error=wrong / y_all.size, test_error=None,
                       fit_seconds=time.perf_counter() - t0, binary=[], balance_exact=True)


def run_split(solver_cls, params: dict, ds: Dataset, split: Split, settings: ProtocolSettings) -> SplitResult:
    """Run one solver on one split under the common protocol (see the module docstring).

    Raises
    ------
    TypeError
        ``solver_cls`` is not an estimator class (:func:`solvers.check_solver_class`), or ``params``,
        ``ds``, ``split`` or ``settings`` is not a dict, :class:`Dataset`, :class:`Split` or
        :class:`ProtocolSettings`.
    ValueError
        The split is not a partition of part of ``ds`` with labeled and unlabeled points.
    """
    _check_inputs(solver_cls, params, ds, split, settings)
    lab, unl = _check_split(split, ds)
    if getattr(solver_cls, "evaluation", "transductive") == "cv5":
        idx = np.r_[lab, unl]
        return _cv5(solver_cls, params, settings, ds, split, ds.X[idx], ds.y[idx])
    binaries, fit_seconds = fit_binary_problems(solver_cls, params, ds, split, settings)
    X_test, y_test = _test_set(ds, split)
    unl_err = _error(binaries, ds.y[unl], "unlabeled_outputs")
    test_err = _error(binaries, y_test, "test_outputs") if X_test is not None else None
    return SplitResult(objective=float(np.mean([b.objective for b in binaries])), unlabeled_error=unl_err,
                       test_error=test_err, fit_seconds=fit_seconds,
                       binary=binaries, balance_exact=all(b.n_pos == b.n_pos_target for b in binaries))


def _check_inputs(solver_cls, params, ds, split, settings) -> None:
    """TypeError naming the first argument of :func:`run_split` of the wrong kind."""
    from s3vm_bench.solvers import check_solver_class

    if isinstance(solver_cls, str):
        raise TypeError(f"solver_cls must be an estimator class, got the name {solver_cls!r}: pass "
                        f"s3vm_bench.solvers.get_solver({solver_cls!r})")
    check_solver_class(solver_cls, getattr(solver_cls, "__name__", repr(solver_cls)))
    for name, value, kind, hint in (("params", params, dict, "a dict of solver parameters ({} for none)"),
                                    ("ds", ds, Dataset, "a Dataset (data_registry.load_dataset)"),
                                    ("split", split, Split, "a Split (data_registry.make_splits)"),
                                    ("settings", settings, ProtocolSettings, "ProtocolSettings (e.g. .for_dataset)")):
        if not isinstance(value, kind):
            raise TypeError(f"{name} must be {hint}, got {type(value).__name__}")
    # The protocol's settings are not solver parameters (the objective is scored with the
    # settings), and a name the solver does not have is named with the ones it has.
    check_solver_params(params, solver_cls)


#: Solver parameters the protocol sets itself for every solver (JMLR 2008 Sec. 5.2: one kernel,
#: one C and C*, the balance target r): passed as a solver's own parameter they would make the
#: solver train on values other than those the protocol's objective and the stored row use.
PROTOCOL_PARAMS = ("kernel", "sigma", "C", "C_star", "r")


def check_solver_params(params, solver_cls=None) -> dict:
    """``params`` as a dict; ValueError if it sets one of :data:`PROTOCOL_PARAMS` or, with
    ``solver_cls``, a name that is not one of that estimator's parameters (``get_params``) or a
    value its ``check_params`` (:meth:`solvers.base.BaseS3VM.check_params`) refuses."""
    params = dict(params or {})
    shared = [k for k in PROTOCOL_PARAMS if k in params]
    if shared:
        raise ValueError(f"solver parameter(s) {', '.join(shared)} are the protocol's, the same for every solver "
                         "(the objective and the stored row use them): set them as protocol settings (`s3vm-bench run "
                         "--kernel/--sigma/--C/--C-star/--r-mode`, a spec's settings), not as solver parameters")
    if solver_cls is not None:
        default = _checked_call(solver_cls, f"{solver_cls.__name__}()")
        known = set(default.get_params(deep=False)) if hasattr(default, "get_params") else set(params)
        unknown = sorted(k for k in params if k not in known)
        if unknown:
            settable = sorted(known - set(PROTOCOL_PARAMS))
            raise ValueError(f"{solver_cls.__name__} has no parameter {', '.join(map(repr, unknown))}; its parameters "
                             f"are {', '.join(settable) or 'none besides the protocol settings'}")
        call = f"{solver_cls.__name__}({', '.join(f'{k}={v!r}' for k, v in params.items())})"
        estimator = _checked_call(lambda: solver_cls(**params), call)
        if callable(getattr(estimator, "check_params", None)):
            # A bad value fails here, not in every split's fit.
            _checked_call(estimator.check_params, f"{call}.check_params()")
    return params


def _checked_call(func, call: str):
    """``func()``; a ValueError or TypeError passes through, any other exception (a solver's own
    bug, e.g. in an outside solver's constructor) becomes a ValueError naming ``call`` and it."""
    try:
        return func()
    except (ValueError, TypeError):
        raise
    except Exception as exc:
        raise ValueError(f"{call} raised {type(exc).__name__}: {exc}") from None


def _check_split(split: Split, ds: Dataset):
    """``(labeled, unlabeled)`` of a split of ``ds`` that has both, its parts disjoint and in range."""
    split.check_partition(ds.X.shape[0])
    lab, unl = split.labeled, split.unlabeled
    if lab.size == 0:
        raise ValueError("the split has no labeled point")
    if unl.size == 0:
        raise ValueError("the split has an empty unlabeled set: there is nothing to transduce")
    return lab, unl


def _test_set(ds: Dataset, split: Split):
    """``(X_test, y_test)`` of a split: its test points, else the data set's own test set, else Nones."""
    test = split.test if split.test.size else None
    if test is not None:
        return ds.X[test], ds.y[test]
    if ds.X_test is not None:
        return ds.X_test, ds.y_test
    return None, None


def fit_binary_problems(solver_cls, params: dict, ds: Dataset, split: Split, settings: ProtocolSettings,
                        classes=None) -> tuple[list[BinaryResult], float]:
    """Steps 1-3 of the protocol on one split: each binary problem fitted and its objective recomputed.

    The binary problems are the one-versus-rest problems of every class (class 1 against 0 for a
    two-class data set), in class order; ``classes`` (class indices) restricts them to those, with
    the same results as in the full run (each problem is fitted on its own, or, for a solver that
    runs its one-versus-rest problems together, with identical results alone). :func:`run_split`
    fits them all and adds the errors of step 4.

    Returns
    -------
    binaries : list of BinaryResult
    fit_seconds : float
        Wall seconds of the fits (the protocol's objectives not included).
    """
    lab, unl = _check_split(split, ds)
    idx = np.r_[lab, unl]
    X_tr, y_true = ds.X[idx], ds.y[idx]
    n_lab = lab.size
    X_test = _test_set(ds, split)[0]
    all_classes = np.arange(ds.n_classes)
    problems = all_classes[1:] if ds.n_classes == 2 else all_classes
    if classes is not None:
        wanted = {int(k) for k in classes}
        unknown = sorted(wanted - {int(k) for k in problems})
        if unknown:
            raise ValueError(f"classes {unknown} are not binary problems of {ds.name} "
                             f"(its problems are the classes {[int(k) for k in problems]})")
        problems = [k for k in problems if int(k) in wanted]
    gram = _gram(X_tr, settings) if settings.kernel == "rbf" else None
    reveal = None
    if getattr(solver_cls, "evaluation", "transductive") == "reveal":
        # JMLR 2008 Table 6's intermediate solutions (harness.intermediate): the true labels of a
        # seeded share of the unlabeled points, the same points for every binary problem.
        fraction = float(params.get("fraction", 0.0))
        rng = np.random.default_rng(derive_seed(ds.name, f"reveal{fraction:.6f}", split.index))
        reveal = np.sort(rng.choice(unl.size, size=int(round(fraction * unl.size)), replace=False))
    jobs = []
    for k in problems:
        y_pm = np.where(y_true == k, 1.0, -1.0)
        y01 = np.where(y_true == k, 1, 0)
        y_fit = y01.copy()
        y_fit[n_lab:] = -1
        if len(np.unique(y01[:n_lab])) < 2:
            raise ValueError(f"class {k} of {ds.name} has no labeled point (or is the only labeled class) in "
                             f"split {split.index}; splits must label every class")
        r = exact_r(y_pm[n_lab:]) if settings.r_mode == "exact" else estimate_r(y_pm[:n_lab])
        r = check_r(r)
        r_fit = None
        if reveal is not None:
            y_fit, r_fit = _reveal(y_fit, y01, n_lab, reveal, r)
        jobs.append((k, y_pm, r, functools.partial(_fit_binary_problem, solver_cls, params, settings, X_tr, y_fit,
                                                   n_lab, X_test, r, r_fit)))
    t0 = time.perf_counter()
    if len(jobs) > 1 and getattr(solver_cls, "batched_ovr", False):
        # The one-versus-rest fits run together, their passes over the shared features gathered
        # (s3vm_bench.solvers.batch.run_together): the same results, fewer reads of the features.
        fitted = run_together([job[3] for job in jobs])
    else:
        fitted = [job[3]() for job in jobs]
    fit_seconds = time.perf_counter() - t0
    binaries = []
    for (k, y_pm, r, _), (est, unl_out, test_out, secs, d_iter, search) in zip(jobs, fitted):
        obj = protocol_objective(X_tr[:n_lab], y_pm[:n_lab], X_tr[n_lab:], unl_out, settings, gram)
        binaries.append(BinaryResult(int(k), obj, r, n_positive(unl.size, r), int(np.sum(unl_out > 0)), secs,
                                     int(np.sum(getattr(est, "n_iter_", 0))), _stop_reason_text(est),
                                     unl_out, test_out, d_iter, search))
    return binaries, fit_seconds


def _stop_reason_text(est) -> str:
    """A fitted estimator's ``stop_reason_`` as one text: a str as it is, a list (one per binary
    problem of a one-versus-rest fit) joined with ``;``."""
    reason = getattr(est, "stop_reason_", None)
    if reason is None:
        return ""
    if isinstance(reason, str):
        return reason
    return ";".join(str(r) for r in reason)


def _search_notes(est) -> dict:
    fits = getattr(est, "binary_fits_", None) or []
    infos = [f.info for f in fits if isinstance(f.info, dict) and "search_exact" in f.info]
    if not infos:
        return {}
    return {"search_exact": all(i["search_exact"] for i in infos),
            "threshold_shift": max(abs(i["threshold_shift"]) for i in infos)}


def _error(binaries: list[BinaryResult], y, attr: str) -> float:
    F = np.column_stack([getattr(b, attr) for b in binaries])
    if len(binaries) == 1:
        pred = (F[:, 0] > 0).astype(int) * binaries[0].label
    else:
        pred = np.array([b.label for b in binaries])[np.argmax(F, axis=1)]
    return float(np.mean(pred != y))
