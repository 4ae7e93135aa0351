"""ICML 2013 Table 2 through the one runner: spec, protocol "icml2013-table2", grid keys, result store, report."""

import json

import pytest

from s3vm_bench.harness import cell_keys, grid, icml2013
from s3vm_bench.harness.cli import main
from s3vm_bench.harness.grid import Cell, check_row, execute_cell, store_rows
from s3vm_bench.harness.icml2013 import DATASETS, KEY, parse_details, record_fields
from s3vm_bench.harness.icml2013_report import records, stored_records
from s3vm_bench.harness.protocols import RESULT_FIELDS
from s3vm_bench.harness.reproduce import build_cells, load_targets, reproduce, split_keys
from s3vm_bench.harness.specs import get_spec

METHODS = ("svm", "light", "cccp", "path", "light_l1", "cccp_b")


def _record(split, unl, test, methods=METHODS, path_code="abc"):
    best = {m: {"val_err": 0.0, "unl_err": unl.get(m, 0.1), "test_err": test.get(m, 0.1), "C": 1.0, "gamma": 1.0,
                "c_star": 0.5} for m in methods}
    rec = {"split": split, "split_seed": 7, "n_train": 10, "n_lab": 2, "best": best, "seconds": 1.5,
           "timing": [{"C": 1.0, "gamma": 1.0, "path_s": 2.0, "light_s": 1.0, "path_events": 3, "path_jumps": 1,
                       "light_steps": 10}],
           "fig5": [{"C": C, "path": C, "light": 2 * C, "cccp": 3 * C, "light_l1": 4 * C, "cccp_b": 5 * C}
                    for C in (1.0, 10.0)]}
    return rec | ({"path_code": path_code} if path_code else {})


def _cells(dataset):
    return {p.cell.split: p.cell for p in build_cells(get_spec(KEY))[0] if p.cell.dataset == dataset}


def _row(cell, rec, **over):
    """The row execute_cell makes of ``cell`` whose protocol returned ``record_fields(rec)``."""
    fields = record_fields(rec)
    row = {"experiment": cell.experiment, "dataset": cell.dataset, "protocol": cell.protocol, "split": cell.split,
           "solver": cell.solver, "params": {}} | {k: fields[k] for k in RESULT_FIELDS}
    return row | {"status": "done", "details": fields["details"], "cell_key": cell.key(), "git_commit": "c0",
                  "timestamp": "2026-01-01T00:00:00+00:00"} | over


def test_the_table_is_a_spec_of_the_one_runner_with_one_cell_per_data_set_and_split():
    spec = get_spec(KEY)
    planned, skipped = build_cells(spec)
    assert not skipped and len(planned) == 100
    assert {(p.row, p.dataset) for p in planned} == {(pid, v[0]) for pid, v in DATASETS.items()}
    assert {(p.cell.protocol, p.cell.solver, json.dumps(p.cell.settings)) for p in planned} == {
        ("icml2013-table2", "s3vm_path", "{}")}
    assert sorted({p.cell.split for p in planned}) == list(range(10))
    assert len({p.cell.key() for p in planned}) == 100
    # --solvers never adds a column to it (one cell runs every method): asked alone, it is refused
    (same,) = split_keys([KEY], solvers=["s3vm_path"])
    assert same.configs == spec.configs
    with pytest.raises(ValueError, match="take\\(s\\) no extra column"):
        split_keys([KEY], solvers=["newton"])
    (same, table8) = split_keys([KEY, "jmlr2008-table8"], solvers=["lapsvm"])
    assert same.configs == spec.configs and table8.configs[-1].label == "lapsvm"
    with pytest.raises(ValueError, match="not a row of"):
        split_keys([KEY], datasets=["g50c"])


def test_the_key_takes_the_declared_versions_of_every_solver_the_cell_runs_not_their_code(monkeypatch):
    from s3vm_bench.solvers.cccp import CCCP
    from s3vm_bench.solvers.s3vm_light import S3VMLight
    from s3vm_bench.solvers.s3vm_path import S3VMPath

    cell = _cells("ionosphere")[0]
    key = cell.key()

    def fresh():
        for f in (grid.solver_version, grid.declared_versions, grid.solver_source_hash):
            f.cache_clear()
        return cell.key()

    try:
        monkeypatch.setattr(cell_keys, "code_text", lambda path: b"refactored")  # code edited, no version bumped
        assert fresh() == key
        for cls in (S3VMLight, CCCP, S3VMPath):
            monkeypatch.setattr(cls, "result_version", cls.result_version + 1)
            assert fresh() != key, cls
            monkeypatch.undo()
            assert fresh() == key
        monkeypatch.setattr(icml2013, "RESULT_VERSION", icml2013.RESULT_VERSION + 1)
        assert fresh() != key
    finally:
        monkeypatch.undo()
        fresh()
    # Other protocols' keys carry no solvers of the ICML 2013 cells.
    other = Cell("t", "g50c", "s3vm_path", 0)
    before = other.key()
    monkeypatch.setattr(CCCP, "result_version", CCCP.result_version + 1)
    try:
        assert fresh() != key and other.key() == before
    finally:
        monkeypatch.undo()
        fresh()


