"""JMLR 2008 Sec. 5.6.1 (Table 14): the S3VMs on pairwise binary problems of the multi-class sets.

"We compared different algorithms on pairwise binary classification tasks for all the multiclass
problems" -- one binary problem per pair of classes, built with every label (the unlabeled points
of a pair are those of its two classes), and "Uspst2 [...] the same set as Uspst but where the
task is to classify digits 0 to 4 versus 5 to 9".

A cell of protocol :data:`PROTOCOL` runs one solver on one JMLR 2008 split of the parent data
set: for every pair of classes (a, b), a < b, the labeled and unlabeled points of the split that
belong to a or b form a two-class problem (class b positive) that goes through the common
protocol (:func:`harness.protocol.run_split`: same kernel, C, C*, exact r of the pair, dichotomic
search, recomputed objective). The cell's unlabeled error and objective are the means over the
pairs (the paper does not say how it averaged; pairs of the same data set are of equal size up to
the class counts), its seconds the sum. A grouped set such as ``uspst2`` is first relabeled into
two classes, so its only pair is the whole set.

The paper's splits are those of its Table 8 (Table 4's l): a pair gets the split's labeled points
of its two classes, e.g. about 10 of Uspst's 50; a pair one of whose classes has no labeled point
in the split is left out of that split's means (counted in ``pairs_skipped``).
"""

from __future__ import annotations

import dataclasses
from itertools import combinations

import numpy as np

from s3vm_bench.data_registry import Dataset, Split, load_dataset, make_splits

from .protocol import ProtocolSettings, SplitResult, run_split

__all__ = ["PROTOCOL", "GROUPED", "parent_name", "load_view", "pair_problems", "run_pairwise"]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1

#: Cell protocol name of the pairwise runs (splits: the parent data set's ``jmlr2008`` splits).
PROTOCOL = "jmlr2008-pairwise"

#: Binary views of a multi-class set: name -> (parent, classes of the negative group, of the positive).
GROUPED = {"uspst2": ("uspst", (0, 1, 2, 3, 4), (5, 6, 7, 8, 9))}  # JMLR 2008 Table 14, "Uspst2"


def parent_name(name: str) -> str:
    """The catalog data set behind ``name`` (itself unless it is a view of :data:`GROUPED`)."""
    return GROUPED[name][0] if name in GROUPED else name


def load_view(name: str) -> Dataset:
    """Load a catalog data set, or a grouped view of one relabeled into two classes."""
    if name not in GROUPED:
        return load_dataset(name)
    parent, neg, pos = GROUPED[name]
    ds = load_dataset(parent)
    if set(neg) & set(pos) or set(neg) | set(pos) != set(range(ds.n_classes)):
        raise ValueError(f"view {name!r}: the groups must partition the {ds.n_classes} classes of {parent!r}")
    y = np.isin(ds.y, pos).astype(np.int64)
    names = ("+".join(ds.class_names[k] for k in neg), "+".join(ds.class_names[k] for k in pos))
    return dataclasses.replace(ds, name=name, y=y, class_names=names,
                               description=f"{parent} relabeled: {names[0]} vs {names[1]} (JMLR 2008 Table 14)",
                               X_test=None, y_test=None)


def _subset(ds: Dataset, split: Split, a: int, b: int) -> tuple[Dataset, Split]:
    """The two-class problem of classes a (negative) and b (positive) of one split."""
    keep = np.flatnonzero((ds.y == a) | (ds.y == b))
    new = np.full(ds.y.size, -1, dtype=np.int64)
    new[keep] = np.arange(keep.size)

    def part(idx):
        idx = np.asarray(idx, dtype=np.int64)
        return new[idx[new[idx] >= 0]]

    sub = dataclasses.replace(ds, name=f"{ds.name}[{ds.class_names[a]} vs {ds.class_names[b]}]", X=ds.X[keep],
                              y=(ds.y[keep] == b).astype(np.int64), class_names=(ds.class_names[a], ds.class_names[b]),
                              X_test=None, y_test=None, splits={})
    empty = np.empty(0, np.int64)
    return sub, Split(split.protocol, split.index, split.seed, part(split.labeled), part(split.unlabeled), empty,
                      empty)


def pair_problems(ds: Dataset, split: Split):
    """Yield ``((a, b), sub_dataset, sub_split)`` for every pair of classes a < b.

    A pair whose split lacks a labeled point of either class yields ``None`` for the data set
    and split (no problem can be posed: the protocol needs both classes labeled).
    """
    for a, b in combinations(range(ds.n_classes), 2):
        sub, sub_split = _subset(ds, split, a, b)
        lab_y = sub.y[sub_split.labeled]
        if lab_y.size == 0 or lab_y.min() == lab_y.max() or sub_split.unlabeled.size == 0:
            yield (a, b), None, None
        else:
            yield (a, b), sub, sub_split


def run_pairwise(solver_cls, params: dict, name: str, split_index: int, n_splits: int,
                 settings: ProtocolSettings) -> tuple[SplitResult, dict]:
    """Run one solver on every pairwise problem of split ``split_index`` of data set (or view) ``name``.

    Returns
    -------
    result : SplitResult
        Unlabeled error and objective: means over the pairs; seconds: their sum; ``binary``: one
        entry per pair.
    info : dict
        ``split_seed``, ``pairs`` (run) and ``pairs_skipped`` (no labeled point of a class).
    """
    ds = load_view(name)
    parent = load_dataset(parent_name(name)) if name in GROUPED else ds
    split = make_splits(parent, "jmlr2008", n_splits=n_splits)[split_index]
    results, skipped = [], 0
    for _, sub, sub_split in pair_problems(ds, split):
        if sub is None:
            skipped += 1
            continue
        results.append(run_split(solver_cls, params, sub, sub_split, settings))
    if not results:
        raise ValueError(f"no pair of classes of {name} has labeled points of both classes in split {split_index}")
    res = SplitResult(objective=float(np.mean([r.objective for r in results])),
                      unlabeled_error=float(np.mean([r.unlabeled_error for r in results])), test_error=None,
                      fit_seconds=float(sum(r.fit_seconds for r in results)),
                      binary=[b for r in results for b in r.binary],
                      balance_exact=all(r.balance_exact for r in results))
    return res, {"split_seed": split.seed, "pairs": len(results), "pairs_skipped": skipped}
