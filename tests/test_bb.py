"""Branch and bound (NIPS 2006 Alg. 1), the brute-force oracle, the reference optima and `compare`."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from s3vm_bench.harness import optima
from s3vm_bench.harness.cli import main
from s3vm_bench.harness.compare import compare
from s3vm_bench.harness.protocol import ProtocolSettings, run_split
from s3vm_bench.solvers import _bb_kernels as _kern
from s3vm_bench.solvers import get_solver
from s3vm_bench.solvers._bb_search import _balanced_bottleneck, _IncrementalL2SVM
from s3vm_bench.solvers._primal import _exact_line_search
from s3vm_bench.solvers.bb import (BranchAndBoundS3VM, branch_and_bound, brute_force, parallel_branch_and_bound,
                                   s3vm_objective)
from s3vm_bench.solvers.numerics import gaussian_kernel, kernel_newton, linear_kernel

ROOT = Path(__file__).resolve().parents[1]


def _tiny(rng, linear=False):
    l = int(rng.integers(2, 5))
    u = int(rng.integers(4, 11))
    n = l + u
    X = rng.standard_normal((n, 2))
    X[: n // 2] += rng.uniform(0.0, 3.0)
    K = linear_kernel(X) if linear else gaussian_kernel(X, sigma=float(rng.choice([0.3, 1.0, 3.0])))
    y = np.zeros(n)
    y[:l] = rng.choice([-1.0, 1.0], l)
    y[0], y[1] = 1.0, -1.0
    C = float(rng.choice([0.1, 1.0, 10.0, 100.0]))
    C_star = C * float(rng.choice([0.01, 1.0, 3.0]))
    k = int(rng.integers(0, u + 1))
    return K, y, k, C, C_star


@pytest.mark.parametrize("branching,lookahead,fixing", [("nips", True, True), ("nips", True, False), ("nips", False, False),
                                                        ("bound", True, True), ("product", True, True)])
@pytest.mark.parametrize("seeded", [False, True])
def test_bb_equals_brute_force_on_random_tiny_problems(branching, lookahead, fixing, seeded):
    # Seeded with a good labeling (the 3rd best), fixing acts from the root on.
    rng = np.random.default_rng(2006)
    for t in range(60):
        K, y, k, C, C_star = _tiny(rng, linear=(t % 5 == 4))
        bf = brute_force(K, y, k, C, C_star)
        init = None
        if seeded:
            u = int(np.sum(y == 0))
            pos = list(itertools.combinations(range(u), k))[int(np.argsort(bf.objectives)[min(2, bf.n_labelings - 1)])]
            init = -np.ones(u)
            init[list(pos)] = 1.0
        bb = branch_and_bound(K, y, k, C, C_star, branching=branching, lookahead=lookahead, fixing=fixing,
                              initial_labels=init)
        assert bb.status == "optimal"
        assert bb.objective == pytest.approx(bf.objective, rel=1e-8), t
        assert bb.lower_bound <= bf.objective * (1 + 1e-9)
        assert int(np.sum(bb.labels > 0)) == k
        # The returned labeling is one of the brute-force minimizers (ties allowed).
        assert np.min(bf.objectives) == pytest.approx(bf.objective)
        y_full = y.copy()
        y_full[y == 0] = bb.labels
        check = kernel_newton(K, y_full, np.where(y == 0, C_star, C))
        assert check.objective == pytest.approx(bb.objective, rel=1e-8)


def test_lookahead_bounds_never_exceed_the_child_optimum():
    rng = np.random.default_rng(8)
    worst, tight = -np.inf, []
    for _ in range(60):
        n = int(rng.integers(6, 25))
        X = rng.standard_normal((n, 3))
        K = gaussian_kernel(X, sigma=float(rng.choice([0.5, 1.0, 3.0])))
        C = float(rng.choice([0.1, 1.0, 10.0, 100.0]))
        l = int(rng.integers(2, n - 1))
        y = np.zeros(n)
        y[:l] = rng.choice([-1.0, 1.0], l)
        y[0], y[1] = 1.0, -1.0
        svm = _IncrementalL2SVM(K, np.full(n, C))
        st = svm.add(svm.empty(), y, np.arange(l))
        U = np.arange(l, n)
        _, lb_pos, lb_neg = svm.lookahead(st, y, U, C)
        for j, x in enumerate(U):
            for label, lb in ((1.0, lb_pos[j]), (-1.0, lb_neg[j])):
                y2 = y.copy()
                y2[x] = label
                exact = svm.add(st, y2, np.array([x])).value
                assert lb >= st.value - 1e-9 * st.value
                worst = max(worst, (lb - exact) / exact)
                if exact > st.value * (1 + 1e-9):
                    tight.append((lb - st.value) / (exact - st.value))
    assert worst <= 1e-10  # a certified bound, up to round-off
    assert np.median(tight) > 0.5  # and a useful one: it recovers most of the increase


def test_refined_lookahead_bounds_stay_below_the_child_optimum_and_gain_where_the_ray_was_cut():
    # With a level to reach, a bound the first dropped support vector cut short follows the
    # restricted path further (_bb_kernels._refine): still a lower bound, never lower than the
    # ray's, and much closer to the child optimum deep in the tree (many support vectors).
    rng = np.random.default_rng(11)
    refined, worst, gained, closer = 0, -np.inf, [], []
    for _ in range(40):
        n = int(rng.integers(30, 70))
        X = rng.standard_normal((n, 3))
        X[: n // 2] += 1.0
        K = gaussian_kernel(X, sigma=float(rng.choice([1.0, 3.0])))
        C = float(rng.choice([1.0, 10.0, 100.0]))
        l = int(rng.integers(n // 2, n - 3))
        y = np.zeros(n)
        y[:l] = np.where(np.arange(l) < n // 2, 1.0, -1.0) * np.where(rng.random(l) < 0.15, -1.0, 1.0)
        y[0], y[n - 1] = 1.0, -1.0
        y[n - 1], y[l - 1] = y[l - 1], -1.0
        svm = _IncrementalL2SVM(K, np.full(n, C))
        st = svm.add(svm.empty(), y, np.flatnonzero(y != 0))
        U = np.flatnonzero(y == 0)
        _, p0, n0 = svm.lookahead(st, y, U, C)
        exact = np.array([[svm.add(st, np.where(np.arange(n) == x, lab, y), np.array([x])).value for x in U]
                          for lab in (1.0, -1.0)])
        for level in st.value + np.array([0.1, 0.3, 0.6]) * (exact.max() - st.value):
            _, p1, n1 = svm.lookahead(st, y, U, C, level)
            for old, new, ex in ((p0, p1, exact[0]), (n0, n1, exact[1])):
                worst = max(worst, np.max((new - ex) / ex))
                assert np.all(new >= old - 1e-12 * np.abs(old))
                moved = new > old * (1 + 1e-9)
                refined += int(moved.sum())
                gain = ex - st.value
                ok = moved & (gain > 1e-6 * st.value)
                gained.extend((new[ok] - st.value) / gain[ok])
                closer.extend((old[ok] - st.value) / gain[ok])
    assert worst <= 1e-10
    assert refined >= 50
    assert np.median(gained) > np.median(closer) + 0.2


def test_balanced_bottleneck_bound_never_exceeds_the_best_balanced_completion():
    rng = np.random.default_rng(21)
    gains = []
    for t in range(80):
        K, y, k, C, C_star = _tiny(rng, linear=(t % 5 == 4))
        unl = np.flatnonzero(y == 0)
        u = unl.size
        if not 0 < k < u:
            continue
        # A random partial labeling that the balance still allows, and its exact L2-SVM.
        n_assign = int(rng.integers(0, u - 1))
        pts = rng.permutation(unl)[:n_assign]
        lab = rng.permutation(np.r_[np.ones(k), -np.ones(u - k)])[:n_assign]
        y_node = y.copy()
        y_node[pts] = lab
        svm = _IncrementalL2SVM(K, np.where(y == 0, C_star, C))
        st = svm.add(svm.empty(), y_node, np.flatnonzero(y_node != 0))
        U = unl[y_node[unl] == 0]
        _, lbp, lbn = svm.lookahead(st, y_node, U, C_star)
        k_left = k - int(np.sum(lab > 0))
        bound = _balanced_bottleneck(lbp, lbn, k_left)
        best = math.inf
        for pos in itertools.combinations(range(U.size), k_left):
            y_full = y_node.copy()
            y_full[U] = -1.0
            y_full[U[list(pos)]] = 1.0
            best = min(best, s3vm_objective(K, y, y_full[unl], C, C_star).objective)
        assert bound <= best * (1 + 1e-9) + 1e-12, t
        assert bound >= float(np.max(np.minimum(lbp, lbn))) - 1e-12  # never weaker than max_x min_y
        gains.append(bound > float(np.max(np.minimum(lbp, lbn))) + 1e-12)
    assert any(gains)  # and the balance does raise it on some nodes


def test_balanced_bottleneck_small_cases():
    # One point must be +1 (k = 1 of 2): the cheaper way is x0 -> +1 (bound 3 vs x1 -> +1: 5).
    assert _balanced_bottleneck(np.array([3.0, 5.0]), np.array([1.0, 2.0]), 1) == 3.0
    # No positive allowed: both take -1.
    assert _balanced_bottleneck(np.array([0.0, 0.0]), np.array([4.0, 2.0]), 0) == 4.0
    # All positive.
    assert _balanced_bottleneck(np.array([1.0, 7.0]), np.array([0.0, 0.0]), 2) == 7.0


def test_incremental_svm_matches_fresh_newton_along_a_random_path():
    rng = np.random.default_rng(3)
    n = 60
    X = rng.standard_normal((n, 4))
    K = gaussian_kernel(X, sigma=1.5)
    cost = np.where(np.arange(n) < 4, 10.0, 3.0)
    y = np.zeros(n)
    y[:4] = [1, -1, 1, -1]
    svm = _IncrementalL2SVM(K, cost)
    st = svm.add(svm.empty(), y, np.arange(4))
    for x in rng.permutation(np.arange(4, n)):
        y[x] = rng.choice([-1.0, 1.0])
        st = svm.add(st, y, np.array([x]))
        ref = kernel_newton(K, np.where(y == 0, 1.0, y), np.where(y == 0, 0.0, cost))
        assert st.value == pytest.approx(ref.objective, rel=1e-9)
        np.testing.assert_allclose(st.f, ref.outputs, atol=1e-6)


def test_cholesky_factor_does_not_drift_on_a_near_rank_one_kernel():
    # Coil3's Gaussian Gram matrix (sigma = 3000, entries in [0.37, 1]) is close to rank one; on
    # this stand-in (entries in [0.13, 1], C = 100) an explicitly updated inverse loses accuracy
    # along the path. The bordered / trailing-block Cholesky factor must stay at round-off level
    # with no rebuild at all.
    rng = np.random.default_rng(4)
    n = 120
    X = rng.standard_normal((n, 10))
    X[: n // 3] += 1.0
    K = gaussian_kernel(X, sigma=5.0)
    cost = np.full(n, 100.0)
    y = np.zeros(n)
    y[:4] = [1, -1, 1, -1]
    svm = _IncrementalL2SVM(K, cost)
    st = svm.add(svm.empty(), y, np.arange(4))
    for x in rng.permutation(np.arange(4, n)):
        y[x] = (1.0 if x < n // 3 else -1.0) * (-1.0 if rng.random() < 0.1 else 1.0)
        st = svm.add(st, y, np.array([x]))
        A = K[np.ix_(st.S, st.S)] + np.eye(st.S.size) / 200.0
        assert np.abs(st.L @ st.L.T - A).max() <= 1e-13
        ref = kernel_newton(K, np.where(y == 0, 1.0, y), np.where(y == 0, 0.0, cost))
        assert st.value == pytest.approx(ref.objective, rel=1e-11)
    assert svm.n_refactor == 0


def test_factor_shrink_matches_a_fresh_factor():
    rng = np.random.default_rng(12)
    X = rng.standard_normal((30, 3))
    K = gaussian_kernel(X, sigma=2.0)
    ridge = np.full(30, 1.0 / (2.0 * 10.0))  # A_S = K_SS + diag(1 / (2 c_S)), c = 10
    S = rng.permutation(30)[:20].astype(np.int64)
    S, L, _ = _kern.grow(K, ridge, S[:12], _kern.factor(K, ridge, S[:12]), S[12:])
    for _ in range(4):
        keep = rng.random(S.size) < 0.7
        S, L, _ = _kern.shrink(K, ridge, S, np.ascontiguousarray(L), keep)
        np.testing.assert_allclose(L, _kern.factor(K, ridge, S), atol=1e-12)
        np.testing.assert_allclose(L @ L.T, K[np.ix_(S, S)] + np.diag(ridge[S]), atol=1e-12)
        assert np.allclose(np.tril(L), L)


def test_compiled_line_search_matches_the_numpy_one():
    # solvers._bb_kernels.line_search is the loop form of solvers._primal._exact_line_search
    # (SIGIR 2006 Table 3), with y = 0 marking the points outside the labeled set.
    rng = np.random.default_rng(21)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        y = rng.choice([-1.0, 0.0, 1.0], n)
        o = rng.normal(0.0, 1.5, n)
        o_bar = o + rng.normal(0.0, 1.0, n) * (rng.random(n) < 0.8)
        c2 = 2.0 * rng.choice([0.1, 1.0, 100.0], n)
        reg0, reg1 = rng.normal(0.0, 1.0), rng.normal(0.0, 1.0) + 3.0
        got = _kern.line_search(reg0, reg1, o, o_bar, y, c2)
        want = _exact_line_search(reg0, reg1, o, o_bar, y, c2, y != 0)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_lookahead_score_is_nips_eq8_with_a_dense_bordered_solve():
    # Proposition 1: S_x = K(x, x) - v^T M^{-1} v with v = [K_Sx; 1] and the bordered support-vector
    # matrix M = [[K_SS + diag(1/(2c)), 1], [1^T, 0]]; score = (1 + |f(x)|)^2 / (2 S_x + 1/C*).
    rng = np.random.default_rng(22)
    n, l, C, C_star = 40, 25, 10.0, 3.0
    K = gaussian_kernel(rng.standard_normal((n, 3)), sigma=1.5)
    y = np.zeros(n)
    y[:l] = np.where(rng.random(l) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    cost = np.where(y == 0, C_star, C)
    svm = _IncrementalL2SVM(K, cost)
    st = svm.add(svm.empty(), y, np.arange(l))
    assert st.S.size >= 3
    U = np.arange(l, n)
    score, _, _ = svm.lookahead(st, y, U, C_star)
    m = st.S.size
    M = np.zeros((m + 1, m + 1))
    M[:m, :m] = K[np.ix_(st.S, st.S)] + np.diag(1.0 / (2.0 * cost[st.S]))
    M[:m, m] = M[m, :m] = 1.0
    for j, x in enumerate(U):
        v = np.r_[K[st.S, x], 1.0]
        S_x = K[x, x] - v @ np.linalg.solve(M, v)
        assert score[j] == pytest.approx((1.0 + abs(st.f[x])) ** 2 / (2.0 * S_x + 1.0 / C_star), rel=1e-9)


def test_compiled_kernels_are_warm_before_the_clock_starts(monkeypatch):
    # The first numba call of a process compiles or loads the kernels (seconds); branch_and_bound
    # does that before its clock starts, so its seconds and time limit count the search only.
    import time
    import types

    import s3vm_bench.solvers.bb as bb_module

    events, warm_up, perf_counter = [], _kern.warm_up, time.perf_counter
    monkeypatch.setattr(_kern, "warm_up", lambda: (events.append("warm up"), warm_up())[1])
    monkeypatch.setattr(bb_module, "time", types.SimpleNamespace(
        perf_counter=lambda: (events.append("clock"), perf_counter())[1]))
    rng = np.random.default_rng(23)
    K, y, k, C, C_star = _tiny(rng)
    branch_and_bound(K, y, k, C, C_star)
    assert events[:2] == ["warm up", "clock"] and events.count("warm up") == 1
    assert _kern._warm
    for kernel in (_kern.add, _kern.lookahead, _kern.balanced_bottleneck, _kern.grow, _kern.shrink):
        assert kernel.signatures, kernel


def test_fixing_labels_points_before_branching_and_saves_nodes():
    # Seeded with its optimum, a two-moons problem has points whose other label alone reaches the
    # incumbent from the root on: fixing them saves nodes and leaves the optimum unchanged.
    from s3vm_bench.harness.optima import REFERENCE_SETS, binary_problems
    from s3vm_bench.harness.protocol import _gram

    ref = REFERENCE_SETS["two_moons"]
    ds, split = ref.make(0)
    (p,) = binary_problems("two_moons", ds, split, ref.settings)
    K, s = _gram(p.X, ref.settings), ref.settings
    runs = {fix: branch_and_bound(K, p.y_masked, p.k, s.C, s.c_star, initial_labels=p.y[p.n_lab:], fixing=fix)
            for fix in (True, False)}
    assert runs[True].status == runs[False].status == "optimal"
    assert runs[True].objective == pytest.approx(runs[False].objective, rel=1e-9)
    assert runs[True].nodes < runs[False].nodes


def test_parallel_search_equals_brute_force_and_its_stops_resume():
    # Pieces of 2 nodes force the tree through the workers' queue even on tiny problems.
    rng = np.random.default_rng(7)
    pooled = 0
    for t in range(16):
        K, y, k, C, C_star = _tiny(rng, linear=(t % 5 == 4))
        bf = brute_force(K, y, k, C, C_star)
        res = parallel_branch_and_bound(K, y, k, C, C_star, n_jobs=2, chunk_nodes=2)
        assert res.status == "optimal" and res.frontier == [], t
        assert res.objective == pytest.approx(bf.objective, rel=1e-8), t
        assert res.lower_bound <= bf.objective * (1 + 1e-9) and int(np.sum(res.labels > 0)) == k
        pooled += res.nodes > 2
        # A node limit stops it with a valid bound; the frontier resumes to the optimum.
        part = parallel_branch_and_bound(K, y, k, C, C_star, n_jobs=2, chunk_nodes=2, node_limit=5)
        assert part.lower_bound <= bf.objective * (1 + 1e-9) + 1e-12 <= part.objective * (1 + 1e-9) + 2e-12, t
        if part.status != "optimal":
            assert part.status == "node_limit" and part.frontier
            rest = parallel_branch_and_bound(K, y, k, C, C_star, n_jobs=2, chunk_nodes=2, frontier=part.frontier,
                                             initial_labels=part.labels)
            assert rest.status == "optimal"
            assert min(rest.objective, part.objective) == pytest.approx(bf.objective, rel=1e-8), t
            assert min(rest.lower_bound, part.closed_bound) == pytest.approx(bf.objective, rel=1e-8), t
    assert pooled >= 8


def test_parallel_search_checks_its_arguments_and_runs_serially_with_one_job():
    rng = np.random.default_rng(3)
    K, y, k, C, C_star = _tiny(rng)
    with pytest.raises(ValueError, match="n_jobs"):
        parallel_branch_and_bound(K, y, k, C, C_star, n_jobs=0)
    with pytest.raises(ValueError, match="chunk_nodes"):
        parallel_branch_and_bound(K, y, k, C, C_star, chunk_nodes=0)
    one = parallel_branch_and_bound(K, y, k, C, C_star, n_jobs=1)
    ref = branch_and_bound(K, y, k, C, C_star)
    assert (one.objective, one.nodes) == (ref.objective, ref.nodes)


def test_limits_stop_with_the_right_status_and_a_valid_bound():
    rng = np.random.default_rng(5)
    X = np.vstack([rng.normal(0, 1, (9, 2)), rng.normal(0.8, 1, (9, 2))])
    K = gaussian_kernel(X, sigma=0.7)
    y = np.zeros(18)
    y[0], y[9] = 1.0, -1.0
    bf = brute_force(K, y, 8, 1.0, 1.0)
    full = branch_and_bound(K, y, 8, 1.0, 1.0)
    assert full.status == "optimal" and full.nodes > 10
    res = branch_and_bound(K, y, 8, 1.0, 1.0, node_limit=5)
    assert res.status == "node_limit" and res.nodes == 5
    assert res.lower_bound <= bf.objective * (1 + 1e-9) <= res.objective * (1 + 1e-9)
    assert int(np.sum(res.labels > 0)) == 8 and res.gap >= 0
    res = branch_and_bound(K, y, 8, 1.0, 1.0, time_limit=1e-9)
    assert res.status == "time_limit"
    assert res.lower_bound <= bf.objective * (1 + 1e-9) <= res.objective * (1 + 1e-9)


def test_lower_bound_under_any_node_limit_never_exceeds_the_optimum():
    # The reported bound takes the second child's look-ahead bound for half-searched nodes:
    # check it against brute force at every stopping point of small searches.
    rng = np.random.default_rng(17)
    for t in range(15):
        K, y, k, C, C_star = _tiny(rng, linear=(t % 5 == 4))
        bf = brute_force(K, y, k, C, C_star)
        for look in (True, False):
            full = branch_and_bound(K, y, k, C, C_star, lookahead=look)
            for limit in range(1, min(full.nodes, 30) + 1):
                res = branch_and_bound(K, y, k, C, C_star, node_limit=limit, lookahead=look)
                assert res.lower_bound <= bf.objective * (1 + 1e-9) + 1e-12, (t, limit, look)
                assert res.objective >= bf.objective * (1 - 1e-9)


@pytest.mark.parametrize("branching", ["nips", "product"])
def test_a_search_resumed_from_its_frontier_finishes_the_uninterrupted_search(branching):
    # Stop every few nodes and resume from the frontier with the incumbent: the chain ends at the
    # brute-force optimum, the bound min(closed parts so far, resumed search's bound) is valid at
    # every stop, and no subtree is searched twice (beyond the uninterrupted search's nodes, the
    # chain only solves the root and each frontier node once more per resumption).
    rng = np.random.default_rng(42)
    resumed = 0
    for t in range(25):
        K, y, k, C, C_star = _tiny(rng, linear=(t % 5 == 4))
        bf = brute_force(K, y, k, C, C_star)
        u = int(np.sum(y == 0))
        labelings = -np.ones((bf.n_labelings, u))  # in brute_force's order
        for i, pos in enumerate(itertools.combinations(range(u), k)):
            labelings[i, list(pos)] = 1.0
        full = branch_and_bound(K, y, k, C, C_star, branching=branching)
        assert full.frontier == [] and full.closed_bound == pytest.approx(full.lower_bound)
        res = branch_and_bound(K, y, k, C, C_star, branching=branching, node_limit=3)
        closed, nodes, stops, again = res.closed_bound, res.nodes, 0, 0
        while res.status != "optimal":
            assert res.frontier and all(p.dtype == np.int8 and p.size == np.sum(y == 0) for p, _ in res.frontier)
            # Each pending subtree carries a valid bound: at most its best balanced completion.
            for part, b in res.frontier:
                fits = np.all((labelings == part) | (part == 0), axis=1)
                assert fits.any() and b <= bf.objectives[fits].min() * (1 + 1e-9) + 1e-12, t
            assert min(closed, res.lower_bound) <= bf.objective * (1 + 1e-9) + 1e-12, t
            again += 1 + len(res.frontier)  # the root and the frontier, solved again
            res = branch_and_bound(K, y, k, C, C_star, branching=branching, node_limit=3, frontier=res.frontier,
                                   initial_labels=res.labels)
            closed, nodes, stops = min(closed, res.closed_bound), nodes + res.nodes, stops + 1
            assert stops < 200
        resumed += stops > 0
        assert res.objective == pytest.approx(bf.objective, rel=1e-8), t
        assert min(closed, res.lower_bound) == pytest.approx(bf.objective, rel=1e-8)
        assert nodes - again <= full.nodes, t
    assert resumed >= 10


def test_frontier_is_checked():
    rng = np.random.default_rng(3)
    K, y, k, C, C_star = _tiny(rng)
    u = int(np.sum(y == 0))
    with pytest.raises(ValueError, match=r"frontier\[0\] must be"):
        branch_and_bound(K, y, k, C, C_star, frontier=[(np.full(u, 2), 0.0)])
    with pytest.raises(ValueError, match="balance constraint allows"):
        branch_and_bound(K, y, k, C, C_star, frontier=[(np.ones(u) if k < u else -np.ones(u), 0.0)])
    with pytest.raises(ValueError, match="pair"):
        branch_and_bound(K, y, k, C, C_star, frontier=[np.zeros(u)])


def test_initial_upper_bound_is_used_and_checked():
    rng = np.random.default_rng(11)
    K, y, k, C, C_star = _tiny(rng)
    while k in (0, int(np.sum(y == 0))):
        K, y, k, C, C_star = _tiny(rng)
    bf = brute_force(K, y, k, C, C_star)
    res = branch_and_bound(K, y, k, C, C_star, initial_labels=bf.labels)
    assert res.initial_upper_bound == pytest.approx(bf.objective)
    assert res.objective == pytest.approx(bf.objective) and res.status == "optimal"
    assert res.found_at_node == 0
    with pytest.raises(ValueError, match="positives"):
        branch_and_bound(K, y, k, C, C_star, initial_labels=-np.ones(int(np.sum(y == 0))))
    with pytest.raises(ValueError, match="initial_labels"):
        branch_and_bound(K, y, k, C, C_star, initial_labels=np.zeros(3))


@pytest.mark.parametrize("kwargs,match", [
    ({"K": np.ones((3, 2))}, "square"),
    ({"y": np.array([1.0, -1.0, 2.0, 0.0])}, r"\+1/-1"),
    ({"y": np.array([1.0, 1.0, 0.0, 0.0])}, "each class"),
    ({"y": np.array([1.0, -1.0, 1.0, -1.0])}, "no unlabeled"),
    ({"n_pos": 3}, "exceeds"),
    ({"C": 0.0}, "C must be"),
    ({"gap_tol": 1.5}, "gap_tol"),
    ({"branching": "best"}, "branching"),
    ({"node_limit": 0}, "node_limit"),
])
def test_bad_input_is_rejected(kwargs, match):
    X = np.array([[0.0], [1.0], [0.2], [0.9]])
    args = {"K": gaussian_kernel(X, sigma=1.0), "y": np.array([1.0, -1.0, 0.0, 0.0]), "n_pos": 1, "C": 1.0,
            "C_star": 1.0}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        branch_and_bound(args.pop("K"), args.pop("y"), args.pop("n_pos"), args.pop("C"), args.pop("C_star"), **args)


def test_brute_force_refuses_large_problems():
    K = np.eye(30)
    y = np.zeros(30)
    y[0], y[1] = 1.0, -1.0
    with pytest.raises(ValueError, match="max_labelings"):
        brute_force(K, y, 14, 1.0, 1.0)


def test_estimator_is_registered_and_global_on_two_moons():
    from s3vm_bench.data_registry import two_moons

    assert get_solver("bb") is BranchAndBoundS3VM
    ds = two_moons(seed=3, n_unlabeled=14)
    y = ds.y.copy()
    y[2:] = -1
    est = BranchAndBoundS3VM(sigma=0.5, C=10.0, r=float(np.mean(ds.y[2:]))).fit(ds.X, y)
    assert est.status_ == ["optimal"]
    K = gaussian_kernel(ds.X, sigma=0.5)
    y_pm = np.r_[1.0, -1.0, np.zeros(14)]
    bf = brute_force(K, y_pm, int(ds.y[2:].sum()), 10.0, 10.0)
    assert est.objective_[0] == pytest.approx(bf.objective, rel=1e-8)
    # decision_function reproduces the optimal model's outputs on the training points.
    y_full = y_pm.copy()
    y_full[2:] = est.assigned_labels_[0]
    ref = kernel_newton(K, y_full, 10.0)
    np.testing.assert_allclose(est.decision_function(ds.X), ref.outputs, atol=1e-6)


def test_estimator_under_the_protocol_meets_the_balance_and_reports_the_optimum():
    from s3vm_bench.data_registry import jmlr2008_splits, two_moons

    ds = two_moons(seed=1, n_unlabeled=12)
    split = jmlr2008_splits(ds, n_splits=1, n_labeled=2)[0]
    settings = ProtocolSettings(sigma=0.5, C=10.0)
    res = run_split(BranchAndBoundS3VM, {}, ds, split, settings)
    assert res.balance_exact
    b = res.binary[0]
    K = gaussian_kernel(ds.X[np.r_[split.labeled, split.unlabeled]], sigma=0.5)
    bf = brute_force(K, np.r_[1.0, -1.0, np.zeros(12)], b.n_pos_target, 10.0, 10.0)
    assert res.objective == pytest.approx(bf.objective, rel=1e-7)


def test_estimator_init_solver_and_param_checks():
    from s3vm_bench.data_registry import two_moons

    ds = two_moons(seed=0, n_unlabeled=10)
    y = ds.y.copy()
    y[2:] = -1
    est = BranchAndBoundS3VM(sigma=0.5, C=10.0, r=0.5, init_solver="s3vm_light").fit(ds.X, y)
    assert math.isfinite(est.binary_fits_[0].info["initial_upper_bound"])
    assert est.binary_fits_[0].info["initial_upper_bound"] >= est.objective_[0] - 1e-9
    with pytest.raises(ValueError, match="gap_tol"):
        BranchAndBoundS3VM(gap_tol=-1).fit(ds.X, y)
    with pytest.raises(TypeError, match="init_solver"):
        BranchAndBoundS3VM(init_solver=3).fit(ds.X, y)
    with pytest.raises(ValueError, match="n_jobs"):
        BranchAndBoundS3VM(n_jobs=0).fit(ds.X, y)
    # On two processes (the pool used: pieces of 2 nodes) the estimator finds the same optimum.
    import s3vm_bench.solvers.bb as bb_module

    one = BranchAndBoundS3VM(sigma=0.5, C=10.0, r=0.5).fit(ds.X, y)
    orig = bb_module.parallel_branch_and_bound
    try:
        bb_module.parallel_branch_and_bound = lambda *a, **kw: orig(*a, chunk_nodes=2, **kw)
        two = BranchAndBoundS3VM(sigma=0.5, C=10.0, r=0.5, n_jobs=2).fit(ds.X, y)
    finally:
        bb_module.parallel_branch_and_bound = orig
    assert two.status_ == ["optimal"] and two.binary_fits_[0].n_iter > 2
    assert two.objective_[0] == pytest.approx(one.objective_[0], rel=1e-9)


# ------------------------------------------------------------------------------ reference optima
def test_shipped_two_moons_optima_are_certified_and_reproducible():
    store = optima.load_store("two_moons")
    entries = store["entries"]
    assert len(entries) >= 100
    assert all(e["certified"] and e["gap"] <= 1e-9 for e in entries.values())
    ref = optima.REFERENCE_SETS["two_moons"]
    for i in (0, 57):  # recomputed from scratch: the stored file matches the code and the generator
        ds, split = ref.make(i)
        (prob,) = optima.binary_problems("two_moons", ds, split, ref.settings)
        entry = optima.lookup(prob, store)
        assert entry is not None
        again = optima.certify(prob)
        assert again["objective"] == pytest.approx(entry["objective"], rel=1e-9)
        assert again["labels"] == entry["labels"]
    # The two lines above are a regression check (the file was written by this code); BB's
    # correctness itself is checked against brute force above. Checks independent of the search:
    # each stored labeling is balanced, its objective is that of a cold Newton solve (not BB's
    # incremental one), and it is no worse than the true labeling.
    from s3vm_bench.harness.protocol import _gram

    s = ref.settings
    for i in range(0, 100, 9):
        ds, split = ref.make(i)
        (prob,) = optima.binary_problems("two_moons", ds, split, ref.settings)
        entry = optima.lookup(prob, store)
        labels = optima.labels_from_str(entry["labels"])
        assert int(np.sum(labels > 0)) == prob.k == entry["k"]
        K = _gram(prob.X, s)
        y_full = prob.y_masked.copy()
        y_full[prob.n_lab:] = labels
        cost = np.where(prob.y_masked == 0, s.c_star, s.C)
        assert kernel_newton(K, y_full, cost).objective == pytest.approx(entry["objective"], rel=1e-8)
        y_true = prob.y.astype(float)
        assert kernel_newton(K, y_true, cost).objective >= entry["objective"] * (1 - 1e-9)
        assert entry["lower_bound"] <= entry["objective"] * (1 + 1e-12)


def test_shipped_coil3_entries_match_the_data_and_their_labelings(data_env):
    # Every stored Coil3 entry is for today's problem (digest), is balanced, and its objective is
    # the objective of its labeling; a certified one has its bound equal to it.
    from s3vm_bench.solvers.bb import s3vm_objective

    # The splits differ only in which points are labeled, so the labeling stored for one split is
    # feasible for another whenever it fits that split's labeled points: none may fall below an
    # entry's certified lower bound (for a certified entry, its optimum).
    store = optima.load_store("coil3")
    ref = optima.REFERENCE_SETS["coil3"]
    s = ref.settings
    n_cert = n_cross = n_other_class = 0
    made = {i: ref.make(i) for i in range(ref.n_default)}
    for i in range(ref.n_default):
        ds, split = made[i]
        K = None
        for prob in optima.binary_problems("coil3", ds, split, s):
            entry = optima.lookup(prob, store)
            assert entry is not None, prob.key
            labels = optima.labels_from_str(entry["labels"])
            assert labels.size == 210 and int(np.sum(labels > 0)) == prob.k
            K = gaussian_kernel(prob.X, sigma=s.sigma) if K is None else K
            if prob.key in ("split0/class0", "split4/class1", "split9/class2"):  # one objective per class
                value = s3vm_objective(K, prob.y_masked, labels, s.C, s.c_star).objective
                assert value == pytest.approx(entry["objective"], rel=1e-7)
            assert entry["lower_bound"] <= entry["objective"] * (1 + 1e-9)
            for src, text in optima._labelings_from_other_splits("coil3", prob, i, store, made, ref.n_default).items():
                value = s3vm_objective(K, prob.y_masked, optima.labels_from_str(text), s.C, s.c_star).objective
                assert value >= entry["lower_bound"] * (1 - 1e-9), (prob.key, src)
                n_cross += 1
                n_other_class += src.split("/")[1] != prob.key.split("/")[1]
            if entry["certified"]:
                n_cert += 1
                assert entry["status"] == "optimal" and entry["lower_bound"] >= entry["objective"] * (1 - 1e-9)
    # A labeling is a +-1 vector over the data whatever class it was found for: the class-2
    # optima that are not the truth fit other classes' labeled points (e.g. split 0's class 1).
    assert n_cert == 30 and n_cross >= 100 and n_other_class >= 1


def test_store_round_trip_digest_mismatch_and_atomic_write(tmp_path):
    store = optima.build("two_moons", 2, directory=tmp_path, echo=lambda *a: None)
    assert set(store["entries"]) == {"split0/class1", "split1/class1"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["two_moons.json"]  # no temporary left over
    loaded = optima.load_store("two_moons", tmp_path)
    ref = optima.REFERENCE_SETS["two_moons"]
    ds, split = ref.make(1)
    (prob,) = optima.binary_problems("two_moons", ds, split, ref.settings)
    assert optima.lookup(prob, loaded)["objective"] == store["entries"]["split1/class1"]["objective"]
    loaded["entries"]["split1/class1"]["digest"] = "0" * 64
    with pytest.warns(UserWarning, match="digest mismatch"):
        assert optima.lookup(prob, loaded) is None
    bad = json.loads((tmp_path / "two_moons.json").read_text())
    bad["format"] = 99
    (tmp_path / "two_moons.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="format"):
        optima.load_store("two_moons", tmp_path)
    with pytest.raises(ValueError, match="reference sets"):
        optima.load_store("nonexistent")


def test_a_file_or_folder_in_place_of_a_store_directory_or_file_is_refused(tmp_path):
    """A file given as the folder read every store as empty ("no stored optimum"), and failed when written."""
    from s3vm_bench.harness.compare import compare
    from s3vm_bench.harness.optima import load_bounds

    plain = tmp_path / "plain.txt"
    plain.write_text("not a folder\n")
    refused = r"cannot hold stored reference files: .*plain\.txt is a file, not a folder"
    for folder in (plain, plain / "sub"):
        for load, name in ((optima.load_store, "two_moons"), (load_bounds, "g50c")):
            with pytest.raises(ValueError, match=refused):
                load(name, folder)
        with pytest.raises(ValueError, match=refused):
            optima.save_store(optima.load_store("two_moons"), folder)
    with pytest.raises(ValueError, match=refused):
        compare("svm", ["two_moons"], 1, directory=plain, echo=lambda *a: None)
    (tmp_path / "two_moons.json").mkdir()
    with pytest.raises(ValueError, match=r"two_moons\.json is a folder, not a stored reference file"):
        optima.load_store("two_moons", tmp_path)
    assert plain.read_text() == "not a folder\n"


def test_build_retries_an_uncertified_entry_only_with_more_budget_and_merges(tmp_path, monkeypatch):
    quiet = dict(directory=tmp_path, echo=lambda *a: None)
    first = optima.build("two_moons", 1, node_limit=3, **quiet)["entries"]["split0/class1"]
    assert first["status"] == "node_limit" and not first["certified"] and first["lower_bound"] < first["objective"]
    calls = []
    real = optima.certify
    monkeypatch.setattr(optima, "certify", lambda *a, **k: (calls.append(k), real(*a, **k))[1])
    same = optima.build("two_moons", 1, node_limit=3, **quiet)["entries"]["split0/class1"]
    assert calls == [] and same == first  # no more budget: nothing to learn, not rerun
    done = optima.build("two_moons", 1, **quiet)["entries"]["split0/class1"]  # no limit: more budget
    # The retry starts from its labeling (two-moons realizations are different data: no other seeds).
    assert len(calls) == 1 and calls[0]["seed_labels"] == {"split0/class1": first["labels"]}
    again = optima.build("two_moons", 1, **quiet)["entries"]["split0/class1"]
    assert len(calls) == 1 and again == done  # certified: kept
    assert done["certified"] and done["gap"] == 0.0 and done["lower_bound"] >= first["lower_bound"]
    assert done["objective"] <= first["objective"]
    assert [r["status"] for r in done["previous_runs"]] == ["node_limit"]
    assert done["previous_runs"][0]["node_limit"] == 3
    # Which code ran each search: the search modules and their compiled kernels, each with every
    # project module it imports.
    from s3vm_bench.harness.cell_keys import _files_hash, source_closure

    assert "solvers._bb_kernels" in source_closure("solvers.bb")
    for entry in (done, done["previous_runs"][0]):
        for field, module in (("bb_module_sha256", "solvers.bb"), ("bb_kernels_sha256", "solvers._bb_kernels")):
            assert entry[field] == _files_hash(source_closure(module))[:16]


def test_a_stopped_search_is_resumed_from_its_stored_frontier_to_the_certified_optimum(tmp_path):
    ref = optima.REFERENCE_SETS["two_moons"]
    (prob,) = optima.binary_problems("two_moons", *ref.make(0), ref.settings)
    full = optima.certify(prob)
    entry = optima.certify(prob, node_limit=20)  # the full search takes about 160 nodes
    assert not entry["certified"] and entry["frontier"] and entry["frontier_nodes"] == entry["nodes"]
    # The stored frontier is JSON (a partial labeling and a bound per pending node).
    assert json.loads(json.dumps(entry))["frontier"] == entry["frontier"]
    assert all(set(part) <= set("+-.") and len(part) == entry["u"] for part, _ in entry["frontier"])
    chain, runs = entry, 1
    while not chain["certified"]:
        assert chain["lower_bound"] <= full["objective"] * (1 + 1e-9)
        assert chain["closed_bound"] is None or chain["closed_bound"] <= chain["objective"] * (1 + 1e-9) + 1e-12
        step = optima.certify(prob, node_limit=20, resume=chain, seed_labels=chain["labels"])
        assert step["resumed"] and step["frontier_nodes"] == chain["frontier_nodes"] + step["nodes"]
        chain, runs = optima.merge_entries(chain, step), runs + 1
        assert runs < 500
    assert runs > 2 and chain["objective"] == pytest.approx(full["objective"], rel=1e-9)
    assert chain["gap"] == 0.0 and chain["frontier"] is None and chain["closed_bound"] is None
    assert len(chain["previous_runs"]) == runs - 1
    with pytest.raises(ValueError, match="no frontier"):
        optima.certify(prob, resume=full)
    with pytest.raises(ValueError, match="digest"):
        optima.certify(prob, resume=dict(entry, digest="x"))


def test_build_resume_continues_a_stopped_search_by_the_given_limit(tmp_path):
    quiet = dict(directory=tmp_path, echo=lambda *a: None)
    first = optima.build("two_moons", 1, node_limit=3, **quiet)["entries"]["split0/class1"]
    again = optima.build("two_moons", 1, node_limit=3, **quiet)["entries"]["split0/class1"]
    assert again == first  # without resume: no more budget, not rerun
    lines = []
    step = optima.build("two_moons", 1, node_limit=3, resume=True, directory=tmp_path,
                        echo=lines.append)["entries"]["split0/class1"]
    assert step["resumed"] and step["frontier_nodes"] > first["frontier_nodes"] and len(step["previous_runs"]) == 1
    assert step["lower_bound"] >= first["lower_bound"] and "resumed" in lines[0]
    while not step["certified"]:
        step = optima.build("two_moons", 1, node_limit=50, resume=True, **quiet)["entries"]["split0/class1"]
    assert step["objective"] == pytest.approx(optima.certify(optima.binary_problems(
        "two_moons", *optima.REFERENCE_SETS["two_moons"].make(0),
        optima.REFERENCE_SETS["two_moons"].settings)[0])["objective"], rel=1e-9)


def test_build_only_runs_the_named_problems_and_rejects_unknown_keys(tmp_path):
    quiet = dict(directory=tmp_path, echo=lambda *a: None)
    store = optima.build("two_moons", 3, only=["split1/class1"], **quiet)
    assert list(store["entries"]) == ["split1/class1"] and store["entries"]["split1/class1"]["certified"]
    with pytest.raises(ValueError, match="no problem split3/class1, split9/class0"):
        optima.build("two_moons", 3, only=["split9/class0", "split3/class1"], **quiet)
    with pytest.raises(ValueError, match="jobs"):
        optima.build("two_moons", 3, jobs=0, **quiet)
    store = optima.build("two_moons", 3, only=["split2/class1"], jobs=2, **quiet)
    entry = store["entries"]["split2/class1"]
    assert entry["jobs"] == 2 and entry["certified"]


def test_builds_of_one_set_running_at_once_keep_each_others_entries(tmp_path, monkeypatch):
    """A build saves after each problem; an entry another build stored while it searched is kept."""
    quiet = dict(directory=tmp_path, echo=lambda *a: None)
    optima.build("two_moons", 2, only=["split1/class1"], **quiet)
    real = optima.certify

    def certify_while_another_build_saves(prob, **kw):
        other = optima.load_store("two_moons", tmp_path)
        other["entries"]["split1/class1"] = dict(other["entries"]["split1/class1"], found_by="another build")
        optima.save_store(other, tmp_path)
        return real(prob, **kw)

    monkeypatch.setattr(optima, "certify", certify_while_another_build_saves)
    optima.build("two_moons", 1, only=["split0/class1"], **quiet)
    entries = optima.load_store("two_moons", tmp_path)["entries"]
    assert set(entries) == {"split0/class1", "split1/class1"} and entries["split0/class1"]["certified"]
    assert entries["split1/class1"]["found_by"] == "another build"


def test_merge_keeps_the_frontier_of_the_longer_chain():
    base = {"digest": "d", "status": "node_limit", "objective": 10.0, "lower_bound": 6.0, "labels": "+-",
            "unlabeled_error": 0.5, "found_by": "search", "initial": "none", "nodes": 5, "seconds": 1.0,
            "time_limit": None, "node_limit": 5, "gap": 0.4, "frontier": [["+.", 7.0]], "closed_bound": 8.0,
            "frontier_nodes": 500}
    fresh = dict(base, nodes=50, node_limit=50, frontier=[["-.", 6.5]], closed_bound=9.0, frontier_nodes=50)
    m = optima.merge_entries(base, fresh)
    assert (m["frontier"], m["closed_bound"], m["frontier_nodes"]) == ([["+.", 7.0]], 8.0, 500)
    resumed = dict(base, frontier=[["++", 7.5]], closed_bound=7.9, frontier_nodes=505, resumed=True)
    m = optima.merge_entries(base, resumed)
    assert (m["frontier"], m["closed_bound"], m["frontier_nodes"]) == ([["++", 7.5]], 7.9, 505)
    done = optima.merge_entries(base, dict(resumed, status="optimal", lower_bound=10.0))
    assert done["certified"] and done["frontier"] is None and done["closed_bound"] is None


def test_certify_seeds_with_the_better_of_the_stored_and_the_true_labeling():
    ref = optima.REFERENCE_SETS["two_moons"]
    (prob,) = optima.binary_problems("two_moons", *ref.make(0), ref.settings)
    truth = prob.y[prob.n_lab:]
    plain = optima.certify(prob)
    assert plain["initial"] == "none" and plain["found_by"] == "search"
    # A stored labeling seeds the search; realization 0's optimum is its true labeling, so the
    # search finds nothing better and the entry's labeling is the seed.
    seeded = optima.certify(prob, seed_labels=optima.labels_to_str(truth))
    assert seeded["initial"] == "stored_labeling" and seeded["found_by"] == "initial labeling"
    assert seeded["certified"] and seeded["objective"] == pytest.approx(plain["objective"])
    assert seeded["labels"] == plain["labels"]
    # A stored labeling worse than the truth (one positive and one negative swapped) does not
    # replace the truth as the seed.
    worse = truth.copy()
    i, j = np.flatnonzero(truth > 0)[0], np.flatnonzero(truth < 0)[0]
    worse[i], worse[j] = -1.0, 1.0
    both = optima.certify(prob, seed_truth=True, seed_labels=optima.labels_to_str(worse))
    assert both["initial"] == "ground_truth" and both["objective"] == pytest.approx(plain["objective"])


def test_certify_seeds_with_the_best_of_several_candidates_and_rejects_a_bad_one():
    ref = optima.REFERENCE_SETS["two_moons"]
    (prob,) = optima.binary_problems("two_moons", *ref.make(0), ref.settings)
    truth = prob.y[prob.n_lab:]
    worse = truth.copy()
    i, j = np.flatnonzero(truth > 0)[0], np.flatnonzero(truth < 0)[0]
    worse[i], worse[j] = -1.0, 1.0
    e = optima.certify(prob, seed_labels={"a": optima.labels_to_str(worse), "b": optima.labels_to_str(truth)})
    assert e["initial"] == "stored_labeling" and e["seed_from"] == "b" and e["found_by"] == "initial labeling"
    assert optima.certify(prob, seed_truth=True)["seed_from"] is None
    unbalanced = optima.labels_to_str(np.ones_like(truth))
    with pytest.raises(ValueError, match=r"seed labeling x of split0/class1 .* 100 unlabeled points with \d+ pos"):
        optima.certify(prob, seed_labels={"x": unbalanced})
    with pytest.raises(ValueError, match="unlabeled points"):
        optima.certify(prob, seed_labels="+-")


def test_labelings_of_other_splits_of_the_same_data_seed_a_search(tmp_path, monkeypatch):
    # two_circles: one fixed data set, problem i is a different labeled pair. A labeling of all
    # the data stored for split 0 is feasible for split 1 when it agrees with split 1's labeled pair.
    ref = optima.REFERENCE_SETS["two_circles"]
    made = {i: ref.make(i) for i in range(3)}
    probs = {i: optima.binary_problems("two_circles", *made[i], ref.settings)[0] for i in range(3)}
    store = optima.load_store("two_circles", tmp_path)

    def put(i, labels):  # an entry with every field a stored optimum has (optima_store checks them when read)
        store["entries"][probs[i].key] = {"digest": probs[i].digest(), "labels": optima.labels_to_str(labels),
                                          "u": len(labels), "objective": 1.0, "lower_bound": 0.5, "gap": 1.0,
                                          "status": "node_limit", "certified": False, "nodes": 1, "seconds": 0.0,
                                          "unlabeled_error": 0.0, "objective_true_labels": 1.0}

    put(0, probs[0].y[probs[0].n_lab:])  # the truth: it fits every split
    seeds = optima._labelings_from_other_splits("two_circles", probs[1], 1, store, made, 3)
    assert seeds == {"split0/class1": optima.labels_to_str(probs[1].y[probs[1].n_lab:])}
    # Split 0's labeling with split 1's labeled pair relabeled (a swap keeps the balance): it no
    # longer fits split 1, but still fits split 2 when split 2's pair is elsewhere.
    full = np.zeros(len(made[0][0].y))
    idx0 = np.r_[made[0][1].labeled, made[0][1].unlabeled]
    full[idx0] = probs[0].y
    pair = made[1][1].labeled
    assert not np.isin(pair, made[0][1].labeled).any()
    full[pair] = -full[pair]
    put(0, full[made[0][1].unlabeled])
    assert optima._labelings_from_other_splits("two_circles", probs[1], 1, store, made, 3) == {}
    fits2 = not np.isin(pair, made[2][1].labeled).any()
    assert fits2 and optima._labelings_from_other_splits("two_circles", probs[2], 2, store, made, 3) == {
        "split0/class1": optima.labels_to_str(full[made[2][1].unlabeled])}
    # Different data (two-moons realizations) never seed each other.
    tm = optima.REFERENCE_SETS["two_moons"]
    made_tm = {i: tm.make(i) for i in range(2)}
    p0, p1 = (optima.binary_problems("two_moons", *made_tm[i], tm.settings)[0] for i in range(2))
    tm_store = {"set": "two_moons", "entries": {p0.key: {"digest": p0.digest(), "labels": "+" * 100}}}
    assert optima._labelings_from_other_splits("two_moons", p1, 1, tm_store, made_tm, 2) == {}
    # build passes them to the search of a split that has no entry yet.
    put(0, probs[0].y[probs[0].n_lab:])
    store["entries"][probs[0].key].update(status="optimal")
    optima.save_store(store, tmp_path)
    calls = []
    monkeypatch.setattr(optima, "certify", lambda prob, **k: (calls.append((prob.key, k["seed_labels"])),
                                                               {"digest": prob.digest(), "labels": "", "status": "x",
                                                                "objective": 0.0, "lower_bound": 0.0,
                                                                "nodes": 0, "seed_from": "split0/class1"})[1])
    said = []
    optima.build("two_circles", 2, node_limit=1, directory=tmp_path, echo=said.append)
    assert calls == [("split1/class1", seeds)]
    assert len(said) == 1 and "seeded with the labeling stored for split0/class1" in said[0]


def test_build_retries_with_a_branching_rule_not_yet_tried_at_that_budget(tmp_path, monkeypatch):
    quiet = dict(directory=tmp_path, echo=lambda *a: None)
    first = optima.build("two_moons", 1, node_limit=3, **quiet)["entries"]["split0/class1"]
    assert first["branching"] == "nips" and not first["certified"]
    calls = []
    real = optima.certify
    monkeypatch.setattr(optima, "certify", lambda *a, **k: (calls.append(k["branching"]), real(*a, **k))[1])
    other = optima.build("two_moons", 1, node_limit=3, branching="product", **quiet)["entries"]["split0/class1"]
    assert calls == ["product"] and other["branching"] == "product"
    assert [r["branching"] for r in other["previous_runs"]] == ["nips"]
    # Both rules have now had 3 nodes: neither reruns at 3; either reruns with more.
    optima.build("two_moons", 1, node_limit=3, branching="nips", **quiet)
    optima.build("two_moons", 1, node_limit=3, branching="product", **quiet)
    assert calls == ["product"]
    optima.build("two_moons", 1, node_limit=4, branching="nips", **quiet)
    assert calls == ["product", "nips"]
    # An entry written before the rule was recorded counts as searched with "nips".
    legacy = {k: v for k, v in first.items() if k != "branching"}
    assert not optima._more_budget(legacy, None, 3, "nips") and optima._more_budget(legacy, None, 3, "product")


def test_merge_keeps_the_best_bound_and_labeling_of_two_searches():
    base = {"digest": "d", "status": "time_limit", "objective": 10.0, "lower_bound": 6.0, "labels": "+-",
            "unlabeled_error": 0.5, "found_by": "search", "initial": "none", "nodes": 5, "seconds": 1.0,
            "time_limit": 1.0, "node_limit": None, "gap": 0.4}
    other = dict(base, objective=9.0, lower_bound=4.0, labels="-+", unlabeled_error=0.0, nodes=7, time_limit=2.0)
    m = optima.merge_entries(base, other)
    assert (m["objective"], m["lower_bound"], m["labels"], m["status"]) == (9.0, 6.0, "-+", "time_limit")
    assert m["gap"] == pytest.approx(3.0 / 9.0) and m["nodes"] == 7 and m["previous_runs"][0]["nodes"] == 5
    closed = optima.merge_entries(base, dict(other, lower_bound=9.0))  # the bound meets the better incumbent
    assert closed["status"] == "optimal" and closed["certified"] and closed["gap"] == 0.0
    with pytest.raises(ValueError, match="digest"):
        optima.merge_entries(base, dict(other, digest="e"))
    # A labeling below the other search's certified bound: one search is wrong, nothing is merged.
    with pytest.raises(ValueError, match="below the certified lower bound 6.0 of the other search"):
        optima.merge_entries(base, dict(other, objective=5.0, lower_bound=5.0))


def test_compare_reports_a_positive_gap_for_a_weak_solver(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "examples"))  # the README's minimal solver
    lines = []
    rows = compare("my_s3vm:SupervisedOnly", ["two_moons"], 3, echo=lines.append)
    assert len(rows) == 3
    assert all(r.certified for r in rows)
    assert all(r.gap > 0.05 and not r.optimal_labeling for r in rows)
    assert all(r.optimum_unlabeled_error <= r.unlabeled_error for r in rows)
    assert any("summary two_moons" in line for line in lines)


def test_compare_a_global_solver_has_zero_gap():
    rows = compare("bb", ["two_moons"], 2, echo=lambda *a: None)
    assert len(rows) == 2
    for r in rows:
        assert r.gap == pytest.approx(0.0, abs=1e-9)
        assert r.optimal_labeling
        # The stored optimum evaluated by harness.optima gives the errors the solver's own fit gives.
        assert r.optimum_unlabeled_error == pytest.approx(r.unlabeled_error)
        assert r.optimum_test_error == pytest.approx(r.test_error)


def test_compare_marks_unbalanced_labelings_and_leaves_them_out_of_the_median_gap():
    """The stored optimum is over balanced labelings (JMLR 2008 eq. 3): a solver without a balance rule
    (the plain SVM) is compared on a different problem where its count misses round(u r)."""
    lines = []
    rows = compare("svm", ["two_moons"], 4, echo=lines.append)
    ref = optima.get_reference_set("two_moons")
    counts = []
    for i in range(4):  # the SVM's own positive count against the target, by the protocol directly
        b = run_split(get_solver("svm"), {}, *ref.make(i), ref.settings).binary[0]
        counts.append(b.n_pos == b.n_pos_target)
    assert [r.balance_exact for r in rows] == counts and not all(counts) and any(counts)
    marked = [line for line in lines if "not balanced: the optimum does not apply" in line]
    assert len(marked) == counts.count(False)
    gaps = sorted(r.gap for r in rows if r.balance_exact)
    assert f"median gap {100 * float(np.median(gaps)):.2f}% over the {len(gaps)} balanced ones" in lines[-1]


def test_compare_cli(capsys, monkeypatch):
    assert main(["compare", "svm", "--datasets", "two_moons", "--splits", "2"]) == 0
    out = capsys.readouterr().out
    assert "summary two_moons: 2 problems" in out
    assert main(["compare", "no_such_solver", "--datasets", "two_moons", "--splits", "1"]) == 2
    assert "unknown solver" in capsys.readouterr().err
    assert main(["compare", "svm", "--datasets", "nowhere", "--splits", "1"]) == 2
    assert main(["compare", "svm", "--datasets", "two_moons", "--splits", "1", "--record-best"]) == 2
    assert "--record-best records best objectives beside certified lower bounds" in capsys.readouterr().err
    assert main(["compare", "svm", "--datasets", "two_moons", "--splits", "1", "--time-limit", "5"]) == 2
    assert "add --compute-missing or drop it" in capsys.readouterr().err
    assert main(["optima", "show", "two_moons"]) == 0
    assert "100 certified optimal" in capsys.readouterr().out


def test_compare_without_stored_optimum_says_how_to_build(tmp_path):
    with pytest.raises(ValueError, match="optima build"):
        compare("svm", ["two_moons"], 1, directory=tmp_path, echo=lambda *a: None)
    rows = compare("svm", ["two_moons"], 1, directory=tmp_path, compute_missing=True, echo=lambda *a: None)
    assert rows[0].certified and (tmp_path / "two_moons.json").is_file()



def test_compare_refuses_a_stored_optimum_whose_objective_is_not_its_labelings(tmp_path):
    """A stored objective is checked against the L2-SVM objective of the stored labeling: an edited
    number cannot make a solver's gap look smaller or larger."""
    store = json.loads((optima.OPTIMA_DIR / "two_moons.json").read_text())
    store["entries"]["split1/class1"]["objective"] *= 0.9
    (tmp_path / "two_moons.json").write_text(json.dumps(store))
    rows = compare("svm", ["two_moons"], 1, directory=tmp_path, echo=lambda *a: None)  # split 0: untouched
    assert rows[0].certified
    with pytest.raises(ValueError, match=r"stored optimum of two_moons split1/class1 has objective .* but its "
                                         r"labeling's is .*edited or damaged.*optima build two_moons --n 2 --only "
                                         r"split1/class1 --force"):
        compare("svm", ["two_moons"], 2, directory=tmp_path, echo=lambda *a: None)


