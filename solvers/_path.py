"""The path-following steps of S3VM-path: the CP step, the DJ step and the path they trace.

Ogawa, Imamura, Takeuchi, Sugiyama, *Infinitesimal Annealing for Training Semi-Supervised
Support Vector Machines*, ICML 2013. :func:`s3vm_path` traces the conditionally optimal
solutions of the hinge-loss S3VM (eq. 1/4, b fixed) over C* in [0, C_end] (Alg. 1):

* start (Alg. 1 lines 3-4, :func:`_start`): the SVM on the labeled points with the same fixed
  b (the problem at C* = 0), ``y^ = sgn f`` on U (``f = 0`` counts as +1);
* CP step (Alg. 2, :meth:`_PathTracer._direction` and :meth:`_PathTracer._next_event`): with
  the index sets O, M, I_l, I_u fixed, theta is linear in C*: ``d theta_{I_u} = 1``,
  ``Q_MM d theta_M = -Q_{M, I_u} 1`` (``Q = diag(y) K diag(y)``; b is fixed, so there is no
  equality constraint). The next event is found exactly: a point of M reaching 0 or its cost,
  a point of O or I reaching the margin, an unlabeled point of I_u reaching ``t = 0`` (the
  polytope boundary), or C* = C_end;
* DJ step (Alg. 3, :meth:`_PathTracer._boundary`): at the boundary, flip the labels of
  ``S = {i in U : f_i = 0}`` (eq. 10) and re-solve the convex problem (5) at the same C*,
  warm-started (:func:`solvers._path_qp.conditional_optimum`); repeat while the new solution
  touches the boundary. Theorem 5: each flip strictly lowers J.

The result is a :class:`PathResult`: knots (C*, alpha, labels, J, kind) with alpha linear in
C* between consecutive knots of a CP segment, and two knots at the same C* around each jump
(the right one is the local optimum).

Between events theta and t are updated linearly and recomputed exactly from the index sets
(:func:`_exact_state`) every ``refresh`` events and at every boundary, so round-off does not
accumulate along long paths; after a DJ re-solve, whose outputs are already exact, theta_M is
snapped in ``O(n |M|)`` (:func:`_exact_state_from`). Ties between events are taken one at a
time; a zero-length step is allowed (degenerate vertices), and ``max_events`` bounds the loop.
The Cholesky factor of ``Q_MM`` is updated as one point enters or leaves M
(:class:`solvers._path_linalg._CholeskyQ`); a singular ``Q_MM`` (duplicated points) falls back
to the minimum-norm solve.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ._path_linalg import _CholeskyQ, _kdot, _solve_spd
from ._path_qp import I, M, O, Z, conditional_optimum


def hinge_objective(K, alpha, b, y, cost) -> float:
    """ICML 2013 eq. (1): ``1/2 alpha'K alpha + sum_i cost_i [1 - y_i f_i]_+``, ``f = b + K alpha``."""
    Ka = K @ alpha
    return float(0.5 * alpha @ Ka + cost @ np.maximum(0.0, 1.0 - y * (b + Ka)))


def _objective_from_t(alpha, t, y, b, cost) -> float:
    # alpha'K alpha = alpha'(f - b) with f = y t: no extra kernel product.
    return float(0.5 * alpha @ (y * t - b) + cost @ np.maximum(0.0, 1.0 - t))



