"""The continuous S3VMs of JMLR 2008 Sec. 4: nabla-S3VM, cS3VM, CCCP, Newton S3VM."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.base import clone

from s3vm_bench.data_registry import Split, g50c_like, two_moons
from s3vm_bench.harness.protocol import ProtocolSettings, _fit_binary_problem, run_split
from s3vm_bench.solvers import get_solver
from s3vm_bench.solvers._mean_output import c_star_schedule, labeled_loss_terms
from s3vm_bench.solvers._primal import CholeskyCache, _ShiftedSystem, lm_newton
from s3vm_bench.solvers.cccp import CCCP
from s3vm_bench.solvers.cs3vm import CS3VM, gamma_schedule
from s3vm_bench.solvers.grad_s3vm import GradS3VM, smooth_objective
from s3vm_bench.solvers.losses import (cccp_convex_loss, exp_unlabeled_loss, flat_unlabeled_loss,
                                      smoothed_exp_unlabeled_loss, squared_hinge_loss, symmetric_squared_hinge_loss)
from s3vm_bench.solvers.newton import NewtonS3VM
from s3vm_bench.solvers.numerics import (SEARCH_MAX_ITER, SEARCH_XTOL, center_kernel, dichotomic_search, gaussian_kernel,
                                         n_positive)
from s3vm_bench.solvers.svm import SVM
from tests._toy import small_clusters as _small

SOLVERS = {"grad_s3vm": GradS3VM, "cs3vm": CS3VM, "cccp": CCCP, "newton": NewtonS3VM}


def _fd(f, x, h=1e-6):
    out = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (f(x + e) - f(x - e)) / (2 * h)
    return out


def _toy_split(seed=3):
    """g50c-like clusters: 10 labeled points, the rest unlabeled."""
    ds = g50c_like(seed, n=200)
    rng = np.random.default_rng(seed)
    lab = np.sort(np.r_[rng.choice(np.flatnonzero(ds.y == 0), 5, replace=False),
                        rng.choice(np.flatnonzero(ds.y == 1), 5, replace=False)])
    empty = np.empty(0, np.int64)
    return ds, Split("test", 0, None, lab, np.setdiff1d(np.arange(ds.n_samples), lab), empty, empty)


# ----------------------------------------------------------------------------- losses
@pytest.mark.parametrize("loss", [
    cccp_convex_loss,
    lambda t: smoothed_exp_unlabeled_loss(t, 0.3, 5.0),
    lambda t: smoothed_exp_unlabeled_loss(t, 0.0, 3.0),
])
def test_new_losses_derivatives(loss):
    t = np.linspace(-2.3, 2.3, 47) + 1e-3  # avoid the kinks at +-1 exactly
    L = loss(t)
    h = 1e-6
    np.testing.assert_allclose(L.grad, (loss(t + h).value - loss(t - h).value) / (2 * h), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(L.hess, (loss(t + h).grad - loss(t - h).grad) / (2 * h), rtol=1e-5, atol=1e-5)


def test_cccp_loss_is_convex_part_plus_tangent():
    """L~(t) = max(0,1-|t|)^2 + 2|t| - 2t for a point labeled +1 (JMLR 2008 Sec. 4.1)."""
    t = np.linspace(-3, 3, 61)
    direct = symmetric_squared_hinge_loss(t).value + 2 * np.abs(t) - 2 * t
    np.testing.assert_allclose(cccp_convex_loss(t).value, direct, atol=1e-12)
    assert np.all(np.diff(cccp_convex_loss(t).grad) >= -1e-12)  # convex


def test_smoothed_exp_loss_is_the_gaussian_convolution():
    """Closed form of exp(-s t^2) * N(0, var), checked by Gauss-Hermite quadrature."""
    s, var = 5.0, 0.17
    x, w = np.polynomial.hermite.hermgauss(80)
    for t in (-1.2, -0.1, 0.0, 0.4, 2.0):
        quad = np.sum(w * np.exp(-s * (t + np.sqrt(2 * var) * x) ** 2)) / np.sqrt(np.pi)
        assert smoothed_exp_unlabeled_loss(t, var, s).value == pytest.approx(quad, rel=1e-10)
    np.testing.assert_allclose(smoothed_exp_unlabeled_loss(np.r_[0.3], 0.0, s).value,
                               exp_unlabeled_loss(np.r_[0.3], s).value)
    with pytest.raises(ValueError, match="var"):
        smoothed_exp_unlabeled_loss(0.0, -1.0)


# -------------------------------------------------------------------- gradients (FD)
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("var", [None, 0.2])
def test_smooth_objective_gradient(sparse, var):
    rng = np.random.default_rng(1)
    n, d = 25, 4
    Z = rng.standard_normal((n, d))
    if sparse:
        Z[np.abs(Z) < 0.6] = 0
        Z = sp.csr_matrix(Z)
    labeled = np.zeros(n, bool)
    labeled[:6] = True
    y_lab = np.where(np.arange(6) % 2 == 0, 1.0, -1.0)
    w = 0.5 * rng.standard_normal(d)
    loss = (lambda t: exp_unlabeled_loss(t, 5.0)) if var is None else (lambda t: smoothed_exp_unlabeled_loss(t, var))
    _, g, _ = smooth_objective(w, Z, 0.1, y_lab, labeled, 3.0, 2.0, loss)
    fd = _fd(lambda x: smooth_objective(x, Z, 0.1, y_lab, labeled, 3.0, 2.0, loss)[0], w)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("unl", ["flat", "quadratic", "cccp"])
def test_newton_gradient_is_K_g(unl):
    """eq. (16): the gradient of (15) in beta is K g, g = beta + d."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((20, 3))
    K = gaussian_kernel(X, sigma=1.3)
    labeled = np.arange(20) < 5
    y_lab = np.where(np.arange(5) % 2 == 0, 1.0, -1.0)
    y_u = np.where(rng.standard_normal(15) > 0, 1.0, -1.0)
    b, C, Cs = 0.1, 2.0, 1.5

    def omega(beta):
        o = K @ beta + b
        v, d_l, _ = labeled_loss_terms(o[labeled], y_lab, C)
        if unl == "flat":
            U = flat_unlabeled_loss(o[~labeled])
        elif unl == "quadratic":
            U = symmetric_squared_hinge_loss(o[~labeled])
        else:
            U = cccp_convex_loss(y_u * o[~labeled])
            U = U._replace(grad=y_u * U.grad)
        d = np.r_[d_l, Cs * U.grad]
        return 0.5 * beta @ K @ beta + v + Cs * U.value.sum(), d

    beta = 0.3 * rng.standard_normal(20)
    _, d = omega(beta)
    np.testing.assert_allclose(K @ (beta + d), _fd(lambda x: omega(x)[0], beta), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ the LM core
def test_lm_newton_convex_matches_lbfgs():
    """Convex case (quadratic hinge, fixed b): Alg. 6 reaches the minimum found by L-BFGS-B."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((60, 3))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(60) > 0, 1.0, -1.0)
    K = gaussian_kernel(X, sigma=1.5)
    C, b = 5.0, 0.2

    def loss(o):
        L = squared_hinge_loss(y * o)
        return C * L.value.sum(), C * y * L.grad, C * L.hess

    res = lm_newton(K, b, loss)
    assert res.stop_reason == "decrement" and res.n_iter < 30

    # first-order condition: the gradient K g vanishes
    _, d, _ = loss(res.outputs)
    assert np.abs(K @ (res.coef + d)).max() < 1e-6
    # the same problem in Method 1 variables (w over the kernel-PCA map), well conditioned for L-BFGS
    from s3vm_bench.solvers.numerics import kernel_pca_map
    Z, _ = kernel_pca_map(K)

    def f(w):
        v, d, _ = loss(Z @ w + b)
        return 0.5 * w @ w + v, w + Z.T @ d

    ref = minimize(f, np.zeros(Z.shape[1]), jac=True, method="L-BFGS-B",
                   options=dict(ftol=1e-15, gtol=1e-9, maxiter=5000))
    assert res.objective == pytest.approx(ref.fun, rel=1e-8)


def test_lm_newton_nonconvex_descends_and_handles_negative_curvature():
    """The flat loss has negative curvature on its bends: LM raises lam until the step is safe."""
    X = two_moons(0).X
    labeled = np.zeros(X.shape[0], bool)
    labeled[:2] = True
    y_lab = np.array([1.0, -1.0])
    K, _ = center_kernel(gaussian_kernel(X, sigma=0.5), ~labeled)
    values = []

    def loss(o):
        v, d_l, h_l = labeled_loss_terms(o[labeled], y_lab, 10.0)
        U = flat_unlabeled_loss(o[~labeled])
        values.append(None)
        return v + 10.0 * U.value.sum(), np.r_[d_l, 10.0 * U.grad], np.r_[h_l, 10.0 * U.hess]

    beta0 = 0.05 * np.random.default_rng(0).standard_normal(X.shape[0])
    start = 0.5 * beta0 @ K @ beta0 + loss(K @ beta0)[0]
    res = lm_newton(K, 0.0, loss, beta0)
    assert res.objective < start
    assert res.stop_reason in ("decrement", "max_iter")
    # accepted steps only: the objective of the result is the one recomputed at its beta
    o = K @ res.coef
    assert res.objective == pytest.approx(0.5 * res.coef @ (o) + loss(o)[0], rel=1e-10)


@pytest.mark.parametrize("n_neg", [0, 1, 4, 12, 20])
def test_shifted_system_is_the_inertia_test_and_the_solve(n_neg):
    """Two Cholesky factorizations on the split D > 0 / D < 0 decide ``lam K + K D K > 0`` exactly
    as the inertia of ``K_sv + lam D^-1`` does (Haynsworth), and solve the same system."""
    rng = np.random.default_rng(n_neg)
    n = 20
    Z = rng.standard_normal((n + 7, 6))
    K_all = Z @ Z.T  # singular, as the centered kernel of eq. (13)
    sv = np.sort(rng.choice(n + 7, n, replace=False))  # the support vectors: a subset of the points
    K = K_all[np.ix_(sv, sv)]
    outcomes = set()
    for trial in range(40):
        D = rng.uniform(0.05, 5.0, n)
        D[rng.choice(n, n_neg, replace=False)] *= -rng.uniform(0.001, 1.0, n_neg)
        system = _ShiftedSystem(K_all, sv, D)
        for lam in (1.0, 4.0, 64.0, 4096.0):
            M = K + np.diag(lam / D)
            eig = np.linalg.eigvalsh(M)
            if np.min(np.abs(eig)) < 1e-8 * np.max(np.abs(eig)):
                continue  # too close to singular for the two tests to be compared
            expect = int(np.sum(eig < 0)) == n_neg
            rhs = rng.standard_normal(n)
            s = system.solve(lam, rhs)
            assert (s is not None) == expect
            outcomes.add(expect)
            if expect:
                np.testing.assert_allclose(M @ s, rhs, atol=1e-8 * (1 + np.abs(M).max() * np.abs(s).max()))
    assert True in outcomes
    if n_neg:
        assert False in outcomes  # the rejections were exercised too


def test_shifted_system_single_point_and_bad_curvatures():
    K = np.array([[2.0, 0.5], [0.5, 1.0]])
    # one support vector: (K_11 + lam / D) s = r, accepted iff its sign matches D's
    assert _ShiftedSystem(K, np.array([1]), np.array([4.0])).solve(2.0, np.array([3.0]))[0] == pytest.approx(2.0)
    assert _ShiftedSystem(K, np.array([1]), np.array([-4.0])).solve(2.0, np.array([3.0])) is None
    assert _ShiftedSystem(K, np.array([1]), np.array([-1.0])).solve(2.0, np.array([3.0]))[0] == pytest.approx(-3.0)
    for D in ([np.nan, 1.0], [np.nan, -1.0], []):
        with pytest.raises(ValueError, match="finite and non-zero"):
            _ShiftedSystem(K, np.arange(len(D)), np.array(D))


def test_lm_newton_kept_factorization_same_iterates():
    """One CholeskyCache kept across successive solves (as Newton's annealing stages and CCCP's
    convex steps do) gives the iterates of fresh factorizations, to rounding, on a problem with
    negative curvature; an unchanged system is not factored again."""
    X = two_moons(1).X
    labeled = np.zeros(X.shape[0], bool)
    labeled[:4] = True
    y_lab = np.array([1.0, -1.0, 1.0, -1.0])
    K, _ = center_kernel(gaussian_kernel(X, sigma=0.5), ~labeled)
    negative = []

    def make_loss(cs):
        def loss(o):
            v, d_l, h_l = labeled_loss_terms(o[labeled], y_lab, 10.0)
            U = flat_unlabeled_loss(o[~labeled])
            negative.append(int(np.sum(U.hess < 0)))
            return v + cs * U.value.sum(), np.r_[d_l, cs * U.grad], np.r_[h_l, cs * U.hess]
        return loss

    beta0 = 0.05 * np.random.default_rng(1).standard_normal(X.shape[0])
    cache = CholeskyCache(K)
    kept, fresh = [], []
    b0k = b0f = beta0
    for cs in (0.5, 2.0, 10.0):
        kept.append(lm_newton(cache, 0.1, make_loss(cs), b0k))
        fresh.append(lm_newton(K, 0.1, make_loss(cs), b0f))
        b0k, b0f = kept[-1].coef, fresh[-1].coef
    assert max(negative) > 0  # the indefinite systems were met
    assert cache.n_reuse + cache.n_modify > 0
    for new, old in zip(kept, fresh):
        assert (new.n_iter, new.n_accepted, new.stop_reason, new.n_sv) == (old.n_iter, old.n_accepted,
                                                                           old.stop_reason, old.n_sv)
        assert new.objective == pytest.approx(old.objective, rel=1e-10)
        np.testing.assert_allclose(new.outputs, old.outputs, rtol=1e-7, atol=1e-9)


def _reference_lm(K, b, loss, beta, tol=1e-10, max_iter=200):
    """JMLR 2008 Alg. 6 as :func:`lm_newton` documents it, with dense solves and an eigenvalue
    inertia test: every term rebuilt at every iteration, nothing kept between steps or lams."""
    n = K.shape[0]
    Kbeta = K @ beta
    value, d, h = loss(Kbeta + b)
    omega = 0.5 * beta @ Kbeta + value
    lam, it, accepted, stop = 1.0, 0, 0, "max_iter"
    while it < max_iter:
        it += 1
        g = beta + d
        sv, nsv = np.flatnonzero(h != 0.0), np.flatnonzero(h == 0.0)
        while True:
            s = np.empty(n)
            s[nsv] = -g[nsv] / lam
            if sv.size:
                D = h[sv]
                M = K[np.ix_(sv, sv)] + np.diag(lam / D)
                if np.sum(np.linalg.eigvalsh(M) < 0.0) != np.sum(D < 0.0):
                    lam *= 4.0
                    continue
                rhs = -(g[sv] - D * (K[np.ix_(sv, nsv)] @ g[nsv]) / lam) / D
                s[sv] = np.linalg.solve(M, rhs)
            break
        Ks = K @ s
        pred = Ks @ g + 0.5 * s @ Ks + 0.5 * Ks @ (h * Ks)
        if lam == 1.0 and -pred <= tol * max(1.0, omega):
            stop = "decrement"
            break
        value_new, d_new, h_new = loss(K @ (beta + s) + b)
        omega_new = 0.5 * (beta + s) @ K @ (beta + s) + value_new
        rho = (omega_new - omega) / pred if pred < 0.0 else -1.0
        if rho > 0.0:
            beta, d, h, omega = beta + s, d_new, h_new, omega_new
            accepted += 1
        if rho < 0.25:
            lam *= 4.0
        elif rho > 0.75:
            lam = max(1.0, lam / 2.0)
    return beta, omega, it, accepted, stop


@pytest.mark.parametrize("seed", [1, 2])
def test_lm_newton_matches_dense_reference(seed):
    """lm_newton (factor kept and modified across steps, block elimination on the split D > 0 /
    D < 0, half solves, step terms kept over rejected steps, K s from rows) takes the steps of a
    dense implementation of Alg. 6 that refactors and recomputes everything at every lam."""
    X = two_moons(seed).X
    labeled = np.zeros(X.shape[0], bool)
    labeled[:4] = True
    y_lab = np.array([1.0, -1.0, 1.0, -1.0])
    K, _ = center_kernel(gaussian_kernel(X, sigma=0.5), ~labeled)

    def make_loss(cs):
        def loss(o):
            v, d_l, h_l = labeled_loss_terms(o[labeled], y_lab, 10.0)
            U = flat_unlabeled_loss(o[~labeled])
            return v + cs * U.value.sum(), np.r_[d_l, cs * U.grad], np.r_[h_l, cs * U.hess]
        return loss

    cache = CholeskyCache(K)
    beta_new = beta_ref = 0.05 * np.random.default_rng(seed).standard_normal(X.shape[0])
    rejected = 0
    for cs in (0.5, 2.0, 10.0):
        res = lm_newton(cache, 0.1, make_loss(cs), beta_new)
        beta_ref, omega, it, accepted, stop = _reference_lm(K, 0.1, make_loss(cs), beta_ref)
        assert (res.n_iter, res.n_accepted, res.stop_reason) == (it, accepted, stop)
        assert res.objective == pytest.approx(omega, rel=1e-10)
        np.testing.assert_allclose(res.outputs, K @ beta_ref + 0.1, rtol=0, atol=1e-8)
        beta_new = res.coef
        rejected += it - accepted
    assert rejected > 1  # steps were rejected: their kept terms were exercised
    assert cache.n_modify > 0


def test_lm_newton_bad_input():
    K = np.eye(3)
    with pytest.raises(ValueError):
        lm_newton(np.ones((2, 3)), 0.0, lambda o: (0.0, o * 0, o * 0))
    with pytest.raises(ValueError, match="tol"):
        lm_newton(K, 0.0, lambda o: (0.0, o * 0, o * 0), tol=0)
    with pytest.raises(ValueError, match="beta0"):
        lm_newton(K, 0.0, lambda o: (0.0, o * 0, o * 0), np.ones(2))


# ------------------------------------------------------------ schedules
def test_annealing_schedules():
    np.testing.assert_allclose(c_star_schedule(8.0, 10, 2.0 ** -9), 8.0 * 2.0 ** (np.arange(1, 11) - 10.0))
    np.testing.assert_allclose(c_star_schedule(5.0, 10, 1e-3)[[0, -1]], [5e-3, 5.0])
    assert list(c_star_schedule(3.0, 1, 1e-3)) == [3.0]
    g = gamma_schedule(5.0, 10.0, 40.0, 1.0, 10)
    assert g.size == 11 and g[-1] == 0.0 and np.all(np.diff(g) < 0)
    # gamma_0 makes the smoothed unlabeled curvature equal to the regularizer's: 2 s C* a^-3/2 lam = 1
    a = 1 + 5.0 * g[0] * 1.0
    assert 2 * 5.0 * 10.0 * a ** -1.5 * 40.0 == pytest.approx(1.0)
    assert list(gamma_schedule(5.0, 1e-4, 1.0, 1.0, 10)) == [0.0]  # already convex: no smoothing


# ----------------------------------------------------------- estimators
@pytest.mark.parametrize("name", list(SOLVERS))
def test_lowers_objective_relative_to_supervised_start(name):
    """At a fixed bias each solver ends below the supervised solution on its own objective."""
    ds, split = _toy_split()
    idx = np.r_[split.labeled, split.unlabeled]
    X, y = ds.X[idx], ds.y[idx].copy()
    n_lab = split.labeled.size
    y[n_lab:] = -1
    C, sigma = 10.0, 10.0  # sigma ~ the inter-point distance of the 50-d clusters
    est = SOLVERS[name](sigma=sigma, C=C, r=0.5, r_tilde=0.5).fit(X, y)
    info = est.binary_fits_[0].info
    labeled = y != -1
    y_lab = np.where(y[labeled] == 1, 1.0, -1.0)
    K, _ = center_kernel(gaussian_kernel(X, sigma=sigma), ~labeled)

    def sup_loss(o):
        v, d_l, h_l = labeled_loss_terms(o[labeled], y_lab, C)
        return v, np.r_[d_l, np.zeros((~labeled).sum())], np.r_[h_l, np.zeros((~labeled).sum())]

    sup = lm_newton(K, 0.0, sup_loss)
    o_sup = sup.outputs
    reg_sup = 0.5 * sup.coef @ (o_sup - 0.0)

    def own(o, reg):
        lab = C * squared_hinge_loss(y_lab * o[labeled]).value.sum()
        u = o[~labeled]
        if name in ("grad_s3vm", "cs3vm"):
            unl = exp_unlabeled_loss(u, 5.0).value
        elif name == "newton":
            unl = flat_unlabeled_loss(u).value
        else:
            unl = symmetric_squared_hinge_loss(u).value
        return reg + lab + C * unl.sum()

    last = info["trace"][-1]
    final = last["objective"] if name in ("grad_s3vm", "cs3vm", "newton") else last["s3vm_objective"]
    if name == "cs3vm":
        assert last["gamma"] == 0.0  # the last stage is the unsmoothed problem (14)
    assert final < own(o_sup, reg_sup) - 1.0


@pytest.mark.parametrize("name", list(SOLVERS))
def test_protocol_balance_exact_and_beats_svm_on_clusters(name):
    ds, split = _toy_split()
    st = ProtocolSettings(sigma=10.0, C=10.0)
    svm = run_split(SVM, {}, ds, split, st)
    res = run_split(SOLVERS[name], {}, ds, split, st)
    assert res.balance_exact
    assert res.binary[0].dichotomic_iter >= 1
    assert res.objective < svm.objective
    assert res.unlabeled_error <= svm.unlabeled_error


@pytest.mark.parametrize("name", ["newton", "cccp"])
def test_internal_search_is_the_harness_search(name):
    """fit's search and the harness's clone-per-r~ search visit the same r~ and end at the same model."""
    X, y01, y_semi = _small(n=60)
    y_semi[6:] = -1
    unl = y_semi == -1
    r = 0.5
    target = n_positive(unl.sum(), r)
    cls = SOLVERS[name]
    internal = cls(sigma=1.5, C=3.0, r=r).fit(X, y_semi)
    seen = []

    def solve(rt):
        seen.append(rt)
        est = cls(sigma=1.5, C=3.0, r=r, r_tilde=rt).fit(X, y_semi)
        return est.decision_function(X[unl]), est

    ext = dichotomic_search(solve, target, r0=r, max_iter=SEARCH_MAX_ITER, xtol=SEARCH_XTOL)
    info = internal.binary_fits_[0].info
    assert info["r_tilde"] == ext.r_tilde and info["dichotomic_iter"] == ext.n_iter
    if ext.exact:
        np.testing.assert_allclose(internal.decision_function(X), ext.payload.decision_function(X), atol=1e-10)
    assert np.sum(internal.decision_function(X[unl]) > 0) == target
    # The protocol's two paths, the solver's search and the harness's for a solver without one, end
    # at the same outputs on every point and record the same search.
    searched_by_harness = type("HarnessSearched", (cls,), {"_internal_search": False})
    st = ProtocolSettings(sigma=1.5, C=3.0)
    own = _fit_binary_problem(cls, {}, st, X, y_semi, 6, X, r)
    harness = _fit_binary_problem(searched_by_harness, {}, st, X, y_semi, 6, X, r)
    assert own[4] == harness[4] and own[5]["search_exact"] == harness[5]["search_exact"]
    assert own[5]["threshold_shift"] == pytest.approx(harness[5]["threshold_shift"], abs=1e-10)
    for a, b in zip(own[1:3], harness[1:3]):
        np.testing.assert_allclose(a, b, atol=1e-10)


@pytest.mark.parametrize("name", list(SOLVERS))
@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_decision_function_reproduces_centered_outputs(name, kernel):
    """The uncentered expansion (eq. 13 folded into beta', b') gives the outputs the solver optimized."""
    X, y, y_semi = _small()
    est = SOLVERS[name](kernel=kernel, sigma=1.5, C=2.0, r=0.5, r_tilde=0.55).fit(X, y_semi)
    info = est.binary_fits_[0].info
    np.testing.assert_allclose(est.decision_function(X), info["outputs"], rtol=1e-8, atol=1e-8)
    unl = y_semi == -1
    # mean-output constraint (12): the unlabeled outputs average to b = 2 r~ - 1
    assert np.mean(info["outputs"][unl]) == pytest.approx(2 * 0.55 - 1, abs=1e-8)


@pytest.mark.parametrize("name", list(SOLVERS))
def test_linear_dense_equals_sparse(name):
    X, _, y_semi = _small()
    X[np.abs(X) < 0.3] = 0.0
    kw = dict(kernel="linear", C=1.0, r=0.5)
    d = SOLVERS[name](**kw).fit(X, y_semi)
    s = SOLVERS[name](**kw).fit(sp.csr_matrix(X), y_semi)
    np.testing.assert_allclose(d.coef_, s.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d.intercept_, s.intercept_, rtol=1e-5, atol=1e-6)


def test_two_moons_newton_flat_separates_and_meets_balance():
    """JMLR 2008 Table 3: the flat loss is the one that solves 2moons."""
    ds = two_moons(0)
    lab, unl = ds.splits[2]
    empty = np.empty(0, np.int64)
    split = Split("test", 0, None, lab[0], unl[0], empty, empty)
    st = ProtocolSettings(sigma=0.5, C=10.0)
    res = run_split(NewtonS3VM, {"loss": "flat"}, ds, split, st)
    assert res.balance_exact
    assert res.unlabeled_error < 0.2


def test_cccp_annealing_switch_and_monotone_objective():
    X, _, y_semi = _small(n=60)
    a = CCCP(sigma=1.5, C=3.0, r=0.5, r_tilde=0.5).fit(X, y_semi).binary_fits_[0].info["trace"]
    n = CCCP(sigma=1.5, C=3.0, r=0.5, r_tilde=0.5, anneal=False).fit(X, y_semi).binary_fits_[0].info["trace"]
    assert len(a) == 10 and len(n) == 1
    assert a[0]["C_star"] == pytest.approx(3e-3) and a[-1]["C_star"] == pytest.approx(3.0)
    assert all(t["converged"] for t in a + n)


def test_multiclass_one_vs_rest_and_registry():
    rng = np.random.default_rng(0)
    centers = np.array([[0, 0], [4, 0], [0, 4]])
    y = np.repeat([0, 1, 2], 20)
    X = centers[y] + rng.standard_normal((60, 2))
    y_semi = y.copy()
    y_semi[np.r_[3:20, 23:40, 43:60]] = -1
    for name, cls in SOLVERS.items():
        assert get_solver(name) is cls
        m = cls(sigma=2.0, C=5.0).fit(X, y_semi)
        assert m.decision_function(X).shape == (60, 3)
        assert np.mean(m.predict(X) == y) > 0.85


@pytest.mark.parametrize("name", list(SOLVERS))
def test_refit_identical_params_untouched(name):
    X, _, y_semi = _small()
    m = SOLVERS[name](sigma=1.0, C=3.0)
    params = m.get_params()
    a = m.fit(X, y_semi).decision_function(X)
    b = clone(m).fit(X, y_semi).decision_function(X)
    np.testing.assert_array_equal(a, b)
    assert m.get_params() == params
    assert getattr(m, "_problem", None) is None  # the n x n caches are dropped after fit


@pytest.mark.parametrize("mutate,match", [
    (lambda X, y: (np.where(np.eye(*X.shape, dtype=bool), np.nan, X), y), "NaN"),
    (lambda X, y: (X, -np.ones_like(y)), "no labeled point"),
    (lambda X, y: (X, np.where(np.arange(y.size) < 5, 1, -1)), "only one class"),
])
@pytest.mark.parametrize("name", list(SOLVERS))
def test_bad_input(name, mutate, match):
    X, _, y_semi = _small()
    with pytest.raises(ValueError, match=match):
        SOLVERS[name]().fit(*mutate(X, y_semi))


@pytest.mark.parametrize("name,params,err,match", [
    ("newton", {"loss": "hinge"}, ValueError, "loss must be one of 'flat', 'quadratic'"),
    ("newton", {"plateau": 0.9}, ValueError, "plateau"),
    ("newton", {"anneal_steps": 0}, ValueError, "anneal_steps"),
    ("newton", {"anneal_start": 2.0}, ValueError, "anneal_start"),
    ("newton", {"r_tilde": "half"}, TypeError, "r_tilde"),
    ("newton", {"r_tilde": np.inf}, ValueError, "r_tilde"),
    ("newton", {"r": 1.5}, ValueError, r"r must be a float in \(0, 1\)"),
    ("newton", {"C_star": 0.0}, ValueError, "C_star"),
    ("newton", {"tol": -1.0}, ValueError, "tol"),
    ("cccp", {"anneal": "yes"}, TypeError, "anneal must be a bool"),
    ("cccp", {"max_cccp_iter": 0}, ValueError, "max_cccp_iter"),
    ("grad_s3vm", {"s": 0.0}, ValueError, "s must be a float > 0"),
    ("grad_s3vm", {"kernel_map": "qr"}, ValueError, "kernel_map"),
    ("grad_s3vm", {"max_iter": 0}, ValueError, "max_iter"),
    ("cs3vm", {"n_smooth": 0}, ValueError, "n_smooth"),
    ("cs3vm", {"final_smoothing": -1.0}, ValueError, "final_smoothing"),
    ("cs3vm", {"kernel": "poly"}, ValueError, "kernel must be"),
])
def test_bad_params(name, params, err, match):
    X, _, y_semi = _small()
    with pytest.raises(err, match=match):
        SOLVERS[name](**params).fit(X, y_semi)


def test_cholesky_map_matches_eigh_map():
    X, _, y_semi = _small()
    a = GradS3VM(sigma=1.5, C=2.0, r=0.5, r_tilde=0.5).fit(X, y_semi)
    b = GradS3VM(sigma=1.5, C=2.0, r=0.5, r_tilde=0.5, kernel_map="cholesky").fit(X, y_semi)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-4)


def test_harness_reports_dichotomic_iterations():
    ds, split = _toy_split()
    st = ProtocolSettings(sigma=10.0, C=10.0)
    idx = np.r_[split.labeled, split.unlabeled]
    y01 = ds.y[idx].copy()
    y01[split.labeled.size:] = -1
    est, unl_out, _, secs, d_iter, search = _fit_binary_problem(NewtonS3VM, {}, st, ds.X[idx], y01,
                                                                split.labeled.size, None, 0.5)
    assert search["search_exact"] == est.binary_fits_[0].info["search_exact"]
    assert d_iter == est.binary_fits_[0].info["dichotomic_iter"] >= 1 and secs > 0
    assert np.sum(unl_out > 0) == n_positive(split.unlabeled.size, 0.5)


# ------------------------------------------- nabla-S3VM / cS3VM objective evaluation
def _counting(Z):
    """``Z`` as a LinearOperator that counts its products with w (``Z @ w``)."""
    from scipy.sparse.linalg import LinearOperator

    calls = [0]

    def matvec(v):
        calls[0] += 1
        return Z @ np.ravel(v)

    return LinearOperator(Z.shape, dtype=np.float64, matvec=matvec, rmatvec=lambda u: Z.T @ np.ravel(u)), calls


@pytest.mark.parametrize("labeled_first", [True, False])
@pytest.mark.parametrize("var", [None, 0.2])
def test_smooth_objective_class_is_the_function_and_remembers(labeled_first, var):
    from s3vm_bench.solvers.grad_s3vm import SmoothObjective
    from s3vm_bench.solvers.losses import SmoothedExpLoss

    rng = np.random.default_rng(2)
    n, d = 30, 5
    Z = rng.standard_normal((n, d))
    labeled = np.zeros(n, bool)
    labeled[:7] = True
    if not labeled_first:
        labeled = rng.permutation(labeled)
    y_lab = np.where(np.arange(7) % 2 == 0, 1.0, -1.0)
    if var is None:
        loss, fast = (lambda t: exp_unlabeled_loss(t, 5.0)), (lambda t: exp_unlabeled_loss(t, 5.0, hess=False))
    else:
        v = 0.1 + rng.random(n - 7)
        loss = lambda t: smoothed_exp_unlabeled_loss(t, var * v)  # noqa: E731
        sm = SmoothedExpLoss(var * v)
        fast = lambda t: sm(t, hess=False)  # noqa: E731
        t = rng.standard_normal(n - 7)
        ref, got = smoothed_exp_unlabeled_loss(t, var * v), sm(t)
        assert all(np.array_equal(a, b) for a, b in zip(ref, got)) and sm(t, hess=False).hess is None
    op, calls = _counting(Z)
    obj = SmoothObjective(op, 0.3, y_lab, labeled, 3.0, 2.0, fast)
    ws = [0.4 * rng.standard_normal(d) for _ in range(3)]
    for w in ws:
        v_ref, g_ref, o_ref = smooth_objective(w, Z, 0.3, y_lab, labeled, 3.0, 2.0, loss)
        v_new, g_new = obj(w)
        assert v_new == v_ref and np.array_equal(g_new, g_ref)  # the same floating-point numbers
    assert calls[0] == 3
    # the last two points are remembered, an older one is recomputed
    for w, fresh in ((ws[2], 0), (ws[1], 0), (ws[0], 1)):
        v_o, o = obj.outputs_at(w)
        assert calls[0] == 3 + fresh
        calls[0] -= fresh
        v_ref, _, o_ref = smooth_objective(w, Z, 0.3, y_lab, labeled, 3.0, 2.0, loss)
        assert v_o == v_ref and np.array_equal(o, o_ref)
    # a known starting point skips its product with Z, and only that one
    start = ws[0].copy()
    known = SmoothObjective(op, 0.3, y_lab, labeled, 3.0, 2.0, fast, known=(start, Z @ start + 0.3))
    before = calls[0]
    assert known(start)[0] == smooth_objective(start, Z, 0.3, y_lab, labeled, 3.0, 2.0, loss)[0]
    assert calls[0] == before
    known(ws[1])
    assert calls[0] == before + 1


@pytest.mark.parametrize("cls", [GradS3VM, CS3VM])
def test_lbfgs_stages_compute_z_w_once_per_evaluation(cls, monkeypatch):
    """One product ``Z w`` per L-BFGS evaluation: none for the warm starts of the stages, none to
    read the outputs at each stage's end, and the same solution as recomputing them."""
    import s3vm_bench.solvers.grad_s3vm as gs

    X, _, y_semi = _small()
    counters = []
    evals = [0]
    real_init, real_call = gs.SmoothObjective.__init__, gs.SmoothObjective.__call__

    def init(self, Z, *args, **kwargs):
        op, calls = _counting(np.asarray(Z))
        real_init(self, op, *args, **kwargs)
        counters.append(calls)

    def call(self, w):
        evals[0] += 1
        return real_call(self, w)

    monkeypatch.setattr(gs.SmoothObjective, "__init__", init)
    monkeypatch.setattr(gs.SmoothObjective, "__call__", call)
    est = cls(sigma=1.5, C=2.0, r=0.5, r_tilde=0.5).fit(X, y_semi)
    stages = len(est.binary_fits_[0].info["trace"])
    assert stages > 1 and sum(c[0] for c in counters) == evals[0] - stages
    monkeypatch.undo()
    # the same arithmetic without the counting wrapper: the two-product evaluation on the array
    monkeypatch.setattr(gs.SmoothObjective, "fused", False)
    plain = cls(sigma=1.5, C=2.0, r=0.5, r_tilde=0.5).fit(X, y_semi)
    np.testing.assert_array_equal(est.decision_function(X), plain.decision_function(X))


@pytest.mark.parametrize("labeled_first", [True, False])
@pytest.mark.parametrize("var", [None, 0.2, "scalar"])
@pytest.mark.parametrize("block_bytes", [8 * 5, 8 * 5 * 7, 1 << 18])
def test_one_pass_evaluation_is_the_two_product_one(labeled_first, var, block_bytes, monkeypatch):
    """:func:`_objective_pass` (C-contiguous Z, ExpUnlabeledLoss) gives objective (14), its gradient
    and the outputs of :func:`smooth_objective` up to rounding, for any block size, and reads the
    outputs of a known start instead of recomputing them."""
    import s3vm_bench.solvers.grad_s3vm as gs

    monkeypatch.setattr(gs.SmoothObjective, "block_bytes", block_bytes)  # 1 row, 7 rows, all rows
    rng = np.random.default_rng(5)
    n, d = 41, 5
    Z = rng.standard_normal((n, d))
    labeled = np.zeros(n, bool)
    labeled[:9] = True
    if not labeled_first:
        labeled = rng.permutation(labeled)
    y_lab = np.where(rng.random(9) < 0.5, 1.0, -1.0)
    u = n - 9
    varv = {None: None, 0.2: 0.2 * (0.1 + rng.random(u)), "scalar": 0.3}[var]
    loss = gs.ExpUnlabeledLoss(5.0, varv)
    ref_loss = (lambda t: exp_unlabeled_loss(t, 5.0)) if varv is None else (lambda t: smoothed_exp_unlabeled_loss(t, varv))
    obj = gs.SmoothObjective(Z, 0.3, y_lab, labeled, 3.0, 2.0, loss)
    assert obj._pass is not None  # the one-pass evaluation applies
    for _ in range(3):
        w = 0.4 * rng.standard_normal(d)
        v_ref, g_ref, o_ref = smooth_objective(w, Z, 0.3, y_lab, labeled, 3.0, 2.0, ref_loss)
        v, g, o = obj.evaluate(w)
        assert v == pytest.approx(v_ref, rel=1e-13)
        np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(o, o_ref, rtol=1e-13, atol=1e-13)
        assert obj(w)[0] == v and obj.outputs_at(w)[0] == v
    # a known start: its (deliberately wrong) outputs are read, not recomputed
    fake = o_ref + 1.0
    known = gs.SmoothObjective(Z, 0.3, y_lab, labeled, 3.0, 2.0, loss, known=(w, fake))
    v_k, _, o_k = known.evaluate(w)
    np.testing.assert_array_equal(o_k, fake)
    assert v_k == pytest.approx(smooth_objective(w, Z, 1.3, y_lab, labeled, 3.0, 2.0, ref_loss)[0], rel=1e-12)
    # not applicable: a Fortran-ordered Z or another loss fall back to the two products
    assert gs.SmoothObjective(np.asfortranarray(Z), 0.3, y_lab, labeled, 3.0, 2.0, loss)._pass is None
    assert gs.SmoothObjective(Z, 0.3, y_lab, labeled, 3.0, 2.0, ref_loss)._pass is None


@pytest.mark.parametrize("cls", [GradS3VM, CS3VM])
def test_one_pass_fit_matches_two_product_fit(cls, monkeypatch):
    """The fitted model of the one-pass evaluation is the two-product one up to rounding."""
    import s3vm_bench.solvers.grad_s3vm as gs

    X, _, y_semi = _small(seed=4, n=60)
    fast = cls(sigma=1.5, C=2.0, r=0.5).fit(X, y_semi)
    monkeypatch.setattr(gs.SmoothObjective, "fused", False)
    plain = cls(sigma=1.5, C=2.0, r=0.5).fit(X, y_semi)
    np.testing.assert_allclose(fast.decision_function(X), plain.decision_function(X), rtol=1e-6, atol=1e-6)
    assert fast.binary_fits_[0].info["r_tilde"] == pytest.approx(plain.binary_fits_[0].info["r_tilde"], abs=1e-12)


# ------------------------------------- search_warm_stages: warm-started dichotomic search
@pytest.mark.parametrize("cls", [GradS3VM, CS3VM])
def test_search_warm_stages_runs_the_last_stages_from_the_best_solution(cls, monkeypatch):
    """With ``search_warm_stages=k`` the first r~ runs every stage from w = 0 and each later r~
    runs the last k stages only, from the w of the solve whose count was closest to the target;
    the default never warm-starts. The outputs of the warm start are those of the new bias."""
    import s3vm_bench.solvers.grad_s3vm as gs

    X, _, y_semi = _small(seed=4, n=60)
    calls = []
    real = gs.Method1Mixin._lbfgs_stages

    def spy(self, problem, y_pm, C, C_star, b, stages, warm=None):
        stages = list(stages)
        sol = real(self, problem, y_pm, C, C_star, b, iter(stages), warm)
        out_u = sol.outputs[problem.unlabeled]
        calls.append(dict(b=b, n_stages=len(stages), ran=len(sol.trace), warm=warm, sol=sol,
                          miss=abs(int(np.sum(out_u > 0)) - n_positive(out_u.size, 0.5))))
        assert sol.warm_started == (warm is not None)
        # the outputs returned are Z w + b at this bias
        np.testing.assert_allclose(sol.outputs, problem.cache["Z"] @ sol.state + b, rtol=1e-12, atol=1e-12)
        return sol

    monkeypatch.setattr(gs.Method1Mixin, "_lbfgs_stages", spy)
    default = cls(sigma=1.5, C=2.0, r=0.5).fit(X, y_semi)
    assert all(c["warm"] is None and c["ran"] == c["n_stages"] for c in calls)
    assert default.binary_fits_[0].info["warm_started"] is False
    assert cls().get_params()["search_warm_stages"] is None
    calls.clear()
    est = cls(sigma=1.5, C=2.0, r=0.5, search_warm_stages=2).fit(X, y_semi)
    _assert_warm_search(calls, est, X, y_semi, 2)


def _assert_warm_search(calls, est, X, y_semi, k):
    """The solves ``calls`` of a fit with ``search_warm_stages=k``: the first runs every stage from
    zero, each later one the last k stages from the solution whose count was closest to the target
    (the later one on a tie); the retained solve is flagged; the balance is met."""
    info = est.binary_fits_[0].info
    assert len(calls) == info["dichotomic_iter"] >= 2
    assert calls[0]["warm"] is None and calls[0]["ran"] == calls[0]["n_stages"] > k
    for i, c in enumerate(calls[1:], start=1):
        assert c["ran"] == k and c["warm"] is not None
        best = min(range(i), key=lambda j: (calls[j]["miss"], -j))  # closest count, later on a tie
        assert c["warm"] is calls[best]["sol"]
    retained = next(c for c in calls if c["sol"].trace is info["trace"])
    assert info["warm_started"] is (retained["warm"] is not None)
    assert np.sum(est.decision_function(X[y_semi == -1]) > 0) == n_positive(int(np.sum(y_semi == -1)), 0.5)


def test_newton_search_warm_stages_continues_from_the_best_beta(monkeypatch):
    """Newton S3VM's ``search_warm_stages=k``: the first r~ is annealed over every C* from
    beta = 0; each later r~ runs the last k values of C* only, from the beta (and K beta) of the
    solve whose count was closest to the target, moved to the new bias; the default never
    warm-starts and the balance constraint is still met exactly or by the threshold shift."""
    X, _, y_semi = _small(seed=4, n=60)
    calls = []
    real = NewtonS3VM._solve

    def spy(self, problem, y_pm, C, C_star, b, warm=None):
        sol = real(self, problem, y_pm, C, C_star, b, warm=warm)
        out_u = sol.outputs[problem.unlabeled]
        calls.append(dict(b=b, warm=warm, sol=sol, ran=len(sol.trace), n_stages=10,
                          miss=abs(int(np.sum(out_u > 0)) - n_positive(out_u.size, 0.5))))
        assert sol.warm_started == (warm is not None)
        beta, Kbeta = sol.state
        np.testing.assert_array_equal(beta, sol.coef)
        np.testing.assert_allclose(Kbeta, problem.centered_gram() @ beta, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(sol.outputs, Kbeta + b, rtol=1e-12, atol=1e-12)
        return sol

    monkeypatch.setattr(NewtonS3VM, "_solve", spy)
    default = NewtonS3VM(sigma=1.5, C=2.0, r=0.5).fit(X, y_semi)
    assert calls and all(c["warm"] is None and c["ran"] == 10 for c in calls)
    assert default.binary_fits_[0].info["warm_started"] is False
    assert NewtonS3VM().get_params()["search_warm_stages"] is None
    calls.clear()
    est = NewtonS3VM(sigma=1.5, C=2.0, r=0.5, search_warm_stages=3).fit(X, y_semi)
    final = calls[0]["sol"].trace[-1]["C_star"]
    assert all(c["sol"].trace[-1]["C_star"] == final for c in calls)  # the later solves end at the final C*
    _assert_warm_search(calls, est, X, y_semi, 3)


@pytest.mark.parametrize("cls", [GradS3VM, CS3VM, NewtonS3VM])
@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_search_warm_stages_is_validated(cls, bad):
    X, _, y_semi = _small()
    with pytest.raises(ValueError, match="search_warm_stages"):
        cls(sigma=1.5, search_warm_stages=bad).fit(X, y_semi)


@pytest.mark.parametrize("cls", [GradS3VM, CS3VM, NewtonS3VM])
def test_search_warm_stages_unused_with_fixed_r_tilde(cls):
    """One solve (``r_tilde`` given): nothing to warm-start, the fit is the default's."""
    X, _, y_semi = _small()
    a = cls(sigma=1.5, C=2.0, r_tilde=0.4).fit(X, y_semi)
    b = cls(sigma=1.5, C=2.0, r_tilde=0.4, search_warm_stages=1).fit(X, y_semi)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_the_unlabeled_rows_are_a_view_when_they_are_one_block():
    """The search's outputs on the unlabeled points read their kernel rows without a copy per solve
    when those points are one block (as the protocol orders them), and the same rows otherwise."""
    import scipy.sparse as sp

    from s3vm_bench.solvers._mean_output import CenteredProblem

    A = np.arange(40.0).reshape(8, 5)
    for unl, view in ((np.arange(3, 8), True), (np.array([1, 2, 5, 7]), False)):
        labeled = ~np.isin(np.arange(8), unl)
        rows = CenteredProblem(labeled, unl, None, None).unlabeled_rows(A)
        assert np.array_equal(rows, A[unl]) and np.shares_memory(rows, A) == view
        sparse_rows = CenteredProblem(labeled, unl, None, None).unlabeled_rows(sp.csr_matrix(A))
        assert np.array_equal(sparse_rows.toarray(), A[unl])
    # column-major features (a DataFrame's values): a row-major copy, so that the products sum as
    # with A[unlabeled]
    rows = CenteredProblem(~np.isin(np.arange(8), np.arange(3, 8)), np.arange(3, 8), None, None).unlabeled_rows(
        np.asfortranarray(A))
    assert rows.flags.c_contiguous and np.array_equal(rows, A[3:])
