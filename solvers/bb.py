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
  (:func:`_balanced_bottleneck`, a bottleneck assignment solved by sorting). A look-ahead bound
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
  factorization, and backward stable (an explicitly updated inverse drifted from 1e-14 to 1e-7
  in 20 updates on Coil3). A child whose new point lands outside the margin (``y f(x) >= 1``)
  costs nothing: the parent's solution is already optimal. The factor is rebuilt from scratch
  only when the residual of the Newton system exceeds 1e-6 (``n_refactor`` counts those
  rebuilds and the fallbacks of the Newton loop). This arithmetic is compiled with numba
  (:mod:`solvers._bb_kernels`): a Coil3 node has about 50 support vectors and 130 free points,
  too little work per array call for NumPy (4.4-5.7x fewer seconds on five certified Coil3
  problems, same node counts).

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
code path (a cold :func:`solvers._primal.kernel_newton` per labeling); it is the test oracle.
"""

from __future__ import annotations

import itertools
import math
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np

from ._balance import check_r, estimate_r, n_positive, threshold_to_count
from ._base import BaseS3VM, BinaryFit
from ._kernels import linear_kernel
from . import _bb_kernels as _kern
from ._bb_kernels import warm_up
from ._primal import kernel_newton
from ._validation import InstanceOf, Interval, check_int, check_kernel_matrix, check_positive

__all__ = ["BBResult", "BranchAndBoundS3VM", "BruteForceResult", "branch_and_bound", "brute_force",
           "parallel_branch_and_bound", "s3vm_objective", "warm_up"]

_MEMORY_BUDGET = 2e9  # bytes: worst case of one Cholesky factor per tree level


def _f64(a):
    return np.ascontiguousarray(a, dtype=np.float64)


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


class _State:
    """An L2-SVM optimum on a node's labeled set: support set, Cholesky factor, coefficients, outputs."""

    __slots__ = ("S", "L", "beta", "b", "f", "value", "look")

    def __init__(self, S, L, beta, b, f, value):
        self.S, self.L, self.beta, self.b, self.f, self.value = S, L, beta, b, f, value
        # (score, lb_pos, lb_neg) over all n points, computed once per distinct state: a child
        # that leaves the SVM unchanged shares its parent's state and hence these arrays.
        self.look = None


