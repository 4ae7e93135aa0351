"""kernel_newton_terms: DA's duplicated f-step solved on the points, against kernel_newton on the copies."""

import numpy as np
import pytest

from s3vm_bench.solvers._primal import kernel_newton_terms
from s3vm_bench.solvers.numerics import gaussian_kernel, kernel_newton


def _duplicated_problem(n=120, l=12, seed=0, floor=False, sigma=1.0, C=50.0):
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    K = gaussian_kernel(X, sigma=sigma)
    labeled = np.zeros(n, bool)
    labeled[:l] = True
    y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1.0, -1.0)
    unl = np.flatnonzero(~labeled)
    point = np.r_[np.arange(n), unl]
    yd = np.r_[np.where(labeled, y, 1.0), -np.ones(unl.size)]
    # Soft labels that agree with the data, as DA's p do: some copies end with margin > 1, so the
    # active set changes along the Newton path.
    p = expit(6.0 * (X[unl, 0] + 0.3 * X[unl, 1]))
    if floor:  # DA at low temperature: many p_j at 0 or 1, one copy of the point dropped
        p[: unl.size // 2] = np.round(p[: unl.size // 2])
    cost = np.r_[np.where(labeled, C, 0.0), np.zeros(unl.size)]
    cost[unl], cost[n:] = 0.5 * C * p, 0.5 * C * (1.0 - p)
    return K, point, yd, cost, unl


def _collapse(beta_d, n, unl):
    beta = beta_d[:n].copy()
    np.add.at(beta, unl, beta_d[n:])
    return beta


@pytest.mark.parametrize("seed, floor, sigma", [(0, False, 1.0), (1, True, 1.0), (2, False, 2.0)])
def test_iterates_are_kernel_newton_on_the_duplicated_set(seed, floor, sigma):
    K, point, yd, cost, unl = _duplicated_problem(seed=seed, floor=floor, sigma=sigma)
    n = K.shape[0]
    Kd = K[np.ix_(point, point)]
    for max_iter in (1, 2, 3, 100):  # the same iterate after each step, not only the same optimum
        ref = kernel_newton(Kd, yd, cost, max_iter=max_iter)
        got = kernel_newton_terms(K, point, yd, cost, max_iter=max_iter)
        assert (got.n_iter, got.stop_reason, got.n_inner_iter) == (ref.n_iter, ref.stop_reason, ref.n_inner_iter)
        # The two solves may modify or refactor their factors at different steps (different
        # sizes), so the coefficients agree to rounding relative to the largest one.
        beta_ref = _collapse(ref.coef, n, unl)
        np.testing.assert_allclose(got.coef, beta_ref, rtol=1e-9, atol=1e-10 * max(1.0, np.abs(beta_ref).max()))
        np.testing.assert_allclose(got.outputs, ref.outputs[:n], rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(got.outputs[unl], ref.outputs[n:], rtol=1e-9, atol=1e-10)
        np.testing.assert_array_equal(got.support, ref.support)
        assert got.intercept == pytest.approx(ref.intercept, rel=1e-9, abs=1e-10)
        assert got.objective == pytest.approx(ref.objective, rel=1e-12)
    assert ref.stop_reason == "support_set_stable" and ref.n_iter >= 4 and not ref.support.all()
    # A start far from the optimum (every term of one sign inactive at first).
    ref_b = kernel_newton(Kd, yd, cost, b0=5.0)
    got_b = kernel_newton_terms(K, point, yd, cost, b0=5.0)
    assert (got_b.n_iter, got_b.stop_reason) == (ref_b.n_iter, ref_b.stop_reason) and ref_b.n_iter > 2
    assert got_b.objective == pytest.approx(ref_b.objective, rel=1e-12)
    assert got_b.objective == pytest.approx(ref.objective, rel=1e-9)
    # Warm start (DA's seeding from the previous f-step) with new costs.
    cost2 = cost.copy()
    cost2[n:] *= 0.5
    ref2 = kernel_newton(Kd, yd, cost2, beta0=ref.coef, b0=ref.intercept)
    got2 = kernel_newton_terms(K, point, yd, cost2, beta0=got.coef, b0=got.intercept)
    assert (got2.n_iter, got2.stop_reason) == (ref2.n_iter, ref2.stop_reason)
    np.testing.assert_allclose(got2.outputs, ref2.outputs[:n], rtol=1e-9, atol=1e-10)
    assert got2.objective == pytest.approx(ref2.objective, rel=1e-12)


def test_one_term_per_point_is_kernel_newton():
    K, _, yd, cost, _ = _duplicated_problem(n=80, l=80)
    ref = kernel_newton(K, yd[:80], cost[:80])
    got = kernel_newton_terms(K, np.arange(80), yd[:80], cost[:80])
    assert (got.n_iter, got.stop_reason) == (ref.n_iter, ref.stop_reason)
    np.testing.assert_allclose(got.coef, ref.coef, rtol=1e-12, atol=1e-12)
    assert got.intercept == pytest.approx(ref.intercept, rel=1e-12, abs=1e-12)


def test_the_newton_systems_have_one_row_per_support_point(monkeypatch):
    import s3vm_bench.solvers._primal_kernel as pooled

    K, point, yd, cost, _ = _duplicated_problem()
    sizes = []
    real = pooled._newton_point
    monkeypatch.setattr(pooled, "_newton_point", lambda K, idx, *a: (sizes.append(idx.size), real(K, idx, *a))[1])
    kernel_newton_terms(K, point, yd, cost)
    assert sizes[0] == K.shape[0] < point.size  # from beta = 0 every term is active: every point once


def test_no_active_term_and_bad_input():
    K, point, yd, cost, _ = _duplicated_problem(n=30, l=5)
    res = kernel_newton_terms(K, point, yd, np.zeros(point.size), b0=0.5)
    assert res.stop_reason == "support_set_stable" and not res.coef.any() and res.intercept == 0.5
    with pytest.raises(ValueError, match=r"point indices must lie in \[0, 30\)"):
        kernel_newton_terms(K, np.r_[point[:-1], 30], yd, cost)
    with pytest.raises(ValueError, match=r"point indices must lie in \[0, 30\)"):
        kernel_newton_terms(K, np.r_[point[:-1], -1], yd, cost)
    with pytest.raises(TypeError, match="integer indices"):
        kernel_newton_terms(K, point.astype(float), yd, cost)
    with pytest.raises(ValueError, match="1-D"):
        kernel_newton_terms(K, point[:, None], yd, cost)
    with pytest.raises(ValueError, match=r"y must have shape \(55,\)"):
        kernel_newton_terms(K, point, yd[:-1], cost)
    with pytest.raises(ValueError, match="cost must be >= 0"):
        kernel_newton_terms(K, point, yd, -cost)
