"""Branch and bound: the certified global optimum of the S3VM (NIPS 2006, Alg. 1; JMLR 2008 Sec. 3.1).

The problem (NIPS 2006, eqs. 1-3; JMLR 2008 eq. 4 with p = 2) is the combinatorial one::

    min_{y_u in {-1,+1}^u, sum_i max(y_i, 0) = k}  J(y_u),
    J(y_u) = min_{beta, b} 1/2 beta^T K beta + C sum_labeled xi_i^2 + C* sum_unlabeled xi_i^2,
    xi_i = max(0, 1 - y_i ((K beta)_i + b)),

the same L2-SVM objective the common protocol reports (JMLR 2008 Sec. 5.2), so a solver's
protocol objective divided by the optimum found here is >= 1 (up to the stated tolerance).

Algorithm 1 of NIPS 2006, made iterative (an explicit stack instead of recursion, so that node
and time limits can stop the search with a valid lower bound):

* **Tree.** A node is a partial labeling; its two children label one more unlabeled point.
* **Lower bound** (NIPS Sec. 4): the L2-SVM objective s(L) on the points labeled so far -- the
  S3VM objective with the unlabeled term of the still-unlabeled points dropped, hence <= J at
  every leaf below. A node is pruned when s(L) >= ub (1 - gap_tol), ub the incumbent (the best
  leaf so far, or an initial labeling from another solver).
* **Balance** (Alg. 1, first test): a node with more than k positives or more than u - k
  negatives among its assigned labels is pruned before any training. A node where the balance
  leaves one completion only (k positives reached, or u - k negatives) jumps straight to that
  leaf. With ``lookahead=True`` the balance also enters the bound: every completion gives each
  free point one label, so it costs at least ``max_x lb_{y_x}(x)`` over the per-point
  look-ahead bounds, minimized over the labelings with the right number of positives
  (:func:`solvers._bb_search._balanced_bottleneck`, a bottleneck assignment solved by sorting). A look-ahead bound
  cut short by a support vector whose multiplier reaches 0 is continued along the path without
  it where that could reach the incumbent (:func:`_bb_kernels._refine`).
* **Fixing** (``fixing=True``, not in the paper): a free point whose other label alone would
  lift the look-ahead bound to the incumbent keeps the label it has in every better completion,
  so all such labels are added before branching and both children inherit them.
* **Branching** (NIPS eqs. 7-8, Proposition 1): the point and label that would raise s(L) the
  most, ``argmax_{x in U, y} max(0, 1 - y f(x))^2 / (2 S_x + 1/C*)`` with
  ``S_x = K(x,x) - v^T M^{-1} v`` the Schur complement of x against the bordered support-vector
  matrix ``M = [[K_sv + I/(2C), 1], [1^T, 0]]``; the maximizing y is always ``-sign f(x)``, so
  the point with the largest ``(1 + |f(x)|)^2 / (2 S_x + 1/C*)`` is branched on and its most
  likely label ``sign f(x)`` explored first (depth first).
* **Incremental retraining** (NIPS Sec. 6). The L2-SVM of a child is the parent's plus one
  term, so it is re-solved by the finite Newton method of ``solvers._primal.kernel_newton``
  warm-started at the parent's optimum, but each Newton point comes from a kept Cholesky factor
  ``L L^T = K_SS + diag(1/(2 c_S))`` of the support-vector block, extended by the bordered
  Cholesky step when support vectors enter and refactored only from the first removed row on
  when they leave -- ``O(n_sv^2)`` per entering point instead of a fresh ``O(n_sv^3)``
  factorization, and backward stable (the rounding error of an explicitly updated inverse grows
  with every update). A child whose new point lands outside the margin (``y f(x) >= 1``)
  costs nothing: the parent's solution is already optimal. The factor is rebuilt from scratch
  only when the residual of the Newton system exceeds 1e-6 (``n_refactor`` counts those
  rebuilds and the fallbacks of the Newton loop). This arithmetic is compiled with numba
  (:mod:`solvers._bb_kernels`): a Coil3 node has about 50 support vectors and 130 free points,
  too little work per array call for NumPy (what it saves is in ``reports/DIFFERENCES.md``, "The
  search").

The lower bound reported when a limit stops the search is the smallest of the incumbent, the
bounds of the pruned nodes and the bounds of the parts of the tree still waiting on the stack
(a node with both children pending contributes its own bound; one whose first child has been
searched contributes the bound of its second child -- solved then, with its s(L) and node
bound -- or nothing if the balance rules that child out), so ``lower_bound <= optimum <=
objective`` always holds. Those pending parts are returned as the result's ``frontier`` (a
partial labeling and a bound each), and ``branch_and_bound(frontier=..., initial_labels=...)``
resumes the search on exactly them, so a long proof can be run in pieces: the lower bound of the
whole problem is then the minimum of the last piece's ``lower_bound`` and the ``closed_bound`` of
every piece before it.

:func:`brute_force` enumerates every balanced labeling of a tiny problem with an independent
code path (a cold :func:`solvers._primal.kernel_newton` per labeling): an exact reference to check
a search against.

The tree search and the incremental L2-SVM of its nodes are in :mod:`solvers._bb_search`, the
search shared out over processes (:func:`parallel_branch_and_bound`) in :mod:`solvers._bb_parallel`.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np

from ._balance import check_r, estimate_r, n_positive, threshold_to_count
from ._base import BaseS3VM, BinaryFit
from ._kernels import linear_kernel
from . import _bb_kernels as _kern
from ._bb_kernels import warm_up
from ._bb_parallel import parallel_branch_and_bound
from ._bb_search import _Search
from ._primal import kernel_newton
from ._validation import InstanceOf, Interval, check_int, check_kernel_matrix, check_positive

__all__ = ["BBResult", "BranchAndBoundS3VM", "BruteForceResult", "branch_and_bound", "brute_force",
           "parallel_branch_and_bound", "s3vm_objective", "warm_up"]

_MEMORY_BUDGET = 2e9  # bytes: worst case of one Cholesky factor per tree level


@dataclass
class BBResult:
    """Outcome of :func:`branch_and_bound`.

    Attributes
    ----------
    labels : ndarray of shape (u,)
        Best labeling found of the unlabeled points (+-1, in the order of ``y == 0``); it has
        exactly ``n_pos`` positives.
    objective : float
        J(labels), the L2-SVM objective of the completed set (the incumbent).
    lower_bound : float
        A certified lower bound on the optimum (equal to ``objective`` up to ``gap_tol`` when
        ``status == "optimal"``).
    gap : float
        ``(objective - lower_bound) / objective``.
    status : {"optimal", "node_limit", "time_limit"}
    nodes : int
        Nodes explored (L2-SVMs solved), root and leaves included; balance-pruned children,
        which need no training, are counted in ``n_pruned_balance`` only.
    seconds : float
    coef, intercept, outputs
        The L2-SVM of ``labels``: expansion coefficients over all n points, bias, outputs on them.
    n_leaves, n_pruned_bound, n_pruned_balance, n_refactor, max_depth : int
    found_at_node : int
        Node count when the returned labeling was found (0: the initial labeling was optimal).
    initial_upper_bound : float
        J of the initial labeling (``inf`` if none was given).
    frontier : list of (ndarray, float)
        What a limit left unsearched (empty when ``status == "optimal"``): per pending node, its
        partial labeling of the unlabeled points (int8: +-1 assigned, 0 free) and the bound
        already proved for its subtree, in stack order (the deepest last).
        ``branch_and_bound(frontier=...)`` searches exactly these subtrees.
    closed_bound : float
        The smallest bound over the part of the tree this search closed (pruned nodes and
        leaves; ``inf`` if none): ``lower_bound`` is its minimum with the frontier's bounds, and
        a resumed search's ``lower_bound`` bounds the whole problem once its minimum is taken
        with the ``closed_bound`` of the searches before it.
    """

    labels: np.ndarray
    objective: float
    lower_bound: float
    gap: float
    status: str
    nodes: int
    seconds: float
    coef: np.ndarray = field(repr=False)
    intercept: float = 0.0
    outputs: np.ndarray = field(repr=False, default=None)
    n_leaves: int = 0
    n_pruned_bound: int = 0
    n_pruned_balance: int = 0
    n_refactor: int = 0
    max_depth: int = 0
    found_at_node: int = 0
    initial_upper_bound: float = math.inf
    frontier: list = field(default_factory=list, repr=False)
    closed_bound: float = math.inf


def _check_problem(K, y, n_pos, C, C_star):
    K = check_kernel_matrix(K)
    y = np.asarray(y, dtype=np.float64).ravel()
    if y.size != K.shape[0]:
        raise ValueError(f"y has {y.size} entries but K is {K.shape[0]} x {K.shape[0]}")
    if not np.all(np.isin(y, (-1.0, 0.0, 1.0))):
        raise ValueError("y must hold +1/-1 on labeled points and 0 on unlabeled ones")
    if not ((y > 0).any() and (y < 0).any()):
        raise ValueError("label at least one point of each class (+1 and -1) in y")
    u = int(np.sum(y == 0))
    if u == 0:
        raise ValueError("no unlabeled point (y == 0): there is nothing to label")
    n_pos = check_int(n_pos, "n_pos", 0)
    if n_pos > u:
        raise ValueError(f"n_pos = {n_pos} exceeds the {u} unlabeled points")
    return K, y, u, n_pos, check_positive(C, "C"), check_positive(C_star, "C_star")


def _check_frontier(frontier, u, n_pos):
    """``frontier`` as (float labels, float bound) pairs, checked (see branch_and_bound)."""
    parts = []
    for i, item in enumerate(frontier):
        try:
            part, bound = item
            bound = float(bound)
        except (TypeError, ValueError):
            raise ValueError(f"frontier[{i}] must be a (partial labeling, bound) pair, as in BBResult.frontier") \
                from None
        part = np.asarray(part, dtype=np.float64).ravel()
        if part.size != u or not np.all(np.isin(part, (-1.0, 0.0, 1.0))):
            raise ValueError(f"frontier[{i}] must be {u} values in {{-1, 0, +1}} (one per unlabeled point, 0 = free)")
        if np.sum(part > 0) > n_pos or np.sum(part < 0) > u - n_pos:
            raise ValueError(f"frontier[{i}] has {int(np.sum(part > 0))} positives and {int(np.sum(part < 0))} "
                             f"negatives; the balance constraint allows {n_pos} and {u - n_pos}")
        parts.append((part, bound))
    return parts


def s3vm_objective(K, y, labels, C, C_star):
    """J(y_u) (NIPS 2006 eq. 3): the L2-SVM objective with the unlabeled points labeled ``labels``."""
    y_full = y.copy()
    y_full[y == 0] = labels
    cost = np.where(y == 0, C_star, C)
    return kernel_newton(K, y_full, cost)


def branch_and_bound(K, y, n_pos, C, C_star, *, gap_tol=1e-9, node_limit=None, time_limit=None,
                     initial_labels=None, branching="nips", lookahead=True, fixing=True, frontier=None) -> BBResult:
    """Globally minimize the S3VM objective over balanced labelings (NIPS 2006, Alg. 1).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix of all points (labeled and unlabeled, any order).
    y : array_like of shape (n,)
        +1/-1 on labeled points, 0 on unlabeled ones (both classes must be labeled).
    n_pos : int
        Number of unlabeled points labeled +1 (the balance constraint, NIPS eq. 2: ``u r``).
    C, C_star : float
        Costs of the labeled and unlabeled squared hinge losses.
    gap_tol : float, default=1e-9
        Relative tolerance: a node is pruned when its bound is >= ``ub (1 - gap_tol)``, so an
        ``"optimal"`` result is within a factor ``1 - gap_tol`` of the optimum (NIPS Sec. 8:
        "prune B if a < b - eps").
    node_limit : int or None
        Stop after this many nodes (status ``"node_limit"``).
    time_limit : float or None
        Stop after this many seconds (status ``"time_limit"``). The final lower bound then
        solves the pending child of every half-searched node on the stack (one warm-started
        L2-SVM per tree level, not counted in ``nodes``), which can add a fraction of a second.
    initial_labels : array_like of shape (u,), optional
        A balanced labeling from another solver; its objective is the initial upper bound.
    branching : {"nips", "bound", "product"}, default="nips"
        ``"nips"``: NIPS 2006 eq. 7 (largest increase of s(L) for the unlikely label, likely
        label first); ``"bound"``: the point whose worse child has the largest look-ahead bound;
        ``"product"``: the largest product of the two children's look-ahead bound gains over
        s(L) (the product rule of MIP branching). All rules are exact. "product" is for proving
        a good incumbent optimal (``initial_labels``): with the optimum as incumbent the rule
        alone sets the size of the tree, often smaller than with "nips" but not always, so neither
        rule dominates. Without a seed it explores ambiguous points first and finds good leaves
        late.
    lookahead : bool, default=True
        Use the dual look-ahead bounds of :meth:`solvers._bb_search._IncrementalL2SVM.lookahead`: a child whose
        bound reaches the incumbent is pruned without training, and a node is pruned on
        :func:`solvers._bb_search._balanced_bottleneck` of its free points' bounds. False is the paper's
        algorithm (s(L) only).
    fixing : bool, default=True
        With ``lookahead``: before branching, label at once every free point whose other label
        has a look-ahead bound at or above the incumbent (reduced-cost fixing, as in MIP
        solvers), and continue from that node. Exact: only completions that cannot beat the
        incumbent are given up (measurements in Notes).
    frontier : list of (array_like, float), optional
        Resume a search that a limit stopped: its result's ``frontier`` (partial labelings of the
        unlabeled points, 0 = free, with the bound proved for each subtree, which keeps pruning
        it). Only the subtrees below these nodes are searched, deepest first as the stopped
        search would have, so nothing is searched twice; each is solved afresh from the root
        (these solves count in ``nodes`` but not against ``node_limit``). Pass the stopped
        search's labeling as ``initial_labels``; the returned ``lower_bound`` bounds the optimum
        over these subtrees only (see :class:`BBResult` ``closed_bound``).

    Returns
    -------
    BBResult

    Notes
    -----
    The cost of the search on the shipped Coil3 problems, and the stronger bounds that were tried
    and found too weak to ship, are recorded in ``reports/DIFFERENCES.md`` ("Branch and bound: the
    search and its cost").
    """
    K, y, u, n_pos, C, C_star = _check_problem(K, y, n_pos, C, C_star)
    parts, gap_tol, node_limit, time_limit = _check_search(K, u, n_pos, frontier, branching, gap_tol, node_limit,
                                                           time_limit)
    _kern.warm_up()
    t0 = time.perf_counter()
    init_val, incumbent = _initial_incumbent(K, y, u, n_pos, C, C_star, initial_labels)
    search = _Search(K, y, u, n_pos, C, C_star, gap_tol=gap_tol, branching=branching, lookahead=lookahead,
                     fixing=fixing)
    if incumbent is not None:
        search.set_incumbent(*incumbent)
    search.solve_root()
    if parts is None:
        search.consider(search.root, search.y_root, 0, 0, 0)
        resolved = 0
    else:
        resolved = search.resume(parts)
    status = search.run(node_limit, time_limit, t0, resolved)  # Alg. 1's depth-first search
    return _search_result(search, K, y, n_pos, C, C_star, status, t0, init_val)


def _check_search(K, u, n_pos, frontier, branching, gap_tol, node_limit, time_limit):
    """Validated ``(frontier parts, gap_tol, node_limit, time_limit)`` of :func:`branch_and_bound`;
    ValueError also when the factors of a depth-u search would not fit in :data:`_MEMORY_BUDGET`."""
    parts = None if frontier is None else _check_frontier(frontier, u, n_pos)
    if branching not in ("nips", "bound", "product"):
        raise ValueError(f"branching must be 'nips', 'bound' or 'product', got {branching!r}")
    gap_tol = float(gap_tol)
    if not 0.0 <= gap_tol < 1.0:
        raise ValueError(f"gap_tol must be in [0, 1), got {gap_tol!r}")
    node_limit = None if node_limit is None else check_int(node_limit, "node_limit", 1)
    time_limit = None if time_limit is None else check_positive(time_limit, "time_limit")
    n = K.shape[0]
    if u * n * n * 8.0 > _MEMORY_BUDGET:
        raise ValueError(f"branch and bound keeps one support-vector Cholesky factor per tree level: n = {n} points "
                         f"with u = {u} unlabeled may need {u * n * n * 8 / 1e9:.1f} GB. It is meant for "
                         "problems of a few hundred points (NIPS 2006); subsample the data")
    return parts, gap_tol, node_limit, time_limit


def _initial_incumbent(K, y, u, n_pos, C, C_star, initial_labels):
    """``(initial upper bound, incumbent)`` from a balanced labeling of another solver, or
    ``(inf, None)`` without one; the incumbent is ``(labels, objective, (beta, b, outputs))``."""
    if initial_labels is None:
        return math.inf, None
    init = np.asarray(initial_labels, dtype=np.float64).ravel()
    if init.size != u or not np.all(np.isin(init, (-1.0, 1.0))):
        raise ValueError(f"initial_labels must be {u} values in {{-1, +1}} (one per unlabeled point)")
    if int(np.sum(init > 0)) != n_pos:
        raise ValueError(f"initial_labels has {int(np.sum(init > 0))} positives; the balance constraint "
                         f"asks for {n_pos}")
    res = s3vm_objective(K, y, init, C, C_star)
    init_val = float(res.objective)
    return init_val, (init.copy(), init_val, (res.coef, res.intercept, res.outputs))


def _search_result(search, K, y, n_pos, C, C_star, status, t0, init_val) -> BBResult:
    """The :class:`BBResult` of a search that stopped with ``status``.

    The lower bound is the least of the closed subtrees' (the incumbent and the pruned bounds)
    and of the bounds of what is left on the stack (:meth:`solvers._bb_search._Search.pending`, which becomes the
    resumable ``frontier``); with nothing left the search is complete. If a limit struck before
    any leaf, the deepest node is completed by thresholding its outputs to ``n_pos`` positives,
    so that a feasible labeling (and a finite upper bound) is always returned.
    """
    open_parts = [p for p in map(search.pending, search.stack) if p is not None]
    if not open_parts:
        status = "optimal"  # the limit struck when nothing was left to search: the search is complete
    closed = min(search.best_val, search.pruned_min)
    lower = min([closed] + [b for b, _ in open_parts])
    best_labels, best_val, best_state = search.best_labels, search.best_val, search.best_state
    if best_labels is None:
        deepest = search.stack[-1].state if search.stack else search.root
        labels = threshold_to_count(deepest.f[search.unl], n_pos)
        res = s3vm_objective(K, y, labels, C, C_star)
        best_labels, best_val, best_state = labels, float(res.objective), (res.coef, res.intercept, res.outputs)
    gap = (best_val - lower) / abs(best_val) if best_val else 0.0
    beta, b, f = best_state
    return BBResult(labels=best_labels, objective=float(best_val), lower_bound=float(lower), gap=float(max(gap, 0.0)),
                    status=status, nodes=search.nodes, seconds=time.perf_counter() - t0, coef=np.asarray(beta),
                    intercept=float(b), outputs=np.asarray(f), n_leaves=search.leaves,
                    n_pruned_bound=search.pruned_bound, n_pruned_balance=search.pruned_balance,
                    n_refactor=search.svm.n_refactor, max_depth=search.max_depth, found_at_node=search.found_at,
                    initial_upper_bound=init_val,
                    frontier=[(part.astype(np.int8), float(bound)) for bound, part in open_parts],
                    closed_bound=float(closed))


@dataclass
class BruteForceResult:
    """Outcome of :func:`brute_force`: the best labeling, its objective and how many were tried."""

    labels: np.ndarray
    objective: float
    n_labelings: int
    objectives: np.ndarray = field(repr=False)


def brute_force(K, y, n_pos, C, C_star, *, max_labelings=200_000) -> BruteForceResult:
    """The exact optimum by enumerating every balanced labeling (an exact reference for tiny problems).

    Each labeling is scored by a cold :func:`solvers._primal.kernel_newton` solve, a code path
    independent of :func:`branch_and_bound`'s incremental updates. ``comb(u, n_pos)`` labelings:
    about 13000 for u = 16.

    Raises
    ------
    ValueError
        More than ``max_labelings`` balanced labelings (raise the cap knowingly, or use
        :func:`branch_and_bound`).
    """
    K, y, u, n_pos, C, C_star = _check_problem(K, y, n_pos, C, C_star)
    total = math.comb(u, n_pos)
    if total > max_labelings:
        raise ValueError(f"{total} balanced labelings of {u} unlabeled points exceed max_labelings = "
                         f"{max_labelings}; brute force is for tiny problems (u <= about 16)")
    best, best_val = None, math.inf
    vals = np.empty(total)
    for i, pos in enumerate(itertools.combinations(range(u), n_pos)):
        labels = -np.ones(u)
        labels[list(pos)] = 1.0
        vals[i] = s3vm_objective(K, y, labels, C, C_star).objective
        if vals[i] < best_val:
            best, best_val = labels, float(vals[i])
    return BruteForceResult(labels=best, objective=best_val, n_labelings=total, objectives=vals)


class BranchAndBoundS3VM(BaseS3VM):
    """Branch and bound S3VM (NIPS 2006, Alg. 1): the globally optimal balanced labeling.

    Solves the S3VM with quadratic hinge loss (JMLR 2008 eq. 4, p = 2) exactly over all labelings
    of the unlabeled points with ``round(u r)`` positives; see :func:`branch_and_bound` and the
    module docstring for the bound, the branching rule and the incremental retraining. The
    returned model is the L2-SVM of the optimal labeling. Exponential in the worst case: meant
    for problems of a few hundred points (2moons, Coil3), as a reference for other solvers.

    Parameters
    ----------
    kernel : {"rbf", "linear"}, default="rbf"
    sigma : float, default=1.0
        Gaussian width, ``exp(-||x - z||^2 / (2 sigma^2))``.
    C : float, default=1.0
    C_star : float or None, default=None
        None means C* = C (JMLR 2008 Sec. 5.2).
    r : float in (0, 1) or None, default=None
        Positive fraction of the unlabeled points (None: estimated from the labeled points).
    gap_tol : float, default=1e-9
        Relative optimality tolerance (see :func:`branch_and_bound`).
    node_limit : int or None, default=1_000_000
        Nodes per binary problem at most (status ``"node_limit"``).
    time_limit : float or None, default=600.0
        Seconds per binary problem at most (status ``"time_limit"``; the labeling is then the best
        found, not certified, and a ``ConvergenceWarning`` says so). None: no limit.
    init_solver : str or None, default=None
        A registered solver name (or ``"package.module:Class"``) whose thresholded labeling
        gives the initial upper bound (NIPS 2006 Sec. 6); None starts from ub = +inf.
    n_jobs : int, default=1
        Processes per binary problem (:func:`parallel_branch_and_bound`). The limits hold for
        the whole search of a problem, in wall-clock seconds and nodes of all processes.

    Attributes
    ----------
    assigned_labels_ : ndarray of shape (n_problems, n_unlabeled)
        The optimal +-1 labeling per binary problem.
    objective_, lower_bound_, gap_ : ndarray of shape (n_problems,)
    status_ : list of str
        ``"optimal"`` (within ``gap_tol``), ``"node_limit"`` or ``"time_limit"``.
    binary_fits_ : list of BinaryFit
        ``n_iter`` is the node count; ``info`` holds the :class:`BBResult` fields (``labels``,
        ``objective``, ``lower_bound``, ``gap``, ``status``, ``nodes``, ``seconds``, ...) and
        ``r``, ``n_positive``.

    References
    ----------
    .. [1] O. Chapelle, V. Sindhwani and S. S. Keerthi. Branch and bound for semi-supervised support vector
           machines. In *Advances in NIPS 19*, 2007.
    .. [2] O. Chapelle, V. Sindhwani and S. S. Keerthi. Optimization techniques for semi-supervised support
           vector machines. *Journal of Machine Learning Research*, 9:203-233, 2008.
    """

    balance = "threshold"
    _accepts_sparse = True
    _parameter_constraints: dict = {
        **BaseS3VM._parameter_constraints,
        "gap_tol": [Interval(Real, 0, 1, closed="left")],
        "node_limit": [Interval(Integral, 1, None, closed="left"), None],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "init_solver": [InstanceOf(str, "a solver name (str)"), None],
        "n_jobs": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None, gap_tol=1e-9, node_limit=1_000_000,
                 time_limit=600.0, init_solver=None, n_jobs=1):
        self.kernel = kernel
        self.sigma = sigma
        self.C = C
        self.C_star = C_star
        self.r = r
        self.gap_tol = gap_tol
        self.node_limit = node_limit
        self.time_limit = time_limit
        self.init_solver = init_solver
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Fit on labeled and unlabeled points (``y == -1`` marks unlabeled); see the class doc."""
        super().fit(X, y)
        fits = self.binary_fits_
        # A fully labeled y has nothing to search: its problem is the supervised one, optimal as solved.
        self.assigned_labels_ = np.vstack([f.info.get("labels", np.empty(0)) for f in fits])
        self.objective_ = np.array([f.info["objective"] for f in fits])
        self.lower_bound_ = np.array([f.info.get("lower_bound", f.info["objective"]) for f in fits])
        self.gap_ = np.array([f.info.get("gap", 0.0) for f in fits])
        self.status_ = [f.info.get("status", "optimal") for f in fits]
        return self

    def _initial_labels(self, X, y_pm, labeled, k, c_star):
        from . import get_solver  # lazy: the registry imports this module

        est = get_solver(self.init_solver)()
        names = est.get_params(deep=False)
        shared = {"kernel": self.kernel, "sigma": self.sigma, "C": self.C, "C_star": c_star}
        est.set_params(**{key: v for key, v in shared.items() if key in names})
        y01 = np.where(labeled, (y_pm > 0).astype(int), -1)
        if "r" in names:
            est.set_params(r=self.r if self.r is not None else None)
        est.fit(X, y01)
        return threshold_to_count(est.decision_function(X[~labeled]), k)

    def _fit_binary(self, X, y_pm, labeled, gram):
        c_star = float(self.C if self.C_star is None else self.C_star)
        u = int(np.sum(~labeled))
        r = check_r(estimate_r(y_pm[labeled]) if self.r is None else self.r)
        k = n_positive(u, r)
        K = gram if gram is not None else np.asarray(linear_kernel(X), dtype=np.float64)
        init = None if self.init_solver is None else self._initial_labels(X, y_pm, labeled, k, c_star)
        res = parallel_branch_and_bound(K, y_pm, k, float(self.C), c_star, n_jobs=self.n_jobs, gap_tol=self.gap_tol,
                                        node_limit=self.node_limit, time_limit=self.time_limit, initial_labels=init)
        coef = res.coef if gram is not None else np.asarray(X.T @ res.coef).ravel()
        info = {name: getattr(res, name) for name in res.__dataclass_fields__ if name not in ("coef", "outputs")}
        info.update(r=r, n_positive=k)
        return BinaryFit(coef=coef, intercept=res.intercept, n_iter=res.nodes, stop_reason=res.status, info=info)
