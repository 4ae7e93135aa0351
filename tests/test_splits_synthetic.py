"""Split protocols and synthetic generators: sizes from the papers, determinism, stratification."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from s3vm_bench.data_registry import (derive_seed, g50c_like, icml2006_splits, icml2013_splits, jmlr2008_splits,
                           load_dataset, make_splits, sigir2006_splits, two_circles, two_moons)
from s3vm_bench.data_registry.splits import stratified_sizes


def _check(split, n):
    split.check_partition(n)
    return split


def test_derive_seed_depends_on_every_part():
    base = derive_seed("g50c", "jmlr2008", 3, 0)
    assert base == derive_seed("g50c", "jmlr2008", 3, 0)
    others = {derive_seed("g50d", "jmlr2008", 3, 0), derive_seed("g50c", "icml2013", 3, 0),
              derive_seed("g50c", "jmlr2008", 4, 0), derive_seed("g50c", "jmlr2008", 3, 1)}
    assert base not in others and len(others) == 4
    assert 0 <= base < 2**63


def test_jmlr2008_uses_the_file_splits(data_env):
    ds = load_dataset("g50c")
    splits = jmlr2008_splits(ds)
    assert len(splits) == 10
    L, U = ds.splits[50]
    for i, s in enumerate(splits):
        _check(s, ds.n_samples)
        assert s.seed is None
        np.testing.assert_array_equal(s.labeled, L[i])
        np.testing.assert_array_equal(s.unlabeled, U[i])


@pytest.mark.parametrize("name,l", [("coil3", 6), ("coil20", 40), ("isolet", 50), ("2moons", 2)])
def test_jmlr2008_random_splits_cover_every_class(name, l, data_env):
    ds = load_dataset(name)
    splits = jmlr2008_splits(ds)
    assert len(splits) == 10
    for s in splits:
        _check(s, ds.n_samples)
        assert s.labeled.size == l and s.labeled.size + s.unlabeled.size == ds.n_samples
        assert set(ds.y[s.labeled]) == set(range(ds.n_classes)), "every class needs a labeled point"
    assert len({tuple(s.labeled) for s in splits}) == 10, "splits should differ"


def test_split_is_independent_of_the_others(data_env):
    ds = load_dataset("coil3")
    a = jmlr2008_splits(ds, n_splits=8)[7]
    b = jmlr2008_splits(ds, n_splits=10)[7]
    np.testing.assert_array_equal(a.labeled, b.labeled)
    c = jmlr2008_splits(ds, n_splits=10, base_seed=1)[7]
    assert not np.array_equal(a.labeled, c.labeled)


@pytest.mark.parametrize("name,sizes", [("usps2", (93, 1000, 32, 375)), ("coil6", (90, 1008, 30, 372)),
                                        ("text", (37, 1410, 13, 486))])
def test_icml2006_sizes(name, sizes, data_env):
    ds = load_dataset(name)
    for s in icml2006_splits(ds, n_splits=3):
        _check(s, ds.n_samples)
        assert (s.labeled.size, s.unlabeled.size, s.validation.size, s.test.size) == sizes


def test_icml2006_eset2_scaled(data_env):
    ds = load_dataset("eset2")
    s = icml2006_splits(ds, n_splits=1)[0]
    _check(s, ds.n_samples)
    assert s.labeled.size + s.unlabeled.size + s.validation.size + s.test.size == 1620
    assert s.labeled.size == int(np.ceil(33 * 1620 / 2700))


@pytest.mark.parametrize("name", ["ionosphere", "segment", "fourclass"])
def test_icml2013_protocol(name, data_env):
    ds = load_dataset(name)
    n = ds.n_samples
    l_ = min(30, int(0.1 * (n // 2)))
    for s in icml2013_splits(ds, n_splits=2):
        _check(s, n)
        assert s.labeled.size == l_ and s.validation.size == l_
        assert s.labeled.size + s.unlabeled.size == n // 2
        assert s.validation.size + s.test.size == n - n // 2


def test_sigir2006_learning_curve(data_env):
    ds = load_dataset("text")
    small = sigir2006_splits(ds, n_labeled=45, n_splits=2)
    big = sigir2006_splits(ds, n_labeled=180, n_splits=2)
    for a, b in zip(small, big):
        _check(a, ds.n_samples)
        assert a.test.size == 486 and a.labeled.size + a.unlabeled.size == 1460
        np.testing.assert_array_equal(a.test, b.test)  # same test part along the curve
        assert b.labeled.size == 180
    # class ratios kept in the test part (SIGIR 2006 footnote 14)
    frac = ds.y[small[0].test].mean()
    assert abs(frac - ds.y.mean()) < 0.01


@pytest.mark.parametrize("name, n, t", [("real-sim", 72309, 36154), ("aut-avn", 71175, 35587),
                                         ("ccat", 23149, 5787), ("news-autos-motorcycles", 1986, 496)])
def test_sigir2006_test_sizes_are_table_8s(name, n, t):
    """SIGIR 2006 Table 8's l + u / t: real-vs-simulated 36155 / 36154 and auto-vs-aviation 35588 / 35587
    (a half split, not a quarter), ccat 17332 / 5787; a data set it does not list keeps a quarter."""
    from s3vm_bench.data_registry import Dataset

    ds = Dataset(name, np.zeros((n, 1)), np.arange(n) % 2, ("a", "b"))
    split = sigir2006_splits(ds, n_labeled=45, n_splits=1)[0]
    assert split.test.size == t and split.labeled.size + split.unlabeled.size == n - t


def test_make_splits_dispatch(data_env):
    ds = load_dataset("g50c")
    assert len(make_splits(ds, "jmlr2008", n_splits=2)) == 2
    with pytest.raises(ValueError, match="unknown split protocol"):
        make_splits(ds, "nips2099")
    with pytest.raises(ValueError, match="ICML 2006 Table 3 has no sizes"):
        icml2006_splits(ds)


def test_stratified_sizes():
    y = np.r_[np.zeros(90, int), np.ones(10, int)]
    assert stratified_sizes(y, 10).tolist() == [9, 1]
    assert stratified_sizes(y, 2, min_per_class=1).tolist() == [1, 1]
    with pytest.raises(ValueError, match="cannot cover all"):
        stratified_sizes(np.arange(5), 3, min_per_class=1)


# ---------------------------------------------------------------------------------- synthetic
def test_two_moons_deterministic_and_shaped():
    a, b, c = two_moons(seed=1), two_moons(seed=1), two_moons(seed=2)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X[2:], c.X[2:])
    np.testing.assert_array_equal(a.X[:2], c.X[:2]), "labeled points are fixed across realizations"
    assert a.X.shape == (102, 2) and a.X_test.shape == (200, 2)
    assert np.bincount(a.y[2:]).tolist() == [50, 50]  # NIPS 2006: 50 unlabeled points per moon
    L, U = a.splits[2]
    assert L.tolist() == [[0, 1]] and set(a.y[L[0]]) == {0, 1}


def test_two_moons_geometry_matches_the_file(data_env):
    """The generator draws moons of the size of the papers' 2moons.mat (sigma = 0.5 is tuned to it)."""
    f = load_dataset("2moons")
    g = two_moons(seed=0, n_unlabeled=2000)
    for k in (0, 1):
        lo_f, hi_f = np.percentile(f.X[f.y == k], [5, 95], axis=0)
        lo_g, hi_g = np.percentile(g.X[g.y == k], [5, 95], axis=0)
        np.testing.assert_allclose(lo_g, lo_f, atol=0.3)
        np.testing.assert_allclose(hi_g, hi_f, atol=0.3)


