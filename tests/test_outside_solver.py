"""A solver written outside the package -- a plain scikit-learn estimator in a file -- joins `run`,
`compare`, `reproduce` (an extra column) and the asv suite; bad solver names fail with one message."""

from __future__ import annotations

import csv
import importlib.metadata
import textwrap

import pandas as pd
import pytest

from s3vm_bench.harness.cli import main
from s3vm_bench.solvers import get_solver

SELF_TRAINING = textwrap.dedent('''
    import numpy as np
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.svm import SVC


    class SelfTraining(ClassifierMixin, BaseEstimator):
        """Self-training RBF SVC: nothing from s3vm_bench."""

        def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None, rounds=OFFSET):
            self.kernel, self.sigma, self.C, self.C_star, self.r, self.rounds = kernel, sigma, C, C_star, r, rounds

        def _svc(self):
            return SVC(gamma=1.0 / (2.0 * self.sigma ** 2), C=self.C)

        def fit(self, X, y):
            y = np.asarray(y)
            lab = y != -1
            svc = self._svc().fit(X[lab], y[lab])
            for _ in range(self.rounds):
                svc = self._svc().fit(X, np.where(lab, y, svc.predict(X)))
            self.svc_, self.classes_ = svc, svc.classes_
            return self

        def decision_function(self, X):
            return self.svc_.decision_function(X)


    class NoFit:
        def predict(self, X):
            return X


    class NaNOutputs(SelfTraining):
        def decision_function(self, X):
            return np.full(X.shape[0], np.nan)
''')


@pytest.fixture
def solver_file(tmp_path):
    path = tmp_path / "elsewhere" / "my_solver.py"
    path.parent.mkdir()
    path.write_text(SELF_TRAINING.replace("OFFSET", "2"))
    return path


def test_a_file_names_a_solver_and_its_contract_is_checked(solver_file):
    cls = get_solver(f"{solver_file}:SelfTraining")
    assert cls.__name__ == "SelfTraining" and get_solver(f"{solver_file}:SelfTraining") is cls  # imported once
    with pytest.raises(ValueError, match="does not exist"):
        get_solver(f"{solver_file.parent / 'absent.py'}:SelfTraining")
    with pytest.raises(ValueError, match="has no class 'Missing'"):
        get_solver(f"{solver_file}:Missing")
    with pytest.raises(TypeError, match=r"has no fit\(X, y\)"):
        get_solver(f"{solver_file}:NoFit")
    broken = solver_file.with_name("broken.py")
    broken.write_text("def oops(:\n")
    with pytest.raises(ValueError, match="could not be imported: SyntaxError"):
        get_solver(f"{broken}:X")
    script = solver_file.with_name("script.py")
    script.write_text("import sys\nsys.exit(5)\n")
    with pytest.raises(ValueError, match=r"could not be imported: SystemExit: 5 \(the module calls sys.exit\(\)"):
        get_solver(f"{script}:X")
    table = solver_file.with_name("table.csv")
    table.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="is not a Python source file"):
        get_solver(f"{table}:X")


def test_an_installed_package_registers_a_solver_by_entry_point(monkeypatch):
    import s3vm_bench.solvers as registry

    ep = importlib.metadata.EntryPoint(name="their_svm", value="s3vm_bench.solvers.svm:SVM", group="s3vm_bench.solvers")
    monkeypatch.setattr(registry, "_entry_points", lambda: {"their_svm": ep})
    assert get_solver("their_svm").__name__ == "SVM"
    assert "their_svm" in registry.available_solvers()
    with pytest.raises(ValueError, match="Did you mean 'their_svm'"):
        get_solver("their_svn")


