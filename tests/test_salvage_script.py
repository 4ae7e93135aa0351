"""scripts/salvage_runs.py: its source hashes are the grid's, and rounded split seeds are recovered only when sure."""

from pathlib import Path

import harness.grid as grid
from data_registry.splits import derive_seed
from tests._toy import load_script

ROOT = Path(__file__).resolve().parent.parent


def test_worker_hashes_a_tree_as_the_grid_hashes_the_checkout():
    # Run on this checkout, the worker must give the grid's whole-file (legacy) and code hashes:
    # the script matches rows to cells through exactly these.
    import sys

    try:
        out = load_script("salvage_runs")._worker(ROOT, ["svm", "newton", "no_such_solver"])
    finally:
        sys.modules.pop("_today_grid", None)  # the worker's second copy of harness.grid
    assert set(out["solver"]) == {"svm", "newton"}
    for s in ("svm", "newton"):
        assert out["solver"][s] == [grid._legacy_solver_hash(s), grid.solver_source_hash(s)]
    assert out["icml2006"] == [grid._legacy_hashes()["icml2006"], grid.icml2006_source_hash()]
    assert out["reference"][1] == grid.reference_source_hash()


def test_a_rounded_split_seed_is_recomputed_only_when_it_rounds_to_the_stored_float():
    mod = load_script("salvage_runs")
    cell = grid.Cell("t", "2moons", "svm", 3, n_splits=10)
    seed = derive_seed("2moons", "jmlr2008", 3, 0)
    assert seed > 2**53  # a float cannot hold it
    row = {"split_seed": None, "objective": 1.0}
    assert mod._exact_seed(cell, {"split_seed": repr(float(seed))}, row)["split_seed"] == seed
    other = derive_seed("2moons", "jmlr2008", 4, 0)
    assert mod._exact_seed(cell, {"split_seed": repr(float(other))}, row)["split_seed"] is None
    assert mod._exact_seed(cell, {"split_seed": ""}, row)["split_seed"] is None
    assert mod._exact_seed(cell, {"split_seed": "17"}, row | {"split_seed": 17})["split_seed"] == 17
    # A pairwise problem has its parent's jmlr2008 split; a reference problem its set's seed.
    pair = grid.Cell("t", "uspst2", "svm", 2, protocol="jmlr2008-pairwise")
    seed = derive_seed("uspst", "jmlr2008", 2, 0)
    assert mod._exact_seed(pair, {"split_seed": repr(float(seed))}, row)["split_seed"] == seed
    from harness.reference_sets import REFERENCE_SETS

    ref = grid.Cell("t", "two_circles", "svm", 5, protocol="reference")
    seed = REFERENCE_SETS["two_circles"].make(5)[1].seed
    assert mod._exact_seed(ref, {"split_seed": repr(float(seed))}, row)["split_seed"] == seed
