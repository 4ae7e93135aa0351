"""CholeskyCache: kept, modified and new factors of K_SS + diag(d) all solve the same systems."""

import numpy as np
import pytest

from solvers._cholesky import CholeskyCache


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
