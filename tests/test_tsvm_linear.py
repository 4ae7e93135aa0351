"""Linear TSVM with multiple switching (SIGIR 2006 Sec. 3.1, Table 4): solvers/tsvm_linear.py."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from s3vm_bench.data_registry import Dataset, Split
from s3vm_bench.harness.protocol import ProtocolSettings, run_split
from s3vm_bench.solvers import get_solver
from s3vm_bench.solvers.numerics import l2svm_mfn, n_positive
from s3vm_bench.solvers.svm import SVM
from s3vm_bench.solvers.tsvm_linear import LinearTSVM, switch_pairs
from tests._toy import l2svm_objective


def blobs(seed, n=200, d=20, sep=4.0, n_lab_per_class=2):
    """Two separated Gaussian blobs in d dimensions (unit variance, means +-sep/2 on axis 0)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.standard_normal((n, d))
    X[:, 0] += np.where(y == 1, sep, -sep) / 2
    lab = np.sort(np.r_[rng.choice(np.flatnonzero(y == 0), n_lab_per_class, replace=False),
                        rng.choice(np.flatnonzero(y == 1), n_lab_per_class, replace=False)])
    return X, y, lab


def semi(y, lab):
    ys = np.full(y.size, -1)
    ys[lab] = y[lab]
    return ys


def sparse_problem(seed=0, n=150, d=30):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.standard_normal((n, d))
    X[:, 0] += np.where(y == 1, 2.0, -2.0)
    X[rng.random((n, d)) < 0.6] = 0.0
    return X, y, np.arange(6)


def test_registry_and_class_attributes():
    assert get_solver("tsvm_linear") is LinearTSVM
    assert LinearTSVM.balance == "threshold" and LinearTSVM._accepts_sparse is True


@pytest.mark.parametrize("kw, match", [
    (dict(kernel="rbf"), "kernel must be 'linear'"),
    (dict(S=0), "S must be"),
    (dict(S="all"), "S must be"),
    (dict(S=True), "S must be"),
    (dict(param="jmlr"), "needs C"),
    (dict(param="other"), "param must be"),
    (dict(bias="none"), "bias must be"),
    (dict(anneal_rate=1.0), "anneal_rate must be a float > 1"),
    (dict(r=1.0), r"r must be a float in \(0, 1\)"),
])
def test_bad_parameters(kw, match):
    X, y, lab = blobs(0, n=20)
    with pytest.raises(ValueError, match=match):
        LinearTSVM(**kw).fit(X, semi(y, lab))


def test_switch_pairs_rule():
    #              0     1     2     3     4     5
    y_u = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    o_u = np.array([-0.5, 0.2, 1.5, 0.6, -0.9, -1.5])
    # Eligible positives (o < 1) by increasing output: 0 (-0.5), 1 (0.2); negatives (o > -1) by
    # decreasing output: 3 (0.6), 4 (-0.9). Pairs: (0, 3): -0.5 < 0.6 yes; (1, 4): 0.2 < -0.9 no.
    pos, neg = switch_pairs(y_u, o_u, 10)
    assert pos.tolist() == [0] and neg.tolist() == [3]
    o_u2 = np.array([-0.5, -0.95, 1.5, 0.6, -0.9, -1.5])  # now (1, 0), (0, 4)? -0.5 < -0.9 no
    pos, neg = switch_pairs(y_u, o_u2, 10)
    assert pos.tolist() == [1] and neg.tolist() == [3]
    o_u3 = np.array([-0.5, -0.95, 1.5, 0.6, 0.1, -1.5])  # (1, 3) and (0, 4) both eligible
    assert switch_pairs(y_u, o_u3, 10)[0].tolist() == [1, 0]
    assert switch_pairs(y_u, o_u3, 1)[0].tolist() == [1]
    assert switch_pairs(-np.ones(3), np.zeros(3), 5)[0].size == 0


@pytest.mark.parametrize("S", [1, "max"])
def test_exact_balance_and_no_eligible_pair_left(S):
    X, y, lab = blobs(1, n=160)
    unl = np.setdiff1d(np.arange(y.size), lab)
    r = 0.37  # deliberately not the true fraction: the constraint is what is checked
    m = LinearTSVM(S=S, r=r, C=1.0, C_star=1.0).fit(X, semi(y, lab))
    k = n_positive(unl.size, r)
    y_u = m.binary_fits_[0].info["y_unlabeled"]
    assert np.sum(y_u > 0) == k
    assert np.sum(m.transduction_[unl] == 1) == k
    assert m.stop_reason_ == ["no_eligible_pair"]
    o_u = m.decision_function(X[unl])
    pos, neg = switch_pairs(y_u, o_u, unl.size)
    assert pos.size == 0 and neg.size == 0
    assert m.n_switches_[0] > 0  # the problem does exercise switching


def test_max_switching_needs_no_more_mfn_calls():
    X, y, lab = blobs(2, n=300)
    y_semi = semi(y, lab)
    one = LinearTSVM(S=1, r=0.5, C=1.0, C_star=1.0).fit(X, y_semi)
    many = LinearTSVM(S="max", r=0.5, C=1.0, C_star=1.0).fit(X, y_semi)
    assert one.n_switches_[0] > 1
    assert many.n_mfn_[0] <= one.n_mfn_[0]
    assert many.n_mfn_[0] < one.n_mfn_[0]  # strictly fewer on this problem