def test_run_and_compare_take_a_solver_file_and_write_into_the_work_folder(solver_file, data_env, work_folder, capsys):
    spec = f"{solver_file}:SelfTraining"
    assert main(["run", "--solver", spec, "--dataset", "g50c", "--splits", "1"]) == 0
    rows = pd.read_csv(work_folder / "results" / "runs.csv")
    assert list(rows["solver"]) == [spec] and list(rows["status"]) == ["done"]
    assert main(["compare", spec, "--datasets", "two_moons", "--splits", "2", "--param", "rounds=1"]) == 0
    with open(work_folder / "results" / "compare" / "my_solver.py_SelfTraining_two_moons_2splits_rounds=1.csv") as f:
        table = list(csv.DictReader(f))
    assert [r["split"] for r in table] == ["0", "1"] and all(float(r["gap"]) >= -1e-9 for r in table)
    out = capsys.readouterr().out
    assert "per-problem table:" in out
    # Another run (other parameters) writes its own table beside the first, not over it.
    assert main(["compare", spec, "--datasets", "two_moons", "--splits", "1", "--param", "rounds=2"]) == 0
    assert sorted(p.name for p in (work_folder / "results" / "compare").iterdir()) == [
        "my_solver.py_SelfTraining_two_moons_1splits_rounds=2.csv",
        "my_solver.py_SelfTraining_two_moons_2splits_rounds=1.csv"]


def test_compare_table_names_tell_runs_apart_and_ignore_order():
    from s3vm_bench.harness.cli_commands import compare_file_name as name

    assert name("a/my.py:S", ["coil3", "two_moons"]) == name("a/my.py:S", ["two_moons", "coil3"]) == "my.py_S.csv"
    assert name("newton", ["g50c"], 3, ["b=2", "a=1"]) == name("newton", ["g50c"], 3, ["a=1", "b=2"])
    assert name("newton", ["pcmac"]) == name("newton", ["text"]) == "newton_text.csv"
    assert name("newton", ["coil3"], None, ["p=x/y"]) != name("newton", ["coil3"], None, ["p=x_y"])
    long = name("newton", ["coil3"], None, [f"p{i}={'x' * 40}" for i in range(9)])
    assert len(long) < 160 and long != name("newton", ["coil3"], None, [f"p{i}={'y' * 40}" for i in range(9)])


def test_reproduce_adds_an_outside_solver_as_an_extra_column(solver_file, work_folder, no_shipped_table, capsys):
    spec = f"{solver_file}:SelfTraining"
    args = ["reproduce", "nips2006-table1", "--quick", "--splits", "1", "--solvers", spec, "--param", "rounds=1",
            "--jobs", "1", "--no-progress"]
    assert main(args) == 0
    report = (work_folder / "reports" / "nips2006-table1.md").read_text()
    head = next(line for line in report.splitlines() if line.startswith("| |"))
    assert head.endswith("| SelfTraining |") and "| nabla-S3VM |" in head  # beside the paper's columns
    assert "SelfTraining: extra column, not in the paper" in report and "rounds=1" in report
    rows = pd.read_csv(work_folder / "reports" / "runs" / "nips2006-table1" / "two_moons.csv")
    mine = rows[rows["solver"] == spec]
    assert len(mine) == 1 and mine["status"].tolist() == ["done"] and mine["code_sha256"].str.len().min() == 64
    # Rerun: read from the cache. Edit the file's code: its cell is re-keyed and run again.
    capsys.readouterr()
    assert main(args) == 0
    assert "1 cells to run or read" in capsys.readouterr().out
    cache = work_folder / "results" / "cache"
    before = {p.name for p in cache.rglob("*.json")}
    solver_file.write_text(SELF_TRAINING.replace("OFFSET", "3"))
    import s3vm_bench.harness.grid as grid

    for f in (grid.solver_version, grid.solver_source_hash):  # what a new process would do
        f.cache_clear()
    assert main(args) == 0
    assert len({p.name for p in cache.rglob("*.json")} - before) == 1


def test_reproduce_adds_an_entry_point_solver_as_an_extra_column(solver_file, monkeypatch, work_folder,
                                                                  no_shipped_table):
    """A solver an installed package registers by entry point joins a table as a file-named one does."""
    import s3vm_bench.solvers as registry

    monkeypatch.syspath_prepend(str(solver_file.parent))  # what installing the package would do
    ep = importlib.metadata.EntryPoint(name="their_s3vm", value="my_solver:SelfTraining", group="s3vm_bench.solvers")
    monkeypatch.setattr(registry, "_entry_points", lambda: {"their_s3vm": ep})
    args = ["reproduce", "nips2006-table1", "--quick", "--splits", "1", "--solvers", "their_s3vm", "--param",
            "rounds=1", "--jobs", "1", "--no-progress"]
    assert main(args) == 0
    report = (work_folder / "reports" / "nips2006-table1.md").read_text()
    assert "not registered" not in report and "extra column, not in the paper: solver `their_s3vm`" in report
    head = next(line for line in report.splitlines() if line.startswith("| |"))
    assert head.endswith("| SelfTraining |")
    rows = pd.read_csv(work_folder / "reports" / "runs" / "nips2006-table1" / "two_moons.csv")
    assert rows.loc[rows["solver"] == "their_s3vm", "status"].tolist() == ["done"]


