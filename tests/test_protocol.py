"""The common protocol (JMLR 2008 Sec. 5.2): objective, class balance, dichotomic search, OvR."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

from s3vm_bench.data_registry import Dataset, Split, g50c_like
from s3vm_bench.harness.protocol import ProtocolSettings, fit_binary_problems, protocol_objective, run_split
from s3vm_bench.solvers.base import BaseS3VM, BinaryFit
from s3vm_bench.solvers.numerics import (KernelCentering, balance_probabilities, check_r, dichotomic_search,
                                        estimate_r, exact_r, gaussian_kernel, kernel_newton, n_positive,
                                        threshold_shift, threshold_to_count)
from s3vm_bench.solvers.svm import SVM


def _blobs(seed, n=40, d=3, sep=2.5, k=2):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    centers = rng.standard_normal((k, d)) * sep
    return centers[y] + rng.standard_normal((n, d)), y


def _direct_objective(K, y, cost):
    """Independent minimization of 1/2 b'Kb + sum c max(0, 1 - y (Kb + b0))^2 (L-BFGS)."""
    n = K.shape[0]

    def f(z):
        beta, b = z[:n], z[n]
        m = np.maximum(0.0, 1.0 - y * (K @ beta + b))
        val = 0.5 * beta @ K @ beta + np.sum(cost * m * m)
        g_out = -2.0 * cost * m * y
        return val, np.r_[K @ beta + K @ g_out, g_out.sum()]

    res = so.minimize(f, np.zeros(n + 1), jac=True, method="L-BFGS-B",
                      options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-12})
    return res.fun


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_protocol_objective_equals_direct_minimization(kernel):
    X, y = _blobs(0, n=30)
    y_pm = np.where(y == 1, 1.0, -1.0)
    n_lab = 6
    rng = np.random.default_rng(1)
    outputs = rng.standard_normal(30 - n_lab)  # any solver's outputs on the unlabeled points
    s = ProtocolSettings(kernel=kernel, sigma=1.5, C=3.0, C_star=0.7)
    got = protocol_objective(X[:n_lab], y_pm[:n_lab], X[n_lab:], outputs, s)
    K = gaussian_kernel(X, sigma=1.5) if kernel == "rbf" else X @ X.T
    y_all = np.r_[y_pm[:n_lab], np.where(outputs > 0, 1.0, -1.0)]
    cost = np.r_[np.full(n_lab, 3.0), np.full(30 - n_lab, 0.7)]
    want = _direct_objective(K, y_all, cost)
    assert got == pytest.approx(want, rel=1e-6)


def test_protocol_objective_sparse_linear_equals_dense():
    X, y = _blobs(2, n=30)
    X[X < 0.3] = 0.0
    y_pm = np.where(y == 1, 1.0, -1.0)
    out = np.linspace(-1, 1, 24)
    s = ProtocolSettings(kernel="linear", C=2.0)
    dense = protocol_objective(X[:6], y_pm[:6], X[6:], out, s)
    sparse = protocol_objective(sp.csr_matrix(X[:6]), y_pm[:6], sp.csr_matrix(X[6:]), out, s)
    assert sparse == pytest.approx(dense, rel=1e-6)


# ------------------------------------------------------------------------------ balance
def test_r_settings():
    assert exact_r([1, -1, -1, 1, 1]) == pytest.approx(0.6)
    assert estimate_r([1, 1, -1, -1]) == pytest.approx(0.5)  # JMLR 2008 Sec. 5.4.5
    assert n_positive(7, 0.5) == 4 and n_positive(10, 0.25) == 3 and n_positive(100, 0.5) == 50
    for bad in (0.0, 1.0, -0.2, 1.5, float("nan")):
        with pytest.raises(ValueError, match="strictly between 0 and 1"):
            check_r(bad)
    with pytest.raises(TypeError):
        check_r("half")
    with pytest.raises(ValueError, match="unlabeled set is empty"):
        exact_r([])


def test_threshold_to_count_is_exact_even_with_ties():
    o = np.array([0.5, 0.5, 0.5, -1.0, 2.0, 0.5])
    for k in range(7):
        lab = threshold_to_count(o, k)
        assert np.sum(lab > 0) == k
    np.testing.assert_array_equal(threshold_to_count(o, 2), [1, -1, -1, -1, 1, -1])