def test_details_round_trip_exactly_through_the_csv_store(tmp_path):
    from s3vm_bench.harness.results import read_results_text, row_from_table

    rec = _record(0, {"path": 1 / 3}, {"path": 2 / 7})
    rec["timing"][0]["path_s"] = 0.1 + 0.2
    cell = _cells("ionosphere")[0]
    row = _row(cell, rec)
    assert check_row(row) is None
    assert row["unlabeled_error"] == 1 / 3 and row["test_error"] == 2 / 7 and row["objective"] is None
    store_rows(tmp_path / "runs", [row])
    (back,) = read_results_text(tmp_path / "runs").to_dict("records")
    got = row_from_table(back)
    assert got["details"] == row["details"] and check_row(got) is None
    assert parse_details(got["details"]) == {k: rec[k] for k in icml2013.DETAIL_FIELDS + ("path_code",)}
    assert json.loads(got["details"])["timing"][0]["path_s"] == 0.1 + 0.2  # floats read back exactly
    # Another table's file gets no details column.
    other = {"experiment": "t", "dataset": "g50c", "protocol": "jmlr2008", "split": 0, "solver": "svm", "params": {},
             "unlabeled_error": 0.1, "status": "done", "cell_key": "k", "git_commit": "c", "timestamp": "t"}
    store_rows(tmp_path / "runs", [other])
    assert "details" not in (tmp_path / "runs" / "t" / "g50c.csv").read_text().splitlines()[0].split(",")
    for bad in ("not json", "[]", json.dumps({"best": {}})):
        with pytest.raises(ValueError, match="details"):
            parse_details(bad)