@dataclass
class PathResult:
    """The S3VM path of one binary problem.

    ``knots`` rows are in path order; between knot k and k+1 with ``c_star[k] < c_star[k+1]``
    the coefficients are linear in C*; two knots with the same C* bracket a jump (DJ step).
    """

    c_star: np.ndarray            # (m,)
    alpha: np.ndarray             # (m, n) expansion coefficients over the training points
    y_unlabeled: np.ndarray       # (m, u) int8 labels y^ in force at each knot
    objective: np.ndarray         # (m,) J(f, y^) at each knot (eq. 1)
    kind: np.ndarray              # (m,) "start", "event", "boundary", "jump", "flip" (at C* = 0), "end"
    intercept: np.ndarray         # (m,) intercept at each knot (constant b unless uncentered)
    C: float
    n_events: int = 0
    n_jumps: int = 0              # DJ steps (boundary hits)
    n_flips: int = 0              # labels flipped over all DJ steps
    n_qp_iter: int = 0            # active-set iterations (start + DJ re-solves)
    seconds: float = 0.0
    events: dict = field(default_factory=dict)
    jump_objectives: list = field(default_factory=list)  # per DJ step: J before, then after each flip

    def index_at(self, c_star: float) -> int:
        """Index of the knot from which the segment containing ``c_star`` starts."""
        c = float(c_star)
        if not self.c_star[0] <= c <= self.c_star[-1] * (1 + 1e-12):
            raise ValueError(f"C* = {c!r} is outside the path [{self.c_star[0]}, {self.c_star[-1]}]")
        return int(np.searchsorted(self.c_star, c, side="right") - 1)

    def _bracket(self, c_star: float):
        """(k, w): the value at ``c_star`` is ``(1 - w) * knot[k] + w * knot[k + 1]`` (w = 0 at a knot)."""
        k = self.index_at(c_star)
        c = float(c_star)
        if k == self.c_star.size - 1 or self.c_star[k] == c:
            return k, 0.0
        return k, (c - self.c_star[k]) / (self.c_star[k + 1] - self.c_star[k])

    def interpolate(self, values: np.ndarray, c_star: float):
        """Any per-knot quantity linear on the segments (rows of ``values``) at ``c_star``."""
        k, w = self._bracket(c_star)
        return values[k] if w == 0.0 else (1.0 - w) * values[k] + w * values[k + 1]

    def alpha_at(self, c_star: float) -> np.ndarray:
        """Coefficients at ``c_star``; at a jump, the solution after it (the local optimum)."""
        return np.array(self.interpolate(self.alpha, c_star), dtype=float)

    def intercept_at(self, c_star: float) -> float:
        """Intercept at ``c_star`` (linear between knots like the coefficients)."""
        return float(self.interpolate(self.intercept, c_star))

    def labels_at(self, c_star: float) -> np.ndarray:
        """The labels y^ in force at ``c_star``."""
        return self.y_unlabeled[self.index_at(c_star)].copy()


def _start(K, y, labeled, C, b, tol):
    """Alg. 1 lines 3-4: the fixed-b SVM on the labeled points; y^ = sgn f on U."""
    lab = np.flatnonzero(labeled)
    Kl = K[np.ix_(lab, lab)]
    yl = y[lab]
    th, st, _, it = conditional_optimum(Kl, yl, np.full(lab.size, C), b, np.zeros(lab.size, bool), tol=tol)
    theta = np.zeros(y.size)
    theta[lab] = th
    f = b + (yl * th) @ K[lab]
    y = y.copy()
    unl = ~labeled
    y[unl] = np.where(f[unl] >= 0, 1.0, -1.0)
    status = np.full(y.size, O, dtype=np.int8)
    status[lab] = st
    t = y * f
    status[unl] = np.where(t[unl] < 1.0, I, O)  # theta = 0 = C* either way
    return theta, status, y, t, it


def _exact_state(K, y, b, theta, status, cost):
    """Recompute theta_M (t_M = 1) and every t from the index sets (no accumulated drift)."""
    m = np.flatnonzero(status == M)
    fixed = np.flatnonzero(status == I)
    theta = np.where(status == O, 0.0, theta)
    theta[fixed] = cost[fixed]
    f_fixed = _kdot(K, fixed, y[fixed] * theta[fixed])    # outputs of the bounded part, all points
    if m.size:
        rhs = 1.0 - y[m] * b - y[m] * f_fixed[m]
        theta[m] = _solve_spd(K[np.ix_(m, m)] * np.outer(y[m], y[m]), rhs)
    t = y * b + y * (f_fixed + _kdot(K, m, y[m] * theta[m]))
    return theta, t


