"""The grid runner: cache and resume, failures and time limits, joblib and dask backends."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import s3vm_bench.harness.cell_keys as cell_keys
import s3vm_bench.harness.grid as grid
from s3vm_bench.harness.grid import Cell, ResultCache, run_cells, store_rows
from s3vm_bench.harness.results import read_results


def _cells(solvers=("svm", "s3vm_light"), n=3):
    return [Cell("toy", "2moons", s, i, n_splits=n) for s in solvers for i in range(n)]


def _table(rows):
    keep = ["solver", "split", "objective", "unlabeled_error", "test_error", "status"]
    return pd.DataFrame(rows)[keep].sort_values(["solver", "split"]).reset_index(drop=True)


def test_toy_experiment_end_to_end_and_cache_hits(data_env, tmp_path):
    cells = _cells()
    rows = run_cells(cells, tmp_path / "cache", n_jobs=1, progress=False)
    assert [r["status"] for r in rows] == ["done"] * 6
    assert not any(r["cached"] for r in rows)
    assert [(r["solver"], r["split"]) for r in rows] == [(c.solver, c.split) for c in cells]
    again = run_cells(cells, tmp_path / "cache", n_jobs=1, progress=False)
    assert all(r["cached"] for r in again)
    pd.testing.assert_frame_equal(_table(rows), _table(again))
    store_rows(tmp_path / "results.csv", rows)
    stored = read_results(tmp_path / "results.csv")
    assert len(stored) == 6 and set(stored["status"]) == {"done"}
    assert stored["git_commit"].notna().all()


def test_killed_run_resumes_and_reruns_only_missing_cells(data_env, tmp_path, monkeypatch):
    cells = _cells()
    full = run_cells(cells, tmp_path / "ref", n_jobs=1, progress=False)
    real = grid.execute_cell
    calls = []

    def dies_after_two(cell, time_limit=None):
        if len(calls) == 2:
            raise KeyboardInterrupt  # the run is killed while the third cell runs
        calls.append(cell)
        return real(cell, time_limit)

    monkeypatch.setattr(grid, "execute_cell", dies_after_two)
    with pytest.raises(KeyboardInterrupt):
        run_cells(cells, tmp_path / "cache", backend="sequential", progress=False)
    calls.clear()
    monkeypatch.setattr(grid, "execute_cell", lambda c, t=None: (calls.append(c), real(c, t))[1])
    resumed = run_cells(cells, tmp_path / "cache", backend="sequential", progress=False)
    assert len(calls) == 4 and sum(r["cached"] for r in resumed) == 2
    pd.testing.assert_frame_equal(_table(full), _table(resumed))


def test_failures_and_timeouts_are_reported_not_cached(data_env, tmp_path):
    cells = [Cell("toy", "2moons", "svm", 0, n_splits=2),
             Cell("toy", "2moons", "tests._bad_solvers:Raiser", 0, n_splits=2),
             Cell("toy", "2moons", "tests._bad_solvers:Sleeper", 0, n_splits=2),
             Cell("toy", "2moons", "svm", 1, n_splits=2)]
    # 10 s: ample for an SVM on two moons (milliseconds) in a fresh process (after the Sleeper's
    # worker is killed the cells left run in processes of their own) on a machine loaded by other
    # jobs, and far below the Sleeper's 30 s.
    rows = run_cells(cells, tmp_path / "cache", n_jobs=2, time_limit=10.0, progress=False)
    assert [r["status"] for r in rows] == ["done", "failed", "timeout", "done"]
    assert "deliberate failure" in rows[1]["error"] and "Traceback" in rows[1]["error"]
    assert "time limit" in rows[2]["error"]
    cache = ResultCache(tmp_path / "cache")
    assert [cache.get(c.key()) is not None for c in cells] == [True, False, False, True]
    with pytest.raises(ValueError, match="only successful"):
        cache.put("ab" * 16, rows[1])


def test_a_cell_run_in_a_thread_past_its_limit_is_a_timeout(data_env):
    # In a thread (a threaded dask worker) no alarm can interrupt the solver: the limit is
    # checked once the cell has run, and an overlong cell is not reported (nor cached) as done.
    import threading

    out = {}

    def run(name, limit):
        out[name] = grid.execute_cell(Cell("toy", "2moons", name, 0, n_splits=2), limit)

    threads = [threading.Thread(target=run, args=("tests._bad_solvers:Dozer", 0.5)),
               threading.Thread(target=run, args=("svm", 60.0))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    dozed = out["tests._bad_solvers:Dozer"]
    assert dozed["status"] == "timeout" and "checked at the end" in dozed["error"]
    assert dozed["fit_seconds"] >= 1.5
    assert out["svm"]["status"] == "done"


@pytest.mark.parametrize("name", ["kernel", "sigma", "C", "C_star", "r"])
def test_the_protocol_settings_cannot_be_passed_as_solver_parameters(name, capsys):
    # The solver would train at --param C=5 while the objective and the stored row say Table 5's C.
    from s3vm_bench.harness.cli import main

    with pytest.raises(ValueError, match=f"solver parameter\\(s\\) {name} are the protocol's"):
        Cell("t", "2moons", "svm", 0, params={name: 1.0})
    assert main(["run", "--solver", "svm", "--dataset", "2moons", "--splits", "1", "--param", f"{name}=1",
                 "--results", "/nonexistent/never-written.csv"]) == 2
    assert "are the protocol's" in capsys.readouterr().err
    from s3vm_bench.harness.compare import compare

    with pytest.raises(ValueError, match="are the protocol's"):
        compare("svm", ("two_moons",), 1, params={name: 1.0})
    Cell("t", "2moons", "s3vm_light", 0, params={"loss": "l1"})  # the solver's own parameters are fine


def test_an_unknown_solver_parameter_names_the_solvers_parameters(capsys):
    from s3vm_bench.harness.cli import main
    from s3vm_bench.harness.compare import compare

    assert main(["run", "--solver", "s3vm_light", "--dataset", "2moons", "--splits", "1", "--param", "nosuch=3",
                 "--results", "/nonexistent/never-written.csv"]) == 2
    err = capsys.readouterr().err
    assert "S3VMLight has no parameter 'nosuch'; its parameters are" in err and "loss" in err and "max_swaps" in err
    with pytest.raises(ValueError, match="has no parameter 'nosuch'"):
        compare("s3vm_light", ("two_moons",), 1, params={"nosuch": 3})


def test_a_refused_solver_parameter_value_fails_before_any_split_runs(tmp_path, capsys):
    # A refused value must not reach the splits: each would fail in fit and store a failed row.
    from s3vm_bench.harness.cli import main
    from s3vm_bench.harness.compare import compare
    from s3vm_bench.solvers import get_solver

    out = tmp_path / "runs.csv"
    assert main(["run", "--solver", "newton", "--dataset", "2moons", "--splits", "1", "--param", "loss=bogus",
                 "--results", str(out)]) == 2
    assert "NewtonS3VM: loss must be one of 'flat', 'quadratic', got 'bogus'" in capsys.readouterr().err
    assert not out.exists()
    assert main(["reproduce", "jmlr2008-table3", "--solvers", "cccp", "--param", "anneal=3", "--plan",
                 "--out", str(tmp_path / "work")]) == 2
    assert "CCCP: anneal must be a bool" in capsys.readouterr().err
    with pytest.raises(ValueError, match="max_iter must be an int >= 1, got -3"):
        compare("newton", ("two_moons",), 1, params={"max_iter": -3})
    assert get_solver("newton")(loss="quadratic").check_params().loss == "quadratic"


def test_a_parameter_value_is_json_or_python_constants_else_text(tmp_path, capsys):
    """``--param anneal=False`` (as the README writes the values) is the bool, not the text 'False'."""
    from s3vm_bench.harness.cli import main
    from s3vm_bench.harness.run import parse_params

    assert parse_params(["anneal=False", "fixing=True", "r_tilde=None", "tol=1e-3", "max_iter=50", "kernel=linear",
                         "lookahead=false", "loss=None-such"]) == {
        "anneal": False, "fixing": True, "r_tilde": None, "tol": 1e-3, "max_iter": 50, "kernel": "linear",
        "lookahead": False, "loss": "None-such"}
    plans = []
    for value in ("False", "false"):  # the same cells planned (JMLR 2008 Table 12 has them)
        assert main(["reproduce", "jmlr2008-table3", "--solvers", "cccp", "--param", f"anneal={value}", "--plan",
                     "--out", str(tmp_path / "work")]) == 0
        captured = capsys.readouterr()
        assert captured.err == ""
        plans.append(captured.out)
    assert plans[0] == plans[1]


@pytest.fixture
def fresh_versions():
    """Clear the memoized declared versions before and after a test that changes one."""
    for f in (grid.solver_version, grid.declared_versions, grid.solver_source_hash):
        f.cache_clear()
    yield
    for f in (grid.solver_version, grid.declared_versions, grid.solver_source_hash):
        f.cache_clear()


def test_cell_key_depends_on_params_split_and_declared_versions_not_on_code(monkeypatch, fresh_versions):
    from s3vm_bench.solvers.svm import SVM

    a = Cell("t", "2moons", "svm", 0)
    assert a.key() == Cell("other-experiment", "2moons", "svm", 0).key()  # the name is only a label
    assert a.key() != Cell("t", "2moons", "svm", 1).key()
    assert a.key() != Cell("t", "2moons", "svm", 0, params={"max_iter": 50}).key()
    assert a.key() != Cell("t", "2moons", "s3vm_light", 0).key()
    before = a.key()
    # Any edit of the code, as long as no version is bumped: the key stays.
    monkeypatch.setattr(cell_keys, "code_text", lambda path: b"refactored " + str(path).encode())
    grid.solver_source_hash.cache_clear()
    assert a.key() == before
    monkeypatch.setattr(SVM, "result_version", SVM.result_version + 1)  # the solver's results moved
    grid.solver_version.cache_clear()
    assert a.key() != before


def test_a_shared_module_version_rekeys_the_solvers_that_import_it(monkeypatch, fresh_versions):
    import s3vm_bench.solvers._mean_output as mean_output

    newton, svm = Cell("t", "2moons", "newton", 0), Cell("t", "2moons", "svm", 0)
    assert "solvers._mean_output" in grid.solver_version("newton")["numerics"]
    assert "solvers._mean_output" not in grid.solver_version("svm")["numerics"]
    before = newton.key(), svm.key()
    monkeypatch.setattr(mean_output, "RESULT_VERSION", mean_output.RESULT_VERSION + 1)
    grid.solver_version.cache_clear()
    grid.declared_versions.cache_clear()
    assert newton.key() != before[0] and svm.key() == before[1]


def test_reference_cells_key_on_how_the_reference_set_is_built(monkeypatch, fresh_versions):
    # A reference-set cell's problem is built by harness.reference_sets: a new version of it must
    # rerun the cell; the cells of the ordinary split protocols do not depend on it.
    import s3vm_bench.harness.reference_sets as reference_sets

    ref, plain = Cell("t", "two_moons", "svm", 0, protocol="reference"), Cell("t", "2moons", "svm", 0)
    before = ref.key(), plain.key()
    monkeypatch.setattr(reference_sets, "RESULT_VERSION", reference_sets.RESULT_VERSION + 1)
    grid.declared_versions.cache_clear()
    assert ref.key() != before[0] and plain.key() == before[1]


def test_the_data_checksums_are_part_of_the_key(monkeypatch, fresh_versions):
    from s3vm_bench import data_registry

    cell = Cell("t", "g50c", "svm", 0)
    assert grid.data_digest("g50c") and grid.data_digest("2moons") and grid.data_digest("two_moons") == ""
    before = cell.key()
    entries = data_registry.registry()
    changed = {k: ("0" * 64, url) if k.startswith("g50c/") else (sha, url) for k, (sha, url) in entries.items()}
    monkeypatch.setattr(data_registry, "registry", lambda: changed)
    grid.data_digest.cache_clear()
    try:
        assert cell.key() != before
    finally:
        grid.data_digest.cache_clear()


def test_an_outside_solver_without_a_declared_version_is_keyed_on_its_code(tmp_path, monkeypatch, fresh_versions):
    pkg = tmp_path / "verpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "est.py").write_text("class Est:\n    fit = predict = staticmethod(len)\n    pass\n")
    (pkg / "declared.py").write_text("class Est:\n    fit = predict = staticmethod(len)\n    result_version = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert set(grid.solver_version("verpkg.est:Est")) == {"source_sha256"}
    assert grid.solver_version("verpkg.declared:Est")["version"] == 3
    plain, declared = Cell("t", "2moons", "verpkg.est:Est", 0), Cell("t", "2moons", "verpkg.declared:Est", 0)
    before = plain.key(), declared.key()
    (pkg / "est.py").write_text("class Est:\n    fit = predict = staticmethod(len)\n    x = 1\n")
    (pkg / "declared.py").write_text("class Est:\n    fit = predict = staticmethod(len)\n    result_version = 3\n    x = 1\n")
    grid.solver_version.cache_clear()
    grid.solver_source_hash.cache_clear()
    assert plain.key() != before[0] and declared.key() == before[1]


def test_every_committed_cell_is_found_and_stays_found_after_a_refactor(data_env, tmp_path, monkeypatch, fresh_versions):
    # The committed results table answers for every planned cell of every table (the plan's
    # "0 missing"), and a change of code that bumps no version -- here every module's code
    # text changes at once -- leaves every key, so nothing has to be recomputed.
    from s3vm_bench.harness.reproduce import build_cells
    from s3vm_bench.harness.specs import SPECS

    cache = ResultCache(tmp_path / "cache", table=Path(__file__).parents[1] / "reports" / "runs")
    cells = [p.cell for spec in SPECS.values() for p in build_cells(spec)[0]]
    keys = [c.key() for c in cells]
    assert len(cells) > 16000
    assert all(cache.from_table(k, c) is not None for c, k in zip(cells, keys))
    monkeypatch.setattr(cell_keys, "code_text", lambda path: b"refactored " + str(path).encode())
    grid.solver_source_hash.cache_clear()
    assert [c.key() for c in cells] == keys


def test_solver_hash_covers_the_modules_the_solver_imports(tmp_path, monkeypatch):
    # A solver package of our own: the estimator imports a helper module relatively.
    pkg = tmp_path / "hashpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "_helper.py").write_text("def f():\n    return 1\n")
    (pkg / "est.py").write_text("from ._helper import f\n\n\nclass Est:\n    fit = predict = staticmethod(len)\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    closure = grid.source_closure("hashpkg.est")
    assert set(closure) == {"hashpkg.est", "hashpkg._helper"}
    # The project's own solvers: the shared machinery and the protocol are part of the key.
    assert {"solvers._primal", "solvers._mean_output", "solvers.newton"} <= set(
        grid.source_closure("solvers.newton"))
    grid.solver_source_hash.cache_clear()
    before = grid.solver_source_hash("hashpkg.est:Est")
    (pkg / "_helper.py").write_text("def f():\n    return 2\n")  # only the helper changes
    grid.solver_source_hash.cache_clear()
    assert grid.solver_source_hash("hashpkg.est:Est") != before
    grid.solver_source_hash.cache_clear()


_CODE = '''"""Module docstring."""
import os  # an import comment


class A:
    """Class
    docstring."""

    x = "# not a comment"

    def f(self):
        """Method docstring."""
        return 1  # trailing


async def g():
    'single-quoted docstring'
    return "text"


def fé(): "docstring after a non-ASCII name"; return 2
'''


def test_code_text_drops_comments_docstrings_and_blank_lines_only(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(_CODE, encoding="utf-8")
    text = grid.code_text(path).decode()
    assert text == ('import os\nclass A:\n    x = "# not a comment"\n    def f(self):\n        return 1\n'
                    'async def g():\n    return "text"\ndef fé(): ; return 2')
    # Rewording a comment or a docstring, or adding blank lines, leaves the text as it was ...
    for edit in (("an import comment", "reworded"), ("Method docstring.", "Reworded."),
                 ("return 1  # trailing", "return 1"), ("\n\nasync", "\n\n\n\nasync"),
                 ("single-quoted docstring", "other"), ('"docstring after', '"reworded docstring after')):
        path.write_text(_CODE.replace(*edit), encoding="utf-8")
        assert grid.code_text(path).decode() == text, edit
    # ... a change of code, of a string that is not a docstring, or of indentation does not.
    for edit in (("return 1", "return 2"), ('"# not a comment"', '"# other"'), ("import os", "import sys"),
                 ('    return "text"', '    return "text";'), ("x = ", "y = ")):
        path.write_text(_CODE.replace(*edit), encoding="utf-8")
        assert grid.code_text(path).decode() != text, edit


@pytest.mark.parametrize("a, b", [
    ("\x0c\nTOL = 1e-8\ny = 2  # c\n", "\x0c\nTOL = 1e-3\ny = 2  # c\n"),  # a form feed is not a line break
    ('s = """a\n\nb"""\n', 's = """a\nb"""\n'),  # blank lines and trailing blanks inside strings are text
    ('s = """a  \nb"""\n', 's = """a\nb"""\n'),
    ("s = f'''{s}\n\nb'''\n", "s = f'''{s}\nb'''\n"),
    ('def f():\n    """doc"""\n    return """a\n\n"""\n', 'def f():\n    """doc"""\n    return """a\n"""\n'),
])
def test_code_text_keeps_what_changes_the_program(tmp_path, a, b):
    pa, pb = tmp_path / "a.py", tmp_path / "b.py"
    pa.write_bytes(a.encode())
    pb.write_bytes(b.encode())
    assert grid.code_text(pa) != grid.code_text(pb)


def test_code_text_decodes_by_the_encoding_declaration(tmp_path):
    body = "s = '\u00e9'\n".encode("utf-8")  # two bytes: one character in UTF-8, two in latin-1
    pa, pb = tmp_path / "a.py", tmp_path / "b.py"
    pa.write_bytes(b"# -*- coding: utf-8 -*-\n" + body)
    pb.write_bytes(b"# -*- coding: latin-1 -*-\n" + body)
    assert grid.code_text(pa) != grid.code_text(pb)
    assert grid.code_text(pa) == b"s = '\xc3\xa9'"


@pytest.mark.parametrize("name", ["runs.csv", "runs.csv.gz"])
def test_a_row_read_back_from_the_results_table_is_the_cached_row(data_env, tmp_path, name):
    from s3vm_bench.harness.results import COLUMNS, OPTIONAL_COLUMNS, read_results_text, row_from_table

    # g50c's splits come with the data (no seed, no test set); a 64-bit seed in the same column
    # must not be read back as a rounded float.
    cells = [Cell("t", "g50c", "svm", 1), Cell("t", "2moons", "svm", 1, n_splits=3)]
    rows = run_cells(cells, tmp_path / "cache", n_jobs=1, progress=False)
    assert rows[0]["split_seed"] is None and rows[1]["split_seed"] > 2**53
    store_rows(tmp_path / name, rows[1:])
    store_rows(tmp_path / name, rows[:1])  # merged with the stored row, which must stay exact
    records = {r["cell_key"]: r for r in read_results_text(tmp_path / name).to_dict("records")}
    assert len(records) == 2
    for cell in cells:
        record = records[cell.key()]
        cached = ResultCache(tmp_path / "cache").get(cell.key())
        # an optional column no row fills is not written, and neither file nor cache has it
        assert not any(c in record or c in cached for c in OPTIONAL_COLUMNS)
        assert row_from_table(record) == {c: cached.get(c) for c in COLUMNS if c != "cell_key"
                                          and c not in OPTIONAL_COLUMNS}


def test_cells_missing_from_the_cache_are_read_from_the_results_table(data_env, tmp_path, monkeypatch):
    # A fresh clone has the shipped table but no cache folder: its rows are not rerun.
    cells = _cells(solvers=("svm",), n=3)
    ref = run_cells(cells, tmp_path / "ref", n_jobs=1, progress=False)
    table = tmp_path / "runs.csv.gz"
    store_rows(table, ref[:2])
    # A row of the same cell run by other code carries another key and is not taken; nor is a
    # failed run of it under its own key, nor a row of another cell filed under its key.
    store_rows(table, [ref[2] | {"cell_key": "0" * 32, "experiment": "other"}])
    store_rows(table, [ref[2] | {"status": "failed", "error": "boom", "experiment": "failed"}])
    store_rows(table, [ref[0] | {"cell_key": cells[2].key(), "experiment": "mis-keyed"}])
    calls = []
    real = grid.execute_cell
    monkeypatch.setattr(grid, "execute_cell", lambda c, t=None: (calls.append(c), real(c, t))[1])
    assert ResultCache(tmp_path / "c0", table=table).lookup(cells[0], migrate=False)["objective"] == \
        ref[0]["objective"]
    assert not (tmp_path / "c0").exists()  # migrate=False wrote nothing
    rows = run_cells(cells, tmp_path / "cache", backend="sequential", progress=False, table=table)
    assert calls == [cells[2]]
    assert [r["cached"] for r in rows] == [True, True, False]
    pd.testing.assert_frame_equal(_table(ref), _table(rows))
    cache = ResultCache(tmp_path / "cache")
    assert cache.get(cells[0].key())["objective"] == ref[0]["objective"]  # copied into the folder
    assert cache.get(cells[0].key())["timestamp"] == ref[0]["timestamp"]  # with its provenance
    # Without the table every cell runs.
    calls.clear()
    run_cells(cells, tmp_path / "cache2", backend="sequential", progress=False)
    assert calls == cells


def test_stores_are_written_with_the_umask_permissions_not_private(tmp_path):
    import os
    import stat

    from s3vm_bench.harness._atomic import atomic_write

    old = os.umask(0o022)
    try:
        ResultCache(tmp_path / "cache").put("ab" * 16, {"status": "done"})
        store_rows(tmp_path / "runs.csv.gz", [{"experiment": "t", "status": "done", "cell_key": "k"}])
        atomic_write(tmp_path / "x.md", "x")
    finally:
        os.umask(old)
    for p in (tmp_path / "cache" / "ab" / f"{'ab' * 16}.json", tmp_path / "runs.csv.gz", tmp_path / "x.md"):
        assert stat.S_IMODE(p.stat().st_mode) == 0o644, p
    assert not [q for q in tmp_path.rglob("*.tmp")]  # no temporary file left


def test_line_stores_keep_whole_records_only(tmp_path):
    import multiprocessing

    from s3vm_bench.harness._atomic import append_line, read_lines

    path = tmp_path / "s.jsonl"
    assert read_lines(path) == []
    append_line(path, "a")
    append_line(path, "b\n")  # one newline per record whether or not the caller added one
    assert path.read_text() == "a\nb\n" and read_lines(path) == ["a", "b"]
    with open(path, "a") as fh:
        fh.write("c-cut-sh")  # a writer killed mid-record
    with pytest.warns(RuntimeWarning, match="unterminated last line"):
        assert read_lines(path) == ["a", "b"]
    append_line(path, "d")
    assert path.read_text() == "a\nb\nd\n"  # the partial record was cut off, not glued onto
    # Processes appending at once (parallel workers on one store) never interleave records.
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(str(path), w)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert all(p.exitcode == 0 for p in procs)
    recs = read_lines(path)[3:]
    assert sorted(recs) == sorted(f"{w}-{i}-" + "x" * 2000 for w in range(3) for i in range(100))


def _append_many(path, w):
    from s3vm_bench.harness._atomic import append_line

    for i in range(100):
        append_line(path, f"{w}-{i}-" + "x" * 2000)


def test_a_table_row_is_found_and_copied_into_the_cache_folder(data_env, tmp_path):
    cell = Cell("t", "2moons", "svm", 2, n_splits=3)
    (ref,) = run_cells([cell], tmp_path / "ref", n_jobs=1, progress=False)
    assert ref["cpu_seconds"] > 0 and ref["code_sha256"] == grid.solver_source_hash("svm")
    table = tmp_path / "runs.csv"
    store_rows(table, [ref])
    cache = ResultCache(tmp_path / "cache", table=table)
    assert cache.get(cell.key()) is None
    assert cache.lookup(cell)["objective"] == ref["objective"]
    assert cache.get(cell.key())["objective"] == ref["objective"]  # copied into the folder


@pytest.mark.parametrize("column, text, why", [
    ("objective", "abc", "column 'objective' holds 'abc', not a number"),
    ("cpu_seconds", "-5", "cpu_seconds -5.0 is not a number of seconds"),
    ("params", "{not json", "Expecting property name"),
])
def test_a_damaged_field_of_a_table_row_means_recompute_not_a_traceback(column, text, why, data_env, tmp_path):
    """A hand-edited results table: the row is ignored with a warning naming the field (its cell is
    recomputed), as for a row that fails check_row."""
    import csv

    cell = Cell("t", "2moons", "svm", 2, n_splits=3)
    (ref,) = run_cells([cell], tmp_path / "ref", n_jobs=1, progress=False)
    table = tmp_path / "runs.csv"
    store_rows(table, [ref])
    lines = table.read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("experiment,"))
    names, (values,) = lines[header].split(","), list(csv.reader(lines[header + 1:]))
    values[names.index(column)] = text
    with open(table, "w", newline="") as fh:
        fh.write("\n".join(lines[:header + 1]) + "\n")
        csv.writer(fh, lineterminator="\n").writerow(values)
    with pytest.warns(RuntimeWarning, match=f"ignoring the row of {cell.key()} in the results table: {why}"):
        assert ResultCache(tmp_path / "cache", table=table).lookup(cell) is None
    # The plan's cost estimate skips the row as well (the cell counts as missing).
    from s3vm_bench.harness.plan import _fallback_medians

    assert _fallback_medians(ResultCache(tmp_path / "cache", table=table), set()) == ({}, {})


def test_row_from_table_refuses_text_it_cannot_have_written():
    from s3vm_bench.harness.results import row_from_table

    assert row_from_table({"split": "3", "split_seed": "5.71840001907573e+18"}) == {"split": 3, "split_seed": None}
    with pytest.raises(ValueError, match="not an integer"):
        row_from_table({"split": "3.5"})
    with pytest.raises(ValueError, match="balance_exact"):
        row_from_table({"balance_exact": "true"})


def test_an_unreadable_results_table_is_a_clear_error(tmp_path):
    table = tmp_path / "runs.csv.gz"
    table.write_bytes(b"not gzip")
    with pytest.raises(ValueError, match="cannot read the results table"):
        ResultCache(tmp_path / "cache", table=table).lookup(Cell("t", "2moons", "svm", 0))
    (tmp_path / "keyless.csv").write_text("status,objective\ndone,1.0\n")
    with pytest.raises(ValueError, match="keyless.csv is not a results table"):
        ResultCache(tmp_path / "cache", table=tmp_path / "keyless.csv").lookup(Cell("t", "2moons", "svm", 0))


def test_an_unreadable_file_of_a_folder_store_is_named(tmp_path):
    """A folder store (one CSV per experiment and data set): the error names the file at fault, not
    the folder, so that restoring or deleting it does not take the other files with it."""
    store = tmp_path / "runs"
    (store / "exp").mkdir(parents=True)
    header = "experiment,dataset,protocol,split,solver,params,kernel,sigma,C,C_star,r_mode,status\n"
    (store / "exp" / "a.csv").write_text(header + 'exp,a,jmlr2008,0,svm,{},rbf,1.0,1.0,1.0,exact,done\n')
    (store / "exp" / "b.csv").write_text(header + 'exp,b,jmlr2008,0,svm,"{,rbf,1.0\n')  # cut inside a quote
    with pytest.raises(ValueError, match=r"cannot read the results table \S*b\.csv \(ParserError"):
        ResultCache(tmp_path / "cache", table=store).lookup(Cell("t", "2moons", "svm", 0))


def test_solver_hash_ignores_comments_and_docstrings(tmp_path, monkeypatch):
    pkg = tmp_path / "docpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    hashes = []
    for text in ('"""Doc."""\n\n\nclass Est:\n    fit = predict = staticmethod(len)\n    pass  # note\n', '"""Other doc."""\nclass Est:\n    fit = predict = staticmethod(len)\n    pass\n',
                 '"""Doc."""\n\n\nclass Est:\n    fit = predict = staticmethod(len)\n    x = 1\n'):
        (pkg / "est.py").write_text(text)
        grid.solver_source_hash.cache_clear()
        hashes.append(grid.solver_source_hash("docpkg.est:Est"))
    grid.solver_source_hash.cache_clear()
    assert hashes[0] == hashes[1] != hashes[2]


def test_bad_arguments(tmp_path):
    with pytest.raises(TypeError, match="Cell"):
        run_cells([("2moons", "svm", 0)], tmp_path)
    with pytest.raises(ValueError, match="time_limit"):
        run_cells([], tmp_path, time_limit=0)
    with pytest.raises(ValueError, match="backend"):
        run_cells([Cell("t", "2moons", "svm", 0)], tmp_path, backend="spark", progress=False)


def test_dask_backend_matches_the_default_backend(data_env, tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed", reason="dask.distributed is a test extra")
    import os

    cells = _cells(n=2)
    ref = run_cells(cells, tmp_path / "a", n_jobs=1, progress=False)
    # A cluster whose workers were started with another data location (a dead mirror, an empty
    # cache): the run's own location must reach them with the cells.
    good = {k: os.environ[k] for k in ("S3VM_DATA_MIRROR", "S3VM_DATA_DIR")}
    monkeypatch.setenv("S3VM_DATA_MIRROR", str(tmp_path / "no-mirror"))
    monkeypatch.setenv("S3VM_DATA_DIR", str(tmp_path / "empty-cache"))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1") as cluster:
        for k, v in good.items():
            monkeypatch.setenv(k, v)
        rows = run_cells(cells, tmp_path / "b", backend="dask", scheduler=cluster.scheduler_address,
                         progress=False)
    assert all(r["status"] == "done" for r in rows), [r.get("error") for r in rows]
    pd.testing.assert_frame_equal(_table(ref), _table(rows))
    # Without a scheduler, a local cluster of n_jobs workers runs them.
    rows = run_cells(cells, tmp_path / "c", backend="dask", n_jobs=2, progress=False)
    pd.testing.assert_frame_equal(_table(ref), _table(rows))


def test_a_dask_cell_that_hangs_or_kills_its_worker_is_a_timeout_or_a_failure(data_env, tmp_path):
    """On dask a cell runs in a worker's thread, where its alarm cannot stop it: past its limit the
    worker's watchdog ends the worker. Once the cluster gives the cell up, it runs again alone in a
    process of its own and its hang is recorded as a timeout (a death as a failure naming the
    signal), as on the other backends -- not as dask's KilledWorker."""
    pytest.importorskip("distributed", reason="dask.distributed is a test extra")
    cells = [Cell("toy", "2moons", "svm", 0, n_splits=2),
             Cell("toy", "2moons", "tests._bad_solvers:Sleeper", 0, n_splits=2),
             Cell("toy", "2moons", "tests._bad_solvers:Killer", 0, n_splits=2, settings={"C": 13.0})]
    with pytest.warns(RuntimeWarning, match="the dask workers running .* died"):
        rows = run_cells(cells, tmp_path / "cache", backend="dask", n_jobs=2, time_limit=2.0, progress=False)
    assert [r["status"] for r in rows] == ["done", "timeout", "failed"], [r.get("error") for r in rows]
    assert "time limit" in rows[1]["error"] and "SIGKILL" in rows[2]["error"]


