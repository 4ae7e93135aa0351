"""Primal L2-SVM solvers against an independent optimizer of the same objective."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize, minimize_scalar

from s3vm_bench.solvers._primal import (
    PrimalResult,
    _exact_line_search,
    lm_newton,
)
from s3vm_bench.solvers.numerics import gaussian_kernel, kernel_newton, kernel_pca_map, l2svm_mfn, linear_kernel

from tests._toy import l2svm_objective

REL = 1e-6
MFN_REASONS = {"optimality", "relative_decrease", "max_iter"}
NEWTON_REASONS = {"support_set_stable", "newton_decrement", "max_iter"}


def _problem(seed=0, n=60, d=8, density=1.0, weighted=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    score = X[:, 0] - 0.5 * X[:, 1] + 0.8 * rng.normal(size=n)
    y = np.where(score > 0.2, 1.0, -1.0)
    cost = rng.uniform(0.1, 5.0, size=n) if weighted else 1.7
    if weighted:
        cost[:5] = 0.0  # zero-cost points must be ignored
    return X, y, cost


def _reference_linear(X, y, cost, lam, bias):
    """L-BFGS-B on the same primal: lam/2(||w||^2 [+b^2]) + sum c max(0,1-y(Xw+b))^2."""
    X = X.toarray() if sp.issparse(X) else X
    n, d = X.shape
    c = np.broadcast_to(np.asarray(cost, float), (n,))
    rb = 1.0 if bias == "regularized" else 0.0

    def fun(v):
        w, b = v[:d], v[d]
        s = np.maximum(1.0 - y * (X @ w + b), 0.0)
        g_o = -2.0 * c * s * y
        val = 0.5 * lam * (w @ w + rb * b * b) + c @ (s * s)
        return val, np.append(lam * w + X.T @ g_o, g_o.sum() + lam * rb * b)

    res = minimize(fun, np.zeros(d + 1), jac=True, method="L-BFGS-B",
                   options=dict(ftol=1e-15, gtol=1e-11, maxiter=20000, maxcor=50))
    return res.fun


def _assert_rel(ours, ref, rel=REL):
    assert abs(ours - ref) <= rel * abs(ref), (ours, ref)


# ---------------------------------------------------------------- L2-SVM-MFN
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("bias", ["regularized", "free"])
@pytest.mark.parametrize("lam", [1.0, 0.05])
def test_mfn_matches_lbfgs(sparse, weighted, bias, lam):
    X, y, cost = _problem(1, density=0.5 if sparse else 1.0, weighted=weighted)
    Xin = sp.csr_matrix(X) if sparse else X
    res = l2svm_mfn(Xin, y, cost, lam=lam, bias=bias)
    assert isinstance(res, PrimalResult)
    assert res.stop_reason in MFN_REASONS
    assert res.coef.shape == (X.shape[1],)
    ref = _reference_linear(X, y, cost, lam, bias)
    _assert_rel(res.objective, ref)
    # the reported objective is the objective of the returned coefficients
    assert res.objective == pytest.approx(
        l2svm_objective(y, cost, res.coef, res.intercept, X=Xin, lam=lam, bias=bias), rel=1e-12
    )
    np.testing.assert_allclose(res.outputs, X @ res.coef + res.intercept, atol=1e-10)


def test_mfn_dense_and_sparse_agree():
    X, y, cost = _problem(2, density=0.3, weighted=True)
    a = l2svm_mfn(X, y, cost, lam=0.5)
    b = l2svm_mfn(sp.csc_matrix(X), y, cost, lam=0.5)  # CSC converted to CSR
    np.testing.assert_allclose(a.coef, b.coef, atol=1e-8)
    assert a.objective == pytest.approx(b.objective, rel=1e-10)


def test_mfn_regularized_bias_differs_from_free():
    X, y, cost = _problem(3)
    X = X + 3.0  # a large offset makes the bias regularization matter
    reg = l2svm_mfn(X, y, 0.05, bias="regularized")
    free = l2svm_mfn(X, y, 0.05, bias="free")
    assert free.objective < reg.objective
    assert l2svm_objective(y, 0.05, reg.coef, reg.intercept, X=X, bias="free") >= free.objective * (1 - 1e-12)


@pytest.mark.parametrize("bias", ["regularized", "free"])
def test_mfn_warm_start_at_optimum_returns_immediately(bias):
    X, y, cost = _problem(4, weighted=True)
    first = l2svm_mfn(X, y, cost, lam=0.3, bias=bias)
    again = l2svm_mfn(X, y, cost, lam=0.3, w0=first.coef, b0=first.intercept, bias=bias)
    assert again.n_iter == 1 and again.stop_reason == "optimality"
    assert again.n_inner_iter <= 2
    assert again.objective == pytest.approx(first.objective, rel=1e-10)


def test_mfn_warm_start_from_perturbed_problem():
    X, y, cost = _problem(5)
    first = l2svm_mfn(X, y, cost, lam=1.0)
    cost2 = np.full(len(y), cost)
    cost2[:10] *= 3.0
    warm = l2svm_mfn(X, y, cost2, lam=1.0, w0=first.coef, b0=first.intercept)
    cold = l2svm_mfn(X, y, cost2, lam=1.0)
    assert warm.objective == pytest.approx(cold.objective, rel=1e-9)


def test_mfn_max_iter_is_reported():
    X, y, cost = _problem(6)
    res = l2svm_mfn(X, y, cost, max_iter=1)
    assert res.stop_reason == "max_iter" and res.n_iter == 1
    assert res.objective >= l2svm_mfn(X, y, cost).objective


def test_mfn_separable_and_single_class():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    X[:, 0] += 3 * y  # wide margin
    res = l2svm_mfn(X, y, 100.0, lam=1.0, bias="free")
    assert np.all(y * res.outputs > 0.99)  # soft (L2) margin: small violations allowed
    _assert_rel(res.objective, _reference_linear(X, y, 100.0, 1.0, "free"))
    one = l2svm_mfn(X, np.ones(30), 1.0, bias="free")
    assert one.objective == pytest.approx(0.0, abs=1e-10)
    assert np.all(one.outputs >= 1 - 1e-6)


# ---------------------------------------------------------------- kernel Newton
def _reference_kernel(K, y, cost):
    """Same primal through explicit features Z Z^T = K (JMLR Method 1), L-BFGS-B."""
    Z, _ = kernel_pca_map(K)
    return _reference_linear(Z, y, cost, 1.0, "free")


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("sigma", [0.8, 3.0])
def test_kernel_newton_matches_lbfgs_gaussian(weighted, sigma):
    X, y, cost = _problem(8, n=50, d=4, weighted=weighted)
    K = gaussian_kernel(X, sigma=sigma)
    res = kernel_newton(K, y, cost)
    assert res.stop_reason in NEWTON_REASONS and res.stop_reason != "max_iter"
    _assert_rel(res.objective, _reference_kernel(K, y, cost))
    assert res.objective == pytest.approx(l2svm_objective(y, cost, res.coef, res.intercept, K=K), rel=1e-12)
    np.testing.assert_allclose(res.outputs, K @ res.coef + res.intercept, atol=1e-9)
    # beta vanishes off the support set (representer form of the L2-SVM)
    np.testing.assert_allclose(res.coef[~res.support], 0.0, atol=1e-6 * np.abs(res.coef).max())


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_kernel_newton_linear_kernel_matches_mfn_free(sparse, weighted):
    X, y, cost = _problem(9, density=0.5 if sparse else 1.0, weighted=weighted)
    Xin = sp.csr_matrix(X) if sparse else X
    kn = kernel_newton(linear_kernel(Xin), y, cost)
    mfn = l2svm_mfn(Xin, y, cost, lam=1.0, bias="free")
    _assert_rel(kn.objective, mfn.objective)
    _assert_rel(kn.objective, _reference_linear(X, y, cost, 1.0, "free"))
    np.testing.assert_allclose(kn.outputs, mfn.outputs, atol=1e-5)
    assert kn.intercept == pytest.approx(mfn.intercept, abs=1e-5)
    # w = X^T beta
    np.testing.assert_allclose(X.T @ kn.coef, mfn.coef, atol=1e-5)


def test_kernel_newton_warm_start_at_optimum_returns_immediately():
    X, y, cost = _problem(10, n=40, d=3, weighted=True)
    K = gaussian_kernel(X, sigma=1.0)
    first = kernel_newton(K, y, cost)
    again = kernel_newton(K, y, cost, beta0=first.coef, b0=first.intercept)
    assert again.n_iter <= 1
    assert again.objective == pytest.approx(first.objective, rel=1e-10)


def test_kernel_newton_singular_kernel_and_duplicates():
    X, y, cost = _problem(11, n=30, d=3)
    X = np.vstack([X, X[:10]])  # exact duplicates: K singular
    y = np.concatenate([y, y[:10]])
    K = linear_kernel(X)  # rank 3
    res = kernel_newton(K, y, 1e6)  # huge C: the 1/(2c) ridge is tiny
    ref = _reference_linear(X, y, 1e6, 1.0, "free")
    _assert_rel(res.objective, ref, rel=1e-5)
    np.testing.assert_allclose(res.outputs, K @ res.coef + res.intercept, atol=1e-6)


def test_kernel_newton_zero_costs_and_one_class():
    X, y, _ = _problem(12, n=20, d=3)
    K = gaussian_kernel(X, sigma=1.0)
    none = kernel_newton(K, y, 0.0)
    assert none.objective == 0.0 and not np.any(none.coef)
    one = kernel_newton(K, np.ones(20), 2.0)
    assert one.objective == pytest.approx(0.0, abs=1e-10)


# ---------------------------------------------------------------- line search
@pytest.mark.parametrize("seed", range(12))
def test_exact_line_search_matches_brute_force(seed):
    """SIGIR Table 3 against a bounded scalar minimization of phi.

    The outputs are drawn so that many points leave and enter the active set
    before the minimizer (o_bar far from o, weak regularization).
    """
    rng = np.random.default_rng(seed)
    n = 60
    y = rng.choice([-1.0, 1.0], size=n)
    c2 = 2 * rng.uniform(0.1, 2.0, size=n)
    o = rng.normal(scale=2.0, size=n)
    o_bar = o + rng.normal(scale=0.3, size=n) + 1.5 * y * rng.uniform(-1, 2, size=n)
    w, w_bar = rng.normal(size=5), rng.normal(size=5)
    lam = 10.0 ** rng.uniform(-3, 0)
    dw = w_bar - w
    eligible = rng.random(n) > 0.1

    def phi(t):
        wt = w + t * dw
        s = np.maximum(1 - y * (o + t * (o_bar - o)), 0) * eligible
        return 0.5 * lam * wt @ wt + 0.5 * c2 @ (s * s)

    delta, slope0 = _exact_line_search(lam * w @ dw, lam * w_bar @ dw, o, o_bar, y, c2, eligible)
    assert slope0 == pytest.approx((phi(1e-7) - phi(0.0)) / 1e-7, rel=1e-4, abs=1e-4)
    best = minimize_scalar(phi, bounds=(0, 20), method="bounded", options=dict(xatol=1e-12))
    assert phi(delta) <= best.fun + 1e-9 * abs(best.fun)
    assert delta == pytest.approx(best.x, abs=1e-5)


# ---------------------------------------------------------------- bad inputs
_Xb, _yb, _cb = _problem(14, n=10, d=3)
_Kb = linear_kernel(_Xb)
#: case -> (call, the message it must raise, a regular expression)
BAD_CALLS = {
    "y length": (lambda: l2svm_mfn(_Xb, _yb[:-1], _cb), r"y must have shape \(10,\), got \(9,\)"),
    "y not +-1": (lambda: l2svm_mfn(_Xb, np.where(_yb > 0, 1.0, 0.0), _cb), r"y must contain only -1 and \+1"),
    "negative cost": (lambda: l2svm_mfn(_Xb, _yb, -1.0), r"cost must be >= 0"),
    "cost shape": (lambda: l2svm_mfn(_Xb, _yb, np.ones(3)), r"cost must be a scalar or have shape \(10,\)"),
    "cost nan": (lambda: l2svm_mfn(_Xb, _yb, np.full(10, np.nan)), r"cost contains NaN or inf"),
    "X nan": (lambda: l2svm_mfn(np.where(_Xb > 0, np.nan, _Xb), _yb, _cb), r"X contains NaN or inf"),
    "sparse X inf": (lambda: l2svm_mfn(sp.csr_matrix(np.where(_Xb > 0, np.inf, _Xb)), _yb, _cb),
                     r"X contains NaN or inf"),
    "lam 0": (lambda: l2svm_mfn(_Xb, _yb, _cb, lam=0.0), r"lam must be > 0"),
    "bias unknown": (lambda: l2svm_mfn(_Xb, _yb, _cb, bias="none"), r"bias must be one of"),
    "w0 shape": (lambda: l2svm_mfn(_Xb, _yb, _cb, w0=np.zeros(4)), r"w0 must have shape \(3,\)"),
    "b0 inf": (lambda: l2svm_mfn(_Xb, _yb, _cb, b0=np.inf), r"b0 must be finite"),
    "X 1-D": (lambda: l2svm_mfn(_Xb[0], _yb, _cb), r"X must be 2-D"),
    "max_iter 0": (lambda: l2svm_mfn(_Xb, _yb, _cb, max_iter=0), r"max_iter must be an integer >= 1"),
    "K not square": (lambda: kernel_newton(_Kb[:, :-1], _yb, _cb), r"K must be a square"),
    "K nan": (lambda: kernel_newton(np.where(_Kb > 1, np.nan, _Kb), _yb, _cb), r"K contains NaN or inf"),
    "beta0 shape": (lambda: kernel_newton(_Kb, _yb, _cb, beta0=np.zeros(3)), r"beta0 must have shape \(10,\)"),
    "tol 0": (lambda: kernel_newton(_Kb, _yb, _cb, tol=0.0), r"tol must be > 0"),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_inputs_raise_value_error(case):
    call, message = BAD_CALLS[case]
    with pytest.raises(ValueError, match=message):
        call()


def test_sparse_kernel_matrix_is_a_type_error():
    with pytest.raises(TypeError, match="dense"):
        kernel_newton(sp.csr_matrix(_Kb), _yb, _cb)


def test_kernel_newton_subset_initialization_same_optimum():
    X, y, cost = _problem(15, n=80, d=4, weighted=True)
    K = gaussian_kernel(X, sigma=1.5)
    plain = kernel_newton(K, y, cost)
    sub = kernel_newton(K, y, cost, init_subset=20, seed=3)
    assert sub.objective == pytest.approx(plain.objective, rel=1e-10)
    np.testing.assert_allclose(sub.outputs, plain.outputs, atol=1e-7)
    with pytest.raises(ValueError, match="init_subset"):
        kernel_newton(K, y, cost, init_subset=0)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_mfn_row_block_products_are_scipy_products(index_dtype):
    """The compiled CSR products of _RowBlock give scipy's ``X @ v`` and ``X.T @ u`` bit for bit."""
    from s3vm_bench.solvers._primal_mfn import _RowBlock

    rng = np.random.default_rng(7)
    for density in (0.0, 0.02, 0.3, 1.0):
        X = sp.random(37, 53, density=density, format="csr", random_state=rng)
        X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
        op = _RowBlock(X)
        v, u = rng.standard_normal(53), rng.standard_normal(37)
        np.testing.assert_array_equal(op.matvec(v), X @ v)
        np.testing.assert_array_equal(op.rmatvec(u), X.T @ u)
        strided = np.repeat(v, 2)[::2]  # a non-contiguous view of v
        np.testing.assert_array_equal(op.matvec(strided), X @ v)