def _exact_state_from(K, y, b, theta, status, cost, t):
    """:func:`_exact_state` when ``t`` is already exact for ``theta`` (O(n |M|), no O(n^2) product).

    After a DJ re-solve, :func:`conditional_optimum` returns outputs it has just recomputed
    exactly. The outputs of the bounded part at M follow from them by removing M's own terms
    (``O(|M|^2)``), theta_M is re-solved from them as in :func:`_exact_state`, and t moves with the
    changed coefficients only (``O(n |M|)``; any bounded coefficient not exactly at its bound is
    set there and its change applied the same way).
    """
    m = np.flatnonzero(status == M)
    fixed = np.flatnonzero(status == I)
    new = np.where(status == O, 0.0, theta)
    new[fixed] = cost[fixed]
    moved = np.flatnonzero(new != theta)
    t = np.array(t, dtype=float)
    if moved.size:
        t += y * _kdot(K, moved, y[moved] * (new[moved] - theta[moved]))
    if m.size:
        ym = y[m]
        Qmm = K[np.ix_(m, m)] * np.outer(ym, ym)
        f_fixed_m = ym * t[m] - b - ym * (Qmm @ new[m])          # f_M without b and M's own terms
        rhs = 1.0 - ym * b - ym * f_fixed_m
        th_m = _solve_spd(Qmm, rhs)
        t += y * _kdot(K, m, ym * (th_m - new[m]))
        new[m] = th_m
    return new, t



def s3vm_path(K, y_pm, C, b, *, c_end=None, tol=1e-9, max_events=None, refresh=50):
    """Trace the S3VM-path (ICML 2013 Alg. 1) over C* in [0, c_end].

    Parameters
    ----------
    K : ndarray (n, n)
        Gram matrix of the training points.
    y_pm : ndarray (n,)
        +-1 on labeled points, 0 on unlabeled ones.
    C : float
        Cost of the labeled losses.
    b : float
        Fixed bias (``2 r - 1``).
    c_end : float, optional
        Last C* (default C).
    tol : float
        Tolerance on t for the optimality conditions and the boundary test.
    max_events : int, optional
        Events (CP breakpoints plus jumps) at most (default ``20 n + 1000``); exceeding it raises
        ``RuntimeError``.
    refresh : int
        Exact recomputation of theta and t every ``refresh`` events.

    Returns
    -------
    PathResult
    """
    t0 = time.perf_counter()
    return _PathTracer(K, y_pm, C, b, c_end, tol, max_events, refresh).run(t0)


