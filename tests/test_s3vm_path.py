"""S3VM-path (ICML 2013): local optimality along the path, linearity, strict DJ descent."""

import numpy as np
import pytest
from scipy.optimize import minimize

from solvers import get_solver
from solvers._kernels import gaussian_kernel
from solvers.s3vm_path import S3VMPath, conditional_optimum, hinge_objective, s3vm_path

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
    # SLSQP may stop at its precision limit ("positive directional derivative"); its point
    # must still be feasible, and then its value bounds the optimum from above.
    for con in cons:
        assert np.all(con["fun"](res.x) >= -1e-6)
    assert res.success or res.status == 8, res.message
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
    ({"kernel": "linear"}, "Gaussian"),
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
