"""S3VM-path (ICML 2013): local optimality along the path, linearity, strict DJ descent."""

import numpy as np
import pytest
from scipy.linalg import solve_triangular
from scipy.optimize import minimize
from sklearn.exceptions import NotFittedError

from s3vm_bench.solvers import get_solver
import s3vm_bench.solvers._path as path_module
import s3vm_bench.solvers._path_qp as path_qp_module
from s3vm_bench.solvers.numerics import gaussian_kernel
from s3vm_bench.solvers._path import _exact_state, _exact_state_from
from s3vm_bench.solvers._path_linalg import _CholeskyQ
from s3vm_bench.solvers.s3vm_path import I, M, Z, S3VMPath, conditional_optimum, hinge_objective, s3vm_path

from ._toy import small_clusters


def _problem(seed, n=30, n_lab=4, sigma=1.0, dup=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    truth = np.where(X[:, 0] + 0.3 * rng.standard_normal(n) >= 0, 1.0, -1.0)
    truth[:2] = [1.0, -1.0]  # both classes among the labeled points
    if dup:
        X[n - 1] = X[n - 2]  # an exact duplicate among the unlabeled points (as in splice)
    y = np.zeros(n)
    y[:n_lab] = truth[:n_lab]
    return gaussian_kernel(X, sigma=sigma), y, truth


def _conditions(K, alpha, b, y_full, unl, C, c_star, tol=1e-7):
    """ICML 2013 Lemma 3 (8a-8f) and (9): returns a list of violated conditions."""
    t = y_full * (b + K @ alpha)
    theta = y_full * alpha
    cost = np.where(unl, c_star, C)
    bad = []
    if np.any(theta < -tol * max(1, C)) or np.any(theta > cost + tol * max(1, C)):
        bad.append("theta outside [0, cost]")
    if np.any((t > 1 + tol) & (np.abs(theta) > tol * max(1, C))):
        bad.append("8a/8d: t > 1 with theta != 0")
    if np.any((t < 1 - tol) & (np.abs(theta - cost) > tol * max(1, C))):
        bad.append("8c/8f: t < 1 with theta != cost")
    if np.any(t[unl] <= tol):
        bad.append("(9): an unlabeled point on the polytope boundary")
    return bad


def _slsqp_conditional(K, y_full, unl, C, c_star, b):
    """Independent check of eq. (5): the primal QP in (alpha, xi) solved by SLSQP."""
    n = y_full.size
    cost = np.where(unl, c_star, C)

    def fun(z):
        a, xi = z[:n], z[n:]
        return 0.5 * a @ K @ a + cost @ xi

    def jac(z):
        return np.r_[K @ z[:n], cost]

    cons = [{"type": "ineq", "fun": lambda z: z[n:] - 1.0 + y_full * (b + K @ z[:n]),
             "jac": lambda z: np.hstack([y_full[:, None] * K, np.eye(n)])},
            {"type": "ineq", "fun": lambda z: (y_full * (b + K @ z[:n]))[unl],
             "jac": lambda z: np.hstack([y_full[:, None] * K, np.zeros((n, n))])[unl]}]
    z0 = np.r_[np.zeros(n), np.ones(n)]
    res = minimize(fun, z0, jac=jac, constraints=cons, bounds=[(None, None)] * n + [(0, None)] * n,
                   method="SLSQP", options={"ftol": 1e-12, "maxiter": 2000})
    # SLSQP may stop at its precision limit ("positive directional derivative", status 8) or,
    # on a kernel of low numerical rank, with a rank-deficient linearization ("inequality
    # constraints incompatible", status 4; which of the two depends on BLAS round-off, e.g. the
    # thread count); its point must still be feasible, and then its value bounds the optimum
    # from above, which is all the callers rely on beyond agreement checks.
    for con in cons:
        assert np.all(con["fun"](res.x) >= -1e-6)
    assert res.success or res.status in (4, 8), res.message
    return res.fun


@pytest.mark.parametrize("seed", range(12))
def test_conditional_optimum_matches_an_independent_qp_solver(seed):
    rng = np.random.default_rng(100 + seed)
    K, y, _ = _problem(seed, n=10, n_lab=3, sigma=float(rng.choice([0.5, 1.0, 2.0])))
    unl = y == 0
    y_full = np.where(unl, rng.choice([-1.0, 1.0], size=y.size), y)
    C, c_star, b = float(rng.choice([1.0, 10.0])), float(rng.uniform(0.1, 1.0)), float(rng.uniform(-0.5, 0.5))
    cost = np.where(unl, c_star, C)
    theta, status, t, _ = conditional_optimum(K, y_full, cost, b, unl)
    alpha = y_full * theta
    assert np.all(t[unl] >= -1e-9)  # inside pol(y) (eq. 6)
    ours = hinge_objective(K, alpha, b, y_full, cost)
    ref = _slsqp_conditional(K, y_full, unl, C, c_star, b)
    assert ours <= ref + 1e-7 * abs(ref)          # no feasible point is better than ours
    assert ours == pytest.approx(ref, rel=1e-5)   # and SLSQP gets (nearly) there too


def _paths(n=12, **kw):
    out = []
    for seed in range(n):
        K, y, _ = _problem(seed, **kw)
        b = 2 * np.mean(y[y != 0] > 0) - 1
        out.append((K, y, b, s3vm_path(K, y, 10.0, b)))
    return out


def _samples(path, rng, k=6):
    """C* values strictly inside CP segments (the path is the local optimum there)."""
    seg = np.flatnonzero(np.diff(path.c_star) > 1e-9)
    pick = rng.choice(seg, size=min(k, seg.size), replace=False)
    w = rng.uniform(0.1, 0.9, size=pick.size)
    return path.c_star[pick] + w * (path.c_star[pick + 1] - path.c_star[pick])


def test_lemma3_holds_at_sampled_points_of_the_path():
    rng = np.random.default_rng(0)
    checked = 0
    for K, y, b, path in _paths():
        unl = y == 0
        for c in _samples(path, rng):
            y_full = y.copy()
            y_full[unl] = path.labels_at(c)
            assert _conditions(K, path.alpha_at(c), b, y_full, unl, 10.0, c) == []
            checked += 1
    assert checked > 50


def test_coefficients_are_linear_in_c_star_between_breakpoints():
    # Re-solve eq. (5) from scratch at sampled C*: the (unique, K is positive definite)
    # conditional optimum must equal the path's linear interpolation between its knots.
    rng = np.random.default_rng(1)
    for K, y, b, path in _paths(8):
        unl = y == 0
        for c in _samples(path, rng, k=4):
            y_full = y.copy()
            y_full[unl] = path.labels_at(c)
            theta, _, _, _ = conditional_optimum(K, y_full, np.where(unl, c, 10.0), b, unl)
            np.testing.assert_allclose(path.alpha_at(c), y_full * theta, atol=1e-7, rtol=1e-7)


def test_each_dj_flip_strictly_lowers_the_objective():
    n_jumps = 0
    for _, _, _, path in _paths(20):
        assert len(path.jump_objectives) == path.n_jumps
        for seq in path.jump_objectives:
            assert np.all(np.diff(seq) < 0), seq  # Theorem 5
            n_jumps += 1
    assert n_jumps >= 10  # the problems do jump


def test_end_of_path_is_a_local_optimum_confirmed_by_a_fresh_qp():
    for K, y, b, path in _paths(10):
        unl = y == 0
        y_full = y.copy()
        y_full[unl] = path.y_unlabeled[-1]
        cost = np.where(unl, 10.0, 10.0)
        theta, status, t, _ = conditional_optimum(K, y_full, cost, b, unl)
        np.testing.assert_allclose(path.alpha[-1], y_full * theta, atol=1e-7)
        assert _conditions(K, path.alpha[-1], b, y_full, unl, 10.0, 10.0) == []
        assert path.objective[-1] == pytest.approx(hinge_objective(K, path.alpha[-1], b, y_full, cost))


def test_duplicated_points_do_not_break_the_path():
    rng = np.random.default_rng(2)
    for seed in range(6):
        K, y, _ = _problem(seed, dup=True)
        path = s3vm_path(K, y, 10.0, 0.0)
        unl = y == 0
        for c in _samples(path, rng, k=3):
            y_full = y.copy()
            y_full[unl] = path.labels_at(c)
            assert _conditions(K, path.alpha_at(c), 0.0, y_full, unl, 10.0, c) == []


def test_estimator_registered_predicts_along_the_path_and_selects_c_star():
    assert get_solver("s3vm_path") is S3VMPath
    X, y_true, y_semi = small_clusters(seed=3, n=60)
    est = S3VMPath(sigma=1.5, C=10.0).fit(X, y_semi)
    path = est.paths_[0]
    assert path.c_star[0] == 0.0 and path.c_star[-1] == 10.0
    np.testing.assert_allclose(est.decision_function(X), est.decision_function(X, C_star=10.0))
    assert est.predict(X, C_star=0.0).shape == (60,)
    # select_c_star is exact: no C* on a fine grid has a lower validation error, and the chosen
    # C* has the reported error.
    Xv, yv = X[::3], y_true[::3]
    c, err = est.select_c_star(Xv, yv)
    assert 0.0 <= c <= 10.0
    assert np.mean(est.predict(Xv, C_star=c) != yv) == pytest.approx(err)
    grid = np.linspace(0, 10, 401)
    assert min(np.mean(est.predict(Xv, C_star=g) != yv) for g in grid) >= err - 1e-12
    with pytest.raises(ValueError, match="outside the path"):
        est.decision_function(X, C_star=11.0)


def test_validation_labels_are_checked():
    X, y_true, y_semi = small_clusters(seed=3, n=60)
    with pytest.raises(NotFittedError):
        S3VMPath(sigma=1.5, C=10.0).select_c_star(X, y_true)
    est = S3VMPath(sigma=1.5, C=10.0).fit(X, y_semi)
    Xv, yv = X[::3], y_true[::3]
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        est.validation_curve(Xv, yv[:1])  # one label would broadcast against every point
    wrong = np.where(yv == est.classes_[0], 7, yv)
    with pytest.raises(ValueError, match=r"y_val has labels \[7\] that are not among the training classes"):
        est.select_c_star(Xv, wrong)


def test_multiclass_is_one_vs_rest_and_selection_needs_two_classes():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.standard_normal((15, 2)) + 3 * k for k in range(3)])
    y = np.repeat([0, 1, 2], 15)
    y_semi = np.full(45, -1)
    y_semi[[0, 1, 15, 16, 30, 31]] = y[[0, 1, 15, 16, 30, 31]]
    est = S3VMPath(sigma=1.0, C=1.0).fit(X, y_semi)
    assert len(est.paths_) == 3
    assert np.mean(est.predict(X) == y) > 0.6  # chance is 1/3
    with pytest.raises(ValueError, match="binary"):
        est.select_c_star(X, y)