def test_compare_looks_up_every_optimum_before_any_solver_runs(monkeypatch):
    """Asking for more problems than are stored fails at once, not after solving the stored ones."""
    import s3vm_bench.harness.compare as harness_compare

    runs = []
    monkeypatch.setattr(harness_compare, "run_split", lambda *a, **k: runs.append(1))
    with pytest.raises(ValueError, match="no stored optimum for two_moons split 100; run `s3vm-bench optima build"):
        compare("svm", ["two_moons"], 101, echo=lambda *a: None)
    # A later set without the optima asked for fails before the solver runs on the first one.
    with pytest.raises(ValueError, match=r"no stored optimum for coil3 split 10 \(nor for 1 other split\(s\)\)"):
        compare("svm", ["two_moons", "coil3"], 12, echo=lambda *a: None)
    assert runs == []


def test_optima_build_and_compare_cli_run_with_one_blas_thread(monkeypatch):
    # Branch and bound's node solves are tiny: extra BLAS threads only slow them down.
    import s3vm_bench.harness.compare as harness_compare
    from threadpoolctl import threadpool_info

    seen, resume = [], []

    def record(*args, **kwargs):
        seen.append(max((i["num_threads"] for i in threadpool_info()), default=1))
        resume.append((kwargs.get("resume"), kwargs.get("only")))
        return {}

    monkeypatch.setattr(optima, "build", record)
    monkeypatch.setattr(harness_compare, "compare", record)
    assert main(["optima", "build", "two_moons", "--n", "1"]) == 0
    assert main(["compare", "svm", "--datasets", "two_moons", "--splits", "1"]) == 0
    assert seen == [1, 1]
    assert main(["optima", "build", "coil3", "--resume", "--node-limit", "5", "--only", "split6/class0"]) == 0
    assert resume == [(False, None), (None, None), (True, ["split6/class0"])]
    # --force (start over) and --resume (continue) contradict each other: a usage error, nothing built
    with pytest.raises(SystemExit) as exit_info:
        main(["optima", "build", "two_moons", "--n", "1", "--resume", "--force"])
    assert exit_info.value.code == 2 and len(resume) == 3