def test_dichotomic_search_reaches_the_count():
    rng = np.random.default_rng(0)
    base = rng.standard_normal(101)
    base -= base.mean()  # centered outputs, eq. (13): the mean output is b = 2 r~ - 1

    def solve(r_tilde):
        return base + (2 * r_tilde - 1), None

    for target in (1, 17, 50, 80, 100):
        res = dichotomic_search(solve, target, r0=target / 101)
        assert res.exact and res.n_pos == target == np.sum(res.outputs > 0)


def test_dichotomic_search_reports_how_close_it_got():
    base = np.r_[np.zeros(10), np.ones(10)]  # ten identical outputs: counts jump by 10

    def solve(r_tilde):
        return base - 0.5 + (2 * r_tilde - 1), None

    res = dichotomic_search(solve, 5, r0=0.5, max_iter=40)
    assert not res.exact and res.n_pos in (0, 10) and res.target == 5


class CenteredFixedBiasSVM(BaseS3VM):
    """A minimal continuous solver with the mean-output constraint (JMLR 2008 eq. 12-13).

    Kernel centered on the unlabeled mean (eq. 13), b fixed to 2 r~ - 1, beta fitted on the
    labeled points only: the mean output over unlabeled points is exactly 2 r~ - 1.
    """

    balance = "mean_output"

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, r_tilde=0.5):
        self.kernel, self.sigma, self.C, self.r_tilde = kernel, sigma, C, r_tilde

    def _fit_binary(self, X, y_pm, labeled, gram):
        self._center = KernelCentering.fit(gram, ~labeled)
        Kc = self._center.center_train(gram)
        b = 2 * self.r_tilde - 1
        idx = np.flatnonzero(labeled)
        # labeled-only fit with the bias absorbed in the targets' shift
        res = kernel_newton(Kc[np.ix_(idx, idx)] + 1e-8 * np.eye(idx.size), y_pm[idx], self.C)
        beta = np.zeros(X.shape[0])
        beta[idx] = res.coef
        return BinaryFit(beta, b + res.intercept * 0.0, res.n_iter, res.stop_reason)

    def decision_function(self, X):
        K = self._kernel(np.asarray(X, dtype=float), self.X_fit_)
        return self._center.transform(K) @ self.dual_coef_[0] + self.intercept_[0]


def test_harness_dichotomic_search_makes_balance_exact():
    X, y = _blobs(3, n=60, sep=1.0)
    ds = Dataset("blobs", X, y, ("0", "1"))
    lab = np.array([0, 1, 2, 3])
    split = Split("t", 0, None, lab, np.arange(4, 60), np.empty(0, int), np.empty(0, int))
    res = run_split(CenteredFixedBiasSVM, {}, ds, split, ProtocolSettings(sigma=2.0, C=5.0))
    b = res.binary[0]
    assert b.n_pos == b.n_pos_target == n_positive(56, np.mean(y[4:] == 1))
    assert res.balance_exact and b.dichotomic_iter >= 1
    # ... and the mean-output constraint really is what is searched on
    est = CenteredFixedBiasSVM(sigma=2.0, C=5.0, r_tilde=0.3).fit(X, np.r_[y[:4], -np.ones(56, int)])
    assert est.decision_function(X[4:]).mean() == pytest.approx(2 * 0.3 - 1, abs=1e-8)


class JumpingMeanOutput:
    """An outside mean-output solver whose positive count jumps over any target at r~ = 0.5:
    f(x) = x_0 + (2 r~ - 1) + 0.3 sign(r~ - 0.5)."""

    balance = "mean_output"

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None, r_tilde=0.5):
        self.kernel, self.sigma, self.C, self.C_star, self.r, self.r_tilde = kernel, sigma, C, C_star, r, r_tilde

    def get_params(self, deep=True):
        return {k: getattr(self, k) for k in ("kernel", "sigma", "C", "C_star", "r", "r_tilde")}

    def set_params(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)
        return self

    def fit(self, X, y):
        self.classes_ = np.array([0, 1])
        self.b_ = (2 * self.r_tilde - 1) + (0.3 if self.r_tilde > 0.5 else -0.3)
        return self

    def decision_function(self, X):
        return np.asarray(X)[:, 0] + self.b_


def _run_on_a_line(solver_cls, seed, n):
    """``run_split`` of ``solver_cls`` on points whose class is the sign of x_0 (2 labeled per class, half
    of the rest unlabeled, half test), with every warning an error: no output may be assigned by
    position. Returns the result and x_0 of the unlabeled and of the test points."""
    rng = np.random.default_rng(seed)
    X = np.c_[rng.uniform(-1, 1, n), rng.normal(size=n)]
    y = (X[:, 0] > 0).astype(int)
    lab = np.r_[np.flatnonzero(y == 0)[:2], np.flatnonzero(y == 1)[:2]]
    rest = np.setdiff1d(np.arange(n), lab)
    unl, test = rest[: rest.size // 2], rest[rest.size // 2:]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = run_split(solver_cls, {}, Dataset("line", X, y, ("0", "1")),
                        Split("t", 0, None, lab, unl, np.empty(0, int), test), ProtocolSettings(sigma=1.0, C=1.0))
    return res, X[unl, 0], X[test, 0]


