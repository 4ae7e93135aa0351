"""S3VM-light: label switching with annealing of C* (JMLR 2008 Sec. 3.2, Algorithm 1; Joachims 1999).

The combinatorial S3VM of Joachims (1999), "Transductive inference for text classification using
support vector machines" (ICML), in the form JMLR 2008 gives it (Algorithm 1)::

    Train an SVM with the labeled points. o_i <- w.x_i + b.
    Assign y_i <- 1 to the u r largest o_i, -1 to the others.
    C~ <- 1e-5 C*
    while C~ < C* do                                  (here: up to and including C~ = C*)
        repeat
            Minimize (1) with {y_i} fixed and C* replaced by C~.
            if there is a pair (i, j) satisfying (6) then swap the labels y_i and y_j
        until no labels have been swapped
        C~ <- min(1.5 C~, C*)
    end while

with the swap condition, eq. (6), on two unlabeled points of opposite current labels::

    y_i = 1,  y_j = -1,  V(1, o_i) + V(-1, o_j) > V(-1, o_i) + V(1, o_j),

``V(y, o) = max(0, 1 - y o)^p`` and ``o`` the outputs of the SVM just trained. By default p = 2
(the squared hinge of the common protocol, ``loss="l2"``); ``loss="l1"`` is p = 1, the hinge of
Joachims (1999) and of ICML 2006 Table 2's "JTSVM(l1)". The left side is the loss the pair pays
now, the right side what it would pay with both labels switched at the same (w, b). Switching a
qualifying pair lowers eq. (1) by ``C~ * gain`` before retraining, and retraining lowers it
further, so the objective strictly decreases at fixed C~ and the inner loop terminates (finitely
many labelings). For p = 2, and for p = 1 too (``V(1, o) - V(-1, o)`` is ``1 - o``, ``-2 o``
and ``-1 - o`` on the three pieces), ``V(1, o) - V(-1, o)`` is strictly decreasing in o, so (6) holds
exactly when ``o_i < o_j``: the inner loop ends when every unlabeled point labeled +1 has an
output at least as large as every point labeled -1. A swap exchanges one +1 and one -1, so the
number of positive unlabeled labels stays exactly ``round(u r)`` (eq. 3) throughout.

Choices where the pseudocode is silent or loose (all documented on :class:`S3VMLight`):

* **Annealing schedule.** Algorithm 1 as printed stops as soon as C~ reaches C*, i.e. it never
  trains at C* itself. Here the schedule is ``anneal_start * C*`` times powers of
  ``anneal_factor`` while strictly below C*, then exactly C* as the last step (so the returned
  model minimizes eq. (1) with the true C* and the final labels). Since the start is relative
  to C*, the loop runs and ends at C* for any C* > 0, however small; ``anneal_start >= 1`` gives
  the single step C* (no annealing).
* **Which pair.** Among the pairs satisfying (6) the one with the largest gain is switched: the
  +1 point with the largest ``V(1, o_i) - V(-1, o_i)`` and the -1 point with the largest
  ``V(-1, o_j) - V(1, o_j)`` (for p = 2: the smallest-output positive and the largest-output
  negative). One pair per retraining is the default, as in Algorithm 1 and Joachims (1999).
  ``pairs_per_retrain = m > 1`` (or None: all) switches up to m disjoint qualifying pairs, the
  i-th best positive with the i-th best negative, before one retraining -- the "batch" switching
  JMLR 2008 Sec. 6 mentions (Sindhwani & Keerthi 2006). Each pair satisfies (6) on its own and
  the losses are separable, so the decrease ``C~ * sum(gains)`` and hence the monotone,
  terminating, balance-preserving loop are kept; only the path (and the local minimum reached)
  can differ.
* **Numerical tolerance in (6).** A pair qualifies when ``C~ * gain > tol * I``, with I the
  current objective: the guaranteed decrease must exceed the relative accuracy ``tol`` of the
  retraining. Without it, two points with identical outputs (duplicated inputs) could be swapped
  back and forth forever on rounding noise.
* **Revisited labelings.** The strict decrease holds for exact solves. libsvm's (p = 1) are exact
  to ``svc_tol`` only, so a gain below that accuracy could in principle undo an earlier switch and
  cycle: a switch that would return to a labeling already visited at the current C~ ends that
  step instead (counted in ``n_revisits``; stop reason ``"revisit"`` if it happens at C* itself).
  With exact solves it never triggers.
* **Safety cap.** ``max_swaps`` bounds the total number of switched pairs over the run. Once it
  is used up and a pair still qualifies, no further pair is switched; the remaining C~ steps still
  retrain once each, so the returned model is the L2-SVM at C* on the labels reached, and
  ``stop_reason`` says ``"max_swaps"``. The default (100000) is far above what the benchmark data
  need (tens to a few hundred switches per binary problem).

With p = 2, training is warm-started throughout: each retraining starts from the previous
solution (beta, b for the Gaussian kernel through :func:`solvers._primal.kernel_newton` on the
Gram matrix; w, b for the linear kernel through :func:`solvers._primal.l2svm_mfn` with a free
bias, dense or CSR X). With p = 1 each training is libsvm's dual (scikit-learn's ``SVC``, the
per-example costs as ``sample_weight``, on the Gram matrix; for the linear kernel ``X X^T`` formed
once up to n = 5000, libsvm's linear kernel on dense or CSR X beyond), which has no warm start
and solves to its KKT tolerance ``svc_tol``. Objective and costs follow JMLR 2008 eq. (1):
``1/2 ||w||^2 + C sum_labeled V + C~ sum_unl V`` with an unregularized bias (the
C-parameterization of DESIGN.md).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ._balance import check_r, estimate_r, n_positive, threshold_to_count
from ._base import BaseS3VM, BinaryFit
from ._losses import hinge_loss, squared_hinge_loss
from ._s3vm_light_trainers import _HingeTrainer, _KernelTrainer, _LinearTrainer
from ._validation import Interval, Options, check_positive

__all__ = ["LOSSES", "S3VMLight", "anneal_schedule", "best_swap_pairs"]


def anneal_schedule(c_star: float, start: float = 1e-5, factor: float = 1.5) -> np.ndarray:
    """The C~ values of Algorithm 1: ``start*C*, start*C**factor, ...`` below C*, then C* exactly.

    A value within a relative 1e-12 of C* is not repeated before the final C*.

    >>> anneal_schedule(1.0, 0.1, 2.0)
    array([0.1, 0.2, 0.4, 0.8, 1. ])
    """
    c_star = check_positive(c_star, "C_star")
    start = check_positive(start, "anneal_start")
    factor = check_positive(factor, "anneal_factor")
    if not factor > 1.0:
        raise ValueError(f"anneal_factor must be > 1, got {factor!r}")
    steps = []
    c = start * c_star
    while c < c_star * (1.0 - 1e-12):
        steps.append(c)
        c *= factor
    steps.append(c_star)
    return np.array(steps)


#: Loss names and their p in eq. (2): V(y, o) = max(0, 1 - y o)^p.
LOSSES = {"l2": squared_hinge_loss, "l1": hinge_loss}


def _V(y, o, loss="l2"):
    """V(y, o) = max(0, 1 - y o)^p of eq. (2); p = 2 for ``"l2"``, 1 for ``"l1"``."""
    return LOSSES[loss](y * o).value


def best_swap_pairs(outputs, labels, min_gain: float = 0.0, max_pairs: int | None = 1, loss: str = "l2"):
    """Pairs (i, j) of eq. (6), best first: ``labels[i] = +1``, ``labels[j] = -1`` and
    ``gain = V(1,o_i) + V(-1,o_j) - V(-1,o_i) - V(1,o_j) > min_gain``.

    The gain is separable, ``g_i + h_j`` with ``g_i = V(1,o_i) - V(-1,o_i)`` and
    ``h_j = V(-1,o_j) - V(1,o_j)``, so the best m disjoint pairs match the m largest g with the
    m largest h in order; pairs are taken while their gain exceeds ``min_gain`` (the gains of the
    matched pairs are non-increasing, so the qualifying ones form a prefix).

    Parameters
    ----------
    outputs, labels : ndarray, shape (u,)
        Outputs and current +-1 labels of the unlabeled points.
    min_gain : float
        Gains must exceed it (0: eq. (6) exactly).
    max_pairs : int or None
        At most this many pairs (None: all that qualify).
    loss : {"l2", "l1"}
        The p of ``V`` (2 or 1).

    Returns
    -------
    pos, neg : ndarray of int
        Indices (into ``outputs``) of the +1 and -1 points to switch, pair by pair.
    gains : ndarray
        The gain of each pair.
    """
    o = np.asarray(outputs, dtype=float)
    labels = np.asarray(labels)
    pos = np.flatnonzero(labels > 0)
    neg = np.flatnonzero(labels < 0)
    empty = np.array([], dtype=np.intp)
    if pos.size == 0 or neg.size == 0:
        return empty, empty, np.array([])
    g = _V(1.0, o[pos], loss) - _V(-1.0, o[pos], loss)
    h = _V(-1.0, o[neg], loss) - _V(1.0, o[neg], loss)
    if max_pairs == 1:  # Algorithm 1: O(u), ties to the first index
        ip, jn = int(np.argmax(g)), int(np.argmax(h))
        gain = g[ip] + h[jn]
        if gain > min_gain:
            return pos[[ip]], neg[[jn]], np.array([gain])
        return empty, empty, np.array([])
    m = min(pos.size, neg.size) if max_pairs is None else min(pos.size, neg.size, int(max_pairs))
    op = np.argsort(-g, kind="stable")[:m]
    on = np.argsort(-h, kind="stable")[:m]
    gains = g[op] + h[on]
    take = int(np.sum(np.cumprod(gains > min_gain)))
    return pos[op[:take]], neg[on[:take]], gains[:take]


class S3VMLight(BaseS3VM):
    """S3VM-light (Joachims 1999) as Algorithm 1 of JMLR 2008 Sec. 3.2; squared hinge (p = 2) or hinge.

    Starts from the supervised L2-SVM on the labeled points, labels the unlabeled points by
    thresholding its outputs so that exactly ``round(u r)`` are positive, then anneals the
    unlabeled cost C~ from ``anneal_start * C*`` by ``anneal_factor`` up to C* (last step exactly
    C*). At each C~ it alternates retraining the L2-SVM (costs C on labeled, C~ on unlabeled
    points, warm-started) with switching the best pair of opposite unlabeled labels that
    satisfies eq. (6), until no pair qualifies. See the module docstring for the choices made
    where Algorithm 1 is silent.

    Parameters
    ----------
    kernel : {"rbf", "linear"}, default="rbf"
        Gaussian ``exp(-||x - z||^2 / (2 sigma^2))`` (primal Newton on the Gram matrix) or linear
        (L2-SVM-MFN with a free bias; dense or CSR X).
    sigma : float, default=1.0
        Gaussian width.
    C : float, default=1.0
        Cost of the labeled losses.
    C_star : float or None, default=None
        Final cost of the unlabeled losses; None means C* = C (JMLR 2008 Sec. 5.2).
    r : float in (0, 1) or None, default=None
        Fraction of positive unlabeled points (eq. 3); None estimates it from the labeled
        points, ``(mean(y_labeled) + 1) / 2`` (JMLR 2008 Sec. 5.4.5). The protocol passes the
        exact r.
    loss : {"l2", "l1"}, default="l2"
        ``V`` of eq. (2): the squared hinge ``max(0, 1 - t)^2`` (p = 2, the common protocol's
        loss; primal Newton / L2-SVM-MFN, warm-started) or the hinge ``max(0, 1 - t)`` (p = 1,
        Joachims' TSVM, ICML 2006 Table 2's "JTSVM(l1)"; libsvm's dual, no warm start). The loss of
        the SVMs trained and of the switching test (6).
    anneal_start : float, default=1e-5
        First C~ as a fraction of C* (Algorithm 1: 1e-5).
    anneal_factor : float, default=1.5
        Growth factor of C~ (> 1; Algorithm 1: 1.5).
    max_swaps : int or None, default=100000
        Safety cap on the total number of switched pairs over the run (stop reason
        ``"max_swaps"``); None: no cap (the loop terminates anyway, the objective decreasing
        strictly over finitely many labelings).
    pairs_per_retrain : int or None, default=1
        Pairs switched before each retraining: 1 is Algorithm 1 (the best qualifying pair);
        m > 1 switches up to m disjoint qualifying pairs at once, None all of them.
    tol : float, default=1e-9
        Relative accuracy of each retraining (kernel Newton's Newton-decrement tolerance;
        L2-SVM-MFN's CGLS/margin tolerance, capped at SVMlin's 1e-6) and of the swap test: a
        pair qualifies when ``C~ * gain > tol * objective``.
    max_iter : int, default=100
        Newton / MFN iterations at most per retraining (p = 2; libsvm runs to ``svc_tol``).
    svc_tol : float, default=1e-6
        libsvm's KKT tolerance for p = 1; unused for p = 2. libsvm's own default, 1e-3, let the
        objective traced within one C~ step rise by up to 1.5% (C = 100): the solves were too
        loose for the decrease that each switch guarantees. 1e-6 costs no measurable time here.

    Attributes
    ----------
    classes_ : ndarray
    dual_coef_ : ndarray of shape (n_problems, n_samples)
        Expansion coefficients over ``X_fit_`` (all training points; rbf kernel).
    coef_ : ndarray of shape (n_problems, n_features)
        Weights (linear kernel).
    intercept_ : ndarray of shape (n_problems,)
    assigned_labels_ : ndarray of shape (n_problems, n_unlabeled)
        The final internal +-1 labels of the unlabeled points (in the order they appear in X);
        each row has exactly ``round(u r)`` positives.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training points (from the outputs where unlabeled).
    n_iter_ : ndarray of shape (n_problems,)
        Retrainings (L2-SVM solves with the unlabeled term) per binary problem.
    stop_reason_ : list of str
        ``"no_qualifying_pair"``: at C~ = C* no pair satisfies (6) -- a local minimum of eq. (4)
        under pair switches, Algorithm 1's end; ``"max_swaps"``: the cap was reached (see
        ``max_swaps``); ``"revisit"``: at C~ = C* the best qualifying switch would return to a
        labeling already visited at that C~ (possible only through inexact solves: see
        ``n_revisits``).
    binary_fits_ : list of BinaryFit
        ``info`` holds ``n_anneal_steps``, ``n_swaps``, ``n_retrain``, ``anneal_schedule``,
        ``r``, ``n_positive``, ``y_unlabeled`` (= a row of ``assigned_labels_``), ``objective``
        (eq. 1 with ``loss`` at C* with the final labels), ``n_retrain_max_iter`` (retrainings
        that hit ``max_iter``), ``n_revisits`` (C~ steps ended by a revisited labeling),
        ``supervised_n_iter``, and ``trace``: per retraining the step index, C~, cumulative
        swaps, number of positive unlabeled labels and objective (eq. 1 at that C~ with the
        labels in force); ``stage_coef`` / ``stage_intercept``: the solution at the
        end of each annealing step (row k at ``anneal_schedule[k]``), so that C* can be chosen
        among the annealing steps afterwards (ICML 2013 Sec. 6 protocol).

    Notes
    -----
    JMLR 2008 Sec. 3.2 and Algorithm 1; eq. (6) is the switching condition ("slightly weaker
    than that proposed by Joachims (1999)", footnote 4). The harness's protocol shifts the
    outputs so that exactly ``round(u r)`` unlabeled outputs are positive (``balance =
    "threshold"``); the internal labels already satisfy eq. (3) exactly.

    References
    ----------
    .. [1] T. Joachims. Transductive inference for text classification using support vector machines. In
           *Proc. ICML*, 1999.
    .. [2] O. Chapelle, V. Sindhwani and S. S. Keerthi. Optimization techniques for semi-supervised support
           vector machines. *Journal of Machine Learning Research*, 9:203-233, 2008.
    """

    balance = "threshold"
    _parameter_constraints: dict = {
        **BaseS3VM._parameter_constraints,
        "loss": [Options(set(LOSSES))],
        "anneal_start": [Interval(Real, 0, None, closed="neither")],
        "anneal_factor": [Interval(Real, 1, None, closed="neither")],
        "max_swaps": [Interval(Integral, 0, None, closed="left"), None],
        "pairs_per_retrain": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "svc_tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None, loss="l2", anneal_start=1e-5,
                 anneal_factor=1.5, max_swaps=100_000, pairs_per_retrain=1, tol=1e-9, max_iter=100,
                 svc_tol=1e-6):
        self.kernel = kernel
        self.sigma = sigma
        self.C = C
        self.C_star = C_star
        self.r = r
        self.loss = loss
        self.anneal_start = anneal_start
        self.anneal_factor = anneal_factor
        self.max_swaps = max_swaps
        self.pairs_per_retrain = pairs_per_retrain
        self.tol = tol
        self.max_iter = max_iter
        self.svc_tol = svc_tol

    def fit(self, X, y):
        """Fit on labeled and unlabeled points (``y == -1`` marks unlabeled); see the class doc."""
        self._fit_cache = {}  # what the binary problems of one fit share (the linear Gram matrix)
        try:
            super().fit(X, y)
        finally:
            del self._fit_cache
        self.assigned_labels_ = np.vstack([f.info.get("y_unlabeled", np.empty(0)) for f in self.binary_fits_])
        return self

    def _fit_binary(self, X, y_pm, labeled, gram):
        """JMLR 2008 Algorithm 1 on one binary problem: a supervised SVM, exactly ``round(u r)``
        positive unlabeled labels by ranking its outputs, then for each C~ of the annealing
        schedule a retraining and the pair switches of eq. (6) (:class:`_PairSwitching`)."""
        C = float(self.C)
        c_star = C if self.C_star is None else float(self.C_star)
        tol = float(self.tol)
        unl = np.flatnonzero(~labeled)
        r = check_r(estimate_r(y_pm[labeled]) if self.r is None else self.r)
        k = n_positive(unl.size, r)
        schedule = anneal_schedule(c_star, self.anneal_start, self.anneal_factor)
        trainer = self._trainer(X, labeled, gram, tol)

        # Algorithm 1, first lines: supervised SVM, then exactly round(u r) positives by ranking.
        y = np.where(labeled, y_pm, 1.0)  # placeholder labels on unlabeled points carry cost 0
        cost = np.where(labeled, C, 0.0)
        res = trainer.supervised(y, cost)
        supervised_n_iter = res.n_iter
        y[unl] = threshold_to_count(res.outputs[unl], k)

        max_swaps = np.inf if self.max_swaps is None else int(self.max_swaps)
        run = _PairSwitching(trainer, y, cost, unl, tol, max_swaps, self.pairs_per_retrain, self.loss)
        stage_coef, stage_intercept = [], []
        for step, c_tilde in enumerate(schedule):
            # Algorithm 1, outer loop: C~ on the unlabeled points, retrain, switch pairs (eq. 6).
            cost[unl] = c_tilde
            res = run.retrain(res, step, c_tilde)
            res = run.switch_pairs(res, step, c_tilde)
            stage_coef.append(np.array(res.coef, dtype=float))
            stage_intercept.append(float(res.intercept))
        info = {
            "n_anneal_steps": int(schedule.size),
            "n_swaps": int(run.n_swaps),
            "n_retrain": int(run.n_retrain),
            "anneal_schedule": schedule,
            "r": r,
            "n_positive": k,
            "y_unlabeled": y[unl].copy(),
            "objective": float(res.objective),
            "n_retrain_max_iter": int(run.n_max_iter),
            "n_revisits": int(run.n_revisits),
            "supervised_n_iter": int(supervised_n_iter),
            "trace": {key: np.asarray(v) for key, v in run.trace.items()},
            "stage_coef": np.vstack(stage_coef),
            "stage_intercept": np.array(stage_intercept),
        }
        return BinaryFit(np.asarray(res.coef, dtype=float), float(res.intercept), run.n_retrain, run.stop_reason(),
                         info)

    def _trainer(self, X, labeled, gram, tol):
        """The (re)training of Algorithm 1 for this loss and kernel: the hinge by an SVC
        (``loss="l1"``), the squared hinge by L2-SVM-MFN (linear kernel) or kernel Newton."""
        if self.loss == "l1":
            cache = getattr(self, "_fit_cache", {})
            trainer = _HingeTrainer(X, gram, float(self.svc_tol), cache.get("linear_gram"))
            cache["linear_gram"] = trainer.linear_gram  # one for all the one-versus-rest problems of the fit
            return trainer
        if self.kernel == "linear":
            return _LinearTrainer(X, labeled, min(tol, 1e-6), int(self.max_iter))
        return _KernelTrainer(gram, tol, int(self.max_iter))


class _PairSwitching:
    """The label switching of S3VM-light on one binary problem (JMLR 2008, Algorithm 1, inner loop).

    Holds the labels ``y`` and the costs in force (arrays the caller shares, changed in place),
    the counts of switches and retrainings, and the trace of every retraining: its annealing
    step, C~, cumulative switches, positive unlabeled labels and objective.
    """

    def __init__(self, trainer, y, cost, unl, tol, max_swaps, pairs_per_retrain, loss):
        self.trainer, self.y, self.cost, self.unl = trainer, y, cost, unl
        self.tol, self.max_swaps, self.pairs_per_retrain, self.loss = tol, max_swaps, pairs_per_retrain, loss
        self.trace = {"step": [], "C_tilde": [], "n_swaps": [], "n_pos": [], "objective": []}
        self.n_swaps = self.n_retrain = self.n_max_iter = self.n_revisits = 0
        self.capped = False  # max_swaps reached: no more switching at any C~
        self.revisit_last = False  # the last C~ step ended on a revisited labeling

    def retrain(self, prev, step, c_tilde):
        """The SVM on the labels and costs in force, warm-started at ``prev``, recorded in the trace."""
        out = self.trainer.retrain(self.y, self.cost, prev)
        self.n_retrain += 1
        self.n_max_iter += out.stop_reason == "max_iter"
        self.trace["step"].append(step)
        self.trace["C_tilde"].append(c_tilde)
        self.trace["n_swaps"].append(self.n_swaps)
        self.trace["n_pos"].append(int(np.sum(self.y[self.unl] > 0)))
        self.trace["objective"].append(out.objective)
        return out

    def switch_pairs(self, res, step, c_tilde):
        """Switch the pairs that satisfy eq. (6) (:func:`best_swap_pairs`) and retrain, at this C~,
        until no pair qualifies, the ``max_swaps`` cap is reached or a labeling recurs; returns the
        last solution.

        Labelings visited at this C~ are remembered. With exact solves each switch lowers the
        optimum of eq. (1) at fixed C~, so none recurs; solves accurate only to a tolerance
        (libsvm's) could cycle on gains below it, and a switch back to a visited labeling ends
        the step.
        """
        y, unl = self.y, self.unl
        seen = {np.packbits(y[unl] > 0).tobytes()}
        self.revisit_last = False
        while not self.capped:
            min_gain = self.tol * max(res.objective, np.finfo(float).tiny) / c_tilde
            pos, neg, _ = best_swap_pairs(res.outputs[unl], y[unl], min_gain, self.pairs_per_retrain, self.loss)
            if pos.size == 0:
                break
            left = self.max_swaps - self.n_swaps
            if left <= 0:  # a pair qualifies but the cap is reached: no more switching
                self.capped = True
                break
            if pos.size > left:
                pos, neg = pos[:int(left)], neg[:int(left)]
            y_next = y[unl].copy()
            y_next[pos], y_next[neg] = -1.0, 1.0
            key = np.packbits(y_next > 0).tobytes()
            if key in seen:
                self.n_revisits += 1
                self.revisit_last = True
                break
            seen.add(key)
            # eq. (6) holds for each pair: switch, keeping the count of positives.
            y[unl] = y_next
            self.n_swaps += pos.size
            res = self.retrain(res, step, c_tilde)
        return res

    def stop_reason(self) -> str:
        """``"max_swaps"``, ``"revisit"`` or ``"no_qualifying_pair"`` (see :class:`S3VMLight`)."""
        return "max_swaps" if self.capped else ("revisit" if self.revisit_last else "no_qualifying_pair")
