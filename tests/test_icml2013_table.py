"""ICML 2013 Table 2 through ``s3vm-bench reproduce`` (harness.icml2013)."""

import json

import pytest

from s3vm_bench.harness.cli import main
from s3vm_bench.harness.icml2013 import _solver_version, load_cells, missing
from s3vm_bench.harness.reproduce import load_targets, reproduce


def _record(pid, split, unl, test):
    best = {m: {"val_err": 0.0, "unl_err": unl[m], "test_err": test[m], "C": 1.0, "gamma": 1.0, "c_star": 0.5}
            for m in ("svm", "light", "cccp", "path")}
    return {"id": pid, "dataset": "x", "split": split, "n_train": 10, "n_lab": 2, "best": best,
            "timing": [{"C": 1.0, "gamma": 1.0, "path_s": 2.0, "light_s": 1.0, "path_events": 3, "path_jumps": 1,
                        "light_steps": 10}], "fig5": [], "path_code": "abc", "seconds": 1.0}


def test_report_from_stored_cells_is_judged_against_the_targets(tmp_path):
    store = tmp_path / "icml2013" / "cells.jsonl"
    store.parent.mkdir()
    paper = load_targets("icml2013-table2")
    p_svm = paper[("D5", "SVM unlabeled")][0] / 100
    lines = [_record("D5", i, {"svm": p_svm + d, "light": 0.5, "cccp": 0.1, "path": 0.2},
                     {"svm": 0.1, "light": 0.1, "cccp": 0.1, "path": 0.1}) for i, d in enumerate((-0.01, 0.01, 0.0))]
    lines.append({"id": "D1", "split": 0, "error": "Traceback: boom"})  # a failed cell is not a result
    # The hinge S3VM-light (an extra method, one line per split) on 2 of the 3 splits, one failed
    # attempt, and one line for a split that has no stored record (not a split of its own).
    extra = {"val_err": 0.0, "unl_err": 0.5, "test_err": 0.1, "C": 1.0, "gamma": 1.0, "c_star": 1.0}
    version = _solver_version("s3vm_light")
    lines += [{"id": "D5", "split": i, "extra": "light_l1", "best": {"light_l1": extra}, "version": version}
              for i in (0, 2, 7)]
    lines.append({"id": "D5", "split": 1, "extra": "light_l1", "error": "Traceback: boom"})
    # run by another declared version of S3VM-light (or of a module it imports), or stamped with a
    # code hash only: not a result of the current version; and a line of an extra method that no
    # longer exists
    lines.append({"id": "D5", "split": 1, "extra": "light_l1", "best": {"light_l1": extra}, "version": "0" * 12})
    lines.append({"id": "D5", "split": 1, "extra": "light_l1", "best": {"light_l1": extra}, "code": version})
    lines.append({"id": "D5", "split": 1, "extra": "gone", "best": {"gone": extra}, "version": version})
    store.write_text("".join(json.dumps(r) + "\n" for r in lines))
    out = reproduce(["icml2013-table2"], run=False, reports_dir=tmp_path, echo=lambda *a: None)
    cells = {(c.row, c.column): c for c in out["icml2013-table2"]}
    svm = cells[("D5", "SVM unlabeled")]
    assert svm.n == 3 and svm.mean == pytest.approx(100 * p_svm) and svm.std == pytest.approx(1.0)
    assert svm.verdict == "within spread"
    light = cells[("D5", "S3VM-light unlabeled")]  # the hinge one is compared with the paper's
    assert light.n == 2 and light.mean == pytest.approx(50.0) and light.paper == paper[("D5", "S3VM-light unlabeled")][0]
    assert light.verdict == "differs"  # 50% against the paper's 15.76
    light2 = cells[("D5", "S3VM-light l2 unlabeled")]  # the squared hinge one has no paper value
    assert light2.n == 3 and light2.paper is None
    # Still to run: split 3 whole, and split 1's hinge S3VM-light (one attempt failed, one is stale).
    assert missing(load_cells(store), ["D5"], 4) == [("D5", 3, None), ("D5", 1, "light_l1"), ("D5", 0, "cccp_b"),
                                                     ("D5", 1, "cccp_b"), ("D5", 2, "cccp_b")]
    assert cells[("D1", "SVM unlabeled")].mean is None and cells[("D1", "SVM unlabeled")].n == 0
    md = (tmp_path / "icml2013-table2.md").read_text()
    assert "**Verdict:** differs" in md and "| D5 | ionosphere | 3 |" in md and "median 2.00" in md
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["icml2013-table2"]["splits"] == 3
    assert "icml2013-table2" in (tmp_path / "README.md").read_text()


