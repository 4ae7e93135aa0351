"""Loss-shape figures: closed-form curves of the project's own loss functions.

JMLR 2008 Figs. 2, 4, 5 and 7, ICML 2006 Figs. 1-3 and SIGIR 2006 Figs. 1-3: the unlabeled losses
of :mod:`solvers.losses`, the DA/MFA effective loss at a temperature (ICML 2006 eq. 8, JMLR 2008
eq. 9; :func:`_da_effective_loss`) and MFA's balance function (:mod:`solvers.numerics`). Nothing is
re-implemented here.
"""

from __future__ import annotations

import math

import numpy as np

from .figure_registry import _register


_T = np.linspace(-2.0, 2.0, 801)  # outputs / margins on the x axis of the loss figures


def _da_losses() -> dict:
    """The labeled losses of DA by their parameter name (``solvers.da.DA(loss=...)``)."""
    from s3vm_bench.solvers.losses import hinge_loss, squared_hinge_loss, squared_loss

    return {"l1": hinge_loss, "l2": squared_hinge_loss, "sqr": squared_loss}


def _da_effective_loss(o, T: float, loss: str, C_star: float = 1.0) -> np.ndarray:
    """Effective unlabeled loss of DA/MFA at temperature T, minus its constant ``-T log 2``.

    ICML 2006 Sec. 3.2 / JMLR 2008 eq. (9) for one unlabeled point, ignoring the balance
    constraint (nu = 0):  ``Phi_T(o) = min_p C* [p V(o) + (1-p) V(-o)] + T [p log p + (1-p) log(1-p)]``
    with the minimizer ``p* = 1 / (1 + exp(g / T))``, ``g = C* (V(o) - V(-o))`` (ICML eq. 8). The
    losses V are :data:`solvers._annealing.LOSSES` and the stable logs ``solvers._annealing._log_pq``. Adding
    ``T log 2`` (the entropy term at p = 1/2, a constant in o) keeps every T on one vertical scale;
    T = 0 is the original loss ``min(V(o), V(-o))``.
    """
    from scipy.special import expit

    L = _da_losses()[loss]
    plus, minus = C_star * L(o).value, C_star * L(-o).value
    if T == 0:
        return np.minimum(plus, minus)
    logit = (minus - plus) / T  # logit of p*: -g / T
    p, q = expit(logit), expit(-logit)
    lp, lq = -np.logaddexp(0.0, -logit), -np.logaddexp(0.0, logit)  # log p, log q without cancellation
    return p * plus + q * minus + T * (p * lp + q * lq) + T * math.log(2.0)


#: DA temperatures drawn: ICML 2006 Table 1 / JMLR 2008 Alg. 2 start at T = 10 C* and divide by
#: R = 1.5 per step; every third step of that schedule, then T -> 0 (the original loss).
_DA_TEMPS = tuple(10.0 / 1.5 ** k for k in (0, 3, 6, 9, 12)) + (0.0,)


def _plot_da_family(ax, loss: str, title: str, scale: float = 1.0):
    """The DA family at ``_DA_TEMPS`` for the loss ``scale * V`` (``scale = 1/2``: ICML 2006's V, see ``_ICML_SCALE``)."""
    for T in _DA_TEMPS:
        ax.plot(_T, _da_effective_loss(_T, T, loss, C_star=scale), label="T -> 0" if T == 0 else f"T = {T:.3g}",
                color="black" if T == 0 else None, lw=2.0 if T == 0 else 1.3)
    ax.set_title(title)
    ax.set_xlabel("output f(x)")
    ax.set_xlim(_T[0], _T[-1])


def _sym(L):
    """``min(V(t), V(-t))``: the effective unlabeled loss of a margin loss V (ICML 2006 Sec. 1)."""
    return np.minimum(L(_T).value, L(-_T).value)


@_register("jmlr2008-fig2", "JMLR 2008 Fig. 2",
           "The effective loss max(0, 1 - |o|)^2 on an unlabeled point as a function of its output o "
           "(solvers._losses.symmetric_squared_hinge_loss, JMLR 2008 eq. 5).", size=(4.0, 2.6))
def _jmlr_fig2(fig):
    _plot_unlabeled_squared_hinge(fig, "o = w.x + b")


