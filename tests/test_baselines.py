"""The supervised baselines, the estimator base and the solver registry."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

from s3vm_bench.solvers import available_solvers, get_solver
from s3vm_bench.solvers.base import BaseS3VM
from s3vm_bench.solvers.lapsvm import LapSVM
from s3vm_bench.solvers.numerics import gaussian_kernel, kernel_newton
from s3vm_bench.solvers.svm import SVM, SVM5CV
from s3vm_bench.solvers.svm_balanced import BalancedSVM


def _expected_failures(est):
    # -1 is the "unlabeled" marker (scikit-learn's semi-supervised convention), so a target
    # with classes {-1, 1} cannot be learned as two classes: the one check that uses it fails.
    return {"check_classifiers_classes": "-1 means unlabeled, so it cannot be a class label"}


@parametrize_with_checks([SVM(), SVM(kernel="linear"), SVM5CV()], expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(seed=0, n=40):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.standard_normal((n, 4)) + 2.0 * y[:, None]
    return X, y


def test_registry():
    assert {"svm", "svm_5cv"} <= set(available_solvers())
    assert get_solver("svm") is SVM
    assert get_solver("solvers.svm:SVM5CV") is SVM5CV
    with pytest.raises(ValueError, match="Did you mean 'svm'"):
        get_solver("svn")
    assert get_solver("s3vm_bench.solvers.svm:SVM5CV") is SVM5CV
    with pytest.raises(ValueError, match="no module named 'no_such_pkg'"):
        get_solver("no_such_pkg.mod:Cls")
    with pytest.raises(ValueError, match="has no class 'Nope'"):
        get_solver("solvers.svm:Nope")
    with pytest.raises(TypeError, match=r"has no fit\(X, y\) and no decision_function, predict_proba or predict"):
        get_solver("solvers.base:BinaryFit")  # a class, but not an estimator


def test_decision_function_reproduces_training_outputs():
    """Pitfall: prediction must use the same expansion and bias as training."""
    X, y = _data()
    y_semi = y.copy()
    y_semi[10:] = -1
    m = SVM(sigma=1.3, C=4.0).fit(X, y_semi)
    K = gaussian_kernel(X[:10], sigma=1.3)
    res = kernel_newton(K, np.where(y[:10] == 1, 1.0, -1.0), 4.0)
    np.testing.assert_allclose(m.decision_function(X[:10]), res.outputs, rtol=1e-10, atol=1e-10)
    assert m.transduction_.shape == (40,) and np.all(m.transduction_[:10] == y[:10])


def test_positive_class_is_the_larger_label():
    X, y = _data()
    labels = np.where(y == 1, 7, 3)
    m = SVM(sigma=2.0, C=10.0).fit(X, labels)
    assert list(m.classes_) == [3, 7]
    f = m.decision_function(X)
    np.testing.assert_array_equal(m.predict(X), np.where(f > 0, 7, 3))
    assert np.mean(m.predict(X) == labels) > 0.9


def test_refit_is_idempotent_and_params_untouched():
    X, y = _data()
    m = SVM(sigma=1.0, C=2.0)
    params = m.get_params()
    a = m.fit(X, y).decision_function(X)
    b = m.fit(X, y).decision_function(X)
    np.testing.assert_array_equal(a, b)
    assert m.get_params() == params


def test_linear_dense_equals_sparse():
    X, y = _data()
    X[np.abs(X) < 0.5] = 0
    d = SVM(kernel="linear", C=1.0).fit(X, y)
    s = SVM(kernel="linear", C=1.0).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(d.coef_, s.coef_, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mutate,err,match", [
    (lambda X, y: (np.where(np.eye(*X.shape, dtype=bool), np.nan, X), y), ValueError, "NaN"),
    (lambda X, y: (np.where(np.eye(*X.shape, dtype=bool), np.inf, X), y), ValueError, "infinity"),
    (lambda X, y: (X, y[:-1]), ValueError, "inconsistent numbers of samples"),
    (lambda X, y: (X, -np.ones_like(y)), ValueError, "no labeled point"),
    (lambda X, y: (X, np.where(np.arange(y.size) < 5, 1, -1)), ValueError, "only one class"),
])
def test_bad_input(mutate, err, match):
    X, y = _data()
    with pytest.raises(err, match=match):
        SVM().fit(*mutate(X, y))


@pytest.mark.parametrize("params,match", [({"C": 0}, "C must be a float > 0"), ({"C": -2.0}, "C must be a float > 0"),
                                          ({"sigma": 0.0}, "sigma must be a float > 0"), ({"kernel": "poly"}, "kernel")])
def test_bad_params(params, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match):
        SVM(**params).fit(X, y)


@pytest.mark.parametrize("params,err,match", [
    ({"tol": "a"}, TypeError, "tol must be a float > 0"), ({"tol": 0.0}, ValueError, "tol must be a float > 0"),
    ({"max_iter": float("inf")}, ValueError, "max_iter must be an int >= 1"),
    ({"max_iter": None}, ValueError, "max_iter must be an int >= 1"),
    ({"max_iter": 3.0}, ValueError, "max_iter must be an int >= 1"),
    ({"max_iter": 0}, ValueError, "max_iter must be an int >= 1")])
@pytest.mark.parametrize("cls", [SVM, BalancedSVM, LapSVM])
def test_bad_tol_and_max_iter_are_reported_before_any_work(cls, params, err, match):
    X, y = _data()
    with pytest.raises(err, match=match):
        cls(**params).fit(X, y)


class _DenseOnlyS3VM(SVM):
    _accepts_sparse = False
    _needs_unlabeled = True


def test_sparse_rejected_by_dense_solver_and_empty_unlabeled():
    X, y = _data()
    y_semi = y.copy()
    y_semi[20:] = -1
    with pytest.raises(TypeError, match="needs dense X"):
        _DenseOnlyS3VM().fit(sp.csr_matrix(X), y_semi)
    full = _DenseOnlyS3VM().fit(X, y)  # every point labeled: the supervised L2-SVM (scikit-learn's convention)
    assert full.binary_fits_[0].info["supervised"]
    assert isinstance(_DenseOnlyS3VM().fit(X, y_semi), BaseS3VM)


def test_unlabeled_points_are_ignored_by_svm():
    X, y = _data()
    y_semi = y.copy()
    y_semi[10:] = -1
    a = SVM(sigma=1.0, C=3.0).fit(X, y_semi).decision_function(X)
    b = SVM(sigma=1.0, C=3.0).fit(X[:10], y[:10]).decision_function(X)
    np.testing.assert_allclose(a, b, rtol=1e-12)