class _IncrementalL2SVM:
    """L2-SVMs on growing labeled subsets of one Gram matrix (NIPS 2006 Sec. 6).

    The Newton system of a support set S is ``A_S = K_SS + diag(1/(2 c_S))`` bordered by the
    bias row. It is kept as the lower Cholesky factor ``A_S = L L^T`` (rows in the order of S),
    not as an explicit inverse: bordering the inverse and downdating it by the Schur formula
    (an earlier scheme) lost about one digit per update on Coil3, whose Gaussian Gram matrix
    (sigma = 3000) is close to rank one, so the inverse had to be rebuilt at 10-40% of the nodes.
    A factor is updated by the backward-stable bordered Cholesky step when points enter, and
    when points leave only its trailing block (the rows after the first removed position) is
    refactored from the exact Gram entries, so round-off does not accumulate along a path.
    The arithmetic is in the compiled kernels of :mod:`solvers._bb_kernels`.
    """

    def __init__(self, K, cost):
        self.K = np.ascontiguousarray(K, dtype=np.float64)
        self.n = K.shape[0]
        self.kdiag = np.ascontiguousarray(np.diag(K))
        self.cost = np.ascontiguousarray(cost, dtype=np.float64)
        self.ridge = 1.0 / (2.0 * self.cost)
        self.n_refactor = 0

    def _factor(self, S):
        """Fresh lower Cholesky factor of ``A_S``."""
        return _kern.factor(self.K, self.ridge, np.asarray(S, dtype=np.int64))

    def _grow(self, S, L, J):
        """Append the points J to the factor of ``A_S`` (see :func:`solvers._bb_kernels.grow`)."""
        S, L, r = _kern.grow(self.K, self.ridge, np.asarray(S, dtype=np.int64), np.ascontiguousarray(L),
                             np.asarray(J, dtype=np.int64))
        self.n_refactor += r
        return S, L

    def _shrink(self, S, L, keep):
        """Drop the positions ``~keep`` from the factor (see :func:`solvers._bb_kernels.shrink`)."""
        S, L, r = _kern.shrink(self.K, self.ridge, np.asarray(S, dtype=np.int64), np.ascontiguousarray(L),
                               np.asarray(keep, dtype=np.bool_))
        self.n_refactor += r
        return S, L

    def empty(self):
        return _State(np.empty(0, np.int64), np.empty((0, 0)), np.zeros(self.n), 0.0, np.zeros(self.n), 0.0)

    def add(self, st: _State, y, new):
        """Optimum for the labels ``y`` (0 = not in the set), which extend ``st``'s set by ``new``.

        Finite Newton with exact line search (as :func:`solvers._primal.kernel_newton`),
        warm-started at ``st``: the parent optimum is the exact starting point, and a point
        entering outside the margin leaves it optimal (``st`` is returned unchanged).
        """
        changed, S, L, beta, b, f, value, r = _kern.add(self.K, self.ridge, self.cost, _f64(y), st.S, st.L, st.beta,
                                                        float(st.b), st.f, np.asarray(new, dtype=np.int64))
        if not changed:
            return st
        self.n_refactor += r
        return _State(S, L, beta, b, f, value)

    def lookahead(self, st: _State, y, U, c_star, level=math.inf):
        """Branching scores (NIPS 2006 eqs. 7-8) and dual lower bounds of both children, per x in U.

        Returns ``(score, lb_pos, lb_neg)``: ``score`` is Proposition 1's increase of s(L) for
        the unlikely label, ``(1 + |f(x)|)^2 / (2 S_x + 1/C*)``; ``lb_pos``/``lb_neg`` are
        certified lower bounds on s(L + {x, +1}) and s(L + {x, -1}).

        The bounds follow NIPS 2006 Sec. 4 (any dual-feasible point bounds the SVM objective
        from below): the dual of the child, ``D(beta) = y^T beta - 1/2 beta^T (K + diag(1/(2c)))
        beta`` over ``y_i beta_i >= 0`` and ``1^T beta = 0``, is evaluated along the ray of
        Proposition 1, ``beta_S = beta*_S + tau delta``, ``beta_x = tau`` with ``delta`` the
        bordered solve ``M [delta; .] = -[K_Sx; 1]``. It is concave in tau with curvature
        ``S_x + 1/(2C*)``; its maximum is eq. (8) exactly, and the step is shortened to the
        first support vector whose ``y_i beta_i`` reaches 0, so the point stays dual feasible
        and the value is a valid bound whether or not the support set would change. Where that
        cut keeps a bound below ``level`` (the prune level) while the uncut maximum would reach
        it, the path goes on past the support vectors it drops (:func:`_bb_kernels._refine`).
        """
        return _kern.lookahead(self.K, self.kdiag, self.ridge, st.S, st.L, st.beta, float(st.b), st.f,
                               float(st.value), _f64(y), np.asarray(U, dtype=np.int64), float(c_star), float(level))


def _balanced_bottleneck(lb_pos, lb_neg, k):
    """Lower bound on every balanced completion of a node from per-point child bounds.

    Parameters
    ----------
    lb_pos, lb_neg : ndarray of shape (m,)
        Lower bounds on s(L + {x, +1}) and s(L + {x, -1}) for the m still-unlabeled points x
        (:meth:`_IncrementalL2SVM.lookahead`).
    k : int
        Positives the balance constraint (NIPS 2006 eq. 2) still asks for among them.

    Returns
    -------
    float
        ``min_y max_x lb_{y_x}(x)`` over the labelings y of the m points with exactly k positives.

    Notes
    -----
    Validity. Let y complete the node (k positives among the free points). For every free x,
    the S3VM objective J(y) is the L2-SVM objective on a labeled set containing L + {x, y_x};
    adding squared-hinge terms can only raise the minimum, so J(y) >= s(L + {x, y_x}) >=
    lb_{y_x}(x). Hence J(y) >= max_x lb_{y_x}(x) >= the min of that over all such y.

    This is at least the look-ahead bound ``max_x min(lb_pos, lb_neg)`` (each x must take one
    label) and larger when the balance forces labels: when the node's SVM predicts 5 positives
    and 69 are needed, at least 64 predicted negatives must turn positive, and the bound is at
    least the 64th smallest of their lb_pos rather than the cheaper label of a single point.

    Computation. A value tau is attainable iff some y has lb_{y_x}(x) <= tau for all x: every
    x needs an allowed label, the points allowed +1 only must number <= k and those allowed -1
    only <= m - k (the points allowed both fill up the count). Attainability is monotone in
    tau and the minimum is one of the 2m bounds: a binary search over them, O(m log m).
    """
    return float(_kern.balanced_bottleneck(np.ascontiguousarray(lb_pos, dtype=np.float64),
                                           np.ascontiguousarray(lb_neg, dtype=np.float64), int(k)))


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


