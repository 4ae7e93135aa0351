"""Losses of solvers/_losses.py: derivatives against finite differences, shapes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s3vm_bench.solvers import losses as L

H = 1e-6

# (loss, breakpoints where the derivative or the second derivative jumps)
_FLAT = L.FLAT_LOSS_DEFAULTS
_FLAT_BREAKS = [
    _FLAT["plateau"],
    _FLAT["plateau"] + _FLAT["ramp"],
    1.0 - _FLAT["ramp"],
    1.0,
]
LOSSES = {
    "hinge": (L.hinge_loss, [1.0]),
    "squared_hinge": (L.squared_hinge_loss, [1.0]),
    "squared": (L.squared_loss, []),
    "symmetric_squared_hinge": (L.symmetric_squared_hinge_loss, [0.0, 1.0, -1.0]),
    "exp": (L.exp_unlabeled_loss, []),
    "flat": (L.flat_unlabeled_loss, [0.0] + _FLAT_BREAKS + [-b for b in _FLAT_BREAKS]),
}

finite_t = st.floats(min_value=-3.0, max_value=3.0, allow_nan=False, allow_infinity=False)


def _far_from(t, breaks, gap=1e-4):
    return all(abs(t - b) > gap for b in breaks)


@pytest.mark.parametrize("name", sorted(LOSSES))
@settings(max_examples=60, deadline=None)
@given(t=finite_t)
def test_first_derivative_matches_finite_difference(name, t):
    fn, breaks = LOSSES[name]
    if not _far_from(t, breaks):
        return
    out = fn(np.array([t]))
    fd = (fn(np.array([t + H])).value - fn(np.array([t - H])).value) / (2 * H)
    np.testing.assert_allclose(out.grad, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(LOSSES))
@settings(max_examples=60, deadline=None)
@given(t=finite_t)
def test_second_derivative_matches_finite_difference(name, t):
    fn, breaks = LOSSES[name]
    if not _far_from(t, breaks):
        return
    out = fn(np.array([t]))
    fd = (fn(np.array([t + H])).grad - fn(np.array([t - H])).grad) / (2 * H)
    np.testing.assert_allclose(out.hess, fd, rtol=1e-5, atol=1e-5)


def test_known_values():
    t = np.array([-2.0, 0.0, 0.5, 1.0, 2.0])
    np.testing.assert_allclose(L.hinge_loss(t).value, [3.0, 1.0, 0.5, 0.0, 0.0])
    np.testing.assert_allclose(L.squared_hinge_loss(t).value, [9.0, 1.0, 0.25, 0.0, 0.0])
    np.testing.assert_allclose(L.squared_loss(t).value, [9.0, 1.0, 0.25, 0.0, 1.0])
    np.testing.assert_allclose(L.symmetric_squared_hinge_loss(t).value, [0.0, 1.0, 0.25, 0.0, 0.0])
    np.testing.assert_allclose(L.exp_unlabeled_loss(t).value, np.exp(-5 * t**2))
    # JMLR eq. (14) default s = 5
    np.testing.assert_allclose(L.exp_unlabeled_loss(0.3).value, np.exp(-0.45))


def test_symmetric_losses_are_even_and_max_over_labels():
    t = np.linspace(-2, 2, 81)
    for fn in (L.symmetric_squared_hinge_loss, L.exp_unlabeled_loss, L.flat_unlabeled_loss):
        a, b = fn(t), fn(-t)
        np.testing.assert_allclose(a.value, b.value)
        np.testing.assert_allclose(a.grad, -b.grad, atol=1e-15)
        np.testing.assert_allclose(a.hess, b.hess)
    # max(0, 1-|t|)^2 = min over y of max(0, 1 - y t)^2 (SIGIR 2006, Sec. 3.1.1)
    both = np.minimum(L.squared_hinge_loss(t).value, L.squared_hinge_loss(-t).value)
    np.testing.assert_allclose(L.symmetric_squared_hinge_loss(t).value, both)


def test_flat_loss_shape():
    p, d, h = _FLAT["plateau"], _FLAT["ramp"], _FLAT["height"]
    f = L.flat_unlabeled_loss
    # flat top, zero outside the margin
    top = f(np.linspace(-p, p, 11))
    np.testing.assert_allclose(top.value, h)
    np.testing.assert_allclose(top.grad, 0.0)
    out = f(np.array([-3.0, -1.0, 1.0, 1.5]))
    np.testing.assert_allclose(out.value, 0.0)
    np.testing.assert_allclose(out.grad, 0.0)
    # C^1: value and derivative continuous at every breakpoint
    for bp in _FLAT_BREAKS:
        lo, hi = f(np.array([bp - 1e-9])), f(np.array([bp + 1e-9]))
        np.testing.assert_allclose(lo.value, hi.value, atol=1e-7)
        np.testing.assert_allclose(lo.grad, hi.grad, atol=1e-6)
    # curvature only on the two quadratic bends (the Newton "support vectors")
    t = np.linspace(0, 1.5, 1501)
    curved = f(t).hess != 0
    in_bends = ((t > p) & (t <= p + d)) | ((t > 1 - d) & (t < 1))
    np.testing.assert_array_equal(curved, in_bends)
    # non-increasing in |t|
    assert np.all(np.diff(f(t).value) <= 1e-15)


def test_flat_loss_parameters_validated():
    with pytest.raises(ValueError, match="plateau"):
        L.flat_unlabeled_loss(0.0, plateau=0.6, ramp=0.3)
    with pytest.raises(ValueError, match="ramp"):
        L.flat_unlabeled_loss(0.0, ramp=0.0)
    with pytest.raises(ValueError, match="s must be"):
        L.exp_unlabeled_loss(0.0, s=-1.0)


def test_shapes_and_dtype_preserved():
    t = np.arange(6, dtype=np.int32).reshape(2, 3) - 2
    for fn, _ in LOSSES.values():
        out = fn(t)
        assert isinstance(out, L.LossEval)
        for arr in out:
            assert arr.shape == (2, 3)
            assert arr.dtype == np.float64
