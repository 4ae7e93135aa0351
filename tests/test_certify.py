"""Certified lower bounds (harness.certify): sound where the optimum is known, checks that reject.

The bound must never exceed the balanced optimum of the protocol's objective; where the
optimum is known (brute force on tiny problems, the certified branch-and-bound optima shipped
for two moons and Coil3) it is compared against it and the gap is reported as it is, tight or
loose. A dual point that is perturbed out of feasibility must be rejected by the check.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from s3vm_bench.harness import certify
from s3vm_bench.harness.certify import (DualPoint, bias_bound, check_dual_point, dual_point_from_labels, make_feasible,
                                        neighbour_edges, optimize_bound)
from s3vm_bench.harness.optima import CERTIFIED_GAP_TOL, OPTIMA_DIR, bound_entry, get_reference_set, labels_from_str
from s3vm_bench.harness.protocol import _gram
from s3vm_bench.harness.reference_sets import binary_problems
from s3vm_bench.solvers import get_solver
from s3vm_bench.solvers.bb import brute_force, s3vm_objective
from s3vm_bench.solvers.numerics import gaussian_kernel


def _tiny(seed, n_per=7, l=4, C=3.0, n_pos=None):
    """Two Gaussian blobs (``n_per`` negatives, ``n_pos`` positives), 2 labeled points per class
    first, the rest unlabeled."""
    rng = np.random.default_rng(seed)
    n_pos = n_per if n_pos is None else n_pos
    X = np.r_[rng.normal(-1.0, 1.0, (n_per, 2)), rng.normal(1.0, 1.0, (n_pos, 2))]
    y = np.r_[-np.ones(n_per), np.ones(n_pos)]
    order = np.r_[0, n_per, 1, n_per + 1, np.setdiff1d(np.arange(n_per + n_pos), [0, n_per, 1, n_per + 1])]
    X, y = X[order], y[order]
    K = gaussian_kernel(X, sigma=1.0)
    k = int(np.sum(y[l:] > 0))
    return K, y, l, k, C


def _tiny_optimum(seed, **kw):
    """:func:`_tiny` and its balanced optimum by brute force over the unlabeled labels."""
    K, y, l, k, C = _tiny(seed, **kw)
    masked = y.copy()
    masked[l:] = 0.0
    return K, y, l, k, C, brute_force(K, masked, k, C, C)


@pytest.fixture(scope="module")
def tiny_certified():
    """A tiny problem, its brute-force optimum and an optimized certified dual point."""
    K, y, l, k, C, opt = _tiny_optimum(0)
    res = optimize_bound(K, y[:l], k, C, C, y[l:], max_iter=300)
    return K, y, l, k, C, opt, res


@pytest.mark.parametrize("seed,n_per,n_pos,C", [(s, 7, 7, 3.0) for s in range(6)]
                         + [(s, 10, 5, 2.0) for s in range(6, 10)] + [(10, 5, 9, 30.0)])
def test_bound_never_exceeds_brute_force_optimum(seed, n_per, n_pos, C):
    # balanced and unbalanced unlabeled sets (s = 2k - u = 0 and != 0), small and large C
    K, y, l, k, C, opt = _tiny_optimum(seed, n_per=n_per, n_pos=n_pos, C=C)
    # start from the true labeling (any balanced labeling is only a starting point)
    res = optimize_bound(K, y[:l], k, C, C, y[l:], max_iter=300)
    assert res.certificate.feasible
    assert np.isfinite(res.bound)
    assert res.bound <= opt.objective * (1 + 1e-12)
    # the bound is a real one, not a trivial -inf or 0: the optimizer improves on its starting point
    assert res.bound > res.stages[0]["bound"] + 1e-9 * abs(opt.objective)


@pytest.mark.parametrize("seed,n_per,n_pos,C", [(0, 7, 7, 3.0), (7, 10, 5, 2.0), (10, 5, 9, 30.0)])
def test_bound_with_product_cuts_never_exceeds_brute_force_optimum(seed, n_per, n_pos, C):
    # the product cuts of step 2 from the start: below the optimum, recomputed from the point alone,
    # and (on these problems) tighter than the graph dual point alone
    K, y, l, k, C, opt = _tiny_optimum(seed, n_per=n_per, n_pos=n_pos, C=C)
    plain = optimize_bound(K, y[:l], k, C, C, y[l:], max_iter=200)
    cut = optimize_bound(K, y[:l], k, C, C, y[l:], max_iter=200, products_from=0)
    assert cut.certificate.feasible and cut.bound <= opt.objective * (1 + 1e-12)
    assert check_dual_point(K, y[:l], k, C, C, cut.point).bound == cut.bound
    assert cut.bound > plain.bound


def test_neighbour_edges_link_each_point_to_its_nearest_neighbours():
    K, y, l, k, C = _tiny(0)
    Kuu = K[l:, l:]
    a, b = neighbour_edges(Kuu, 2)
    assert np.all(a < b) and len(set(zip(a.tolist(), b.tolist()))) == a.size
    pairs = set(zip(a.tolist(), b.tolist()))
    for j in range(Kuu.shape[0]):
        order = [i for i in np.argsort(-Kuu[j], kind="stable") if i != j][:2]
        assert all((min(i, j), max(i, j)) in pairs for i in order)
    assert a.size <= 2 * Kuu.shape[0]
    with pytest.raises(ValueError, match="graph_neighbors"):
        neighbour_edges(Kuu, 0)


@pytest.mark.parametrize("mu", [1.0, 0.05])
def test_sparse_graph_search_function_equals_the_dense_one_on_its_edges(mu):
    """The smoothed bound of the sparse path (graph weights on the neighbour edges, low-rank
    gradient terms, top eigenpairs only) is the dense path's at the same point, and so is its
    gradient; both agree with central differences."""
    rng = np.random.default_rng(3)
    K, y, l, k, C = _tiny(1, n_per=9)
    u = K.shape[0] - l
    s = 2 * k - u
    edges = neighbour_edges(K[l:, l:], 3)
    f_sp, _, n_sp = certify._smoothed_sparse(K, y[:l], l, u, s, C, 0.7 * C, 1.0, edges)
    f_de, _, n_de = certify._smoothed(K, y[:l], l, u, s, C, 0.7 * C, 1.0, True, False)
    nG = edges[0].size
    z = np.r_[rng.uniform(0, 1, l), 0.4, rng.uniform(-1, 1, u), rng.uniform(0, 0.3, nG), rng.uniform(0, 0.2, l * u),
              0.1 * rng.standard_normal(2 * (u + 1))]
    iu = np.triu_indices(u, 1)
    G = np.zeros((u, u))
    G[edges] = z[l + 1 + u:l + 1 + u + nG]
    i0 = l + 1 + u
    z_de = np.r_[z[:i0], G[iu], z[i0 + nG:]]
    v_sp, g_sp = f_sp(z, mu)
    v_de, g_de = f_de(z_de, mu)
    G_grad = np.zeros((u, u))
    G_grad[iu] = g_de[i0:i0 + iu[0].size]
    g_de_edges = np.r_[g_de[:i0], G_grad[edges], g_de[i0 + iu[0].size:]]
    assert v_sp == pytest.approx(v_de, rel=1e-12)
    np.testing.assert_allclose(g_sp, g_de_edges, rtol=0, atol=1e-9 * np.abs(g_de_edges).max())
    h = 1e-6
    for i in rng.choice(z.size, 8, replace=False):
        e = np.zeros_like(z)
        e[i] = h
        fd = (f_sp(z + e, mu)[0] - f_sp(z - e, mu)[0]) / (2 * h)
        assert g_sp[i] == pytest.approx(fd, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("seed,n_per,n_pos,C", [(0, 7, 7, 3.0), (7, 10, 5, 2.0), (10, 5, 9, 30.0)])
def test_sparse_graph_bound_never_exceeds_brute_force_optimum(seed, n_per, n_pos, C):
    K, y, l, k, C, opt = _tiny_optimum(seed, n_per=n_per, n_pos=n_pos, C=C)
    res = optimize_bound(K, y[:l], k, C, C, y[l:], max_iter=200, graph_neighbors=3)
    assert res.certificate.feasible and np.isfinite(res.bound)
    assert res.bound <= opt.objective * (1 + 1e-12)
    assert check_dual_point(K, y[:l], k, C, C, res.point).bound == res.bound
    assert res.bound > res.stages[0]["bound"] + 1e-9 * abs(opt.objective)
    off_edges = np.ones_like(res.point.G, dtype=bool)
    a, b = neighbour_edges(K[l:, l:], 3)
    off_edges[a, b] = off_edges[b, a] = False
    assert np.all(res.point.G[off_edges] == 0.0)
    with pytest.raises(ValueError, match="graph_neighbors"):
        optimize_bound(K, y[:l], k, C, C, y[l:], max_iter=5, graph_neighbors=3, products_from=0)


def test_bound_is_recomputed_from_the_point(tiny_certified):
    K, y, l, k, C, opt, res = tiny_certified
    again = check_dual_point(K, y[:l], k, C, C, res.point)
    assert again.feasible and again.bound == res.bound
    # every ingredient is the certificate's own: the lambda_max term and the margins are included
    u = K.shape[0] - l
    assert again.bound <= again.value - (u + 1) * again.lambda_max


@pytest.mark.parametrize("perturb", ["lam", "m", "t", "G"])
def test_perturbed_dual_point_is_rejected(tiny_certified, perturb):
    K, y, l, k, C, opt, res = tiny_certified
    p = res.point
    if perturb == "lam":  # lowering the diagonal multipliers breaks positive semidefiniteness
        bad = dataclasses.replace(p, lam=p.lam - 1.0)
    elif perturb == "m":  # a balance multiplier pushed far makes the matrix indefinite
        bad = dataclasses.replace(p, m=p.m + np.r_[50.0, np.zeros(p.m.size - 1)])
    elif perturb == "t":  # a larger t with the same lam: the quadratic term outgrows the multipliers
        bad = dataclasses.replace(p, t=4 * p.t + 0.5, q=p.q, lam=p.lam)
    else:  # larger graph weights with the same lam: the quadratic term outgrows the multipliers
        bad = dataclasses.replace(p, G=4 * p.G + 0.5 * (1 - np.eye(p.G.shape[0])), lam=p.lam)
    cert = check_dual_point(K, y[:l], k, C, C, bad)
    assert not cert.feasible and cert.bound == -math.inf and cert.reasons
    # repaired instead of rejected, the bound is still valid
    fixed = check_dual_point(K, y[:l], k, C, C, bad, strict=False)
    assert np.isfinite(fixed.bound) and fixed.bound <= opt.objective * (1 + 1e-12)


@pytest.mark.parametrize("perturb", ["alpha", "q", "G_negative", "G_asymmetric", "E_negative", "N_negative"])
def test_negative_dual_variables_are_rejected_even_when_repairing(tiny_certified, perturb):
    K, y, l, k, C, opt, res = tiny_certified
    p = res.point
    G = p.G.copy()
    if perturb == "alpha":
        bad = dataclasses.replace(p, alpha=np.r_[-1e-3, p.alpha[1:]])
    elif perturb == "q":
        bad = dataclasses.replace(p, q=np.r_[p.t * 1.001, p.q[1:]])
    elif perturb == "G_negative":  # a negative graph weight makes a dual negative for some labeling
        G[0, 1] = G[1, 0] = -1e-3
        bad = dataclasses.replace(p, G=G)
    elif perturb == "G_asymmetric":  # an asymmetric G: the bias term would depend on the labeling
        G[0, 1] += 1e-3
        bad = dataclasses.replace(p, G=G)
    elif perturb == "E_negative":
        E = p.E.copy()
        E[0, 0] = -1e-3
        bad = dataclasses.replace(p, E=E)
    else:  # a negative multiplier of a product (1 +- y_j)(1 +- y_k) >= 0
        u = p.q.size
        bad = dataclasses.replace(p, N=np.r_[-1e-3, np.zeros(4 * u * u - 1)].reshape(4, u, u))
    for strict in (True, False):
        cert = check_dual_point(K, y[:l], k, C, C, bad, strict=strict)
        assert not cert.feasible and cert.bound == -math.inf


def test_bias_residual_is_rejected_or_charged(tiny_certified):
    K, y, l, k, C, opt, res = tiny_certified
    p = res.point
    bad = dataclasses.replace(p, alpha=p.alpha + np.r_[0.01, np.zeros(l - 1)])  # sum_i a_i y_i no longer vanishes
    bad = dataclasses.replace(bad, lam=bad.lam + 1.0)  # keep the matrix definite: only the bias is wrong
    cert = check_dual_point(K, y[:l], k, C, C, bad)
    assert not cert.feasible and any("bias" in r for r in cert.reasons)
    charged = check_dual_point(K, y[:l], k, C, C, bad, strict=False)
    assert charged.bias_residual > 0
    assert charged.bound <= opt.objective and charged.bound < res.bound
    repaired = check_dual_point(K, y[:l], k, C, C, make_feasible(K, y[:l], k, C, C, bad))
    assert repaired.feasible and repaired.bias_residual <= 1e-9


def test_graph_dual_point_is_a_lower_bound_at_every_balanced_labeling():
    # step 1 of the module docstring, checked labeling by labeling: the quadratic phi(y) is the
    # dual value of the graph-cut dual point (a >= 0 for every labeling), and never exceeds J(y)
    import itertools

    from s3vm_bench.harness.certify_check import _terms

    K, y, l, k, C = _tiny(4, n_per=5, n_pos=5)
    u = K.shape[0] - l
    rng = np.random.default_rng(0)
    G = np.triu(rng.uniform(0.0, 0.4, (u, u)), 1)
    t = 0.3
    p = make_feasible(K, y[:l], k, C, C, DualPoint(rng.uniform(0, 1, l), t, rng.uniform(-t, t, u), np.zeros(u + 1),
                                                   np.zeros(u + 1), G + G.T, rng.uniform(0.0, 0.4, (l, u))))
    c0, g, M = _terms(K, y[:l], l, C, C, p.alpha, p.t, p.q, p.G, p.E)
    masked = y.copy()
    masked[l:] = 0.0
    for pos in itertools.combinations(range(u), k):
        yu = -np.ones(u)
        yu[list(pos)] = 1.0
        cut_lu = p.E * (1 - np.outer(y[:l], yu))
        a_u = p.t + p.q * yu + (p.G * (1 - np.outer(yu, yu))).sum(axis=1) + cut_lu.sum(axis=0)
        a = np.r_[p.alpha + cut_lu.sum(axis=1), a_u]
        assert np.all(a >= 0)
        gam = a * np.r_[y[:l], yu]
        assert abs(gam.sum()) < 1e-12  # the bias term vanishes for every balanced labeling
        direct = a.sum() - np.sum(a ** 2) / (4 * C) - 0.5 * gam @ K @ gam
        phi = c0 + g @ yu - 0.5 * yu @ M @ yu
        assert phi == pytest.approx(direct, rel=1e-10, abs=1e-10)
        assert phi <= s3vm_objective(K, masked, yu, C, C).objective + 1e-9


def test_start_point_reproduces_the_labeling_dual():
    # at its own labeling the starting dual point is the L2-SVM dual: phi(labels) = J(labels)
    K, y, l, k, C = _tiny(3)
    p0 = dual_point_from_labels(K, y[:l], k, C, C, y[l:])
    a_unl = p0.t + p0.q * y[l:]
    masked = y.copy()
    masked[l:] = 0.0
    J = s3vm_objective(K, masked, y[l:], C, C).objective
    gam = np.r_[p0.alpha * y[:l], a_unl * y[l:]]
    a = np.r_[p0.alpha, a_unl]
    phi = a.sum() - np.sum(a ** 2) / (4 * C) - 0.5 * gam @ K @ gam
    assert phi == pytest.approx(J, rel=1e-6)
    assert abs(np.sum(a * y)) < 1e-6


def test_bias_bound_holds_on_a_solved_problem():
    from s3vm_bench.solvers.numerics import kernel_newton

    K, y, l, k, C = _tiny(5)
    res = kernel_newton(K, y, np.full(y.size, C))
    assert abs(res.intercept) <= bias_bound(K, C, C, l, res.objective)


@pytest.mark.parametrize("set_name,key", [("two_moons", "split0/class1"), ("two_moons", "split1/class1")])
def test_bound_below_certified_two_moons_optimum(set_name, key):
    ref = get_reference_set(set_name)
    entry = json.loads((OPTIMA_DIR / f"{set_name}.json").read_text())["entries"][key]
    assert entry["certified"]
    i = int(key.split("/")[0][5:])
    ds, split = ref.make(i)
    (prob,) = binary_problems(set_name, ds, split, ref.settings)
    assert prob.digest() == entry["digest"]
    K = _gram(prob.X, ref.settings)
    res = optimize_bound(K, prob.y[:prob.n_lab], prob.k, ref.settings.C, ref.settings.c_star,
                         labels_from_str(entry["labels"]), upper=entry["objective"], max_iter=150,
                         mus=(3.0, 0.3, 0.03))
    assert res.certificate.feasible
    assert res.bound <= entry["objective"] * (1 + 1e-12)
    # reported honestly: "certified optimal" only when the gap closes
    out = bound_entry(prob, res, entry["objective"], "branch and bound", "branch and bound")
    assert out["gap"] == pytest.approx((entry["objective"] - res.bound) / res.bound)
    assert out["certified_optimal"] == (out["gap"] <= CERTIFIED_GAP_TOL)


@pytest.mark.slow
@pytest.mark.parametrize("key", ["split0/class0", "split0/class1", "split0/class2"])
def test_bound_below_certified_coil3_optimum(data_env, key):
    ref = get_reference_set("coil3")
    entry = json.loads((OPTIMA_DIR / "coil3.json").read_text())["entries"][key]
    ds, split = ref.make(0)
    prob = next(p for p in binary_problems("coil3", ds, split, ref.settings) if p.key == key)
    assert prob.digest() == entry["digest"] and entry["certified"]
    K = _gram(prob.X, ref.settings)
    res = optimize_bound(K, prob.y[:prob.n_lab], prob.k, ref.settings.C, ref.settings.c_star,
                         labels_from_str(entry["labels"]), upper=entry["objective"], max_iter=300)
    assert res.certificate.feasible and res.bound <= entry["objective"] * (1 + 1e-12)


def test_stored_bounds_are_below_the_stored_best_objectives():
    from s3vm_bench.harness.optima import BOUND_SETS

    for name in BOUND_SETS:
        path = OPTIMA_DIR / f"bounds-{name}.json"
        if not path.is_file():
            continue
        for key, e in json.loads(path.read_text())["entries"].items():
            assert e["lower_bound"] <= e["best_objective"], key
            assert e["certified_optimal"] == (e["gap"] is not None and e["gap"] <= CERTIFIED_GAP_TOL)


@pytest.mark.parametrize("bad,exc", [
    (dict(k=2.0), TypeError), (dict(k=99), ValueError), (dict(y_lab=np.array([1.0, 1.0, 1.0, 1.0])), ValueError),
    (dict(y_lab=np.array([1.0, 0.0, 1.0, -1.0])), ValueError), (dict(C=-1.0), ValueError)])
def test_bad_input(tiny_certified, bad, exc):
    K, y, l, k, C, opt, res = tiny_certified
    kw = dict(K=K, y_lab=y[:l], k=k, C=C, C_star=C) | bad
    with pytest.raises(exc):
        check_dual_point(kw["K"], kw["y_lab"], kw["k"], kw["C"], kw["C_star"], res.point)
    with pytest.raises(TypeError):
        check_dual_point(K, y[:l], k, C, C, {"alpha": 1})
    with pytest.raises(ValueError):
        check_dual_point(K, y[:l], k, C, C, dataclasses.replace(res.point, lam=res.point.lam[:-1]))
    with pytest.raises(ValueError):
        dual_point_from_labels(K, y[:l], k, C, C, -np.ones(K.shape[0] - l))


def test_trivially_feasible_point_gives_a_valid_weak_bound(tiny_certified):
    K, y, l, k, C, opt, res = tiny_certified
    u = K.shape[0] - l
    big = DualPoint(np.zeros(l), 0.0, np.zeros(u), np.full(u + 1, 1e3), np.zeros(u + 1))
    cert = check_dual_point(K, y[:l], k, C, C, big)
    assert cert.feasible and cert.bound < 0 <= opt.objective


def test_compare_reports_objective_bound_and_gap(data_env, tmp_path):
    from s3vm_bench.harness.compare import BoundRow, compare, write_csv
    from s3vm_bench.harness.optima import build_bounds, load_bounds

    # a quickly computed (weak but certified) bound of g50c split 0, stored in a scratch folder
    build_bounds("g50c", 1, time_limit=0.5, directory=tmp_path, echo=lambda *a: None)
    entry = load_bounds("g50c", tmp_path)["entries"]["split0/class1"]
    lines = []
    rows = compare("newton", ["g50c"], 1, directory=tmp_path, echo=lines.append)
    (row,) = rows
    assert isinstance(row, BoundRow) and row.balance_exact
    assert row.lower_bound == entry["lower_bound"] <= row.objective
    assert row.gap == ((row.objective - row.lower_bound) / row.lower_bound if row.lower_bound > 0 else math.inf)
    assert not row.certified_optimal  # a 2-second bound does not close the gap, and must not say it does
    assert any(line.startswith("summary g50c") and "median certified gap" in line for line in lines)
    text = write_csv(rows, tmp_path / "c.csv", "newton").read_text()
    assert text.splitlines()[0].startswith("solver,set_name,split,label,objective,lower_bound,gap")
    with pytest.raises(ValueError, match="no stored lower bound"):
        compare("newton", ["g50c"], 2, directory=tmp_path, echo=lambda *a: None)


def test_compare_record_best_stores_only_a_lower_balanced_objective(data_env, tmp_path):
    """``compare --record-best`` replaces a stored best objective only by a lower balanced one (solver
    spec with its parameters, gap recomputed from the stored bound; not by one equal up to
    rounding), and a later forced bound build keeps it."""
    from s3vm_bench.harness.compare import compare
    from s3vm_bench.harness.optima import build_bounds, load_bounds, save_bounds

    quiet = lambda *a: None  # noqa: E731
    build_bounds("g50c", 1, time_limit=0.5, directory=tmp_path, echo=quiet)

    def set_best(value):  # and a positive bound (a half-second search gives a negative one): a gap to recompute
        store = load_bounds("g50c", tmp_path)
        store["entries"]["split0/class1"].update(lower_bound=500.0, best_objective=value, best_solver="stored")
        save_bounds(store, tmp_path)

    set_best(1e9)
    lines = []
    (row,) = compare("cccp", ["g50c"], 1, params={"anneal": True}, directory=tmp_path, record_best=True,
                     echo=lines.append)
    assert row.balance_exact
    e = load_bounds("g50c", tmp_path)["entries"]["split0/class1"]
    assert e["best_objective"] == row.objective and e["best_solver"] == 'cccp {"anneal": true}'
    assert e["gap"] == pytest.approx((row.objective - 500.0) / 500.0) and e["certified_optimal"] is False
    assert any(line.startswith("recorded cccp") for line in lines)
    assert load_bounds("g50c", tmp_path)["best_objective_from"].endswith("--record-best` (best_solver of each entry)")

    set_best(row.objective * (1 + 1e-12))  # a rounding-level difference is not a new best
    compare("cccp", ["g50c"], 1, params={"anneal": True}, directory=tmp_path, record_best=True, echo=quiet)
    e = load_bounds("g50c", tmp_path)["entries"]["split0/class1"]
    assert (e["best_objective"], e["best_solver"]) == (row.objective * (1 + 1e-12), "stored")

    set_best(row.objective - 1.0)  # a lower stored best stays
    compare("cccp", ["g50c"], 1, params={"anneal": True}, directory=tmp_path, record_best=True, echo=quiet)
    e = load_bounds("g50c", tmp_path)["entries"]["split0/class1"]
    assert (e["best_objective"], e["best_solver"]) == (row.objective - 1.0, "stored")

    set_best(1000.0)  # below the best Table 8 row (1144.28), which a build would store otherwise
    build_bounds("g50c", 1, time_limit=0.5, directory=tmp_path, force=True, echo=quiet)
    e = load_bounds("g50c", tmp_path)["entries"]["split0/class1"]
    assert (e["best_objective"], e["best_solver"]) == (1000.0, "stored")

    with pytest.raises(ValueError, match="record-best"):
        compare("newton", ["two_moons"], 1, record_best=True, echo=quiet)


def _counting_fits(name, fits):
    """The registered solver ``name``, appending to ``fits`` at each ``fit`` (one per binary
    problem for a solver that runs its dichotomic search inside ``fit``)."""
    cls = get_solver(name)
    return type(cls.__name__, (cls,), {"fit": lambda self, X, y: fits.append(1) or cls.fit(self, X, y)})

def test_compare_on_a_split_with_some_bounds_missing(data_env, monkeypatch):
    """A one-versus-rest split with bounds stored for some of its binary problems is compared on
    those, the others named; with none stored it is an error. (Coil3's three one-vs-rest problems
    stand in for Uspst's ten, with made-up bounds: only the bookkeeping is tested.)"""
    from s3vm_bench.harness import compare as cmp

    ref = get_reference_set("coil3")
    ds, split = ref.make(0)
    problems = binary_problems("coil3", ds, split, ref.settings)
    assert [p.key for p in problems] == ["split0/class0", "split0/class1", "split0/class2"]
    bounds = {"split0/class0": 1.0, "split0/class2": 2.0}
    monkeypatch.setattr(cmp, "bound_problems", lambda set_name, i: (ds, split, ref.settings, problems))
    monkeypatch.setattr(cmp, "load_bounds", lambda set_name, directory=None: {})
    monkeypatch.setattr(cmp, "lookup_bound", lambda prob, store: None if prob.key not in bounds else
                        {"lower_bound": bounds[prob.key], "seconds": 3.0})
    fitted = []
    monkeypatch.setattr(cmp, "get_solver", lambda name: _counting_fits(name, fitted))
    lines = []
    rows = cmp.compare("newton", ["uspst"], 1, echo=lines.append)
    assert [(r.split, r.label) for r in rows] == [(0, 0), (0, 2)]
    assert len(fitted) == 2  # the problem without a bound is not solved
    for r in rows:
        assert r.lower_bound == bounds[f"split0/class{r.label}"]
        assert r.gap == pytest.approx((r.objective - r.lower_bound) / r.lower_bound)
    (note,) = [line for line in lines if "no stored lower bound" in line]
    assert "1 of its 3" in note and "split0/class1" in note and "split0/class0" not in note
    assert any(line.startswith("summary uspst: 2 binary problems") for line in lines)
    bounds.clear()
    with pytest.raises(ValueError, match="no stored lower bound for uspst split 0"):
        cmp.compare("newton", ["uspst"], 1, echo=lines.append)



def test_build_bounds_of_some_problems_solves_only_those(data_env, tmp_path, monkeypatch):
    """``optima build --bounds --only KEY`` runs its starting solver on that binary problem only, not
    on every one-versus-rest problem of the split. (Coil3's three problems stand in for Uspst's.)"""
    import s3vm_bench.solvers
    from s3vm_bench.harness import optima_bounds
    from s3vm_bench.harness.optima import build_bounds, load_bounds

    ref = get_reference_set("coil3")
    ds, split = ref.make(0)
    problems = binary_problems("coil3", ds, split, ref.settings)
    monkeypatch.setattr(optima_bounds, "bound_problems", lambda set_name, i: (ds, split, ref.settings, problems))
    fitted = []
    monkeypatch.setattr(s3vm_bench.solvers, "get_solver", lambda name: _counting_fits(name, fitted))
    build_bounds("uspst", 1, only=["split0/class1"], time_limit=0.5, directory=tmp_path, echo=lambda *a: None)
    assert len(fitted) == 1
    entries = load_bounds("uspst", tmp_path)["entries"]
    assert list(entries) == ["split0/class1"] and entries["split0/class1"]["digest"] == problems[1].digest()
    assert entries["split0/class1"]["init_labels"] == "newton"

def test_build_bounds_keeps_entries_stored_by_a_concurrent_build(data_env, tmp_path, monkeypatch):
    from s3vm_bench.harness import certify
    from s3vm_bench.harness.optima import OPTIMA_DIR, build_bounds, load_bounds, save_bounds

    real = certify.optimize_bound

    def with_other_build(*args, **kwargs):
        # another build of g50c stores an entry while this one's search runs
        other = load_bounds("g50c", tmp_path)
        shipped = load_bounds("g50c", OPTIMA_DIR)["entries"]["split1/class1"]  # every field of a stored bound
        other["entries"]["split1/class1"] = dict(shipped, lower_bound=1.0, marker="other")
        save_bounds(other, tmp_path)
        return real(*args, **kwargs)

    monkeypatch.setattr(certify, "optimize_bound", with_other_build)
    build_bounds("g50c", 1, time_limit=0.5, directory=tmp_path, echo=lambda *a: None)
    entries = load_bounds("g50c", tmp_path)["entries"]
    assert entries["split1/class1"]["marker"] == "other"
    assert entries["split0/class1"]["lower_bound"] < entries["split0/class1"]["best_objective"]


def test_build_bounds_passes_the_iterations_per_stage(data_env, tmp_path, monkeypatch):
    """``max_iter`` (``optima build --bounds --max-iter``) caps every smoothing stage of the search."""
    from s3vm_bench.harness import certify
    from s3vm_bench.harness.optima import build_bounds, load_bounds

    seen = []
    real = certify.optimize_bound
    monkeypatch.setattr(certify, "optimize_bound", lambda *a, **kw: seen.append(kw["max_iter"]) or real(*a, **kw))
    build_bounds("g50c", 1, time_limit=60.0, max_iter=3, directory=tmp_path, echo=lambda *a: None)
    assert seen == [3]
    stages = load_bounds("g50c", tmp_path)["entries"]["split0/class1"]["stages"]
    assert len(stages) == 6 and all(0 < st["iterations"] <= 3 for st in stages)


def test_cli_bounds_options(monkeypatch, capsys, data_env):
    from s3vm_bench.harness import optima
    from s3vm_bench.harness.cli import main

    calls = []
    monkeypatch.setattr(optima, "build_bounds", lambda *a, **kw: calls.append((a, kw)) or {})
    assert main(["optima", "build", "g50c", "--bounds", "--n", "2", "--time-limit", "5"]) == 0
    assert calls == [(("g50c", 2), {"only": None, "force": False, "time_limit": 5.0, "graph_neighbors": None,
                                    "max_iter": 250})]
    assert main(["optima", "build", "uspst", "--bounds", "--n", "1", "--graph-neighbors", "20", "--max-iter", "600"]) == 0
    assert calls[-1] == (("uspst", 1), {"only": None, "force": False, "time_limit": 240.0, "graph_neighbors": 20,
                                        "max_iter": 600})
    for option in (["--graph-neighbors", "20"], ["--max-iter", "600"]):
        assert main(["optima", "build", "coil3", *option]) == 2
        assert f"{option[0]} applies to --bounds only" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["optima", "build", "g50c", "--bounds", "--max-iter", "0"])
    assert "--max-iter" in capsys.readouterr().err
    # the shipped g50c bounds and the per-solver table of certified gaps
    assert main(["optima", "show", "g50c", "--bounds"]) == 0
    out = capsys.readouterr().out
    assert "split9/class1" in out and "median certified gap" in out and "grad_da" in out
    assert main(["optima", "show", "two_moons_x", "--bounds"]) == 2