def test_harness_search_that_misses_the_count_shifts_the_threshold_of_every_output():
    """When the count jumps over round(u r), the harness's search shifts the closest solution's
    threshold -- on the test outputs too -- as the solvers that search themselves do; before,
    only the unlabeled outputs were moved (as ties) and the test outputs kept the missed threshold."""
    res, x_unl, x_test = _run_on_a_line(JumpingMeanOutput, seed=0, n=400)
    b = res.binary[0]
    assert b.n_pos == b.n_pos_target and not b.search["search_exact"] and b.search["threshold_shift"] != 0
    # one threshold for every output: the unlabeled and test outputs are the fitted model's, moved alike
    fitted = b.unlabeled_outputs - x_unl
    np.testing.assert_allclose(fitted, fitted[0], atol=1e-12)
    np.testing.assert_allclose(b.test_outputs - x_test, fitted[0], atol=1e-12)
    assert res.test_error < 0.02  # the outputs are x_0 shifted to the balance: almost every sign right


# -------------------------------------------------------------------------- one-vs-rest
def test_one_vs_rest_objective_is_mean_and_error_is_argmax():
    X, y = _blobs(4, n=90, k=3, sep=3.0)
    ds = Dataset("three", X, y, ("a", "b", "c"))
    lab = np.array([0, 1, 2, 3, 4, 5])
    unl = np.arange(6, 90)
    split = Split("t", 0, None, lab, unl, np.empty(0, int), np.empty(0, int))
    s = ProtocolSettings(sigma=2.0, C=10.0)
    res = run_split(SVM, {}, ds, split, s)
    assert [b.label for b in res.binary] == [0, 1, 2]
    assert res.objective == pytest.approx(np.mean([b.objective for b in res.binary]))
    F = np.column_stack([b.unlabeled_outputs for b in res.binary])
    assert res.unlabeled_error == pytest.approx(np.mean(np.argmax(F, axis=1) != y[unl]))
    for b in res.binary:
        assert b.r == pytest.approx(np.mean(y[unl] == b.label))  # exact r per binary problem
    # each binary objective is the protocol objective of that problem's outputs
    b1 = res.binary[1]
    y_pm = np.where(y == 1, 1.0, -1.0)
    assert b1.objective == pytest.approx(protocol_objective(X[lab], y_pm[lab], X[unl], b1.unlabeled_outputs, s))



@pytest.mark.parametrize("solver", ["newton", "grad_s3vm"])  # fitted alone / one-vs-rest fits run together
def test_fit_binary_problems_of_some_classes_give_the_full_runs_results(solver):
    """``fit_binary_problems(..., classes=)`` fits only those one-vs-rest problems, with the numbers
    :func:`run_split` gives them in the run of all classes; an unknown class is a ValueError."""
    from s3vm_bench.solvers import get_solver

    X, y = _blobs(4, n=90, k=3, sep=3.0)
    ds = Dataset("three", X, y, ("a", "b", "c"))
    lab = np.array([0, 1, 2, 3, 4, 5])
    split = Split("t", 0, None, lab, np.arange(6, 90), np.empty(0, int), np.empty(0, int))
    s = ProtocolSettings(sigma=2.0, C=10.0)
    cls = get_solver(solver)
    full = run_split(cls, {}, ds, split, s).binary
    fits = []
    counting = type(cls.__name__, (cls,), {"fit": lambda self, X, y: fits.append(1) or cls.fit(self, X, y)})
    some, _ = fit_binary_problems(counting, {}, ds, split, s, classes=[2, 0])
    assert [b.label for b in some] == [0, 2]  # in class order
    for b in some:
        ref = full[b.label]
        assert b.objective == ref.objective and b.n_pos == ref.n_pos == ref.n_pos_target
        np.testing.assert_array_equal(b.unlabeled_outputs, ref.unlabeled_outputs)
    assert len(fits) == 2  # class 1 was not fitted (the solvers search r~ inside one fit)
    with pytest.raises(ValueError, match=r"classes \[3\] are not binary problems of three"):
        fit_binary_problems(cls, {}, ds, split, s, classes=[3])

