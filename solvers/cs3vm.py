"""Continuation S3VM (``cs3vm``): Gaussian smoothing of objective (14), gamma decreased to 0.

Chapelle, Chi, Zien 2006; Chapelle, Sindhwani, Keerthi, JMLR 2008, Sec. 4.3, Algorithm 5.

Same objective, features and fixed bias as :mod:`solvers.grad_s3vm` (eq. 14 with s = 5,
Method 1, centering eq. 13), but C* is kept at its final value and the objective is smoothed
instead: Alg. 5 convolves it with ``(pi gamma)^(-d/2) exp(-||u||^2 / gamma)`` in w. JMLR 2008
leaves open whether to smooth the whole objective or only its non-convex unlabeled term ("as in
Chapelle et al. (2006a)", the original cS3VM, smoothed the whole); we smooth the unlabeled term
only, because the other two are convex and need no smoothing to be tractable. This is a choice,
not an equivalence: smoothing the quadratic regularizer only adds a constant, but smoothing the
labeled squared hinge would change the early stages (at gamma_0 the output noise has a standard
deviation of several units, under which the squared hinge becomes nearly linear), so the path
can differ from the original's. Under that smoothing the output ``w . z_j`` is perturbed by
``N(0, gamma ||z_j||^2 / 2)``, and ``exp(-s t^2)`` convolved with a Gaussian has the closed form
of :func:`solvers._losses.smoothed_exp_unlabeled_loss`.

Schedule (ours; the paper gives none): ``gamma_0`` makes the first smoothed problem convex --
the most negative curvature of the smoothed unlabeled term, ``-2 s C* a^(-3/2)`` per point with
``a = 1 + s gamma ||z||^2``, must not exceed the regularizer's, i.e.
``2 s C* a^(-3/2) lambda_max(Z_U^T Z_U) <= 1`` with ``||z||^2`` its median over the unlabeled
points (exact when every ``||z_j||`` is equal, as for a Gaussian kernel before centering) --
then ``n_smooth`` values decreasing geometrically to the gamma at which ``s gamma ||z||^2 =
0.01`` (1% smoothing), and a last stage at gamma = 0 (Alg. 5's gamma_p = 0): the problem (14)
itself. Each stage is minimized by L-BFGS, warm-started; the first starts from w = 0.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.sparse.linalg import LinearOperator, eigsh

from ._mean_output import MeanOutputS3VM
from ._validation import Interval
from .grad_s3vm import ExpUnlabeledLoss, Method1Mixin

__all__ = ["CS3VM", "gamma_schedule"]


def _top_eigenvalue(Zu) -> float:
    """lambda_max(Zu^T Zu) = ||Zu||_2^2 (ARPACK on the smaller Gram side; seeded start)."""
    m, d = Zu.shape
    if min(m, d) <= 200 and isinstance(Zu, np.ndarray):
        return float(np.linalg.norm(Zu, 2) ** 2)
    op = LinearOperator((d, d), dtype=np.float64, matvec=lambda v: np.asarray(Zu.T @ np.asarray(Zu @ v).ravel()).ravel())
    v0 = np.ones(d) / np.sqrt(d)
    return float(eigsh(op, k=1, which="LA", v0=v0, return_eigenvectors=False, tol=1e-6)[0])


def gamma_schedule(s, C_star, lam_max, sq_norm, n_smooth, final_smoothing=0.01):
    """Smoothing widths of Alg. 5 (see the module doc): convex start, geometric decrease, then 0.

    Parameters
    ----------
    s, C_star : float
    lam_max : float
        ``lambda_max(Z_U^T Z_U)``.
    sq_norm : float
        Typical ``||z_j||^2`` of the unlabeled points (median).
    n_smooth : int
        Smoothed stages before the final gamma = 0 stage.
    final_smoothing : float
        ``s gamma ||z||^2`` at the last smoothed stage.

    Returns
    -------
    ndarray
        gamma_0 > ... > gamma_{p-1} > gamma_p = 0 (only ``[0]`` if no smoothing is needed).
    """
    sq_norm = max(float(sq_norm), np.finfo(float).tiny)
    g0 = max(((2.0 * s * C_star * lam_max) ** (2.0 / 3.0) - 1.0) / (s * sq_norm), 0.0)
    g_end = final_smoothing / (s * sq_norm)
    if g0 <= g_end:
        return np.array([0.0])
    return np.r_[np.geomspace(g0, g_end, n_smooth), 0.0]


class CS3VM(Method1Mixin, MeanOutputS3VM):
    """cS3VM (JMLR 2008 Sec. 4.3, Alg. 5): continuation on the smoothed objective (14).

    Parameters
    ----------
    kernel, sigma, C, C_star, r, r_tilde
        As for :class:`solvers.newton.NewtonS3VM`.
    s : float, default=5.0
    n_smooth : int, default=10
        Smoothed stages before the final unsmoothed one (Alg. 5's p).
    final_smoothing : float, default=0.01
        ``s gamma ||z||^2`` at the last smoothed stage.
    kernel_map : {"eigh", "cholesky"}, default="eigh"
    tol : float, default=1e-9
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
        solved with the whole continuation of Sec. 4.3 (Alg. 5) from w = 0; every later r~ runs
        only the last ``search_warm_stages`` stages of the gamma schedule (the unsmoothed
        gamma = 0 stage included), starting from the solution w of the earlier r~ whose positive
        count came closest to round(u r) (the later one on a tie): a continuation in the bias
        ``b = 2 r~ - 1``. The start's outputs ``Z w + b`` are recomputed at the new bias. The
        solution can differ from the default's (the smoothing of the retained r~ is cut short);
        ``info["warm_started"]`` tells whether the retained solve was warm-started. None
        (default): every r~ runs the whole schedule from w = 0.

    Attributes
    ----------
    ``binary_fits_[k].info["trace"]``: per stage gamma, L-BFGS iterations and message, smoothed
    objective and objective (5) with p = 2 (only the stages that ran).

    References
    ----------
    .. [1] O. Chapelle, M. Chi and A. Zien. A continuation method for semi-supervised SVMs. In *Proc. ICML*,
           2006.
    .. [2] O. Chapelle, V. Sindhwani and S. S. Keerthi. Optimization techniques for semi-supervised support
           vector machines. *Journal of Machine Learning Research*, 9:203-233, 2008.
    """

    _accepts_sparse = True
    _parameter_constraints: dict = {
        **MeanOutputS3VM._parameter_constraints,
        **Method1Mixin._method1_constraints,
        "n_smooth": [Interval(Integral, 1, None, closed="left")],
        "final_smoothing": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None, r_tilde=None, s=5.0, n_smooth=10,
                 final_smoothing=0.01, kernel_map="eigh", tol=1e-9, max_iter=1000,
                 search_stall_halvings=None, search_warm_stages=None):
        self.kernel = kernel
        self.sigma = sigma
        self.C = C
        self.C_star = C_star
        self.r = r
        self.r_tilde = r_tilde
        self.s = s
        self.n_smooth = n_smooth
        self.final_smoothing = final_smoothing
        self.kernel_map = kernel_map
        self.tol = tol
        self.max_iter = max_iter
        self.search_stall_halvings = search_stall_halvings
        self.search_warm_stages = search_warm_stages

    def _prepare_features(self, problem):
        """Squared norms ``||z_i||^2`` and ``lambda_max(Z_U^T Z_U)`` of the schedule (module doc)."""
        Z = problem.cache["Z"]
        unl = problem.unlabeled
        if isinstance(Z, np.ndarray):
            sq = np.einsum("ij,ij->i", Z, Z)
            Zu = Z[unl]
        else:  # sparse linear: ||x_j - m||^2 = ||x_j||^2 - 2 x_j . m + ||m||^2
            X, m = problem.X, problem.mean_u
            xsq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
            sq = xsq - 2.0 * np.asarray(X @ m).ravel() + float(m @ m)
            Xu = X[unl]
            Zu = LinearOperator((unl.size, X.shape[1]), dtype=np.float64,
                                matvec=lambda v: np.asarray(Xu @ np.ravel(v)).ravel() - float(m @ np.ravel(v)),
                                rmatvec=lambda u: np.asarray(Xu.T @ np.ravel(u)).ravel() - m * float(np.sum(u)))
        problem.cache["sq_norms"] = np.maximum(sq, 0.0)
        problem.cache["lam_max"] = _top_eigenvalue(Zu)

    def _solve(self, problem, y_pm, C, C_star, b, warm=None):
        s = float(self.s)
        sq_u = problem.cache["sq_norms"][problem.unlabeled]
        gammas = gamma_schedule(s, C_star, problem.cache["lam_max"], float(np.median(sq_u)), int(self.n_smooth),
                                float(self.final_smoothing))

        def stage(gamma):
            # exp(-s t^2) convolved with N(0, gamma ||z_j||^2 / 2) at gamma > 0 (module doc)
            return ExpUnlabeledLoss(s, 0.5 * gamma * sq_u) if gamma > 0 else ExpUnlabeledLoss(s)

        stages = ((C_star, stage(g), {"gamma": float(g)}) for g in gammas)
        return self._lbfgs_stages(problem, y_pm, C, C_star, b, stages, warm)
