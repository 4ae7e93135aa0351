"""ICML 2006 Tables 4-5: validation errors, model selection over the grid, the specs and their cells."""

import dataclasses

import numpy as np
import pytest

import s3vm_bench.harness.grid as grid
from s3vm_bench.data_registry import Dataset, Split
from s3vm_bench.harness.grid import Cell, cell_key, execute_cell
from s3vm_bench.harness.icml2006 import run_with_validation
from s3vm_bench.harness.protocol import ProtocolSettings, run_split
from s3vm_bench.harness.report_cells import _target_cell
from s3vm_bench.harness.reproduce import aggregate, build_cells, load_targets, reproduce, select_and_best
from s3vm_bench.harness.specs import (ICML2006_LAMBDAS, ICML2006_LU, ICML2006_SIGMA0, ICML2006_SIGMA_FACTORS, SPECS,
                           UNSPECIFIED, Config, get_spec, icml2006_costs)
from s3vm_bench.solvers import get_solver

# ----------------------------------------------------------------------------- validation error


def _blobs(n_classes, seed=0):
    # Well separated clusters; the validation points are moved into the next class's cluster
    # keeping their label, so every one of them is misclassified and every test point is not.
    rng = np.random.default_rng(seed)
    centers = 6.0 * np.eye(n_classes, 3)
    y = np.repeat(np.arange(n_classes), 30)
    X = centers[y] + 0.3 * rng.standard_normal((y.size, 3))
    idx = np.arange(y.size)
    lab = np.concatenate([idx[y == k][:3] for k in range(n_classes)])
    val = np.concatenate([idx[y == k][3:5] for k in range(n_classes)])
    test = np.concatenate([idx[y == k][5:10] for k in range(n_classes)])
    unl = np.setdiff1d(idx, np.r_[lab, val, test])
    X[val] = centers[(y[val] + 1) % n_classes] + 0.3 * rng.standard_normal((val.size, 3))
    return Dataset("blobs", X, y, tuple(str(k) for k in range(n_classes))), Split("icml2006", 0, 1, lab, unl, val, test)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("solver, params", [("svm", {}), ("da", {"loss": "sqr"})])
def test_validation_error_is_cut_from_the_held_out_outputs(n_classes, solver, params):
    ds, split = _blobs(n_classes)
    st = ProtocolSettings(sigma=3.0, C=10.0, C_star=1.0)
    res, v_err, t_err = run_with_validation(get_solver(solver), params, ds, split, st)
    assert v_err == 1.0 and t_err == 0.0  # swapped or mixed parts would not give exactly these
    # The same numbers as the plain protocol on the split with test = validation, and test = test.
    empty = np.empty(0, np.int64)
    on_val = run_split(get_solver(solver), params, ds, dataclasses.replace(split, validation=empty,
                                                                           test=split.validation), st)
    on_test = run_split(get_solver(solver), params, ds, dataclasses.replace(split, validation=empty), st)
    assert v_err == on_val.test_error and t_err == on_test.test_error
    assert res.unlabeled_error == on_test.unlabeled_error and res.objective == pytest.approx(on_test.objective)


def test_run_with_validation_needs_validation_and_test_points():
    ds, split = _blobs(2)
    st = ProtocolSettings(sigma=3.0, C=10.0)
    with pytest.raises(ValueError, match="no validation points"):
        run_with_validation(get_solver("svm"), {}, ds, dataclasses.replace(split, validation=np.empty(0, np.int64)), st)
    with pytest.raises(ValueError, match="no test points"):
        run_with_validation(get_solver("svm"), {}, ds, dataclasses.replace(split, test=np.empty(0, np.int64)), st)


def _eset2_cell(solver="svm", split=0):
    # ICML 2006 Table 4's grid point lambda = 1e-2, sigma = sigma0 on ESET2 (l = 20, u = 782).
    settings = {"kernel": "rbf", "sigma": 12.09, "C": 1 / (2 * 1e-2 * 20), "C_star": 1 / (2 * 1e-2 * 782),
                "r_mode": "exact"}
    return Cell("icml2006-table4", "eset2", solver, split, "icml2006", 10, {}, settings)


