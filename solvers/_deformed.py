"""Any kernel solver with the LapSVM deformed kernel: one mixin, so the hybrids are compositions.

:class:`DeformedKernelMixin` goes first in the bases of a :class:`solvers._base.BaseS3VM` kernel
solver (``class LapSVM(DeformedKernelMixin, SVM)``). At the start of ``fit`` it builds
:class:`solvers._graph.DeformedKernel` over *all* training points, labeled and unlabeled (they
define the graph), with the solver's Gaussian kernel as the base kernel, and replaces the
solver's ``_kernel`` hook by k~: the training Gram matrix the solver receives, and the kernel rows
``decision_function`` uses for any new point, are those of k~. The solver itself is untouched.

This is the construction of Sindhwani, Niyogi & Belkin (ICML 2005), used by JMLR 2008 Sec. 5.6.2
for LapSVM (k~ in a standard SVM) and for the LapSVM-S3VM-light hybrid (k~ in S3VM-light,
Table 15); Chapelle et al. (2006a) first combined it with cS3VM.
"""

from __future__ import annotations

import functools
from numbers import Integral, Real

import numpy as np

from ._base import array_digest
from ._graph import _GRAPH_WEIGHTS, DeformedKernel, warn_disconnected
from ._kernels import gaussian_kernel
from ._validation import Boolean, Interval, Options

__all__ = ["DeformedKernelMixin", "GRAPH_CONSTRAINTS"]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1

#: The constraints (:mod:`solvers._validation`) of the estimator parameters the mixin adds, for the
#: ``_parameter_constraints`` of the classes using it, whose ``kernel`` must also be ``"rbf"`` (k~
#: deforms the Gaussian kernel).
GRAPH_CONSTRAINTS = {
    "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    "laplacian_power": [Interval(Integral, 1, None, closed="left")],
    "gamma_ratio": [Interval(Real, 0, None, closed="neither")],
    "graph_weights": [Options(set(_GRAPH_WEIGHTS))],
    "normalized_laplacian": [Boolean()],
}


# The last fitted deformed kernel, keyed by a digest of the training points and every parameter
# that enters k~. One-versus-rest (the protocol refits the solver once per class on the same
# points) and repeated fits would otherwise rebuild the graph and refactor the n x n matrix each
# time. A fitted DeformedKernel is never modified, so sharing it between estimators is safe; one
# entry bounds the memory to one kernel (about 3 n^2 doubles).
_LAST: dict = {}


def _fitted_deformed_kernel(X, sigma, n_neighbors, power, gamma, weights, normalized) -> DeformedKernel:
    key = (array_digest(X), float(sigma), int(n_neighbors), int(power), float(gamma), str(weights), bool(normalized))
    dk = _LAST.get(key)
    if dk is None:
        dk = DeformedKernel(functools.partial(gaussian_kernel, sigma=float(sigma)), n_neighbors=int(n_neighbors),
                            degree=int(power), gamma=float(gamma), weights=weights,
                            normalized=bool(normalized)).fit(X)
        _LAST.clear()
        _LAST[key] = dk
    elif dk.n_components_ > 1:  # the same warning as a fresh fit: a cache hit must not hide it
        warn_disconnected(n_neighbors, X.shape[0], dk.n_components_)
    return dk


class DeformedKernelMixin:
    """Swap a kernel solver's kernel for the deformed kernel k~ built over all training points.

    The class using it declares the graph parameters in its ``__init__``
    (scikit-learn needs them spelled out there): ``n_neighbors`` (kNN graph), ``laplacian_power``
    (p), ``gamma_ratio`` (``gamma_I / gamma_A``: M = gamma_ratio * L^p), ``graph_weights``
    (``"binary"`` or ``"heat"``) and ``normalized_laplacian``, and their constraints
    (:data:`GRAPH_CONSTRAINTS`, with ``kernel`` limited to ``"rbf"``) in ``_parameter_constraints``.

    Fitted attribute: ``deformed_kernel_`` (the :class:`~solvers._graph.DeformedKernel`).
    """

    # The graph is built on the unlabeled points too: without them there is no point cloud.
    _needs_unlabeled = True

    def fit(self, X, y):
        """Fit with the deformed kernel over all points of X (``y == -1`` marks unlabeled ones)."""
        # The base fit asks for the Gram matrix of the expansion points only (for the SVM: the
        # labeled ones); the graph needs every training point, so the validated X is kept at hand
        # (by _validate_fit_input, called once by the base fit, which keeps X's feature names).
        try:
            return super().fit(X, y)
        finally:
            self.__dict__.pop("_graph_X", None)

    def _validate_fit_input(self, X, y):
        X, y = super()._validate_fit_input(X, y)
        self._graph_X = X
        return X, y

    def _expansion_mask(self, labeled):
        mask = np.asarray(super()._expansion_mask(labeled), dtype=bool)
        self._deformed_keep_ = np.flatnonzero(mask)
        return mask

    def _kernel(self, A, B=None):
        if B is None and getattr(self, "_graph_X", None) is not None:
            # The call inside fit (the training Gram of X[keep]): build k~ over all points first.
            dk = _fitted_deformed_kernel(self._graph_X, self.sigma, self.n_neighbors, self.laplacian_power,
                                         self.gamma_ratio, self.graph_weights, self.normalized_laplacian)
            self.deformed_kernel_ = dk
            keep = self._deformed_keep_
            return dk.gram_[np.ix_(keep, keep)]
        dk = self.deformed_kernel_
        if B is not None and B is getattr(self, "X_fit_", None):
            # Rows against the expansion points: the cancellation-free k(A, X)(I + MK)^{-1}.
            return dk.cross(A)[:, self._deformed_keep_]
        return dk(A, B)
