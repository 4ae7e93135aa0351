"""Mean field annealing (SIGIR 2006 Sec. 3.2, Tables 5-7): solvers/mfa.py and the nu root."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit

from s3vm_bench.data_registry import Dataset, Split
from s3vm_bench.harness.protocol import ProtocolSettings, run_split
from s3vm_bench.solvers import get_solver
from s3vm_bench.solvers._primal import _cgls
from s3vm_bench.solvers.mfa import MFA, mfa_system, optimize_w
from s3vm_bench.solvers.numerics import balance_root, l2svm_mfn, n_positive
from s3vm_bench.solvers.svm import SVM

from .test_tsvm_linear import blobs, semi, sparse_problem


# ----------------------------------------------------------------------------- the nu root
@pytest.mark.parametrize("T", [1e-14, 1e-10, 1e-6, 1e-3, 1.0, 1e3, 1e8])
@pytest.mark.parametrize("r", [0.0123, 0.3337, 0.5, 0.971])
def test_balance_root_meets_the_balance_equation(T, r):
    rng = np.random.default_rng(int(1e6 * r) + int(np.log10(T)) + 50)
    for u, scale in ((7, 1.0), (999, 4.0), (1415, 100.0)):
        g = scale * rng.standard_normal(u)
        res = balance_root(g, T, r)
        assert abs(np.mean(res.p) - r) <= 1e-10
        assert res.residual == pytest.approx(np.mean(res.p) - r, abs=1e-15)
        assert np.all((res.p >= 0) & (res.p <= 1))
        order = np.argsort(g)
        assert np.all(np.diff(res.p[order]) <= 1e-15)  # p decreasing in g (eq. 15)
        if res.method != "interpolation":
            np.testing.assert_allclose(res.p, expit((res.nu - g) / T), rtol=0, atol=1e-12)


def test_balance_root_ties_and_bad_input():
    g = np.zeros(10)  # all equal: p = r for every point, any T
    res = balance_root(g, 1e-9, 0.3)
    np.testing.assert_allclose(res.p, 0.3, atol=1e-12)
    with pytest.raises(ValueError, match="T must be > 0"):
        balance_root(g, 0.0, 0.3)
    with pytest.raises(ValueError, match="r must lie"):
        balance_root(g, 1.0, 1.0)
    with pytest.raises(ValueError, match="empty"):
        balance_root([], 1.0, 0.3)


# ------------------------------------------------ the w-step: each unlabeled row once
def _wstep_problem(seed=0, l=10, u=60, d=8):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((l + u, d))
    y_l = np.where(rng.random(l) < 0.5, 1.0, -1.0)
    p = rng.random(u)
    return X, y_l, p


def _normal_solution(A_rows, y, c2, lam, lam_b):
    """Solve [lam I~ + X~^T C X~] beta = X~^T C y densely, X~ = [A, 1]."""
    Xt = np.hstack([A_rows, np.ones((A_rows.shape[0], 1))])
    reg = np.full(Xt.shape[1], lam)
    reg[-1] = lam_b
    M = np.diag(reg) + Xt.T @ (c2[:, None] * Xt)
    return np.linalg.solve(M, Xt.T @ (c2 * y))


@pytest.mark.parametrize("lam_b", [0.01, 0.0])
def test_combined_system_equals_duplicated_system(lam_b):
    """Eqs. (13)-(14) vs eq. (12): the same linear system on the same active pieces."""
    X, y_l, p = _wstep_problem(1)
    l, u = y_l.size, p.size
    lam, c_l, c_u = 0.01, 0.5 / l, 0.5 * 1.3 / u
    rng = np.random.default_rng(2)
    w, b = 0.7 * rng.standard_normal(X.shape[1]), 0.1
    o = X @ w + b
    assert np.any(np.abs(o[l:]) < 1) and np.any(o[l:] > 1) and np.any(o[l:] < -1)
    y_t, c_t, _, _ = mfa_system(o[:l], y_l, o[l:], p, c_l, c_u)
    # duplicated rows, restricted to the active ones (c > 0 and y o < 1), eq. (12)
    Xd = np.vstack([X, X[l:]])  # labeled, unlabeled as +1, unlabeled as -1
    yd = np.r_[y_l, np.ones(u), -np.ones(u)]
    cd = np.r_[np.full(l, c_l), c_u * p, c_u * (1 - p)]
    od = np.r_[o, o[l:]]
    act = (cd > 0) & (yd * od < 1)
    dup = _normal_solution(Xd[act], yd[act], 2 * cd[act], lam, lam_b)
    red = _normal_solution(X, y_t, 2 * c_t, lam, lam_b)
    np.testing.assert_allclose(red, dup, rtol=0, atol=1e-10)
    # and CGLS on the combined system (u rows fewer) reaches the same solution
    w_c, b_c, conv, _ = _cgls(X, y_t, 2 * c_t, lam, lam_b, w, b, o, 1e-13, 1000)
    assert conv
    np.testing.assert_allclose(np.r_[w_c, b_c], dup, rtol=0, atol=1e-8)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("bias", ["regularized", "free"])
def test_w_step_equals_mfn_on_duplicated_rows(sparse, bias):
    for seed in range(3):
        X, y_l, p = _wstep_problem(seed)
        l, u = y_l.size, p.size
        lam = 0.01
        lam_b = lam if bias == "regularized" else 0.0
        c_l, c_u = 0.5 / l, 0.5 / u
        Xin = sp.csr_matrix(X) if sparse else X
        st = optimize_w(Xin, y_l, p, lam, lam_b, c_l, c_u, tol=1e-12)
        Xd = np.vstack([X, X[l:]])  # labeled, unlabeled as +1, unlabeled as -1
        Xd = sp.csr_matrix(Xd) if sparse else Xd
        yd = np.r_[y_l, np.ones(u), -np.ones(u)]
        cd = np.r_[np.full(l, c_l), c_u * p, c_u * (1 - p)]
        ref = l2svm_mfn(Xd, yd, cd, lam=lam, bias=bias, tol=1e-12)
        assert st.stop_reason == "optimality"
        np.testing.assert_allclose(st.w, ref.coef, rtol=0, atol=1e-8)
        assert st.b == pytest.approx(ref.intercept, abs=1e-8)
        assert st.objective == pytest.approx(ref.objective, rel=1e-10)
        # seeded from a perturbed point it lands on the same minimizer
        st2 = optimize_w(Xin, y_l, p, lam, lam_b, c_l, c_u, st.w + 0.3, st.b - 0.2, tol=1e-12)
        np.testing.assert_allclose(st2.w, ref.coef, rtol=0, atol=1e-8)


def test_alternation_decreases_the_mean_field_objective():
    """At fixed T both the p-step (eq. 15) and the w-step are exact minimizers: eq. (8) never rises."""
    X, y, lab = blobs(0, n=120)
    unl = np.setdiff1d(np.arange(y.size), lab)
    Xs = X[np.r_[lab, unl]]
    y_l = np.where(y[lab] == 1, 1.0, -1.0)
    l, u = lab.size, unl.size
    lam, lam_u, r = 0.05, 1.0, 0.5
    c_l, c_u = 0.5 / l, 0.5 * lam_u / u

    def eq8(w, b, o, p, T):
        ou = o[l:]
        hl = np.maximum(0, 1 - y_l * o[:l])
        hp, hm = np.maximum(0, 1 - ou), np.maximum(0, 1 + ou)
        ent = np.sum(p * np.log(np.maximum(p, 1e-300)) + (1 - p) * np.log(np.maximum(1 - p, 1e-300)))
        return (0.5 * lam * (w @ w + b * b) + hl @ hl / (2 * l) + lam_u / (2 * u) * (p @ (hp * hp) + (1 - p) @ (hm * hm))
                + T / (2 * u) * ent)

    for T in (5.0, 1.0, 0.2):
        p = np.full(u, r)
        st = optimize_w(Xs, y_l, p, lam, lam, c_l, c_u, tol=1e-10)
        vals = [eq8(st.w, st.b, st.o, p, T)]
        for _ in range(8):
            ou = st.o[l:]
            p = balance_root(lam_u * (np.maximum(0, 1 - ou) ** 2 - np.maximum(0, 1 + ou) ** 2), T, r).p
            vals.append(eq8(st.w, st.b, st.o, p, T))
            st = optimize_w(Xs, y_l, p, lam, lam, c_l, c_u, st.w, st.b, st.o, tol=1e-10)
            vals.append(eq8(st.w, st.b, st.o, p, T))
        assert np.all(np.diff(vals) <= 1e-12 * np.abs(vals[0]))


# ------------------------------------------------------------------------------ the estimator
def test_registry_and_class_attributes():
    assert get_solver("mfa") is MFA
    assert MFA.balance == "threshold" and MFA._accepts_sparse is True


@pytest.mark.parametrize("kw, match", [
    (dict(kernel="rbf"), "kernel must be 'linear'"),
    (dict(T_fixed=0.0), "T_fixed must be a float > 0"),
    (dict(anneal_rate=0.5), "anneal_rate must be a float > 1"),
    (dict(max_outer_iter=0), "max_outer_iter"),
    (dict(param="jmlr"), "needs C"),
])
def test_bad_parameters(kw, match):
    X, y, lab = blobs(0, n=20)
    with pytest.raises(ValueError, match=match):
        MFA(**kw).fit(X, semi(y, lab))


def test_annealing_path_balance_and_returned_minimum():
    X, y, lab = blobs(1, n=160)
    unl = np.setdiff1d(np.arange(y.size), lab)
    r = 0.41
    m = MFA(lam=0.05, lam_u=1.0, r=r).fit(X, semi(y, lab))
    info = m.binary_fits_[0].info
    temps = [t["T"] for t in info["temperatures"]]
    assert temps[0] == pytest.approx(10.0)  # T0 = 10 lam'
    np.testing.assert_allclose(np.array(temps[:-1]) / np.array(temps[1:]), 1.5)
    assert len(temps) <= 30
    assert m.stop_reason_[0] in ("entropy", "max_outer_iter")
    if m.stop_reason_[0] == "entropy":
        assert info["temperatures"][-1]["entropy"] <= 1e-6
    assert abs(np.mean(info["p"]) - r) <= 1e-10
    k = n_positive(unl.size, r)
    assert np.sum(info["y_unlabeled"] > 0) == k and np.sum(m.transduction_[unl] == 1) == k
    # objective_ is eq. (18) at the returned w, and no path value is lower
    o = X @ m.coef_[0] + m.intercept_[0]
    y_l = np.where(y[lab] == 1, 1.0, -1.0)
    w = m.coef_[0]
    eq18 = (0.5 * 0.05 * (w @ w + m.intercept_[0] ** 2) + np.sum(np.maximum(0, 1 - y_l * o[lab]) ** 2) / (2 * lab.size)
            + np.sum(np.maximum(0, 1 - np.abs(o[unl])) ** 2) / (2 * unl.size))
    assert m.objective_[0] == pytest.approx(eq18, rel=1e-9)
    assert m.objective_[0] <= min(t["objective"] for t in info["temperatures"]) + 1e-12


@pytest.mark.parametrize("T_fixed", [0.1, 0.01, 0.001])
def test_fixed_temperature(T_fixed):
    X, y, lab = blobs(2, n=120)
    m = MFA(T_fixed=T_fixed, T0=123.0, r=0.5, C=0.1, C_star=0.01).fit(X, semi(y, lab))
    temps = m.binary_fits_[0].info["temperatures"]
    assert [t["T"] for t in temps] == [T_fixed]
    assert m.stop_reason_[0] in ("kl", "max_inner_iter")
    if m.stop_reason_[0] == "kl":
        assert temps[0]["kl"] <= 1e-6


def test_dense_equals_csr_and_refit_is_idempotent():
    X, y, lab = sparse_problem()
    y_semi = semi(y, lab)
    est = MFA(lam=0.01, lam_u=1.0)
    params = est.get_params()
    a = est.fit(X, y_semi)
    wa, ta = a.coef_.copy(), a.transduction_.copy()
    b = est.fit(sp.csr_matrix(X), y_semi)
    np.testing.assert_array_equal(ta, b.transduction_)
    np.testing.assert_allclose(wa, b.coef_, atol=1e-6)
    c = est.fit(X, y_semi)
    np.testing.assert_array_equal(wa, c.coef_)
    assert est.get_params() == params


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_beats_supervised_svm_in_protocol_objective(seed):
    X, y, lab = blobs(seed)
    unl = np.setdiff1d(np.arange(y.size), lab)
    ds = Dataset("blobs", X, y, ("a", "b"))
    empty = np.empty(0, np.int64)
    split = Split("toy", 0, seed, lab, unl, empty, empty)
    settings = ProtocolSettings(kernel="linear", C=0.1, C_star=0.01)
    svm = run_split(SVM, {}, ds, split, settings)
    res = run_split(MFA, {}, ds, split, settings)
    assert res.balance_exact
    assert res.objective < svm.objective
    assert res.unlabeled_error < svm.unlabeled_error


def test_text_first_sigir_split(data_env):
    """pcmac (SIGIR 2006 Table 9 setting, l = 45): MFA reaches a lower eq. (18) than TSVM."""
    from s3vm_bench.data_registry import load_dataset, sigir2006_splits
    from s3vm_bench.solvers.tsvm_linear import LinearTSVM

    ds = load_dataset("text")
    split = sigir2006_splits(ds, n_labeled=45, n_splits=1)[0]
    l, u = split.labeled.size, split.unlabeled.size
    lam, lam_u = 0.001, 1.0
    settings = ProtocolSettings(kernel="linear", C=1 / (2 * lam * l), C_star=lam_u / (2 * lam * u))
    params = {"param": "sigir", "lam": lam, "lam_u": lam_u}
    mfa = run_split(MFA, params, ds, split, settings)
    assert mfa.balance_exact and mfa.unlabeled_error < 0.1 and mfa.test_error < 0.1
    idx = np.r_[split.labeled, split.unlabeled]
    y_fit = ds.y[idx].copy()
    y_fit[l:] = -1
    r = float(np.mean(ds.y[split.unlabeled] == 1))
    m = MFA(r=r, **params).fit(ds.X[idx], y_fit)
    t = LinearTSVM(r=r, S="max", **params).fit(ds.X[idx], y_fit)
    assert m.objective_[0] < t.binary_fits_[0].info["eq18_objective"]