def test_a_malformed_dask_scheduler_address_names_the_option(tmp_path):
    pytest.importorskip("distributed", reason="dask.distributed is a test extra")
    with pytest.raises(ValueError, match=r"--scheduler bogus: no dask scheduler reached \(.*\); give the address"):
        run_cells(_cells(n=1), tmp_path, backend="dask", scheduler="bogus", progress=False)


def test_results_table_keeps_the_newest_row_of_each_cell(tmp_path):
    # A rerun of the same cell (same key) or of the same cell under other code (another key)
    # replaces the stored row; other cells and other experiments are kept.
    from s3vm_bench.harness.results import read_results, replace_rows

    def row(key, split=0, experiment="t", err=0.1):
        return {"experiment": experiment, "dataset": "2moons", "protocol": "jmlr2008", "split": split,
                "solver": "svm", "params": {"C": 1.0}, "kernel": "rbf", "sigma": 0.5, "C": 10.0, "C_star": 10.0,
                "r_mode": "exact", "unlabeled_error": err, "status": "done", "cell_key": key}

    path = tmp_path / "runs.csv"
    replace_rows(path, [row("a"), row("b", split=1), row("a", experiment="u")])
    replace_rows(path, [row("a", err=0.2)])            # same key: rerun
    replace_rows(path, [row("c", split=1, err=0.3)])   # same cell, other code: new key
    table = read_results(path)
    got = sorted(zip(table["experiment"], table["split"], table["cell_key"], table["unlabeled_error"]))
    assert got == [("t", 0, "a", 0.2), ("t", 1, "c", 0.3), ("u", 0, "a", 0.1)]


