"""Graph Laplacian and the data-dependent (deformed) kernel of LapSVM.

* :func:`knn_laplacian` -- the Laplacian of the k-nearest-neighbour graph of the labeled and
  unlabeled points, and :func:`laplacian_power`;
* :class:`DeformedKernel` -- the kernel of Sindhwani, Niyogi & Belkin (ICML 2005, Sec. 3) whose
  RKHS norm is warped by the point-cloud norm ``f^T M f``, used by LapSVM (their Sec. 4) and by
  S3VM-light on it (JMLR 2008 Sec. 5.6.2), through :mod:`solvers._deformed`.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from s3vm_bench import is_int

from ._kernels import _check_data, _row_sqnorms
from ._validation import check_kernel_matrix, check_positive

__all__ = ["knn_laplacian", "laplacian_power", "DeformedKernel"]

# Sindhwani, Niyogi & Belkin (ICML 2005), "Beyond the point cloud: from transductive to
# semi-supervised learning": warping the RKHS norm by a point-cloud norm,
#     ||f||~^2 = ||f||_K^2 + f^T M f,   f = (f(x_1), ..., f(x_n)),  M = (gamma_I / gamma_A) L^p,
# gives again an RKHS (on the same functions), whose reproducing kernel is (their Sec. 3)
#     k~(x, z) = k(x, z) - k_x^T (I + M K)^{-1} M k_z,   k_x = (k(x_1, x), ..., k(x_n, x)).
# A standard SVM with k~ is LapSVM (their Sec. 4); JMLR 2008 Sec. 5.6.2 plugs the same k~ into
# S3VM-light. L is the Laplacian of the k-nearest-neighbour graph of labeled + unlabeled points.

_GRAPH_WEIGHTS = ("binary", "heat")


def knn_laplacian(X, n_neighbors: int = 6, *, weights: str = "binary", heat_width: float | None = None,
                  normalized: bool = True):
    """Laplacian of the symmetric k-nearest-neighbour graph of the rows of ``X`` (scipy.sparse CSR).

    The adjacency graph of Belkin & Niyogi's Laplacian eigenmaps as used by LapSVM (Sindhwani et al.
    2005; Belkin, Niyogi & Sindhwani, JMLR 2006, Sec. 6): i and j are joined when either is among
    the ``n_neighbors`` Euclidean nearest neighbours of the other (the "or" rule keeps W symmetric
    without dropping edges), with weight 1 (``"binary"``, the default of their reference code) or
    ``exp(-||x_i - x_j||^2 / (2 t^2))`` (``"heat"``; t = ``heat_width``, by default the mean
    distance of the graph edges, so the weights are scale free). ``L = D - W`` or, with
    ``normalized=True`` (their code's default), ``I - D^{-1/2} W D^{-1/2}``, whose spectrum lies
    in [0, 2] so that powers L^p stay of order 1 whatever the degree.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
    n_neighbors : int, default=6
        Neighbours per point (excluding the point itself); must be < n.
    weights : {"binary", "heat"}, default="binary"
    heat_width : float, optional
        Width t of the heat weights (ignored for binary weights).
    normalized : bool, default=True

    Returns
    -------
    L : scipy.sparse.csr_matrix, shape (n, n), float64, symmetric

    Warns
    -----
    UserWarning
        The graph has more than one connected component: L then has a null space of that
        dimension and the deformed kernel cannot link labels across components.
    """
    from scipy.sparse.csgraph import connected_components
    from sklearn.neighbors import kneighbors_graph

    X = _check_data(X, "X")
    n = X.shape[0]
    if not is_int(n_neighbors) or n_neighbors < 1:
        raise ValueError(f"n_neighbors must be an integer >= 1, got {n_neighbors!r}")
    if n_neighbors >= n:
        raise ValueError(f"n_neighbors={n_neighbors} must be smaller than the number of points n={n} "
                         "(labeled + unlabeled) of the graph")
    if weights not in _GRAPH_WEIGHTS:
        raise ValueError(f"weights must be one of {_GRAPH_WEIGHTS}, got {weights!r}")
    # Connectivity, not distances, defines the edges: a duplicated point is at distance 0 and a
    # sparse "distance" graph would silently drop that edge.
    C = kneighbors_graph(X, int(n_neighbors), mode="connectivity", include_self=False)
    W = C.maximum(C.T).tocsr()  # "or" rule: an edge if either point is a neighbour of the other
    W.data[:] = 1.0
    if weights == "heat":
        rows, cols = W.nonzero()
        sq = _row_sqnorms(X)
        if sp.issparse(X):
            dots = np.asarray(X[rows].multiply(X[cols]).sum(axis=1)).ravel()
        else:
            dots = np.einsum("ij,ij->i", X[rows], X[cols])
        d2 = np.maximum(sq[rows] + sq[cols] - 2.0 * dots, 0.0)
        t = float(np.mean(np.sqrt(d2))) if heat_width is None else check_positive(heat_width, "heat_width")
        if not t > 0:  # every neighbour a duplicate: all weights 1
            t = 1.0
        W = sp.csr_matrix((np.exp(-d2 / (2.0 * t * t)), (rows, cols)), shape=(n, n))
    n_comp, _ = connected_components(W, directed=False)
    if n_comp > 1:
        warn_disconnected(n_neighbors, n, n_comp)
    deg = np.asarray(W.sum(axis=1)).ravel()
    if normalized:
        inv_sqrt = 1.0 / np.sqrt(deg)  # deg > 0: every point has at least one neighbour
        L = sp.identity(n, format="csr") - sp.diags(inv_sqrt) @ W @ sp.diags(inv_sqrt)
    else:
        L = sp.diags(deg) - W
    L = ((L + L.T) * 0.5).tocsr()
    return L


def warn_disconnected(n_neighbors: int, n: int, n_components: int) -> None:
    """The UserWarning of a kNN graph with more than one connected component."""
    import warnings

    warnings.warn(f"the {n_neighbors}-nearest-neighbour graph of the {n} points has {n_components} connected "
                  "components: labels cannot propagate between components (increase n_neighbors)",
                  UserWarning, stacklevel=3)


def laplacian_power(L, p: int) -> np.ndarray:
    """Dense ``L^p`` (p >= 1) by repeated sparse-times-dense products, O(p nnz(L) n).

    The iterated Laplacian of Sindhwani et al. (2005): higher p penalizes the high-frequency
    eigenvectors of the graph more strongly relative to the smooth ones.
    """
    if not is_int(p) or p < 1:
        raise ValueError(f"the Laplacian power p must be an integer >= 1, got {p!r}")
    L = sp.csr_matrix(L, dtype=np.float64)
    P = L.toarray()
    for _ in range(int(p) - 1):
        P = np.asarray(L @ P)
    P += P.T  # products of a symmetric L are symmetric; remove the round-off asymmetry
    P *= 0.5
    return P


class DeformedKernel:
    """The data-dependent kernel of Sindhwani, Niyogi & Belkin (2005), fitted on the training points.

    ``k~(A, B) = k(A, B) - k(A, X) (I + M K)^{-1} M k(X, B)`` with ``K = k(X, X)`` over the
    training points X (labeled and unlabeled) and ``M = gamma * L^p``, L the kNN graph Laplacian
    of X (:func:`knn_laplacian`). k~ is defined for any points, so an SVM trained with it predicts
    on unseen points (the point of "beyond the point cloud").

    Two identities avoid both explicit inverses and the cancellation in the formula when gamma
    L^p is large: since ``I - (I + MK)^{-1} M K = (I + MK)^{-1}``,

    * the rows against the training points are ``k~(A, X) = k(A, X) (I + M K)^{-1}``, one
      solve with the LU factors of ``I + K M`` (the transpose of ``I + M K``; K and M are
      symmetric), computed once in :meth:`fit`;
    * the training Gram matrix is ``K~ = K (I + M K)^{-1}``, symmetrized; it equals
      ``K^{1/2} (I + K^{1/2} M K^{1/2})^{-1} K^{1/2}``, so it is positive semidefinite.

    Parameters
    ----------
    base_kernel : callable
        ``base_kernel(A, B=None)`` returns the dense kernel matrix k(A, B) (k(A, A) if B is None),
        e.g. ``functools.partial(gaussian_kernel, sigma=...)``.
    n_neighbors : int, default=6
        Neighbours of the kNN graph.
    degree : int, default=1
        Power p of the Laplacian.
    gamma : float, default=1.0
        Weight of the point-cloud norm, ``gamma_I / gamma_A`` in Sindhwani et al. (2005).
    weights : {"binary", "heat"}, default="binary"
        Edge weights (see :func:`knn_laplacian`).
    normalized : bool, default=True
        Normalized Laplacian ``I - D^{-1/2} W D^{-1/2}``.

    Attributes (after :meth:`fit`)
    ------------------------------
    X_ : training points
    M_ : ndarray (n, n), ``gamma * L^p``
    gram_ : ndarray (n, n), the deformed training Gram matrix K~
    n_components_ : int or None, connected components of the graph (None when M was given)
    """

    def __init__(self, base_kernel, n_neighbors: int = 6, degree: int = 1, gamma: float = 1.0,
                 weights: str = "binary", normalized: bool = True):
        if not callable(base_kernel):
            raise TypeError(f"base_kernel must be callable (A, B=None) -> ndarray, got {base_kernel!r}")
        self.base_kernel = base_kernel
        self.n_neighbors = n_neighbors
        self.degree = degree
        self.gamma = gamma
        self.weights = weights
        self.normalized = normalized

    def fit(self, X, M=None) -> "DeformedKernel":
        """Build the graph over ``X`` (all training points), M, and factor ``I + K M``.

        Parameters
        ----------
        X : ndarray or scipy.sparse matrix, shape (n, d)
        M : array_like, shape (n, n), optional
            A given symmetric positive semidefinite deformation matrix instead of
            ``gamma * L^p`` (the graph parameters are then not used).
        """
        from scipy.sparse.csgraph import connected_components

        X = _check_data(X, "X")
        n = X.shape[0]
        self.n_components_ = None  # unknown for a given M
        if M is None:
            gamma = check_positive(self.gamma, "gamma")
            L = knn_laplacian(X, self.n_neighbors, weights=self.weights, normalized=self.normalized)
            # the off-diagonal non-zeros of L are the graph's edges
            self.n_components_ = int(connected_components(L, directed=False)[0])
            M = laplacian_power(L, self.degree)
            M *= gamma
        else:
            M = check_kernel_matrix(M)
            if M.shape[0] != n:
                raise ValueError(f"M has shape {M.shape} but X has {n} points")
        K = np.asarray(self.base_kernel(X), dtype=np.float64)
        if K.shape != (n, n):
            raise ValueError(f"base_kernel(X) returned shape {K.shape}, expected ({n}, {n})")
        A = K @ M
        A[np.diag_indices(n)] += 1.0
        self._lu = sla.lu_factor(A, check_finite=False)
        G = sla.lu_solve(self._lu, K, check_finite=False)  # (I + KM)^{-1} K = [K (I + MK)^{-1}]^T
        G += G.T
        G *= 0.5
        self.X_, self.M_, self.gram_ = X, M, G
        return self

    def _check_fitted(self):
        if not hasattr(self, "gram_"):
            raise RuntimeError("DeformedKernel is not fitted: call fit(X) first")

    def cross(self, A) -> np.ndarray:
        """``k~(A, X)`` against the training points, shape (m, n): ``k(A, X) (I + M K)^{-1}``."""
        self._check_fitted()
        KA = np.asarray(self.base_kernel(A, self.X_), dtype=np.float64)
        lu, piv = self._lu
        if not (lu.flags.writeable and piv.flags.writeable):
            # A factor read back as a read-only memory map (joblib, pickling): scipy 1.17's lu_solve
            # crashes the process on one, so it gets an ordinary copy.
            lu, piv = np.array(lu), np.array(piv)
        return sla.lu_solve((lu, piv), KA.T, check_finite=False).T

    def __call__(self, A, B=None) -> np.ndarray:
        """``k~(A, B)`` for any points (``B=None``: ``k~(A, A)``), shape (len(A), len(B))."""
        self._check_fitted()
        TA = self.cross(A)
        same = B is None
        B = A if same else B
        KXB = np.asarray(self.base_kernel(self.X_, B), dtype=np.float64)
        out = np.asarray(self.base_kernel(A) if same else self.base_kernel(A, B), dtype=np.float64)
        out = out - TA @ (self.M_ @ KXB)
        if same:
            out += out.T
            out *= 0.5
        return out
