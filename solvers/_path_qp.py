"""The conditionally optimal solution of S3VM-path: the convex problem (5) by an active-set method.

Ogawa, Imamura, Takeuchi, Sugiyama, *Infinitesimal Annealing for Training Semi-Supervised
Support Vector Machines*, ICML 2013. With the labels y^ of the unlabeled points fixed, the
conditionally optimal solution (Definition 1, eq. 5) minimizes the hinge-loss objective (1)
over the polytope ``pol(y^) = {f : y^_i f_i >= 0, i in U}`` (eq. 6). S3VM-path solves it at
the start of the path (Alg. 1, the SVM on the labeled points) and after every flip of a DJ
step (Alg. 3); :func:`conditional_optimum` does it by a primal active-set method on the dual,
warm-started from the solution before the flip.

The index-set codes :data:`O`, :data:`M`, :data:`I`, :data:`Z` of the dual variables
``theta_i = y_i alpha_i`` are those of the CP step too (:mod:`solvers._path`).
"""

from __future__ import annotations

import numpy as np

from ._path_linalg import _CholeskyQ, _kdot

#: Index-set codes of the dual variables theta_i = y_i alpha_i (ICML 2013 Sec. 5, "CP step"):
#: O: theta = 0 (t >= 1); M: 0 <= theta <= c free, t = 1; I: theta = c (t <= 1);
#: Z: unlabeled point on the polytope's boundary, t = 0, theta >= c.
O, M, I, Z = 0, 1, 2, 3


def conditional_optimum(K, y, cost, b, unlabeled, theta0=None, status0=None, *, tol=1e-9,
                        max_iter=None, t0=None):
    """Conditionally optimal solution in pol(y) (ICML 2013 Definition 1, eq. 5).

    Minimizes the dual ``1/2 theta'Q theta - sum_i h_i(theta_i)``, ``Q = diag(y) K diag(y)``,
    with ``h_i(theta) = theta (1 - y_i b)`` for ``theta <= cost_i`` and slope ``-y_i b`` beyond
    (unlabeled points only: the polytope multiplier), ``theta >= 0`` and ``theta <= cost`` on
    labeled points, by a primal active-set method: Newton steps on the free variables F (M:
    target t = 1; Z: target t = 0), shortened at the first bound; at a subspace optimum the
    most violated fixed variable is released. Every step of positive length lowers the dual;
    after a zero-length step (degenerate vertex) Bland's rule (smallest index) picks the
    blocking and the released variable, against cycling; ``max_iter`` bounds the loop.

    ``Q_FF`` is kept nonsingular and its Cholesky factor is updated as F changes
    (:class:`solvers._path_linalg._CholeskyQ`). A released variable whose column of Q is
    (numerically) in the span of F's columns would make ``Q_FF`` singular: then
    ``v = (-Q_FF^-1 Q_Fj, 1)`` satisfies ``Q v = 0`` up to round-off
    (``sum_i v_i y_i phi(x_i) = 0``), so moving theta along ``v`` leaves every output t
    unchanged and changes the dual linearly; it moves in the descent direction until a variable
    of F or j reaches a bound and leaves F. This is the usual treatment of singular reduced
    Hessians in active-set QP; the optimum (unique in the outputs f) is the same as with a
    minimum-norm Newton step, with fewer and cheaper iterations when the kernel has low
    numerical rank.

    Parameters
    ----------
    K : ndarray (n, n)
        Gram matrix.
    y : ndarray (n,)
        +-1 labels (the y^ on unlabeled points).
    cost : ndarray (n,)
        C on labeled points, C* on unlabeled ones.
    b : float
        The fixed bias.
    unlabeled : ndarray of bool (n,)
    theta0, status0 : ndarray, optional
        Warm start (feasible); default all zero / O.
    t0 : ndarray, optional
        Outputs ``y_i f_i`` of the warm start, if the caller has them (the DJ step updates them
        for the flipped points in ``O(n |S|)``); saves the initial ``O(n^2)`` product. They are
        not trusted as exact: the optimum is confirmed on exactly recomputed outputs.
    tol : float
        Tolerance on the optimality conditions, in units of t.
    max_iter : int, optional
        Active-set iterations (Newton steps, releases and null-direction moves) at most
        (default ``50 n + 100``); exceeding it raises ``RuntimeError``.

    Returns
    -------
    theta : ndarray (n,)
        The optimal dual variables ``theta_i = y_i alpha_i``.
    status : ndarray of int8 (n,)
        Index-set code of each variable (:data:`O`, :data:`M`, :data:`I`, :data:`Z`).
    t : ndarray (n,)
        Outputs ``y_i f_i``, recomputed exactly at the optimum.
    n_iter : int
        Active-set iterations.
    """
    return _ActiveSet(K, y, cost, b, unlabeled, theta0, status0, tol, max_iter, t0).solve()


