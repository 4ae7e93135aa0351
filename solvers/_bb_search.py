"""The depth-first search of branch and bound (NIPS 2006, Alg. 1) and the L2-SVMs of its nodes.

:class:`_Search` walks the tree of partial labelings of :func:`solvers.bb.branch_and_bound`
(bounds, balance, fixing, branching rules and the resumable frontier are described in
:mod:`solvers.bb`); :class:`_IncrementalL2SVM` solves the L2-SVM of each node warm-started from
its parent's, on a kept Cholesky factor of the support-vector block (NIPS 2006 Sec. 6), with the
compiled arithmetic of :mod:`solvers._bb_kernels`.
"""

from __future__ import annotations

import math
import time

import numpy as np

from . import _bb_kernels as _kern


def _f64(a):
    return np.ascontiguousarray(a, dtype=np.float64)



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
    not as an explicit inverse: bordering an inverse and downdating it by the Schur formula loses
    accuracy at every update on a Gram matrix close to rank one, such as Coil3's Gaussian Gram
    matrix (sigma = 3000).
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
