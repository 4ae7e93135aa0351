"""JMLR 2008 Table 14: pairwise binary problems of the multi-class sets, and the Uspst2 view."""

import dataclasses
from itertools import combinations

import numpy as np
import pytest

import s3vm_bench.harness.grid as grid
from s3vm_bench.data_registry import Dataset, Split, jmlr2008_splits, load_dataset
from s3vm_bench.harness.pairwise import load_view, pair_problems, run_pairwise


def _toy():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 8)
    X = rng.normal(size=(24, 2)) + 3.0 * y[:, None]
    ds = Dataset("toy3", X, y, ("a", "b", "c"))
    lab = np.array([0, 1, 8, 9, 16])  # class c has one labeled point, a and b two
    unl = np.setdiff1d(np.arange(24), np.r_[lab, [23]])  # point 23 (class c) in no part
    return ds, Split("jmlr2008", 0, 7, lab, unl, np.empty(0, np.int64), np.empty(0, np.int64))


def test_each_pair_keeps_exactly_the_split_points_of_its_two_classes():
    ds, split = _toy()
    seen = []
    for (a, b), sub, sub_split in pair_problems(ds, split):
        seen.append((a, b))
        keep = np.flatnonzero(np.isin(ds.y, (a, b)))
        assert np.array_equal(sub.X, ds.X[keep]) and np.array_equal(sub.y, (ds.y[keep] == b).astype(int))
        # Mapped back to the parent's indices, the parts are the split's parts restricted to a, b.
        assert np.array_equal(keep[sub_split.labeled], [i for i in split.labeled if ds.y[i] in (a, b)])
        assert np.array_equal(keep[sub_split.unlabeled], [i for i in split.unlabeled if ds.y[i] in (a, b)])
        assert sub_split.seed == split.seed and sub.n_classes == 2
    assert seen == list(combinations(range(3), 2))


def test_a_pair_without_a_labeled_point_of_one_class_is_not_posed():
    ds, split = _toy()
    split = dataclasses.replace(split, labeled=np.array([0, 1, 8, 9]),
                                unlabeled=np.setdiff1d(np.arange(24), [0, 1, 8, 9]))
    posed = {pair: sub is not None for pair, sub, _ in pair_problems(ds, split)}
    assert posed == {(0, 1): True, (0, 2): False, (1, 2): False}


def test_uspst2_is_uspst_with_digits_five_to_nine_positive(data_env):
    uspst, view = load_dataset("uspst"), load_view("uspst2")
    assert view.n_classes == 2 and view.X is not None and view.X.shape == uspst.X.shape
    assert np.array_equal(view.y, (uspst.y >= 5).astype(int))
    assert view.class_names == ("0+1+2+3+4", "5+6+7+8+9")
    with pytest.raises(ValueError, match="unknown data set"):
        load_view("uspst3")


@pytest.mark.parametrize("name,n_pairs", [("coil3", 3), ("coil20", 190)])
def test_every_pair_has_labeled_points_of_both_classes_in_our_splits(data_env, name, n_pairs):
    # The spec's note says no pair is left out with our splits: checked here.
    ds = load_dataset(name)
    for split in jmlr2008_splits(ds, n_splits=10):
        posed = [sub is not None for _, sub, _ in pair_problems(ds, split)]
        assert len(posed) == n_pairs and all(posed)


def test_run_pairwise_averages_the_pairs_of_coil3(data_env):
    from s3vm_bench.harness.protocol import ProtocolSettings, run_split
    from s3vm_bench.solvers import get_solver

    svm, settings = get_solver("svm"), ProtocolSettings.for_dataset("coil3")
    res, info = run_pairwise(svm, {}, "coil3", 1, 10, settings)
    ds = load_dataset("coil3")
    split = jmlr2008_splits(ds)[1]
    errors = []
    for (a, b), _, _ in pair_problems(ds, split):
        # The pair built by hand from the parent's indices, not through harness.pairwise.
        keep = np.flatnonzero(np.isin(ds.y, (a, b)))
        pos = {int(i): k for k, i in enumerate(keep)}
        sub = Dataset("pair", ds.X[keep], (ds.y[keep] == b).astype(np.int64), ("neg", "pos"))
        part = lambda idx: np.array([pos[int(i)] for i in idx if int(i) in pos], dtype=np.int64)  # noqa: E731
        e = np.empty(0, np.int64)
        errors.append(run_split(svm, {}, sub, Split("x", 1, None, part(split.labeled), part(split.unlabeled), e, e),
                                settings).unlabeled_error)
    assert info == {"split_seed": split.seed, "pairs": 3, "pairs_skipped": 0}
    assert res.unlabeled_error == pytest.approx(np.mean(errors)) and len(res.binary) == 3


def test_pairwise_cells_key_on_the_pairwise_module_version(monkeypatch):
    import s3vm_bench.harness.pairwise as pairwise

    cell = grid.Cell("t", "coil3", "svm", 0, "jmlr2008-pairwise", 10, {}, {"C": 100.0})
    plain = dataclasses.replace(cell, protocol="jmlr2008")
    before, before_plain = cell.key(), plain.key()
    monkeypatch.setattr(pairwise, "RESULT_VERSION", pairwise.RESULT_VERSION + 1)
    grid.declared_versions.cache_clear()
    try:
        assert cell.key() != before and plain.key() == before_plain
    finally:
        monkeypatch.undo()
        grid.declared_versions.cache_clear()