def test_mfn_csr_and_other_formats_agree():
    """L2-SVM-MFN on CSR (compiled products), CSC (scipy's ``@``) and dense data: one answer."""
    X, y, cost = _problem(16, density=0.3, weighted=True)
    csr = l2svm_mfn(sp.csr_matrix(X), y, cost, lam=0.4, bias="free")
    csc = l2svm_mfn(sp.csc_matrix(X), y, cost, lam=0.4, bias="free")
    dense = l2svm_mfn(X, y, cost, lam=0.4, bias="free")
    for other in (csc, dense):
        assert csr.objective == pytest.approx(other.objective, rel=1e-12)
        np.testing.assert_allclose(csr.coef, other.coef, atol=1e-10)


@pytest.mark.parametrize("n_rows", [0, 1, 5, 13, 40])
def test_rows_product_is_the_matrix_product(n_rows):
    """``K v`` for v zero off ``rows``, from those rows of K (any order), equals the dense product."""
    from s3vm_bench.solvers._primal import _rows_product

    rng = np.random.default_rng(n_rows)
    Z = rng.standard_normal((40, 6))
    K = Z @ Z.T
    rows = rng.permutation(40)[:n_rows]
    v = np.zeros(40)
    v[rows] = rng.standard_normal(n_rows)
    np.testing.assert_allclose(_rows_product(K, v, rows), K @ v, rtol=1e-12, atol=1e-12)


