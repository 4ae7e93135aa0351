"""nabla-S3VM (``grad_s3vm``): gradient descent on the smoothed S3VM objective (14).

Chapelle & Zien 2005; Chapelle, Sindhwani, Keerthi, JMLR 2008, Sec. 4.2, eq. (14), Fig. 5::

    min_w  1/2 ||w||^2 + C sum_lab max(0, 1 - y_i (w . z_i + b))^2 + C* sum_unl exp(-s (w . z_j + b)^2)

with s = 5 (footnote 8: the value for the quadratic hinge), in "Method 1" variables: explicit
features ``z_i`` with ``z_i . z_j = k~(x_i, x_j)``, the kernel centered on the unlabeled mean
(eq. 13) so that the bias can be fixed at ``b = 2 r~ - 1`` (eq. 12). ``kernel_map="eigh"``
(default) is the kernel-PCA map ``Z = U Lambda^{1/2}``, ``"cholesky"`` the Cholesky factor used
by Chapelle & Zien (2005) (the centered kernel is singular, so a small jitter is added, see
:func:`solvers._kernels.kernel_pca_map`). For the linear kernel z is x - mean_U x itself (sparse X
stays sparse).

Annealing (Sec. 4.2): C* takes the values ``2^(i-10) C*``, i = 1..10, each stage minimized by
L-BFGS (``scipy.optimize.minimize(method="L-BFGS-B")``; the paper says only "gradient descent")
and warm-started from the previous stage; the first starts from w = 0.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.linalg as sla
from numba import njit
from scipy.optimize import minimize

from .batch import current_group
from ._kernels import kernel_pca_map
from ._losses import SmoothedExpLoss, exp_unlabeled_loss, squared_hinge_loss
from ._mean_output import C_STAR_ANNEALING_CONSTRAINTS, MeanOutputS3VM, Solution, c_star_schedule, s3vm_objective_p2
from ._validation import Interval, Options

__all__ = ["GradS3VM", "smooth_objective", "SmoothObjective", "ExpUnlabeledLoss", "Method1Mixin"]


class ExpUnlabeledLoss:
    """Unlabeled loss of objective (14), ``exp(-s t^2)``, or its Gaussian smoothing (JMLR 2008 Alg. 5).

    Value and first derivative only (``LossEval.hess`` is None): :func:`exp_unlabeled_loss` with
    ``var=None``; with ``var`` (per unlabeled point, >= 0) the closed-form convolution of
    :class:`solvers._losses.SmoothedExpLoss`, ``exp(-s t^2 / a) / sqrt(a)``, ``a = 1 + 2 s var``.
    :class:`SmoothObjective` recognizes this class and evaluates the loss inside its one-pass
    product (:func:`_objective_pass`) with the same formulas.

    Parameters
    ----------
    s : float
        Width of ``exp(-s t^2)`` (JMLR 2008 footnote 8: 5).
    var : float or ndarray, optional
        Variance of the output noise of the smoothing, per unlabeled point.
    """

    def __init__(self, s, var=None):
        self.s = float(s)
        self.smoothed = None if var is None else SmoothedExpLoss(var, self.s)

    def __call__(self, t):
        """``LossEval`` (value, first derivative, None) at the unlabeled outputs ``t``."""
        if self.smoothed is None:
            return exp_unlabeled_loss(t, self.s, hess=False)
        return self.smoothed(t, hess=False)


@njit(cache=True, nogil=True)
def _objective_pass(Z, W, B, O, have_o, Y, unl_pos, C, C_star, s, smoothed, A, SQA, block, ACC, sums):
    """One pass over the rows of ``Z`` for objective (14) at ``m`` points: outputs, loss sums, ``Z^T d``.

    Rows are taken ``block`` at a time (a block small enough to stay in the core's cache). For
    each block and each point ``j``: its outputs ``o_i = z_i . w_j + b_j`` (BLAS ``gemv``), the loss
    derivatives ``d_i`` of eq. (14) at them, and ``ACC[j] += Z_block^T d_block`` -- so that ``Z`` is
    read from memory once per pass for all ``m`` points, not twice per point (``Z w`` then
    ``Z^T d``). Point ``j``'s results are computed by the same operations in the same order
    whatever ``m`` is and whatever the other points are (the one-versus-rest problems of a split
    evaluated together, :mod:`solvers.batch`, give the numbers they give alone). The elementwise
    formulas are those of :func:`solvers._losses.squared_hinge_loss`,
    :func:`~solvers._losses.exp_unlabeled_loss` and :class:`~solvers._losses.SmoothedExpLoss`,
    operation for operation.

    Parameters
    ----------
    Z : ndarray, shape (n, d), C-contiguous float64
    W : ndarray, shape (m, d), C-contiguous
    B : ndarray, shape (m,)
        Biases.
    O : ndarray, shape (m, n)
        Row ``j`` filled with ``Z w_j + b_j``; read instead when ``have_o[j]``.
    have_o : ndarray of bool, shape (m,)
    Y : ndarray, shape (m, n)
        Label +-1 of each labeled row for each point (unused on unlabeled rows).
    unl_pos : ndarray of int64, shape (n,)
        -1 on labeled rows, the row's position among the unlabeled rows otherwise.
    C, C_star : ndarray, shape (m,)
    s : float
    smoothed : bool
        Unlabeled loss ``exp(-s t^2 / a_j) / sqrt_a_j`` (cS3VM) instead of ``exp(-s t^2)``.
    A, SQA : ndarray, shape (m, u)
        ``1 + 2 s var`` and its square root per unlabeled point (read only when ``smoothed``).
    block : int
        Rows per block.
    ACC : ndarray, shape (m, d)
        Row ``j`` set to ``Z^T d`` at point ``j``.
    sums : ndarray, shape (m, 2)
        Row ``j`` set to ``sum_lab max(0, 1 - y_i o_i)^2`` and the sum of the unlabeled loss.
    """
    n = Z.shape[0]
    m = W.shape[0]
    ACC[:, :] = 0.0
    dblk = np.empty(block)
    for j in range(m):
        sums[j, 0] = 0.0
        sums[j, 1] = 0.0
    for s0 in range(0, n, block):
        s1 = min(s0 + block, n)
        Zb = Z[s0:s1]
        for j in range(m):
            o = O[j]
            y_row = Y[j]
            Cj = C[j]
            Csj = C_star[j]
            if not have_o[j]:
                ob = np.dot(Zb, W[j])
                for k in range(s1 - s0):
                    o[s0 + k] = ob[k] + B[j]
            lab_sum = sums[j, 0]
            unl_sum = sums[j, 1]
            for k in range(s1 - s0):
                i = s0 + k
                t = o[i]
                p = unl_pos[i]
                if p < 0:
                    slack = max(1.0 - y_row[i] * t, 0.0)
                    lab_sum += slack * slack
                    dblk[k] = Cj * y_row[i] * (-2.0 * slack)
                elif smoothed:
                    e = np.exp(-s * t * t / A[j, p]) / SQA[j, p]
                    unl_sum += e
                    dblk[k] = Csj * (-2.0 * s * t / A[j, p] * e)
                else:
                    e = np.exp(-s * t * t)
                    unl_sum += e
                    dblk[k] = Csj * (-2.0 * s * t * e)
            sums[j, 0] = lab_sum
            sums[j, 1] = unl_sum
            ACC[j] += np.dot(dblk[:s1 - s0], Zb)


def _run_passes(payloads):
    """Evaluate objective (14) at the points of ``payloads`` (same ``Z``, labeled rows, ``s``,
    smoothing and block: one key of :meth:`SmoothObjective._evaluate_fused`) in one
    :func:`_objective_pass`; returns ``(lab_sum, unl_sum, outputs, Z^T d)`` per payload."""
    first = payloads[0]
    Z, unl_pos, s, smoothed, block = first["Z"], first["unl_pos"], first["s"], first["smoothed"], first["block"]
    m, (n, d) = len(payloads), Z.shape
    u = first["a"].size
    W = np.empty((m, d))
    O = np.empty((m, n))
    Y = np.empty((m, n))
    A = np.empty((m, u))
    SQA = np.empty((m, u))
    have_o = np.zeros(m, dtype=np.bool_)
    for j, p in enumerate(payloads):
        W[j] = p["w"]
        Y[j] = p["y_row"]
        A[j] = p["a"]
        SQA[j] = p["sqrt_a"]
        if p["o"] is not None:
            O[j] = p["o"]
            have_o[j] = True
    B = np.array([p["b"] for p in payloads])
    C = np.array([p["C"] for p in payloads])
    C_star = np.array([p["C_star"] for p in payloads])
    ACC = np.empty((m, d))
    sums = np.empty((m, 2))
    _objective_pass(Z, W, B, O, have_o, Y, unl_pos, C, C_star, s, smoothed, A, SQA, block, ACC, sums)
    return [(sums[j, 0], sums[j, 1], O[j], ACC[j]) for j in range(m)]


def smooth_objective(w, Z, b, y_lab, labeled, C, C_star, unlabeled_loss):
    """Objective (14) (any smooth unlabeled loss) and its gradient in w, bias fixed.

    Parameters
    ----------
    w : ndarray, shape (d,)
    Z : ndarray, sparse matrix or LinearOperator, shape (n, d)
        Features of the training points (``Z @ w`` and ``Z.T @ v`` are all that is used).
    b : float
        Fixed bias.
    y_lab : ndarray
        Labels +-1 of the labeled points.
    labeled : ndarray of bool, shape (n,)
    C, C_star : float
    unlabeled_loss : callable
        ``t -> LossEval`` of the unlabeled outputs (e.g. ``exp(-s t^2)``); only its value and
        first derivative are used.

    Returns
    -------
    value : float
    grad : ndarray, shape (d,)
    outputs : ndarray, shape (n,)
    """
    return SmoothObjective(Z, b, y_lab, labeled, C, C_star, unlabeled_loss).evaluate(w)


def _block(mask):
    """``mask``'s True positions as a slice when they are one contiguous run, else as indices."""
    idx = np.flatnonzero(mask)
    if idx.size and idx[-1] - idx[0] + 1 == idx.size:
        return slice(int(idx[0]), int(idx[-1]) + 1)
    return idx


class SmoothObjective:
    """Objective (14) at one fixed bias and C*, as :func:`smooth_objective`, for repeated calls.

    The labeled and unlabeled blocks are located once (a slice when contiguous, as in the
    protocol's labeled-first ordering), the squared hinge is evaluated without its second
    derivative, and the last :attr:`memory` evaluations are kept, so that the outputs ``Z w + b``
    at the point an L-BFGS run ends on are read back instead of being recomputed
    (:meth:`outputs_at`). Values are the same floating-point numbers as :func:`smooth_objective`
    gives.

    The outputs depend on ``w`` and ``b`` only, not on the stage: a stage of an annealing or
    smoothing sequence that starts where the previous one ended (same bias) is given that point
    and its outputs as ``known``, and its first evaluation then skips the product ``Z w``.

    When ``Z`` is a C-contiguous float64 array and the unlabeled loss an
    :class:`ExpUnlabeledLoss`, an evaluation is one pass over ``Z`` (:func:`_objective_pass`:
    ``Z w``, the loss derivatives and ``Z^T d`` block by block) instead of two matrix-vector
    products; the value and gradient are then the same up to the order of the floating-point
    sums (the products and sums are blocked differently). :attr:`fused` turns this off.

    Parameters
    ----------
    Z, b, y_lab, labeled, C, C_star, unlabeled_loss
        As for :func:`smooth_objective`.
    known : tuple (w, outputs), optional
        A point and its outputs ``Z w + b`` at this ``b``, computed before.
    """

    #: Evaluations remembered (L-BFGS may end on the last point it evaluated or the one before).
    memory = 2
    #: Use the one-pass evaluation (:func:`_objective_pass`) where it applies (see above).
    fused = True
    #: Bytes of ``Z`` per block of the one-pass evaluation (a few blocks fit a core's L2 cache).
    block_bytes = 1 << 18

    def __init__(self, Z, b, y_lab, labeled, C, C_star, unlabeled_loss, known=None):
        self.Z, self.b, self.y_lab, self.C, self.C_star = Z, float(b), y_lab, C, C_star
        self.unlabeled_loss = unlabeled_loss
        labeled = np.asarray(labeled, dtype=bool)
        self.lab = _block(labeled)
        self.unl = _block(~labeled)
        self._dense = isinstance(Z, np.ndarray)
        self._known = known
        self._seen = []
        self._pass = None
        if (self.fused and self._dense and Z.dtype == np.float64 and Z.ndim == 2 and Z.flags.c_contiguous
                and isinstance(unlabeled_loss, ExpUnlabeledLoss)):
            n, d = Z.shape
            y_row = np.zeros(n)
            y_row[labeled] = y_lab
            unl_pos = np.full(n, -1, dtype=np.int64)
            unl_pos[~labeled] = np.arange(n - int(labeled.sum()))
            sm = unlabeled_loss.smoothed
            if sm is None:
                a = sqrt_a = np.ones(0)
            else:
                u = n - int(labeled.sum())
                a = np.ascontiguousarray(np.broadcast_to(sm.a, (u,)), dtype=np.float64)
                sqrt_a = np.ascontiguousarray(np.broadcast_to(sm.sqrt_a, (u,)), dtype=np.float64)
            block = max(1, min(n, self.block_bytes // (8 * max(d, 1))))
            self._pass = dict(Z=Z, y_row=y_row, unl_pos=unl_pos, C=float(C), C_star=float(C_star),
                              s=float(unlabeled_loss.s), smoothed=sm is not None, a=a, sqrt_a=sqrt_a, block=block)
            # Evaluations of objectives with this key can share one pass over Z (solvers.batch).
            self._batch_key = (id(Z), unl_pos.tobytes(), float(unlabeled_loss.s), sm is not None, block)

    def _evaluate_fused(self, w):
        w = np.ascontiguousarray(w, dtype=np.float64)
        have_o = self._known is not None and np.array_equal(self._known[0], w)
        payload = dict(self._pass, w=w, b=self.b, o=self._known[1] if have_o else None)
        group = current_group()
        if group is None:
            lab_sum, unl_sum, o, acc = _run_passes([payload])[0]
        else:
            lab_sum, unl_sum, o, acc = group.submit(self._batch_key, payload, _run_passes)
        value = 0.5 * float(w @ w) + self.C * lab_sum + self.C_star * unl_sum
        return value, w + acc, o

    def evaluate(self, w):
        """``(value, gradient, outputs)`` of objective (14) at ``w``."""
        if self._pass is not None:
            return self._evaluate_fused(w)
        Z, C, C_star = self.Z, self.C, self.C_star
        if self._known is not None and np.array_equal(self._known[0], w):
            o = self._known[1].copy()
        else:
            o = (Z @ w if self._dense else np.asarray(Z @ w).ravel()) + self.b
        Ll = squared_hinge_loss(self.y_lab * o[self.lab], hess=False)
        Lu = self.unlabeled_loss(o[self.unl])
        value = 0.5 * float(w @ w) + C * float(np.sum(Ll.value)) + C_star * float(np.sum(Lu.value))
        d = np.empty_like(o)
        d[self.lab] = C * self.y_lab * Ll.grad
        d[self.unl] = C_star * Lu.grad
        return value, w + (Z.T @ d if self._dense else np.asarray(Z.T @ d).ravel()), o

    def __call__(self, w):
        """``(value, gradient)`` at ``w`` (the ``fun`` of ``minimize(..., jac=True)``)."""
        value, grad, o = self.evaluate(w)
        self._seen.append((np.array(w, dtype=np.float64, copy=True), value, o))
        del self._seen[:-self.memory]
        return value, grad

    def outputs_at(self, w):
        """``(value, outputs)`` at ``w``: remembered if ``w`` was among the last points evaluated."""
        for x, value, o in reversed(self._seen):
            if np.array_equal(x, w):
                return value, o
        value, _, o = self.evaluate(w)
        return value, o


class Method1Mixin:
    """JMLR 2008 Sec. 4 "Method 1" features of the centered problem, computed once per fit.

    The features depend only on the training points and the unlabeled set, so the one-versus-rest
    fits of a split share them, and run together (``batched_ovr``) their evaluations of objective
    (14) share each pass over them (:func:`_objective_pass`, :mod:`solvers.batch`).
    """

    batched_ovr = True
    #: Constraints of the parameters the Method 1 solvers add to the mean-output ones: the width
    #: ``s`` of ``exp(-s t^2)``, ``kernel_map`` and the opt-in warm search ``search_warm_stages``.
    _method1_constraints = {
        "s": [Interval(Real, 0, None, closed="neither")],
        "kernel_map": [Options({"eigh", "cholesky"})],
        "search_warm_stages": [Interval(Integral, 1, None, closed="left"), None],
    }

    def _prepare_key(self):
        return super()._prepare_key() + (self.kernel_map,)

    def _prepare(self, problem):
        """``problem.cache["Z"]`` (the features) and ``["to_coef"]`` (w -> beta, or w itself).

        After :meth:`_prepare_features` has read them, dense features are stored C-contiguous,
        the layout of the one-pass evaluation of :class:`SmoothObjective`.
        """
        if problem.linear:
            problem.cache["Z"] = problem.centered_features()
            problem.cache["to_coef"] = lambda w: w
        else:
            Z, kmap = kernel_pca_map(problem.centered_gram(), self.kernel_map)
            problem.cache["Z"] = Z
            if kmap.method == "eigh":
                basis = kmap.basis
                problem.cache["to_coef"] = lambda w: basis @ w  # K beta = Z w
            else:
                L = kmap.basis
                problem.cache["to_coef"] = lambda w: sla.solve_triangular(L.T, w, lower=False, check_finite=False)
            problem.cache.pop("Kc", None)  # only Z is needed from here on
        self._prepare_features(problem)
        Z = problem.cache["Z"]
        if isinstance(Z, np.ndarray) and Z.dtype == np.float64 and not Z.flags.c_contiguous:
            problem.cache["Z"] = np.ascontiguousarray(Z)

    def _prepare_features(self, problem):
        """Further per-fit precomputations from ``problem.cache["Z"]`` (subclasses; none here)."""

    def _lbfgs_stages(self, problem, y_pm, C, C_star, b, stages, warm=None):
        """Minimize objective (14) by L-BFGS over a sequence of stages, each warm-started.

        ``stages`` yields ``(C*_stage, unlabeled_loss, trace_fields)``; the first stage starts
        from w = 0. With ``warm`` (the :class:`Solution` of another bias, ``search_warm_stages =
        k``) only the last k stages run, the first of them from ``warm``'s w; its outputs are
        recomputed at this bias (``b = 2 r~ - 1``, eq. 12). The trace's ``s3vm_objective`` is
        eq. (5) with p = 2 at the final C*.
        """
        Z = problem.cache["Z"]
        lab = problem.labeled
        y_lab = y_pm[lab]
        gtol = float(self.tol) * max(1.0, float(self.C))
        options = dict(maxiter=int(self.max_iter), ftol=float(self.tol), gtol=gtol, maxcor=20)
        if warm is None:
            w = np.zeros(Z.shape[1])
            known = (w, np.full(Z.shape[0], float(b)))  # Z 0 + b
        else:
            stages = list(stages)[-int(self.search_warm_stages):]
            w = np.array(warm.state, dtype=np.float64, copy=True)
            known = None  # outputs at the new bias: computed by the first evaluation
        trace, n_iter, res = [], 0, None
        for cs, unl_loss, fields in stages:
            fun = SmoothObjective(Z, b, y_lab, lab, C, cs, unl_loss, known=known)
            res = minimize(fun, w, jac=True, method="L-BFGS-B", options=options)
            w = res.x
            n_iter += int(res.nit)
            v, o = fun.outputs_at(w)
            known = (w, o)
            trace.append(dict(fields, nit=int(res.nit), message=str(res.message), objective=v,
                              s3vm_objective=s3vm_objective_p2(0.5 * float(w @ w), o, y_pm, lab, C, C_star)))
        stop = "converged" if res.success else f"lbfgs: {res.message}"
        kind = "w" if problem.linear else "beta"
        return Solution(problem.cache["to_coef"](w), o, n_iter, stop, trace, kind, state=w,
                        warm_started=warm is not None)


class GradS3VM(Method1Mixin, MeanOutputS3VM):
    """nabla-S3VM (JMLR 2008 Sec. 4.2): L-BFGS on objective (14), C* annealed.

    Parameters
    ----------
    kernel, sigma, C, C_star, r, r_tilde
        As for :class:`solvers.newton.NewtonS3VM`.
    s : float, default=5.0
        Width of the unlabeled loss ``exp(-s t^2)`` (JMLR 2008 footnote 8).
    anneal_steps : int, default=10
    anneal_start : float, default=2**-9
        First C* / final C*: ``2^(i-10) C*``, i = 1..10 (Sec. 4.2).
    kernel_map : {"eigh", "cholesky"}, default="eigh"
    tol : float, default=1e-9
        L-BFGS-B ``ftol``; ``gtol = tol * max(1, C)``.
    max_iter : int, default=1000
        L-BFGS iterations per stage at most.
    search_stall_halvings : int >= 1 or None, default=None
        Opt-in early end of the dichotomic search on r~ (JMLR 2008 Sec. 4, eq. 12): once this many
        consecutive halvings of the bracket left the positive counts at both of its ends
        unchanged and moved both ends, the count is taken to jump over round(u r) and the search
        stops (:func:`~solvers._balance.dichotomic_search`); constraint
        (3) is then met by the threshold shift of the closest solution, as when the bracket
        shrinks below 1e-4 (``info["search_stop"] == "stall"``). It can stop on a worse solution
        than the full bisection, which may still meet closer counts in a narrow bracket. None
        (default) bisects down to that width.
    search_warm_stages : int >= 1 or None, default=None
        Opt-in cheaper dichotomic search on r~ (JMLR 2008 Sec. 4, eq. 12). The first r~ is
        solved with the whole annealing of Sec. 4.2 (eq. 14) from w = 0; every later r~ runs
        only the last ``search_warm_stages`` values of C* (the final C* included), starting from
        the solution w of the earlier r~ whose positive count came closest to round(u r) (the
        later one on a tie): a continuation in the bias ``b = 2 r~ - 1`` instead of a new
        annealing. The start's outputs ``Z w + b`` are recomputed at the new bias. The solution
        can differ from the default's (the annealing of the retained r~ is cut short);
        ``info["warm_started"]`` tells whether the retained solve was warm-started. None
        (default): every r~ is annealed from w = 0.

    Attributes
    ----------
    ``binary_fits_[k].info["trace"]``: per stage, C*, L-BFGS iterations and message, objective
    (14) and objective (5) with p = 2 (only the stages that ran). ``n_iter_`` counts L-BFGS
    iterations of the retained solve.

    References
    ----------
    .. [1] O. Chapelle and A. Zien. Semi-supervised classification by low density separation. In *Proc.
           AISTATS*, 2005.
    .. [2] O. Chapelle, V. Sindhwani and S. S. Keerthi. Optimization techniques for semi-supervised support
           vector machines. *Journal of Machine Learning Research*, 9:203-233, 2008.
    """

    #: 2: evaluations of objective (14) in one blocked pass over C-contiguous features
    #: (:func:`solvers.grad_s3vm._objective_pass`), which sums in another order than two products.
    result_version = 2
    _accepts_sparse = True
    _parameter_constraints: dict = {**MeanOutputS3VM._parameter_constraints, **Method1Mixin._method1_constraints,
                                    **C_STAR_ANNEALING_CONSTRAINTS}

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None, r_tilde=None, s=5.0, anneal_steps=10,
                 anneal_start=2.0 ** -9, kernel_map="eigh", tol=1e-9, max_iter=1000,
                 search_stall_halvings=None, search_warm_stages=None):
        self.kernel = kernel
        self.sigma = sigma
        self.C = C
        self.C_star = C_star
        self.r = r
        self.r_tilde = r_tilde
        self.s = s
        self.anneal_steps = anneal_steps
        self.anneal_start = anneal_start
        self.kernel_map = kernel_map
        self.tol = tol
        self.max_iter = max_iter
        self.search_stall_halvings = search_stall_halvings
        self.search_warm_stages = search_warm_stages

    def _solve(self, problem, y_pm, C, C_star, b, warm=None):
        unl_loss = ExpUnlabeledLoss(self.s)
        stages = ((cs, unl_loss, {"C_star": float(cs)})
                  for cs in c_star_schedule(C_star, self.anneal_steps, self.anneal_start))
        return self._lbfgs_stages(problem, y_pm, C, C_star, b, stages, warm)
