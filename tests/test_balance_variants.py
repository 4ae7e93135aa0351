"""The balanced SVM baseline (``svm_balanced``) and the soft-balance variants of the Sec. 4 solvers.

JMLR 2008 Table 8's SVM column meets the balance constraint (3) (solvers/svm_balanced.py), and
Table 13 runs the Sec. 4 methods with the original constraint (12) at r~ = r, without the
dichotomic search (solvers/soft_balance.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from s3vm_bench.harness.grid import solver_source_hash
from s3vm_bench.harness.protocol import ProtocolSettings, run_split
from s3vm_bench.harness.specs import get_spec
from s3vm_bench.solvers import get_solver
from s3vm_bench.solvers.cccp import CCCP
from s3vm_bench.solvers.cs3vm import CS3VM
from s3vm_bench.solvers.grad_s3vm import GradS3VM
from s3vm_bench.solvers.newton import NewtonS3VM
from s3vm_bench.solvers.numerics import dichotomic_search, estimate_r, n_positive
from s3vm_bench.solvers.soft_balance import SoftCCCP, SoftCS3VM, SoftGradS3VM, SoftNewtonS3VM
from s3vm_bench.solvers.svm import SVM
from s3vm_bench.solvers.svm_balanced import BalancedSVM
from tests._toy import small_clusters

SOFT = {SoftGradS3VM: GradS3VM, SoftCS3VM: CS3VM, SoftCCCP: CCCP, SoftNewtonS3VM: NewtonS3VM}


def _semi(n=60, n_lab=8, seed=0):
    X, y, y_semi = small_clusters(n=n, seed=seed)
    y_semi = y.copy()
    y_semi[n_lab:] = -1
    return X, y, y_semi


def _expected_failures(est):
    return {"check_classifiers_classes": "-1 means unlabeled, so it cannot be a class label"}


@parametrize_with_checks([BalancedSVM(), BalancedSVM(kernel="linear", r=0.5)], expected_failed_checks=_expected_failures)
def test_balanced_svm_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize("r", [0.3, 0.5, 0.7, None])
def test_balanced_svm_meets_the_count_and_only_moves_the_bias(kernel, r):
    X, y, y_semi = _semi()
    unl = y_semi == -1
    plain = SVM(kernel=kernel, sigma=1.5, C=2.0).fit(X, y_semi)
    bal = BalancedSVM(kernel=kernel, sigma=1.5, C=2.0, r=r).fit(X, y_semi)
    r_used = estimate_r(np.where(y_semi[~unl] == 1, 1.0, -1.0)) if r is None else r
    assert np.sum(bal.decision_function(X[unl]) > 0) == n_positive(int(unl.sum()), r_used)
    info = bal.binary_fits_[0].info
    assert info["r"] == pytest.approx(r_used) and info["n_pos_target"] == n_positive(int(unl.sum()), r_used)
    # Same SVM, bias moved by the recorded shift: the outputs differ by a constant everywhere.
    np.testing.assert_allclose(plain.decision_function(X) - bal.decision_function(X), info["bias_shift"],
                               rtol=0, atol=1e-10)


def test_balanced_svm_without_unlabeled_points_is_the_svm_and_checks_r():
    X, y, _ = _semi()
    np.testing.assert_allclose(BalancedSVM(sigma=1.5, r=0.3).fit(X, y).decision_function(X),
                               SVM(sigma=1.5).fit(X, y).decision_function(X), rtol=0, atol=1e-12)
    X, y, y_semi = _semi()
    with pytest.raises(ValueError, match="r"):
        BalancedSVM(r=1.5).fit(X, y_semi)


def test_balanced_svm_is_registered_and_keys_apart_from_svm():
    assert get_solver("svm_balanced") is BalancedSVM
    # Its own module: the cells of svm (and of lapsvm, built on it) keep their keys.
    assert solver_source_hash("svm_balanced") != solver_source_hash("svm")


@pytest.mark.parametrize("soft", list(SOFT))
def test_soft_variant_is_one_solve_at_r_tilde_equal_r(soft):
    X, y, y_semi = _semi(n=60, n_lab=8, seed=1)
    unl = y_semi == -1
    r = 0.4
    est = soft(sigma=1.5, C=2.0, r=r).fit(X, y_semi)
    info = est.binary_fits_[0].info
    assert info["r_tilde"] == r and info["dichotomic_iter"] == 0
    # Constraint (12): the unlabeled outputs average to 2 r - 1 (the count is left free).
    assert np.mean(est.decision_function(X[unl])) == pytest.approx(2 * r - 1, abs=1e-8)
    # The same fit as the parent solver given r_tilde = r explicitly.
    parent = SOFT[soft](sigma=1.5, C=2.0, r=r, r_tilde=r).fit(X, y_semi)
    np.testing.assert_allclose(est.decision_function(X), parent.decision_function(X), rtol=1e-10, atol=1e-10)
    assert est.get_params()["r_tilde"] is None  # restored after fit
    clone(est)


def test_soft_variant_estimates_r_per_binary_problem():
    X, y, y_semi = _semi(n=90, n_lab=12, seed=2)
    y3 = np.where(X[:, 0] > np.median(X[:, 0]), 2, y)  # a third class
    y3_semi = np.where(y_semi == -1, -1, y3)
    est = SoftCCCP(sigma=1.5, C=2.0).fit(X, y3_semi)
    lab = y3_semi != -1
    for k, fit in zip(est.classes_, est.binary_fits_):
        r_k = estimate_r(np.where(y3_semi[lab] == k, 1.0, -1.0))
        assert fit.info["r_tilde"] == pytest.approx(r_k) and fit.info["r"] == pytest.approx(r_k)


def test_soft_variant_refuses_a_given_r_tilde():
    X, y, y_semi = _semi()
    with pytest.raises(ValueError, match="leave r_tilde=None"):
        SoftNewtonS3VM(r=0.5, r_tilde=0.5).fit(X, y_semi)


def test_protocol_runs_soft_variant_without_search():
    """Through the harness the count is not forced: no dichotomic search, no threshold shift."""
    X, y, y_semi = _semi(n=80, n_lab=10, seed=4)
    from s3vm_bench.data_registry import Dataset, Split

    ds = Dataset(name="toy", X=X, y=y, class_names=("a", "b"))
    split = Split("toy", 0, 0, np.arange(10), np.arange(10, 80), np.empty(0, int), np.empty(0, int))
    settings = ProtocolSettings(sigma=1.5, C=2.0, r_mode="estimated")
    res = run_split(SoftGradS3VM, {}, ds, split, settings)
    b = res.binary[0]
    assert b.dichotomic_iter == 0
    assert np.mean(b.unlabeled_outputs) == pytest.approx(2 * b.r - 1, abs=1e-8)
    searched = run_split(GradS3VM, {}, ds, split, settings).binary[0]
    assert searched.n_pos == searched.n_pos_target


def test_specs_use_the_variants_where_the_paper_says():
    t13 = get_spec("jmlr2008-table13")
    by_label = {c.label: c.solver for c in t13.configs}
    assert by_label == {"nabla-S3VM": "solvers.soft_balance:SoftGradS3VM", "cS3VM": "solvers.soft_balance:SoftCS3VM",
                        "CCCP": "solvers.soft_balance:SoftCCCP", "S3VM-light": "s3vm_light", "nabla-DA": "grad_da",
                        "Newton": "solvers.soft_balance:SoftNewtonS3VM", "SVM": "svm"}
    for key in ("jmlr2008-table8", "jmlr2008-table14"):
        assert {c.label: c.solver for c in get_spec(key).configs}["SVM"] == "svm_balanced", key


# ------------------------------------------- dichotomic search stopped on a jump (opt-in)
def _step_solver(steps, u=100):
    """``solve(r~)`` whose positive count is the piecewise-constant ``steps`` [(from_r, count)], and
    the list of r~ it was called with."""
    seen = []

    def solve(rt):
        seen.append(rt)
        count = [c for r0, c in steps if rt >= r0][-1]
        out = -np.ones(u)
        out[:count] = 1.0
        return out, rt

    return solve, seen


def _bisection_sequence(lo, hi, count_at, target, xtol):
    """The r~ plain bisection visits between a bracket (lo, hi) until its width is below xtol."""
    seq = []
    while hi - lo >= xtol:
        mid = 0.5 * (lo + hi)
        seq.append(mid)
        if count_at(mid) < target:
            lo = mid
        else:
            hi = mid
    return seq


JUMP = [(-np.inf, 30), (0.5371, 46)]  # the count jumps over the target 40 at r~ = 0.5371


def test_dichotomic_search_stops_after_exactly_the_stalled_halvings():
    solve, seen = _step_solver(JUMP)
    res = dichotomic_search(solve, 40, r0=0.3, max_iter=30, xtol=1e-4, stall_halvings=2)
    # bracket: 0.3 (30 < 40), 0.55 (46 > 40); then halvings that keep (30, 46): 0.425, 0.4875,
    # 0.51875, 0.534375 move the low end only; 0.5421875 moves the high end: both ends moved
    assert seen == pytest.approx([0.3, 0.55, 0.425, 0.4875, 0.51875, 0.534375, 0.5421875], abs=1e-15)
    assert (res.n_iter, res.exact, res.stop) == (7, False, "stall")
    assert (res.n_pos, res.r_tilde, res.payload) == (46, 0.55, 0.55)  # the closest count, first met
    solve1, seen1 = _step_solver(JUMP)
    assert dichotomic_search(solve1, 40, r0=0.3, xtol=1e-4, stall_halvings=1).n_iter == 7 and len(seen1) == 7


def test_dichotomic_search_does_not_stall_on_a_flat_count_at_one_end():
    """Halvings that only move one end over a range where the count does not change (0 positives
    far below the target) are no sign of a jump: the search goes on and finds the exact count."""
    steps = [(-np.inf, 0), (0.5, 40), (0.53, 46)]
    solve, seen = _step_solver(steps)
    res = dichotomic_search(solve, 40, r0=0.8, max_iter=30, xtol=1e-4, stall_halvings=2)
    # 0.8, 0.55 (46), 0.05 (0); halvings 0.3, 0.425, 0.4875 keep (0, 46) moving the low end only
    assert seen == pytest.approx([0.8, 0.55, 0.05, 0.3, 0.425, 0.4875, 0.51875], abs=1e-15)
    assert res.exact and res.stop == "exact" and res.n_pos == 40


def test_dichotomic_search_stall_counter_restarts_when_a_count_moves():
    steps = [(-np.inf, 30), (0.45, 35), (0.5371, 46)]
    solve, seen = _step_solver(steps)
    res = dichotomic_search(solve, 40, r0=0.3, max_iter=30, xtol=1e-4, stall_halvings=2)
    # 0.425 keeps (30, 46): 1 stalled; 0.4875 gives 35, a new low count: 0; 0.51875, 0.534375
    # keep (35, 46) moving the low end; 0.5421875 moves the high end: 3 stalled, both ends moved
    assert seen == pytest.approx([0.3, 0.55, 0.425, 0.4875, 0.51875, 0.534375, 0.5421875], abs=1e-15)
    assert res.stop == "stall" and not res.exact
    assert res.n_pos == 35 and res.r_tilde == pytest.approx(0.4875, abs=1e-15)  # closest, first met


@pytest.mark.parametrize("stall", ["default", None, 1000])
def test_dichotomic_search_without_stall_rule_keeps_the_bisection(stall):
    solve, seen = _step_solver(JUMP)
    kwargs = {} if stall == "default" else {"stall_halvings": stall}
    res = dichotomic_search(solve, 40, r0=0.3, max_iter=30, xtol=1e-4, **kwargs)
    expected = [0.3, 0.55] + _bisection_sequence(0.3, 0.55, lambda r: 30 if r < 0.5371 else 46, 40, 1e-4)
    assert seen == expected and res.n_iter == len(expected) == 14
    assert res.stop == "xtol" and (res.n_pos, res.r_tilde) == (46, 0.55)


def test_dichotomic_search_stall_rule_leaves_exact_searches_alone():
    """Counts that move at every halving never stall: same r~ and result as without the rule."""
    def solve(rt):
        out = np.arange(100) / 100.0 - (1.0 - rt)  # about 100 r~ positives
        return out, None

    runs = []
    for stall in (None, 2):
        seen = []
        res = dichotomic_search(lambda rt: (seen.append(rt), solve(rt))[1], 37, r0=0.9, xtol=1e-4,
                                stall_halvings=stall)
        runs.append((seen, res.r_tilde, res.n_pos, res.exact, res.stop))
    assert runs[0] == runs[1] and runs[0][3] and runs[0][4] == "exact"


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_dichotomic_search_rejects_bad_stall_halvings(bad):
    solve, _ = _step_solver(JUMP)
    with pytest.raises(ValueError, match="stall_halvings"):
        dichotomic_search(solve, 40, r0=0.3, stall_halvings=bad)


@pytest.mark.parametrize("cls", [GradS3VM, CS3VM])
def test_search_stall_halvings_parameter_reaches_the_search(cls, monkeypatch):
    import s3vm_bench.solvers._mean_output as mo

    X, y, y_semi = _semi()
    passed = []
    real = mo.dichotomic_search

    def spy(*args, **kwargs):
        passed.append(kwargs.get("stall_halvings", "missing"))
        return real(*args, **kwargs)

    monkeypatch.setattr(mo, "dichotomic_search", spy)
    default = cls(sigma=1.5, C=2.0, r=0.5).fit(X, y_semi)
    opted = cls(sigma=1.5, C=2.0, r=0.5, search_stall_halvings=2).fit(X, y_semi)
    assert passed == [None, 2]
    assert cls().get_params()["search_stall_halvings"] is None
    assert default.binary_fits_[0].info["search_stop"] in ("exact", "xtol", "max_iter")
    assert opted.binary_fits_[0].info["search_stop"] in ("exact", "stall", "xtol", "max_iter")
    with pytest.raises(ValueError, match="search_stall_halvings"):
        cls(search_stall_halvings=0).fit(X, y_semi)


@pytest.mark.parametrize("cls", [GradS3VM, CS3VM])
def test_search_stall_meets_the_count_with_a_threshold_shift(cls, monkeypatch):
    """When the search stops on a stall, constraint (3) still holds through the threshold shift."""
    import s3vm_bench.solvers._mean_output as mo

    X, y, y_semi = _semi(n=80, n_lab=10, seed=4)
    unl = y_semi == -1
    target = n_positive(int(unl.sum()), 0.45)
    real = mo.dichotomic_search
    # A solution path with a jump: every r~ below 0.5 gives the r~ = 0.05 solution, every other one
    # the r~ = 0.95 solution, whose counts lie on either side of the target.
    def jumpy(solve, target, **kwargs):
        ends = {}

        def jsolve(rt):
            key = 0.05 if rt < 0.5 else 0.95
            if key not in ends:
                ends[key] = solve(key)
            return ends[key]

        return real(jsolve, target, **kwargs)

    monkeypatch.setattr(mo, "dichotomic_search", jumpy)
    est = cls(sigma=1.5, C=2.0, r=0.45, search_stall_halvings=2).fit(X, y_semi)
    info = est.binary_fits_[0].info
    # 0.45 (low), 0.7 (high); halvings 0.575, 0.5125 move the high end, 0.48125 the low one: stop
    assert info["search_stop"] == "stall" and not info["search_exact"] and info["dichotomic_iter"] == 5
    assert info["threshold_shift"] != 0.0
    assert np.sum(est.decision_function(X[unl]) > 0) == target