def test_compare_beyond_the_splits_of_a_bound_set_is_a_clear_error(data_env):
    """g50c holds 10 fixed JMLR 2008 splits: asking for more is a ValueError naming the count,
    not an IndexError, and it comes before any solver runs."""
    from s3vm_bench.harness.compare import compare

    with pytest.raises(ValueError, match="g50c has 10 JMLR 2008 splits"):
        compare("svm", ["g50c"], 11, echo=lambda *a: None)


@pytest.mark.parametrize("time_limit", [-1, 0, float("nan")])
def test_build_bounds_refuses_a_time_limit_that_is_not_positive_before_storing_anything(data_env, tmp_path,
                                                                                       time_limit):
    from s3vm_bench.harness.optima import build_bounds

    with pytest.raises(ValueError, match="time_limit"):
        build_bounds("g50c", 1, time_limit=time_limit, directory=tmp_path, echo=lambda *a: None)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("index", [1.7, "1", -1, True])
def test_bound_problems_refuses_a_split_index_that_is_not_a_count(index):
    from s3vm_bench.harness.optima_bounds import bound_problems

    with pytest.raises(ValueError, match="the split index must be an integer >= 0"):
        bound_problems("g50c", index)


def test_table8_rows_refuses_a_set_without_bounds():
    from s3vm_bench.harness.optima_bounds import table8_rows

    with pytest.raises(ValueError, match="no certified lower bounds for 'g50'"):
        table8_rows("g50")
