"""The small reference problems whose global optima :mod:`harness.optima` certifies and stores.

This module only *defines* the problems -- the data, the split, the kernel and costs of each binary
problem and its digest. The cells of protocol ``"reference"`` (NIPS 2006 Table 1, ICML 2006 Table 2)
build their problem here, and this module's ``RESULT_VERSION`` enters their key
(:func:`harness.grid.cell_key`): a change to how a set is built bumps it; how optima are searched,
stored or shown (:mod:`harness.optima`) is not part of the key.

Reference sets (:data:`REFERENCE_SETS`):

``two_moons``
    NIPS 2006 Table 1: realizations of :func:`data_registry.two_moons` (2 fixed labeled points,
    50 unlabeled points per moon, seed = realization index), Gaussian kernel sigma = 0.5,
    C = C* = 10 (NIPS Sec. 7.1).
``coil3``
    NIPS 2006 Table 2 and JMLR 2008 Table 1: the JMLR 2008 random splits of Coil3 (2 labeled
    images per class, 210 unlabeled), sigma = 3000, C = C* = 100, one-versus-rest (three binary
    problems per split, r exact).
``2moons``
    JMLR 2008 Table 1 on the 2moons.mat file we hold: JMLR 2008 random splits (2 labeled, 198
    unlabeled), sigma = 0.5, C = C* = 10.
``two_circles``
    ICML 2006 Table 2 (2CIRCLES): one fixed realization of :func:`data_registry.two_circles`
    (seed 0: 200 points, 100 per circle, radii 0.5 and 1, noise 0.05 -- the paper does not print
    its geometry) and, as problem ``i``, the ``i``-th seeded random choice of 2 labeled points
    (one per class, JMLR 2008 split protocol), 198 unlabeled; sigma = 0.5, C = C* = 10 as for
    ``2moons`` (ICML 2006 Table 2 sweeps a grid around them, :mod:`harness.specs`).

A problem's :meth:`BinaryProblem.digest` is the SHA-256 of the exact problem (training inputs in
order, labeled labels, n_lab, the balance target k, kernel, sigma, C, C*).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Callable

import numpy as np

from s3vm_bench import did_you_mean
from s3vm_bench.data_registry import Dataset, Split, jmlr2008_splits, load_dataset, two_circles, two_moons
from s3vm_bench.solvers.numerics import exact_r, n_positive

from .protocol import ProtocolSettings

__all__ = ["REFERENCE_SETS", "TWO_CIRCLES_SEED", "BinaryProblem", "ReferenceSet", "binary_problems",
           "get_reference_set"]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1


@dataclass(frozen=True)
class ReferenceSet:
    """A family of small problems with certified optima: how to make problem ``i`` and its settings."""

    name: str
    description: str
    paper: str
    settings: ProtocolSettings
    n_default: int
    make: Callable[[int], tuple[Dataset, Split]]
    files: tuple[str, ...] = ()
    synthetic: str = "data_registry.synthetic.two_moons"  # the generator, for sets without files


def _two_moons(i: int):
    ds = two_moons(seed=i)
    # The realization is the split: its fixed labeled/unlabeled partition, numbered by the seed.
    return ds, dataclasses.replace(jmlr2008_splits(ds, n_splits=1, n_labeled=2)[0], index=i, seed=i)


#: The realization behind the ``two_circles`` set: fixed data, only the labeled pair varies.
TWO_CIRCLES_SEED = 0


def _two_circles(i: int):
    ds = two_circles(seed=TWO_CIRCLES_SEED, n=200)
    return ds, jmlr2008_splits(ds, n_splits=i + 1, n_labeled=2)[i]


def _file_split(name: str):
    def make(i: int):
        ds = load_dataset(name)
        return ds, jmlr2008_splits(ds, n_splits=i + 1)[i]

    return make


REFERENCE_SETS: dict[str, ReferenceSet] = {
    "two_moons": ReferenceSet(
        "two_moons", "two moons realizations (data_registry.two_moons, seed = index), 2 labeled + 100 unlabeled",
        "NIPS 2006 Table 1", ProtocolSettings(sigma=0.5, C=10.0), 100, _two_moons),
    "coil3": ReferenceSet(
        "coil3", "Coil3, JMLR 2008 random splits (6 labeled, 210 unlabeled), one-versus-rest",
        "NIPS 2006 Table 2; JMLR 2008 Table 1", ProtocolSettings.for_dataset("coil3"), 10, _file_split("coil3"),
        ("coil20/COIL20.mat",)),
    "2moons": ReferenceSet(
        "2moons", "2moons.mat, JMLR 2008 random splits (2 labeled, 198 unlabeled)", "JMLR 2008 Table 1",
        ProtocolSettings.for_dataset("2moons"), 10, _file_split("2moons"), ("2moons/2moons.mat",)),
    "two_circles": ReferenceSet(
        "two_circles", "two circles (data_registry.two_circles, seed 0, 200 points), seeded random pair of labeled "
        "points (one per class), 198 unlabeled", "ICML 2006 Table 2",
        ProtocolSettings(sigma=0.5, C=10.0), 10, _two_circles, synthetic="data_registry.synthetic.two_circles"),
}


def get_reference_set(name: str) -> ReferenceSet:
    try:
        return REFERENCE_SETS[name]
    except KeyError:
        raise ValueError(f"no reference optima for {name!r}.{did_you_mean(name, REFERENCE_SETS)} The reference sets: "
                         f"{', '.join(REFERENCE_SETS)}") from None


@dataclass(frozen=True)
class BinaryProblem:
    """One binary problem of a reference set, in the order the protocol trains it."""

    set_name: str
    split: int
    label: int
    X: np.ndarray  # training inputs: labeled rows first, then unlabeled
    y: np.ndarray  # true +-1 labels of those rows
    n_lab: int
    k: int  # positives among the unlabeled points (the protocol's exact r)
    settings: ProtocolSettings

    @property
    def key(self) -> str:
        return f"split{self.split}/class{self.label}"

    @property
    def y_masked(self) -> np.ndarray:
        y = self.y.copy()
        y[self.n_lab:] = 0.0
        return y

    def digest(self) -> str:
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.X, dtype=np.float64).tobytes())
        h.update(np.ascontiguousarray(self.y[: self.n_lab], dtype=np.float64).tobytes())
        s = self.settings
        h.update(json.dumps([self.n_lab, self.k, s.kernel, s.sigma, s.C, s.c_star]).encode())
        return h.hexdigest()


def binary_problems(set_name: str, ds: Dataset, split: Split, settings: ProtocolSettings) -> list[BinaryProblem]:
    """The binary problems ``harness.protocol.run_split`` solves on this split, in its order."""
    idx = np.r_[split.labeled, split.unlabeled]
    X = np.asarray(ds.X[idx], dtype=np.float64)
    y_all = ds.y[idx]
    n_lab = split.labeled.size
    classes = np.arange(ds.n_classes)
    out = []
    for c in (classes[1:] if ds.n_classes == 2 else classes):
        y = np.where(y_all == c, 1.0, -1.0)
        k = n_positive(y.size - n_lab, exact_r(y[n_lab:]))
        out.append(BinaryProblem(set_name, split.index, int(c), X, y, n_lab, k, settings))
    return out