def test_execute_cell_reports_validation_and_test_errors_of_icml2006_cells(data_env):
    cell = _eset2_cell()
    row = execute_cell(cell)
    assert row["status"] == "done", row.get("error")
    from s3vm_bench.data_registry import load_dataset, make_splits

    ds = load_dataset("eset2")
    split = make_splits(ds, "icml2006", n_splits=10)[0]
    assert split.validation.size and split.test.size
    st = ProtocolSettings(**cell.settings)
    empty = np.empty(0, np.int64)
    plain = run_split(get_solver("svm"), {}, ds, dataclasses.replace(split, validation=empty), st)
    on_val = run_split(get_solver("svm"), {}, ds, dataclasses.replace(split, validation=empty,
                                                                      test=split.validation), st)
    assert row["test_error"] == plain.test_error and row["unlabeled_error"] == plain.unlabeled_error
    assert row["validation_error"] == on_val.test_error
    # A cell of another protocol has no validation error.
    other = execute_cell(Cell("toy", "2moons", "svm", 0, n_splits=2))
    assert other["status"] == "done" and "validation_error" not in other


# ----------------------------------------------------------------------------- cache keys


def test_icml2006_cells_key_on_its_module_version_and_the_others_do_not(monkeypatch):
    import s3vm_bench.harness.icml2006 as icml2006

    others = [p.cell for key in ("jmlr2008-table8", "icml2006-table2", "nips2006-table1")
              for p in build_cells(get_spec(key), n_splits=1)[0][:20]]
    assert {c.protocol for c in others} == {"jmlr2008", "reference"}
    ours = [_eset2_cell(s, i) for s in ("svm", "da") for i in range(3)]
    before, before_others = [cell_key(c) for c in ours], [cell_key(c) for c in others]
    monkeypatch.setattr(icml2006, "RESULT_VERSION", icml2006.RESULT_VERSION + 1)
    grid.declared_versions.cache_clear()
    try:
        assert all(k1 != k2 for k1, k2 in zip(before, map(cell_key, ours)))
        assert [cell_key(c) for c in others] == before_others
    finally:
        monkeypatch.undo()
        grid.declared_versions.cache_clear()


# ----------------------------------------------------------------------------- select_and_best


def test_select_and_best_by_hand():
    # 3 splits x 4 settings (errors in %). Split 0: validation minimum at setting 2; split 1: a tie
    # between settings 1 and 3 -> 1 (first in grid order); split 2: setting 0.
    E = [[10.0, 8.0, 6.0, 9.0],
         [12.0, 7.0, 5.0, 4.0],
         [11.0, 9.0, 3.0, 8.0]]
    V = [[0.5, 0.4, 0.1, 0.3],
         [0.5, 0.2, 0.3, 0.2],
         [0.0, 0.1, 0.2, 0.3]]
    sb = select_and_best(E, V)
    assert sb.chosen == (2, 1, 0)
    assert sb.selected == pytest.approx((6.0 + 7.0 + 11.0) / 3)
    assert sb.selected_std == pytest.approx(np.std([6.0, 7.0, 11.0], ddof=1))
    # column means 11, 8, 4.667, 7 -> setting 2
    assert sb.best_setting == 2 and sb.best == pytest.approx(14.0 / 3)
    assert sb.best_std == pytest.approx(np.std([6.0, 5.0, 3.0], ddof=1))
    assert sb.n == 3
    one = select_and_best([[3.0, 1.0]], [[0.2, 0.2]])
    assert one.selected == 3.0 and one.best == 1.0 and one.selected_std is None and one.best_std is None


@pytest.mark.parametrize("E, V, msg", [([[1.0, 2.0]], [[1.0]], "one shape"), ([], [], "non-empty"),
                                       ([[1.0, np.nan]], [[0.0, 0.0]], "finite")])
def test_select_and_best_rejects_bad_tables(E, V, msg):
    with pytest.raises(ValueError, match=msg):
        select_and_best(E, V)


def _toy_model_selection_spec():
    base = get_spec("icml2006-table4")
    return dataclasses.replace(base, rows=(("USPS2", "usps2"), ("ESET2", "eset2")),
                               configs=(Config("SVM", "svm"), Config("DA(l2)", "da", {"loss": "l2", "T0": 20.0})),
                               grid=base.grid[:3], n_splits=3)


