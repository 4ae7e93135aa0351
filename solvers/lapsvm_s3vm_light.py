"""The LapSVM-S3VM-light hybrid of JMLR 2008 Sec. 5.6.2 (Table 15): S3VM-light with LapSVM's kernel.

"The kernel is constructed as in LapSVM, but then it is plugged into S3VM-light" (JMLR 2008
Sec. 5.6.2; the idea is from Chapelle et al. 2006a, who combined it with cS3VM). Here that is
literally a composition: :class:`solvers._deformed.DeformedKernelMixin` (the deformed kernel of
Sindhwani, Niyogi & Belkin 2005 over all training points) on top of
:class:`solvers.s3vm_light.S3VMLight` (Algorithm 1: annealed C~, pair switches keeping exactly
round(u r) positive unlabeled labels), which runs unchanged on the deformed Gram matrix.
"""

from __future__ import annotations

from numbers import Real

from ._deformed import GRAPH_CONSTRAINTS, DeformedKernelMixin
from ._validation import Interval, Options
from .s3vm_light import S3VMLight

__all__ = ["LapSVMS3VMLight"]


class LapSVMS3VMLight(DeformedKernelMixin, S3VMLight):
    """S3VM-light (JMLR 2008 Alg. 1) with the LapSVM deformed kernel (JMLR 2008 Sec. 5.6.2, Table 15).

    Parameters
    ----------
    kernel, sigma, C, C_star, r, anneal_start, anneal_factor, max_swaps, pairs_per_retrain, tol, max_iter
        As for :class:`solvers.s3vm_light.S3VMLight` (``kernel`` must be ``"rbf"``: the base
        kernel of the deformation).
    n_neighbors, laplacian_power, gamma_ratio, graph_weights, normalized_laplacian
        The graph and deformation, as for :class:`solvers.lapsvm.LapSVM`.

    Attributes
    ----------
    deformed_kernel_ : solvers._graph.DeformedKernel
    dual_coef_ : ndarray of shape (n_problems, n_samples)
        Expansion coefficients over all training points in k~.
    assigned_labels_, classes_, intercept_, transduction_, n_iter_, stop_reason_, binary_fits_
        As for :class:`solvers.s3vm_light.S3VMLight`.

    Notes
    -----
    ``balance = "threshold"`` is inherited: the harness shifts the outputs so that exactly
    round(u r) unlabeled outputs are positive, the internal labels already meeting eq. (3).

    References
    ----------
    .. [1] O. Chapelle, V. Sindhwani and S. S. Keerthi. Optimization techniques for semi-supervised support
           vector machines. *Journal of Machine Learning Research*, 9:203-233, 2008.
    .. [2] M. Belkin, P. Niyogi and V. Sindhwani. Manifold regularization: a geometric framework for learning
           from labeled and unlabeled examples. *Journal of Machine Learning Research*, 7:2399-2434, 2006.
    """

    _parameter_constraints: dict = {
        **{name: c for name, c in S3VMLight._parameter_constraints.items() if name not in ("loss", "svc_tol")},
        "kernel": [Options({"rbf"})],
        "sigma": [Interval(Real, 0, None, closed="neither")],
        **GRAPH_CONSTRAINTS,
    }

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None, anneal_start=1e-5, anneal_factor=1.5,
                 max_swaps=100_000, pairs_per_retrain=1, tol=1e-9, max_iter=100, n_neighbors=6, laplacian_power=1,
                 gamma_ratio=100.0, graph_weights="binary", normalized_laplacian=True):
        super().__init__(kernel=kernel, sigma=sigma, C=C, C_star=C_star, r=r, anneal_start=anneal_start,
                         anneal_factor=anneal_factor, max_swaps=max_swaps, pairs_per_retrain=pairs_per_retrain,
                         tol=tol, max_iter=max_iter)
        self.n_neighbors = n_neighbors
        self.laplacian_power = laplacian_power
        self.gamma_ratio = gamma_ratio
        self.graph_weights = graph_weights
        self.normalized_laplacian = normalized_laplacian