def test_two_circles():
    ds = two_circles(seed=0, n=400)
    r = np.linalg.norm(ds.X, axis=1)
    assert np.all((r[ds.y == 1] < 0.75)) and np.all(r[ds.y == 0] > 0.75)
    np.testing.assert_array_equal(ds.X, two_circles(seed=0, n=400).X)


def test_g50c_like_bayes_error():
    ds = g50c_like(seed=0, n=200_000)
    assert ds.X.shape == (200_000, 50)
    # Bayes rule for +-mu with identity covariance: sign of sum(x) (mu is a constant vector)
    err = np.mean((ds.X.sum(axis=1) > 0).astype(int) != ds.y)
    assert abs(err - 0.05) < 0.003
    assert abs(norm.cdf(-np.linalg.norm(ds.X[ds.y == 1].mean(0))) - 0.05) < 0.01


def test_synthetic_requires_seed():
    with pytest.raises(ValueError, match="explicit integer seed"):
        two_moons(seed=None)
    with pytest.raises(ValueError, match="bayes_error"):
        g50c_like(seed=0, bayes_error=0.7)


@pytest.mark.parametrize("call,err,match", [
    (lambda: two_moons(seed=0, noise=float("nan")), ValueError, "noise must be finite and >= 0"),
    (lambda: two_moons(seed=0, noise=-1.0), ValueError, "noise must be finite and >= 0"),
    (lambda: two_moons(seed=0, noise="0.1"), TypeError, "noise must be a number"),
    (lambda: two_moons(seed=0, n_unlabeled=4.0), TypeError, "n_unlabeled must be an int"),
    (lambda: two_moons(seed=0, n_unlabeled=5), ValueError, "even number"),
    (lambda: two_moons(seed=0, n_test=-3), ValueError, "n_test must be an int >= 2"),
    (lambda: two_moons(seed=1.5), TypeError, "seed must be an int"),
    (lambda: two_circles(seed=0, radii=(1.0,)), ValueError, "radii must be two numbers"),
    (lambda: two_circles(seed=0, radii=1.0), ValueError, "radii must be two numbers"),
    (lambda: two_circles(seed=0, radii=(1.0, 0.5)), ValueError, "inner < outer"),
    (lambda: two_circles(seed=0, radii=(-1.0, 1.0)), ValueError, r"radii\[0\] must be finite and >= 0"),
    (lambda: two_circles(seed=0, noise=float("nan")), ValueError, "noise must be finite"),
    (lambda: two_circles(seed=0, n=5.5), TypeError, "n must be an int >= 4"),
    (lambda: two_circles(seed=0, n_test=1), ValueError, "n_test must be an int >= 2"),
    (lambda: g50c_like(seed=0, d=0), ValueError, "d must be an int >= 1"),
    (lambda: g50c_like(seed=0, n=1), ValueError, "n must be an int >= 2"),
])
def test_synthetic_generators_refuse_bad_arguments(call, err, match):
    """Noise, counts, radii and seeds are checked before any point is drawn."""
    with pytest.raises(err, match=match):
        call()