def test_model_selection_aggregate_on_synthetic_rows():
    spec = _toy_model_selection_spec()
    planned, skipped = build_cells(spec)
    assert not skipped and len(planned) == 2 * 2 * 3 * 3
    rng = np.random.default_rng(0)
    table = {}
    rows = []
    for p in planned:
        key = (p.row, p.config, p.cell.split, p.grid)
        table[key] = (rng.integers(0, 20) / 100, rng.integers(0, 20) / 100, rng.integers(0, 4) / 8)
        if key == ("ESET2", 1, 2, 1):  # one failed cell: split 2 of ESET2 / DA(l2) is left out
            rows.append({"status": "failed", "error": "boom"})
            continue
        u, t, v = table[key]
        rows.append({"status": "done", "unlabeled_error": u, "test_error": t, "validation_error": v})
    cells = {(c.row, c.column): c for c in aggregate(spec, planned, rows, {}, load_targets("icml2006-table4"))}
    assert len(cells) == 2 * 2 * 2 * 2  # configs x {selected, best} x data sets x {unlabeled, test}
    for row, ci, label in (("USPS2", 0, "SVM"), ("ESET2", 1, "DA(l2)")):
        splits = [0, 1, 2] if ci == 0 else [0, 1]
        for m, name in ((0, "unlabeled"), (1, "test")):
            E = np.array([[100 * table[(row, ci, s, g)][m] for g in range(3)] for s in splits])
            V = np.array([[table[(row, ci, s, g)][2] for g in range(3)] for s in splits])
            first_min = [int(np.flatnonzero(v == v.min())[0]) for v in V]  # ties: first in grid order
            sel = np.mean([E[i, g] for i, g in enumerate(first_min)])
            best = E.mean(axis=0).min()
            c_sel, c_best = cells[(label, f"{row} {name} selected")], cells[(label, f"{row} {name} best")]
            assert c_sel.mean == pytest.approx(sel) and c_best.mean == pytest.approx(best)
            assert c_sel.n == c_best.n == len(splits)
            assert c_sel.paper == float(load_targets("icml2006-table4")[(label, f"{row} {name} selected")][1])
    bad = cells[("DA(l2)", "ESET2 test best")]
    assert bad.n_failed == 1 and "1 split(s) with an incomplete grid left out" in bad.note
    # Without validation errors (rows of another protocol) the aggregate refuses.
    no_val = [{k: v for k, v in r.items() if k != "validation_error"} for r in rows]
    with pytest.raises(ValueError, match="validation error"):
        aggregate(spec, planned, no_val, {}, {})


# ----------------------------------------------------------------------------- the specs


def test_icml2006_costs():
    assert icml2006_costs(1e-2, 93, 1000) == pytest.approx((1 / (2 * 1e-2 * 93), 1 / (2 * 1e-2 * 1000)))
    assert icml2006_costs(0.1, 2, 198, lambda_prime=10.0, kappa=1.0) == pytest.approx((5.0, 10 / (0.1 * 198)))
    with pytest.raises(ValueError, match="lam must be > 0"):
        icml2006_costs(0.0, 93, 1000)
    with pytest.raises(ValueError, match="u must be > 0"):
        icml2006_costs(1e-2, 93, 0)


def test_table2_grid_is_unchanged_by_the_refactoring():
    # The factors of icml2006-table2 written out as before the grid was shared with Tables 4-5
    # (the cells' settings, hence their cache keys, must be bit-identical).
    old = tuple({"sigma_factor": 2.0 ** k, "C_factor": 1.0 / (2.0 * lam * 2) / 10.0, "C_star_factor": 2 / 198}
                for lam in (1e-4, 1e-3, 1e-2, 1e-1) for k in range(-3, 4))
    assert get_spec("icml2006-table2").grid == old