def _plot_unlabeled_squared_hinge(fig, xlabel):
    """max(0, 1 - |t|)^2 against the output: JMLR 2008 Fig. 2 and SIGIR 2006 Fig. 1 draw the same curve."""
    from s3vm_bench.solvers.losses import symmetric_squared_hinge_loss

    ax = fig.add_subplot()
    ax.plot(_T, symmetric_squared_hinge_loss(_T).value, color="black")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("loss")
    ax.set_xlim(_T[0], _T[-1])


@_register("jmlr2008-fig4", "JMLR 2008 Fig. 4",
           "DA's family of effective losses on an unlabeled point (JMLR 2008 eq. 9 at one point, balance "
           "ignored; V = quadratic hinge, C* = 1) for temperatures of the schedule T = 10 C* / 1.5^k; as T -> 0 "
           "the loss of Fig. 2 is recovered. Curves shifted by the constant T log 2.", size=(4.4, 3.0))
def _jmlr_fig4(fig):
    ax = fig.add_subplot()
    _plot_da_family(ax, "l2", "")
    ax.set_ylabel("effective loss")
    ax.legend(loc="upper right")


@_register("jmlr2008-fig5", "JMLR 2008 Fig. 5",
           "The unlabeled loss max(0, 1 - |t|)^2 and its differentiable approximation exp(-5 t^2) of nabla-S3VM "
           "(solvers._losses.exp_unlabeled_loss, JMLR 2008 eq. 14).", size=(4.0, 2.6))
def _jmlr_fig5(fig):
    from s3vm_bench.solvers.losses import exp_unlabeled_loss, symmetric_squared_hinge_loss

    ax = fig.add_subplot()
    ax.plot(_T, symmetric_squared_hinge_loss(_T).value, label="max(0, 1 - |t|)^2", color="black")
    ax.plot(_T, exp_unlabeled_loss(_T, s=5.0).value, label="exp(-5 t^2)", ls="--")
    ax.set_xlabel("t")
    ax.set_xlim(_T[0], _T[-1])
    ax.legend(loc="upper right")


@_register("jmlr2008-fig7", "JMLR 2008 Fig. 7",
           "The piecewise quadratic unlabeled loss of Newton-S3VM and its derivative divided by 4 (dashed) "
           "(solvers._losses.flat_unlabeled_loss with its defaults plateau 0.25, ramp 0.125 -- our reading of "
           "the figure; the paper gives no numbers).", size=(4.0, 2.8))
def _jmlr_fig7(fig):
    from s3vm_bench.solvers.losses import flat_unlabeled_loss

    ev = flat_unlabeled_loss(_T)
    ax = fig.add_subplot()
    ax.plot(_T, ev.value, color="black", label="loss")
    ax.plot(_T, ev.grad / 4.0, color="black", ls="--", label="derivative / 4")
    ax.set_xlabel("t")
    ax.set_xlim(_T[0], _T[-1])
    ax.legend(loc="upper right")


_V_NAMES = (("l1", "hinge  max(0, 1 - t)"), ("l2", "quadratic hinge  max(0, 1 - t)^2 / 2"),
            ("sqr", "squared  (1 - t)^2 / 2"))
#: ICML 2006 Sec. 3.1 writes the quadratic hinge and the squared loss with a factor 1/2 (our
#: solvers._annealing.LOSSES, JMLR 2008's, without it), and its temperatures (Table 1: start
#: T = 10) are in those units: its figures are drawn with V scaled so.
_ICML_SCALE = {"l1": 1.0, "l2": 0.5, "sqr": 0.5}


@_register("icml2006-fig1", "ICML 2006 Fig. 1",
           "The effective loss V'(t) = min(V(t), V(-t)) on an unlabeled point for the hinge, quadratic hinge and "
           "squared loss V (solvers._annealing.LOSSES, the quadratic ones halved as ICML 2006 Sec. 3.1 writes "
           "them).", size=(8.0, 2.5))
def _icml_fig1(fig):
    LOSSES = _da_losses()

    for i, (key, title) in enumerate(_V_NAMES):
        ax = fig.add_subplot(1, 3, i + 1)
        ax.plot(_T, _ICML_SCALE[key] * _sym(LOSSES[key]), color="black")
        ax.set_title(title)
        ax.set_xlabel("output f(x)")
        ax.set_xlim(_T[0], _T[-1])