def test_annealing_ends_at_the_target_and_unlabeled_data_matter():
    X, y, lab = blobs(3, n=120)
    y_semi = semi(y, lab)
    m = LinearTSVM(lam=0.01, lam_u=0.7, r=0.5).fit(X, y_semi)
    stages = m.binary_fits_[0].info["stages"]
    lams = [s["lam_u"] for s in stages]
    assert lams[0] == 1e-5 and lams[-1] == 0.7  # clamped last round at lambda' itself
    assert np.allclose(np.diff(lams[:-1]) / np.asarray(lams[:-2]), 1.0)  # factor R = 2
    # lambda' below the starting value: one stage at lambda', not zero stages (DESIGN pitfall).
    tiny = LinearTSVM(lam=0.01, lam_u=1e-6, r=0.5).fit(X, y_semi)
    assert [s["lam_u"] for s in tiny.binary_fits_[0].info["stages"]] == [1e-6]
    sup = SVM(kernel="linear", C=1.0 / (2 * 0.01 * lab.size)).fit(X, y_semi)
    assert not np.allclose(m.coef_, sup.coef_, atol=1e-3)


def test_solution_is_the_mfn_solution_of_its_labels():
    """decision_function reproduces the optimized outputs; objective_ is eq. (7) at them."""
    X, y, lab = blobs(4, n=120)
    unl = np.setdiff1d(np.arange(y.size), lab)
    lam, lam_u = 0.01, 1.0
    m = LinearTSVM(lam=lam, lam_u=lam_u, r=0.5, tol=1e-9).fit(X, semi(y, lab))
    y_u = m.binary_fits_[0].info["y_unlabeled"]
    Xo = X[np.r_[lab, unl]]
    yo = np.r_[np.where(y[lab] == 1, 1.0, -1.0), y_u]
    cost = np.r_[np.full(lab.size, 0.5 / lab.size), np.full(unl.size, 0.5 * lam_u / unl.size)]
    ref = l2svm_mfn(Xo, yo, cost, lam=lam, bias="regularized", tol=1e-9)
    np.testing.assert_allclose(m.coef_[0], ref.coef, atol=1e-6)
    np.testing.assert_allclose(m.intercept_[0], ref.intercept, atol=1e-6)
    obj = l2svm_objective(yo, cost, m.coef_[0], m.intercept_[0], X=Xo, lam=lam, bias="regularized")
    assert m.objective_[0] == pytest.approx(obj, rel=1e-9)
    # the outputs the solver optimized (the reference's on the same points), not recomputed from coef_
    np.testing.assert_allclose(m.decision_function(X[unl]), ref.outputs[lab.size:], atol=1e-6)


def test_two_parameterizations_are_one_objective():
    """C = 1/(2 lam l), C* = lam'/(2 lam u): same minimizer (same bias treatment)."""
    X, y, lab = blobs(5, n=100)
    l, u = lab.size, y.size - lab.size
    lam, lam_u = 0.02, 0.8
    y_semi = semi(y, lab)
    sigir = LinearTSVM(lam=lam, lam_u=lam_u, bias="free", r=0.5, tol=1e-10).fit(X, y_semi)
    jmlr = LinearTSVM(C=1 / (2 * lam * l), C_star=lam_u / (2 * lam * u), r=0.5, tol=1e-10).fit(X, y_semi)
    assert jmlr.binary_fits_[0].info["param"] == "jmlr" and jmlr.binary_fits_[0].info["bias"] == "free"
    np.testing.assert_allclose(sigir.coef_, jmlr.coef_, atol=1e-7)
    assert jmlr.objective_[0] == pytest.approx(sigir.objective_[0] / lam, rel=1e-8)
    # param="sigir" wins over a C passed alongside (what the harness does).
    forced = LinearTSVM(lam=lam, lam_u=lam_u, C=123.0, C_star=4.0, param="sigir", r=0.5).fit(X, y_semi)
    info = forced.binary_fits_[0].info
    assert info["param"] == "sigir" and info["lam"] == lam and info["bias"] == "regularized"


def test_dense_equals_csr_and_refit_is_idempotent():
    X, y, lab = sparse_problem()
    y_semi = semi(y, lab)
    for S in (1, "max"):
        est = LinearTSVM(S=S, lam=0.01, lam_u=1.0)
        params = est.get_params()
        a = est.fit(X, y_semi)
        wa, ta = a.coef_.copy(), a.transduction_.copy()
        b = est.fit(sp.csr_matrix(X), y_semi)
        np.testing.assert_array_equal(ta, b.transduction_)
        np.testing.assert_allclose(wa, b.coef_, atol=1e-7)
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
    for S in (1, "max"):
        res = run_split(LinearTSVM, {"S": S}, ds, split, settings)
        assert res.balance_exact
        assert res.objective < svm.objective
        assert res.unlabeled_error < svm.unlabeled_error


def test_text_first_sigir_split(data_env):
    """pcmac (SIGIR 2006 Table 9 setting, l = 45): sane error, exact balance, S=max cheaper."""
    from s3vm_bench.data_registry import load_dataset, sigir2006_splits

    ds = load_dataset("text")
    split = sigir2006_splits(ds, n_labeled=45, n_splits=1)[0]
    l, u = split.labeled.size, split.unlabeled.size
    lam, lam_u = 0.001, 1.0
    settings = ProtocolSettings(kernel="linear", C=1 / (2 * lam * l), C_star=lam_u / (2 * lam * u))
    out = {S: run_split(LinearTSVM, {"param": "sigir", "lam": lam, "lam_u": lam_u, "S": S}, ds, split, settings)
           for S in (1, "max")}
    for res in out.values():
        assert res.balance_exact and res.unlabeled_error < 0.2 and res.test_error < 0.2
    assert out["max"].binary[0].n_iter <= out[1].binary[0].n_iter
