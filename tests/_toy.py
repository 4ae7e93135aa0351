"""Tiny problems and helpers shared by several test modules."""

import numpy as np
import scipy.sparse as sp


def small_clusters(seed=0, n=40):
    """Two Gaussian clusters in 3-D, first 6 points labeled (3 per class); returns X, y, y_semi."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.standard_normal((n, 3)) + 2.5 * y[:, None]
    y_semi = y.copy()
    y_semi[6:] = -1
    return X, y, y_semi


#: Malformed (X, y_semi) inputs every S3VM must reject: (mutation, exception, message).
BAD_INPUTS = [
    (lambda X, y: (np.where(np.eye(*X.shape, dtype=bool), np.nan, X), y), ValueError, "NaN"),
    (lambda X, y: (X, -np.ones_like(y)), ValueError, "no labeled point"),
    (lambda X, y: (X, np.where(np.arange(y.size) < 5, 1, -1)), ValueError, "only one class"),
]


def l2svm_objective(y, cost, coef, intercept=0.0, *, X=None, K=None, lam=1.0, bias="free"):
    """Primal L2-SVM objective of given coefficients (JMLR 2008 eq. 1, p = 2), written out directly.

    Linear (``X``, ``coef = w``): ``lam/2 (||w||^2 [+ b^2 if bias == "regularized"]) + sum_i c_i
    max(0, 1 - y_i (w.x_i + b))^2``; kernel (``K``, ``coef = beta``, free bias):
    ``lam/2 beta^T K beta + sum_i c_i max(0, 1 - y_i ((K beta)_i + b))^2``.
    """
    y = np.asarray(y, dtype=float)
    cost = np.broadcast_to(np.asarray(cost, dtype=float), y.shape)
    coef = np.asarray(coef, dtype=float)
    if X is not None:
        f = (X @ coef if not sp.issparse(X) else np.asarray(X @ coef).ravel()) + intercept
        reg = coef @ coef + (intercept ** 2 if bias == "regularized" else 0.0)
    else:
        Kb = np.asarray(K) @ coef
        f = Kb + intercept
        reg = coef @ Kb
    slack = np.maximum(0.0, 1.0 - y * f)
    return 0.5 * lam * float(reg) + float(np.sum(cost * slack ** 2))