@_register("icml2006-fig2", "ICML 2006 Fig. 2",
           "Annealing behaviour of DA's effective unlabeled loss V'_T (ICML 2006 Sec. 3.2, p* of eq. 8 with nu = 0) "
           "for the hinge, quadratic hinge and squared loss in ICML's units (the quadratic ones with their 1/2), "
           "T = 10 / 1.5^k (Table 1 start T = 10, R = 1.5) and "
           "T -> 0. lambda' = 1; curves shifted by the constant T log 2.", size=(8.0, 2.8))
def _icml_fig2(fig):
    for i, (key, title) in enumerate(_V_NAMES):
        ax = fig.add_subplot(1, 3, i + 1)
        _plot_da_family(ax, key, title, scale=_ICML_SCALE[key])
        if i == 0:
            ax.legend(loc="upper right")


@_register("icml2006-fig3", "ICML 2006 Fig. 3",
           "Effective unlabeled losses of JTSVM (lambda' max(0, 1 - |t|), hinge of the current label) and nabla-TSVM "
           "(lambda' exp(-3 t^2), Chapelle & Zien 2005) as lambda' is annealed (doubled) up to 1; the values of "
           "lambda' are ours.", size=(7.0, 2.6))
def _icml_fig3(fig):
    from s3vm_bench.solvers.losses import exp_unlabeled_loss, hinge_loss

    lams = (0.125, 0.25, 0.5, 1.0)
    for i, (title, curve) in enumerate((("JTSVM", lambda t: hinge_loss(np.abs(t)).value),
                                        ("nabla-TSVM", lambda t: exp_unlabeled_loss(t, s=3.0).value))):
        ax = fig.add_subplot(1, 2, i + 1)
        for lam in lams:
            ax.plot(_T, lam * curve(_T), label=f"lambda' = {lam:g}")
        ax.set_title(title)
        ax.set_xlabel("output f(x)")
        ax.set_xlim(_T[0], _T[-1])
        if i == 0:
            ax.legend(loc="upper right")


@_register("sigir2006-fig1", "SIGIR 2006 Fig. 1",
           "L2 loss over an unlabeled example for the transductive SVM: max(0, 1 - |w.x|)^2 "
           "(SIGIR 2006 Sec. 3.1.1; solvers._losses.symmetric_squared_hinge_loss).", size=(4.0, 2.6))
def _sigir_fig1(fig):
    _plot_unlabeled_squared_hinge(fig, "output w.x")


@_register("sigir2006-fig2", "SIGIR 2006 Fig. 2",
           "The loss of MFA on an unlabeled example as the temperature is lowered (SIGIR 2006 eq. 8 minimized over "
           "p_j, balance ignored; lambda' = 1): from a squared-loss shape at high T to the TSVM loss of Fig. 1. "
           "Curves shifted by the constant T log 2.", size=(4.4, 3.0))
def _sigir_fig2(fig):
    ax = fig.add_subplot()
    _plot_da_family(ax, "l2", "")
    ax.set_xlabel("output w.x")
    ax.set_ylabel("effective loss")
    ax.legend(loc="upper right")


@_register("sigir2006-fig3", "SIGIR 2006 Fig. 3",
           "The balance function B(nu) = mean_j 1/(1 + exp((g_j - nu)/T)) - r of MFA with T = 1, r = 0.15 and 101 "
           "values g_j evenly spaced in [-5, 5]; the root found by solvers._balance.balance_root is marked.",
           size=(4.0, 2.8))
def _sigir_fig3(fig):
    from s3vm_bench.solvers.numerics import balance_probabilities as _balance_p
    from s3vm_bench.solvers.numerics import balance_root

    g, T, r = np.linspace(-5.0, 5.0, 101), 1.0, 0.15
    nu = np.linspace(-10.0, 12.0, 881)
    B = np.array([np.mean(_balance_p(g, v, T)) for v in nu]) - r
    root = balance_root(g, T, r)
    ax = fig.add_subplot()
    ax.plot(nu, B, color="black")
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.plot([root.nu], [0.0], "o", color="C3", label=f"root nu = {root.nu:.3f}")
    ax.set_xlabel("nu")
    ax.set_ylabel("B(nu)")
    ax.legend(loc="upper left")
