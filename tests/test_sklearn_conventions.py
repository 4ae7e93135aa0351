"""Every registered solver is a scikit-learn classifier: ``check_estimator`` passes on each, a fully
labeled ``y`` fitting the supervised problem; the one declared exception is -1 as a class label."""

from __future__ import annotations

import numpy as np
from sklearn.utils.estimator_checks import parametrize_with_checks

from s3vm_bench.solvers import REGISTRY, get_solver

#: Limits that keep branch and bound short on the checks' random data (it is exact either way).
_PARAMS = {"bb": {"time_limit": 5.0, "node_limit": 2000}}
ESTIMATORS = [get_solver(name)(**_PARAMS.get(name, {})) for name in sorted(REGISTRY)
              if name not in ("svm", "svm_5cv", "svm_balanced")]  # those three: test_baselines, test_balance_variants


def _expected_failures(est):
    # -1 is the "unlabeled" marker (scikit-learn's semi-supervised convention), so a target with
    # classes {-1, 1} cannot be learned as two classes: the one check that uses it fails.
    return {"check_classifiers_classes": "-1 means unlabeled, so it cannot be a class label"}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures)
def test_check_estimator(estimator, check):
    check(estimator)


def test_a_fully_labeled_y_fits_the_supervised_l2_svm():
    from s3vm_bench.solvers.svm import SVM

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=30) > 0).astype(int)
    ref = SVM(sigma=1.0, C=2.0).fit(X, y).decision_function(X)
    for name in ("newton", "grad_s3vm", "cs3vm", "s3vm_light", "da"):
        est = get_solver(name)(sigma=1.0, C=2.0).fit(X, y)
        assert est.binary_fits_[0].info["supervised"]
        np.testing.assert_allclose(est.decision_function(X), ref, rtol=1e-6, atol=1e-6)


def test_a_limit_that_stops_a_solver_is_a_convergence_warning():
    import warnings

    import pytest
    from sklearn.exceptions import ConvergenceWarning

    from s3vm_bench.solvers.svm import SVM

    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(int)
    with pytest.warns(ConvergenceWarning, match=r"SVM stopped by a limit.*\(max_iter\)"):
        est = SVM(sigma=1.0, C=10.0, max_iter=1).fit(X, y)
    assert est.stop_reason_ == ["max_iter"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert SVM(sigma=1.0, C=10.0).fit(X, y).stop_reason_ != ["max_iter"]  # converged: no warning
