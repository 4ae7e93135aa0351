"""Put the rows of the shipped results table back into the cache when the code that ran them is today's.

``reports/runs.csv.gz`` keeps one row per cell with the ``cell_key`` it had when it ran. Rows
written before :func:`harness.grid.code_text` carry a key over whole files, which no longer
matches today's key even where only comments changed since. This script recovers them honestly:
for every commit of the history it computes, over that commit's files,

* the whole-file source hashes (:func:`harness.grid._files_bytes_hash`), which give the key a row
  run by that commit's code carries, and
* the code hashes (:func:`harness.grid._files_hash`) that today's key function would give that
  code.

A planned cell is restored from a row when some commit's whole-file key of the cell is the row's
``cell_key`` (so the row was computed by that commit's source, byte for byte, over every file the
cell depends on) and the same commit's code hash equals today's (so that source is today's code
up to comments, docstrings and blank lines). Nothing else is accepted: a row whose code changed
since, or ran from an uncommitted tree matching no commit, stays unrestored and is rerun.

Usage (from the repository root, once, into the default cache)::

    python scripts/salvage_runs.py [--table reports/runs.csv.gz] [--cache results/cache] [--dry-run]

Then ``s3vm-bench reproduce --all --from-cache --results reports/runs.csv.gz`` stores the
restored rows under today's keys, which :class:`harness.grid.ResultCache` finds directly.

Run once on 2026-11-24 (the table of be39f49, 9688 distinct keys): over all 191 commits, 3710
planned cells were restored, every one of them at the newest commit (source byte-identical
since the run); the rows of the solvers whose code changed since (Newton, CCCP, grad S3VM,
cS3VM, DA, grad DA) match no commit's code that is today's, and are rerun. The table had written
the 63-bit split seeds of mixed columns as rounded floats; :func:`_exact_seed` recovered each of
them (or left it empty where the split has no seed).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _worker(tree: Path, solvers: list[str]) -> dict:
    """Source hashes of ``tree``'s code (run with ``tree`` first on sys.path)."""
    spec = importlib.util.spec_from_file_location("_today_grid", ROOT / "harness" / "grid.py")
    grid = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = grid  # dataclasses look their module up there
    spec.loader.exec_module(grid)  # today's hashing functions, applied to the tree's modules
    from solvers import get_solver

    def both(files):
        # A module the tree lacks may be found in the installed checkout (an editable install):
        # such a closure is not the tree's code, and is left out.
        if any(tree.resolve() not in Path(p).resolve().parents for p in files.values()):
            return None
        return [grid._files_bytes_hash(files), grid._files_hash(files)]

    out = {"solver": {}}
    for s in solvers:
        try:
            module = get_solver(s).__module__
        except Exception:  # not registered, or not importable, in that commit
            continue
        files = grid.source_closure(module)
        files.update(grid.source_closure("harness.protocol"))
        if (h := both(files)) is not None:
            out["solver"][s] = h
    for name, module in (("reference", "harness.reference_sets"), ("icml2006", "harness.icml2006"),
                         ("pairwise", "harness.pairwise")):
        if importlib.util.find_spec(module) is not None and (h := both(grid.source_closure(module))) is not None:
            out[name] = h
    return out