def test_a_gz_results_table_is_gzip_csv_and_the_same_table_gives_the_same_bytes(tmp_path):
    import gzip

    from s3vm_bench.harness.results import read_results, replace_rows

    rows = [{"experiment": "t", "dataset": "g50c", "split": i, "solver": "svm", "status": "done", "cell_key": f"k{i}",
             "unlabeled_error": 0.1 * i, "timestamp": "2026-01-01T00:00:00+00:00"} for i in range(3)]
    a, b = tmp_path / "a" / "runs.csv.gz", tmp_path / "b" / "runs.csv.gz"
    replace_rows(a, rows)
    replace_rows(b, rows)
    assert a.read_bytes() == b.read_bytes()  # fixed gzip mtime: no spurious diff in git
    assert gzip.decompress(a.read_bytes()).decode().startswith("experiment,dataset,")
    table = read_results(a)
    assert list(table["split"]) == [0, 1, 2] and table["unlabeled_error"].tolist() == [0.0, 0.1, 0.2]


def _write_rows_of_worker(path, worker, n_rows):
    from s3vm_bench.harness.results import replace_rows

    for i in range(n_rows):
        replace_rows(path, [{"experiment": "t", "dataset": "g50c", "split": i, "solver": f"s{worker}",
                             "status": "done", "cell_key": f"k{worker}-{i}"}])


