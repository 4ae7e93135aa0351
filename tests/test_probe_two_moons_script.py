"""scripts/probe_two_moons_labeled.py: only the two labeled rows move, onto the noise-free moons."""

import numpy as np

from s3vm_bench.data_registry.synthetic import TWO_MOONS_LABELED
from s3vm_bench.harness.reference_sets import get_reference_set
from tests._toy import load_script


def _on_moon(point, upper):
    """Distance of ``point`` from the noise-free upper (class 1) or lower (class 0) moon arc."""
    x, y = point
    if upper:
        return abs(np.hypot(x, y) - 1.25) if y >= 0 else np.inf
    return abs(np.hypot(x - 1.25, y - 0.625) - 1.25) if y <= 0.625 else np.inf


def test_placements_move_only_the_labeled_rows_onto_their_own_moon():
    mod = load_script("probe_two_moons_labeled")
    ds, split = get_reference_set("two_moons").make(3)
    # The suite's placement is the apexes: the probe must start from the table's own problem.
    np.testing.assert_allclose(mod.placed(ds, split, "apex").X, ds.X)
    np.testing.assert_allclose(ds.X[split.labeled], TWO_MOONS_LABELED)
    others = np.setdiff1d(np.arange(ds.X.shape[0]), split.labeled)
    seen = set()
    for where in mod.PLACEMENTS:
        moved = mod.placed(ds, split, where)
        np.testing.assert_array_equal(moved.X[others], ds.X[others])
        np.testing.assert_array_equal(moved.y, ds.y)
        pos, neg = moved.X[split.labeled]
        assert _on_moon(pos, upper=True) < 1e-12 and _on_moon(neg, upper=False) < 1e-12, where
        seen.add(tuple(np.round(moved.X[split.labeled].ravel(), 6)))
    assert len(seen) == len(mod.PLACEMENTS)  # the placements differ from each other
    # The random pair is seeded by the realization and differs between realizations.
    ds4, split4 = get_reference_set("two_moons").make(4)
    a = mod.placed(ds, split, "random").X[split.labeled]
    np.testing.assert_array_equal(a, mod.placed(ds, split, "random").X[split.labeled])
    assert not np.allclose(a, mod.placed(ds4, split4, "random").X[split4.labeled])


def test_probe_prints_one_row_per_placement_and_solver(capsys):
    mod = load_script("probe_two_moons_labeled")
    mod.main(["--n", "2", "--placements", "apex", "inner", "--solvers", "cccp"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| apex") or
            line.startswith("| inner")]
    assert [r.split("|")[1].strip() for r in rows] == ["apex", "inner"]
    errors = [float(r.split("|")[3].split("±")[0]) for r in rows]
    assert all(0.0 <= e <= 100.0 for e in errors)