def test_tables_4_and_5_cells_cover_grid_splits_and_configs():
    t4, t5 = get_spec("icml2006-table4"), get_spec("icml2006-table5")
    assert "icml2006-table4" not in UNSPECIFIED and "icml2006-table5" not in UNSPECIFIED
    lu = {"usps2": (93, 1000), "coil6": (90, 1008), "text": (37, 1410), "eset2": (20, 782)}
    for spec, n_conf in ((t4, 5), (t5, 4)):
        planned, skipped = build_cells(spec)
        assert not skipped and len(planned) == 4 * n_conf * 28 * 10
        seen = {(p.dataset, p.config, p.grid, p.cell.split) for p in planned}
        assert len(seen) == len(planned) and len({p.cell.key() for p in planned}) == len(planned)
        for p in planned:
            l, u = lu[p.dataset]
            s = p.cell.settings
            assert p.cell.protocol == "icml2006" and s["kernel"] == "rbf" and s["r_mode"] == "exact"
            # ICML 2006 Sec. 4: lambda' = 1, lambda and sigma / sigma0 from the grid, C = 1/(2 lambda l),
            # C* = lambda'/(2 lambda u); grid order lambda outer, sigma inner.
            lam = ICML2006_LAMBDAS[p.grid // 7]
            assert s["sigma"] == pytest.approx(ICML2006_SIGMA0[p.dataset] * ICML2006_SIGMA_FACTORS[p.grid % 7])
            assert s["C"] == pytest.approx(1 / (2 * lam * l)) and s["C_star"] == pytest.approx(1 / (2 * lam * u))
        assert {p.cell.split for p in planned} == set(range(10))
        assert len(build_cells(spec, quick=True)[0]) == len(planned) // 5  # --quick: 2 of the 10 splits
    # Table 5's DA column is Table 4's DA(l2): the same cells, computed once.
    k4 = {p.cell.key() for p in build_cells(t4)[0] if t4.configs[p.config].label == "DA(l2)"}
    k5 = {p.cell.key() for p in build_cells(t5)[0] if t5.configs[p.config].label == "DA"}
    assert k4 == k5
    # Fixed temperatures: T in the paper's units is 2 T in units of C* (solvers/da.py, kappa = 2).
    assert [c.params.get("T_fixed") for c in t5.configs] == [None, 0.2, 0.02, 0.002]
    assert [c.params["loss"] for c in t4.configs[3:]] == ["l2", "sqr"]


def test_targets_are_the_cells_the_specs_produce():
    for key, labels in (("icml2006-table4", ["SVM", "JTSVM", "nabla-TSVM", "DA(l2)", "DA(sqr)"]),
                        ("icml2006-table5", ["DA", "T=0.1", "T=0.01", "T=0.001"])):
        spec = get_spec(key)
        assert [c.label for c in spec.configs] == labels
        produced = {_target_cell(spec, row, c, f"{suffix} {kind}") for row, _ in spec.rows for c in spec.configs
                    for suffix, _ in spec.metrics for kind in ("selected", "best")}
        assert produced == set(load_targets(key)) and len(produced) == len(labels) * 16


def test_split_sizes_and_default_widths_match_the_data(data_env):
    from sklearn.metrics.pairwise import euclidean_distances

    from s3vm_bench.data_registry import load_dataset, make_splits

    for name, (l, u) in ICML2006_LU.items():
        ds = load_dataset(name)
        s = make_splits(ds, "icml2006", n_splits=1)[0]
        assert (s.labeled.size, s.unlabeled.size) == (l, u)
        assert s.validation.size > 0 and s.test.size > 0
        D = euclidean_distances(ds.X)  # sparse-aware (Text)
        med = float(np.median(D[np.triu_indices(D.shape[0], 1)]))
        assert ICML2006_SIGMA0[name] == pytest.approx(med, rel=1e-3), name  # 4 significant digits


def test_cut_down_table4_end_to_end(data_env, tmp_path, monkeypatch):
    # SVM alone on ESET2, 2 splits, 3 settings: cells run, the report carries the paper's naming.
    spec = dataclasses.replace(get_spec("icml2006-table4"), rows=(("ESET2", "eset2"),),
                               configs=(Config("SVM", "svm"),), grid=get_spec("icml2006-table4").grid[9:12])
    monkeypatch.setitem(SPECS, "icml2006-table4", spec)
    out = reproduce(["icml2006-table4"], quick=True, reports_dir=tmp_path, cache_dir=tmp_path / "cache",
                    results=tmp_path / "runs.csv", backend="sequential", progress=False, echo=lambda *a: None)
    cells = {(c.row, c.column): c for c in out["icml2006-table4"]}
    assert set(cells) == {("SVM", f"ESET2 {m} {k}") for m in ("unlabeled", "test") for k in ("selected", "best")}
    assert all(c.n == 2 and c.mean is not None and c.paper is not None for c in cells.values())
    md = (tmp_path / "icml2006-table4.md").read_text()
    assert "| SVM |" in md and "ESET2 unlabeled selected" in md and "[20.9]" in md
    import pandas as pd

    runs = pd.read_csv(tmp_path / "runs.csv")
    assert len(runs) == 6 and runs["validation_error"].notna().all()
