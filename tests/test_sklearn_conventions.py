"""Every registered solver is a scikit-learn classifier: ``check_estimator`` passes on each, a fully
labeled ``y`` fitting the supervised problem; the one declared exception is -1 as a class label.
Each declares a constraint for every parameter (``_parameter_constraints``), checked at ``fit``
by the one validation helper, :func:`solvers._validation.validate_params`."""

from __future__ import annotations

import inspect
import warnings
from numbers import Integral, Real

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from s3vm_bench.solvers import REGISTRY, get_solver
from s3vm_bench.solvers._validation import (Boolean, InstanceOf, Interval, InvalidParameterError, Options,
                                            validate_params)

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


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_column_vector_y_with_unlabeled_points_fits_as_its_1d_form(name):
    # scikit-learn's convention: a column vector y warns (DataConversionWarning) and is raveled.
    # mfa and tsvm_linear read y again after the base fit, so they are checked here too.
    from sklearn.exceptions import DataConversionWarning

    rng = np.random.default_rng(2)
    X = np.r_[rng.normal(-1.5, 1.0, size=(15, 2)), rng.normal(1.5, 1.0, size=(15, 2))]
    y = np.full(30, -1)
    y[[0, 1, 15, 16]] = [0, 0, 1, 1]
    params = dict(_PARAMS.get(name, {}))
    params.update({k: 1.0 for k in ("sigma", "C") if k in _PARAMS_OF[name]})
    ref = get_solver(name)(**params).fit(X, y)
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        est = get_solver(name)(**params).fit(X, y[:, None])
    np.testing.assert_array_equal(est.transduction_, ref.transduction_)
    np.testing.assert_array_equal(est.predict(X), ref.predict(X))


def test_a_single_labeled_class_is_named_as_the_user_wrote_it():
    from s3vm_bench.solvers.newton import NewtonS3VM

    X = np.arange(12.0).reshape(6, 2)
    with pytest.raises(ValueError, match=r"only one class \(1\) among the labeled points"):
        NewtonS3VM().fit(X, [1, 1, -1, -1, -1, -1])  # not "np.int64(1)"
    with pytest.raises(ValueError, match=r"only one class \('a'\) among the labeled points"):
        NewtonS3VM().fit(X, ["a", "a", "-1", "-1", "-1", "-1"])


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


# ----------------------------------------------------------------------------
# parameter constraints
# ----------------------------------------------------------------------------
_CONSTRAINT_TYPES = (Interval, Options, Boolean, InstanceOf, type(None))
_PARAMS_OF = {name: sorted(inspect.signature(get_solver(name).__init__).parameters.keys() - {"self"})
              for name in sorted(REGISTRY)}
_CASES = [(name, param) for name, params in _PARAMS_OF.items() for param in params]


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_parameter_is_constrained_and_the_defaults_are_valid(name):
    cls = get_solver(name)
    declared = cls._parameter_constraints
    assert set(declared) == set(_PARAMS_OF[name]), (
        f"{name}: no constraint for {sorted(set(_PARAMS_OF[name]) - set(declared))}, constraints for "
        f"non-parameters {sorted(set(declared) - set(_PARAMS_OF[name]))}")
    for param, constraints in declared.items():
        assert isinstance(constraints, list) and constraints, (name, param)
        assert all(isinstance(c, _CONSTRAINT_TYPES) for c in constraints), (name, param, constraints)
    validate_params(cls())  # the defaults pass
    validate_params(cls(**_PARAMS.get(name, {})))


def _bad_values(constraints):
    """Values that none of ``constraints`` allows: just outside a bound, another type, and for an
    integer parameter a whole number given as a float."""
    out = [type("BadType", (), {})()]
    first = constraints[0]
    if isinstance(first, Interval):
        if first.left is not None:
            out.append(first.left - 1 if first.closed in ("left", "both") else first.left)
        elif first.right is not None:
            out.append(first.right + 1 if first.closed in ("right", "both") else first.right)
        else:
            out.append(float("nan"))
        out.append(True)  # a bool is not a number
        if first.type is Integral:
            out.append(float(max(first.left or 0, 1) + 1))  # 2.0 for an int >= 1
        if None not in constraints:
            out.append(None)
    elif isinstance(first, Options):
        out.append("no-such-option")
    elif isinstance(first, Boolean):
        out += ["yes", 1]
    elif isinstance(first, InstanceOf):
        out.append(3)
    return out


@pytest.mark.parametrize("name,param", _CASES)
def test_a_bad_value_of_each_parameter_is_refused_and_named(name, param):
    cls = get_solver(name)
    X = np.arange(12.0).reshape(6, 2)
    y = np.array([0, 1, -1, -1, 0, 1])
    for bad in _bad_values(cls._parameter_constraints[param]):
        est = cls(**_PARAMS.get(name, {})).set_params(**{param: bad})
        with pytest.raises(InvalidParameterError) as info:
            est.fit(X, y)  # refused before any work
        message = str(info.value)
        assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
        assert f"{cls.__name__}: {param} must be " in message and f"got {bad!r}" in message, message