@pytest.mark.skipif(sys.platform == "win32", reason="no fcntl advisory locks on Windows")
def test_concurrent_writers_to_one_results_table_lose_no_rows(tmp_path):
    # Each write is read-merge-write: without the lock, two writers interleaving would each drop
    # the rows the other wrote since its read.
    import multiprocessing

    from s3vm_bench.harness.results import read_results

    path = tmp_path / "runs.csv.gz"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_write_rows_of_worker, args=(path, w, 8)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    assert sorted(read_results(path)["cell_key"]) == sorted(f"k{w}-{i}" for w in range(4) for i in range(8))


def test_sequential_cells_run_with_one_blas_thread(monkeypatch, tmp_path):
    from threadpoolctl import threadpool_info

    seen = []
    monkeypatch.setattr(grid, "execute_cell", lambda c, t=None: (
        seen.append(max((i["num_threads"] for i in threadpool_info()), default=1)),
        {"status": "failed", "error": "x"})[1])
    cell = grid.Cell("t", "g50c", "svm", 0, "jmlr2008", 10, {}, {"C": 19.0, "sigma": 38.0})
    grid.run_cells([cell], tmp_path, backend="sequential", progress=False)
    assert seen == [1]


@pytest.mark.parametrize("entry, reason", [
    ({"status": "done"}, "no dataset"),
    ([], "a list, not a row"),
    ("{", "unreadable"),
    ("inf-objective", "objective inf is not finite"),
    ("bad-error", "unlabeled_error 1.5 is not a fraction"),
    ("other-cell", "not a row of"),
])
def test_a_bad_cache_entry_is_reported_and_recomputed(data_env, tmp_path, entry, reason):
    import json

    cell = Cell("t", "2moons", "svm", 1, n_splits=3)
    (ref,) = run_cells([cell], tmp_path / "ref", n_jobs=1, progress=False)
    good = {k: v for k, v in ref.items() if k not in ("cached", "cell_key")}
    derived = {"inf-objective": good | {"objective": float("inf")}, "bad-error": good | {"unlabeled_error": 1.5},
               "other-cell": good | {"split": 2}}
    bad = derived.get(entry, entry) if isinstance(entry, str) else entry
    cache = ResultCache(tmp_path / "cache")
    path = cache._path(cell.key())
    path.parent.mkdir(parents=True)
    path.write_text(bad if isinstance(bad, str) else json.dumps(bad))
    with pytest.warns(RuntimeWarning, match=reason) as record:
        (row,) = run_cells([cell], cache, n_jobs=1, progress=False)
    assert str(path) in str(record[0].message)
    assert not row["cached"] and row["status"] == "done" and row["objective"] == ref["objective"]
    assert json.loads(path.read_text())["objective"] == ref["objective"]  # overwritten by the good row


