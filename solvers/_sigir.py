"""What the two linear solvers of SIGIR 2006 share: parameterization, checks, fitted attributes.

Two parameterizations, one objective (DESIGN.md). SIGIR 2006 eq. (7) with the squared hinge::

    lam/2 ||w~||^2 + 1/(2l) sum_labeled max(0, 1 - y_i w~.x~_i)^2
                   + lam'/(2u) sum_unlabeled max(0, 1 - y'_j w~.x~'_j)^2

where ``x~ = [x, 1]`` carries the bias as a constant feature, so the bias is *regularized*.
JMLR 2008 eq. (1) (p = 2) is ``1/2 ||w||^2 + C sum_labeled + C* sum_unlabeled`` with a *free*
bias. Dividing the SIGIR objective by lam gives JMLR's with::

    C = 1/(2 lam l),   C* = lam'/(2 lam u)     <=>   lam = 1/(2 C l),   lam' = u C* / (l C)

so, apart from the bias term, the two describe the same minimizers. The solvers work in SIGIR
units internally (``lam``, ``lam'``; in the cost convention of :mod:`solvers._primal`, which has
no 1/2 on the loss, the costs are ``1/(2l)`` and ``lam'/(2u)``) and choose the bias by the
parameterization:

* ``param="sigir"``: ``lam``, ``lam_u`` are used, bias regularized (SIGIR eq. 1, SVMlin);
* ``param="jmlr"``: ``C``, ``C_star`` are mapped by the formulas above, bias free (JMLR eq. 1,
  the objective the common protocol recomputes);
* ``param="auto"`` (default): ``"jmlr"`` if ``C`` is not None, else ``"sigir"``. The harness
  passes its shared ``C``, ``C_star`` to every solver that has them, so under the harness the
  JMLR parameterization wins unless ``param="sigir"`` is given explicitly.

``bias`` overrides the bias choice (``"regularized"`` or ``"free"``) in either case.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from ._balance import check_r, estimate_r, n_positive
from ._base import BaseS3VM, BinaryFit
from ._validation import Interval, Options, check_positive

__all__ = ["LinearProblem", "SIGIRLinearBase", "resolve_problem", "tsvm_objective"]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1

_PARAMS = ("auto", "sigir", "jmlr")
_BIASES = ("regularized", "free")


@dataclass(frozen=True)
class LinearProblem:
    """One binary problem in SIGIR units (see the module docstring)."""

    lam: float  # regularization weight
    lam_u: float  # lam', weight of the averaged unlabeled loss
    bias: str  # "regularized" or "free"
    param: str  # "sigir" or "jmlr" (which one was used)
    l: int
    u: int
    r: float
    k: int  # round(u r): positives among the unlabeled points

    @property
    def lam_b(self) -> float:
        return self.lam if self.bias == "regularized" else 0.0

    @property
    def c_l(self) -> float:
        """Cost of one labeled squared hinge (``_primal`` convention: SIGIR's 1/l halved)."""
        return 0.5 / self.l

    def c_u(self, lam_u: float | None = None) -> float:
        """Cost of one unlabeled squared hinge at weight ``lam_u`` (default: the target lam')."""
        return 0.5 * (self.lam_u if lam_u is None else lam_u) / self.u

    def to_user_units(self, value: float) -> float:
        """A SIGIR-unit objective in the units of the parameterization used (JMLR: / lam)."""
        return value / self.lam if self.param == "jmlr" else value


def resolve_problem(est, y_pm, labeled) -> LinearProblem:
    """Map the estimator's parameters and one binary problem to :class:`LinearProblem`."""
    l = int(labeled.sum())
    u = int((~labeled).sum())
    param = est.param
    if param == "auto":
        param = "jmlr" if est.C is not None else "sigir"
    if param == "jmlr":
        if est.C is None:
            raise ValueError("param='jmlr' needs C (and optionally C_star; C_star=None means C* = C)")
        C = check_positive(est.C, "C")
        C_star = C if est.C_star is None else check_positive(est.C_star, "C_star")
        lam, lam_u = 1.0 / (2.0 * C * l), u * C_star / (l * C)
        bias = "free"
    else:
        lam, lam_u = check_positive(est.lam, "lam"), check_positive(est.lam_u, "lam_u")
        bias = "regularized"
    if est.bias is not None:
        bias = est.bias
    r = estimate_r(y_pm[labeled]) if est.r is None else est.r
    r = check_r(r)
    return LinearProblem(lam, lam_u, bias, param, l, u, r, n_positive(u, r))


def tsvm_objective(w, b, o_l, y_l, o_u, prob: LinearProblem, lam_u: float | None = None) -> float:
    """SIGIR 2006 eq. (18) (= eq. 7 with the best labels), in SIGIR units.

    ``lam/2 (||w||^2 [+ b^2]) + 1/(2l) sum max(0, 1 - y o)^2 + lam'/(2u) sum max(0, 1 - |o'|)^2``.
    """
    lu = prob.lam_u if lam_u is None else lam_u
    reg = float(w @ w) + (b * b if prob.bias == "regularized" else 0.0)
    hl = np.maximum(0.0, 1.0 - y_l * o_l)
    hu = np.maximum(0.0, 1.0 - np.abs(o_u))
    return 0.5 * prob.lam * reg + float(hl @ hl) / (2 * prob.l) + lu * float(hu @ hu) / (2 * prob.u)


class SIGIRLinearBase(BaseS3VM):
    """Parameters, checks and fitted attributes common to :class:`LinearTSVM` and :class:`MFA`.

    ``_parameter_constraints`` holds the constraints of the parameters both have; each adds its own.
    Subclasses return from ``_fit_binary`` a ``BinaryFit`` whose ``info`` holds
    ``"y_unlabeled"``: the final labels of the unlabeled points (exactly round(u r) positive).
    For two classes those labels are ``transduction_`` on the unlabeled points.
    """

    balance = "threshold"
    _accepts_sparse = True
    _parameter_constraints: dict = {
        "lam": [Interval(Real, 0, None, closed="neither")],
        "lam_u": [Interval(Real, 0, None, closed="neither")],
        "C": [Interval(Real, 0, None, closed="neither"), None],  # None: the SIGIR parameterization
        "C_star": [Interval(Real, 0, None, closed="neither"), None],
        "param": [Options(set(_PARAMS))],
        "bias": [Options(set(_BIASES)), None],
        "kernel": [Options({"linear"})],  # a linear method (SIGIR 2006)
        "r": [Interval(Real, 0, 1, closed="neither"), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_mfn_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def _check_params(self):
        super()._check_params()
        if self.param == "jmlr" and self.C is None:
            raise ValueError("param='jmlr' needs C (and optionally C_star; C_star=None means C* = C)")

    def _fit_supervised(self, X, y_pm, gram):
        """Every point labeled: SIGIR 2006 eq. (18) without its unlabeled term, by L2-SVM-MFN
        (:func:`solvers._primal.l2svm_mfn`), in the parametrization the estimator is given."""
        from ._primal import l2svm_mfn

        prob = resolve_problem(self, y_pm, np.ones(y_pm.size, dtype=bool))
        res = l2svm_mfn(X, y_pm, prob.c_l, lam=prob.lam, bias=prob.bias, tol=self.tol, max_iter=self.max_mfn_iter)
        return BinaryFit(np.asarray(res.coef, dtype=float), float(res.intercept), res.n_iter, res.stop_reason,
                         {"objective": res.objective, "n_mfn": 1, "n_switches": 0, "y_unlabeled": np.empty(0),
                          "supervised": True})

    def fit(self, X, y):
        super().fit(X, y)
        infos = [f.info for f in self.binary_fits_]
        self.objective_ = np.array([i["objective"] for i in infos])
        self.n_mfn_ = np.array([i["n_mfn"] for i in infos])
        if self.classes_.size == 2:
            unl = ~self._labeled_mask(np.asarray(y).ravel())  # the fit above accepted y, 1-D or a column
            self.transduction_ = self.transduction_.copy()
            self.transduction_[unl] = self.classes_[(infos[0]["y_unlabeled"] > 0).astype(int)]
        return self