def test_estimated_r_mode():
    X, y = _blobs(5, n=40)
    ds = Dataset("b", X, y, ("0", "1"))
    lab = np.array([0, 1, 3, 5])  # labels 0, 1, 1, 1 -> r = 0.75
    split = Split("t", 0, None, lab, np.setdiff1d(np.arange(40), lab), np.empty(0, int), np.empty(0, int))
    res = run_split(SVM, {}, ds, split, ProtocolSettings(sigma=2.0, C=1.0, r_mode="estimated"))
    assert res.binary[0].r == pytest.approx(0.75)


def test_split_errors():
    X, y = _blobs(6, n=20)
    ds = Dataset("b", X, y, ("0", "1"))
    e = np.empty(0, int)
    with pytest.raises(ValueError, match="empty unlabeled set"):
        run_split(SVM, {}, ds, Split("t", 0, None, np.arange(20), e, e, e), ProtocolSettings())
    with pytest.raises(ValueError, match="no labeled point"):
        run_split(SVM, {}, ds, Split("t", 0, None, e, np.arange(20), e, e), ProtocolSettings())
    with pytest.raises(ValueError, match="has no labeled point"):
        run_split(SVM, {}, ds, Split("t", 0, None, np.array([0, 2]), np.arange(4, 20), e, e), ProtocolSettings())
    # A labeled point also in the unlabeled set would be scored as transduced: refused, as is an
    # index beyond the data set (which would otherwise surface as a bare IndexError).
    with pytest.raises(ValueError, match="parts overlap"):
        run_split(SVM, {}, ds, Split("t", 0, None, np.array([0, 1]), np.arange(1, 20), e, e), ProtocolSettings())
    with pytest.raises(ValueError, match="outside 0..19"):
        run_split(SVM, {}, ds, Split("t", 0, None, np.array([0, 1]), np.arange(2, 21), e, e), ProtocolSettings())
    with pytest.raises(ValueError, match="parts overlap"):
        run_split(SVM, {}, ds, Split("t", 0, None, np.array([0, 1]), np.arange(2, 20), e, np.array([5])),
                  ProtocolSettings())


@pytest.mark.parametrize("kw,match", [({"C": 0.0}, "C must be > 0"), ({"sigma": -1.0}, "sigma must be > 0"),
                                      ({"C_star": float("inf")}, "C_star"), ({"r_mode": "guess"}, "r_mode"),
                                      ({"kernel": "poly"}, "kernel")])
def test_settings_validation(kw, match):
    with pytest.raises(ValueError, match=match):
        ProtocolSettings(**kw)


def test_table5_settings():
    s = ProtocolSettings.for_dataset("coil3")
    assert (s.sigma, s.C, s.c_star) == (3000.0, 100.0, 100.0)  # JMLR 2008 Table 5, C* = C
    assert ProtocolSettings.for_dataset("coil3", C_star=1.0).c_star == 1.0  # the C*/100-style variants
    with pytest.raises(ValueError, match="Table 5 has no hyperparameters"):
        ProtocolSettings.for_dataset("vowel")


def test_threshold_shift_exact():
    rng = np.random.default_rng(7)
    o = rng.standard_normal(50) * 3
    from s3vm_bench.solvers.numerics import threshold_shift

    for k in (0, 1, 25, 49, 50):
        assert np.sum(o - threshold_shift(o, k) > 0) == k
    with pytest.raises(ValueError):
        threshold_shift(o, 51)


class _DriftingLabels(SVM):
    """A 'combinatorial' solver whose sign(f) does not meet the balance: the harness must fix it."""

    balance = "threshold"

    def __init__(self, kernel="rbf", sigma=1.0, C=1.0, r=0.5):
        super().__init__(kernel=kernel, sigma=sigma, C=C)
        self.r = r


def test_harness_thresholds_combinatorial_outputs():
    X, y = _blobs(8, n=60, sep=0.5)
    ds = Dataset("b", X, y, ("0", "1"))
    lab = np.array([0, 1, 2, 3])
    split = Split("t", 0, None, lab, np.arange(4, 60), np.empty(0, int), np.empty(0, int))
    res = run_split(_DriftingLabels, {}, ds, split, ProtocolSettings(sigma=0.5, C=100.0))
    b = res.binary[0]
    assert b.r == pytest.approx(np.mean(y[4:] == 1))
    assert b.n_pos == b.n_pos_target and res.balance_exact


