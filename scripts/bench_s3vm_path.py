"""Benchmark: time of the entire S3VM-path over the time of S3VM-light with 10 annealing steps.

Issue 7 (speed of S3VM-path): the goal is ``path / light <= 1`` on the cells of the ICML 2013
protocol. Each cell is a (data set, split, C, gamma) of ``harness/icml2013.py``, prepared
by its functions (``load_binary``, ``icml2013_splits``: features scaled to [-1, 1], the binary
problem, labeled + unlabeled training points) and timed the way ``run_split`` times it: one fit
of ``S3VMPath(sigma, C)`` (kernel, centering and the whole path over C* in [0, C]) and one fit of
``S3VMLight(sigma, C, C_star=C, anneal_start=2^-9, anneal_factor=2)`` (10 annealing steps),
one after the other in the same process. Each cell is repeated ``--repeats`` times (path and
light alternate, so a change of machine load affects both); the medians and their ratio are
printed per cell, then the median ratio over the cells.

``--save PATHS.npz`` stores the path of every cell (knots C*, labels y^, objective J, kinds,
alpha, training outputs) and ``--compare PATHS.npz`` checks the current code's paths against a
stored run: same number and kinds of knots, same labels, C*, J and training outputs at every knot
equal to ``--rtol`` (relative; see :func:`compare_paths`), so a speed change can be shown not to
change what the path computes. ``--path-module FILE`` times the ``S3VMPath`` of a saved copy of
``solvers/s3vm_path.py`` instead (an earlier version, under the same machine load as the current
one). Usage (keep the CPU use to one core; the machine load moves the ratios, so compare runs
made one after the other)::

    cp solvers/s3vm_path.py /tmp/s3vm_path_before.py
    OPENBLAS_NUM_THREADS=1 S3VM_DATA_MIRROR=../shared/data \
        .venv/bin/python scripts/bench_s3vm_path.py --repeats 5 --save /tmp/paths_before.npz
    # ... change solvers/s3vm_path.py ...
    OPENBLAS_NUM_THREADS=1 S3VM_DATA_MIRROR=../shared/data \
        .venv/bin/python scripts/bench_s3vm_path.py --repeats 5 --compare /tmp/paths_before.npz
    OPENBLAS_NUM_THREADS=1 S3VM_DATA_MIRROR=../shared/data \
        .venv/bin/python scripts/bench_s3vm_path.py --repeats 5 --path-module /tmp/s3vm_path_before.py
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from s3vm_bench.harness.icml2013 import DATASETS, load_binary  # noqa: E402

#: Default cells: gamma = 1/d, C in {1, 10, 100}, split 0, on small (D1, D5, D8) and the larger
#: sets (D2, D6) of the ICML 2013 table.
DEFAULT_DATASETS = ("D1", "D5", "D8", "D2", "D6")
DEFAULT_C = (1.0, 10.0, 100.0)


def prepare(pid: str, index: int):
    """Training set of split ``index`` of data set ``pid`` as in ``harness.icml2013.run_split``.

    Returns
    -------
    Xtr : ndarray (n, d)
        Labeled points first, then the unlabeled ones.
    ytr : ndarray (n,)
        0/1 labels on the labeled points, -1 on the unlabeled ones.
    d : int
        Number of features (after dropping constant ones), for gamma = factor / d.
    """
    from s3vm_bench.data_registry import icml2013_splits

    ds, X, y = load_binary(DATASETS[pid][0])
    sp = icml2013_splits(ds, index + 1)[index]
    Xtr = np.vstack([X[sp.labeled], X[sp.unlabeled]])
    ytr = np.r_[y[sp.labeled], np.full(sp.unlabeled.size, -1)]
    return Xtr, ytr, X.shape[1]


def load_path_class(source=None):
    """``S3VMPath`` of ``solvers/s3vm_path.py``, or of another copy of that file (``source``).

    Timing a saved copy of an earlier version in the same run as the current one (``--path-module``)
    compares the two under the same machine load without touching the working tree.
    """
    if source is None:
        from s3vm_bench.solvers.s3vm_path import S3VMPath

        return S3VMPath
    import importlib.util

    import solvers

    spec = importlib.util.spec_from_file_location("solvers._bench_s3vm_path", source)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = solvers.__name__
    sys.modules[spec.name] = mod  # dataclasses look their module up here
    spec.loader.exec_module(mod)
    return mod.S3VMPath


def time_cell(Xtr, ytr, C: float, gamma: float, repeats: int, path_class=None):
    """Seconds of ``repeats`` path fits and light fits (alternating), the last path fitted and
    its outputs on the training points at every knot (``(knots, n)``)."""
    from s3vm_bench.solvers.s3vm_light import S3VMLight

    S3VMPath = path_class or load_path_class()

    sigma = 1.0 / math.sqrt(2.0 * gamma)
    t_path, t_light = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        est = S3VMPath(sigma=sigma, C=C).fit(Xtr, ytr)
        t_path.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        light = S3VMLight(sigma=sigma, C=C, C_star=C, anneal_start=2.0 ** -9, anneal_factor=2.0).fit(Xtr, ytr)
        t_light.append(time.perf_counter() - t0)
        steps = len(light.binary_fits_[0].info["anneal_schedule"])
        if steps != 10:
            raise RuntimeError(f"S3VM-light ran {steps} annealing steps, expected 10")
    path = est.paths_[0]
    outputs = path.alpha @ est._kernel(Xtr) + path.intercept[:, None]
    return np.array(t_path), np.array(t_light), path, outputs


def _key(pid, split, C, gf):
    return f"{pid}_s{split}_C{C:g}_g{gf:g}"


def compare_paths(path, outputs, ref: dict, key: str, rtol: float) -> str:
    """'ok ...' or a description of the first difference between ``path`` and the stored one.

    Compared: the kinds of the knots, the labels y^, C*, the objective J and the outputs on the
    training points at every knot (relative to the largest magnitude). The coefficients alpha are
    reported but not required to agree: with duplicated training points (splice, segment) only the
    sum of their coefficients is determined, and round-off can split it differently without
    changing any output.
    """
    if key + "/c_star" not in ref:
        return "not stored"
    kind = ref[key + "/kind"]
    if path.kind.size != kind.size or np.any(path.kind != kind):
        return f"knots differ ({path.kind.size} vs {kind.size} stored)"
    if np.any(path.y_unlabeled != ref[key + "/y_unlabeled"]):
        return "labels differ"
    def rel(a, b):
        return float(np.abs(a - b).max()) / max(1.0, float(np.abs(b).max()))

    worst = [(rel(getattr(path, name), ref[key + "/" + name]), name) for name in ("c_star", "objective")]
    worst.append((rel(outputs, ref[key + "/outputs"]), "outputs"))
    err, name = max(worst)
    da = rel(path.alpha, ref[key + "/alpha"])
    if err > rtol:
        return f"{name} differs by {err:.2e} (relative)"
    return f"ok (max relative difference {err:.1e}, {name}; alpha {da:.1e})"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", nargs="+", default=list(DEFAULT_DATASETS), choices=list(DATASETS))
    p.add_argument("--C", nargs="+", type=float, default=list(DEFAULT_C))
    p.add_argument("--gamma-factors", nargs="+", type=float, default=[1.0], help="gamma = factor / d")
    p.add_argument("--split", type=int, default=0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--save", help="store the paths (npz) for a later --compare")
    p.add_argument("--compare", help="check the paths against a stored --save file")
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--path-module", help="time the S3VMPath of this copy of solvers/s3vm_path.py instead")
    args = p.parse_args(argv)
    path_class = load_path_class(args.path_module)

    ref = dict(np.load(args.compare)) if args.compare else None
    store, ratios, mismatches = {}, [], 0
    print(f"{'cell':<24} {'n':>5} {'events':>6} {'jumps':>5} {'path s':>8} {'light s':>8} {'ratio':>6}"
          + ("  path vs stored" if ref is not None else ""), flush=True)
    for pid in args.datasets:
        Xtr, ytr, d = prepare(pid, args.split)
        for C in args.C:
            for gf in args.gamma_factors:
                t_path, t_light, path, outputs = time_cell(Xtr, ytr, C, gf / d, args.repeats, path_class)
                key = _key(pid, args.split, C, gf)
                ratio = np.median(t_path) / np.median(t_light)
                ratios.append(ratio)
                line = (f"{key:<24} {Xtr.shape[0]:>5} {path.n_events:>6} {path.n_jumps:>5} "
                        f"{np.median(t_path):>8.3f} {np.median(t_light):>8.3f} {ratio:>6.2f}")
                if ref is not None:
                    verdict = compare_paths(path, outputs, ref, key, args.rtol)
                    mismatches += not verdict.startswith("ok")
                    line += "  " + verdict
                print(line, flush=True)
                for name in ("c_star", "objective", "alpha", "y_unlabeled", "kind"):
                    store[key + "/" + name] = getattr(path, name)
                store[key + "/outputs"] = outputs
    q = np.percentile(ratios, [25, 50, 75])
    print(f"median ratio path/light over {len(ratios)} cells: {q[1]:.2f} (quartiles {q[0]:.2f}-{q[2]:.2f})")
    if args.save:
        np.savez_compressed(args.save, **store)
    if ref is not None:
        print(f"paths differing from {args.compare}: {mismatches}")
        return 1 if mismatches else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
