"""S3VM-light (JMLR 2008 Sec. 3.2, Algorithm 1): annealing, eq. (6) switching, balance, warm starts."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from s3vm_bench.data_registry import g50c_like, jmlr2008_splits, two_moons
from s3vm_bench.harness.protocol import ProtocolSettings, run_split
from s3vm_bench.solvers.numerics import gaussian_kernel, kernel_newton, n_positive, threshold_to_count
from s3vm_bench.solvers.s3vm_light import S3VMLight, anneal_schedule, best_swap_pairs
from s3vm_bench.solvers.svm import SVM
from tests._toy import l2svm_objective


def _gauss(seed=4, n=200, d=5, bayes_error=0.2, n_lab_per_class=2):
    """Overlapping Gaussians with few labels: the annealing path switches a dozen pairs."""
    ds = g50c_like(seed=seed, n=n, d=d, bayes_error=bayes_error)
    rng = np.random.default_rng(seed)
    half = n // 2
    lab = np.r_[rng.choice(half, n_lab_per_class, replace=False),
                half + rng.choice(n - half, n_lab_per_class, replace=False)]
    y = np.full(n, -1)
    y[lab] = ds.y[lab]
    return ds.X, y, ds.y


def _moons(seed):
    ds = two_moons(seed=seed)
    y = ds.y.copy()
    y[2:] = -1
    return ds, y


# ------------------------------------------------------------------------- schedule, eq. (6)
def test_anneal_schedule_ends_exactly_at_c_star():
    s = anneal_schedule(19.0)  # Algorithm 1 defaults: 1e-5 C*, factor 1.5
    assert s[0] == pytest.approx(19e-5) and s[-1] == 19.0
    assert s.size == 30  # 1e-5 * 1.5^28 < 1 < 1e-5 * 1.5^29, then C* itself
    np.testing.assert_allclose(s[1:-1] / s[:-2], 1.5)
    assert np.all(np.diff(s) > 0)
    tiny = anneal_schedule(1e-12)  # the loop still runs and ends at C* (pitfall: `while C~ < C*`)
    assert tiny.size == 30 and tiny[-1] == 1e-12
    np.testing.assert_array_equal(anneal_schedule(3.0, start=1.0), [3.0])
    np.testing.assert_array_equal(anneal_schedule(3.0, start=5.0), [3.0])
    with pytest.raises(ValueError, match="anneal_factor must be > 1"):
        anneal_schedule(1.0, factor=1.0)


@pytest.mark.parametrize("loss,p", [("l2", 2), ("l1", 1)])
def test_swap_condition_is_output_order(loss, p):
    """For V = max(0, 1 - y o)^p, p = 2 or 1, eq. (6) holds iff the +1 point has the smaller output."""
    o = np.array([-2.0, -1.2, -0.3, 0.1, 0.5, 1.7, 3.0])
    for i in range(o.size):
        for j in range(o.size):
            if i == j:
                continue
            labels = -np.ones(o.size)
            labels[i] = 1
            pos, neg, gains = best_swap_pairs(o[[i, j]], labels[[i, j]], loss=loss)
            V = lambda y, t: max(0.0, 1 - y * t) ** p  # noqa: E731
            holds = V(1, o[i]) + V(-1, o[j]) > V(-1, o[i]) + V(1, o[j])
            assert holds == (o[i] < o[j]) == (pos.size == 1)
            if holds:
                assert gains[0] == pytest.approx(V(1, o[i]) + V(-1, o[j]) - V(-1, o[i]) - V(1, o[j]))


def test_best_pair_and_multiple_pairs():
    o = np.array([0.9, -0.8, 0.2, -0.1, 0.6, -0.5, 1.5])
    y = np.array([-1, 1, -1, 1, -1, 1, 1.0])
    pos, neg, gains = best_swap_pairs(o, y)  # default: the single best pair (Algorithm 1)
    assert pos.tolist() == [1] and neg.tolist() == [0] and gains.size == 1
    pos, neg, gains = best_swap_pairs(o, y, max_pairs=None)
    # i-th smallest positive output with the i-th largest negative one, while (6) holds
    assert pos.tolist() == [1, 5, 3] and neg.tolist() == [0, 4, 2]
    assert np.all(gains > 0) and np.all(np.diff(gains) <= 0)
    assert best_swap_pairs(o, y, max_pairs=2)[0].tolist() == [1, 5]
    # min_gain excludes the weak pair (-0.1 vs 0.2 gains 4 * 0.3)
    assert best_swap_pairs(o, y, min_gain=1.3, max_pairs=None)[0].tolist() == [1, 5]
    assert best_swap_pairs(o, np.ones(o.size))[0].size == 0


# ------------------------------------------------------------------------------ algorithm
def test_balance_exact_after_every_swap():
    X, y, _ = _gauss()
    for r in (0.5, 0.37):
        m = S3VMLight(sigma=2.0, C=10.0, r=r).fit(X, y)
        info = m.binary_fits_[0].info
        u = int(np.sum(y == -1))
        k = n_positive(u, r)
        assert info["n_swaps"] > 0, "this data must exercise the switching"
        assert info["n_positive"] == k
        np.testing.assert_array_equal(info["trace"]["n_pos"], k)  # after every swap and retraining
        assert m.assigned_labels_.shape == (1, u) and int(np.sum(m.assigned_labels_ > 0)) == k
        np.testing.assert_array_equal(m.assigned_labels_[0], info["y_unlabeled"])
        assert set(np.unique(m.assigned_labels_)) == {-1.0, 1.0}


@pytest.mark.parametrize("kernel,pairs", [("rbf", 1), ("rbf", None), ("linear", 1), ("linear", 3)])
def test_objective_never_increases_across_swaps_at_fixed_c(kernel, pairs):
    X, y, _ = _gauss()
    m = S3VMLight(kernel=kernel, sigma=2.0, C=10.0, pairs_per_retrain=pairs).fit(X, y)
    tr = m.binary_fits_[0].info["trace"]
    assert tr["n_swaps"][-1] > 0
    n_within = 0
    for step in np.unique(tr["step"]):
        obj = tr["objective"][tr["step"] == step]
        n_within += obj.size - 1
        assert np.all(np.diff(obj) <= 1e-10 * obj[:-1]), f"objective rose at C~ step {step}: {obj}"
    assert n_within == tr["n_swaps"].size - m.binary_fits_[0].info["n_anneal_steps"]
    assert n_within > 0


def test_info_counts_and_final_model():
    X, y, _ = _gauss()
    C, c_star = 10.0, 4.0
    m = S3VMLight(sigma=2.0, C=C, C_star=c_star).fit(X, y)
    f = m.binary_fits_[0]
    info = f.info
    assert info["n_anneal_steps"] == 30 and info["anneal_schedule"][-1] == c_star
    # one retraining per C~ step plus one per switched pair (one pair per retraining by default)
    assert info["n_retrain"] == 30 + info["n_swaps"] == f.n_iter == m.n_iter_[0]
    assert info["trace"]["objective"].size == info["n_retrain"]
    assert m.stop_reason_ == ["no_qualifying_pair"]
    assert info["r"] == pytest.approx(0.5)  # r=None: estimated from the (balanced) labeled points
    # The returned model minimizes eq. (1) at C* with the final labels ...
    lab = y != -1
    y_full = np.where(lab, np.where(y == 1, 1.0, -1.0), 0.0)
    y_full[~lab] = info["y_unlabeled"]
    cost = np.where(lab, C, c_star)
    K = gaussian_kernel(X, sigma=2.0)
    ref = kernel_newton(K, y_full, cost)
    assert info["objective"] == pytest.approx(ref.objective, rel=1e-8)
    assert l2svm_objective(y_full, cost, m.dual_coef_[0], m.intercept_[0], K=K) == pytest.approx(ref.objective, rel=1e-8)
    # ... decision_function reproduces its outputs, and no pair satisfies (6) at the end.
    out = m.decision_function(X)
    np.testing.assert_allclose(out, ref.outputs, atol=1e-6)
    o_u = out[~lab]
    assert o_u[info["y_unlabeled"] > 0].min() >= o_u[info["y_unlabeled"] < 0].max() - 1e-8
    # One snapshot per annealing step; the last is the returned model, an early one is not.
    assert info["stage_coef"].shape == (30, X.shape[0]) and info["stage_intercept"].shape == (30,)
    np.testing.assert_array_equal(info["stage_coef"][-1], m.dual_coef_[0])
    assert info["stage_intercept"][-1] == m.intercept_[0]
    assert not np.allclose(info["stage_coef"][0], m.dual_coef_[0])


def test_tiny_c_star_approaches_supervised_svm():
    X, y, _ = _gauss()
    svm = SVM(sigma=2.0, C=10.0).fit(X, y)
    m = S3VMLight(sigma=2.0, C=10.0, C_star=1e-9).fit(X, y)
    np.testing.assert_allclose(m.decision_function(X), svm.decision_function(X), atol=1e-6)
    # ...and its internal labels are the supervised SVM's outputs thresholded to round(u r)
    unl = y == -1
    np.testing.assert_array_equal(m.assigned_labels_[0],
                                  threshold_to_count(svm.decision_function(X)[unl], n_positive(unl.sum(), 0.5)))
    # while at C* = C the unlabeled points do change the solution
    full = S3VMLight(sigma=2.0, C=10.0).fit(X, y)
    assert np.max(np.abs(full.decision_function(X) - svm.decision_function(X))) > 0.1


def test_two_moons_protocol_objective_below_supervised_svm():
    ds, _ = _moons(4)
    split = jmlr2008_splits(ds, n_splits=1, n_labeled=2)[0]
    s = ProtocolSettings(sigma=0.5, C=10.0)
    light = run_split(S3VMLight, {}, ds, split, s)
    svm = run_split(SVM, {}, ds, split, s)
    assert light.balance_exact
    assert light.objective < svm.objective


@pytest.mark.parametrize("seed", range(6))
def test_two_moons_improves_on_its_balanced_start(seed):
    """The start of Algorithm 1 is the SVM thresholded to u r positives: its eq. (1) at C* is never beaten downward."""
    ds, y = _moons(seed)
    m = S3VMLight(sigma=0.5, C=10.0, r=0.5).fit(ds.X, y)
    K = gaussian_kernel(ds.X, sigma=0.5)
    yl = np.where(ds.y[:2] == 1, 1.0, -1.0)
    svm = kernel_newton(K, np.r_[yl, np.ones(100)], np.r_[10.0, 10.0, np.zeros(100)])
    y0 = threshold_to_count(svm.outputs[2:], 50)
    start = kernel_newton(K, np.r_[yl, y0], np.full(102, 10.0)).objective
    assert m.binary_fits_[0].info["objective"] <= start * (1 + 1e-10)


def test_linear_dense_and_csr_agree():
    X, y, _ = _gauss(seed=2, d=8)
    X[np.abs(X) < 0.6] = 0.0
    dense = S3VMLight(kernel="linear", C=1.0).fit(X, y)
    Xs = sp.csr_matrix(X)
    for i in range(Xs.shape[0]):  # unsorted column indices within each row (DESIGN.md pitfall)
        a, b = Xs.indptr[i], Xs.indptr[i + 1]
        Xs.indices[a:b], Xs.data[a:b] = Xs.indices[a:b][::-1].copy(), Xs.data[a:b][::-1].copy()
    Xs.has_sorted_indices = False
    sparse = S3VMLight(kernel="linear", C=1.0).fit(Xs, y)
    assert dense.binary_fits_[0].info["n_swaps"] > 0
    np.testing.assert_array_equal(dense.assigned_labels_, sparse.assigned_labels_)
    np.testing.assert_allclose(dense.coef_, sparse.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(dense.predict(X), sparse.predict(Xs))


def test_linear_matches_kernel_newton_on_linear_gram():
    """Both trainers minimize the same eq. (1) (free bias): same switching path, same labels."""
    X, y, _ = _gauss(seed=1, d=4)
    lin = S3VMLight(kernel="linear", C=1.0, tol=1e-12).fit(X, y)
    lab = y != -1
    y_full = np.where(lab, np.where(y == 1, 1.0, -1.0), 0.0)
    y_full[~lab] = lin.assigned_labels_[0]
    ref = kernel_newton(X @ X.T, y_full, 1.0)
    assert lin.binary_fits_[0].info["objective"] == pytest.approx(ref.objective, rel=1e-6)


# ---------------------------------------------------------------------------- safety cap, API
def test_max_swaps_cap():
    X, y, _ = _gauss()
    free = S3VMLight(sigma=2.0, C=10.0).fit(X, y)
    assert free.binary_fits_[0].info["n_swaps"] > 2
    capped = S3VMLight(sigma=2.0, C=10.0, max_swaps=2).fit(X, y)
    info = capped.binary_fits_[0].info
    assert capped.stop_reason_ == ["max_swaps"] and info["n_swaps"] == 2
    assert info["trace"]["C_tilde"][-1] == 10.0  # the remaining steps still end at C*
    none = S3VMLight(sigma=2.0, C=10.0, max_swaps=0).fit(X, y)
    assert none.binary_fits_[0].info["n_swaps"] == 0 and none.stop_reason_ == ["max_swaps"]
    assert none.binary_fits_[0].info["n_retrain"] == 30


def test_refit_idempotent_params_untouched_and_clone():
    X, y, _ = _gauss()
    m = S3VMLight(sigma=2.0, C=10.0)
    params = m.get_params()
    a = m.fit(X, y).decision_function(X)
    b = m.fit(X, y).decision_function(X)
    np.testing.assert_array_equal(a, b)
    assert m.get_params() == params and m.C_star is None
    np.testing.assert_array_equal(clone(m).fit(X, y).decision_function(X), a)


def test_multiclass_one_vs_rest_balanced_per_problem():
    rng = np.random.default_rng(0)
    centers = np.array([[0, 0], [4, 0], [0, 4.0]])
    yt = np.arange(90) % 3
    X = centers[yt] + rng.standard_normal((90, 2))
    y = np.full(90, -1)
    y[:9] = yt[:9]
    m = S3VMLight(sigma=1.5, C=5.0, r=1 / 3).fit(X, y)
    assert m.assigned_labels_.shape == (3, 81)
    np.testing.assert_array_equal((m.assigned_labels_ > 0).sum(axis=1), n_positive(81, 1 / 3))
    assert np.mean(m.predict(X) == yt) > 0.85


def test_protocol_run_is_balanced():
    ds = g50c_like(seed=3, n=120, d=5)
    split = jmlr2008_splits(ds, n_splits=1, n_labeled=8)[0]
    res = run_split(S3VMLight, {}, ds, split, ProtocolSettings(sigma=3.0, C=5.0))
    assert res.balance_exact and res.binary[0].n_iter >= 30
    assert res.binary[0].stop_reason == "no_qualifying_pair"


@pytest.mark.parametrize("params,err,match", [
    ({"C_star": 0.0}, ValueError, "C_star must be a float > 0"), ({"r": 1.0}, ValueError, r"r must be a float in \(0, 1\)"),
    ({"anneal_start": -1.0}, ValueError, "anneal_start"), ({"anneal_factor": 1.0}, ValueError, "anneal_factor"),
    ({"max_swaps": -1}, ValueError, "max_swaps"), ({"max_swaps": 2.5}, ValueError, "max_swaps"),
    ({"pairs_per_retrain": 0}, ValueError, "pairs_per_retrain"), ({"tol": 0.0}, ValueError, "tol"),
    ({"max_iter": None}, ValueError, "max_iter"), ({"kernel": "poly"}, ValueError, "kernel"),
    ({"C_star": "big"}, TypeError, "C_star"), ({"loss": "hinge"}, ValueError, "loss must be one of"),
    ({"loss": None}, ValueError, "loss must be one of"), ({"svc_tol": 0.0}, ValueError, "svc_tol"),
])
def test_bad_params(params, err, match):
    X, y, _ = _gauss(n=40)
    with pytest.raises(err, match=match):
        S3VMLight(**params).fit(X, y)


def test_every_point_labeled_fits_the_supervised_problem():
    X, _, yt = _gauss(n=40)
    est = S3VMLight().fit(X, yt)
    assert est.binary_fits_[0].info["supervised"] and est.assigned_labels_.shape == (1, 0)


# ------------------------------------------------------------------------- hinge loss (p = 1)
def _hinge_kkt_violation(K, y, cost, res):
    """Largest violation of the hinge SVM's KKT conditions at ``res`` (coef = y_i alpha_i).

    The conditions are sufficient for this convex problem, so a small violation certifies the
    optimum independently of libsvm: 0 <= alpha_i <= c_i, alpha_i = 0 where y_i f_i > 1,
    alpha_i = c_i where y_i f_i < 1, sum_i y_i alpha_i = 0 and f = K (y alpha) + b.
    """
    alpha = y * res.coef
    m = y * res.outputs
    v = [np.max(-alpha), np.max(alpha - cost), abs(np.sum(res.coef)) / cost.max(),
         np.max(np.abs(K @ res.coef + res.intercept - res.outputs))]
    v.append(np.max(np.where(alpha > 1e-8 * cost.max(), np.maximum(m - 1.0, 0.0), 0.0)))
    v.append(np.max(np.where(alpha < cost - 1e-8 * cost.max(), np.maximum(1.0 - m, 0.0), 0.0)))
    return max(v)


def test_hinge_trainer_reaches_the_kkt_point_rbf_and_linear(monkeypatch):
    from s3vm_bench.solvers.s3vm_light import _HingeTrainer

    X, y_semi, yt = _gauss(n=80)
    y = np.where(yt == 1, 1.0, -1.0)
    rng = np.random.default_rng(0)
    cost = rng.choice([0.0, 0.3, 10.0], size=y.size)  # C, C~ and left-out (cost 0) points
    K = gaussian_kernel(X, sigma=2.0)
    res = _HingeTrainer(None, K, 1e-10).supervised(y, cost)
    keep = cost > 0
    sub = type(res)(res.coef[keep], res.intercept, res.objective, 0, "", res.outputs[keep], None)
    assert _hinge_kkt_violation(K[np.ix_(keep, keep)], y[keep], cost[keep], sub) < 1e-6
    assert np.all(res.coef[~keep] == 0.0)
    reg = 0.5 * res.coef @ K @ res.coef
    assert res.objective == pytest.approx(reg + np.sum(cost * np.maximum(0.0, 1.0 - y * res.outputs)), rel=1e-12)
    np.testing.assert_array_equal(res.support, keep & (y * res.outputs < 1.0))
    # linear kernel: on its Gram matrix formed once (small n, dense or CSR X), or by libsvm's linear
    # kernel on X (no n x n matrix) = the same dual as on the Gram matrix given as a kernel
    small = _HingeTrainer(sp.csr_matrix(X), None, 1e-10)
    assert small.linear_gram is not None
    lin_gram = small.retrain(y, cost, prev=None)
    monkeypatch.setattr(_HingeTrainer, "LINEAR_GRAM_MAX_BYTES", 0)
    assert _HingeTrainer(X, None, 1e-10).linear_gram is None
    lin = _HingeTrainer(X, None, 1e-10).retrain(y, cost, prev=None)
    lin_csr = _HingeTrainer(sp.csr_matrix(X), None, 1e-10).retrain(y, cost, prev=None)
    gram = _HingeTrainer(None, X @ X.T, 1e-10).supervised(y, cost)
    np.testing.assert_allclose(lin_gram.coef, lin.coef, atol=1e-6)
    np.testing.assert_allclose(lin.outputs, gram.outputs, atol=1e-6)
    np.testing.assert_allclose(lin_csr.coef, lin.coef, atol=1e-10)
    np.testing.assert_allclose(lin.coef, X.T @ gram.coef, atol=1e-6)
    assert lin.objective == pytest.approx(gram.objective, rel=1e-8)


@pytest.mark.parametrize("kernel,pairs", [("rbf", 1), ("rbf", None), ("linear", 1)])
def test_hinge_switching_keeps_balance_and_lowers_the_objective(kernel, pairs):
    X, y, _ = _gauss()
    r = 0.45
    m = S3VMLight(kernel=kernel, sigma=2.0, C=10.0, r=r, loss="l1", svc_tol=1e-9, pairs_per_retrain=pairs).fit(X, y)
    info = m.binary_fits_[0].info
    tr = info["trace"]
    assert info["n_swaps"] > 0 and m.stop_reason_ == ["no_qualifying_pair"]
    np.testing.assert_array_equal(tr["n_pos"], n_positive(int(np.sum(y == -1)), r))
    for step in np.unique(tr["step"]):
        obj = tr["objective"][tr["step"] == step]
        assert np.all(np.diff(obj) <= 1e-7 * obj[:-1]), f"hinge objective rose at C~ step {step}: {obj}"
    # The final model is the hinge SVM at C* on the final labels, and no pair satisfies (6) for p = 1.
    lab = y != -1
    o = m.decision_function(X)
    yu = m.assigned_labels_[0]
    assert best_swap_pairs(o[~lab], yu, loss="l1")[0].size == 0
    y_full = np.where(lab, np.where(y == 1, 1.0, -1.0), 0.0)
    y_full[~lab] = yu
    slack = np.maximum(0.0, 1.0 - y_full * o)
    w2 = (np.sum(m.coef_ ** 2) if kernel == "linear"
          else m.dual_coef_[0] @ gaussian_kernel(X, sigma=2.0) @ m.dual_coef_[0])
    assert info["objective"] == pytest.approx(0.5 * w2 + 10.0 * slack.sum(), rel=1e-9)


def test_hinge_and_squared_hinge_differ_and_l2_is_the_default():
    ds, y = _moons(0)
    l2 = S3VMLight(sigma=0.5, C=10.0, r=0.5).fit(ds.X, y)
    l1 = S3VMLight(sigma=0.5, C=10.0, r=0.5, loss="l1").fit(ds.X, y)
    assert l2.get_params()["loss"] == "l2"
    assert not np.allclose(l1.decision_function(ds.X), l2.decision_function(ds.X))
    for m in (l1, l2):
        assert int(np.sum(m.assigned_labels_[0] > 0)) == n_positive(int(np.sum(y == -1)), 0.5)
    # The l1 run's own SVM is the hinge one: its hinge objective is the lowest on its labels.
    info1 = l1.binary_fits_[0].info
    y_full = np.where(y == -1, 0.0, np.where(y == 1, 1.0, -1.0))
    y_full[y == -1] = info1["y_unlabeled"]
    K = gaussian_kernel(ds.X, sigma=0.5)

    def hinge_objective(beta, b):
        return 0.5 * beta @ K @ beta + 10.0 * np.sum(np.maximum(0.0, 1.0 - y_full * (K @ beta + b)))

    own = hinge_objective(l1.dual_coef_[0], l1.intercept_[0])
    assert own == pytest.approx(info1["objective"], rel=1e-9)
    sq = kernel_newton(K, y_full, np.full(y.size, 10.0))  # the squared-hinge SVM on the same labels
    assert own < hinge_objective(sq.coef, sq.intercept)


def test_hinge_objective_decreases_within_each_step_at_the_default_tolerance():
    # libsvm's own default tolerance (1e-3) let the traced objective rise by up to 1.5% here.
    assert S3VMLight().get_params()["svc_tol"] == 1e-6
    worst = 0.0
    for seed in range(4):
        ds = g50c_like(seed=seed, n=200, d=5, bayes_error=0.2)
        rng = np.random.default_rng(seed)
        y = np.full(200, -1)
        lab = np.r_[rng.choice(100, 3, replace=False), 100 + rng.choice(100, 3, replace=False)]
        y[lab] = ds.y[lab]
        tr = S3VMLight(sigma=2.0, C=100.0, loss="l1").fit(ds.X, y).binary_fits_[0].info["trace"]
        for step in np.unique(tr["step"]):
            obj = tr["objective"][tr["step"] == step]
            if obj.size > 1:
                worst = max(worst, float(np.max(np.diff(obj) / obj[:-1])))
    assert worst <= 1e-6


def test_a_switch_back_to_a_visited_labeling_ends_the_step(monkeypatch):
    """Solves that are not exact could cycle; a revisited labeling ends the C~ step."""
    import s3vm_bench.solvers.s3vm_light as mod
    from s3vm_bench.solvers._primal import PrimalResult

    class Contrary:  # outputs opposite to the labels in force: every pair qualifies, always
        def __init__(self, *args):
            pass

        def supervised(self, y, cost):
            return self.retrain(y, cost, None)

        def retrain(self, y, cost, prev):
            o = -np.where(cost > 0, y, 0.0)
            return PrimalResult(np.zeros(y.size), 0.0, 1.0, 1, "converged", o, cost > 0)

    monkeypatch.setattr(mod, "_KernelTrainer", Contrary)
    X, y, _ = _gauss(n=40)
    m = S3VMLight(sigma=2.0, C=10.0, r=0.5, pairs_per_retrain=None, anneal_start=0.1, anneal_factor=2.0).fit(X, y)
    info = m.binary_fits_[0].info
    steps = info["n_anneal_steps"]
    # each step: all labels flip once (u/2 pairs), then flipping back would revisit -> the step ends
    assert info["n_revisits"] == steps and m.stop_reason_ == ["revisit"]
    assert info["n_swaps"] == steps * int(np.sum(y == -1)) // 2
    assert int(np.sum(info["y_unlabeled"] > 0)) == n_positive(int(np.sum(y == -1)), 0.5)


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_retrains_start_from_the_previous_solution(kernel):
    """DESIGN.md pitfall 5: the squared-hinge retrains after a label switch are warm-started, so a
    retrain of the problem just solved takes at most one step, where a cold start takes several."""
    from s3vm_bench.solvers._s3vm_light_trainers import _KernelTrainer, _LinearTrainer
    from tests._toy import small_clusters

    X, y, _ = small_clusters(seed=0, n=40)
    y_pm, cost = np.where(y == 1, 1.0, -1.0), np.linspace(0.5, 2.0, 40)
    if kernel == "rbf":
        trainer = _KernelTrainer(gaussian_kernel(X, sigma=1.0), tol=1e-10, max_iter=100)
    else:
        trainer = _LinearTrainer(X, np.ones(40, bool), tol=1e-10, max_iter=100)
    cold = trainer.supervised(y_pm, cost)  # every point labeled: the whole problem, from zero
    warm = trainer.retrain(y_pm, cost, cold)
    assert cold.n_iter >= 2 and warm.n_iter <= 1
    np.testing.assert_allclose(warm.coef, cold.coef, atol=1e-8)
