"""Primal Newton solvers shared by the S3VM algorithms: the one kernel Newton core and L2-SVM-MFN.

Convex L2-SVMs (squared hinge, p = 2) with per-example costs ``c_i >= 0``:

* :func:`kernel_newton` -- Newton's method in the expansion coefficients beta
  of ``f = K beta + b`` (JMLR 2008, eqs. 15-17 with a convex loss; Chapelle
  2007, "Training a support vector machine in the primal").  Each
  step solves a linear system on the current support vectors only.
  :func:`kernel_newton_terms` is the same method with several loss terms on
  one point (DA's f-step), :func:`kernel_newton` its one-term-per-point case.
* :func:`l2svm_mfn` -- the linear modified finite Newton method L2-SVM-MFN of
  SIGIR 2006 (Sec. 2, Tables 1-3; Keerthi & DeCoste 2005) with CGLS for the
  inner least-squares systems and the exact piecewise-quadratic line search.
  It only multiplies by X and X^T; X^T X is never formed.

Non-convex losses at a fixed bias (Newton S3VM, CCCP's convex steps) are minimized by
:func:`lm_newton`, the Levenberg-Marquardt method of JMLR 2008 Alg. 6.

The kernel solvers share one linear-algebra core: their systems are
``K_SS + diag(d_S)`` on the current support set S, and the Cholesky factor is
kept in a :class:`solvers._cholesky.CholeskyCache` -- reused when (S, d) repeat,
modified by rank-one updates when they change by a few points, refactored
from a newly gathered block otherwise.  Pass a cache instead of K to keep it
across calls on the same kernel (the inputs are then validated once).

The objective (JMLR 2008, eq. 1 with p = 2, the problem of the common protocol)::

    lam/2 ||w||^2  +  sum_i c_i max(0, 1 - y_i (w . x_i + b))^2

kernel form: ``||w||^2 = beta^T K beta`` and ``w . x_i = (K beta)_i``.  With
``lam = 1`` and ``c_i = C`` (labeled) or ``C*`` (unlabeled) it is JMLR eq. (1).

Two parameterizations, one objective (DESIGN.md).  SIGIR 2006, Table 1 writes
``lam/2 ||w||^2 + 1/2 sum_i c'_i max(0, 1 - y_i w.x_i)^2`` -- note the 1/2 on the
loss -- so SIGIR costs ``c'_i`` correspond to ``cost = c'_i / 2`` here.  SIGIR's
averaged form (eq. 7, ``c'_i = 1/l`` labeled, ``lam'/u`` unlabeled) divided by
``lam`` is JMLR's with ``C = 1/(2 lam l)`` and ``C* = lam'/(2 lam u)``: pass
``lam=1, cost=C`` or, equivalently, ``lam=lam, cost=1/(2 l)``.

This module is the one the solvers import these from and the one that declares their
``RESULT_VERSION``; the code lives in private modules, one per method:

* :mod:`solvers._primal_common` -- :class:`PrimalResult`, input checks,
  the exact line search (SIGIR 2006, Table 3) and the kernel-row product;
* :mod:`solvers._primal_kernel` -- :func:`kernel_newton`, :func:`kernel_newton_terms`;
* :mod:`solvers._primal_mfn` -- :func:`l2svm_mfn` and its CGLS (SIGIR 2006, Tables 1-2);
* :mod:`solvers._primal_lm` -- :func:`lm_newton` (JMLR 2008, Alg. 6).
"""

# The names the solvers import from this module.
from ._cholesky import CholeskyCache
from ._primal_common import PrimalResult, _exact_line_search, _rows_product
from ._primal_kernel import kernel_newton, kernel_newton_terms
from ._primal_lm import LMResult, _ShiftedSystem, lm_newton
from ._primal_mfn import (MFN_BIG_EPSILON, MFN_CGITERMAX, MFN_EPSILON, MFN_ITERMAX, MFN_RELATIVE_STOP_EPS,
                          MFN_SMALL_CGITERMAX, _cgls, _step_length, l2svm_mfn, mfn_iterations)

__all__ = [
    "CholeskyCache",
    "LMResult",
    "PrimalResult",
    "lm_newton",
    "kernel_newton",
    "kernel_newton_terms",
    "l2svm_mfn",
    "mfn_iterations",
]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result of the
#: modules it re-exports (solvers._primal_common, _primal_kernel, _primal_mfn, _primal_lm), which
#: declare none of their own.
RESULT_VERSION = 1