class _ActiveSet:
    """State of one run of :func:`conditional_optimum` (see there for the method).

    ``theta`` and ``status`` are changed in place; ``t`` (the outputs ``y_i f_i``) is replaced
    at every move. ``exact`` says whether ``t`` was recomputed from theta since the last move,
    ``degenerate`` whether the last step had zero length (then Bland's rule, smallest index
    first among the blocking variables and among the violators, so that zero steps cannot
    cycle), and ``held`` lists the violators whose release found only a flat unbounded
    direction (:meth:`enter`).
    """

    def __init__(self, K, y, cost, b, unlabeled, theta0, status0, tol, max_iter, t0):
        n = y.size
        self.K, self.y, self.cost, self.b, self.unlabeled, self.tol = K, y, cost, b, unlabeled, tol
        self.theta = np.zeros(n) if theta0 is None else np.array(theta0, dtype=float)
        self.status = np.full(n, O, dtype=np.int8) if status0 is None else np.array(status0, dtype=np.int8)
        self.max_iter = 50 * n + 100 if max_iter is None else int(max_iter)
        self.yb = y * b
        self.fac = _CholeskyQ(K, y)
        self.it, self.exact, self.degenerate = 0, True, False
        if t0 is None:
            self.t = self.exact_t()
        else:
            self.t, self.exact = np.array(t0, dtype=float), False
        self.held = []

    # ----------------------------------------------------------------- elementary operations
    def first(self, lim, idx):
        """The blocking variable: the smallest step; under Bland's rule, the smallest index among ties."""
        k = int(np.argmin(lim))
        if self.degenerate:
            tie = np.flatnonzero(lim <= lim[k])
            k = int(tie[np.argmin(idx[tie])])
        return k

    def exact_t(self):
        """The outputs ``t = y f`` recomputed from theta (``O(n |theta != 0|)``)."""
        nz = np.flatnonzero(self.theta)
        return self.yb + self.y * _kdot(self.K, nz, self.y[nz] * self.theta[nz])

    def tick(self):
        """Count an iteration; ``RuntimeError`` beyond ``max_iter``."""
        self.it += 1
        if self.it > self.max_iter:
            raise RuntimeError(f"conditional_optimum: no convergence in {self.max_iter} active-set iterations")

    def move(self, idx, dth, free=False):
        """``theta[idx] += dth``; t moves with the changed block only: ``O(n |F|)``, not a full
        product; for ``idx = F`` (``free=True``) from the factor's contiguous rows."""
        y = self.y
        self.theta[idx] += dth
        w = y[idx] * dth
        self.t = self.t + y * (self.fac.kdot(w) if free else _kdot(self.K, idx, w))
        self.exact = False

    def to_bound(self, i, up):
        """A variable leaving F: Z points and rising M points stop at their cost, falling M at 0."""
        if self.status[i] == Z or up:
            self.theta[i], self.status[i] = self.cost[i], I
        else:
            self.theta[i], self.status[i] = 0.0, O

    def drop(self, i):
        """Remove i from the factor of ``Q_FF``; rebuild the factor if the update fails."""
        fac = self.fac
        if not fac.remove(i):
            self.rebuild(fac.idx[fac.idx != i])

    def rebuild(self, members):
        """Factor F afresh, entering the free variables among ``members`` one at a time."""
        self.fac.refactor(np.empty(0, dtype=np.intp))
        for i in members:
            if self.status[i] in (M, Z) and not self.enter(i):
                raise RuntimeError("conditional_optimum: a free variable could not be refactored into the free set")

    # ----------------------------------------------------------------- releasing a variable
    def enter(self, j):
        """Make j (status M or Z) free: border the factor, or move along the null direction.

        Returns
        -------
        bool
            False when j could not be released (a flat, unbounded null direction).
        """
        while True:
            ok, r = self.fac.add(j)
            if ok:
                return True
            self.tick()
            done = self._null_move(j, r)
            if done is not None:
                return done

    def _null_move(self, j, r):
        """One move along the null direction ``v = (-Q_FF^-1 Q_Fj, 1)`` (``Q v = 0``) of j.

        Moves in the descent direction of the dual until a variable of F or j reaches a bound.

        Returns
        -------
        bool or None
            True if j reached its bound (it stays fixed, the release is done), False if the
            direction is flat and unbounded (j stays fixed, see below), None if a variable of F
            left it (try to border the factor with j again).
        """
        fac, status, tol = self.fac, self.status, self.tol
        F = fac.idx
        idx = np.append(F, j)
        v = np.append(-fac.null_direction(r), 1.0) if F.size else np.ones(1)
        g = self.t[idx] - np.where(status[idx] == Z, 0.0, 1.0)
        slope = g[-1] if abs(g[-1]) > tol else g @ v
        v = v if slope < 0 else -v                       # descent: the dual changes by slope * step
        th, c, isz = self.theta[idx], self.cost[idx], status[idx] == Z
        with np.errstate(divide="ignore", invalid="ignore"):
            lim = np.where(v < 0, np.where(isz, (th - c) / -v, th / -v),
                           np.where(isz | (v == 0), np.inf, (c - th) / v))
        lim = np.maximum(lim, 0.0)
        k = self.first(lim, idx)
        if not np.isfinite(lim[k]):
            # Only boundary (Z) points move, all upwards, leaving every output unchanged.
            # Along v the dual changes by b sum_i v_i y_i exactly (Qv = 0): if that is < 0,
            # no f satisfies y_i f_i >= 0 on these points (pol(y) is empty); otherwise the
            # dual is flat and the violation of j is round-off, magnified by the large
            # multipliers of dependent boundary points: leave j fixed.
            if self.b * (v @ self.y[idx]) < -tol * np.abs(v).sum():
                raise RuntimeError("conditional_optimum: pol(y) is empty (the dual is unbounded)")
            return False
        self.move(idx, lim[k] * v)
        self.degenerate = lim[k] == 0.0
        i = int(idx[k])
        self.to_bound(i, v[k] > 0)
        if i == j:
            return True
        self.drop(i)
        return None

    # ----------------------------------------------------------------- the iterations
    def _newton_step(self, free) -> bool:
        """Newton step on the free variables toward their targets, shortened at the first bound.

        Returns False (no step) when the free variables are at their targets (subspace optimum).
        """
        status, theta = self.status, self.theta
        isz = status[free] == Z
        g = self.t[free] - np.where(isz, 0.0, 1.0)                    # targets: t = 0 on Z, 1 on M
        if not np.max(np.abs(g)) > self.tol:
            return False
        d = self.fac.solve(-g)
        th = theta[free]
        # Step to the first bound along d: an M point falling to 0 (-th / d), a Z point
        # falling to its cost or an M point rising to its cost ((c - th) / d); a rising
        # Z point has no bound. Ratios only where they apply (no division by 0).
        rise = d > 0
        num = np.where(isz | rise, self.cost[free] - th, -th)
        lim = np.full(free.size, np.inf)
        np.divide(num, d, out=lim, where=(d < 0) | (rise & ~isz))
        np.maximum(lim, 0.0, out=lim)
        j = self.first(lim, free)
        step = min(1.0, lim[j])
        self.degenerate = step == 0.0
        self.move(free, step * d, free=True)
        if step < 1.0:
            i = int(free[j])
            self.to_bound(i, d[j] > 0)
            self.drop(i)
        return True

    def _violators(self):
        """The fixed variables that violate Lemma 3 (8a-8f; boundary t >= 0), not held.

        Returns
        -------
        bad : ndarray of int
            Their indices (the held ones left out).
        viol : ndarray (n,)
            The largest violation of each fixed variable (0 if none).
        to_z : ndarray of bool (n,)
            The release target is the boundary (t = 0) rather than the margin.
        """
        status, t = self.status, self.t
        isI = status == I
        g = t - 1.0                                         # 1 - t is -(t - 1) exactly
        viol = np.maximum(np.where(status == O, -g, np.where(isI, g, 0.0)), 0.0)  # O needs t >= 1, I t <= 1
        z = np.where(isI & self.unlabeled, -t, 0.0)         # ... and t >= 0 on unlabeled points
        to_z = z > viol
        viol = np.where(to_z, z, viol)
        bad = np.flatnonzero(viol > self.tol)
        if self.held:
            bad = bad[~np.isin(bad, self.held)]
        return bad, viol, to_z

    def solve(self):
        """Iterate until no fixed variable violates the optimality conditions on exact outputs.

        Returns
        -------
        theta, status, t, n_iter
            As :func:`conditional_optimum`.
        """
        free0 = np.flatnonzero((self.status == M) | (self.status == Z))
        if not self.fac.refactor(free0):
            self.rebuild(free0)
        while True:
            self.tick()
            free = self.fac.idx
            if free.size and self._newton_step(free):
                continue
            # Subspace optimal: check the fixed variables.
            bad, viol, to_z = self._violators()
            if bad.size == 0:
                if self.exact:
                    return self.theta, self.status, self.t, self.it
                # Confirm the optimum on exactly recomputed outputs (no drift), then re-check.
                self.t, self.exact = self.exact_t(), True
                continue
            # Release the most violated one only: with a kernel of low numerical rank most
            # violators are dependent on F, and releasing them all costs one null-direction move
            # each (fourclass, C = 100: 5444 iterations instead of 715 one at a time).
            j = int(bad[0] if self.degenerate else bad[np.argmax(viol[bad])])
            back, self.status[j] = self.status[j], (Z if to_z[j] else M)
            if self.enter(j):
                self.held.clear()
            else:
                self.status[j] = back
                self.held.append(j)
