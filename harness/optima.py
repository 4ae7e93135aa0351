"""Reference optima of the small benchmark problems, computed once by branch and bound and stored.

The S3VM objective of the common protocol (JMLR 2008 Sec. 5.2, eq. 1 with p = 2) is globally
minimized over balanced labelings by :mod:`solvers.bb` (NIPS 2006, Alg. 1) for every binary
problem of the reference sets below; the results live in ``harness/optima/<set>.json`` so that
``s3vm-bench compare``, the asv suites and the reports read them instead of recomputing.

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

Each stored entry is keyed by ``split<i>/class<k>`` and carries the SHA-256 ``digest`` of the
exact problem (training inputs in order, labeled labels, n_lab, the balance target k, kernel,
sigma, C, C*): a lookup whose digest no longer matches (the generator, the split protocol or the
data changed) is treated as missing, never silently reused. An entry records the optimal
labeling, its objective, the certified lower bound, the relative gap and the status: it is a
*certified* optimum only when ``status == "optimal"``; otherwise (a time or node limit) it is the
best labeling known with a valid lower bound. ``initial`` says whether the search was seeded with
an upper bound: ``"ground_truth"`` means the true labeling's objective seeded the incumbent --
this only speeds up pruning, the certificate is the search's lower bound either way, but an
uncertified entry whose ``found_by`` is ``"initial labeling"`` *is* the true labeling.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from data_registry import Dataset, Split, jmlr2008_splits, load_dataset, two_circles, two_moons
from solvers._balance import exact_r, n_positive
from solvers._primal import kernel_newton

from .protocol import ProtocolSettings, _gram

__all__ = ["REFERENCE_SETS", "OPTIMA_DIR", "BinaryProblem", "ReferenceSet", "binary_problems", "build",
           "certify", "load_store", "lookup", "optimum_model", "save_store"]

OPTIMA_DIR = Path(__file__).with_name("optima")
FORMAT = 1


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
        raise ValueError(f"no reference optima for {name!r}; reference sets: {', '.join(REFERENCE_SETS)}") from None


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


# ------------------------------------------------------------------------------------ storage
def _path(set_name: str, directory=None) -> Path:
    return Path(directory or OPTIMA_DIR) / f"{set_name}.json"


def load_store(set_name: str, directory=None) -> dict:
    """The stored reference file of a set (an empty one if none exists yet)."""
    ref = get_reference_set(set_name)
    path = _path(set_name, directory)
    if not path.is_file():
        s = ref.settings
        return {"format": FORMAT, "set": set_name, "description": ref.description, "paper": ref.paper,
                "settings": {"kernel": s.kernel, "sigma": s.sigma, "C": s.C, "C_star": s.c_star, "r": "exact"},
                "data": _data_checksums(ref), "entries": {}}
    store = json.loads(path.read_text("utf-8"))
    if store.get("format") != FORMAT:
        raise ValueError(f"{path} has format {store.get('format')!r}; this version reads format {FORMAT}")
    return store


def save_store(store: dict, directory=None) -> Path:
    """Write the store atomically (a temporary file renamed over the old one: never half-written)."""
    path = _path(store["set"], directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    store = dict(store, entries=dict(sorted(store["entries"].items(), key=lambda kv: _sort_key(kv[0]))))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(store, fh, indent=1)
            fh.write("\n")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would make the shipped file private
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _sort_key(key: str):
    split, cls = key.split("/")
    return int(split[5:]), int(cls[5:])


def _data_checksums(ref: ReferenceSet) -> dict:
    if not ref.files:
        return {"synthetic": ref.synthetic}
    from data_registry import registry

    reg = registry()
    return {f: reg[f][0] for f in ref.files}


def lookup(problem: BinaryProblem, store: dict) -> dict | None:
    """The stored entry of ``problem``, or None if missing or computed for a different problem."""
    entry = store["entries"].get(problem.key)
    if entry is None:
        return None
    if entry["digest"] != problem.digest():
        warnings.warn(f"stored optimum {store['set']}/{problem.key} was computed for different data or settings "
                      "(digest mismatch); it is ignored -- rebuild it with `s3vm-bench optima build`", stacklevel=2)
        return None
    return entry


# ------------------------------------------------------------------------------------ compute
def _module_sha() -> str:
    import solvers.bb as bb

    return hashlib.sha256(Path(bb.__file__).read_bytes()).hexdigest()[:16]


def labels_to_str(labels) -> str:
    return "".join("+" if v > 0 else "-" for v in labels)


def labels_from_str(text: str) -> np.ndarray:
    return np.array([1.0 if ch == "+" else -1.0 for ch in text])


def certify(problem: BinaryProblem, *, time_limit=None, node_limit=None, seed_truth=False, gram=None) -> dict:
    """Run branch and bound on one problem; return the entry to store.

    Parameters
    ----------
    seed_truth : bool
        Seed the incumbent with the true labeling (a valid upper bound that only speeds up
        pruning; recorded as ``initial = "ground_truth"``).
    """
    from solvers.bb import branch_and_bound, s3vm_objective

    s = problem.settings
    K = _gram(problem.X, s) if gram is None else gram
    y = problem.y_masked
    truth = problem.y[problem.n_lab:]
    j_true = float(s3vm_objective(K, y, truth, s.C, s.c_star).objective)
    res = branch_and_bound(K, y, problem.k, s.C, s.c_star, time_limit=time_limit, node_limit=node_limit,
                           initial_labels=truth if seed_truth else None)
    return {"digest": problem.digest(), "split": problem.split, "label": problem.label,
            "u": int(truth.size), "k": problem.k, "objective": res.objective, "lower_bound": res.lower_bound,
            "gap": res.gap, "status": res.status, "certified": res.status == "optimal", "nodes": res.nodes,
            "seconds": round(res.seconds, 3), "initial": "ground_truth" if seed_truth else "none",
            "found_by": "search" if res.found_at_node else "initial labeling",
            "unlabeled_error": float(np.mean(res.labels != truth)), "objective_true_labels": j_true,
            "labels": labels_to_str(res.labels), "bb_module_sha256": _module_sha(),
            "time_limit": time_limit, "node_limit": node_limit}


def build(set_name: str, n: int | None = None, *, time_limit=None, node_limit=None, seed_truth=False,
          directory=None, force=False, echo=print) -> dict:
    """Compute the missing (or, with ``force``, all) entries of the first ``n`` problems; save after each."""
    ref = get_reference_set(set_name)
    n = ref.n_default if n is None else int(n)
    if n < 1:
        raise ValueError(f"the number of problems must be >= 1, got {n}")
    store = load_store(set_name, directory)
    for i in range(n):
        ds, split = ref.make(i)
        gram = None
        for prob in binary_problems(set_name, ds, split, ref.settings):
            if not force and lookup(prob, store) is not None:
                continue
            gram = _gram(prob.X, ref.settings) if gram is None else gram
            t0 = time.perf_counter()
            entry = certify(prob, time_limit=time_limit, node_limit=node_limit, seed_truth=seed_truth, gram=gram)
            store["entries"][prob.key] = entry
            save_store(store, directory)
            echo(f"{set_name} {prob.key}: objective {entry['objective']:.4f} lower bound {entry['lower_bound']:.4f} "
                 f"{entry['status']} ({entry['nodes']} nodes, {time.perf_counter() - t0:.2f} s)")
    return store


def optimum_model(problem: BinaryProblem, labels) -> tuple[np.ndarray, float]:
    """(beta, b) of the L2-SVM on the completed labeling: evaluates the optimum on new points."""
    s = problem.settings
    y = problem.y_masked
    y[problem.n_lab:] = labels
    cost = np.where(np.arange(y.size) < problem.n_lab, s.C, s.c_star)
    res = kernel_newton(_gram(problem.X, s), y, cost)
    return res.coef, res.intercept
