"""ICML 2006 protocol: the validation error of icml2006 cells, and their cache keys."""

import dataclasses
import hashlib
import json

import numpy as np
import pytest

import harness.grid as grid
from data_registry import Dataset, Split
from harness.grid import Cell, cell_key, execute_cell
from harness.icml2006 import run_with_validation
from harness.protocol import ProtocolSettings, run_split
from harness.reproduce import build_cells
from harness.specs import get_spec
from solvers import get_solver

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
    from data_registry import load_dataset, make_splits

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


def _main_branch_key(cell):
    # harness.grid.cell_key as it was before protocol "icml2006" got its own hash: the keys of the
    # ~6700 cached cells of the other protocols must not move.
    payload = {"solver": cell.solver, "solver_sha256": grid.solver_source_hash(cell.solver), "params": cell.params,
               "settings": cell.settings, "dataset": cell.dataset, "protocol": cell.protocol,
               "split": cell.split, "n_splits": cell.n_splits}
    if cell.protocol == "reference":
        payload["reference_sha256"] = grid.reference_source_hash()
    blob = json.dumps(payload, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:32]


def test_cache_keys_of_other_protocols_are_unchanged_and_icml2006_keys_follow_its_module(monkeypatch):
    others = [p.cell for key in ("jmlr2008-table8", "icml2006-table2", "nips2006-table1")
              for p in build_cells(get_spec(key), n_splits=1)[0][:20]]
    assert {c.protocol for c in others} == {"jmlr2008", "reference"}
    assert all(cell_key(c) == _main_branch_key(c) for c in others)
    ours = [_eset2_cell(s, i) for s in ("svm", "da") for i in range(3)]
    before = [cell_key(c) for c in ours]
    assert all(k != _main_branch_key(c) for k, c in zip(before, ours))
    monkeypatch.setattr(grid, "icml2006_source_hash", lambda: "edited harness/icml2006.py")
    assert all(k1 != k2 for k1, k2 in zip(before, map(cell_key, ours)))
    assert all(cell_key(c) == _main_branch_key(c) for c in others)