def test_a_bad_row_of_the_results_table_is_not_published(data_env, tmp_path):
    cell = Cell("t", "2moons", "svm", 1, n_splits=3)
    (ref,) = run_cells([cell], tmp_path / "ref", n_jobs=1, progress=False)
    table = tmp_path / "runs.csv"
    store_rows(table, [ref | {"unlabeled_error": float("nan")}])
    with pytest.warns(RuntimeWarning, match="unlabeled_error None is not a fraction"):
        assert ResultCache(tmp_path / "cache", table=table).lookup(cell) is None


def test_a_folder_store_keeps_one_file_per_table_and_data_set_in_a_stable_order(tmp_path):
    from s3vm_bench.harness.results import read_results_text

    def row(exp, split, obj, dataset="d"):
        # stamped as a computed cell is (an unstamped row gets the current second, which may tick over)
        return {"experiment": exp, "dataset": dataset, "solver": "svm", "split": split, "status": "done",
                "objective": obj, "cell_key": f"{exp}{dataset}{split}", "timestamp": "2026-01-01T00:00:00+00:00"}

    store = tmp_path / "runs"
    store_rows(store, [row("t1", 2, 1.0), row("t2", 0, 2.0), row("t1", 0, 3.0), row("t1", 0, 4.0, "e")])
    files = sorted(str(p.relative_to(store)) for p in store.rglob("*.csv"))
    assert files == ["t1/d.csv", "t1/e.csv", "t2/d.csv"]
    t1 = (store / "t1" / "d.csv").read_bytes()
    assert read_results_text(store / "t1" / "d.csv")["split"].tolist() == ["0", "2"]  # sorted, not finishing order
    t2 = (store / "t2" / "d.csv").read_bytes()
    store_rows(store, [row("t1", 0, 3.0), row("t1", 2, 1.0)])  # t1 regenerated from the same results
    assert (store / "t1" / "d.csv").read_bytes() == t1 and (store / "t2" / "d.csv").read_bytes() == t2
    store_rows(store, [row("t1", 2, 5.0)])  # one cell of t1 changes: only its line moves
    new = (store / "t1" / "d.csv").read_text().splitlines()
    old = t1.decode().splitlines()
    assert [i for i, (a, b) in enumerate(zip(old, new)) if a != b] == [2] and len(new) == len(old)
    assert (store / "t2" / "d.csv").read_bytes() == t2
    assert len(read_results_text(store)) == 4


