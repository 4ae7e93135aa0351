"""Kernels, kernel centering on the unlabeled mean, and the kernel-PCA map.

* :func:`gaussian_kernel` -- ``exp(-||x - y||^2 / (2 sigma^2))``, the kernel of
  all JMLR 2008 experiments (Sec. 5.2, sigmas in Table 5).
* :func:`linear_kernel` -- ``x . y``.
* :func:`center_kernel` / :class:`KernelCentering` -- the modified kernel of
  JMLR 2008, eq. (13): the feature space is translated so that the unlabeled
  points have mean zero, which makes the mean output on the unlabeled points
  equal to the bias b; the balance constraint (12) then fixes b.
* :func:`kernel_pca_map` / :class:`KernelPCAMap` -- "Method 1" of JMLR 2008,
  Sec. 4: vectors ``z_i`` with ``z_i . z_j = k(x_i, x_j)`` so that a kernel
  S3VM becomes a linear one in the z's.

Dense ``ndarray`` and ``scipy.sparse`` inputs are accepted; kernel matrices are
returned dense (n x m) because every consumer needs them dense.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from s3vm_bench import is_real

from ._validation import check_kernel_matrix, check_positive, check_symmetric_kernel

__all__ = [
    "gaussian_kernel",
    "linear_kernel",
    "KernelCentering",
    "center_kernel",
    "KernelPCAMap",
    "kernel_pca_map",
]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1


# ----------------------------------------------------------------------------
# input checks
# ----------------------------------------------------------------------------
def _check_data(X, name: str):
    """Return X as float64 CSR (if sparse) or 2-D ndarray, checking finiteness."""
    if sp.issparse(X):
        X = X.tocsr()
        if X.dtype != np.float64:
            X = X.astype(np.float64)
        if not np.all(np.isfinite(X.data)):
            raise ValueError(f"{name} contains NaN or inf")
        return X
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or inf")
    return X


def _check_pair(X, Y):
    X = _check_data(X, "X")
    Y = X if Y is None else _check_data(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"X and Y must have the same number of features, got {X.shape[1]} and {Y.shape[1]}"
        )
    return X, Y


def _row_sqnorms(X) -> np.ndarray:
    if sp.issparse(X):
        # Squares only the stored entries: O(nnz), X stays sparse.
        sq = X.copy()
        sq.data **= 2
        return np.asarray(sq.sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", X, X)


def _cross(X, Y) -> np.ndarray:
    """Dense n x m matrix X Y^T without densifying sparse X or Y."""
    G = X @ Y.T
    if sp.issparse(G):
        G = G.toarray()
    return np.ascontiguousarray(np.asarray(G, dtype=np.float64))


# ----------------------------------------------------------------------------
# kernels
# ----------------------------------------------------------------------------
def gaussian_kernel(X, Y=None, *, sigma) -> np.ndarray:
    """Gaussian kernel matrix ``exp(-||x_i - y_j||^2 / (2 sigma^2))``.

    The kernel of JMLR 2008, Sec. 5.2 (widths in Table 5).  Squared distances
    are formed as ``||x||^2 + ||y||^2 - 2 x.y`` and clipped at 0 (round-off can
    make them slightly negative); the diagonal of ``K(X, X)`` is exactly 1.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
    Y : ndarray or scipy.sparse matrix, shape (m, d), optional
        Defaults to ``X``.
    sigma : float
        Kernel width, > 0 (keyword only, so it cannot be mistaken for ``Y``).

    Returns
    -------
    K : ndarray, shape (n, m), float64

    Raises
    ------
    ValueError
        If ``sigma <= 0``, not finite or so small that ``2 sigma^2`` underflows, inputs are not 2-D, contain NaN/inf,
        or have different numbers of features.
    """
    s = check_positive(sigma, "sigma")
    two_s2 = 2.0 * s * s
    scale = -1.0 / two_s2 if two_s2 > 0.0 else -np.inf
    if not np.isfinite(scale):
        raise ValueError(f"sigma = {sigma!r} is too small: 2 sigma^2 underflows in float64 and every kernel value "
                         "off the diagonal would be 0; use a width on the scale of the distances between points")
    same = Y is None
    X, Y = _check_pair(X, Y)
    xx = _row_sqnorms(X)
    yy = xx if same else _row_sqnorms(Y)
    K = _cross(X, Y)  # the only n x m buffer; everything below is in place
    K *= -2.0
    K += xx[:, None]
    K += yy[None, :]
    if same:
        # Neither BLAS nor the additions above give an exactly symmetric
        # matrix; Cholesky/eigh downstream want one.  (a + b) == (b + a).
        K += K.T
        K *= 0.5
        np.fill_diagonal(K, 0.0)
    np.maximum(K, 0.0, out=K)
    K *= scale
    np.exp(K, out=K)
    return K


def linear_kernel(X, Y=None) -> np.ndarray:
    """Linear kernel matrix ``X Y^T``, dense output for dense or sparse inputs.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
    Y : ndarray or scipy.sparse matrix, shape (m, d), optional
        Defaults to ``X``.

    Returns
    -------
    K : ndarray, shape (n, m), float64
    """
    same = Y is None
    X, Y = _check_pair(X, Y)
    K = _cross(X, Y)
    if same:
        K += K.T
        K *= 0.5
    return K


# ----------------------------------------------------------------------------
# centering on the unlabeled mean, JMLR 2008 eq. (13)
# ----------------------------------------------------------------------------
def _unlabeled_index(unlabeled, n: int) -> np.ndarray:
    u = np.asarray(unlabeled)
    if u.dtype == bool:
        if u.shape != (n,):
            raise ValueError(f"boolean unlabeled mask must have shape ({n},), got {u.shape}")
        idx = np.flatnonzero(u)
    else:
        if u.ndim != 1 or (u.size and not np.issubdtype(u.dtype, np.integer)):
            raise ValueError("unlabeled must be a boolean mask or a 1-D array of integer indices")
        idx = np.unique(u.astype(np.intp))
        if idx.size != u.size:
            raise ValueError(f"unlabeled indices repeat ({u.size - idx.size} repeats among {u.size}): pass each "
                             "unlabeled index once, or a boolean mask of shape (n,) (an integer 0/1 mask is read "
                             "as indices)")
        if idx.size and (idx[0] < 0 or idx[-1] >= n):
            raise ValueError(f"unlabeled indices must lie in [0, {n})")
    if idx.size == 0:
        raise ValueError("the unlabeled set is empty: centering on its mean is undefined")
    return idx


@dataclass(frozen=True)
class KernelCentering:
    """Remembered means of the unlabeled-mean centering (JMLR 2008, eq. 13).

    With ``U`` the unlabeled training points, the centered kernel is::

        k~(x, x') = k(x, x') - mean_{j in U} k(x, x_j) - mean_{j in U} k(x', x_j)
                    + mean_{i, j in U} k(x_i, x_j)

    i.e. the ordinary kernel after translating feature space by the unlabeled
    mean.  For every x, ``mean_{j in U} k~(x, x_j) = 0``, so outputs
    ``f(x) = sum_i beta_i k~(x, x_i) + b`` average to exactly ``b`` over U:
    constraint (12) becomes a constraint on b alone.

    Attributes
    ----------
    unlabeled : ndarray of int
        Indices of U among the training points (columns of the training kernel).
    train_means : ndarray, shape (n_train,)
        ``mean_{j in U} k(x_i, x_j)`` for every training point i.
    grand_mean : float
        ``mean_{i, j in U} k(x_i, x_j)``.
    """

    unlabeled: np.ndarray
    train_means: np.ndarray
    grand_mean: float

    @classmethod
    def fit(cls, K, unlabeled) -> "KernelCentering":
        """Compute the means from the training Gram matrix.

        Parameters
        ----------
        K : array_like, shape (n, n)
            Uncentered training kernel.
        unlabeled : array_like of bool, shape (n,), or of int
            Mask or indices of the unlabeled training points.
        """
        K = check_symmetric_kernel(K)
        idx = _unlabeled_index(unlabeled, K.shape[0])
        train_means = K[:, idx].mean(axis=1)
        grand_mean = float(train_means[idx].mean())
        return cls(idx, train_means, grand_mean)

    def center_train(self, K) -> np.ndarray:
        """Center the training Gram matrix it was fitted on (new array)."""
        K = check_kernel_matrix(K)
        if K.shape[0] != self.train_means.shape[0]:
            raise ValueError(
                f"K has {K.shape[0]} rows but the centering was fitted on {self.train_means.shape[0]}"
            )
        Kc = K - self.train_means[:, None]
        Kc -= self.train_means[None, :]
        Kc += self.grand_mean
        return Kc

    def transform(self, K_new) -> np.ndarray:
        """Center the kernel between new points and the training points.

        Parameters
        ----------
        K_new : array_like, shape (m, n_train)
            ``k(x_new_a, x_i)`` for the training points i, uncentered.

        Returns
        -------
        ndarray, shape (m, n_train)
            Rows of the centered kernel, consistent with :meth:`center_train`:
            transforming the training rows gives back the centered Gram matrix,
            so prediction uses exactly the centering used in training.
        """
        K_new = np.asarray(K_new, dtype=np.float64)
        n = self.train_means.shape[0]
        if K_new.ndim != 2 or K_new.shape[1] != n:
            raise ValueError(f"K_new must have shape (m, {n}), got {K_new.shape}")
        if not np.all(np.isfinite(K_new)):
            raise ValueError("K_new contains NaN or inf")
        new_means = K_new[:, self.unlabeled].mean(axis=1)
        Kc = K_new - new_means[:, None]
        Kc -= self.train_means[None, :]
        Kc += self.grand_mean
        return Kc


def center_kernel(K, unlabeled) -> tuple[np.ndarray, KernelCentering]:
    """Center a training Gram matrix on the unlabeled mean (JMLR 2008, eq. 13).

    Parameters
    ----------
    K : array_like, shape (n, n)
        Uncentered training kernel.
    unlabeled : array_like of bool, shape (n,), or of int
        Mask or indices of the unlabeled points.

    Returns
    -------
    K_centered : ndarray, shape (n, n)
        Centered Gram matrix; ``K_centered[:, U].mean(axis=1) == 0``.
    centering : KernelCentering
        Use ``centering.transform(K_new)`` on kernels between new points and
        the training points so that prediction uses the same centering.
    """
    c = KernelCentering.fit(K, unlabeled)
    return c.center_train(K), c


# ----------------------------------------------------------------------------
# kernel-PCA / Cholesky map, JMLR 2008 Sec. 4 "Method 1"
# ----------------------------------------------------------------------------
@dataclass(frozen=True)
class KernelPCAMap:
    """Map to explicit features ``z`` with ``z(x) . z(x_i) = k(x, x_i)``.

    Attributes
    ----------
    method : {"eigh", "cholesky"}
    basis : ndarray
        For ``"eigh"``: ``U_r diag(lambda_r)^{-1/2}``, shape (n, r), so that
        ``z(x) = k(x, X_train) @ basis``.  For ``"cholesky"``: the lower
        Cholesky factor L of K (+ jitter), shape (n, n).
    n_components : int
        Dimension r of the features.
    jitter : float
        Ridge added to the diagonal before the Cholesky factorization (0 for
        ``"eigh"`` and when K was numerically positive definite).
    """

    method: str
    basis: np.ndarray
    n_components: int
    jitter: float = 0.0

    def transform(self, K_new) -> np.ndarray:
        """Features of new points from their kernel rows against the training set.

        Parameters
        ----------
        K_new : array_like, shape (m, n_train)
            ``k(x_new_a, x_i)``; apply the same centering as for training first.

        Returns
        -------
        Z_new : ndarray, shape (m, n_components)
            ``Z_new @ Z_train.T`` reproduces ``K_new`` (exactly for the
            Cholesky map; up to the discarded eigen-directions for ``"eigh"``).
        """
        K_new = np.asarray(K_new, dtype=np.float64)
        n = self.basis.shape[0]
        if K_new.ndim != 2 or K_new.shape[1] != n:
            raise ValueError(f"K_new must have shape (m, {n}), got {K_new.shape}")
        if self.method == "eigh":
            return K_new @ self.basis
        # z = L^{-1} k(x): row form Z_new = K_new L^{-T}.
        return sla.solve_triangular(self.basis, K_new.T, lower=True, check_finite=False).T


def kernel_pca_map(K, method: str = "eigh", rtol: float | None = None):
    """Explicit features for a kernel, JMLR 2008 Sec. 4, "Method 1".

    Finds ``Z`` (rows ``z_i``) with ``Z Z^T = K`` so that a kernel S3VM can be
    trained as a linear one on the ``z_i``.  The paper names both choices:

    * ``"eigh"``: the kernel PCA map, ``K = U Lambda U^T``, ``Z = U Lambda^{1/2}``
      (Scholkopf & Smola 2002, Sec. 14.2).  Eigenvalues below
      ``rtol * max(eigenvalue)`` (default ``n * eps``) are dropped, which makes
      the map well defined for the numerically singular Gram matrices that
      Gaussian kernels produce; ``Z Z^T`` then equals K up to those dropped
      eigenvalues.  New points: ``z(x) = Lambda^{-1/2} U^T k(x)``.
    * ``"cholesky"``: ``K = L L^T``, ``Z = L`` (used by grad-S3VM, Chapelle &
      Zien 2005).  If K is not numerically positive definite a diagonal jitter
      is added (starting at ``1e-12 * mean(diag K)``, x10 until it succeeds);
      the jitter is reported.  New points: ``z(x) = L^{-1} k(x)``.

    Parameters
    ----------
    K : array_like, shape (n, n)
        Symmetric positive semi-definite training kernel (already centered if
        centering is wanted).
    method : {"eigh", "cholesky"}, default="eigh"
    rtol : float, optional
        Relative eigenvalue cut-off for ``"eigh"``.

    Returns
    -------
    Z : ndarray, shape (n, r)
        Features of the training points.
    pca_map : KernelPCAMap
        ``pca_map.transform(K_new)`` maps new points.
    """
    if rtol is not None and (not is_real(rtol) or not 0.0 <= float(rtol) < 1.0):
        raise ValueError(f"rtol must be a number in [0, 1) (eigenvalues below rtol * the largest are dropped) or "
                         f"None, got {rtol!r}")
    K = check_symmetric_kernel(K)
    n = K.shape[0]
    if method == "eigh":
        evals, evecs = sla.eigh(K, check_finite=False)
        top = evals[-1] if n else 0.0
        if top <= 0.0:
            raise ValueError("kernel matrix has no positive eigenvalue: it is zero or negative definite (a "
                             "kernel that is constant over the points -- all points alike, or sigma far larger "
                             "than their distances -- is zero once centered); nothing can be learned from it")
        cut = (n * np.finfo(np.float64).eps if rtol is None else float(rtol)) * top
        keep = evals > cut
        lam = evals[keep]
        U = evecs[:, keep]
        sqrt_lam = np.sqrt(lam)
        Z = U * sqrt_lam
        return Z, KernelPCAMap("eigh", U / sqrt_lam, int(lam.size))
    if method == "cholesky":
        scale = float(np.mean(np.diag(K))) if n else 1.0
        jitter = 0.0
        for _ in range(12):
            try:
                A = K if jitter == 0.0 else K + jitter * np.eye(n)
                L = sla.cholesky(A, lower=True, check_finite=False)
                break
            except np.linalg.LinAlgError:
                jitter = 1e-12 * scale if jitter == 0.0 else 10.0 * jitter
        else:
            raise ValueError("kernel matrix is not positive semi-definite (Cholesky failed)")
        return L, KernelPCAMap("cholesky", L, n, jitter)
    raise ValueError(f"method must be 'eigh' or 'cholesky', got {method!r}")