class _OffsetOutputs(JumpingMeanOutput):
    """A threshold-balanced solver whose outputs x_0 + 0.4 have too many positives."""

    balance = "threshold"

    def fit(self, X, y):
        self.classes_, self.b_ = np.array([0, 1]), 0.4
        return self


def test_threshold_shift_moves_unlabeled_and_test_outputs_alike():
    """DESIGN.md pitfall 1: the count is met by one shift of the threshold, applied to the test
    outputs too, not by assigning unlabeled outputs by position."""
    res, x_unl, x_test = _run_on_a_line(_OffsetOutputs, seed=1, n=300)
    b = res.binary[0]
    shift = 0.4 - (b.unlabeled_outputs - x_unl)
    assert b.n_pos == b.n_pos_target and shift[0] > 0.3
    np.testing.assert_allclose(shift, shift[0], atol=1e-12)
    np.testing.assert_allclose(0.4 - (b.test_outputs - x_test), shift[0], atol=1e-12)


def test_threshold_shift_is_zero_when_sign_already_balanced():
    from s3vm_bench.solvers.numerics import threshold_shift

    o = np.array([3.0, 2.0, 0.5, -0.5, -2.0])
    assert threshold_shift(o, 3) == 0.0
    # one point too many positive: the boundary moves just past that point, not to a midpoint
    t = threshold_shift(o, 2)
    assert 0.5 <= t < 0.5 + 1e-6 and np.sum(o - t > 0) == 2
    t = threshold_shift(o, 4)
    assert -0.5 - 1e-6 < t < -0.5 and np.sum(o - t > 0) == 4


# ------------------------------------------------------- JMLR 2008 Table 6 intermediate solutions
class _SeenIntermediate:
    """IntermediateSolution that records the labels and r it was fitted with."""

    seen: list = []


def _spy_intermediate():
    from s3vm_bench.harness.intermediate import IntermediateSolution

    class Spy(IntermediateSolution):
        def fit(self, X, y):
            _SeenIntermediate.seen.append((np.asarray(y).copy(), self.r))
            return super().fit(X, y)

    return Spy


@pytest.mark.parametrize("fraction", [0.0, 0.3])
def test_revealed_labels_are_true_seeded_and_keep_the_balance(fraction):
    X, y = _blobs(11, n=90, k=3, sep=1.5)
    ds = Dataset("three", X, y, ("a", "b", "c"))
    lab = np.array([0, 1, 2, 3, 4, 5])
    split = Split("t", 0, None, lab, np.arange(6, 90), np.empty(0, int), np.empty(0, int))
    settings = ProtocolSettings(sigma=2.0, C=5.0)
    Spy = _spy_intermediate()
    _SeenIntermediate.seen = []
    res = run_split(Spy, {"fraction": fraction}, ds, split, settings)
    first = [s for s, _ in _SeenIntermediate.seen]
    assert res.balance_exact and len(res.binary) == 3
    u = 84
    for k, (y_fit, r_fit) in zip(range(3), _SeenIntermediate.seen):
        shown = np.flatnonzero(y_fit[6:] != -1)
        assert shown.size == round(fraction * u)
        # revealed labels are the true ones (binary: class k against the rest)
        assert np.array_equal(y_fit[6:][shown], (y[6:][shown] == k).astype(int))
        # the solver's r completes the revealed positives to the protocol's round(u r)
        hidden = u - shown.size
        target = n_positive(u, np.mean(y[6:] == k))
        assert n_positive(hidden, r_fit) + int((y[6:][shown] == k).sum()) == target
    # the same points for every binary problem and on a rerun
    assert all(np.array_equal(s != -1, first[0] != -1) for s in first)
    _SeenIntermediate.seen = []
    run_split(Spy, {"fraction": fraction}, ds, split, settings)
    assert all(np.array_equal(a, b) for a, (b, _) in zip(first, _SeenIntermediate.seen))


def test_intermediate_solution_is_svm_threshold_retrain():
    from s3vm_bench.harness.intermediate import IntermediateSolution

    X, y = _blobs(12, n=50, sep=1.2)
    y_fit = np.r_[y[:6], -np.ones(44, int)]
    est = IntermediateSolution(sigma=1.5, C=3.0, C_star=0.5, r=0.5).fit(X, y_fit)
    # the same three steps written out with the primal solver
    K = gaussian_kernel(X, sigma=1.5)
    y_pm = np.where(y == 1, 1.0, -1.0)
    first = kernel_newton(K[:6, :6], y_pm[:6], 3.0)
    out = K[6:, :6] @ first.coef + first.intercept
    y_all = np.r_[y_pm[:6], threshold_to_count(out, 22)]
    final = kernel_newton(K, y_all, np.r_[np.full(6, 3.0), np.full(44, 0.5)])
    assert np.allclose(est.decision_function(X), K @ final.coef + final.intercept, atol=1e-8)
    with pytest.raises(ValueError, match="fraction"):
        IntermediateSolution(fraction=1.0).fit(X, y_fit)