def test_a_dying_or_stuck_worker_fails_its_cell_and_the_run_goes_on(data_env, tmp_path):
    # Stuck ignores the cell's alarm and burns CPU, Asleep ignores it and waits: the worker's
    # wall-clock watchdog ends them; Killer kills its own process. The pool breaks; the unfinished
    # cells then run one by one, each in a process of its own, where a death or a hang is that cell's row.
    cells = [Cell("toy", "2moons", "svm", 0, n_splits=2),
             Cell("toy", "2moons", "tests._bad_solvers:Stuck", 0, n_splits=2),
             Cell("toy", "2moons", "tests._bad_solvers:Asleep", 0, n_splits=2),
             Cell("toy", "2moons", "tests._bad_solvers:Killer", 0, n_splits=2, settings={"C": 13.0}),
             Cell("toy", "2moons", "svm", 1, n_splits=2)]
    with pytest.warns(RuntimeWarning, match="a worker process died"):
        rows = run_cells(cells, tmp_path / "cache", n_jobs=2, time_limit=3.0, progress=False)
    assert [r["status"] for r in rows] == ["done", "timeout", "timeout", "failed", "done"]
    assert "hard wall-clock limit" in rows[1]["error"] and "hard wall-clock limit" in rows[2]["error"]
    assert "SIGKILL" in rows[3]["error"] and rows[3]["dataset"] == "2moons" and rows[3]["split"] == 0