@pytest.mark.parametrize("params, match", [
    ({"kernel": "linear"}, "kernel must be 'rbf'"),
    ({"C": 1.0, "C_star": 2.0}, "C_star must be <= C"),
    ({"tol": 0.0}, "tol"),
    ({"max_events": 0}, "max_events"),
])
def test_bad_parameters_are_rejected(params, match):
    X, _, y_semi = small_clusters()
    with pytest.raises(ValueError, match=match):
        S3VMPath(**params).fit(X, y_semi)


def test_max_events_stops_with_a_clear_error():
    X, _, y_semi = small_clusters()
    with pytest.raises(RuntimeError, match="max_events"):
        S3VMPath(sigma=1.0, C=10.0, max_events=2).fit(X, y_semi)


def test_centering_makes_b_the_mean_unlabeled_output_all_along_the_path():
    # ICML 2013 Sec. 2 fixes b = 2r - 1 as in Chapelle & Zien (2005): with the kernel centered
    # on the unlabeled mean (JMLR 2008 eq. 13) the mean output over U is b at every C*.
    X, _, y_semi = small_clusters(seed=5, n=50)
    est = S3VMPath(sigma=1.5, C=10.0, r=0.3).fit(X, y_semi)
    unl = y_semi == -1
    for c in (0.0, 0.37, 2.5, 10.0):
        assert est.decision_function(X[unl], C_star=c).mean() == pytest.approx(2 * 0.3 - 1, abs=1e-9)
    raw = S3VMPath(sigma=1.5, C=10.0, r=0.3, center=False).fit(X, y_semi)
    assert abs(raw.decision_function(X[unl]).mean() - (2 * 0.3 - 1)) > 1e-3