def test_an_extra_line_stays_current_across_a_refactor_and_not_across_a_version_bump(tmp_path, monkeypatch):
    import s3vm_bench.harness.grid as grid
    from s3vm_bench.harness import icml2013
    from s3vm_bench.solvers.s3vm_light import S3VMLight

    extra = {"val_err": 0.0, "unl_err": 0.5, "test_err": 0.1, "C": 1.0, "gamma": 1.0, "c_star": 1.0}
    one = {m: 0.1 for m in ("svm", "light", "cccp", "path")}
    store = tmp_path / "cells.jsonl"
    lines = [_record("D5", 0, one, one), {"id": "D5", "split": 0, "extra": "light_l1", "best": {"light_l1": extra},
                                         "version": _solver_version("s3vm_light")}]
    store.write_text("".join(json.dumps(r) + "\n" for r in lines))
    monkeypatch.setattr(grid, "code_text", lambda path: b"refactored")  # code edited, no version bumped
    assert missing(load_cells(store), ["D5"], 1) == [("D5", 0, "cccp_b")]  # the light_l1 line is current
    monkeypatch.setattr(S3VMLight, "result_version", S3VMLight.result_version + 1)
    for f in (grid.solver_version, icml2013._solver_version):
        f.cache_clear()
    try:
        assert missing(load_cells(store), ["D5"], 1) == [("D5", 0, "light_l1"), ("D5", 0, "cccp_b")]
    finally:
        monkeypatch.undo()
        for f in (grid.solver_version, icml2013._solver_version):
            f.cache_clear()


def test_one_real_cell_runs_and_is_stored_once(data_env, tmp_path, no_shipped_table):
    kw = dict(reports_dir=tmp_path, n_splits=1, datasets=["ionosphere"], n_jobs=1, echo=lambda *a: None)
    first = {(c.row, c.column): c for c in reproduce(["icml2013-table2"], **kw)["icml2013-table2"]}
    store = [json.loads(line) for line in (tmp_path / "icml2013" / "cells.jsonl").read_text().splitlines()]
    assert len(store) == 4 and [r["id"] for r in store] == ["D5"] * 4
    assert "extra" not in store[0] and [r["extra"] for r in store[1:]] == ["light_l1", "cccp_b", "fig5"]
    assert not any("error" in r for r in store)
    # Figure 5: every C of the grid carries the objectives of the path and of both S3VM-lights
    # and CCCPs (> 0); the fig5 line scores the path as the split's record does (same kernel,
    # b and labels), so both give the same J
    assert [row["C"] for row in store[3]["fig5"]] == [row["C"] for row in store[0]["fig5"]] == [1, 10, 100, 1000]
    for line, base in zip(store[3]["fig5"], store[0]["fig5"]):
        assert line["path"] == pytest.approx(base["path"], rel=1e-9)
    fig5 = load_cells(tmp_path / "icml2013" / "cells.jsonl")[("D5", 0)]["fig5"]
    assert all(row[m] > 0 for row in fig5 for m in ("path", "light", "cccp", "light_l1", "cccp_b"))
    for col in ("SVM unlabeled", "S3VM-path test", "S3VM-light unlabeled", "S3VM-light l2 test", "CCCP unlabeled",
                "CCCP searched test"):
        assert first[("D5", col)].n == 1 and 0 <= first[("D5", col)].mean < 60
    reproduce(["icml2013-table2"], **kw)  # nothing missing: nothing rerun
    assert len((tmp_path / "icml2013" / "cells.jsonl").read_text().splitlines()) == 4


