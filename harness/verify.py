"""Spot-check of the result cache: rerun a random sample of cached cells and compare.

A cached cell is reused because its key says the same code, parameters, settings and split
produced it (:func:`harness.grid.cell_key`). What the key does not cover -- the versions of
numpy, scipy and scikit-learn and the BLAS build, a solver whose result depends on something
it should not (an unseeded random draw, the order of a set) -- can make a stored number one
that the current installation no longer gives. ``s3vm-bench reproduce TABLE... --verify N``
reruns ``N`` cached cells drawn at random (seeded) among those whose stored run took at most
``--verify-max-seconds``, in this process and without the cache, and compares their results
with the stored ones. It writes nothing: neither the cache nor the results table changes.

A cell *reproduces* when the fresh run succeeds and gives the same errors (unlabeled, test and,
for the ICML 2006 protocol, validation: equal to 1e-12, as they are fractions of counted
points), the same ``balance_exact`` and number of binary problems, and an objective equal to a
relative ``rtol`` (default 1e-6: the solvers stop at tolerances, and another BLAS build may
round differently). Times are shown, not judged.

Rows record the BLAS kernel (:func:`harness.results.blas_info`) and numpy's SIMD code
(:func:`harness.results.simd_info`) they ran under, and a differing cell's line names both, stored
and here: some solvers' results (nabla-DA most) depend on OpenBLAS's per-CPU kernel choice and on
whether numpy's exponential ran its AVX-512 code; what earlier checks found is in
``reports/DIFFERENCES.md`` (E2).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass

import numpy as np

from s3vm_bench.solvers.numerics import check_int

from .grid import execute_cell
from .results import blas_info, simd_info

#: Results compared exactly (up to 1e-12), and the objective's relative tolerance by default.
_EXACT = ("unlabeled_error", "test_error", "validation_error")
RTOL = 1e-6


@dataclass
class Check:
    """One rerun cached cell: where it comes from, what differs (empty: it reproduces)."""

    table: str
    dataset: str
    solver: str
    split: int
    key: str
    stored: dict
    fresh: dict
    differences: list

    @property
    def same(self) -> bool:
        return not self.differences


def _number(v):
    if v is None:
        return None
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def compare(stored: dict, fresh: dict, rtol: float = RTOL) -> list[str]:
    """What differs between a stored row and a fresh run of the same cell (empty list: nothing)."""
    if fresh.get("status") != "done":
        return [f"the rerun {fresh.get('status')}: {str(fresh.get('error', '')).strip().splitlines()[-1:]}"]
    out = []
    for name in _EXACT:
        a, b = _number(stored.get(name)), _number(fresh.get(name))
        if (a is None) != (b is None) or (a is not None and abs(a - b) > 1e-12):
            out.append(f"{name} {a} -> {b}")
    a, b = _number(stored.get("objective")), _number(fresh.get("objective"))
    if (a is None) != (b is None) or (a is not None and abs(a - b) > rtol * max(1.0, abs(a))):
        out.append(f"objective {a} -> {b}" + (f" (relative {abs(a - b) / max(1.0, abs(a)):.1e})"
                                              if a is not None and b is not None else ""))
    for name, kind in (("balance_exact", bool), ("n_binary", int)):
        a, b = stored.get(name), fresh.get(name)
        if a is not None and b is not None and kind(a) != kind(b):
            out.append(f"{name} {a} -> {b}")
    return out


def _stored_environment(row: dict) -> str:
    """The BLAS and numpy SIMD code a stored row ran under ("not recorded" for what it lacks)."""
    try:
        versions = json.loads(row.get("versions") or "{}")
    except (TypeError, ValueError):
        versions = {}
    if not isinstance(versions, dict):
        versions = {}
    return (f"BLAS {versions.get('blas') or 'not recorded'}, "
            f"numpy SIMD {versions.get('numpy_simd') or 'not recorded'}")


def verify(keys, n_cells: int = 20, *, max_seconds: float = 10.0, seed: int = 0, rtol: float = RTOL,
           quick: bool = False, n_splits: int | None = None, datasets=None, solvers=None, params=None,
           cache_dir=None, results=None, read_table: bool = True, echo=print) -> list[Check]:
    """Rerun ``n_cells`` cached cells of the tables ``keys`` drawn at random; return one :class:`Check` each.

    The cells are those :func:`harness.reproduce.reproduce` would read for the same selection
    (``quick``, ``n_splits``, ``datasets``, ``solvers``), cached in ``cache_dir`` or the results
    table ``results`` (default: the project's, as ``reproduce``), each counted once however many
    tables read it, whose stored run took at most ``max_seconds``; ``seed`` fixes the draw.
    """
    from .reproduce import build_cells, open_cache, select_cells, split_keys

    n_cells = check_int(n_cells, "the number of cells to verify", 1)
    seed = check_int(seed, "seed", 0)
    if not (isinstance(max_seconds, (int, float)) and max_seconds > 0):
        raise ValueError(f"max_seconds must be a positive number of seconds, got {max_seconds!r}")
    if not (isinstance(rtol, (int, float)) and 0 <= rtol < 1):
        raise ValueError(f"rtol must be in [0, 1), got {rtol!r}")
    cache = open_cache(cache_dir, results, read_table)
    specs = split_keys(keys, datasets, solvers, params)
    eligible = {}
    for spec in specs:
        planned, _ = build_cells(spec, quick=quick, n_splits=n_splits)
        for p in select_cells(planned, datasets, solvers):
            key = p.cell.key()
            if key in eligible:
                continue
            hit = cache.lookup(p.cell, key, migrate=False)  # a check writes nothing
            seconds = None if hit is None else _number(hit.get("fit_seconds"))
            if hit is not None and hit.get("status") == "done" and seconds is not None and seconds <= max_seconds:
                eligible[key] = (spec.key, p.cell, hit)
    if not eligible:
        echo(f"no cached cell of {', '.join(keys)} took at most {max_seconds:g} s: nothing to verify")
        return []
    order = sorted(eligible)
    rng = np.random.default_rng(seed)
    picked = [order[i] for i in sorted(rng.choice(len(order), size=min(n_cells, len(order)), replace=False))]
    echo(f"rerunning {len(picked)} of the {len(order)} cached cells that took at most {max_seconds:g} s (seed {seed}; "
         f"BLAS here: {blas_info()}, numpy SIMD here: {simd_info()})")
    checks = []
    for key in picked:
        table, cell, stored = eligible[key]
        t0 = time.perf_counter()
        fresh = execute_cell(cell)
        check = Check(table, cell.dataset, cell.solver, cell.split, key, stored, fresh, compare(stored, fresh, rtol))
        checks.append(check)
        echo(f"{'same   ' if check.same else 'DIFFERS'} {table} {cell.dataset} {cell.solver} split {cell.split} "
             f"({_number(stored.get('fit_seconds')):.2f} s stored, {time.perf_counter() - t0:.2f} s now)"
             + ("" if check.same else ": " + "; ".join(check.differences)
                + f" [stored under {_stored_environment(stored)}]"))
    n_same = sum(c.same for c in checks)
    echo(f"{n_same} of {len(checks)} cells reproduce their stored results"
         + ("" if n_same == len(checks) else f"; {len(checks) - n_same} differ (above)"))
    return checks
