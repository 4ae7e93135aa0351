"""The solvers of JMLR 2008 Sec. 4 with their original, soft balance constraint: r~ = r, no search.

JMLR 2008 Table 13 (Sec. 5.4.5) estimates r from the labeled points, and its caption says: "For
methods of Section 4, the original constraint (12) is used; there is no dichotomic search (see
beginning of Section 4)"; the text: "original soft balance constraint is used where applicable".
Constraint (12) asks only that the mean output over the unlabeled points be ``2 r - 1``, i.e. the
bias of the centered problem is fixed at ``b = 2 r - 1`` (eq. 13) and the number of positive
outputs is whatever the solution gives. Every other table of the paper wraps these solvers in the
dichotomic search on r~ (Sec. 4, Sec. 5.2) so that exactly round(u r) outputs are positive, which
is what :class:`solvers._mean_output.MeanOutputS3VM` does by default (``r_tilde=None``).

The classes here are those solvers with ``r_tilde`` set to ``r`` (given, or estimated from the
labeled points, Sec. 5.4.5) for every binary problem: one solve at ``b = 2 r - 1``. They are not
in the registry; name them as ``solvers.soft_balance:SoftCCCP`` etc.
"""

from __future__ import annotations

from ._balance import check_r, estimate_r
from .cccp import CCCP
from .cs3vm import CS3VM
from .grad_s3vm import GradS3VM
from .newton import NewtonS3VM

__all__ = ["SoftBalanceMixin", "SoftGradS3VM", "SoftCS3VM", "SoftCCCP", "SoftNewtonS3VM"]


class SoftBalanceMixin:
    """One solve per binary problem at ``r~ = r`` (JMLR 2008 eq. 12, Table 13), before a mean-output solver.

    ``r_tilde`` must stay None: the variant sets it to each binary problem's ``r``. The balance
    then holds on average (eq. 12), not in count (eq. 3); ``binary_fits_[k].info`` records
    ``search_exact`` (whether the count happens to be round(u r)) and ``dichotomic_iter = 0``.
    """

    #: The protocol does not force the count (no search, no threshold shift, no tie-break).
    balance = "soft"

    def _check_params(self):
        super()._check_params()
        if self.r_tilde is not None:
            raise ValueError(f"{type(self).__name__} sets r_tilde to r itself (JMLR 2008 Table 13: constraint (12) "
                             f"with r~ = r); leave r_tilde=None, got {self.r_tilde!r}. For another fixed r~ use "
                             f"the parent solver with r_tilde given.")

    def _fit_binary(self, X, y_pm, labeled, gram):
        r = check_r(estimate_r(y_pm[labeled]) if self.r is None else self.r)
        # MeanOutputS3VM._fit_binary reads the r_tilde parameter; it is set for this binary
        # problem only and restored, so get_params() after fit is what the user passed.
        self.r_tilde = r
        try:
            return super()._fit_binary(X, y_pm, labeled, gram)
        finally:
            self.r_tilde = None


class SoftGradS3VM(SoftBalanceMixin, GradS3VM):
    """:class:`solvers.grad_s3vm.GradS3VM` (nabla-S3VM, JMLR 2008 Sec. 4.2) with r~ = r, no search."""


class SoftCS3VM(SoftBalanceMixin, CS3VM):
    """:class:`solvers.cs3vm.CS3VM` (cS3VM, JMLR 2008 Sec. 4.3, Alg. 5) with r~ = r, no search."""


class SoftCCCP(SoftBalanceMixin, CCCP):
    """:class:`solvers.cccp.CCCP` (JMLR 2008 Sec. 4.1, Alg. 4) with r~ = r, no search."""


class SoftNewtonS3VM(SoftBalanceMixin, NewtonS3VM):
    """:class:`solvers.newton.NewtonS3VM` (JMLR 2008 Sec. 4.4, Alg. 6) with r~ = r, no search."""
