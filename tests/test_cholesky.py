"""CholeskyCache: kept, modified and new factors of K_SS + diag(d) all solve the same systems."""

import numpy as np
import pytest

from s3vm_bench.solvers._cholesky import CholeskyCache


def _kernel(n=60, d=5, seed=0):
    Z = np.random.default_rng(seed).standard_normal((n, d))
    return Z @ Z.T  # singular (rank d), as a centered kernel


def _check(cache, K, idx, diag, rng):
    assert cache.factor(idx, diag)
    M = K[np.ix_(idx, idx)] + np.diag(diag)
    rhs = rng.standard_normal((idx.size, 2))
    np.testing.assert_allclose(M @ cache.solve(rhs), rhs, atol=1e-9 * (1 + np.abs(M).max()))
    np.testing.assert_allclose(M @ cache.solve(rhs[:, 0]), rhs[:, 0], atol=1e-9 * (1 + np.abs(M).max()))


@pytest.mark.parametrize("seed", range(4))
def test_sequence_of_small_changes_solves_each_system(seed):
    rng = np.random.default_rng(seed)
    n = 60
    K = _kernel(n, seed=seed)
    cache = CholeskyCache(K)
    member = rng.random(n) < 0.6
    diag = rng.uniform(0.05, 2.0, n)
    for _ in range(40):
        flip = rng.choice(n, rng.integers(0, 4), replace=False)
        member[flip] = ~member[flip]
        member[rng.integers(n)] = True  # never empty
        change = rng.choice(n, rng.integers(0, 3), replace=False)
        diag[change] *= rng.choice([0.5, 2.0], change.size)  # updates and downdates
        idx = np.flatnonzero(member)
        _check(cache, K, idx, diag[idx], rng)
    assert cache.n_modify > 0 and cache.n_factor >= 1


def test_same_system_is_reused_and_unsorted_indices():
    rng = np.random.default_rng(7)
    K = _kernel(40)
    cache = CholeskyCache(K)
    idx = np.array([5, 3, 17, 30, 2, 11])
    d = np.full(idx.size, 0.3)
    _check(cache, K, idx, d, rng)
    _check(cache, K, idx, d, rng)
    assert (cache.n_factor, cache.n_reuse) == (1, 1)
    idx2 = np.r_[idx[:-1], 12]  # one point out, one in
    _check(cache, K, idx2, np.full(idx2.size, 0.3), rng)
    assert cache.n_modify == 1
    _check(cache, K, idx, d, rng)  # back again


def test_large_change_refactors_and_indefinite_is_refused():
    rng = np.random.default_rng(3)
    K = _kernel(50)
    cache = CholeskyCache(K)
    _check(cache, K, np.arange(10), np.ones(10), rng)
    _check(cache, K, np.arange(20, 50), np.ones(30), rng)
    assert cache.n_factor + cache.n_modify == 2  # (on 30 points the block path is as cheap)
    # a diagonal far below -lambda_max(K) cannot be factored, by modification or anew
    assert not cache.factor(np.arange(20, 50), np.r_[np.ones(29), -1e6])
    assert not cache.factor(np.arange(5), np.full(5, -1e6))
    _check(cache, K, np.arange(5), np.ones(5), rng)  # and the cache recovers


