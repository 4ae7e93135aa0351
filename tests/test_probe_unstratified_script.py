"""scripts/probe_unstratified_r.py: uniformly drawn labeled sets that still label every class."""

import numpy as np
import pytest

from s3vm_bench.data_registry import Dataset
from tests._toy import load_script


def _dataset(counts=(60, 30, 10), seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(len(counts)), counts)
    return Dataset(name="toy3", X=rng.standard_normal((y.size, 2)), y=y, class_names=("a", "b", "c"))


def test_unstratified_splits_are_seeded_partitions_that_label_every_class():
    mod = load_script("probe_unstratified_r")
    ds = _dataset()
    splits = mod.unstratified_splits(ds, 20, n_labeled=6)
    again = mod.unstratified_splits(ds, 20, n_labeled=6)
    counts = []
    for s, t in zip(splits, again):
        s.check_partition(ds.y.size)
        assert s.labeled.size == 6 and s.labeled.size + s.unlabeled.size == ds.y.size
        np.testing.assert_array_equal(s.labeled, t.labeled)  # seeded
        c = np.bincount(ds.y[s.labeled], minlength=3)
        assert c.min() >= 1
        counts.append(tuple(c))
    # Not stratified: the stratified draw would always give (3, 2, 1) here (largest remainder).
    assert len(set(counts)) > 1
    # r_error is the largest labeled-vs-unlabeled class-fraction gap over the binary problems.
    s = splits[0]
    yl, yu = ds.y[s.labeled], ds.y[s.unlabeled]
    want = max(abs(np.mean(yl == k) - np.mean(yu == k)) for k in range(3))
    assert mod.r_error(ds, s) == pytest.approx(want)


def test_unstratified_splits_fail_clearly_when_a_class_cannot_be_labeled():
    mod = load_script("probe_unstratified_r")
    with pytest.raises(ValueError, match="labels all 3 classes"):
        mod.unstratified_splits(_dataset(counts=(98, 1, 1)), 1, n_labeled=2, max_draws=50)
