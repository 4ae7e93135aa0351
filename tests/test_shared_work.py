"""Work shared between the one-versus-rest fits of a split (solvers._base.shared_work)."""

from __future__ import annotations

import numpy as np
import pytest

import s3vm_bench.solvers._base as base
from s3vm_bench.solvers import get_solver
from s3vm_bench.solvers.numerics import gaussian_kernel
from tests._toy import small_clusters

KERNEL_SOLVERS = ["cccp", "newton", "grad_s3vm", "cs3vm", "grad_da", "s3vm_light", "svm_balanced", "da"]


@pytest.fixture(autouse=True)
def empty_memo():
    base._SHARED.clear()
    yield
    base._SHARED.clear()


def _three_classes(seed=0, n=60):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.standard_normal((n, 4)) + 3.0 * np.eye(3, 4)[y]
    y_semi = np.where(np.arange(n) < 9, y, -1)
    return X, y, y_semi


def _ovr_outputs(name, X, y_semi, n_lab):
    """Outputs on the unlabeled block of one fit per class, as the protocol runs them."""
    out = []
    for k in np.unique(y_semi[y_semi >= 0]):
        y01 = np.where(y_semi == k, 1, 0)
        y01[y_semi < 0] = -1
        est = get_solver(name)(sigma=1.5, C=10.0, r=0.35)
        out.append(est.fit(X, y01).decision_function(X[n_lab:]))
    return np.column_stack(out)


@pytest.mark.parametrize("name", KERNEL_SOLVERS)
def test_shared_fits_give_the_outputs_of_independent_fits(name):
    X, _, y_semi = _three_classes()
    shared = _ovr_outputs(name, X, y_semi, 9)
    alone = []
    for k in range(3):  # each class's fit with nothing shared from the others
        base._SHARED.clear()
        y01 = np.where(y_semi == k, 1, 0)
        y01[y_semi < 0] = -1
        est = get_solver(name)(sigma=1.5, C=10.0, r=0.35).fit(X, y01)
        alone.append(est.decision_function(X[9:]))
    np.testing.assert_allclose(shared, np.column_stack(alone), rtol=0, atol=1e-10)
    assert np.array_equal(shared > 0, np.column_stack(alone) > 0)


def test_the_gram_matrix_and_centered_problem_are_computed_once_per_split():
    X, _, y_semi = _three_classes()
    fits = []
    for k in range(3):
        y01 = np.where(y_semi == k, 1, 0)
        y01[y_semi < 0] = -1
        est = get_solver("grad_s3vm")(sigma=1.5, C=10.0, r=0.35)
        fits.append(est.fit(X, y01))
    grams = [v for key, v in base._SHARED.items() if key[0] == "gram"]
    centered = [v for key, v in base._SHARED.items() if key[0] == "centered"]
    assert len(grams) == 1 and len(centered) == 1  # one of each for the three fits
    assert not grams[0].flags.writeable  # shared values cannot be modified by a user
    np.testing.assert_array_equal(grams[0], gaussian_kernel(X, sigma=1.5))
    # Another width or other points: another entry.
    get_solver("grad_s3vm")(sigma=2.0, C=10.0, r=0.35).fit(X, np.where(y_semi == 0, 1, np.where(y_semi < 0, -1, 0)))
    assert len([key for key in base._SHARED if key[0] == "gram"]) == 2


def test_outputs_on_the_training_block_equal_the_cross_kernel_ones():
    X, _, y_semi = small_clusters(seed=2, n=50)
    est = get_solver("newton")(sigma=2.0, C=5.0, r=0.5).fit(X, y_semi)
    from_rows = est.decision_function(X[6:])
    assert est._training_rows(X[6:]) is not None
    direct = gaussian_kernel(X[6:], est.X_fit_, sigma=2.0) @ est.dual_coef_[0] + est.intercept_[0]
    np.testing.assert_allclose(from_rows, direct, rtol=0, atol=1e-12)
    # Points that are not a tail block of the training points use the cross kernel.
    assert est._training_rows(X[6:-1]) is None and est._training_rows(X[6:] + 1e-9) is None
    base._SHARED.clear()  # evicted: computed again, same values
    np.testing.assert_allclose(est.decision_function(X[6:]), direct, rtol=0, atol=1e-12)


def test_the_memo_keeps_a_bounded_number_of_entries():
    for i in range(base._SHARED_MAX + 3):
        base.shared_work(("k", i), lambda: np.zeros(2))
    assert len(base._SHARED) == base._SHARED_MAX
    assert list(base._SHARED)[-1] == ("k", base._SHARED_MAX + 2)