@pytest.mark.parametrize("seed", range(3))
def test_half_solves_and_gathered_blocks_match_dense(seed):
    """forward/backward (``L^-1``, ``L^-T``) against dense solves, through modified factors whose
    rows are permuted; the gathered blocks are the exact entries of K."""
    rng = np.random.default_rng(seed)
    n = 50
    K = rng.standard_normal((n, n))  # not symmetric: each entry must be read from its own place
    cache = CholeskyCache(K)
    rows, cols = rng.choice(n, 7, replace=False), rng.choice(n, 4, replace=False)
    assert np.array_equal(cache.block(rows, cols), K[np.ix_(rows, cols)])
    idx = rng.permutation(n)[:20]
    low = cache.lower_block(idx)
    assert low.flags.f_contiguous and np.array_equal(low, np.tril(K[np.ix_(idx, idx)]))
    S = _kernel(n, seed=seed)
    cache = CholeskyCache(S)
    member = rng.random(n) < 0.5
    d_all = rng.uniform(0.1, 1.0, n)
    permuted = 0
    for _ in range(15):
        flip = rng.choice(n, 2, replace=False)
        member[flip] = ~member[flip]
        idx = np.flatnonzero(member)
        diag = d_all[idx]
        assert cache.factor(idx, diag)
        permuted += cache._perm is not None
        M = S[np.ix_(idx, idx)] + np.diag(diag)
        R = rng.standard_normal((idx.size, 3))
        W = cache.forward(R)
        np.testing.assert_allclose(W.T @ W, R.T @ np.linalg.solve(M, R), rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(cache.backward(W[:, 0]), np.linalg.solve(M, R[:, 0]), rtol=1e-8, atol=1e-9)
    assert permuted > 0


def test_validation():
    with pytest.raises(ValueError, match="square"):
        CholeskyCache(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        CholeskyCache(np.array([[1.0, np.nan], [np.nan, 1.0]]))


def _sequential_reference(L, changes, leave):
    """The modifications of ``_modify_pass`` one after another, in NumPy: rank-one updates and
    downdates ``sign * v^2 e_j e_j^T`` (in the order given), then deletion of the rows/columns
    ``leave`` in increasing order, each a rank-one update ``+ L[j+1:, j] L[j+1:, j]^T`` of the
    trailing block (Golub & Van Loan Sec. 6.5.4); returns the kept rows/columns."""
    L = L.copy()
    m = L.shape[0]

    def rank_one(x, sign, start):
        for k in range(start, m):
            if x[k] == 0.0:
                continue
            r = np.sqrt(L[k, k] * L[k, k] + sign * x[k] * x[k])
            c, s = r / L[k, k], x[k] / L[k, k]
            L[k, k] = r
            lik = (L[k + 1:, k] + sign * s * x[k + 1:]) * (1.0 / c)
            L[k + 1:, k] = lik
            x[k + 1:] = c * x[k + 1:] - s * lik

    for j, sign, v in changes:
        x = np.zeros(m)
        x[j] = v
        rank_one(x, sign, j)
    for j in np.sort(leave):
        x = np.zeros(m)
        x[j + 1:] = L[j + 1:, j]
        rank_one(x, 1.0, j + 1)
    keep = np.setdiff1d(np.arange(m), leave)
    return np.tril(L[np.ix_(keep, keep)])


@pytest.mark.parametrize("seed", range(3))
def test_one_pass_modification_is_the_sequence_of_rank_one_modifications(seed):
    """Diagonal updates and downdates and deletions applied column by column in one pass give the
    factor of the modified matrix, and the same numbers as applying them one after another."""
    from s3vm_bench.solvers._cholesky import _modify_pass

    rng = np.random.default_rng(seed)
    m = 30
    K = _kernel(m, seed=seed)
    A = K + np.diag(rng.uniform(0.5, 2.0, m))
    L0 = np.asfortranarray(np.linalg.cholesky(A))
    cols = rng.choice(m, 6, replace=False)
    signs = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
    vals = np.sqrt(rng.uniform(0.05, 0.4, 6))
    leave = np.sort(rng.choice(np.setdiff1d(np.arange(m), cols), 5, replace=False))
    mask = np.zeros(m, bool)
    mask[leave] = True
    keep = np.flatnonzero(~mask)
    out = np.empty((keep.size, keep.size), order="F")
    L = L0.copy(order="F")
    assert _modify_pass(L, cols, signs, vals, mask, keep, out)
    got = np.tril(out)
    ref = _sequential_reference(L0, list(zip(cols, signs, vals)), leave)
    np.testing.assert_array_equal(got, ref)  # the same operations on the same operands
    target = A + np.diag(np.bincount(cols, weights=signs * vals ** 2, minlength=m))
    np.testing.assert_allclose(got @ got.T, target[np.ix_(keep, keep)], atol=1e-10)
    # a downdate below positive definiteness is refused
    L = L0.copy(order="F")
    assert not _modify_pass(L, cols[:1], np.array([-1.0]), np.array([1e3]), np.zeros(m, bool), np.arange(m), L)


def test_large_change_is_a_modification_when_cheaper_and_solves_the_new_system(monkeypatch):
    """With many points leaving and entering and diagonal entries changing at once, the cache
    modifies the factor (when its cost model says so) and the result solves the new system."""
    import s3vm_bench.solvers._cholesky as chol

    rng = np.random.default_rng(11)
    n = 80
    K = _kernel(n)
    cache = CholeskyCache(K, refresh=10**6)
    idx = np.sort(rng.choice(n, 50, replace=False))
    diag = rng.uniform(0.2, 1.0, n)
    _check(cache, K, idx, diag[idx], rng)
    out_pts = rng.choice(idx, 15, replace=False)
    in_pts = rng.choice(np.setdiff1d(np.arange(n), idx), 12, replace=False)
    idx2 = np.sort(np.r_[np.setdiff1d(idx, out_pts), in_pts])
    diag[rng.choice(idx2, 8, replace=False)] *= rng.choice([0.5, 3.0], 8)
    monkeypatch.setattr(chol, "_SWEEP_COST", 0.0)
    monkeypatch.setattr(chol, "_COPY_COST", 0.0)
    monkeypatch.setattr(chol, "_TRSM_COST", 0.0)
    _check(cache, K, idx2, diag[idx2], rng)
    assert (cache.n_factor, cache.n_modify) == (1, 1)


@pytest.mark.parametrize("seed", range(3))
def test_recalled_factors_are_those_of_new_factorizations(seed):
    """With ``recall``, a (S, d) factored anew among the last ``recall`` new factorizations is not
    factored again: the Levenberg-Marquardt lam cycling on one support set (JMLR 2008 Alg. 6). Every
    solve is bit-for-bit that of a cache without recall, through modifications of a recalled factor
    (which must leave the kept one intact) and a recalled failure."""
    rng = np.random.default_rng(seed)
    n = 60
    K = _kernel(n, seed=seed)
    idx = np.sort(rng.choice(n, 35, replace=False))
    d_all = rng.uniform(0.1, 1.0, n)
    d = d_all[idx]
    idx2 = np.sort(np.r_[idx[:-2], np.setdiff1d(np.arange(n), idx)[:1]])  # two out, one in: modified
    bad = np.r_[np.ones(idx.size - 1), -1e6]  # not positive definite
    sequence = [(idx, d), (idx, 4 * d), (idx, 2 * d), (idx, d), (idx2, d_all[idx2]), (idx, d), (idx, 4 * d),
                (idx, 2 * d), (idx, bad), (idx, bad), (idx, d), (idx, 2 * d)]
    # refresh=5: a change of every diagonal entry (a new lam) is a new factorization, the first
    # change of three points a modification (of a recalled factor), the second a new factorization
    plain, kept = CholeskyCache(K, refresh=5), CholeskyCache(K, refresh=5, recall=3)
    for i, (s, diag) in enumerate(sequence):
        ok = plain.factor(s, diag)
        assert kept.factor(s, diag) == ok
        if ok:
            rhs = rng.standard_normal((s.size, 2))
            np.testing.assert_array_equal(kept.solve(rhs), plain.solve(rhs))
            np.testing.assert_array_equal(kept.forward(rhs), plain.forward(rhs))
    assert (kept.n_recall, kept.n_modify, plain.n_recall) == (6, 1, 0)
    assert (kept.n_factor, kept.n_modify, kept.n_reuse) == (plain.n_factor, plain.n_modify, plain.n_reuse)


@pytest.mark.parametrize("name", ["cccp", "newton"])
def test_a_dichotomic_search_validates_its_kernel_once_not_at_every_solve(name, monkeypatch):
    """No O(n^2) validation inside the search loop: the centered kernel is checked once, when it
    is built, and each solve's factorization cache takes it as checked."""
    import s3vm_bench.solvers._cholesky as cholesky_module
    import s3vm_bench.solvers._mean_output as mean_output_module
    from s3vm_bench.solvers import get_solver

    checked = {"cache": 0, "centered": 0}

    def counting(where, check):
        def wrapped(K):
            checked[where] += 1
            return check(K)
        return wrapped

    monkeypatch.setattr(cholesky_module, "check_kernel_matrix",
                        counting("cache", cholesky_module.check_kernel_matrix))
    monkeypatch.setattr(mean_output_module, "check_kernel_matrix",
                        counting("centered", mean_output_module.check_kernel_matrix))
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    y = np.full(60, -1)
    y[:4] = [0, 1, 0, 1]
    est = get_solver(name)(sigma=1.0, C=10.0).fit(X, y)
    assert est.binary_fits_[0].info["dichotomic_iter"] >= 2  # several solves, one kernel
    assert checked == {"cache": 0, "centered": 1}
    with pytest.raises(ValueError, match="NaN or inf"):  # a cache made by others still checks its K
        CholeskyCache(np.full((3, 3), np.nan))