class _Frame:
    """A branched node of the search tree waiting on the stack (a call of NIPS 2006 Alg. 1).

    Alg. 1 is recursive: a node calls itself on its two children in turn. The iterative search
    keeps one frame per node whose children are not all launched; ``next_child`` says how far
    that node's loop over its children has got.

    Attributes
    ----------
    state : _State
        The node's L2-SVM optimum on its labeled set (s(L) is ``state.value``).
    y : ndarray of shape (n,)
        Labels of the node: +-1 on the labeled points and the assigned unlabeled ones, 0 on the
        free ones.
    npos, nneg : int
        Positives and negatives among the assigned unlabeled points.
    x : int
        The branching point (an index into ``y``), from :meth:`_Search.branch`.
    first : float
        The label of ``x`` searched first (+1 or -1); the second child gets ``-first``.
    next_child : int
        0: neither child launched; 1: the first child launched (its subtree is in the frames
        above), the second pending; 2: both launched.
    depth : int
        Assigned unlabeled points at the node (fixed labels included): the depth in the tree.
    bound : float
        The lower bound proved for the node's whole subtree (s(L), the balanced bottleneck bound
        and any inherited bound).
    child_bounds : tuple of float
        Look-ahead lower bounds on s(L) of the children ``(x, +1)`` and ``(x, -1)``.
    """

    __slots__ = ("state", "y", "npos", "nneg", "x", "first", "next_child", "depth", "bound", "child_bounds")

    def __init__(self, state, y, npos, nneg, x, first, depth, bound, child_bounds):
        self.state, self.y, self.npos, self.nneg = state, y, npos, nneg
        self.x, self.first, self.next_child = x, first, 0
        self.depth, self.bound, self.child_bounds = depth, bound, child_bounds

    def child_bound(self, label):
        """The look-ahead bound of the child that labels ``x`` with ``label``."""
        return self.child_bounds[0] if label > 0 else self.child_bounds[1]


