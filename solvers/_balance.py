"""Class balance: the fraction r of positive unlabeled points (JMLR 2008 eq. 3).

* :func:`exact_r` and :func:`estimate_r` -- the two settings of the common protocol: r is the
  true positive fraction of the unlabeled set (JMLR 2008 Sec. 5.2, the Table 8 setting) or is
  estimated from the labeled set (Sec. 5.4.5, the Table 13 setting).
* :func:`n_positive` -- the target count round(u r).
* :func:`threshold_to_count` -- labels with exactly that many positives, by ranking the outputs
  (how combinatorial solvers initialize and how S3VM-light keeps eq. 3 exact).
* :func:`dichotomic_search` -- the bisection of JMLR 2008 Sec. 4 on the threshold r~ of the
  mean-output constraint (eq. 12) until exactly round(u r) outputs are positive.
* :func:`balance_root` -- the multiplier nu of the balance constraint of deterministic / mean
  field annealing (SIGIR 2006 eqs. 9 and 15, Table 6; ICML 2006 eq. 8): the root of the
  monotone equation ``mean_j 1/(1 + exp((g_j - nu)/T)) = r``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.special import expit

from ._validation import _is_int, _is_real

__all__ = ["exact_r", "estimate_r", "n_positive", "check_r", "threshold_to_count", "threshold_shift",
           "dichotomic_search", "DichotomicResult", "SEARCH_MAX_ITER", "SEARCH_XTOL", "balance_root", "BalanceRoot",
           "balance_probabilities"]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1


def _check_count(k, name: str) -> int:
    """``k`` as an int if it is a Python or NumPy integer (not a bool) >= 0, else TypeError / ValueError."""
    if not _is_int(k):
        raise TypeError(f"{name} must be an int >= 0 (a number of points), got {k!r}")
    if k < 0:
        raise ValueError(f"{name} must be an int >= 0 (a number of points), got {k!r}")
    return int(k)


def _check_pm_labels(y, what: str) -> np.ndarray:
    """``y`` as a 1-D float array if every entry is -1 or +1, else ValueError naming what was found."""
    try:
        y = np.asarray(y, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be numbers, each -1 or +1, got {str(y)[:80]}") from None
    if y.ndim != 1:
        raise ValueError(f"{what} must be a 1-D vector, each -1 or +1, got shape {y.shape}")
    bad = (y != 1.0) & (y != -1.0)
    if np.any(bad):
        raise ValueError(f"{what} must each be -1 or +1, got {float(y[bad][0])!r}: map class indices with "
                         "np.where(y == 1, 1.0, -1.0) and leave the unlabeled points out")
    return y


def _check_outputs(outputs) -> np.ndarray:
    """``outputs`` raveled to a 1-D float array if they are all finite, else ValueError."""
    o = np.asarray(outputs, dtype=float).ravel()
    if not np.all(np.isfinite(o)):
        raise ValueError("outputs contain NaN or inf: they cannot be ranked (the fit that produced them failed)")
    return o


def check_r(r) -> float:
    """Validate a class ratio: a finite float strictly between 0 and 1."""
    try:
        r = float(r)
    except (TypeError, ValueError):
        raise TypeError(f"r must be a number in (0, 1), got {r!r}") from None
    if not (0.0 < r < 1.0):
        raise ValueError(f"r must lie strictly between 0 and 1 (a fraction of positive unlabeled points), got {r}")
    return r


def exact_r(y_unlabeled_pm) -> float:
    """True positive fraction of the unlabeled points (labels in {-1, +1}; ValueError otherwise)."""
    y = _check_pm_labels(y_unlabeled_pm, "the unlabeled points' labels")
    if y.size == 0:
        raise ValueError("the unlabeled set is empty: r is undefined")
    return float(np.mean(y > 0))


def estimate_r(y_labeled_pm) -> float:
    """r = (mean(y_labeled) + 1) / 2 (JMLR 2008 Sec. 5.4.5); labels in {-1, +1} (ValueError otherwise)."""
    y = _check_pm_labels(y_labeled_pm, "the labeled points' labels")
    if y.size == 0:
        raise ValueError("no labeled point: r cannot be estimated")
    return float(0.5 * (y.mean() + 1.0))


def n_positive(u: int, r: float) -> int:
    """round(u r), the number of unlabeled points constraint (3) makes positive.

    Python's round-half-to-even is avoided so that u r = k + 1/2 always rounds up. ``u`` is an
    int >= 0 and ``r`` a fraction in [0, 1] (TypeError / ValueError otherwise).
    """
    _check_count(u, "u")  # the product below uses u as given: its numpy type decides the precision, as before
    if not _is_real(r):
        raise TypeError(f"r must be a number in [0, 1], got {r!r}")
    if not 0.0 <= r <= 1.0:
        raise ValueError(f"r must be a fraction in [0, 1], got {r!r}")
    return int(np.floor(u * r + 0.5))


def threshold_to_count(outputs, k: int) -> np.ndarray:
    """Labels in {-1, +1} with exactly ``k`` positives: the ``k`` largest outputs.

    Ties are broken by position (stable sort), so the result is deterministic.
    """
    o = _check_outputs(outputs)
    k = _check_count(k, "k")
    if k > o.size:
        raise ValueError(f"cannot make {k} of {o.size} outputs positive")
    labels = -np.ones(o.size)
    order = np.argsort(-o, kind="stable")
    labels[order[:k]] = 1.0
    return labels


def threshold_shift(outputs, k: int) -> float:
    """The constant ``t`` closest to 0 such that exactly ``k`` of ``outputs - t`` are > 0.

    Any ``t`` in ``[o_(k+1), o_(k))`` (outputs sorted in decreasing order) gives exactly ``k``
    positives; the one closest to 0 moves the model's bias the least, so when sign(f) already
    meets the balance constraint (3) nothing changes, and otherwise the decision boundary moves
    only as far as needed (a midpoint would jump across a whole low-density gap and shift every
    test output with it). When ``o_(k)`` and ``o_(k+1)`` are tied no shift can separate them;
    the count then misses by the size of the tie, which the caller sees.
    """
    o = np.sort(_check_outputs(outputs))[::-1]
    k = _check_count(k, "k")
    if k > o.size:
        raise ValueError(f"cannot make {k} of {o.size} outputs positive")
    lower = o[k] if k < o.size else -np.inf      # t >= lower: the (k+1)-th output is not positive
    upper = o[k - 1] if k > 0 else np.inf        # t < upper: the k-th output stays positive
    if lower <= 0.0 < upper:
        return 0.0
    # Otherwise the admissible t closest to 0 is an end of the interval; step inside it by a
    # hair (1e-9 relative, at most half the gap) so that the (k+1)-th output does not sit at
    # exactly 0 once t is folded into a bias, where rounding could make it positive again.
    gap = upper - lower if np.isfinite(lower) and np.isfinite(upper) else 1.0
    if 0.0 < lower:
        return float(lower + min(1e-9 * max(1.0, abs(lower)), 0.5 * gap))
    return float(upper - min(1e-9 * max(1.0, abs(upper)), 0.5 * gap))


#: The protocol's dichotomic search on r~ (JMLR 2008 Sec. 4), the same whether a solver runs it
#: itself or the harness runs it for the solver: solves at most, and the bracket width in r~ at which
#: it stops without an exact count (the caller then shifts the threshold, :func:`threshold_shift`).
SEARCH_MAX_ITER = 30
SEARCH_XTOL = 1e-4


@dataclass(frozen=True)
class DichotomicResult:
    """Outcome of :func:`dichotomic_search`.

    ``exact`` says whether exactly ``target`` outputs are positive; otherwise ``outputs`` are
    those of the closest r~ met and ``n_pos`` tells how close it got. ``stop`` says why the
    search ended: ``"exact"``, ``"xtol"`` (bracket narrower than ``xtol``), ``"stall"`` (the
    ``stall_halvings`` rule) or ``"max_iter"``.
    """

    r_tilde: float
    outputs: np.ndarray
    n_pos: int
    target: int
    n_iter: int
    exact: bool
    payload: object = None
    stop: str = ""


def dichotomic_search(solve: Callable[[float], tuple[np.ndarray, object]], target: int, *, r0: float,
                      max_iter: int = 40, step: float = 0.25, xtol: float = 1e-12,
                      stall_halvings: int | None = None) -> DichotomicResult:
    """Search r~ until exactly ``target`` unlabeled outputs are positive (JMLR 2008 Sec. 4).

    First the bracket is found: starting at ``r0``, r~ moves up (too few positives) or down (too
    many) by a step that doubles each time, until the count crosses the target; then the bracket
    is bisected. r~ is not confined to [0, 1]: the threshold ``b = 2 r~ - 1`` of eq. (12) must
    be able to reach outputs beyond +-1.

    With ``stall_halvings = m`` the bisection also stops, without an exact count, once ``m``
    consecutive halvings have left the counts at both ends of the bracket unchanged (each new
    midpoint gave the same count as the end it replaced) and have moved both ends: the count
    then most likely jumps over the target at one r~ (the solution path bifurcates) and further
    halvings would only narrow the bracket around that jump until ``xtol``. Halvings that move
    only one end with its count unchanged (a range of r~ where the count is flat, e.g. 0
    positives far below the target) do not stop it. The caller then applies the same threshold
    shift (:func:`threshold_shift`) to the closest solution as after a search that ran to
    ``xtol``.

    Parameters
    ----------
    solve : callable
        ``solve(r_tilde) -> (unlabeled_outputs, payload)``: trains the continuous S3VM under the
        mean-output constraint (eq. 12) with threshold ``r_tilde`` (so ``b = 2 r_tilde - 1`` after
        centering, eq. 13). A larger r~ raises the outputs, so the positive count is
        non-decreasing in r~ (up to the solver's non-convexity, which bisection tolerates).
    target : int
        round(u r).
    r0 : float
        First r~ tried (the true or estimated r, as in the paper).
    max_iter : int
        Solves at most; the search also stops once the bracket is narrower than ``xtol``.
    step : float
        First bracketing step in r~.
    xtol : float, default=1e-12
        Width of the bracket in r~ at which bisection gives up: a non-convex solver's count can
        jump over the target as r~ moves (its solution path bifurcates), and no r~ then hits it.
    stall_halvings : int >= 1 or None, default=None
        Stop after this many consecutive halvings that changed neither end's count, among which
        each end moved at least once (so at least two; see above); None never stops for that
        reason.

    Returns
    -------
    DichotomicResult
        The exact solution, or the closest count met (``exact=False``).
    """
    target = _check_count(target, "target")
    _check_search_args(r0, max_iter, step, xtol)
    _check_stall_halvings(stall_halvings)
    best = None
    lo = hi = None  # r~ known to give too few / too many positives
    n_lo = n_hi = None  # their counts
    stalled = 0  # consecutive halvings that left (n_lo, n_hi) unchanged
    moved = set()  # the ends ("lo", "hi") those halvings moved
    r = float(r0)
    it = 0
    for it in range(1, max_iter + 1):
        returned = solve(r)
        if not (isinstance(returned, tuple) and len(returned) == 2):
            raise TypeError(f"solve(r_tilde) must return a pair (outputs, payload): the unlabeled outputs and what to "
                            f"keep with them (None if nothing), got {type(returned).__name__}")
        outputs, payload = returned
        outputs = np.asarray(outputs, dtype=float)
        if outputs.ndim != 1:
            raise ValueError(f"solve(r_tilde) must return 1-D outputs, one per unlabeled point, got shape "
                             f"{outputs.shape}")
        if target > outputs.size:
            raise ValueError(f"target = {target} positives asked of {outputs.size} unlabeled outputs: the target is "
                             "round(u r) over the outputs solve returns")
        count = int(np.sum(outputs > 0))
        if best is None or abs(count - target) < abs(best.n_pos - target):
            best = DichotomicResult(r, outputs, count, target, it, count == target, payload)
        if count == target:
            return DichotomicResult(r, outputs, count, target, it, True, payload, "exact")
        halving = lo is not None and hi is not None  # r was a midpoint of the bracket
        before = (n_lo, n_hi)
        if count < target:
            lo, n_lo, end = r, count, "lo"
        else:
            hi, n_hi, end = r, count, "hi"
        if lo is not None and hi is not None:
            if halving:
                if (n_lo, n_hi) == before:
                    stalled += 1
                    moved.add(end)
                else:
                    stalled, moved = 0, set()
            if hi - lo < xtol:
                stop = "xtol"
                break
            if stall_halvings is not None and stalled >= stall_halvings and len(moved) == 2:
                stop = "stall"
                break
            r = 0.5 * (lo + hi)
        else:  # still bracketing: move further in the needed direction
            r = r + step if hi is None else r - step
            step *= 2.0
    else:
        stop = "max_iter"
    return DichotomicResult(best.r_tilde, best.outputs, best.n_pos, target, it, False, best.payload, stop)


def _check_search_args(r0, max_iter, step, xtol):
    """ValueError / TypeError unless :func:`dichotomic_search`'s ``r0`` is finite, ``max_iter`` an
    int >= 1, ``step`` finite > 0 and ``xtol`` finite >= 0."""
    for name, value in (("r0", r0), ("step", step), ("xtol", xtol)):
        if not _is_real(value):
            raise TypeError(f"{name} must be a real number, got {value!r}")
        if not np.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value!r}")
    if not _is_int(max_iter):
        raise TypeError(f"max_iter must be an int >= 1 (solves at most), got {max_iter!r}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be an int >= 1 (solves at most), got {max_iter!r}")
    if step <= 0:
        raise ValueError(f"step must be > 0 (the first bracketing step in r~), got {step!r}")
    if xtol < 0:
        raise ValueError(f"xtol must be >= 0, got {xtol!r}")


def _check_stall_halvings(stall_halvings):
    """ValueError unless ``stall_halvings`` is None or an int >= 1 (:func:`dichotomic_search`)."""
    if stall_halvings is not None and (not _is_int(stall_halvings) or stall_halvings < 1):
        raise ValueError(f"stall_halvings must be an int >= 1 or None, got {stall_halvings!r}")


@dataclass(frozen=True)
class BalanceRoot:
    """Outcome of :func:`balance_root`.

    ``p`` are the probabilities at the root, ``residual`` is ``mean(p) - r`` as computed from the
    returned ``p``, ``n_iter`` the Newton/bisection steps and ``method`` how the last step was
    taken (``"newton"``, ``"bisection"``, or ``"interpolation"`` when the root fell between two
    adjacent floats, see :func:`balance_root`).
    """

    nu: float
    p: np.ndarray
    residual: float
    n_iter: int
    method: str


def _balance_p(g, nu, T):
    # p_j = 1 / (1 + exp((g_j - nu) / T)), evaluated without overflow (SIGIR 2006 eq. 15).
    return expit((nu - g) / T)


def balance_probabilities(g, nu, T) -> np.ndarray:
    """The probabilities ``p_j = 1 / (1 + exp((g_j - nu) / T))`` of mean field annealing (SIGIR 2006 eq. 15).

    Parameters
    ----------
    g : array_like, shape (u,)
        Finite reals (see :func:`balance_root`).
    nu : float
        The balance multiplier, finite.
    T : float
        Temperature, > 0 and finite.

    Returns
    -------
    p : ndarray, shape (u,)
        Evaluated without overflow; ``mean(p)`` is increasing in ``nu``.

    Raises
    ------
    TypeError
        ``nu`` or ``T`` is not a number.
    ValueError
        ``g`` or ``nu`` not finite, ``T`` <= 0 or not finite.
    """
    g = np.asarray(g, dtype=float).ravel()
    if not np.all(np.isfinite(g)):
        raise ValueError("g contains NaN or inf")
    if not _is_real(nu):
        raise TypeError(f"nu must be a number, got {nu!r}")
    nu = float(nu)
    if not np.isfinite(nu):
        raise ValueError(f"nu must be finite, got {nu!r}")
    return _balance_p(g, nu, _check_temperature(T))


def balance_root(g, T: float, r: float, *, tol: float = 1e-12, max_iter: int = 500) -> BalanceRoot:
    """Root nu of the balance equation of mean field annealing (SIGIR 2006 Sec. 3.2.2, Table 6).

    Solves ``B(nu) = (1/u) sum_j 1/(1 + exp((g_j - nu)/T)) - r = 0``: the probabilities
    ``p_j = 1/(1 + exp((g_j - nu)/T))`` minimize the p-part of SIGIR eq. (8) under the balance
    constraint (9) (``nu`` here is the paper's ``2 nu``). B is continuous and increasing from
    ``-r`` to ``1 - r``, so the root is unique; it is bracketed by (Table 6)
    ``nu_- = min(g) - T log((1-r)/r)`` and ``nu_+ = max(g) - T log((1-r)/r)`` (at nu_- every
    p_j <= r, at nu_+ every p_j >= r).

    Method: Newton-Raphson from the midpoint, with a bisection step whenever the Newton iterate
    leaves the current bracket or B' vanishes; the bracket shrinks on every step (Table 6).
    It stops once ``|B(nu)| <= tol``. When T is tiny B is close to a step function and no
    float nu may reach the tolerance: the bracket then closes to adjacent floats, and p is
    interpolated linearly between the two endpoints' p (B is linear in p), which is exact for
    the balance equation and keeps p monotone in g -- the p of a real nu between those floats
    up to the curvature of the logistic over one ulp.

    Parameters
    ----------
    g : array_like, shape (u,)
        ``g_j = lam' (max(0, 1 - o_j)^2 - max(0, 1 + o_j)^2)`` (SIGIR 2006 Table 6), any reals.
    T : float
        Temperature, > 0.
    r : float
        Target mean of p, in (0, 1).
    tol : float, default=1e-12
        Tolerance on ``|B(nu)|``.
    max_iter : int, default=500
        Steps at most (Table 6's maxiter).

    Returns
    -------
    BalanceRoot
    """
    g, T, r = _check_balance_args(g, T, r)
    u = g.size
    shift = T * np.log((1.0 - r) / r)
    lo, hi = float(g.min() - shift), float(g.max() - shift)

    def evaluate(nu):
        p = _balance_p(g, nu, T)
        B = float(np.mean(p)) - r
        dB = float(np.dot(p, 1.0 - p)) / (T * u)  # B'(nu) = (1/(T u)) sum p (1 - p)
        return p, B, dB

    nu = 0.5 * (lo + hi)
    p, B, dB = evaluate(nu)
    method, it = "newton", 0
    while abs(B) > tol and it < max_iter:
        it += 1
        if B < 0:
            lo = nu
        else:
            hi = nu
        step_ok = dB > 0.0
        if step_ok:
            cand = nu - B / dB
            step_ok = lo < cand < hi
        if step_ok:
            nu, method = cand, "newton"
        else:
            mid = 0.5 * (lo + hi)
            if not lo < mid < hi:  # the bracket is two adjacent floats
                break
            nu, method = mid, "bisection"
        p, B, dB = evaluate(nu)
    if abs(B) > tol:
        interpolated = _sub_ulp_root(g, T, r, lo, hi)
        if interpolated is not None:
            nu, p, B = interpolated
            method = "interpolation"
    return BalanceRoot(float(nu), p, B, it, method)


def _check_balance_args(g, T, r):
    """Validated ``(g, T, r)`` of :func:`balance_root`: g a non-empty finite vector, T > 0, r in (0, 1)."""
    g = np.asarray(g, dtype=float).ravel()
    if g.size == 0:
        raise ValueError("g is empty: there are no unlabeled points")
    if not np.all(np.isfinite(g)):
        raise ValueError("g contains NaN or inf")
    return g, _check_temperature(T), check_r(r)


def _check_temperature(T) -> float:
    """``T`` as a float if it is > 0 and finite, else ValueError."""
    if not _is_real(T):
        raise TypeError(f"T must be a number > 0 (the temperature), got {T!r}")
    T = float(T)
    if not (np.isfinite(T) and T > 0):
        raise ValueError(f"T must be > 0 and finite, got {T!r}")
    return T


def _sub_ulp_root(g, T, r, lo, hi):
    """``(nu, p, B)`` of a root between the adjacent floats ``lo < hi`` that bracket it, by linear
    interpolation of p between the ends (B is linear in p; see :func:`balance_root`), or None if
    they do not bracket it."""
    p_lo, p_hi = _balance_p(g, lo, T), _balance_p(g, hi, T)
    B_lo, B_hi = float(np.mean(p_lo)) - r, float(np.mean(p_hi)) - r
    if not (B_hi > B_lo and B_lo <= 0.0 <= B_hi):
        return None
    theta = -B_lo / (B_hi - B_lo)
    p = p_lo + theta * (p_hi - p_lo)
    return lo + theta * (hi - lo), p, float(np.mean(p)) - r