class _SelfTrained:
    """A plain scikit-learn-style classifier (no n_iter_, no stop_reason_): self-training of
    logistic regression, ``y == -1`` unlabeled; ``proba`` chooses which output method it has."""

    def __init__(self, proba=True):
        self.proba = proba

    def get_params(self, deep=False):
        return {"proba": self.proba}

    def set_params(self, **params):
        self.__dict__.update(params)
        return self

    def fit(self, X, y):
        from sklearn.linear_model import LogisticRegression
        from sklearn.semi_supervised import SelfTrainingClassifier

        self.model_ = SelfTrainingClassifier(LogisticRegression()).fit(X, y)
        self.classes_ = self.model_.classes_
        if self.proba:
            self.predict_proba = self.model_.predict_proba
        return self

    def predict(self, X):
        return self.model_.predict(X)


@pytest.mark.parametrize("proba", [True, False])
def test_a_plain_estimator_needs_only_fit_and_predict(proba):
    X, y = _blobs(5, n=60, k=3, sep=3.0)
    ds = Dataset("three", X, y, ("a", "b", "c"))
    lab, unl = np.arange(9), np.arange(9, 60)
    split = Split("t", 0, None, lab, unl, np.empty(0, int), np.empty(0, int))
    res = run_split(_SelfTrained, {"proba": proba}, ds, split, ProtocolSettings(sigma=2.0, C=10.0))
    assert len(res.binary) == 3 and all(b.n_iter == 0 for b in res.binary)
    assert 0.0 <= res.unlabeled_error < 0.3 and np.isfinite(res.objective)
    model = _SelfTrained(proba).fit(X[np.r_[lab, unl]], np.where(np.arange(60) < 9, y == 1, -1).astype(int))
    expected = model.predict_proba(X[unl])[:, 1] - 0.5 if proba else np.where(model.predict(X[unl]) == 1, 1.0, -1.0)
    np.testing.assert_allclose(res.binary[1].unlabeled_outputs, expected)


class _NaNOutputs(SVM):
    """A solver whose outputs are NaN: the protocol must refuse to score them."""

    def decision_function(self, X):
        return np.full(X.shape[0], np.nan)


def test_nan_outputs_fail_the_split_instead_of_being_scored():
    X, y = _blobs(6, n=40)
    ds = Dataset("two", X, y, ("a", "b"))
    split = Split("t", 0, None, np.arange(6), np.arange(6, 40), np.empty(0, int), np.empty(0, int))
    with pytest.raises(ValueError, match="NaN or infinite outputs on the unlabeled points"):
        run_split(_NaNOutputs, {}, ds, split, ProtocolSettings(sigma=2.0, C=10.0))


def test_run_split_names_an_argument_of_the_wrong_kind():
    from s3vm_bench.data_registry import jmlr2008_splits, two_moons

    ds = two_moons(seed=0)
    split = jmlr2008_splits(ds, n_splits=1, n_labeled=2)[0]
    settings = ProtocolSettings(kernel="rbf", sigma=0.5, C=10.0, C_star=10.0)
    for args, message in (((SVM(), {}, ds, split, settings), "is a SVM, not a class"),
                          (("svm", {}, ds, split, settings), r"got the name .svm.: pass s3vm_bench.solvers.get_solver"),
                          ((SVM, None, ds, split, settings), "params must be a dict of solver parameters"),
                          ((SVM, {}, "two_moons", split, settings), "ds must be a Dataset"),
                          ((SVM, {}, ds, [split], settings), "split must be a Split"),
                          ((SVM, {}, ds, split, None), "settings must be ProtocolSettings")):
        with pytest.raises(TypeError, match=message):
            run_split(*args)
    res = run_split(SVM, {}, ds, split, settings)  # the same arguments of the right kinds run
    assert res.objective > 0 and 0.0 <= res.unlabeled_error <= 1.0 and len(res.binary) == 1