def test_reproduce_refuses_bad_extra_solvers_before_running_anything(solver_file, work_folder, capsys):
    base = ["reproduce", "nips2006-table1", "--quick", "--no-progress"]
    assert main(base + ["--solvers", f"{solver_file.parent}/none.py:X"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(base + ["--solvers", f"{solver_file}:NoFit"]) == 2
    assert "has no fit(X, y)" in capsys.readouterr().err
    assert main(base + ["--solvers", f"{solver_file}:SelfTraining", "--param", "nope=1"]) == 2
    assert "nope" in capsys.readouterr().err
    assert main(base + ["--param", "rounds=1"]) == 2  # no extra column to give it to
    assert not (work_folder / "reports").exists()


def test_nan_outputs_of_an_outside_solver_fail_the_cell(solver_file, data_env, work_folder):
    assert main(["run", "--solver", f"{solver_file}:NaNOutputs", "--dataset", "g50c", "--splits", "1"]) == 1
    rows = pd.read_csv(work_folder / "results" / "runs.csv")
    assert rows["status"].tolist() == ["failed"] and "NaN" in rows["error"].iloc[0]


def test_asv_suite_takes_extra_solvers_from_the_environment(solver_file, monkeypatch):
    from benchmarks import _problems as P

    spec = f"{solver_file}:SelfTraining"
    monkeypatch.setenv(P.EXTRA_SOLVERS_ENV, f"svm, {spec}")
    names = P.solver_names()
    assert names.count("svm") == 1 and names[-1] == spec
    assert P.skip_reason(spec, "two_moons") is None


def test_an_asv_extra_solver_that_cannot_be_loaded_fails_alone(data_env, monkeypatch):
    """One bad name in S3VM_ASV_SOLVERS is that solver's failed row; the others are still tracked."""
    from benchmarks import _problems as P

    monkeypatch.setattr(P, "problem_names", lambda: ["two_moons"])
    monkeypatch.setattr(P, "solver_names", lambda: ["svm", "no_such_solver", "svm_balanced"])
    monkeypatch.setenv(P.EXTRA_SOLVERS_ENV, "no_such_solver")
    runs = P.quality_table()["runs"]
    assert runs[("no_such_solver", "two_moons")]["status"] == "failed"
    assert "unknown solver 'no_such_solver'" in runs[("no_such_solver", "two_moons")]["error"]
    assert runs[("svm", "two_moons")]["status"] == runs[("svm_balanced", "two_moons")]["status"] == "done"


def test_compare_names_the_problem_an_outside_solver_raised_on(tmp_path, work_folder, capsys):
    """A solver whose fit raises: status 1 and one line naming it, the problem and the exception (no
    traceback), and no per-problem table."""
    path = tmp_path / "raises.py"
    path.write_text(textwrap.dedent('''
        from sklearn.base import BaseEstimator, ClassifierMixin


        class Boom(ClassifierMixin, BaseEstimator):
            def __init__(self, kernel="rbf", sigma=1.0, C=1.0, C_star=None, r=None):
                self.kernel, self.sigma, self.C, self.C_star, self.r = kernel, sigma, C, C_star, r

            def fit(self, X, y):
                raise RuntimeError("boom in fit")

            def decision_function(self, X):
                return X[:, 0]
    '''))
    assert main(["compare", f"{path}:Boom", "--datasets", "two_moons", "--splits", "1"]) == 1
    assert capsys.readouterr().err == "error: Boom failed on two_moons split 0 class 1: RuntimeError: boom in fit\n"
    assert not (work_folder / "results" / "compare").exists()
