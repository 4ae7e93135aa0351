"""nabla-DA: L-BFGS on the smoothed DA objective S(w, b) (JMLR 2008 Sec. 3.3 item 2, eq. 9, Alg. 2)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from s3vm_bench.data_registry import Split, g50c_like
from s3vm_bench.harness.protocol import ProtocolSettings, run_split
from s3vm_bench.solvers.da import DA
from s3vm_bench.solvers.grad_da import GradDA, smoothed_objective
from s3vm_bench.solvers.numerics import n_positive
from s3vm_bench.solvers.svm import SVM
from tests._toy import BAD_INPUTS
from tests._toy import small_clusters as _small


def _problem(seed=0, n=30, d=4, sparse=False):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d))
    if sparse:
        Z[np.abs(Z) < 0.7] = 0.0
        Z = sp.csr_matrix(Z)
    labeled = np.zeros(n, bool)
    labeled[:6] = True
    y_pm = np.where(labeled, np.where(np.arange(n) % 2 == 0, 1.0, -1.0), 0.0)
    w = 0.6 * rng.standard_normal(d)
    return Z, y_pm, labeled, w, 0.1


@pytest.mark.parametrize("loss", ["l2", "sqr"])
@pytest.mark.parametrize("T", [100.0, 1.0, 0.05])
@pytest.mark.parametrize("r", [0.5, 0.2])
@pytest.mark.parametrize("sparse", [False, True])
def test_gradient_matches_finite_differences(loss, T, r, sparse):
    """The nu root enters S only through p*, whose derivative drops out (envelope theorem)."""
    Z, y_pm, labeled, w, b = _problem(sparse=sparse)
    kw = dict(C=3.0, C_star=2.0, T=T, r=r, loss=loss)
    _, gw, gb, root = smoothed_objective(w, b, Z, y_pm, labeled, **kw)
    assert abs(root.residual) <= 1e-10
    x = np.r_[w, b]
    h = 1e-6
    fd = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        fp = smoothed_objective((x + e)[:-1], (x + e)[-1], Z, y_pm, labeled, **kw)[0]
        fm = smoothed_objective((x - e)[:-1], (x - e)[-1], Z, y_pm, labeled, **kw)[0]
        fd[i] = (fp - fm) / (2 * h)
    np.testing.assert_allclose(np.r_[gw, gb], fd, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(fd).max()))


def test_smoothed_objective_is_the_minimum_over_balanced_p():
    """S(w, b) = min over balanced p of I''(w, b, p; T) (eq. 9): p = r (balanced) gives more."""
    Z, y_pm, labeled, w, b = _problem()
    kw = dict(C=3.0, C_star=2.0, T=1.0, r=0.2, loss="l2")
    v0 = smoothed_objective(w, b, Z, y_pm, labeled, **kw)[0]
    # S is the minimum over balanced p: any other balanced p gives a larger I''.
    o = Z @ w + b
    unl = ~labeled
    p = np.full(unl.sum(), 0.2)
    from s3vm_bench.solvers.da import LOSSES

    V = LOSSES["l2"]
    ou = o[unl]
    lab = 3.0 * np.sum(V(y_pm[labeled] * o[labeled]).value)
    other = (0.5 * w @ w + lab + 2.0 * np.sum(p * V(ou).value + (1 - p) * V(-ou).value)
             + 1.0 * np.sum(p * np.log(p) + (1 - p) * np.log(1 - p)))
    assert v0 < other


def _toy_split():
    ds = g50c_like(0, n=120, d=5)
    rng = np.random.default_rng(0)
    lab = np.r_[rng.choice(np.flatnonzero(ds.y == 1), 3, replace=False),
                rng.choice(np.flatnonzero(ds.y == 0), 3, replace=False)]
    empty = np.empty(0, np.int64)
    return ds, Split("test", 0, None, lab, np.setdiff1d(np.arange(ds.n_samples), lab), empty, empty)


def test_cluster_toy_beats_svm_and_meets_balance():
    ds, split = _toy_split()
    st = ProtocolSettings(sigma=3.0, C=10.0)
    svm = run_split(SVM, {}, ds, split, st)
    res = run_split(GradDA, {}, ds, split, st)
    assert res.balance_exact
    assert res.objective < svm.objective - 1.0
    assert res.unlabeled_error <= svm.unlabeled_error


def test_annealing_schedule_and_stop():
    X, _, y_semi = _small()
    m = GradDA(sigma=1.5, C=2.0, r=0.5).fit(X, y_semi)
    info = m.binary_fits_[0].info
    Ts = [t["T"] for t in info["trace"]]
    assert Ts[0] == pytest.approx(10.0 * 2.0)  # JMLR 2008 Alg. 2: T = 10 C*
    np.testing.assert_allclose(np.array(Ts[:-1]) / np.array(Ts[1:]), 1.5)
    assert m.stop_reason_ == ["entropy<epsilon"] and info["final_entropy"] < 1e-6
    assert all(abs(t["balance"]) <= 1e-10 for t in info["trace"])
    assert m.n_iter_[0] == sum(t["nit"] for t in info["trace"])


def test_same_smoothed_problem_as_da_at_high_temperature():
    """At a high fixed T the problem is convex: DA's alternation and L-BFGS on S reach the same value."""
    X, _, y_semi = _small()
    kw = dict(sigma=1.5, C=2.0, r=0.5, T_fixed=5.0, loss="l2")
    g = GradDA(tol=1e-12, **kw).fit(X, y_semi)
    d = DA(epsilon=1e-12, max_inner=500, **kw).fit(X, y_semi)
    s_grad = g.binary_fits_[0].info["trace"][-1]["objective"]
    s_da = d.binary_fits_[0].info["trace"][-1]["objective"]
    assert s_grad == pytest.approx(s_da, rel=1e-6)
    np.testing.assert_allclose(g.binary_fits_[0].info["outputs"], d.binary_fits_[0].info["outputs"], atol=1e-3)


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_decision_function_reproduces_outputs_and_balance(kernel):
    X, y, y_semi = _small()
    m = GradDA(kernel=kernel, sigma=1.5, C=2.0, r=0.5).fit(X, y_semi)
    f = m.decision_function(X)
    np.testing.assert_allclose(f, m.binary_fits_[0].info["outputs"], rtol=1e-7, atol=1e-7)
    unl = y_semi == -1
    assert np.sum(f[unl] > 0) == n_positive(unl.sum(), 0.5)
    assert np.mean(m.predict(X) == y) > 0.8