def test_a_classifier_that_takes_minus_one_for_a_class_gets_a_clear_error():
    """scikit-learn's SVC fits y with -1 as a third class: its 2-D outputs are named, with the contract."""
    from sklearn.svm import SVC

    from s3vm_bench.data_registry import jmlr2008_splits, two_moons

    ds = two_moons(seed=0)
    split = jmlr2008_splits(ds, n_splits=1, n_labeled=4)[0]
    settings = ProtocolSettings(kernel="rbf", sigma=0.5, C=10.0, C_star=10.0)
    with pytest.raises(ValueError, match=r"SVC\.decision_function gave shape \(\d+, 3\) .*read y == -1 as unlabeled"):
        run_split(SVC, {}, ds, split, settings)


@pytest.mark.parametrize("call,err,match", [
    (lambda: n_positive(-5, 0.5), ValueError, "u must be an int >= 0"),
    (lambda: n_positive(10.5, 0.5), TypeError, "u must be an int"),
    (lambda: n_positive(True, 0.5), TypeError, "u must be an int"),
    (lambda: n_positive(10, 1.5), ValueError, r"r must be a fraction in \[0, 1\]"),
    (lambda: n_positive(10, np.nan), ValueError, r"r must be a fraction in \[0, 1\]"),
    (lambda: n_positive(10, "0.5"), TypeError, "r must be a number"),
    (lambda: estimate_r([0, 1, 1]), ValueError, "labeled points' labels must each be -1 or \\+1, got 0.0"),
    (lambda: estimate_r([np.nan, 1]), ValueError, "must each be -1 or \\+1, got nan"),
    (lambda: estimate_r(["a"]), TypeError, "must be numbers"),
    (lambda: exact_r([0, 1, 1]), ValueError, "unlabeled points' labels must each be -1 or \\+1"),
    (lambda: exact_r([[1, -1]]), ValueError, "must be a 1-D vector"),
    (lambda: threshold_to_count([1.0, 2.0, 3.0], 1.5), TypeError, "k must be an int >= 0"),
    (lambda: threshold_to_count([1.0, 2.0, 3.0], True), TypeError, "k must be an int >= 0"),
    (lambda: threshold_to_count([1.0, np.nan, 3.0], 1), ValueError, "outputs contain NaN or inf"),
    (lambda: threshold_shift([1.0, 2.0, 3.0], 1.5), TypeError, "k must be an int >= 0"),
    (lambda: threshold_shift([1.0, np.inf, 3.0], 1), ValueError, "outputs contain NaN or inf"),
    (lambda: threshold_shift([1.0, 2.0], 3), ValueError, "cannot make 3 of 2 outputs positive"),
    (lambda: balance_probabilities([1.0, 2.0], 0.0, 0.0), ValueError, "T must be > 0"),
    (lambda: balance_probabilities([1.0, 2.0], 0.0, -1.0), ValueError, "T must be > 0"),
    (lambda: balance_probabilities([1.0, 2.0], np.nan, 1.0), ValueError, "nu must be finite"),
    (lambda: balance_probabilities([1.0, np.nan], 0.0, 1.0), ValueError, "g contains NaN"),
    (lambda: balance_probabilities([1.0, 2.0], 0.0, "1"), TypeError, "T must be a number"),
    (lambda: balance_probabilities([1.0, 2.0], "0", 1.0), TypeError, "nu must be a number"),
    (lambda: g50c_like(seed=0, bayes_error="0.05"), TypeError, "bayes_error must be a number"),
])
def test_balance_helpers_refuse_nonsense(call, err, match):
    """Nonsense arguments (u < 0, 0/1 labels, T <= 0, NaN outputs) are refused with what was wrong,
    not turned into a number (-2 positives, r = 0.83) or a failure deep inside numpy."""
    with pytest.raises(err, match=match):
        call()


@pytest.mark.parametrize("kw,err,match", [
    ({"max_iter": 0}, ValueError, "max_iter must be an int >= 1"),
    ({"max_iter": 40.0}, TypeError, "max_iter must be an int >= 1"),
    ({"step": 0.0}, ValueError, "step must be > 0"),
    ({"step": -1.0}, ValueError, "step must be > 0"),
    ({"xtol": -1e-3}, ValueError, "xtol must be >= 0"),
    ({"r0": np.nan}, ValueError, "r0 must be finite"),
    ({"r0": "0.5"}, TypeError, "r0 must be a real number"),
    ({"target": -1}, ValueError, "target must be an int >= 0"),
    ({"target": 1.0}, TypeError, "target must be an int >= 0"),
    ({"target": 5}, ValueError, "target = 5 positives asked of 3 unlabeled outputs"),
])
def test_dichotomic_search_refuses_bad_arguments(kw, err, match):
    calls = []

    def solve(r_tilde):
        calls.append(r_tilde)
        return np.array([r_tilde - 0.1, r_tilde - 0.5, r_tilde - 0.9]), None

    args = {"target": 1, "r0": 0.5} | kw
    target = args.pop("target")
    with pytest.raises(err, match=match):
        dichotomic_search(solve, target, **args)
    assert len(calls) <= 1  # refused before any search step
    res = dichotomic_search(solve, 1, r0=0.5)  # the valid call finds the count
    assert res.exact and res.n_pos == 1