def test_figure5_lines_add_the_judged_solvers_to_their_split_when_current(tmp_path):
    one = {m: 0.1 for m in ("svm", "light", "cccp", "path")}
    rows = [{"C": C, "path": C, "light": 2 * C, "cccp": 3 * C} for C in (1.0, 10.0)]
    codes = {m: _solver_version(m) for m in ("s3vm_light", "cccp", "s3vm_path")}
    lines = [_record("D5", i, one, one) | {"fig5": rows} for i in range(3)]
    judged = [{"C": C, "light_l1": 4 * C, "cccp_b": 5 * C} for C in (1.0, 10.0)]
    lines += [{"id": "D5", "split": 0, "extra": "fig5", "fig5": judged, "version": codes},
              # split 1: run by another declared version of CCCP; split 2: failed
              {"id": "D5", "split": 1, "extra": "fig5", "fig5": judged, "version": codes | {"cccp": "0" * 12}},
              {"id": "D5", "split": 2, "extra": "fig5", "error": "Traceback: boom"}]
    store = tmp_path / "cells.jsonl"
    store.write_text("".join(json.dumps(r) + "\n" for r in lines))
    cells = load_cells(store)
    assert cells[("D5", 0)]["fig5"] == [{"C": C, "path": C, "light": 2 * C, "cccp": 3 * C, "light_l1": 4 * C,
                                         "cccp_b": 5 * C} for C in (1.0, 10.0)]
    assert cells[("D5", 1)]["fig5"] == rows
    todo = missing(cells, ["D5"], 3)
    assert [t for t in todo if t[2] == "fig5"] == [("D5", 1, "fig5"), ("D5", 2, "fig5")]
    md = (tmp_path / "report.md")
    from s3vm_bench.harness.icml2013 import report
    report(cells, md)
    # splits 1-2 lack the judged values: the means over the three splits are not given
    assert "| D5 | 1 | 1 | not run | not run | not run | 2 | 3 |" in md.read_text()


def test_a_failed_extra_is_tried_once_per_run_and_new_splits_get_their_extras(tmp_path, monkeypatch):
    import s3vm_bench.harness.icml2013 as mod

    store = tmp_path / "icml2013" / "cells.jsonl"
    store.parent.mkdir()
    store.write_text(json.dumps(_record("D5", 0, dict.fromkeys(("svm", "light", "cccp", "path"), 0.1),
                                        dict.fromkeys(("svm", "light", "cccp", "path"), 0.1))) + "\n")
    calls = []

    def worker(pid, index, extra=None):
        calls.append((pid, index, extra))
        if extra is None:  # a new split: stored whole
            return _record(pid, index, dict.fromkeys(("svm", "light", "cccp", "path"), 0.2),
                           dict.fromkeys(("svm", "light", "cccp", "path"), 0.2))
        return {"id": pid, "split": index, "extra": extra, "error": "Traceback: boom"}

    monkeypatch.setattr(mod, "_worker", worker)
    _, meta = mod.reproduce_table(n_splits=2, datasets=["ionosphere"], reports_dir=tmp_path, echo=lambda *a: None)
    # split 0's extra failed and is not retried in the same run; split 1 (new) then gets its extra
    assert calls == [("D5", 1, None), ("D5", 0, "light_l1"), ("D5", 0, "cccp_b"), ("D5", 1, "light_l1"),
                     ("D5", 1, "cccp_b")]
    assert meta["n_failed"] == 4


def test_solvers_filter_does_not_run_the_external_table(tmp_path, capsys, no_shipped_table):
    said = []
    out = reproduce(["icml2013-table2"], solvers=["s3vm_light"], reports_dir=tmp_path, echo=said.append)
    assert any("not run with --solvers" in m for m in said)
    assert all(c.n == 0 for c in out["icml2013-table2"]) and not (tmp_path / "icml2013" / "cells.jsonl").exists()


def test_unknown_datasets_and_the_table_list(capsys):
    with pytest.raises(ValueError, match="not a row of"):
        reproduce(["icml2013-table2"], datasets=["g50c"], run=False, echo=lambda *a: None)
    assert main(["reproduce", "--list"]) == 0
    assert "icml2013-table2" in capsys.readouterr().out


def test_a_line_cut_short_by_a_killed_run_is_recomputed_not_fatal_nor_glued_to(tmp_path):
    from s3vm_bench.harness._atomic import append_line

    one = {m: 0.1 for m in ("svm", "light", "cccp", "path")}
    store = tmp_path / "cells.jsonl"
    whole = json.dumps(_record("D5", 0, one, one))
    store.write_text(whole + "\n" + json.dumps(_record("D5", 1, one, one))[:40])  # killed mid-write
    with pytest.warns(RuntimeWarning, match="unterminated last line"):
        cells = load_cells(store)
    assert sorted(cells) == [("D5", 0)]  # split 1 is missing: it runs again
    append_line(store, json.dumps(_record("D5", 1, one, one)))  # the next run's record, not glued on
    assert store.read_text().splitlines()[0] == whole
    assert sorted(load_cells(store)) == [("D5", 0), ("D5", 1)]


def test_every_shipped_icml2013_line_is_current():
    # Like the grid's committed cells: the shipped store answers the whole table under the current
    # declared versions, so a fresh clone reruns none of it.
    from s3vm_bench.harness import icml2013

    stored = icml2013.load_cells(icml2013.CELLS_FILE)
    assert len(stored) == 100
    assert icml2013.missing(stored, list(icml2013.DATASETS), 10) == []