def commit_hashes(commit: str, solvers: list[str], scratch: Path) -> dict | None:
    tree = scratch / commit
    tree.mkdir()
    listed = subprocess.run(["git", "ls-tree", "--name-only", commit], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    paths = [p for p in ("solvers", "harness", "data_registry") if p in listed]
    if "harness" not in paths or "solvers" not in paths:
        return None  # before the grid runner existed: no row can come from there
    archive = subprocess.run(["git", "archive", commit, *paths], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    env = dict(os.environ, PYTHONPATH=str(tree))
    res = subprocess.run([sys.executable, __file__, "--worker", str(tree), *solvers], env=env, cwd=tree,
                         capture_output=True, text=True)
    if res.returncode:
        print(f"{commit[:10]}: skipped ({res.stderr.strip().splitlines()[-1] if res.stderr else res.returncode})")
        return None
    return json.loads(res.stdout)


def _exact_seed(cell, record: dict, row: dict) -> dict:
    """``row`` with the split seed its table wrote rounded (as a float) recomputed, where that is sure.

    A split's seed is ``data_registry.derive_seed(name, protocol, index, base seed)`` with the
    data set's (or, for the pairwise problems, its parent's) name and the protocol (SIGIR 2006:
    ``sigir2006/l=<labels>``); a reference set's is its problem's. A candidate is taken only
    when it is the one that rounds to the stored float.
    """
    text = record.get("split_seed") or ""
    if row.get("split_seed") is not None or not text:
        return row
    from data_registry.splits import derive_seed
    from harness.pairwise import parent_name
    from harness.reference_sets import REFERENCE_SETS

    base = int(cell.split_kwargs.get("base_seed", 0))
    names = {cell.dataset, parent_name(cell.dataset)}
    protocols = {cell.protocol, "jmlr2008"}
    if "n_labeled" in cell.split_kwargs:
        protocols.add(f"{cell.protocol}/l={cell.split_kwargs['n_labeled']}")
    candidates = {derive_seed(n, p, cell.split, base) for n in names for p in protocols}
    if cell.protocol == "reference" and cell.dataset in REFERENCE_SETS:
        candidates.add(REFERENCE_SETS[cell.dataset].make(cell.split)[1].seed)
    hits = {c for c in candidates if c is not None and float(c) == float(text)}
    return row | {"split_seed": hits.pop()} if len(hits) == 1 else row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--table", default=str(ROOT / "reports" / "runs.csv.gz"))
    ap.add_argument("--cache", default=None, help="result cache (default: the project's)")
    ap.add_argument("--dry-run", action="store_true", help="count what would be restored; write nothing")
    ap.add_argument("--commits", type=int, default=None, help="scan only the N most recent commits (default all)")
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(_worker(Path(args.worker[0]), args.worker[1:])))
        return 0

    sys.path.insert(0, str(ROOT))
    from harness.grid import ResultCache, _key, cell_key
    from harness.reproduce import DEFAULT_CACHE_DIR, build_cells
    from harness.results import read_results_text, row_from_table
    from harness.specs import SPECS

    cells = {p.cell.key(): p.cell for spec in SPECS.values() for p in build_cells(spec)[0]}
    solvers = sorted({c.solver for c in cells.values()})
    table = read_results_text(args.table)
    table = table[table["status"] == "done"]
    rows = {k: r for k, r in zip(table["cell_key"], table.to_dict("records"))}
    print(f"{len(cells)} planned cells; {len(rows)} done rows in {args.table}")
    cache = ResultCache(args.cache or DEFAULT_CACHE_DIR)
    missing = {k: c for k, c in cells.items() if cache.get(k) is None}
    commits = subprocess.run(["git", "rev-list", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()[:args.commits]
    found: dict[str, tuple] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for commit in commits:
            h = commit_hashes(commit, solvers, Path(scratch))
            if h is None:
                continue
            legacy = {n: h[n][0] for n in ("reference", "icml2006", "pairwise") if n in h}
            code = {n: h[n][1] for n in ("reference", "icml2006", "pairwise") if n in h}
            n_new = 0
            for k, c in missing.items():
                if k in found or c.solver not in h["solver"]:
                    continue
                old_sha, new_sha = h["solver"][c.solver]
                try:
                    today = _key(c, new_sha, lambda: code["reference"], lambda: code["icml2006"],
                                 lambda: code["pairwise"])
                except KeyError:  # the commit has no such protocol module
                    continue
                if today != k:
                    continue  # that commit's code for this cell differs from today's
                old = _key(c, old_sha, lambda: legacy["reference"], lambda: legacy["icml2006"],
                           lambda: legacy["pairwise"])
                if old in rows:
                    found[k] = (commit, old)
                    n_new += 1
            if n_new:
                print(f"{commit[:10]}: {n_new} cells", flush=True)
    print(f"restorable: {len(found)} of {len(missing)} cells missing from the cache")
    if not args.dry_run:
        for k, (commit, old) in found.items():
            if cache.get(k) is None:  # a run since the start computed it meanwhile
                cache.put(k, _exact_seed(cells[k], rows[old], row_from_table(rows[old])))
        print(f"written to {cache.directory}")
    assert all(cell_key(cells[k]) == k for k in found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
