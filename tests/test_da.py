"""DA: deterministic annealing by alternating minimization (ICML 2006 Sec. 3; JMLR 2008 Alg. 2)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.base import clone

from s3vm_bench.data_registry import Split, g50c_like, two_moons
from s3vm_bench.harness.protocol import ProtocolSettings, run_split
from s3vm_bench.solvers import get_solver
from s3vm_bench.solvers.da import DA, _SqrStep, bernoulli_entropy, bernoulli_kl, solve_nu
from s3vm_bench.solvers.numerics import gaussian_kernel, n_positive
from s3vm_bench.solvers.svm import SVM
from tests._toy import BAD_INPUTS
from tests._toy import small_clusters as _small


def _moons_split(seed, n_unlabeled=100):
    ds = two_moons(seed, n_unlabeled=n_unlabeled)
    lab, unl = ds.splits[2]
    empty = np.empty(0, np.int64)
    return ds, Split("test", 0, None, lab[0], unl[0], empty, empty)


def _semi(ds, n_lab=2):
    y = ds.y.copy()
    y[n_lab:] = -1
    return ds.X, y, float(ds.y[n_lab:].mean())


# ----------------------------------------------------------------------------- the nu root
@pytest.mark.parametrize("T", [1e-4, 1e-2, 1.0, 100.0])
@pytest.mark.parametrize("r", [0.03, 0.3, 0.5, 0.77])
@pytest.mark.parametrize("kind", ["normal", "huge", "ties", "two_values", "single"])
def test_nu_root_meets_balance(T, r, kind):
    rng = np.random.default_rng(1)
    g = {"normal": rng.standard_normal(200),
         "huge": 1e3 * rng.standard_normal(500),  # g/T up to ~1e7
         "ties": np.repeat(rng.standard_normal(5), 40),
         "two_values": np.r_[np.full(37, -4.0), np.full(63, 4.0)],
         "single": np.array([rng.standard_normal()])}[kind]
    root = solve_nu(g, T, r)
    assert abs(np.mean(root.p) - r) <= 1e-10
    assert root.converged or abs(root.residual) <= 1e-10
    # eq. (8): p_j = 1/(1 + exp((g_j - nu)/T)) -- decreasing in g, and in [0, 1]
    order = np.argsort(g, kind="stable")
    assert np.all(np.diff(root.p[order]) <= 1e-15)
    assert np.all((root.p >= 0) & (root.p <= 1))
    np.testing.assert_allclose(root.p, expit(root.logit), rtol=0, atol=0)
    if T >= 1.0:  # nu itself reproduces p where it is well conditioned
        np.testing.assert_allclose(expit((root.nu - g) / T), root.p, rtol=1e-9, atol=1e-12)


def test_nu_root_is_the_constrained_minimizer():
    """Eq. (8) with nu minimizes sum p g + T sum (p log p + q log q) subject to mean(p) = r."""
    rng = np.random.default_rng(0)
    g, T, r = 2.0 * rng.standard_normal(15), 0.7, 0.3
    root = solve_nu(g, T, r)

    def F(p):
        p = np.clip(p, 1e-15, 1 - 1e-15)
        return p @ g + T * np.sum(p * np.log(p) + (1 - p) * np.log(1 - p))

    res = minimize(F, np.full(g.size, r), method="SLSQP", bounds=[(1e-12, 1 - 1e-12)] * g.size,
                   constraints=[{"type": "eq", "fun": lambda p: p.mean() - r}], options={"ftol": 1e-14})
    assert F(root.p) <= res.fun + 1e-10
    np.testing.assert_allclose(root.p, res.x, atol=1e-5)


def test_nu_root_rejects_bad_input():
    with pytest.raises(ValueError, match="r must lie"):
        solve_nu([0.0, 1.0], 1.0, 1.0)
    with pytest.raises(ValueError, match="T must be > 0"):
        solve_nu([0.0, 1.0], 0.0, 0.5)
    with pytest.raises(ValueError, match="NaN"):
        solve_nu([np.nan, 1.0], 1.0, 0.5)


def test_entropy_and_kl():
    x = np.array([0.0, 0.0])
    assert bernoulli_entropy(x) == pytest.approx(1.0)  # p = 1/2: one bit
    assert bernoulli_entropy(np.array([800.0, -800.0])) == pytest.approx(0.0, abs=1e-300)
    assert bernoulli_kl(x, x) == 0.0
    a, b = np.array([1.3, -0.2]), np.array([0.1, 2.0])
    p, q = expit(a), expit(b)
    kl = np.mean(p * np.log2(p / q) + (1 - p) * np.log2((1 - p) / (1 - q)))
    assert bernoulli_kl(a, b) == pytest.approx(kl, rel=1e-12)


# ----------------------------------------------------------------------------- the alternation
@pytest.mark.parametrize("loss", ["l1", "l2", "sqr"])
def test_objective_non_increasing_at_fixed_T(loss):
    """Block coordinate descent: every f-step and p-step lowers I''(f, p; T) (ICML 2006 Sec. 3.1)."""
    ds = two_moons(8, n_unlabeled=40)
    X, y, r = _semi(ds)
    m = DA(sigma=0.5, C=10.0, loss=loss, r=r, svc_tol=1e-10).fit(X, y)
    trace = m.binary_fits_[0].info["trace"]
    pairs = [(a, b) for a, b in zip(trace[:-1], trace[1:]) if a["anneal"] == b["anneal"]]
    assert len(pairs) > 20
    for a, b in pairs:
        assert b["objective"] <= a["objective"] + 1e-9 * max(1.0, abs(a["objective"])), (a, b)
    # the p-steps meet the balance equation
    assert max(abs(t["balance"]) for t in trace if t["step"] == "p") <= 1e-10
    # annealing: T decreases by R between temperatures, from T0 * C*
    Ts = sorted({t["T"] for t in trace}, reverse=True)
    assert Ts[0] == pytest.approx(10.0 * 10.0)
    np.testing.assert_allclose(np.array(Ts[:-1]) / np.array(Ts[1:]), 1.5)


def test_sqr_reuses_one_factorization():
    ds = two_moons(3, n_unlabeled=40)
    X, y, r = _semi(ds)
    m = DA(sigma=0.5, C=10.0, loss="sqr", r=r).fit(X, y)
    fit = m.binary_fits_[0]
    assert fit.info["n_factorizations"] == 1
    assert fit.n_iter > 10  # many f-steps, one Cholesky
    # The f-step is the RLS solution with targets 2p - 1 (ICML 2006 eq. 7, plus a free bias).
    K = gaussian_kernel(X, sigma=0.5)
    labeled = y != -1
    y_pm = np.where(labeled, np.where(y == 1, 1.0, -1.0), 0.0)
    p = np.random.default_rng(0).uniform(size=(~labeled).sum())
    beta, b, o, _ = _SqrStep(K, y_pm, labeled, 10.0, 3.0).solve(p)
    n = K.shape[0]
    c = np.where(labeled, 10.0, 3.0)
    A = np.zeros((n + 1, n + 1))
    A[:n, :n] = K + np.diag(0.5 / c)
    A[:n, n] = A[n, :n] = 1.0
    t = np.where(labeled, y_pm, 0.0)
    t[~labeled] = 2 * p - 1
    sol = np.linalg.solve(A, np.r_[t, 0.0])
    np.testing.assert_allclose(beta, sol[:n], rtol=1e-8, atol=1e-8)
    assert b == pytest.approx(sol[n], rel=1e-8, abs=1e-10)


def test_l2_step_is_seeded_and_drops_tiny_costs(monkeypatch):
    # ICML 2006 Sec. 3.1 "seeding": each l2 f-step starts from the previous solution; a copy whose
    # cost C* p_j is below the floor (1e-14 C*) is no term at all.
    import s3vm_bench.solvers.da as da

    ds = two_moons(3, n_unlabeled=40)
    X, y, r = _semi(ds)
    calls = []
    real = da.kernel_newton_terms
    monkeypatch.setattr(da, "kernel_newton_terms",
                        lambda K, point, yd, cost, beta0=None, b0=None, **kw:
                        (calls.append((beta0, b0, cost.copy())), real(K, point, yd, cost, beta0, b0, **kw))[1])
    m = DA(sigma=0.5, C=10.0, loss="l2", r=r, T_fixed=1e-3).fit(X, y)
    assert len(calls) == m.binary_fits_[0].n_iter > 2
    assert calls[0][0] is None and calls[0][1] is None
    assert all(beta0 is not None and np.isfinite(b0) for beta0, b0, _ in calls[1:])
    K = gaussian_kernel(X, sigma=0.5)
    labeled = y != -1
    y_pm = np.where(labeled, np.where(y == 1, 1.0, -1.0), 0.0)
    step = da._L2Step(K, y_pm, labeled, 10.0, 2.0, 1e-9, 100)
    p = np.full((~labeled).sum(), 0.5)
    p[0], p[1] = 1e-15, 1.0 - 1e-16  # one copy each under the floor
    c = step.costs(p)
    n = K.shape[0]
    assert c[step.unl[0]] == 0.0 and c[n + 1] == 0.0 and c[n] > 0.0 and c[step.unl[1]] > 0.0


@pytest.mark.parametrize("loss,C_star", [("l1", 10.0), ("l2", 0.1)])
def test_two_moons_beats_svm_and_meets_balance(loss, C_star):
    """sigma = 0.5, C = 10 (JMLR 2008 Table 5). DA(l2) with C* = C never beat the SVM on 40
    realizations (JMLR 2008 Table 2 also reports 36.8% error for DA on 2moons), so the l2 case uses
    the C* = C/100 setting of JMLR 2008 Table 11."""
    ds, split = _moons_split(8)
    st = ProtocolSettings(sigma=0.5, C=10.0, C_star=C_star)
    svm = run_split(SVM, {}, ds, split, st)
    da = run_split(DA, {"loss": loss}, ds, split, st)
    assert da.balance_exact
    assert da.objective < svm.objective - 0.1
    assert da.unlabeled_error < svm.unlabeled_error


def test_cluster_toy_all_losses_beat_svm():
    ds = g50c_like(0, n=120, d=5)
    rng = np.random.default_rng(0)
    lab = np.r_[rng.choice(np.flatnonzero(ds.y == 1), 3, replace=False),
                rng.choice(np.flatnonzero(ds.y == 0), 3, replace=False)]
    empty = np.empty(0, np.int64)
    split = Split("test", 0, None, lab, np.setdiff1d(np.arange(ds.n_samples), lab), empty, empty)
    st = ProtocolSettings(sigma=3.0, C=10.0)
    svm = run_split(SVM, {}, ds, split, st)
    for loss in ("l1", "l2", "sqr"):
        res = run_split(DA, {"loss": loss}, ds, split, st)
        assert res.balance_exact
        assert res.objective < svm.objective


def test_returns_best_solution_on_path_and_fixed_T():
    ds = two_moons(8, n_unlabeled=40)
    X, y, r = _semi(ds)
    m = DA(sigma=0.5, C=10.0, loss="l2", r=r).fit(X, y)
    info = m.binary_fits_[0].info
    s3 = [t["s3vm_objective"] for t in info["trace"] if t["step"] == "f"]
    assert info["best"]["objective"] == pytest.approx(min(s3))
    assert m.stop_reason_ == ["entropy<epsilon"] and info["final_entropy"] < 1e-6
    # fixed temperature (ICML 2006 Table 5): one temperature, T_fixed * C*
    f = DA(sigma=0.5, C=10.0, loss="l2", r=r, T_fixed=0.01).fit(X, y)
    tr = f.binary_fits_[0].info["trace"]
    np.testing.assert_allclose([t["T"] for t in tr], 0.1, rtol=1e-12)
    assert f.stop_reason_[0].startswith("fixed_T:")
    a = DA(sigma=0.5, C=10.0, loss="l2", r=r, T_fixed=0.1, T_scale="absolute").fit(X, y)
    np.testing.assert_allclose([t["T"] for t in a.binary_fits_[0].info["trace"]], 0.1, rtol=1e-12)


def test_max_anneal_stops_when_entropy_cannot_vanish():
    """u r not an integer: one p_j stays fractional, the entropy stays > 0 -> max_anneal."""
    X, _, y_semi = _small()
    m = DA(sigma=1.0, C=1.0, loss="sqr", r=0.4321, max_anneal=8).fit(X, y_semi)
    assert m.stop_reason_ == ["max_anneal"]
    assert m.binary_fits_[0].info["n_temperatures"] == 8


# ----------------------------------------------------------------------------- estimator contract
@pytest.mark.parametrize("loss", ["l1", "l2", "sqr"])
def test_decision_function_reproduces_outputs_and_balance(loss):
    X, y, y_semi = _small()
    m = DA(sigma=1.5, C=2.0, loss=loss, r=0.5).fit(X, y_semi)
    info = m.binary_fits_[0].info
    f = m.decision_function(X)
    np.testing.assert_allclose(f, info["outputs"], rtol=1e-9, atol=1e-9)
    unl = y_semi == -1
    assert np.sum(f[unl] > 0) == n_positive(unl.sum(), 0.5)
    assert np.array_equal(m.transduction_[~unl], y_semi[~unl])


def test_refit_identical_and_params_untouched():
    X, _, y_semi = _small()
    m = DA(sigma=1.0, C=3.0, C_star=0.5, loss="l2")
    params = m.get_params()
    a = m.fit(X, y_semi).decision_function(X)
    b = m.fit(X, y_semi).decision_function(X)
    np.testing.assert_array_equal(a, b)
    assert m.get_params() == params
    c = clone(m).set_params(loss="sqr")
    assert c.get_params()["loss"] == "sqr" and m.loss == "l2"
    assert c.fit(X, y_semi).decision_function(X).shape == (X.shape[0],)


def test_unlabeled_data_changes_the_solution():
    X, _, y_semi = _small()
    da = DA(sigma=1.0, C=1.0, loss="l2").fit(X, y_semi).decision_function(X)
    svm = SVM(sigma=1.0, C=1.0).fit(X, y_semi).decision_function(X)
    assert np.max(np.abs(da - svm)) > 0.1


def test_linear_kernel_dense_and_sparse():
    X, y, y_semi = _small()
    d = DA(kernel="linear", C=1.0, loss="sqr").fit(X, y_semi)
    s = DA(kernel="linear", C=1.0, loss="sqr").fit(sp.csr_matrix(X), y_semi)
    assert d.coef_.shape == (1, X.shape[1])
    np.testing.assert_allclose(d.coef_, s.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(d.decision_function(X), d.binary_fits_[0].info["outputs"], rtol=1e-9, atol=1e-9)
    assert np.mean(d.predict(X) == y) > 0.8


def test_multiclass_one_vs_rest():
    rng = np.random.default_rng(2)
    y = np.arange(60) % 3
    X = rng.standard_normal((60, 2)) + 4.0 * np.c_[np.cos(2 * np.pi * y / 3), np.sin(2 * np.pi * y / 3)]
    y_semi = y.copy()
    y_semi[6:] = -1
    m = DA(sigma=1.0, C=1.0, loss="sqr", r=1 / 3).fit(X, y_semi)
    assert m.decision_function(X).shape == (60, 3)
    assert np.mean(m.predict(X) == y) > 0.9


def test_registry_path():
    assert get_solver("solvers.da:DA") is DA


@pytest.mark.parametrize("mutate,err,match", BAD_INPUTS)
def test_bad_input(mutate, err, match):
    X, _, y_semi = _small()
    with pytest.raises(err, match=match):
        DA().fit(*mutate(X, y_semi))


@pytest.mark.parametrize("params,err,match", [
    ({"C": 0.0}, ValueError, "C must be a float > 0"), ({"C": -1.0}, ValueError, "C must be a float > 0"),
    ({"sigma": 0.0}, ValueError, "sigma must be a float > 0"), ({"C_star": 0.0}, ValueError, "C_star must be a float > 0"),
    ({"r": 0.0}, ValueError, r"r must be a float in \(0, 1\)"), ({"r": 1.2}, ValueError, r"r must be a float in \(0, 1\)"),
    ({"r": "half"}, TypeError, r"r must be a float in \(0, 1\)"), ({"loss": "hinge"}, ValueError, "loss must be"),
    ({"T0": -1.0}, ValueError, "T0 must be a float > 0"), ({"T_fixed": 0.0}, ValueError, "T_fixed must be a float > 0"),
    ({"R": 1.0}, ValueError, "R must be a float > 1"), ({"epsilon": 0}, ValueError, "epsilon must be a float > 0"),
    ({"max_inner": 0}, ValueError, "max_inner"), ({"max_anneal": 2.5}, ValueError, "max_anneal"),
    ({"T_scale": "kelvin"}, ValueError, "T_scale"), ({"select": "first"}, ValueError, "select"),
    ({"kernel": "poly"}, ValueError, "kernel"), ({"C": "1"}, TypeError, "C must be a float > 0"),
])
def test_bad_params(params, err, match):
    X, _, y_semi = _small()
    with pytest.raises(err, match=match):
        DA(**params).fit(X, y_semi)