# --------------------------------------------------------------- incremental factorization
def _q_block(K, y, idx):
    return K[np.ix_(idx, idx)] * np.outer(y[idx], y[idx])


@pytest.mark.parametrize("givens_from", [0, 48])
def test_incremental_factor_equals_a_fresh_factorization(givens_from):
    # Random additions and removals (ICML 2013 Alg. 2: one point enters or leaves M per event):
    # after each update R'R is Q_FF and the solve agrees with a dense solve. givens_from=0
    # forces the Givens column deletion at every size.
    rng = np.random.default_rng(7)
    X = rng.standard_normal((80, 6))
    K = gaussian_kernel(X, sigma=2.0)
    y = rng.choice([-1.0, 1.0], size=80)
    fac = _CholeskyQ(K, y, max_updates=10_000, givens_from=givens_from)
    assert fac.refactor(rng.choice(80, size=10, replace=False))
    n_add = n_del = 0
    for _ in range(300):
        out = np.setdiff1d(np.arange(80), fac.idx)
        if fac.idx.size > 2 and (rng.random() < 0.45 or out.size == 0):
            assert fac.remove(int(rng.choice(fac.idx)))
            n_del += 1
        else:
            assert fac.add(int(rng.choice(out)))[0]
            n_add += 1
        A = _q_block(K, y, fac.idx)
        np.testing.assert_allclose(fac.R.T @ fac.R, A, atol=1e-10)
        np.testing.assert_allclose(np.triu(fac.R), fac.R)
        rhs = rng.standard_normal(fac.idx.size)
        np.testing.assert_allclose(fac.solve(rhs), np.linalg.solve(A, rhs), rtol=1e-6, atol=1e-8)
    assert n_add > 100 and n_del > 100
    # Same factor (up to the signs of the rows) as a fresh Cholesky in the same order.
    R = np.linalg.cholesky(_q_block(K, y, fac.idx)).T
    np.testing.assert_allclose(np.abs(fac.R), np.abs(R), atol=1e-8)