def test_balance_helpers_compute_with_the_numbers_they_are_given():
    """Validation does not change the arithmetic: numpy scalar types keep their precision."""
    for u, r in ((np.int64(2948), np.float32(0.09006105)), (np.int32(7), 0.5), (1000, np.float64(0.2015))):
        assert n_positive(u, r) == int(np.floor(u * r + 0.5))
    g, nu, T = np.array([-2.0, 0.0, 3.0]), 0.5, 2.0
    np.testing.assert_allclose(balance_probabilities(g, nu, T), 1.0 / (1.0 + np.exp((g - nu) / T)), rtol=1e-15)


def test_protocol_objective_refuses_outputs_it_cannot_score():
    """NaN outputs are not read as negative labels and scored: they are refused."""
    X, y = _blobs(3, n=10)
    y_pm = np.where(y == 1, 1.0, -1.0)
    settings = ProtocolSettings(sigma=2.0, C=10.0)
    good = protocol_objective(X[:4], y_pm[:4], X[4:], np.ones(6), settings)
    assert np.isfinite(good) and good > 0
    cases = ((y_pm[:4], np.r_[np.ones(5), np.nan], {}, "unl_outputs contain NaN or inf"),
             (y_pm[:4], np.ones(5), {}, r"one output per unlabeled point, shape \(6,\), got shape \(5,\)"),
             (np.where(y[:4] == 1, 1.0, 0.0), np.ones(6), {}, "y_lab_pm must hold one label, -1 or \\+1"),
             (y_pm[:3], np.ones(6), {}, "y_lab_pm must hold one label"),
             (y_pm[:4], np.ones(6), {"gram": np.eye(9)}, r"gram must be the \(10, 10\) kernel matrix"))
    for y_lab, out, kw, match in cases:
        with pytest.raises(ValueError, match=match):
            protocol_objective(X[:4], y_lab, X[4:], out, settings, **kw)


def _moons_run():
    from s3vm_bench.data_registry import jmlr2008_splits, two_moons

    ds = two_moons(seed=3)
    return ds, jmlr2008_splits(ds, n_labeled=2)[0], ProtocolSettings.for_dataset("2moons")


def test_a_str_stop_reason_is_kept_whole():
    class Reasoned(SVM):
        def fit(self, X, y):
            super().fit(X, y)
            self.stop_reason_ = "converged"
            return self

    ds, split, st = _moons_run()
    assert run_split(Reasoned, {}, ds, split, st).binary[0].stop_reason == "converged"


@pytest.mark.parametrize("params, match", [({"sigma": 1.0}, "are the protocol's"), ({"C": 0.01}, "are the protocol's"),
                                           ({"r": 0.9}, "are the protocol's"),
                                           ({"foo": 1}, r"SVM has no parameter 'foo'; its parameters are")])
def test_run_split_refuses_the_protocol_settings_and_unknown_names_as_solver_parameters(params, match):
    """The objective is scored with the settings: a solver trained with other ones would be scored
    on a problem it did not solve (as compare and reproduce refuse)."""
    ds, split, st = _moons_run()
    with pytest.raises(ValueError, match=match):
        run_split(SVM, params, ds, split, st)


def test_a_balance_rule_that_cannot_be_followed_is_refused():
    from s3vm_bench.solvers import check_solver_class

    class Typo(SVM):
        balance = "treshold"

    class MeanNoRt(SVM):
        balance = "mean_output"

    with pytest.raises(ValueError, match="balance = 'treshold' is not a balance rule"):
        check_solver_class(Typo, "Typo")
    with pytest.raises(TypeError, match="'mean_output' needs an r_tilde constructor parameter"):
        check_solver_class(MeanNoRt, "MeanNoRt")


def test_dichotomic_search_refuses_what_solve_cannot_return():
    with pytest.raises(TypeError, match=r"must return a pair \(outputs, payload\)"):
        dichotomic_search(lambda r: np.ones(5) * (r - 0.5), 2, r0=0.5)
    with pytest.raises(ValueError, match="1-D outputs"):
        dichotomic_search(lambda r: (np.ones((5, 2)) * (r - 0.5), None), 2, r0=0.5)