@pytest.mark.parametrize("one_line", [True, False])
def test_worker_processes_show_warnings_as_the_command_does(one_line, data_env, tmp_path):
    """Under the command line (one-line warnings), a cell's warning in a loky worker is one line too,
    not the default format with the file, line and source line of the code that warned. (A process
    of its own: loky's reused workers would keep writing to an earlier test's captured stderr.)"""
    code = ("import sys, warnings\n"
            "from s3vm_bench.harness.backends import one_line_warning\n"
            "from s3vm_bench.harness.grid import Cell, run_cells\n"
            f"if {one_line}:\n"
            "    warnings.formatwarning = one_line_warning\n"
            "cells = [Cell('toy', '2moons', 'tests._bad_solvers:Warner', k, n_splits=2) for k in (0, 1)]\n"
            "rows = run_cells(cells, sys.argv[1], n_jobs=2, progress=False)\n"
            "assert [r['status'] for r in rows] == ['done', 'done'], rows\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "cache")], capture_output=True, text=True,
                          timeout=300, cwd=Path(__file__).resolve().parents[1])
    assert proc.returncode == 0, proc.stderr
    message = "deliberate warning from a worker (Warner)"
    lines = [line for line in proc.stderr.splitlines() if message in line]
    assert lines
    if one_line:
        assert all(line == f"warning: {message}" for line in lines)
        assert "warnings.warn(" not in proc.stderr and "_bad_solvers.py" not in proc.stderr
    else:  # Python's default format, whose second line is the source line that warned
        assert any(line.endswith(f"UserWarning: {message}") for line in lines) and "_bad_solvers.py" in proc.stderr