@pytest.mark.parametrize("max_rows", [64, 12])
def test_factor_rows_product_equals_the_product_with_k(max_rows):
    # The contiguous rows K[F] kept by the factor (swap-with-last on removal, grown on addition)
    # give K[:, F] @ w in the factor's order at every step; with a small max_rows the buffer is
    # dropped when F outgrows it and rebuilt at the next fresh factorization.
    rng = np.random.default_rng(11)
    X = rng.standard_normal((80, 6))
    K = gaussian_kernel(X, sigma=2.0)
    y = rng.choice([-1.0, 1.0], size=80)
    fac = _CholeskyQ(K, y, max_updates=25)
    fac.max_rows = max_rows
    assert fac.refactor(rng.choice(80, size=5, replace=False))
    dropped = kept = 0
    for _ in range(300):
        out = np.setdiff1d(np.arange(80), fac.idx)
        if fac.idx.size > 2 and (rng.random() < 0.45 or out.size == 0):
            assert fac.remove(int(rng.choice(fac.idx)))
        else:
            assert fac.add(int(rng.choice(out)))[0]
        if fac.idx.size > 30 and rng.random() < 0.05:
            assert fac.refactor(fac.idx[:8].copy())          # a fresh, smaller set: buffer rebuilt
        w = rng.standard_normal(fac.idx.size)
        np.testing.assert_allclose(fac.kdot(w), K[:, fac.idx] @ w, rtol=1e-12, atol=1e-12)
        dropped += fac.rows is None
        kept += fac.rows is not None
    assert kept > 20 and (dropped > 0) == (max_rows < 30)