def test_lm_newton_kbeta0_spares_the_product_and_gives_the_same_minimizer():
    """A warm start with ``Kbeta0 = K beta0`` (the previous call's outputs less b) reaches the
    same minimizer as recomputing ``K beta0``; a wrong ``Kbeta0`` is used as given (so it is not
    silently recomputed) and a wrong shape is refused."""
    from s3vm_bench.solvers.losses import cccp_convex_loss

    rng = np.random.default_rng(5)
    X = rng.standard_normal((40, 3))
    K = gaussian_kernel(X, X, sigma=1.5)
    y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1.0, -1.0)  # labels, then the current CCCP signs
    b = 0.1

    def loss(o):  # one convex CCCP step (JMLR 2008 Sec. 4.1) with every point's sign fixed
        L = cccp_convex_loss(y * o)
        return float(L.value.sum()), y * L.grad, L.hess

    first = lm_newton(K, b, loss, None, max_iter=3)  # stopped early: a warm start has work left
    cold = lm_newton(K, b, loss, first.coef)
    warm = lm_newton(K, b, loss, first.coef, Kbeta0=first.outputs - b)
    np.testing.assert_allclose(warm.outputs, cold.outputs, rtol=0, atol=1e-10)
    assert abs(warm.objective - cold.objective) <= 1e-12 * abs(cold.objective)
    off = lm_newton(K, b, loss, first.coef, Kbeta0=first.outputs - b + 0.5, max_iter=1)
    assert not np.allclose(off.outputs, lm_newton(K, b, loss, first.coef, max_iter=1).outputs)
    with pytest.raises(ValueError, match="Kbeta0"):
        lm_newton(K, b, loss, first.coef, Kbeta0=np.zeros(3))