def test_linear_dense_equals_sparse():
    X, _, y_semi = _small()
    X[np.abs(X) < 0.3] = 0.0
    d = GradDA(kernel="linear", C=1.0, r=0.5).fit(X, y_semi)
    s = GradDA(kernel="linear", C=1.0, r=0.5).fit(sp.csr_matrix(X), y_semi)
    np.testing.assert_allclose(d.coef_, s.coef_, rtol=1e-6, atol=1e-8)


def test_refit_identical_params_untouched_clone():
    X, _, y_semi = _small()
    m = GradDA(sigma=1.0, C=3.0, C_star=0.5)
    params = m.get_params()
    a = m.fit(X, y_semi).decision_function(X)
    b = m.fit(X, y_semi).decision_function(X)
    np.testing.assert_array_equal(a, b)
    assert m.get_params() == params
    c = clone(m).set_params(select="best")
    assert c.select == "best" and m.select == "last"
    info = c.fit(X, y_semi).binary_fits_[0].info
    assert info["best"]["objective"] == pytest.approx(min(t["s3vm_objective"] for t in info["trace"]))


def test_unlabeled_data_changes_the_solution():
    X, _, y_semi = _small()
    g = GradDA(sigma=1.0, C=1.0).fit(X, y_semi).decision_function(X)
    s = SVM(sigma=1.0, C=1.0).fit(X, y_semi).decision_function(X)
    assert np.max(np.abs(g - s)) > 0.1


@pytest.mark.parametrize("mutate,err,match", BAD_INPUTS)
def test_bad_input(mutate, err, match):
    X, _, y_semi = _small()
    with pytest.raises(err, match=match):
        GradDA().fit(*mutate(X, y_semi))


@pytest.mark.parametrize("params,err,match", [
    ({"C": 0.0}, ValueError, "C must be a float > 0"), ({"sigma": -1.0}, ValueError, "sigma must be a float > 0"),
    ({"C_star": -1.0}, ValueError, "C_star must be a float > 0"), ({"r": 1.0}, ValueError, r"r must be a float in \(0, 1\)"),
    ({"r": -0.1}, ValueError, r"r must be a float in \(0, 1\)"), ({"loss": "l1"}, ValueError, "loss must be one of"),
    ({"R": 0.5}, ValueError, "R must be a float > 1"), ({"T0": 0.0}, ValueError, "T0 must be a float > 0"),
    ({"max_iter": 0}, ValueError, "max_iter"), ({"tol": 0.0}, ValueError, "tol must be a float > 0"),
])
def test_bad_params(params, err, match):
    X, _, y_semi = _small()
    with pytest.raises(err, match=match):
        GradDA(**params).fit(X, y_semi)