@pytest.mark.parametrize("seed", [0, 2])
def test_exact_state_from_exact_outputs_equals_the_full_recomputation(seed):
    # After a DJ re-solve the outputs are exact: re-solving theta_M from them in O(n |M|) gives
    # the same state as the O(n^2) recomputation of _exact_state. The boundary points made I
    # here keep multipliers above their cost, which exercises the correction of moved bounds.
    K, y, _ = _problem(seed, n=40, sigma=1.0)
    unl = y == 0
    y_full = np.where(unl, np.where(np.arange(40) % 3 == 0, -1.0, 1.0), y)
    cost = np.where(unl, 2.0, 10.0)
    b = 0.2
    theta, status, t, _ = conditional_optimum(K, y_full, cost, b, unl)
    status[status == Z] = I                                  # as after the DJ loop
    assert np.any(status == M)
    ref_theta, ref_t = _exact_state(K, y_full, b, theta, status, cost)
    new_theta, new_t = _exact_state_from(K, y_full, b, theta, status, cost, t)
    np.testing.assert_allclose(new_theta, ref_theta, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(new_t, ref_t, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(new_t, y_full * (b + K @ (y_full * new_theta)), atol=1e-10)


def test_incremental_factor_refuses_a_duplicated_point_and_refreshes():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((20, 3))
    X[19] = X[4]                                      # exact duplicate, as in splice
    K = gaussian_kernel(X, sigma=1.0)
    y = np.ones(20)
    fac = _CholeskyQ(K, y, max_updates=3)
    assert fac.refactor(np.arange(10))
    ok, r = fac.add(19)
    assert not ok and fac.idx.size == 10              # factor unchanged
    # the null direction: Q_FF x = Q_F,19, i.e. x is the indicator of the duplicate's twin
    x = fac.null_direction(r)
    np.testing.assert_allclose(x, np.eye(10)[np.flatnonzero(fac.idx == 4)[0]], atol=1e-6)
    assert not fac.refactor(np.r_[np.arange(10), 19])  # a fresh factor fails the same test
    for j in (12, 13, 14):                             # max_updates=3: the third update refactors
        assert fac.add(j)[0]
    assert fac.n_updates == 0
    np.testing.assert_allclose(fac.R.T @ fac.R, _q_block(K, y, fac.idx), atol=1e-12)


class _FreshQ:
    """Reference for _CholeskyQ: a fresh dense Cholesky factorization at every change."""

    def __init__(self, K, y, **_):
        self.K, self.y = K, y
        self.idx = np.empty(0, dtype=np.intp)
        self.L = np.empty((0, 0))

    @property
    def R(self):
        return self.L.T

    def refactor(self, idx=None):
        idx = self.idx if idx is None else np.asarray(idx, dtype=np.intp)
        if idx.size:
            try:
                L = np.linalg.cholesky(_q_block(self.K, self.y, idx))
            except np.linalg.LinAlgError:
                return False
            d2 = np.diag(L) ** 2
            if not d2.min() > 1e-10 * d2.max():
                return False
        else:
            L = np.empty((0, 0))
        self.idx, self.L = idx.copy(), L
        return True

    def add(self, j):
        q = self.y[self.idx] * self.y[j] * self.K[self.idx, j]
        r = solve_triangular(self.L, q, lower=True) if self.idx.size else q
        return self.refactor(np.append(self.idx, j)), r

    def remove(self, j):
        ok = self.refactor(self.idx[self.idx != j])
        if not ok:
            self.idx, self.L = self.idx[self.idx != j], np.empty((0, 0))
        return ok

    def solve(self, rhs):
        return np.linalg.solve(_q_block(self.K, self.y, self.idx), rhs) if self.idx.size else np.empty(0)

    def null_direction(self, r):
        return solve_triangular(self.L.T, r, lower=False)

    def kdot(self, w):
        return w @ self.K[self.idx]


def _same_path(pa, pb, K, tol=1e-8):
    """Same distinct knots, and same outputs and labels inside every piece between them."""
    def knots(p):
        c = np.unique(p.c_star)
        return c[np.r_[True, np.diff(c) > 1e-9 * c[-1]]]
    ka, kb = knots(pa), knots(pb)
    assert ka.size == kb.size
    np.testing.assert_allclose(ka, kb, rtol=1e-8, atol=1e-10)
    for c in np.r_[0.5 * (ka[:-1] + ka[1:]), ka[-1]]:
        np.testing.assert_allclose(K @ pa.alpha_at(c), K @ pb.alpha_at(c), atol=tol)
        assert np.array_equal(pa.labels_at(c), pb.labels_at(c))
        assert pa.interpolate(pa.objective, c) == pytest.approx(pb.interpolate(pb.objective, c), rel=1e-9)


@pytest.mark.parametrize("seed, n, sigma, dup", [(0, 30, 1.0, False), (3, 60, 2.0, False), (5, 40, 0.5, True),
                                                 (12, 60, 2.0, True), (17, 30, 1.0, True)])
def test_path_with_incremental_factors_equals_the_path_with_fresh_dense_solves(monkeypatch, seed, n, sigma, dup):
    K, y, _ = _problem(seed, n=n, sigma=sigma, dup=dup)
    b = 2 * np.mean(y[y != 0] > 0) - 1
    fast = s3vm_path(K, y, 10.0, b)
    # Both users of the factor: the CP step (Q_MM) and the DJ re-solve's active set (Q_FF).
    monkeypatch.setattr(path_module, "_CholeskyQ", _FreshQ)
    monkeypatch.setattr(path_qp_module, "_CholeskyQ", _FreshQ)
    ref = s3vm_path(K, y, 10.0, b)
    assert fast.n_jumps == ref.n_jumps
    _same_path(fast, ref, K)


@pytest.mark.parametrize("seed, n, sigma, dup", [(0, 30, 1.0, False), (3, 60, 2.0, False), (12, 60, 2.0, True)])
def test_path_with_incremental_updates_equals_the_path_recomputed_at_every_event(seed, n, sigma, dup):
    # refresh=1 recomputes theta_M, t and s_u = sum_{I_u} y_i K[i] exactly after every event and
    # jump; the default updates them (linear steps, s_u after flips, theta_M snap after a DJ
    # re-solve) and must trace the same path.
    K, y, _ = _problem(seed, n=n, sigma=sigma, dup=dup)
    b = 2 * np.mean(y[y != 0] > 0) - 1
    fast = s3vm_path(K, y, 10.0, b)
    ref = s3vm_path(K, y, 10.0, b, refresh=1)
    assert fast.n_jumps == ref.n_jumps and fast.n_jumps > 0
    _same_path(fast, ref, K)


@pytest.mark.parametrize("seed, C, c_star", [(6, 100.0, 10.0), (18, 10.0, 2.0)])
def test_conditional_optimum_with_a_kernel_of_low_numerical_rank(monkeypatch, seed, C, c_star):
    # 1-D points and a wide Gaussian: Q has numerical rank ~ 10 < n, so released variables can
    # be dependent on the free set (the fourclass case) and the active set moves along null
    # directions; the optimum must still be the one SLSQP confirms, with Lemma 3's conditions.
    rng = np.random.default_rng(seed)
    n = 16
    X = np.sort(rng.uniform(-1, 1, size=(n, 1)), axis=0)
    K = gaussian_kernel(X, sigma=3.0)
    unl = np.arange(n) >= 4
    y_full = np.where(X[:, 0] > 0.1, 1.0, -1.0)
    y_full[:4] = [1.0, -1.0, 1.0, -1.0]
    y_full[unl] = np.where(rng.random(n - 4) < 0.2, -y_full[unl], y_full[unl])
    ev = np.linalg.eigvalsh(K)
    assert np.sum(ev > 1e-10 * ev.max()) < n
    calls = []
    null_direction = _CholeskyQ.null_direction
    monkeypatch.setattr(_CholeskyQ, "null_direction", lambda self, r: calls.append(1) or null_direction(self, r))
    cost = np.where(unl, c_star, C)
    theta, status, t, _ = conditional_optimum(K, y_full, cost, 0.0, unl)
    assert len(calls) >= 2                              # the null-direction moves were exercised
    assert np.all(theta >= -1e-9) and np.all(theta[~unl] <= C + 1e-9)
    # Multipliers of dependent boundary points are not unique and grow large here; the outputs
    # carry their round-off (1e-7 rather than tol = 1e-9).
    assert np.all(t[unl] >= -1e-6)
    np.testing.assert_allclose(t, y_full * (K @ (y_full * theta)), atol=1e-8)
    assert np.all(np.abs(t[status == M] - 1) < 1e-6) and np.all(np.abs(t[status == Z]) < 1e-6)
    ours = hinge_objective(K, y_full * theta, 0.0, y_full, cost)
    ref = _slsqp_conditional(K, y_full, unl, C, c_star, 0.0)
    assert ours <= ref + 1e-6 * abs(ref)


def test_the_icml2013_timing_label_hashes_every_part_of_the_path_source():
    # harness.icml2013.path_code labels the stored timings with a hash of the S3VM-path source;
    # the path lives in solvers/s3vm_path.py and its private parts solvers/_path*.py, all hashed.
    from pathlib import Path

    from s3vm_bench.harness import icml2013

    solvers_dir = Path(path_module.__file__).parent
    parts = {p.stem for p in solvers_dir.glob("_path*.py")} | {"s3vm_path"}
    assert set(icml2013.PATH_MODULES) == parts
    assert len(icml2013.path_code()) == 12