def test_the_number_rules_hold_for_every_parameter():
    from s3vm_bench.solvers.svm import SVM

    # numpy scalars pass, ints pass as floats; bools, NaN, inf and whole floats for ints do not
    validate_params(SVM(C=np.float32(2.0), sigma=np.int64(3), tol=1, max_iter=np.int64(5)))
    cases = [({"C": -1.0}, "SVM: C must be a float > 0, got -1.0"),
             ({"C": True}, "SVM: C must be a float > 0, got True (a bool is not a number)"),
             ({"C": np.inf}, "SVM: C must be a float > 0, got inf (NaN and infinity are refused)"),
             ({"sigma": float("nan")}, "SVM: sigma must be a float > 0 or None, got nan"),
             ({"max_iter": 3.0}, "SVM: max_iter must be an int >= 1, got 3.0 (an integer parameter takes an int: "
                                 "write 3, not 3.0)"),
             ({"max_iter": np.float64(3.0)}, "SVM: max_iter must be an int >= 1, got np.float64(3.0)"),
             ({"kernel": "poly"}, "SVM: kernel must be one of 'linear', 'rbf', got 'poly'")]
    for params, message in cases:
        with pytest.raises(InvalidParameterError) as info:
            validate_params(SVM(**params))
        assert str(info.value).startswith(message), str(info.value)
    with pytest.raises(ValueError, match="sigma must be a float > 0 with kernel='rbf', got None"):
        SVM(sigma=None).fit(np.eye(4), [0, 1, -1, -1])  # None is for the linear kernel only
    SVM(kernel="linear", sigma=None).fit(np.eye(4), [0, 1, -1, -1])


def test_constraints_describe_themselves():
    assert str(Interval(Real, 0, 1, closed="neither")) == "a float in (0, 1)"
    assert str(Interval(Real, 0, 1, closed="left")) == "a float in [0, 1)"
    assert str(Interval(Integral, 0, None, closed="left")) == "an int >= 0"
    assert str(Interval(Real, None, 0.5, closed="right")) == "a float <= 0.5"
    assert str(Interval(Real, None, None, closed="neither")) == "a finite float"
    assert str(Options({"b", "a"})) == "one of 'a', 'b'" and str(Options({"rbf"})) == "'rbf'"
    assert not Options({"a"}).is_satisfied_by(np.array(["a"])) and Options({"a"}).is_satisfied_by(np.str_("a"))
    assert not Interval(Integral, 0, 1).is_satisfied_by(np.True_) and Boolean().is_satisfied_by(np.False_)
    with pytest.raises(ValueError):
        Interval(Real, 1, 0)
    with pytest.raises(ValueError):
        Interval(str, 0, 1)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_registered_estimator_cites_its_papers_in_a_numpydoc_references_section(name):
    doc = inspect.getdoc(get_solver(name))
    assert "\nReferences\n----------\n.. [1] " in doc, name
    # each reference names a year and where it appeared
    refs = doc.split("\nReferences\n----------\n", 1)[1]
    assert all(any(str(y) in r for y in range(1999, 2014)) for r in refs.split(".. [")[1:]), name


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_semi_supervised_fit_leaves_the_parameters_and_a_second_fit_repeats_it(name):
    """DESIGN.md pitfall 2: ``fit`` on unlabeled data (the semi-supervised path, which ``check_estimator``'s
    fully labeled targets do not reach) changes no constructor parameter, so a second ``fit`` gives
    the same model."""
    from sklearn.base import clone

    from tests._toy import small_clusters

    X, _, y_semi = small_clusters(seed=3, n=24)
    linear = {"kernel": "linear"} if name in ("tsvm_linear", "mfa") else {}
    est = get_solver(name)(**_PARAMS.get(name, {}), **linear)
    before = clone(est).get_params(deep=False)
    first = est.fit(X, y_semi).decision_function(X)
    assert est.get_params(deep=False) == before
    np.testing.assert_allclose(est.fit(X, y_semi).decision_function(X), first, atol=1e-9)


def _semi_problem():
    rng = np.random.default_rng(1)
    y = np.arange(40) % 2
    X = rng.standard_normal((40, 4)) + 1.5 * y[:, None]
    return X, np.where(np.arange(40) < 10, y, -1)


def _small(name):
    est = get_solver(name)(**_PARAMS.get(name, {}))
    params = est.get_params(deep=False)
    est.set_params(**{k: v for k, v in (("n_neighbors", 5), ("r", 0.5)) if k in params})
    return est


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_dataframe_fit_refuses_its_columns_reordered(name):
    """The column names seen at fit are kept (``feature_names_in_``), so a DataFrame with the same
    columns in another order is refused, not silently used with its columns swapped."""
    import pandas as pd

    X, y = _semi_problem()
    df = pd.DataFrame(X, columns=list("abcd"))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*valid feature names")  # not from fit itself
        est = _small(name).fit(df, y)
        est.predict(df)
    assert list(est.feature_names_in_) == list("abcd")
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(df[list("dcba")])


@pytest.mark.parametrize("name", ["da", "newton", "cccp", "s3vm_light"])
def test_an_output_does_not_depend_on_the_points_predicted_with_it(name):
    """After ``set_params`` of a kernel parameter without a new fit, a point's output is the same
    whether it is predicted with the unlabeled block it was trained in or alone."""
    X, y = _semi_problem()
    est = _small(name).fit(X, y)
    est.set_params(sigma=3.0)
    block = est.decision_function(X[10:])
    np.testing.assert_allclose(block[:-1], est.decision_function(X[10:-1]), rtol=1e-12, atol=1e-12)


def test_transduction_is_the_prediction_of_a_subclass_that_redefines_its_outputs():
    from s3vm_bench.solvers.svm import SVM

    class Shifted(SVM):
        def decision_function(self, X):
            return super().decision_function(X) - 0.5

    X, y = _semi_problem()
    est = Shifted().fit(X, y)
    np.testing.assert_array_equal(est.transduction_[10:], est.predict(X)[10:])
    assert (est.transduction_[10:] != SVM().fit(X, y).transduction_[10:]).any()  # the shift matters here
