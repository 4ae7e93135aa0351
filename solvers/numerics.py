"""Public numerics shared by the solvers and the harness: kernels, balance, primal L2-SVM solvers.

* kernels and centering (JMLR 2008 eq. 13): :func:`gaussian_kernel`, :func:`linear_kernel`,
  :func:`center_kernel`, :class:`KernelCentering`, :func:`kernel_pca_map` (Sec. 4, "Method 1");
* class balance (JMLR 2008 eq. 3 and 12): :func:`check_r`, :func:`exact_r`, :func:`estimate_r`,
  :func:`n_positive`, :func:`threshold_to_count`, :func:`threshold_shift`,
  :func:`dichotomic_search` with the protocol's settings :data:`SEARCH_MAX_ITER` and
  :data:`SEARCH_XTOL`; the balance root of mean field annealing (SIGIR 2006 Sec. 3.2.2):
  :func:`balance_root`, :func:`balance_probabilities`;
* primal L2-SVM solvers: :func:`kernel_newton` (Chapelle 2007, Newton on the squared hinge) and
  :func:`l2svm_mfn` (SIGIR 2006, L2-SVM-MFN with CGLS and the exact line search);
* argument checks: :func:`check_int`, :func:`check_positive`.
"""

from ._balance import (SEARCH_MAX_ITER, SEARCH_XTOL, balance_probabilities, balance_root, check_r, dichotomic_search,
                       estimate_r, exact_r, n_positive, threshold_shift, threshold_to_count)
from ._kernels import KernelCentering, center_kernel, gaussian_kernel, kernel_pca_map, linear_kernel
from ._primal import kernel_newton, l2svm_mfn
from ._validation import check_int, check_positive

__all__ = ["gaussian_kernel", "linear_kernel", "center_kernel", "KernelCentering", "kernel_pca_map", "check_r",
           "exact_r", "estimate_r", "n_positive", "threshold_to_count", "threshold_shift", "dichotomic_search",
           "SEARCH_MAX_ITER", "SEARCH_XTOL",
           "balance_root", "balance_probabilities", "kernel_newton", "l2svm_mfn", "check_int", "check_positive"]