class _PathTracer:
    """State of one run of :func:`s3vm_path` along the path (ICML 2013 Alg. 1-3).

    The dual variables ``theta`` (``theta_i = y_i alpha_i``), the outputs ``t`` (``t_i =
    y_i f_i``), the labels ``y`` (y^ on U, flipped in place by the DJ step), the index-set codes
    ``status`` and the costs ``cost`` (C on L, C* on U) at the current ``c_star``. Two
    quantities of the CP step are kept along the events rather than recomputed:
    ``s_u = sum_{I_u} y_i K[i]``, updated as points enter or leave I_u (``s_u_age`` counts
    those updates since the last exact product, which is redone beyond ``refresh``; None:
    recompute), and the Cholesky factor ``fac`` of ``Q_MM`` (None: refactor, or ``Q_MM`` is
    singular and the minimum-norm solve is used until a fresh factor passes the pivot test).
    ``undo`` is the last (point, set) change, for degenerate vertices (:meth:`_next_event`).
    """

    def __init__(self, K, y_pm, C, b, c_end, tol, max_events, refresh):
        self.K = K = np.asarray(K, dtype=float)
        y_pm = np.asarray(y_pm, dtype=float)
        n = y_pm.size
        self.labeled = labeled = y_pm != 0
        self.unl = ~labeled
        self.uidx = np.flatnonzero(self.unl)
        self.C = C = float(C)
        self.b, self.tol, self.refresh = b, tol, refresh
        self.c_end = C if c_end is None else float(c_end)
        self.max_events = 20 * n + 1000 if max_events is None else int(max_events)
        self.theta, self.status, self.y, self.t, self.n_qp = _start(K, y_pm, labeled, C, b, tol)
        self.c_star = 0.0
        self.cost = np.where(labeled, C, 0.0)
        self.knots_c, self.knots_a, self.knots_y, self.knots_j, self.knots_kind = [], [], [], [], []
        self.jump_objectives = []
        self.counts = {"to_M": 0, "to_O": 0, "to_I": 0, "boundary": 0}
        self.n_events = self.n_jumps = self.n_flips = 0
        self.since_refresh = 0
        self.undo = self.s_u = None
        self.s_u_age = 0
        self.fac = None

    def record(self, kind):
        """Append a knot: the current C*, alpha, labels y^ on U, objective J (eq. 1) and ``kind``."""
        y = self.y
        alpha = y * self.theta
        self.knots_c.append(self.c_star)
        self.knots_a.append(alpha)
        self.knots_y.append(y[self.uidx].astype(np.int8))
        self.knots_j.append(_objective_from_t(alpha, self.t, y, self.b, self.cost))
        self.knots_kind.append(kind)

    def _exact(self):
        """Recompute theta_M and t exactly from the index sets (:func:`_exact_state`)."""
        self.theta, self.t = _exact_state(self.K, self.y, self.b, self.theta, self.status, self.cost)

    def run(self, t0):
        """Follow the path from C* = 0 to C_end; returns the :class:`PathResult` (timed from ``t0``)."""
        self.record("start")
        c_end = self.c_end
        while True:
            m, dm, dtheta, dt, eps = self._direction()
            j, delta, code_j = self._next_event(m, dm, dt, eps)
            last = self.c_star + delta >= c_end
            if last:
                delta = c_end - self.c_star
            self.theta = self.theta + delta * dtheta
            self.t = self.t + delta * dt
            self.c_star = self.c_star + delta
            self.cost[self.uidx] = self.c_star
            if last:
                self._exact()
                self.record("end")
                break
            self.n_events += 1
            if self.n_events > self.max_events:
                raise RuntimeError(f"s3vm_path: more than max_events={self.max_events} events before C* = {c_end}")
            if code_j != Z:
                self._change_set(j, code_j)
                self.record("event")
            else:
                self._boundary(j)
        knots_c = self.knots_c
        return PathResult(c_star=np.array(knots_c), alpha=np.vstack(self.knots_a), y_unlabeled=np.vstack(self.knots_y),
                          objective=np.array(self.knots_j), kind=np.array(self.knots_kind),
                          intercept=np.full(len(knots_c), float(self.b)), C=self.C,
                          n_events=self.n_events, n_jumps=self.n_jumps, n_flips=self.n_flips, n_qp_iter=self.n_qp,
                          seconds=time.perf_counter() - t0, events=self.counts, jump_objectives=self.jump_objectives)

    # ----------------------------------------------------------------- CP step (Alg. 2)
    def _direction(self):
        """Direction of theta and t per unit of C* with the index sets fixed (ICML 2013 Alg. 2).

        ``d theta_{I_u} = 1``, ``d theta_O = d theta_{I_l} = 0`` and ``Q_MM d theta_M =
        -Q_{M, I_u} 1``; the outputs move by ``dt = y (K[:, M] y_M d theta_M + s_u)``.

        Returns
        -------
        m : ndarray of int
            The points of M, in the order of the factor.
        dm : ndarray (|M|,) or None
            ``d theta_M`` (None when M is empty).
        dtheta, dt : ndarray (n,)
            Directions of theta and t.
        eps : float
            Slopes within ``eps`` of 0 count as 0 in the ratio test.
        """
        K, y, unl, status = self.K, self.y, self.unl, self.status
        if self.s_u is None:
            iu = np.flatnonzero((status == I) & unl)
            self.s_u, self.s_u_age = _kdot(K, iu, y[iu]), 0
        s_u = self.s_u
        dtheta = ((status == I) & unl).astype(float)   # d theta_{I_u} = 1, d theta_O = d theta_{I_l} = 0
        if self.fac is None:
            m = np.flatnonzero(status == M)
            self.fac = _CholeskyQ(K, y)
            if not self.fac.refactor(m):
                self.fac = None
        else:
            m = self.fac.idx
        fac = self.fac
        if not m.size:
            dt = y * s_u
            return m, None, dtheta, dt, 1e-12 * max(1.0, np.abs(dt).max())
        rhs = -y[m] * s_u[m]
        if fac is not None:
            dm = fac.solve(rhs)
            dt = y * (fac.kdot(y[m] * dm) + s_u)
        else:
            dm = np.linalg.lstsq(K[np.ix_(m, m)] * np.outer(y[m], y[m]), rhs, rcond=1e-10)[0]
            dt = y * (_kdot(K, m, y[m] * dm) + s_u)
        dtheta[m] = dm
        # |d theta| <= 1 on I_u is covered by the 1.0 of the max.
        eps = 1e-12 * max(1.0, np.abs(dt).max(), np.abs(dm).max())
        return m, dm, dtheta, dt, eps

    def _next_event(self, m, dm, dt, eps):
        """Next event (ICML 2013 Alg. 2): the smallest step Delta >= 0 in C*.

        Each point has at most one candidate (the directions exclude each other). The ratios
        are computed only where they are candidates (``where=``), so no division by a zero slope
        happens; the set a point would move to is worked out for the chosen point only.

        Returns
        -------
        j : int
            The point of the event.
        delta : float
            The step in C* (not yet cut at C_end).
        code_j : int
            The set j reaches (:data:`Z`: the polytope boundary, a DJ step follows).
        """
        status, t, unl = self.status, self.t, self.unl
        isO, isI = status == O, status == I
        isIu = isI & unl
        neg = dt < -eps
        ok_m = np.where(isO, neg, isI & (dt > eps))                    # O -> M, I -> M (t reaches 1)
        ok_z = isIu & neg                                               # I_u -> boundary (t = 0)
        cand = np.full(t.size, np.inf)
        np.divide(1.0 - t, dt, out=cand, where=ok_m)
        np.divide(-t, dt, out=cand, where=ok_z)
        if m.size:
            thm = self.theta[m]
            slope = dm - unl[m]                                          # theta - cost per unit C*
            cost_m = np.where(unl[m], self.c_star, self.C)
            to_o = np.full(m.size, np.inf)
            to_i = np.full(m.size, np.inf)
            np.divide(-thm, dm, out=to_o, where=dm < -eps)               # M -> O
            np.divide(cost_m - thm, slope, out=to_i, where=slope > eps)  # M -> I
            cand[m] = np.minimum(to_o, to_i)
        np.maximum(cand, 0.0, out=cand)

        def code_of(i):
            # The set point i reaches at its candidate step (O for a point without candidate).
            if status[i] == M:
                p = int(np.flatnonzero(m == i)[0])
                return O if to_o[p] <= to_i[p] else I
            return Z if ok_z[i] else (M if ok_m[i] else O)

        undo = self.undo
        if undo is not None and cand[undo[0]] == 0.0 and code_of(undo[0]) == undo[1]:
            # Degenerate vertex: the point that just changed set would change straight back at
            # zero step (a round-off-level slope). Let any other event go first.
            cand[undo[0]] = np.inf
        j = int(np.argmin(cand))
        return j, float(cand[j]), code_of(j)

    def _change_set(self, j, code_j):
        """Move point j to set ``code_j`` (O, M or I) at an event; update s_u and the factor of Q_MM."""
        status, y = self.status, self.y
        self.counts["to_" + "OMI"[code_j]] += 1
        self.undo = (j, int(status[j]))
        if self.unl[j] and (status[j] == I) != (code_j == I):
            self.s_u = self.s_u + (1.0 if code_j == I else -1.0) * y[j] * self.K[j]
            self.s_u_age += 1
        if self.fac is not None:
            # ICML 2013 Alg. 2: one point enters or leaves M per event; update the factor.
            if code_j == M:
                if not self.fac.add(j)[0]:
                    self.fac = None
            elif status[j] == M and not self.fac.remove(j):
                self.fac = None
        status[j] = code_j
        self.since_refresh += 1
        if self.since_refresh >= self.refresh:
            self._exact()
            self.since_refresh, self.s_u, self.fac = 0, None, None
        else:
            self.theta[j] = {O: 0.0, I: self.cost[j]}.get(int(code_j), self.theta[j])

    # ----------------------------------------------------------------- DJ step (Alg. 3)
    def _boundary(self, j):
        """The path reached the polytope's boundary at point j: DJ step (ICML 2013 Alg. 3) at this C*.

        At C* = 0 the labels of S (eq. 10) are flipped without a re-solve (no unlabeled cost
        yet: flipping changes nothing but the side the point leaves to); otherwise :meth:`_jump`.
        """
        self.counts["boundary"] += 1
        self._exact()
        self.record("boundary")
        S = np.flatnonzero(self.unl & (self.t <= self.tol))
        if S.size == 0:
            S = np.array([j])
        if self.c_star <= 0.0:
            self.y[S] = -self.y[S]
            self.t[S] = -self.t[S]
            self.n_flips += S.size
            self.undo = self.s_u = self.fac = None
            self.record("flip")
            return
        self.n_jumps += 1
        self._jump(S)

    def _jump(self, S):
        """Flip the labels of S (eq. 10) and re-solve (5) at the same C*, while the solution
        touches the boundary (ICML 2013 Alg. 3); Theorem 5: each flip strictly lowers J."""
        K, y, unl, b, tol = self.K, self.y, self.unl, self.b, self.tol
        seq = [self.knots_j[-1]]
        w_u = np.where((self.status == I) & unl, y, 0.0)   # s_u = K w_u (I_u and its labels before the jump)
        theta, status, t = self.theta, self.status, self.t
        while S.size:
            # Outputs of the warm start below without a full kernel product: f loses the terms
            # of S (O(n |S|)), and t = y f with the flipped labels.
            f = y * t - _kdot(K, S, y[S] * theta[S])
            y[S] = -y[S]                       # eq. (10)
            self.n_flips += S.size
            # Warm start: the flipped points restart at theta = 0 (feasible, f changes least).
            theta[S] = 0.0
            status[S] = O
            theta, status, t, it = conditional_optimum(K, y, self.cost, b, unl, theta, status, tol=tol, t0=y * f)
            self.n_qp += it
            seq.append(_objective_from_t(y * theta, t, y, b, self.cost))
            # eq. (10): S = {i in U : f_i = 0}. Points on the boundary with a positive multiplier
            # are Z; one whose multiplier happens to be zero (theta_i = C*, t_i = 0) is left in I,
            # and which of the two a degenerate boundary point gets depends on the (then not
            # unique) multipliers, not on f: take both.
            S = np.flatnonzero(unl & ((status == Z) | (t <= tol)))
            if self.n_flips > self.max_events:
                raise RuntimeError("s3vm_path: DJ step does not terminate (more flips than max_events)")
        # Z points have left; settle statuses of points exactly at bounds for the CP step.
        status[(status == Z)] = I
        # conditional_optimum returned exactly recomputed outputs: snap theta_M without a full product.
        self.theta, self.t = _exact_state_from(K, y, b, theta, status, self.cost, t)
        self.status = status
        self.since_refresh = 0
        # The jump changes I_u and the labels of few points: s_u follows in O(n |changed|).
        dw = np.where((status == I) & unl, y, 0.0) - w_u
        ch = np.flatnonzero(dw)
        self.s_u_age += ch.size
        self.s_u = self.s_u + _kdot(K, ch, dw[ch]) if self.s_u_age < self.refresh else None
        self.undo = self.fac = None
        self.jump_objectives.append(np.array(seq))
        self.record("jump")
