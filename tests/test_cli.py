"""The ``s3vm-bench`` command line (data list / fetch / info, demo)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import os
from pathlib import Path

from s3vm_bench.harness.cli import main
from s3vm_bench.solvers.svm import SVM


def test_data_list(capsys, data_env):
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("g50c", "text", "coil3", "usps2", "news-mac-windows", "ccat", "aut-avn"):
        assert f"\n{name} " in out
    assert out.splitlines()[0].split() == ["name", "n", "d", "classes", "sparse", "source", "cached"]


def test_data_list_says_when_the_data_cache_cannot_be_a_folder(capsys, tmp_path, monkeypatch):
    a_file = tmp_path / "afile"
    a_file.write_text("x")
    monkeypatch.setenv("S3VM_DATA_DIR", str(a_file))
    assert main(["data", "list"]) == 0
    out, err = capsys.readouterr()
    assert err == (f"warning: the data cache {a_file} (S3VM_DATA_DIR={a_file}) cannot be a folder: {a_file} is a "
                   "file; set S3VM_DATA_DIR to a folder\n")
    assert out.splitlines()[0].split()[-1] == "cached" and a_file.read_text() == "x"


def test_data_fetch_and_info(capsys, data_env):
    assert main(["data", "fetch", "g50c", "coil3"]) == 0
    out = capsys.readouterr().out
    assert "g50c: ok (550 x 50, 2 classes)" in out and "coil3: ok (216 x 1024, 3 classes)" in out
    assert main(["data", "info", "g50c"]) == 0
    out = capsys.readouterr().out
    assert "g50c: 550 x 50 dense" in out and "10 fixed splits with l=50" in out
    assert "JMLR 2008 Table 4" in out


def test_data_fetch_errors(capsys, tmp_path, monkeypatch, data_env):
    # An unknown name is a user error (status 2, as `data info`), found before anything is fetched.
    monkeypatch.setenv("S3VM_DATA_DIR", str(tmp_path / "cache"))
    assert main(["data", "fetch", "coil3", "g5oc"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: unknown data set 'g5oc'. Did you mean 'g50c'?")
    # NIPS 2006's generated two moons is not the stored 2moons, which a close-match hint would offer
    assert main(["data", "fetch", "two_moons"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: 'two_moons' is not a stored data set: it is NIPS 2006's two moons")
    assert "Did you" not in err
    assert "the stored data set '2moons' is JMLR 2008's 200-point two moons, another set" in err
    assert not (tmp_path / "cache").exists()  # coil3 was not fetched either
    monkeypatch.setenv("S3VM_DATA_DIR", str(data_env))
    assert main(["data", "fetch"]) == 2
    assert capsys.readouterr().err == "error: name at least one data set, or --all\n"
    assert main(["data", "info", "nope-nope"]) == 2
    capsys.readouterr()
    assert main(["data", "fetch", "--all", "nosuchset"]) == 2  # a name beside --all would be ignored
    assert "drop the names (nosuchset) or --all" in capsys.readouterr().err


def test_demo_runs_without_download(tmp_path, monkeypatch):
    monkeypatch.setenv("S3VM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("S3VM_DATA_MIRROR", "http://127.0.0.1:9/")  # any download would fail
    monkeypatch.delenv("S3VM_RESULTS_DIR", raising=False)
    work = tmp_path / "cwd"
    work.mkdir()
    out = subprocess.run([sys.executable, "-m", "s3vm_bench.harness.cli", "demo", "--realizations", "1", "--jobs", "1"],
                         cwd=work, capture_output=True, text=True, check=True).stdout
    assert "NIPS 2006 Table 1 on 1 realization(s)" in out
    head = next(line for line in out.splitlines() if line.startswith("| |"))
    for column in ("nabla-S3VM", "S3VM-light", "BB", "newton", "s3vm_path"):
        assert f" {column} |" in head
    assert "[7.81]" in out and "**Verdict:**" in out  # the paper's values beside ours
    assert not (tmp_path / "data").exists() or list((tmp_path / "data").iterdir()) == []
    # Everything it wrote is in the default work folder of the current folder.
    assert [p.name for p in work.iterdir()] == ["s3vm-results"]
    assert (work / "s3vm-results" / "results" / "demo" / "runs.csv").exists()


def test_demo_rejects_a_realization_count_out_of_range(tmp_path, capsys):
    for bad in ("0", "-1", "101"):
        assert main(["demo", "--realizations", bad, "--out", str(tmp_path / "demo")]) == 2
        assert "--realizations must be an integer from 1 to 100" in capsys.readouterr().err
    assert not (tmp_path / "demo").exists()


class ExplodingSVM(SVM):
    """A solver whose fit fails on every second split (each split runs in a process of its own, so
    the count is kept in a file): failures must be recorded, not fatal."""

    def fit(self, X, y):
        counter = Path(os.environ["EXPLODING_SVM_COUNTER"])
        calls = int(counter.read_text() or 0) + 1 if counter.exists() else 1
        counter.write_text(str(calls))
        if calls % 2 == 0:
            raise RuntimeError("deliberate failure")
        return super().fit(X, y)


class SplitKiller(SVM):
    """Kills its own process on the second split (a segfault-like death), hangs past any alarm on
    the third (a solver stuck in compiled code)."""

    def fit(self, X, y):
        import signal
        import time

        counter = Path(os.environ["SPLIT_KILLER_COUNTER"])
        calls = int(counter.read_text() or 0) + 1 if counter.exists() else 1
        counter.write_text(str(calls))
        if calls == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        if calls == 3:
            signal.signal(signal.SIGALRM, signal.SIG_IGN)  # the cell's alarm can no longer stop it
            while True:
                time.sleep(0.05)
        return super().fit(X, y)


def test_run_writes_results(tmp_path, capsys, data_env):
    import pandas as pd

    out_csv = tmp_path / "runs.csv"
    assert main(["run", "--solver", "svm", "--dataset", "g50c", "--splits", "3", "--results", str(out_csv)]) == 0
    out = capsys.readouterr().out
    assert "kernel rbf sigma=38.0 C=19.0 C*=19.0 r=exact" in out  # JMLR 2008 Table 5 defaults
    df = pd.read_csv(out_csv)
    assert len(df) == 3 and set(df.status) == {"done"} and list(df.split) == [0, 1, 2]
    assert df.objective.gt(0).all() and df.unlabeled_error.between(0, 0.5).all()
    for col in ("versions", "git_commit", "params", "timestamp"):
        assert df[col].notna().all()
    # a second run appends, never rewrites what is there
    assert main(["run", "--solver", "svm", "--dataset", "g50c", "--splits", "1", "--results", str(out_csv)]) == 0
    assert len(pd.read_csv(out_csv)) == 4


def test_run_records_failures(tmp_path, capsys, data_env, monkeypatch):
    import pandas as pd

    out_csv = tmp_path / "runs.csv"
    monkeypatch.setenv("EXPLODING_SVM_COUNTER", str(tmp_path / "calls"))
    rc = main(["run", "--solver", "tests.test_cli:ExplodingSVM", "--dataset", "g50c", "--splits", "2",
               "--results", str(out_csv)])
    assert rc == 1
    df = pd.read_csv(out_csv)
    assert list(df.status) == ["done", "failed"]
    assert "deliberate failure" in df.error[1] and pd.isna(df.objective[1])


def test_run_bad_arguments(capsys, data_env, tmp_path):
    assert main(["run", "--solver", "svn", "--dataset", "g50c", "--results", str(tmp_path / "x.csv")]) == 2
    assert "Did you mean 'svm'" in capsys.readouterr().err
    assert main(["run", "--solver", "svm", "--dataset", "vowel", "--results", str(tmp_path / "x.csv")]) == 2
    assert "pass sigma and C" in capsys.readouterr().err
    assert main(["run", "--solver", "svm", "--dataset", "g50c", "--C", "-1", "--results", str(tmp_path / "x.csv")]) == 2
    capsys.readouterr()
    assert main(["run", "--solver", "svm", "--dataset", "g50c", "--kernel", "linear", "--sigma", "3",
                 "--results", str(tmp_path / "x.csv")]) == 2
    assert "with the linear kernel it has no effect" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_version(capsys):
    from importlib import metadata

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"s3vm-bench {metadata.version('s3vm-bench')}"


@pytest.mark.parametrize("argv, message", [
    (["run", "--solver", "svm", "--dataset", "g50c", "--splits", "0"], "--splits: must be an integer >= 1"),
    (["compare", "svm", "--time-limit", "-1"], "--time-limit: must be a finite number > 0"),
    (["optima", "build", "two_moons", "--node-limit", "-5"], "--node-limit: must be an integer >= 1"),
    (["demo", "--jobs", "0"], "--jobs: must be >= 1, or -1 for every core"),
    (["reproduce", "--all", "--plan", "--time-limit", "nan"], "--time-limit: must be a finite number > 0"),
    (["reproduce", "--all", "--verify", "x"], "--verify: 'x' is not an integer"),
])
def test_bad_numbers_on_the_command_line_are_refused_before_any_work(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_run_refuses_more_splits_than_the_data_set_has(data_env, capsys):
    assert main(["run", "--solver", "svm", "--dataset", "g50c", "--splits", "1000"]) == 2
    assert "g50c has 10 splits under protocol 'jmlr2008', not 1000" in capsys.readouterr().err


def test_run_records_a_split_that_kills_its_process_or_hangs_and_goes_on(tmp_path, capsys, data_env, monkeypatch):
    import pandas as pd

    out_csv = tmp_path / "runs.csv"
    monkeypatch.setenv("SPLIT_KILLER_COUNTER", str(tmp_path / "calls"))
    # 12 s: room for a slow or loaded machine to fit the healthy splits (each in a new process, whose
    # imports alone can take 4 s there); only the hanging one reaches it.
    rc = main(["run", "--solver", "tests.test_cli:SplitKiller", "--dataset", "g50c", "--splits", "4",
               "--time-limit", "12", "--results", str(out_csv)])
    assert rc == 1
    df = pd.read_csv(out_csv)
    assert list(df.status) == ["done", "failed", "timeout", "done"]
    assert "SIGKILL" in df.error[1] and "hard wall-clock limit" in df.error[2]


def test_run_checks_its_results_path_before_any_split_runs(tmp_path, capsys, data_env, monkeypatch):
    monkeypatch.setenv("EXPLODING_SVM_COUNTER", str(tmp_path / "calls"))
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["run", "--solver", "tests.test_cli:ExplodingSVM", "--dataset", "g50c", "--splits", "1",
                 "--results", str(blocker / "runs.csv")]) == 2
    assert capsys.readouterr().err == (f"error: --results {blocker / 'runs.csv'} cannot be written: its folder "
                                       f"{blocker} is a file, not a folder: name another file\n")
    assert not (tmp_path / "calls").exists()  # no split ran
    # A run refused after the path check leaves no empty folder behind (the folder is made by the
    # first row, not by the check).
    assert main(["run", "--solver", "svm", "--dataset", "g50c", "--splits", "99", "--out", str(tmp_path / "w")]) == 2
    assert "g50c has 10 splits" in capsys.readouterr().err and not (tmp_path / "w").exists()


def test_demo_checks_its_run_table_before_any_work(tmp_path, capsys, monkeypatch):
    import s3vm_bench.harness.reproduce as harness_reproduce

    calls = []
    monkeypatch.setattr(harness_reproduce, "reproduce", lambda *a, **k: calls.append(a))
    table = tmp_path / "results" / "demo" / "runs.csv"
    table.parent.mkdir(parents=True)
    table.write_text("a,b\n1,2\n")
    assert main(["demo", "--realizations", "1", "--out", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"error: the demo's run table {table} is not a results table of this suite") and out == ""
    assert err.endswith(": move it away, or choose another work folder with --out\n")
    assert calls == [] and table.read_text() == "a,b\n1,2\n"
    table.unlink()
    table.mkdir()
    assert main(["demo", "--realizations", "1", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (f"error: the demo's run table {table} is a folder, not a CSV file: move it "
                                       "away, or choose another work folder with --out\n")
    assert calls == []


def test_run_refuses_to_append_to_a_csv_that_is_not_a_results_table(tmp_path, capsys, data_env, monkeypatch):
    """Appending to some other CSV would replace it: refused before any split runs, the file intact;
    an empty file is an empty table."""
    monkeypatch.setenv("EXPLODING_SVM_COUNTER", str(tmp_path / "calls"))
    foreign = tmp_path / "mine.csv"
    for text in ("a,b\n", "a,b\n1,2\n"):
        foreign.write_text(text)
        assert main(["run", "--solver", "tests.test_cli:ExplodingSVM", "--dataset", "g50c", "--splits", "1",
                     "--results", str(foreign)]) == 2
        assert "not a results table" in capsys.readouterr().err
        assert foreign.read_text() == text
    assert not (tmp_path / "calls").exists()  # no split ran
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert main(["run", "--solver", "svm", "--dataset", "g50c", "--splits", "1", "--results", str(empty)]) == 0
    assert "svm" in empty.read_text()


@pytest.mark.parametrize("flag", ["--ignore-store", "--no-table"])
def test_reproduce_ignore_store_flag_has_two_spellings(flag):
    from s3vm_bench.harness.cli import build_parser

    args = build_parser().parse_args(["reproduce", "jmlr2008-table8", flag])
    assert args.no_table is True
    assert build_parser().parse_args(["reproduce", "jmlr2008-table8"]).no_table is False


@pytest.mark.parametrize("raised, status, stderr", [
    # `s3vm-bench ... | head`: the reader leaving is no error to report (no traceback, no "error:").
    ("BrokenPipeError(32, 'Broken pipe')", 1, ""),
    # Ctrl-C: a short message saying what is kept, status 130 (128 + SIGINT), no traceback.
    ("KeyboardInterrupt", 130,
     "\ninterrupted: what was finished before is kept (cached cells, rows and files already written)\n"),
    # Ctrl-C inside numba-compiled code (the branch and bound) reaches Python as a SystemError
    # caused by the KeyboardInterrupt: the same message and status, not a traceback.
    ("SystemError('CPUDispatcher(<function add>) returned a result with an exception set') from KeyboardInterrupt()",
     130, "\ninterrupted: what was finished before is kept (cached cells, rows and files already written)\n"),
    ("OSError('a read cut short') from KeyboardInterrupt()",
     130, "\ninterrupted: what was finished before is kept (cached cells, rows and files already written)\n"),
])
def test_a_closed_output_pipe_or_ctrl_c_ends_the_command_without_a_traceback(raised, status, stderr):
    code = ("import sys\n"
            "from s3vm_bench.harness import cli\n"
            "def listing(args):\n"
            f"    raise {raised}\n"
            "cli.commands.data_list_command = listing\n"
            "sys.exit(cli.main(['data', 'list']))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == status
    assert proc.stderr == stderr


def test_a_full_disk_names_the_work_folder(tmp_path, monkeypatch, capsys):
    """A write's ENOSPC carries no file name: the message names the folder written under and what to do."""
    import errno

    from s3vm_bench.harness import cli

    def listing(args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cli.commands, "data_list_command", listing)
    monkeypatch.setenv("S3VM_RESULTS_DIR", str(tmp_path / "w"))
    assert cli.main(["data", "list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: No space left on device while writing under the work folder {tmp_path / 'w'}: ")
    assert "--out DIR" in err and "Traceback" not in err


def test_optima_build_bounds_of_a_set_without_bounds_names_the_bound_sets(capsys, monkeypatch):
    """Every name is checked before any bound is built; the message lists the bound sets of the code."""
    from s3vm_bench.harness import optima

    calls = []
    monkeypatch.setattr(optima, "build_bounds", lambda *a, **kw: calls.append(a) or {})
    for argv, hint in ((["two_moons"], "two_moons has branch-and-bound optima instead: drop --bounds"),
                       (["g50c", "two_moons"], "drop --bounds"), (["nosuch"], "name one of")):
        assert main(["optima", "build", *argv, "--bounds"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: no certified lower bounds for ") and len(err.strip().splitlines()) == 1
        assert ", ".join(optima.BOUND_SETS) in err and hint in err
    assert calls == []


def test_more_bound_splits_than_the_set_has_are_refused_before_any_bound_or_fit(capsys, data_env, tmp_path,
                                                                               monkeypatch):
    """g50c has 10 JMLR 2008 splits: asking for 11 fails at once, not after 10 splits' searches."""
    from s3vm_bench.harness import certify

    monkeypatch.setattr(certify, "optimize_bound", lambda *a, **kw: pytest.fail("a bound was computed"))
    for argv in (["optima", "build", "g50c", "--bounds", "--n", "11"],
                 ["compare", "tests.test_cli:ExplodingSVM", "--datasets", "g50c", "--splits", "11", "--compute-missing"]):
        assert main([*argv, "--out", str(tmp_path)]) == 2
        assert "g50c has 10 JMLR 2008 splits, not 11: ask for at most 10" in capsys.readouterr().err
    assert not (tmp_path / "optima").exists()


@pytest.mark.parametrize("option", [["--resume"], ["--node-limit", "5"], ["--seed-truth"], ["--branching", "nips"],
                                    ["--jobs", "1"]])
def test_optima_build_bounds_refuses_the_options_of_branch_and_bound(option, capsys, monkeypatch):
    from s3vm_bench.harness import optima

    calls = []
    monkeypatch.setattr(optima, "build_bounds", lambda *a, **kw: calls.append(a) or {})
    assert main(["optima", "build", "g50c", "--bounds", *option]) == 2
    assert (f"error: {option[0]} applies to branch-and-bound optima only, not to --bounds"
            in capsys.readouterr().err)
    assert calls == []


def test_optima_build_bounds_refuses_an_unknown_only_key_before_any_work(capsys, data_env, work_folder):
    assert main(["optima", "build", "g50c", "--bounds", "--only", "nosuch", "split3/class0"]) == 2
    err = capsys.readouterr().err
    assert "g50c has no problem nosuch, split3/class0 among its first 10 split(s)" in err
    assert "its keys are split0/class1 .. split9/class1" in err
    assert not (work_folder / "optima").exists()


def test_optima_build_only_suggests_the_sets_real_keys(capsys):
    assert main(["optima", "build", "two_moons", "--n", "2", "--only", "split6/class0"]) == 2
    err = capsys.readouterr().err
    assert "two_moons has no problem split6/class0 among its first 2 split(s): its keys are split0/class1 .. " \
           "split1/class1" in err
    assert main(["optima", "build", "coil3", "--n", "1", "--only", "split0/class3"]) == 2
    assert "its keys are split0/class0 .. split0/class2" in capsys.readouterr().err


@pytest.mark.parametrize("content", ["", '{"format": 1, "set": "two_moons", "entr', "[]"])
def test_a_corrupt_store_is_named_with_what_to_do_and_never_overwritten(content, capsys, work_folder, monkeypatch):
    import s3vm_bench.harness.compare as harness_compare

    runs = []
    monkeypatch.setattr(harness_compare, "run_split", lambda *a, **k: runs.append(a))
    store = work_folder / "optima" / "two_moons.json"
    store.parent.mkdir()
    store.write_text(content)
    for argv in (["optima", "build", "two_moons", "--n", "1"], ["compare", "svm", "--datasets", "two_moons",
                                                               "--splits", "1"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: the stored reference file {store} cannot be read")
        assert "restore it" in err and "or delete it" in err and len(err.strip().splitlines()) == 1
    assert store.read_text() == content and runs == []


def _damaged(entry, change):
    entry = dict(entry)
    change(entry)
    return entry


@pytest.mark.parametrize("file_name,change,why", [
    ("two_moons.json", lambda e: e.clear(), "its entry 'split0/class1' has no field 'digest'"),
    ("two_moons.json", lambda e: e.update(objective="abc"), "the field 'objective' of its entry 'split0/class1' is "
                                                            '"abc", not a number'),
    ("two_moons.json", lambda e: e.update(objective=None), "the field 'objective' of its entry 'split0/class1' "
                                                          "is null, not a number"),
    ("two_moons.json", lambda e: e.update(nodes=True), "the field 'nodes' of its entry 'split0/class1' is true, not an "
                                                       "integer"),
    ("two_moons.json", lambda e: e.update(labels="xyz"), "the labeling of its entry 'split0/class1' is not 100 signs"),
    ("bounds-g50c.json", lambda e: e.pop("lower_bound"), "its entry 'split0/class1' has no field 'lower_bound'"),
])
def test_a_damaged_entry_of_a_store_is_named(file_name, change, why, capsys, work_folder):
    """A store that is valid JSON but holds an entry its readers cannot use (hand-edited, or from
    an older version) is named with the entry and the field by `optima show` and `compare`."""
    import json

    from s3vm_bench.harness.optima_store import OPTIMA_DIR

    doc = json.loads((OPTIMA_DIR / file_name).read_text())
    doc["entries"]["split0/class1"] = _damaged(doc["entries"]["split0/class1"], change)
    store = work_folder / "optima" / file_name
    store.parent.mkdir()
    store.write_text(json.dumps(doc))
    show = ["optima", "show", "g50c", "--bounds"] if "bounds" in file_name else ["optima", "show", "two_moons"]
    for argv in (show, ["compare", "svm", "--datasets", doc["set"], "--splits", "1"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"error: the stored reference file {store} cannot be read ({why}")
        assert "restore it (copy the shipped" in err[0]


def test_a_corrupt_bound_store_is_named_before_any_solver_runs(capsys, work_folder, monkeypatch):
    import s3vm_bench.harness.compare as harness_compare

    runs = []
    monkeypatch.setattr(harness_compare, "fit_binary_problems", lambda *a, **k: runs.append(a))
    store = work_folder / "optima" / "bounds-g50c.json"
    store.parent.mkdir()
    store.write_text("")
    assert main(["compare", "svm", "--datasets", "two_moons", "g50c", "--splits", "1"]) == 2
    err = capsys.readouterr().err
    assert f"{store} cannot be read (empty): restore it" in err and "or delete it" in err
    assert store.read_text() == "" and runs == []
    assert main(["optima", "build", "g50c", "--bounds", "--n", "1"]) == 2
    assert f"{store} cannot be read (empty)" in capsys.readouterr().err and store.read_text() == ""


def test_compare_checks_every_set_name_before_any_solver_runs(capsys, monkeypatch):
    import s3vm_bench.harness.compare as harness_compare

    runs = []
    monkeypatch.setattr(harness_compare, "run_split", lambda *a, **k: runs.append(a))
    assert main(["compare", "svm", "--datasets", "two_moons", "nosuch", "--splits", "1"]) == 2
    out, err = capsys.readouterr()
    assert "no reference optima for 'nosuch'" in err and "g50c" in err
    assert runs == [] and "summary" not in out


def test_compare_names_the_problem_a_solver_raised_on(capsys, data_env, work_folder):
    """On a bound set as on a reference set: status 1, one line naming solver, problem and exception."""
    assert main(["compare", "tests._bad_solvers:Raiser", "--datasets", "g50c", "--splits", "1"]) == 1
    err = capsys.readouterr().err
    assert err == "error: Raiser failed on g50c split 0 class 1: RuntimeError: deliberate failure in fit\n"
    assert not (work_folder / "results" / "compare").exists()


def test_unknown_names_get_the_closest_known_one_whatever_the_case(capsys):
    """One rule for every "unknown name" message (s3vm_bench.did_you_mean), blind to case ('SVM'
    finds 'svm')."""
    from s3vm_bench import did_you_mean

    assert did_you_mean("SVM", ["svm", "svm_5cv"]) == " Did you mean 'svm'?"
    assert did_you_mean("newtn", ["newton", "cccp"]) == " Did you mean 'newton'?"
    assert did_you_mean("tsvm", ["tsvm_linear", "mfa"]) == " Did you mean 'tsvm_linear'?"
    assert did_you_mean("zzzz", ["newton", "cccp"]) == ""
    for argv, hint in ((["run", "--solver", "SVM", "--dataset", "g50c"], "Did you mean 'svm'?"),
                       (["data", "info", "G50C"], "Did you mean 'g50c'?"),
                       (["reproduce", "JMLR2008-table8", "--plan"], "Did you mean 'jmlr2008-table8'?"),
                       (["figures", "xx", "jmlr2008-fig99"], "unknown figure(s) 'xx', 'jmlr2008-fig99' (did you mean "
                                                             "'jmlr2008-fig9'?); see"),
                       (["figures", "--make-data", "jmlr2008-fig99"], "'jmlr2008-fig99' (did you mean 'jmlr2008-fig9'?)")):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: unknown") and hint in err[0], (argv, err)


@pytest.mark.parametrize("argv, message", [
    (["figures", "--all", "jmlr2008-fig2"], "--all draws every figure; drop the names (jmlr2008-fig2) or --all"),
    (["figures", "--list", "jmlr2008-fig2"], "--list only lists the figures: drop the other arguments"),
    (["figures", "--list", "--all"], "--list only lists the figures"),
    (["figures", "jmlr2008-fig2", "--only", "a/"], "--only goes with --make-data"),
    (["figures", "--make-data", "jmlr2008-fig9", "--only", " "], "--only is empty"),
    (["compare", "svm", "--datasets", "two_moons", "coil3", "two_moons"], "--datasets names two_moons more than once"),
])
def test_options_that_would_be_ignored_or_repeat_work_are_refused(argv, message, capsys, work_folder, monkeypatch):
    """`figures --all NAME` drew all 28 figures, `--list NAME` only listed, an empty --only ran every
    cell, and a set named twice in compare was compared twice: refused before any work."""
    import s3vm_bench.harness.compare as harness_compare
    import s3vm_bench.harness.figure_data as figure_data

    calls = []
    monkeypatch.setattr(harness_compare, "run_split", lambda *a, **k: calls.append(a))
    monkeypatch.setattr(figure_data, "make_data", lambda *a, **k: calls.append(a))
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"error: {message}") and len(err.strip().splitlines()) == 1
    assert calls == [] and out == "" and not any(work_folder.iterdir())


def test_optima_build_with_everything_stored_says_so(capsys, data_env, work_folder):
    """A build that finds every asked-for problem stored says so and writes nothing."""
    assert main(["optima", "build", "two_moons", "--n", "2"]) == 0
    out = capsys.readouterr().out
    assert out == ("two_moons: nothing to compute: the 2 problem(s) asked for are stored, certified optimal or "
                   "searched with these limits already (a larger --time-limit or --node-limit, --resume or --force "
                   "searches again)\n")
    assert main(["optima", "build", "g50c", "--bounds", "--n", "1"]) == 0
    assert capsys.readouterr().out == ("g50c: nothing to compute: the bounds of the 1 problem(s) asked for are stored "
                                       "(--force computes them again)\n")
    assert not (work_folder / "optima").exists()  # nothing written


def test_optima_show_reads_the_work_folder_that_build_wrote(capsys, tmp_path):
    """`optima build --out X` wrote X/optima/; `optima show` had no --out and showed the shipped store."""
    import json

    from s3vm_bench.harness.optima_store import OPTIMA_DIR

    doc = json.loads((OPTIMA_DIR / "two_moons.json").read_text())
    doc["entries"] = {"split0/class1": dict(doc["entries"]["split0/class1"], nodes=424242)}
    (tmp_path / "optima").mkdir()
    (tmp_path / "optima" / "two_moons.json").write_text(json.dumps(doc))
    assert main(["optima", "show", "two_moons", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "424242" in out[2] and out[-1] == f"(from {tmp_path / 'optima' / 'two_moons.json'})"
    assert main(["optima", "show", "two_moons", "--out", str(tmp_path / "other")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"(from {OPTIMA_DIR / 'two_moons.json'})"


def test_a_folder_in_place_of_a_store_file_is_refused_before_any_search(capsys, work_folder, monkeypatch):
    """Refused before any search: reading would pass it over and the first save would fail."""
    import s3vm_bench.harness.optima as harness_optima

    searches = []
    monkeypatch.setattr(harness_optima, "certify", lambda *a, **k: searches.append(a))
    (work_folder / "optima" / "two_moons.json").mkdir(parents=True)
    for argv in (["optima", "show", "two_moons"], ["optima", "build", "two_moons", "--n", "1", "--force"],
                 ["compare", "svm", "--datasets", "two_moons", "--splits", "1"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err == (f"error: {work_folder / 'optima' / 'two_moons.json'} is a folder, not a stored reference file: "
                       "move it away (the shipped store is read until the work folder has its own file)\n")
    assert searches == []


def test_a_warning_is_one_line_on_the_command_line():
    """Not the default format, which adds the warning code's file, line number and source line."""
    code = ("import sys, warnings\n"
            "from s3vm_bench.harness import cli\n"
            "def listing(args):\n"
            "    warnings.warn('3 outputs tied at the balance threshold', RuntimeWarning)\n"
            "cli.commands.data_list_command = listing\n"
            "sys.exit(cli.main(['data', 'list']))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    assert proc.stderr == "warning: 3 outputs tied at the balance threshold\n"


def test_the_suites_number_and_folder_rules(tmp_path):
    """One rule for counts and numbers in every package (s3vm_bench.is_int / is_real), and one walk to
    the place a folder would be made (s3vm_bench.nearest_existing)."""
    import numpy as np

    from s3vm_bench import is_int, is_real, nearest_existing

    assert [is_int(v) for v in (3, np.int32(3), 3.0, True, np.bool_(True), "3", None)] == [True, True] + [False] * 5
    assert [is_real(v) for v in (3, 2.5, np.float32(2.5), np.nan, True, "2.5", np.array([1.0]))] == \
        [True] * 4 + [False] * 3
    a_file = tmp_path / "afile"
    a_file.write_text("x")
    assert nearest_existing(tmp_path / "new" / "deeper") == tmp_path
    assert nearest_existing(a_file / "sub") == a_file and not nearest_existing(a_file / "sub").is_dir()