def test_synthetic_generators_take_numpy_integers_and_zero_noise():
    ds = two_moons(seed=np.int64(3), n_unlabeled=np.int64(10), noise=0)
    np.testing.assert_allclose(np.linalg.norm(ds.X[2:][ds.y[2:] == 1], axis=1), 1.25)  # on the upper moon exactly
    ds = two_circles(seed=np.int32(1), n=8, noise=0.0, radii=[0.0, 2.0], n_test=2)
    np.testing.assert_allclose(np.linalg.norm(ds.X, axis=1), np.where(ds.y == 1, 0.0, 2.0), atol=1e-15)


@pytest.mark.parametrize("call,err,match", [
    (lambda ds: jmlr2008_splits(ds, n_labeled=5.0), TypeError, "n_labeled must be an int >= 1"),
    (lambda ds: jmlr2008_splits(ds, n_labeled=0), ValueError, "n_labeled must be an int >= 1"),
    (lambda ds: jmlr2008_splits(ds, n_labeled=60), ValueError, "n_labeled = 60 leaves no unlabeled point: .* has 60 "
                                                              "training points; use at most 59"),
    (lambda ds: jmlr2008_splits(ds, n_labeled=6, base_seed=1.5), TypeError, "base_seed must be an int"),
    (lambda ds: icml2013_splits(ds, base_seed="0"), TypeError, "base_seed must be an int"),
    (lambda ds: sigir2006_splits(ds, n_labeled=45), ValueError, "n_labeled = 45 leaves no unlabeled point: .* has 45 "
                                                                "training points"),
    (lambda ds: sigir2006_splits(ds, n_labeled=6, n_test=60), ValueError, "n_test = 60 leaves no training point"),
    (lambda ds: sigir2006_splits(ds, n_labeled=6, n_test=-1), ValueError, "n_test must be an int >= 0"),
    (lambda ds: derive_seed(ds.name, "jmlr2008", 1.5), TypeError, "index must be an int"),
])
def test_split_protocols_refuse_counts_and_seeds_that_make_no_split(call, err, match):
    """60 labeled of 60 points gave splits with no unlabeled point; a float seed was truncated
    (base_seed=1.5 gave the splits of base_seed=1); a float count failed inside numpy."""
    with pytest.raises(err, match=match):
        call(g50c_like(seed=0, n=60))


def test_split_protocols_take_numpy_integers():
    ds = g50c_like(seed=0, n=60)
    a = jmlr2008_splits(ds, n_splits=2, n_labeled=np.int64(6), base_seed=np.int32(3))
    b = jmlr2008_splits(ds, n_splits=2, n_labeled=6, base_seed=3)
    assert [s.seed for s in a] == [s.seed for s in b] and np.array_equal(a[1].labeled, b[1].labeled)
    assert all(s.unlabeled.size == 54 for s in a)
    s = sigir2006_splits(ds, n_labeled=44)[0]  # the largest l that leaves an unlabeled point
    assert (s.labeled.size, s.unlabeled.size, s.test.size) == (44, 1, 15)