def test_an_isolated_cell_is_killed_past_its_limit_and_its_death_is_recorded(data_env):
    from s3vm_bench.harness.isolate import run_isolated

    stuck = run_isolated(Cell("toy", "2moons", "tests._bad_solvers:Stuck", 0, n_splits=2), time_limit=0.5)
    # killed at its limit, not after some much later default
    assert stuck["status"] == "timeout" and 0.5 < stuck["fit_seconds"] < 60
    dead = run_isolated(Cell("toy", "2moons", "tests._bad_solvers:Killer", 0, n_splits=2, settings={"C": 13.0}))
    assert dead["status"] == "failed" and "killed by signal SIGKILL" in dead["error"]
    ok = run_isolated(Cell("toy", "2moons", "svm", 0, n_splits=2), time_limit=60)
    assert ok["status"] == "done" and ok["cpu_seconds"] is not None


def test_one_job_with_a_time_limit_runs_each_cell_isolated(data_env, tmp_path):
    """With ``--jobs 1`` (loky, one job) and a time limit, a cell stuck in compiled code is killed and
    one that kills its process is recorded as failed; the cells after them still run."""
    cells = [Cell("toy", "2moons", "tests._bad_solvers:Stuck", 0, n_splits=2),
             Cell("toy", "2moons", "tests._bad_solvers:Killer", 0, n_splits=2, settings={"C": 13.0}),
             Cell("toy", "2moons", "svm", 1, n_splits=2)]
    rows = run_cells(cells, tmp_path / "cache", n_jobs=1, time_limit=1.0, progress=False)
    assert [r["status"] for r in rows] == ["timeout", "failed", "done"]
    assert "hard wall-clock limit" in rows[0]["error"] and "SIGKILL" in rows[1]["error"]