class _Search:
    """The state of one branch-and-bound search (NIPS 2006, Alg. 1) on one S3VM problem.

    Holds the problem, the incremental L2-SVM solver, the incumbent (upper bound ``ub``), the
    stack of :class:`_Frame` and the counters of :class:`BBResult`. :meth:`run` is the loop of
    Alg. 1; :meth:`consider` bounds a freshly solved node, :meth:`branch` chooses its branching
    point (NIPS eqs. 7-8, Proposition 1) and node bound, :meth:`fix_labels` adds the labels the
    look-ahead bounds force, :meth:`pending` turns what a limit left into the frontier.
    """

    def __init__(self, K, y, u, n_pos, C, C_star, *, gap_tol, branching, lookahead, fixing):
        self.u, self.n_pos, self.C_star = u, n_pos, C_star
        self.gap_tol, self.branching, self.lookahead, self.fixing = gap_tol, branching, lookahead, fixing
        self.unl = np.flatnonzero(y == 0)
        self.lab = np.flatnonzero(y != 0)
        self.n = K.shape[0]
        self.svm = _IncrementalL2SVM(K, np.where(y == 0, C_star, C))
        # The incumbent: labels of the unlabeled points, J, (beta, b, f), node count when found.
        self.best_labels, self.best_val, self.best_state, self.found_at = None, math.inf, None, 0
        self.nodes, self.leaves, self.pruned_bound, self.pruned_balance, self.max_depth = 1, 0, 0, 0, 0
        self.pruned_min = math.inf  # the smallest bound of a pruned subtree
        self.stack = []
        self.y_root = np.where(y == 0, 0.0, y)
        self.root = None

    def set_incumbent(self, labels, value, model):
        """Start from a known labeling (``initial_labels``): ``ub = J(labels)``."""
        self.best_labels, self.best_val, self.best_state = labels, value, model

    def solve_root(self):
        """The root: the L2-SVM on the labeled points only."""
        self.root = self.svm.add(self.svm.empty(), self.y_root, self.lab)

    def prune_level(self):
        """``ub (1 - gap_tol)``: a subtree whose lower bound reaches it is pruned (NIPS Sec. 8)."""
        best_val = self.best_val
        return best_val - self.gap_tol * abs(best_val) if math.isfinite(best_val) else math.inf

    def pruned(self, bound):
        """Count a subtree closed by its lower bound ``bound``."""
        self.pruned_bound += 1
        self.pruned_min = min(self.pruned_min, bound)

    def branch(self, state, y_node, npos):
        """The branching point, its first label and the node's lower bound.

        The look-ahead of :meth:`_IncrementalL2SVM.lookahead` (computed once per distinct state)
        gives each free point a score and the bounds of its two children. The rule
        ``self.branching`` picks the point: ``"nips"`` the largest increase of s(L) for the
        unlikely label (NIPS eqs. 7-8, Proposition 1), its likely label ``sign f(x)`` first;
        ``"product"`` the largest product of the two children's bound gains over s(L) (the
        product rule of MIP strong branching, Achterberg, Koch and Martin 2005; gains floored
        so that a zero gain does not tie every point); ``"bound"`` the point whose worse child is
        best bounded. Both of the latter search the better-bounded label first. The node's bound
        is s(L), raised with ``lookahead`` to :func:`_balanced_bottleneck` of the free points.

        Returns
        -------
        x : int
        first : float
        bound : float
        child_bounds : tuple of float
            Look-ahead bounds of the children ``(x, +1)`` and ``(x, -1)``.
        """
        U = self.unl[y_node[self.unl] == 0]
        if state.look is None:
            look = np.full((3, self.n), -np.inf)
            look[:, U] = self.svm.lookahead(state, y_node, U, self.C_star,
                                            self.prune_level() if self.lookahead else math.inf)
            state.look = look
        score, lbp, lbn = state.look[0, U], state.look[1, U], state.look[2, U]
        if self.branching == "nips":
            i = int(np.argmax(score))
            first = 1.0 if state.f[U[i]] >= 0.0 else -1.0
        elif self.branching == "product":
            v = state.value
            eps = 1e-6 * max(abs(v), 1.0)
            i = int(np.argmax(np.maximum(lbp - v, eps) * np.maximum(lbn - v, eps)))
            first = 1.0 if lbp[i] <= lbn[i] else -1.0
        else:  # "bound"
            i = int(np.argmax(np.minimum(lbp, lbn)))
            first = 1.0 if lbp[i] <= lbn[i] else -1.0
        if self.lookahead:
            bound = max(state.value, _balanced_bottleneck(lbp, lbn, self.n_pos - npos))
        else:
            bound = state.value
        return U[i], first, bound, (lbp[i], lbn[i])

    def make_child(self, y_node, x, label, cpos, cneg):
        """Labels of the child ``(x, label)``, the points it adds, and its counts ``cpos, cneg``."""
        y_child = y_node.copy()
        y_child[x] = label
        return self.balance_jump(y_child, np.array([x]), cpos, cneg)

    def balance_jump(self, y_child, new, cpos, cneg):
        """A child completed at once when the balance (NIPS eq. 2) leaves it one completion.

        With ``n_pos`` positives (or ``u - n_pos`` negatives) assigned, every free point takes
        the other label: the child is that leaf, and its added points ``new`` include them.
        """
        unl = self.unl
        rest = unl[y_child[unl] == 0]
        if rest.size and (cpos == self.n_pos or cneg == self.u - self.n_pos):
            y_child[rest] = -1.0 if cpos == self.n_pos else 1.0
            new = np.r_[new, rest]
            cpos, cneg = self.n_pos, self.u - self.n_pos
        return y_child, new, cpos, cneg

    def fix_labels(self, state, y_node, npos, nneg):
        """The node with every label its look-ahead bounds force, solved; None if none is forced.

        A free x with ``lb_pos(x) >= ub`` is -1 in every completion of the node that beats the
        incumbent (and +1 when ``lb_neg(x) >= ub``), so all such labels are added at once and the
        node is replaced by that child: the reduced-cost fixing of MIP (not in NIPS 2006). Both
        labels cannot be forced, nor more than the balance allows: the node's bottleneck bound
        would have reached the incumbent.

        Returns
        -------
        (state, y, npos, nneg) or None
        """
        U = self.unl[y_node[self.unl] == 0]
        lvl = self.prune_level()
        lbp, lbn = state.look[1, U], state.look[2, U]
        neg, pos = lbp >= lvl, lbn >= lvl
        if not (neg.any() or pos.any()):
            return None
        y_child = y_node.copy()
        y_child[U[neg]] = -1.0
        y_child[U[pos]] = 1.0
        y_child, new, cpos, cneg = self.balance_jump(y_child, U[neg | pos], npos + int(pos.sum()),
                                                     nneg + int(neg.sum()))
        # The completions given up are bounded by the smallest bound of a forced-out label.
        self.pruned(min(lbp[neg].min(initial=math.inf), lbn[pos].min(initial=math.inf)))
        self.nodes += 1
        return self.svm.add(state, y_child, new), y_child, cpos, cneg

    def consider(self, state, y_node, npos, nneg, depth, inherited=-math.inf):
        """Bound a freshly solved node (Alg. 1): prune it, take it as the incumbent, or push it.

        The node is pruned when s(L) or its node bound (:meth:`branch`) reaches the prune
        level; a leaf that is not pruned beats the incumbent and replaces it; otherwise, with
        ``fixing``, the labels its bounds force are added (:meth:`fix_labels`) and the resulting
        child is considered in its place, and finally a :class:`_Frame` is pushed for branching.
        ``inherited`` is a bound already known for the node's subtree (a resumed frontier
        node's, or the parent's when fixing replaced the node by its child).
        """
        u = self.u
        while True:
            if max(state.value, inherited) >= self.prune_level():
                return self.pruned(max(state.value, inherited))
            if npos + nneg == u:
                self.leaves += 1
                self.best_val, self.best_labels = state.value, y_node[self.unl].copy()
                self.best_state, self.found_at = (state.beta, state.b, state.f), self.nodes
                return
            x, first, bound, child_bounds = self.branch(state, y_node, npos)
            bound = max(bound, inherited)
            if bound >= self.prune_level():
                return self.pruned(bound)
            fixed = self.fix_labels(state, y_node, npos, nneg) if self.fixing and self.lookahead else None
            if fixed is None:
                break
            (state, y_node, npos, nneg), depth, inherited = fixed, depth + 1, bound
        self.stack.append(_Frame(state, y_node, npos, nneg, x, first, depth, bound, child_bounds))
        self.max_depth = max(self.max_depth, depth)

    def resume(self, parts):
        """Push the frontier ``parts`` of a stopped search, each solved afresh from the root.

        Returns the nodes solved to resume (the root and each part), which are not charged to
        ``node_limit``.
        """
        resolved = 1
        root, y_root, unl = self.root, self.y_root, self.unl
        for part, inherited in parts:  # in stack order: the deepest pending node ends on top
            if inherited >= self.prune_level():
                self.pruned(inherited)  # the incumbent reached its bound: no need to solve it again
                continue
            y_node = y_root.copy()
            y_node[unl] = part
            npos, nneg = int(np.sum(part > 0)), int(np.sum(part < 0))
            self.nodes += 1
            resolved += 1
            self.consider(self.svm.add(root, y_node, unl[part != 0]), y_node, npos, nneg, npos + nneg, inherited)
        return resolved

    def run(self, node_limit, time_limit, t0, resolved):
        """The search loop of NIPS 2006 Alg. 1, depth first on an explicit stack.

        The frame on top is the node being searched. Once both its children are launched, or
        once the incumbent has improved to its bound, it is popped. Otherwise its next child
        ``(x, first)``, then ``(x, -first)``, is launched: pruned without training when it
        breaks the balance (Alg. 1, first test) or when its look-ahead bound reaches the
        incumbent, and else solved incrementally from the parent (NIPS Sec. 6) and passed to
        :meth:`consider`, which bounds it and pushes its frame above the parent's.

        Returns
        -------
        status : {"optimal", "node_limit", "time_limit"}
            ``"optimal"`` when the stack is empty; otherwise the limit that stopped the search
            with frames left on the stack.
        """
        stack, svm = self.stack, self.svm
        n_pos, n_neg, lookahead = self.n_pos, self.u - self.n_pos, self.lookahead
        while stack:
            if node_limit is not None and self.nodes - resolved >= node_limit:
                return "node_limit"
            if time_limit is not None and time.perf_counter() - t0 >= time_limit:
                return "time_limit"
            fr = stack[-1]
            if fr.next_child == 2:
                stack.pop()
                continue
            if fr.bound >= self.prune_level():
                # The incumbent improved below this node's bound: its unexplored children go too.
                self.pruned(fr.bound)
                stack.pop()
                continue
            label = fr.first if fr.next_child == 0 else -fr.first
            fr.next_child += 1
            cpos, cneg = fr.npos + (label > 0), fr.nneg + (label < 0)
            if cpos > n_pos or cneg > n_neg:
                self.pruned_balance += 1
                continue
            if lookahead:
                child_lb = fr.child_bound(label)
                if child_lb >= self.prune_level():
                    self.pruned(child_lb)  # its dual bound already exceeds the incumbent: no training
                    continue
            y_child, new, cpos, cneg = self.make_child(fr.y, fr.x, label, cpos, cneg)
            self.nodes += 1
            self.consider(svm.add(fr.state, y_child, new), y_child, cpos, cneg, fr.depth + 1)
        return "optimal"

    def pending(self, fr):
        """The part of a frame not yet searched: ``(its bound, its partial labeling)``, or None.

        A frame with neither child launched contributes its own bound; one whose first child is
        launched contributes its second child, solved here (one warm-started L2-SVM, not counted
        in ``nodes``) and bounded as if it were about to be searched -- its s(L), look-ahead
        bound and node bound hold for its whole subtree and can be far above the parent's, which
        would otherwise pin the reported bound near the root's -- or nothing when the balance
        rules that child out.
        """
        if fr.next_child == 0:
            return fr.bound, fr.y[self.unl]
        if fr.next_child == 2:
            return None  # both children launched: their parts are in the frames above
        label = -fr.first
        cpos, cneg = fr.npos + (label > 0), fr.nneg + (label < 0)
        if cpos > self.n_pos or cneg > self.u - self.n_pos:
            return None
        y_child, new, cpos, cneg = self.make_child(fr.y, fr.x, label, cpos, cneg)
        child = self.svm.add(fr.state, y_child, new)
        out = max(fr.bound, child.value)
        if self.lookahead:
            out = max(out, fr.child_bound(label))
            if cpos + cneg < self.u:
                out = max(out, self.branch(child, y_child, cpos)[2])
        return out, y_child[self.unl]


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
        Use the dual look-ahead bounds of :meth:`_IncrementalL2SVM.lookahead`: a child whose
        bound reaches the incumbent is pruned without training, and a node is pruned on
        :func:`_balanced_bottleneck` of its free points' bounds. False is the paper's
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
    and of the bounds of what is left on the stack (:meth:`_Search.pending`, which becomes the
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

_WORKER = {}


def _worker_init(K, y, n_pos, C, C_star, options):
    """Pool initializer of :func:`parallel_branch_and_bound`: the problem, and warm kernels."""
    _WORKER.update(K=K, y=y, n_pos=n_pos, C=C, C_star=C_star, options=options)
    _kern.warm_up()


def _search_part(part, bound, incumbent, node_limit, time_limit):
    w = _WORKER
    return branch_and_bound(w["K"], w["y"], w["n_pos"], w["C"], w["C_star"], frontier=[(part, bound)],
                            initial_labels=incumbent, node_limit=node_limit, time_limit=time_limit, **w["options"])


def parallel_branch_and_bound(K, y, n_pos, C, C_star, *, n_jobs=2, chunk_nodes=5_000, gap_tol=1e-9,
                              node_limit=None, time_limit=None, initial_labels=None, branching="nips",
                              lookahead=True, fixing=True, frontier=None) -> BBResult:
    """:func:`branch_and_bound` on ``n_jobs`` processes: the tree is shared out in pieces.

    The search starts in this process; when ``chunk_nodes`` nodes have not closed it, its
    pending subtrees (the ``frontier``) go to a queue, and each worker takes the deepest
    subtree, searches it for at most ``chunk_nodes`` nodes from the best labeling known (the
    resume of :func:`branch_and_bound`), and puts back what it left unsearched. Every subtree
    keeps the bound proved for it, so the result is exact as the serial search is, with the same
    guarantees (``lower_bound <= optimum <= objective``); only the order of the search, hence the
    node count and, among ties, the returned labeling, depend on timing. Workers learn of a
    better incumbent when they take their next subtree.

    Parameters
    ----------
    n_jobs : int, default=2
        Worker processes (1: the serial :func:`branch_and_bound`).
    chunk_nodes : int, default=5000
        Nodes per piece of work: about 0.4 s on Coil3. Each piece first solves the root and its
        subtree's node again (two warm-started L2-SVMs, counted in ``nodes``). On Coil3 splits
        1, 4 and 5 on two processes, 5000 took 8.8 / 4.8 / 12.0 s against 11.0 / 6.0 / 12.8 s
        with 20000 and 13.8 / 6.6 / 20.9 s serially: a problem ends serially while it has fewer
        nodes than this.
    gap_tol, node_limit, time_limit, initial_labels, branching, lookahead, fixing, frontier
        As in :func:`branch_and_bound`; ``node_limit`` and ``time_limit`` hold for the whole
        search (the pieces running when a limit strikes finish theirs first, within the limit).

    Returns
    -------
    BBResult
        ``seconds`` is the wall time, the workers' start included (process creation and
        loading the compiled kernels: a fraction of a second); ``frontier`` is what the limits
        left, resumable by either function; ``max_depth`` is the deepest over the pieces and
        ``found_at_node`` the node count when the piece that found the returned labeling ended.
    """
    n_jobs = check_int(n_jobs, "n_jobs", 1)
    chunk_nodes = check_int(chunk_nodes, "chunk_nodes", 1)
    options = dict(gap_tol=gap_tol, branching=branching, lookahead=lookahead, fixing=fixing)
    if n_jobs == 1:
        return branch_and_bound(K, y, n_pos, C, C_star, node_limit=node_limit, time_limit=time_limit,
                                initial_labels=initial_labels, frontier=frontier, **options)
    node_limit = None if node_limit is None else check_int(node_limit, "node_limit", 1)
    time_limit = None if time_limit is None else check_positive(time_limit, "time_limit")
    _kern.warm_up()
    t0 = time.perf_counter()
    first = chunk_nodes if node_limit is None else min(chunk_nodes, node_limit)
    best = branch_and_bound(K, y, n_pos, C, C_star, node_limit=first, time_limit=time_limit,
                            initial_labels=initial_labels, frontier=frontier, **options)
    if best.status == "optimal" or best.status == "time_limit" or first == node_limit:
        return best  # closed, or stopped by the caller's own limit
    K, y = np.asarray(K, dtype=np.float64), np.asarray(y, dtype=np.float64).ravel()  # checked by the first search
    shared = _SharedSearch(best, gap_tol, node_limit, time_limit, t0)
    status = "optimal"
    with ProcessPoolExecutor(n_jobs, initializer=_worker_init, initargs=(K, y, n_pos, C, C_star, options)) as pool:
        running = {}
        while True:
            status = shared.hand_out(pool, running, n_jobs, chunk_nodes) or status
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                del running[fut]
                shared.merge(fut.result())
    return shared.result(status)


class _SharedSearch:
    """The search of :func:`parallel_branch_and_bound` between pieces.

    It holds the best result so far, the queue of pending subtrees with the bound proved for
    each (the ``frontier`` of the pieces), the least bound of the subtrees closed so far and the
    counts summed over the pieces.
    """

    def __init__(self, first, gap_tol, node_limit, time_limit, t0):
        self.best, self.gap_tol, self.node_limit, self.time_limit, self.t0 = first, gap_tol, node_limit, time_limit, t0
        self.queue = list(first.frontier)
        self.closed, self.nodes = first.closed_bound, first.nodes
        self.totals = {k: getattr(first, k) for k in ("n_leaves", "n_pruned_bound", "n_pruned_balance", "n_refactor")}
        self.max_depth, self.found_at, self.initial_ub = first.max_depth, first.found_at_node, first.initial_upper_bound

    def level(self):
        """The prune level: a subtree whose bound reaches it cannot beat the incumbent (``gap_tol``)."""
        return self.best.objective - self.gap_tol * abs(self.best.objective)

    def left(self):
        """The nodes and seconds still allowed (None: no limit; <= 0: spent)."""
        n_left = None if self.node_limit is None else self.node_limit - self.nodes
        t_left = None if self.time_limit is None else self.time_limit - (time.perf_counter() - self.t0)
        return n_left, t_left

    def hand_out(self, pool, running, n_jobs, chunk_nodes):
        """Submit queued subtrees, last queued first, until ``n_jobs`` pieces run (``running``: future
        -> bound); a subtree whose bound reaches the incumbent is closed instead.  Returns the
        limit that stopped handing out work, ``"node_limit"`` or ``"time_limit"``, or None."""
        while self.queue and len(running) < n_jobs:
            n_left, t_left = self.left()
            if n_left is not None and n_left <= 0:
                return "node_limit"
            if t_left is not None and t_left <= 0:
                return "time_limit"
            part, bound = self.queue.pop()
            if bound >= self.level():
                self.closed = min(self.closed, bound)
                continue
            limit = chunk_nodes if n_left is None else max(1, min(chunk_nodes, n_left))
            running[pool.submit(_search_part, part, bound, self.best.labels, limit, t_left)] = bound
        return None

    def merge(self, r):
        """Take in the result ``r`` of a piece: its counts, its labeling if better, its closed
        bound, and what it left unsearched (queued)."""
        self.nodes += r.nodes
        for k in self.totals:
            self.totals[k] += getattr(r, k)
        self.max_depth = max(self.max_depth, r.max_depth)
        if r.objective < self.best.objective:
            self.best, self.found_at = r, self.nodes
        self.closed = min(self.closed, r.closed_bound)
        self.queue.extend(r.frontier)

    def result(self, status) -> BBResult:
        """The :class:`BBResult` of the whole search, stopped with ``status``."""
        best, closed = self.best, self.closed
        for _, bound in self.queue:
            if bound >= self.level():  # closed by an incumbent found after the part was queued
                closed = min(closed, bound)
        queue = [(part, bound) for part, bound in self.queue if bound < self.level()]
        if not queue:
            status = "optimal"
        lower = min([closed, best.objective] + [b for _, b in queue])
        gap = (best.objective - lower) / abs(best.objective) if best.objective else 0.0
        return BBResult(labels=best.labels, objective=best.objective, lower_bound=float(lower),
                        gap=float(max(gap, 0.0)), status=status, nodes=self.nodes,
                        seconds=time.perf_counter() - self.t0, coef=best.coef, intercept=best.intercept,
                        outputs=best.outputs, max_depth=self.max_depth, found_at_node=self.found_at,
                        initial_upper_bound=self.initial_ub, frontier=queue, closed_bound=float(closed),
                        **self.totals)

@dataclass
class BruteForceResult:
    """Outcome of :func:`brute_force`: the best labeling, its objective and how many were tried."""

    labels: np.ndarray
    objective: float
    n_labelings: int
    objectives: np.ndarray = field(repr=False)


def brute_force(K, y, n_pos, C, C_star, *, max_labelings=200_000) -> BruteForceResult:
    """The exact optimum by enumerating every balanced labeling (a test oracle for tiny problems).

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
