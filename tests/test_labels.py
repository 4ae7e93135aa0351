"""Class labels every solver of the suite accepts: numbers or text, -1 (or "-1") for unlabeled."""

from __future__ import annotations

import numpy as np
import pytest

from s3vm_bench.solvers import REGISTRY, get_solver

# The suite's own solvers: an outside one registered by an installed package need not meet this contract.
SOLVERS = [s for s in sorted(REGISTRY) if s != "svm_5cv"] + ["svm_5cv"]


def _problem(kernel_ok_linear=True):
    rng = np.random.default_rng(0)
    y = np.arange(24) % 2
    X = rng.standard_normal((24, 3)) + 2.5 * y[:, None]
    semi = np.where(np.arange(24) < 6, y, -1)
    return X, semi


def _make(name):
    est = get_solver(name)()
    params = est.get_params(deep=False)
    if "n_neighbors" in params:
        est.set_params(n_neighbors=3)
    if "r" in params:
        est.set_params(r=0.5)
    return est


@pytest.mark.parametrize("name", SOLVERS)
def test_text_labels_with_a_minus_one_marker_fit_like_numbers(name):
    X, semi = _problem()
    text = np.where(semi == 1, "pos", np.where(semi == 0, "neg", "-1"))
    mixed = np.array([("pos" if v == 1 else "neg") if v >= 0 else -1 for v in semi], dtype=object)
    # The marker as a float (a missing value written -1.0 by a spreadsheet or pandas): not a third class.
    mixed_float = np.array([("pos" if v == 1 else "neg") if v >= 0 else -1.0 for v in semi], dtype=object)
    try:
        numeric = _make(name).fit(X, semi)
    except ValueError as exc:  # a linear-only solver on this problem, say: the same for text labels
        with pytest.raises(ValueError, match=str(exc)[:30].replace("(", r"\(").replace(")", r"\)")):
            _make(name).fit(X, text)
        return
    for y in (text, mixed, mixed_float):
        est = _make(name).fit(X, y)
        assert list(est.classes_) == ["neg", "pos"]
        assert set(est.transduction_) == {"neg", "pos"}
        np.testing.assert_array_equal(est.predict(X), np.where(numeric.predict(X) == 1, "pos", "neg"))


@pytest.mark.parametrize("name", ["svm", "s3vm_light", "newton", "mfa"])
def test_numbers_mixed_with_text_labels_are_refused(name):
    X, semi = _problem()
    y = np.array([("pos" if v == 1 else 7) if v >= 0 else -1 for v in semi], dtype=object)
    with pytest.raises(ValueError, match="mixes text class labels with values that are not text"):
        _make(name).fit(X, y)


@pytest.mark.parametrize("name", SOLVERS)
def test_numbers_held_as_objects_fit_like_numbers(name):
    """A pandas object column of numbers: the same fit as the numbers themselves."""
    X, semi = _problem()
    try:
        numeric = _make(name).fit(X, semi)
    except ValueError:  # refused for the numbers too (see the text-label test)
        return
    est = _make(name).fit(X, semi.astype(object))
    np.testing.assert_array_equal(est.classes_, numeric.classes_)
    np.testing.assert_array_equal(est.predict(X), numeric.predict(X))


def test_minus_one_as_a_class_is_named_as_the_unlabeled_marker():
    X, semi = _problem()
    pm = np.where(semi == 1, 1, -1)  # the {-1, +1} convention of supervised SVMs: -1 means unlabeled here
    with pytest.raises(ValueError, match=r"only one class \(1\) .*\(-1 marks an unlabeled point, so it cannot be a "
                                         r"class: give the classes other labels, e.g. 0 and 1"):
        get_solver("svm")().fit(X, pm)