def test_names_given_as_one_str_are_refused_not_read_letter_by_letter(tmp_path):
    from s3vm_bench.harness.reproduce import reproduce

    with pytest.raises(TypeError, match=r"set_names must be a list of names, not the str 'two_moons': pass \['two_moons'\]"):
        compare("svm", "two_moons", 1, echo=lambda *a: None)
    with pytest.raises(TypeError, match="n must be an integer number of problems"):
        compare("svm", ["two_moons"], 1.7, echo=lambda *a: None)
    with pytest.raises(TypeError, match="params must be a dict"):
        compare("svm", ["two_moons"], 1, params="C=1", echo=lambda *a: None)
    for kwargs, what in (({}, "keys"), ({"datasets": "g50c"}, "datasets"), ({"solvers": "svm"}, "solvers")):
        keys = "jmlr2008-table8" if what == "keys" else ["jmlr2008-table8"]
        with pytest.raises(TypeError, match=f"{what} must be a list of names, not the str"):
            reproduce(keys, reports_dir=tmp_path, echo=lambda *a: None, **kwargs)
    assert not any(tmp_path.iterdir())


def test_stored_optimum_refuses_a_bad_index_and_answers_a_large_one_at_once():
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="the problem index must be an integer >= 0"):
            optima.stored_optimum("coil3", bad)
    assert optima.stored_optimum("coil3", 10**9) is None  # not stored: its split is not made
    assert optima.stored_optimum("coil3", 0).certified
