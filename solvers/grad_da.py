"""Gradient deterministic annealing S3VM, nabla-DA (``grad_da``).

Chapelle, Sindhwani, Keerthi, JMLR 2008, Sec. 3.3 item 2 ("Gradient Methods") and Algorithm 2.

At temperature T the DA objective (JMLR 2008 eq. 7 minus T times the entropy, see
:mod:`solvers.da`) is minimized over p in closed form -- ``p*(w, b)`` of eq. (8), the balance
multiplier nu from :func:`solvers._annealing.solve_nu` -- which leaves the smooth function of eq. (9)::

    S(w, b) = min_{p : mean(p) = r} I''(w, b, p; T)
            = 1/2 ||w||^2 + C sum_lab V(y_i o_i)
              + sum_unl { C* [p*_j V(o_j) + (1 - p*_j) V(-o_j)]
                          + T [p*_j log p*_j + (1 - p*_j) log(1 - p*_j)] },   o = w . z + b.

Its gradient needs no derivative of p* (envelope theorem, JMLR 2008 after eq. 9: dI''/dp_j = nu
for every j at p*, and sum_j dp*_j = 0 along the constraint, so the p-terms cancel; Chapelle et al.
2002, Lemma 2)::

    dS/do_i = C y_i V'(y_i o_i)                              (labeled)
    dS/do_j = C* [p*_j V'(o_j) - (1 - p*_j) V'(-o_j)]         (unlabeled)
    dS/dw   = w + Z^T dS/do,   dS/db = sum dS/do.

S is minimized by L-BFGS (``scipy.optimize.minimize(method="L-BFGS-B")`` with the analytic
gradient; the paper says "conjugate gradient descent" -- both are gradient methods with the same
fixed point) at each temperature of the annealing schedule of Algorithm 2, warm-started from the
previous temperature.

Optimization variables: JMLR 2008 Sec. 4, "Method 1". For the Gaussian kernel the kernel-PCA map
``Z = U Lambda^{1/2}`` (:func:`solvers._kernels.kernel_pca_map`, ``Z Z^T = K``) turns the kernel
problem into a linear one in w, whose Hessian ``I + Z^T D Z`` is far better conditioned for a
quasi-Newton method than that of the expansion coefficients (``K + K D K``, Method 2); the
expansion of the returned model is ``beta = U Lambda^{-1/2} w`` (so ``K beta = Z w``). For the
linear kernel Z is X itself (dense or sparse) and w is the weight vector.

Products with dense features. Each evaluation of S reads Z twice, for ``o = Z w + b`` and for
``Z^T dS/do``, with the balance root between the two. The one-versus-rest problems of a split
share Z (the kernel-PCA map of the split), so they run together (``batched_ovr``,
:mod:`solvers.batch`): the products of every member waiting for one are computed in one sweep
over the rows of Z (:func:`_outputs_pass`, :func:`_gradient_pass`), block by block, so that each
block is read from memory once for all of them. Each member's products are the same
floating-point operations whether it runs alone or with others, so the results do not depend on
the batching.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.optimize import minimize
from scipy.special import expit

from ._balance import n_positive, threshold_shift
from ._base import BaseS3VM, BinaryFit, shared_work
from .batch import current_group
from ._kernels import kernel_pca_map
from ._annealing import (ANNEALING_CONSTRAINTS, LOSSES, _AnnealingParams, _log_pq, bernoulli_entropy,
                         s3vm_objective, solve_nu)
from ._validation import Options

__all__ = ["GradDA", "smoothed_objective"]


def _unlabeled_terms(o_u, C_star, T, r, loss):
    """Value and d/do of the unlabeled part of S (eq. 9) at p*(o); also the root."""
    L = LOSSES[loss]
    plus, minus = L(o_u), L(-o_u)
    g = C_star * (plus.value - minus.value)  # JMLR 2008 eq. (8)
    root = solve_nu(g, T, r)
    x = root.logit
    p, q = expit(x), expit(-x)
    lp, lq = _log_pq(x)
    value = C_star * float(np.sum(p * plus.value + q * minus.value)) + T * float(np.sum(p * lp + q * lq))
    # d/do [p V(o) + q V(-o)] at fixed p (envelope theorem): p V'(o) - q V'(-o).
    grad = C_star * (p * plus.grad - q * minus.grad)
    return value, grad, root


def _objective_terms(w, o, y_pm, labeled, C, C_star, T, r, loss):
    """S of eq. (9) at outputs ``o`` (``1/2 ||w||^2`` included) and ``dS/do``; also the root."""
    L = LOSSES[loss]
    unl = ~labeled
    lab = L(y_pm[labeled] * o[labeled])
    value_u, grad_u, root = _unlabeled_terms(o[unl], C_star, T, r, loss)
    value = 0.5 * float(w @ w) + C * float(np.sum(lab.value)) + value_u
    d = np.empty_like(o)
    d[labeled] = C * y_pm[labeled] * lab.grad
    d[unl] = grad_u
    return value, d, root


def smoothed_objective(w, b, Z, y_pm, labeled, *, C, C_star, T, r, loss="l2"):
    """S(w, b) of JMLR 2008 eq. (9) and its gradient, for outputs ``o = Z w + b``.

    Parameters
    ----------
    w : ndarray, shape (d,)
    b : float
    Z : ndarray or scipy.sparse matrix, shape (n, d)
        Features of the training points (kernel-PCA map or X).
    y_pm : ndarray, shape (n,)
        Labels +-1 on labeled points (ignored elsewhere).
    labeled : ndarray of bool, shape (n,)
    C, C_star, T, r : float
        Costs, temperature (> 0) and the balance target of ``mean(p) = r``.
    loss : {"l2", "sqr"}
        ``max(0, 1 - t)^2`` (JMLR 2008, p = 2) or ``(1 - t)^2``.

    Returns
    -------
    value : float
    grad_w : ndarray, shape (d,)
    grad_b : float
    root : solvers._annealing.NuRoot
        ``p*`` and nu at (w, b).
    """
    products = _Products(Z)
    w = np.asarray(w, dtype=np.float64)
    o = products.outputs(w, float(b))
    value, d, root = _objective_terms(w, o, y_pm, labeled, C, C_star, T, r, loss)
    return value, w + products.gradient(d), float(d.sum()), root


@njit(cache=True, nogil=True)
def _outputs_pass(Z, W, B, O, block):
    """``O[j] = Z W[j] + B[j]`` for every j, in one sweep over blocks of ``block`` rows of Z.

    Row ``j``'s numbers come from the same operations (one BLAS ``gemv`` per block) whatever the
    other rows of ``W`` are.
    """
    n = Z.shape[0]
    for s0 in range(0, n, block):
        s1 = min(s0 + block, n)
        Zb = Z[s0:s1]
        for j in range(W.shape[0]):
            ob = np.dot(Zb, W[j])
            for k in range(s1 - s0):
                O[j, s0 + k] = ob[k] + B[j]


@njit(cache=True, nogil=True)
def _gradient_pass(Z, D, ACC, block):
    """``ACC[j] = Z^T D[j]`` for every j, in one sweep over blocks of ``block`` rows of Z (summed
    block after block; row ``j``'s numbers do not depend on the other rows of ``D``)."""
    n = Z.shape[0]
    ACC[:, :] = 0.0
    for s0 in range(0, n, block):
        s1 = min(s0 + block, n)
        Zb = Z[s0:s1]
        for j in range(D.shape[0]):
            ACC[j] += np.dot(D[j, s0:s1], Zb)


def _run_outputs(payloads):
    """Outputs ``Z w + b`` of each payload (same Z and block), in one :func:`_outputs_pass`."""
    Z, block = payloads[0]["Z"], payloads[0]["block"]
    W = np.array([p["w"] for p in payloads])
    B = np.array([p["b"] for p in payloads])
    O = np.empty((len(payloads), Z.shape[0]))
    _outputs_pass(Z, W, B, O, block)
    return list(O)


def _run_gradients(payloads):
    """``Z^T d`` of each payload (same Z and block), in one :func:`_gradient_pass`."""
    Z, block = payloads[0]["Z"], payloads[0]["block"]
    D = np.array([p["d"] for p in payloads])
    ACC = np.empty((len(payloads), Z.shape[1]))
    _gradient_pass(Z, D, ACC, block)
    return list(ACC)


class _Products:
    """``Z w + b`` and ``Z^T d`` for one fit.

    Dense float64 C-contiguous features go through :func:`_outputs_pass` and
    :func:`_gradient_pass`, shared with the other members of the calling thread's group
    (:func:`solvers.batch.current_group`) when there is one; other features (sparse, or the
    linear kernel's X) through their own ``@``.
    """

    #: Bytes of Z per block of rows (a few blocks fit a core's L2 cache).
    block_bytes = 1 << 18

    def __init__(self, Z):
        self.Z = Z
        self.blocked = (isinstance(Z, np.ndarray) and Z.dtype == np.float64 and Z.ndim == 2
                        and Z.flags.c_contiguous)
        if self.blocked:
            n, d = Z.shape
            self.block = max(1, min(n, self.block_bytes // (8 * max(d, 1))))

    def _submit(self, name, execute, **payload):
        payload.update(Z=self.Z, block=self.block)
        group = current_group()
        if group is None:
            return execute([payload])[0]
        return group.submit((name, id(self.Z), self.block), payload, execute)

    def outputs(self, w, b):
        if not self.blocked:
            return np.asarray(self.Z @ w).ravel() + b
        return self._submit("grad_da-outputs", _run_outputs, w=np.ascontiguousarray(w, dtype=np.float64), b=b)

    def gradient(self, d):
        if not self.blocked:
            return np.asarray(self.Z.T @ d).ravel()
        return self._submit("grad_da-gradient", _run_gradients, d=np.ascontiguousarray(d, dtype=np.float64))


def _feature_map(gram):
    """The kernel-PCA map of ``gram`` (:func:`solvers._kernels.kernel_pca_map`), its features
    C-contiguous: the layout :func:`_outputs_pass` reads block by block."""
    Z, kmap = kernel_pca_map(gram, "eigh")
    return np.ascontiguousarray(Z), kmap


class GradDA(_AnnealingParams, BaseS3VM):
    """nabla-DA: L-BFGS on the smoothed DA objective S(w, b) (JMLR 2008 eq. 9, Alg. 2).

    Algorithm (JMLR 2008 Algorithm 2 with the gradient method)::

        (w, b) <- 0; T <- T0 (x C*)
        repeat
            (w, b) <- argmin S(w, b; T)   # L-BFGS from the previous (w, b)
            p <- p*(w, b)                 # eq. (8)
            stop if entropy(p) < epsilon  # else T <- T / R (at most max_anneal temperatures)
        return (w, b)

    JMLR 2008 Alg. 2 returns the last (w_T, b_T) (``select="last"``, the default); footnote 6
    notes that the ICML 2006 DA returns the best solution on the path instead, available as
    ``select="best"`` (S3VM objective with the balanced labeling, see :func:`solvers._annealing.s3vm_objective`).
    As for :class:`solvers.da.DA` the balance enters through p (``mean(p) = r``) and the bias of
    the returned model is shifted so that exactly round(u r) unlabeled outputs are positive
    (``balance = "threshold"``; ``info["bias_shift"]``).

    Parameters
    ----------
    kernel, sigma, C, C_star, r, T0, T_fixed, R, epsilon, max_anneal, T_scale
        As for :class:`solvers.da.DA` (same units: T0 = 10 times C* by default, the start of
        JMLR 2008 Alg. 2; R = 1.5; epsilon = 1e-6 on the mean entropy of p in bits).
    loss : {"l2", "sqr"}, default="l2"
        V of eq. (7); JMLR 2008 uses p = 2 (``"l2"``). The hinge is not differentiable, so no
        gradient method is offered for it (use ``DA(loss="l1")``).
    select : {"last", "best"}, default="last"
    tol : float, default=1e-9
        L-BFGS-B ``ftol`` (relative decrease of S) at each temperature; ``gtol`` is
        ``tol * max(1, C, C*)``.
    max_iter : int, default=1000
        L-BFGS iterations per temperature at most.

    Attributes
    ----------
    See :class:`solvers.da.DA`. ``binary_fits_[k].info["trace"]`` has one entry per temperature
    (T, S at the minimizer, L-BFGS iterations and message, entropy of p, S3VM objective);
    ``info["n_components"]`` is the dimension of the kernel-PCA map.

    Notes
    -----
    ``n_iter_`` counts L-BFGS iterations over all temperatures. ``stop_reason_``:
    ``"entropy<epsilon"``, ``"max_anneal"`` or ``"fixed_T"``.

    References
    ----------
    .. [1] O. Chapelle, V. Sindhwani and S. S. Keerthi. Optimization techniques for semi-supervised support
           vector machines. *Journal of Machine Learning Research*, 9:203-233, 2008.
    .. [2] V. Sindhwani, S. S. Keerthi and O. Chapelle. Deterministic annealing for semi-supervised kernel
           machines. In *Proc. ICML*, 2006.
    """

    _accepts_sparse = True  # rbf: only the Gram matrix is used; linear: Z = X works sparse
    balance = "threshold"
    #: The one-versus-rest fits of a split share their products with the kernel-PCA features
    #: (module doc, :mod:`solvers.batch`).
    batched_ovr = True
    #: 2: products with dense features blocked (:func:`_outputs_pass`), shared by the fits of a split.
    result_version = 2
    _parameter_constraints: dict = {**BaseS3VM._parameter_constraints, **ANNEALING_CONSTRAINTS,
                                    "loss": [Options({"l2", "sqr"})]}

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None, loss="l2", T0=10.0, T_fixed=None,
                 R=1.5, epsilon=1e-6, max_anneal=30, T_scale="C_star", select="last", tol=1e-9, max_iter=1000):
        self.kernel = kernel
        self.sigma = sigma
        self.C = C
        self.C_star = C_star
        self.r = r
        self.loss = loss
        self.T0 = T0
        self.T_fixed = T_fixed
        self.R = R
        self.epsilon = epsilon
        self.max_anneal = max_anneal
        self.T_scale = T_scale
        self.select = select
        self.tol = tol
        self.max_iter = max_iter

    def _fit_binary(self, X, y_pm, labeled, gram):
        if gram is None:  # linear kernel: Method 1 with z = x
            Z, basis = (X.tocsr() if sp.issparse(X) else X), None
        else:  # one eigendecomposition per split, shared by its one-versus-rest fits
            Z, kmap = (_feature_map(gram) if self._gram_key is None
                       else shared_work(("kernel_pca", self._gram_key, "eigh"), lambda: _feature_map(gram)))
            basis = kmap.basis
        products = _Products(Z)
        d = Z.shape[1]
        C = float(self.C)
        C_star, r, T = self._resolve(y_pm, labeled)
        unl = ~labeled
        k_pos = n_positive(int(unl.sum()), r)
        gtol = float(self.tol) * max(1.0, C, C_star)

        def evaluate(w, b, T):
            o = products.outputs(w, b)
            value, dS, root = _objective_terms(w, o, y_pm, labeled, C, C_star, T, r, self.loss)
            return value, dS, root, o

        def fun(x, T):
            w = x[:d]
            value, dS, _, _ = evaluate(w, float(x[d]), T)
            return value, np.append(w + products.gradient(dS), dS.sum())

        x = np.zeros(d + 1)
        trace, best = [], None
        n_iter = 0

        def stage(k, T):
            nonlocal x, n_iter, best
            res = minimize(fun, x, args=(T,), jac=True, method="L-BFGS-B",
                           options=dict(maxiter=int(self.max_iter), ftol=float(self.tol), gtol=gtol, maxcor=20))
            x = res.x
            n_iter += int(res.nit)
            w, b = x[:d], float(x[d])
            S, _, root, o = evaluate(w, b, T)
            H = bernoulli_entropy(root.logit)
            beta = w if basis is None else basis @ w
            s3 = s3vm_objective(0.5 * float(w @ w), o, y_pm, labeled, C, C_star, k_pos, self.loss)
            trace.append(dict(anneal=k, T=T, objective=S, nit=int(res.nit), message=str(res.message),
                              success=bool(res.success), entropy=H, balance=root.residual, s3vm_objective=s3))
            best = self._select(best, s3, (s3, beta, b, o, dict(anneal=k, T=T, objective=s3)))
            return H, ""

        stop_reason = self._anneal(T, stage)
        s3, beta, b, o, where = best
        shift = threshold_shift(o[unl], k_pos)
        info = dict(trace=trace, best=where, bias_shift=shift, outputs=o - shift, r=r, C_star=C_star,
                    n_components=int(d), n_temperatures=len(trace), final_entropy=trace[-1]["entropy"])
        return BinaryFit(np.asarray(beta, dtype=np.float64), float(b - shift), n_iter, stop_reason, info)