def test_report_from_stored_rows_is_judged_against_the_targets(tmp_path, no_shipped_table):
    paper = load_targets(KEY)
    p_svm = paper[("D5", "SVM unlabeled")][0] / 100
    cells = _cells("ionosphere")
    rows = [_row(cells[i], _record(i, {"svm": p_svm + d, "light_l1": 0.5}, {})) for i, d in enumerate((-0.01, 0.01))]
    # split 2 without the hinge S3VM-light; a failed row and a row under another key are no results
    rows.append(_row(cells[2], _record(2, {"svm": p_svm}, {}, methods=("svm", "light", "cccp", "path", "cccp_b"))))
    rows.append(_row(_cells("breast-cancer-wdbc")[0], _record(0, {}, {}), status="failed", error="Traceback: boom"))
    rows.append(_row(cells[3], _record(3, {}, {}), cell_key="0" * 32))
    store_rows(tmp_path / "runs", rows)
    out = reproduce([KEY], run=False, reports_dir=tmp_path, cache_dir=tmp_path / "cache", echo=lambda *a: None)
    got = {(c.row, c.column): c for c in out[KEY]}
    svm = got[("D5", "SVM unlabeled")]
    assert svm.n == 3 and svm.mean == pytest.approx(100 * p_svm) and svm.std == pytest.approx(1.0)
    assert svm.verdict == "within spread"
    light = got[("D5", "S3VM-light unlabeled")]  # the hinge one is compared with the paper's
    assert light.n == 2 and light.mean == pytest.approx(50.0) and light.verdict == "differs"
    assert got[("D5", "S3VM-light l2 unlabeled")].paper is None  # the squared hinge one has none
    assert got[("D1", "SVM unlabeled")].mean is None and got[("D1", "SVM unlabeled")].n == 0
    # every paper value of the table has its cell (the paper's sds are not cells of their own)
    assert {k for k in paper if not k[1].endswith(" sd")} <= set(got)
    md = (tmp_path / f"{KEY}.md").read_text()
    assert "**Verdict:** differs" in md and "| D5 | ionosphere | 3 |" in md and "median 2.00" in md
    assert "splits with results: D5 3." in md and " n=2 [" in md
    assert "| D5 | 10 | 10 | 40 | 50 | 3/3 | 20 | 30 |" in md  # Figure 5 means over the three splits
    # the protocol's choices are in the report, as every other table's notes are
    from s3vm_bench.harness.icml2013 import PROTOCOL_CHOICES
    choices = md.split("## Protocol and choices\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert choices == [f"- {c}" for c in PROTOCOL_CHOICES] and "exp(-gamma ||x - z||^2)" in md
    csv = (tmp_path / f"{KEY}.csv").read_text().splitlines()
    assert csv[0] == "row,column,unit,paper,ours_mean,ours_std,n,n_failed,diff,verdict" and len(csv) == 1 + 120
    index = json.loads((tmp_path / "index.json").read_text())
    assert index[KEY]["splits"] == 3 and index[KEY]["commit"] == "c0"
    assert KEY in (tmp_path / "README.md").read_text()


def test_the_protocol_takes_only_the_tables_own_cells():
    cell = _cells("ionosphere")[0]
    for bad in (Cell(KEY, "ionosphere", "svm", 0, KEY), Cell(KEY, "ionosphere", "s3vm_path", 0, KEY, params={"a": 1}),
                Cell(KEY, "g50c", "s3vm_path", 0, KEY)):
        row = execute_cell(bad)
        assert row["status"] == "failed" and "ValueError" in row["error"], bad
    assert cell.protocol == KEY


def test_one_real_cell_runs_through_the_grid_as_the_stored_one_and_is_stored_once(data_env, tmp_path,
                                                                                   no_shipped_table):
    kw = dict(reports_dir=tmp_path, n_splits=1, datasets=["ionosphere"], n_jobs=1, progress=False,
              echo=lambda *a: None)
    first = {(c.row, c.column): c for c in reproduce([KEY], **kw)[KEY]}
    files = list((tmp_path / "runs" / KEY).glob("*.csv"))
    assert [f.name for f in files] == ["ionosphere.csv"]
    (rec,) = stored_records(tmp_path / "runs").values()
    assert (rec["id"], rec["split"]) == ("D5", 0) and set(rec["best"]) == set(METHODS)
    # Figure 5: every C of the grid carries the objectives of the path and of both S3VM-lights and CCCPs
    assert [row["C"] for row in rec["fig5"]] == [1, 10, 100, 1000]
    assert all(row[m] > 0 for row in rec["fig5"] for m in ("path", "light", "cccp", "light_l1", "cccp_b"))
    assert rec["path_code"] == icml2013.path_code() and len(rec["timing"]) == 20
    for col in ("SVM unlabeled", "S3VM-path test", "S3VM-light unlabeled", "S3VM-light l2 test", "CCCP unlabeled",
                "CCCP searched test"):
        assert first[("D5", col)].n == 1 and 0 <= first[("D5", col)].mean < 60
    # The same selected models and errors as the committed run of this cell (the shipped store).
    from s3vm_bench.harness.paths import SHIPPED_RESULTS

    shipped = stored_records(SHIPPED_RESULTS / KEY / "ionosphere.csv")[("D5", 0)]
    assert rec["best"].keys() == shipped["best"].keys()
    for m, sel in rec["best"].items():  # the path's C* is a breakpoint of the path: equal up to round-off
        assert sel == shipped["best"][m] | {"c_star": pytest.approx(shipped["best"][m]["c_star"], rel=1e-9)}, m
    for mine, theirs in zip(rec["fig5"], shipped["fig5"]):
        assert mine == pytest.approx(theirs, rel=1e-6)
    text = files[0].read_text()
    reproduce([KEY], **kw)  # nothing missing: nothing rerun, the stored row unchanged
    assert files[0].read_text() == text


def test_every_shipped_row_is_current_and_the_plan_has_no_external_table(capsys):
    from s3vm_bench.harness.paths import SHIPPED_RESULTS
    from s3vm_bench.harness.plan import plan

    stored = stored_records(SHIPPED_RESULTS)
    assert len(stored) == 100 and {pid for pid, _ in stored} == set(DATASETS)
    assert all(set(r["best"]) == set(METHODS) for r in stored.values())
    assert all(set(row) == {"C", "path", "light", "cccp", "light_l1", "cccp_b"} for r in stored.values()
               for row in r["fig5"])
    rows, total = plan([KEY])
    assert (total["cells"], total["cached"], total["missing"]) == (100, 100, 0) and len(rows) == 10
    assert main(["reproduce", "--list"]) == 0
    assert KEY in capsys.readouterr().out
    assert main(["reproduce", KEY, "--plan"]) == 0
    out = capsys.readouterr().out
    assert "external" not in out and "100 cells, 100 cached" in out


def test_records_leave_out_other_tables_and_failed_rows():
    cell = _cells("vehicle")[4]
    good = _row(cell, _record(4, {}, {}))
    assert list(records([good, good | {"status": "failed"}, good | {"experiment": "other"},
                         good | {"details": None}])) == [("D10", 4)]
