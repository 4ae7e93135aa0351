"""ICML 2013 Table 2 through ``s3vm-bench reproduce`` (harness.icml2013)."""

import json

import pytest

from harness.cli import main
from harness.reproduce import load_targets, reproduce


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
    store.write_text("".join(json.dumps(r) + "\n" for r in lines))
    out = reproduce(["icml2013-table2"], run=False, reports_dir=tmp_path, echo=lambda *a: None)
    cells = {(c.row, c.column): c for c in out["icml2013-table2"]}
    svm = cells[("D5", "SVM unlabeled")]
    assert svm.n == 3 and svm.mean == pytest.approx(100 * p_svm) and svm.std == pytest.approx(1.0)
    assert svm.verdict == "within spread"
    assert cells[("D5", "S3VM-light unlabeled")].verdict == "differs"  # 50% against the paper's 15.76
    assert cells[("D1", "SVM unlabeled")].mean is None and cells[("D1", "SVM unlabeled")].n == 0
    md = (tmp_path / "icml2013-table2.md").read_text()
    assert "**Verdict:** differs" in md and "| D5 | ionosphere | 3 |" in md and "median 2.00" in md
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["icml2013-table2"]["splits"] == 3
    assert "icml2013-table2" in (tmp_path / "README.md").read_text()


def test_one_real_cell_runs_and_is_stored_once(data_env, tmp_path):
    kw = dict(reports_dir=tmp_path, n_splits=1, datasets=["ionosphere"], n_jobs=1, echo=lambda *a: None)
    first = {(c.row, c.column): c for c in reproduce(["icml2013-table2"], **kw)["icml2013-table2"]}
    store = (tmp_path / "icml2013" / "cells.jsonl").read_text().splitlines()
    assert len(store) == 1 and json.loads(store[0])["id"] == "D5"
    for col in ("SVM unlabeled", "S3VM-path test"):
        assert first[("D5", col)].n == 1 and 0 <= first[("D5", col)].mean < 60
    reproduce(["icml2013-table2"], **kw)  # nothing missing: nothing rerun
    assert len((tmp_path / "icml2013" / "cells.jsonl").read_text().splitlines()) == 1


def test_unknown_datasets_and_the_table_list(capsys):
    with pytest.raises(ValueError, match="not a row of"):
        reproduce(["icml2013-table2"], datasets=["g50c"], run=False, echo=lambda *a: None)
    assert main(["reproduce", "--list"]) == 0
    assert "icml2013-table2" in capsys.readouterr().out
