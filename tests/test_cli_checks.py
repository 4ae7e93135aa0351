"""The command line's checks made before any work, and its handling of an interruption.

Bad output paths, contradicting options and solvers that cannot even be built are refused with a
one-line ``error:`` and exit status 2 before a split runs (nothing computed is then lost to a
late failure); a split's own process leaves Ctrl-C to the command (whose short message is tested
in ``test_cli.py``), and ``kill PID`` (SIGTERM) stops the command as Ctrl-C does, with the processes
running its cells.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from s3vm_bench.harness.cli import main
from s3vm_bench.solvers.svm import SVM


class CountingSVM(SVM):
    """SVM that counts its fits in the file named by ``COUNTING_SVM_FILE``: a test can tell whether
    any split ran."""

    def fit(self, X, y):
        counter = Path(os.environ["COUNTING_SVM_FILE"])
        counter.write_text(str(int(counter.read_text() or 0) + 1 if counter.exists() else 1))
        return super().fit(X, y)


class SelfInterruptingSVM(SVM):
    """SVM that sends itself SIGINT (a Ctrl-C reaching the whole process group) before fitting."""

    def fit(self, X, y):
        os.kill(os.getpid(), signal.SIGINT)
        return super().fit(X, y)


class InitBoom(SVM):
    """A solver whose constructor fails with an exception of its own."""

    def __init__(self, C=1.0):
        raise RuntimeError("init boom")


def test_a_split_process_leaves_ctrl_c_to_the_command(tmp_path, capsys, data_env):
    """The split's own process ignores SIGINT (the command handles it and kills the process): a
    SIGINT reaching only the split does not kill it with a traceback of its own."""
    out_csv = tmp_path / "runs.csv"
    assert main(["run", "--solver", "tests.test_cli_checks:SelfInterruptingSVM", "--dataset", "g50c", "--splits", "1",
                 "--results", str(out_csv)]) == 0
    assert list(pd.read_csv(out_csv).status) == ["done"]
    assert "Traceback" not in capsys.readouterr().err


def _ended(pid: int) -> bool:
    """Whether process ``pid`` has ended (gone, or a zombie no one has reaped yet)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("extra, n_cells", [(["--jobs", "2"], 2), (["--jobs", "1", "--time-limit", "300"], 1)],
                         ids=["worker-pool", "process-per-cell"])
def test_sigterm_stops_reproduce_and_the_processes_running_its_cells(extra, n_cells, tmp_path, data_env, monkeypatch):
    """SIGTERM reaches the command only, not its children (unlike Ctrl-C, sent to the whole process
    group): the command stops as on Ctrl-C, ends the processes running its cells, and exits with
    128 + SIGTERM."""
    pids = tmp_path / "pids"
    pids.mkdir()
    monkeypatch.setenv("WAITER_PID_DIR", str(pids))
    cmd = [sys.executable, "-m", "s3vm_bench.harness.cli", "reproduce", "jmlr2008-table8", "--datasets", "g50c",
           "--splits", "2", "--solvers", "tests._bad_solvers:Waiter", "--ignore-store", "--no-progress",
           "--out", str(tmp_path / "work"), *extra]
    log = tmp_path / "stderr.txt"
    with open(log, "w") as err_file:  # a file, not a pipe: a process left running would hold a pipe open
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err_file)
    try:
        deadline = time.monotonic() + 120
        while len(list(pids.iterdir())) < n_cells:  # every worker is in a cell
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the cells did not start"
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        err = log.read_text()
        assert proc.returncode == 128 + signal.SIGTERM, err
        assert "stopped by SIGTERM: what was finished before is kept" in err and "Traceback" not in err
        cell_pids = [int(p.name) for p in pids.iterdir()]
        deadline = time.monotonic() + 15
        while not all(_ended(pid) for pid in cell_pids):
            assert time.monotonic() < deadline, "a process running a cell outlived the command"
            time.sleep(0.1)
    finally:  # nothing outlives the test, whatever it found
        for pid in [proc.pid] + [int(p.name) for p in pids.iterdir()]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()


@pytest.mark.skipif(not hasattr(signal, "SIGHUP") or sys.platform == "win32", reason="POSIX signals")
def test_the_stop_handler_leaves_forked_children_and_an_ignored_sighup_alone():
    """A process forked while a command runs (a pool worker) ends on SIGTERM as with no handler,
    rather than raising the command's Terminated; a SIGHUP ignored by ``nohup`` stays ignored."""
    import multiprocessing

    from s3vm_bench.harness.cli import _stop_signals_interrupt

    old_hup = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with _stop_signals_interrupt():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            child = multiprocessing.get_context("fork").Process(target=time.sleep, args=(30,))
            child.start()
            time.sleep(0.5)
            child.terminate()  # SIGTERM
            child.join(10)
        assert child.exitcode == -signal.SIGTERM
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGHUP, old_hup)


@pytest.mark.parametrize("name", ["afile", "new.txt"])
def test_run_wants_a_csv_file_for_its_results(tmp_path, capsys, data_env, monkeypatch, name):
    monkeypatch.setenv("COUNTING_SVM_FILE", str(tmp_path / "calls"))
    if name == "afile":
        (tmp_path / name).write_text("")
    assert main(["run", "--solver", "tests.test_cli_checks:CountingSVM", "--dataset", "g50c", "--splits", "1",
                 "--results", str(tmp_path / name)]) == 2
    assert "name a CSV file ending in .csv" in capsys.readouterr().err
    assert not (tmp_path / "calls").exists()  # no split ran
    assert not (tmp_path / name).is_dir()


def test_run_refuses_a_results_table_with_a_row_written_in_part(tmp_path, capsys, data_env, monkeypatch):
    out_csv = tmp_path / "runs.csv"
    assert main(["run", "--solver", "svm", "--dataset", "g50c", "--splits", "2", "--results", str(out_csv)]) == 0
    lines = out_csv.read_text().splitlines(keepends=True)
    assert len(lines) == 3
    cut = "".join(lines[:2]) + lines[2][:lines[2].index(",exact,") + 7]  # the last row cut after r_mode
    out_csv.write_text(cut)
    capsys.readouterr()
    monkeypatch.setenv("COUNTING_SVM_FILE", str(tmp_path / "calls"))
    assert main(["run", "--solver", "tests.test_cli_checks:CountingSVM", "--dataset", "g50c", "--splits", "1",
                 "--results", str(out_csv)]) == 2
    assert "row(s) 2 (counting from 1 after the header) were written only in part" in capsys.readouterr().err
    assert out_csv.read_text() == cut
    assert not (tmp_path / "calls").exists()


def test_reproduce_checks_where_it_writes_before_any_cell_runs(tmp_path, capsys, data_env, monkeypatch):
    monkeypatch.setenv("COUNTING_SVM_FILE", str(tmp_path / "calls"))
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    foreign = tmp_path / "mine.csv"
    foreign.write_text("a,b\n1,2\n")
    base = ["reproduce", "jmlr2008-table8", "--datasets", "g50c", "--splits", "1", "--solvers",
            "tests.test_cli_checks:CountingSVM", "--ignore-store", "--backend", "sequential", "--no-progress",
            "--out", str(tmp_path / "work")]
    for extra, message in ((["--results", str(blocker)], f"--results {blocker} is a file but not a CSV file"),
                           (["--results", str(foreign)], "is not a results table of this suite"),
                           (["--cache", str(blocker / "cache")], f"--cache {blocker / 'cache'} cannot be created"),
                           (["--reports", str(blocker / "reports")], "--reports"),
                           (["--results", str(blocker / "runs.csv")], f"--results {blocker / 'runs.csv'} cannot be written: its folder "
                                                                       f"{blocker} is a file, not a folder")):
        assert main(base + extra) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
    assert not (tmp_path / "calls").exists()  # no cell ran
    assert blocker.read_text() == "x" and foreign.read_text() == "a,b\n1,2\n"


@pytest.mark.parametrize("argv, message", [
    (["jmlr2008-table8", "--all", "--plan"], "or --all, not both"),
    (["--list", "--all"], "--list only lists the tables"),
    (["jmlr2008-table8", "--plan", "--from-cache"], "choose one"),
    (["jmlr2008-table8", "--plan", "--scheduler", "tcp://127.0.0.1:1"], "add --backend dask"),
    (["jmlr2008-table8", "--plan", "--backend", "dask", "--scheduler", " "], "--scheduler is empty"),
    (["jmlr2008-table8", "--plan", "--backend", "sequential", "--jobs", "4"], "--backend sequential runs one cell at a "
                                                                             "time: drop --jobs 4"),
    (["jmlr2008-table8", "--plan", "--verify-seed", "3"], "--verify-seed set how --verify N draws its cells"),
    (["jmlr2008-table8", "--verify-max-seconds", "5", "--verify-seed", "1"], "--verify-seed and --verify-max-seconds "
                                                                            "set how --verify N draws"),
])
def test_reproduce_refuses_options_that_contradict_each_other(argv, message, capsys, tmp_path):
    assert main(["reproduce", *argv, "--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # nothing written


def test_a_solver_whose_constructor_raises_is_a_one_line_error(capsys, data_env, tmp_path):
    solver = "tests.test_cli_checks:InitBoom"
    assert main(["run", "--solver", solver, "--dataset", "g50c", "--splits", "1", "--out", str(tmp_path)]) == 2
    assert "error: InitBoom() raised RuntimeError: init boom" in capsys.readouterr().err
    assert main(["reproduce", "jmlr2008-table8", "--solvers", solver, "--plan", "--out", str(tmp_path)]) == 2
    assert "InitBoom() raised RuntimeError: init boom" in capsys.readouterr().err


def test_run_refuses_an_unknown_protocol_before_making_any_folder(capsys, data_env, tmp_path):
    assert main(["run", "--solver", "svm", "--dataset", "g50c", "--protocol", "bogus",
                 "--out", str(tmp_path / "work")]) == 2
    assert "unknown split protocol 'bogus'; choose one of ['icml2006', 'icml2013', 'jmlr2008', 'sigir2006']" \
        in capsys.readouterr().err
    assert not (tmp_path / "work").exists()


@pytest.mark.parametrize("argv, message", [
    (["--repeat", "0"], "argument --repeat: must be an integer >= 1, got 0"),
    (["--chol", "-1"], "argument --chol: must be an integer >= 1, got -1"),
    (["--table3", "--splits", "x"], "argument --splits: 'x' is not an integer"),
    (["--solvers", "cccp", "nope"], "--solvers: unknown solver 'nope'"),
])
def test_the_ce_benchmark_refuses_bad_arguments_before_measuring(argv, message, capsys, monkeypatch):
    """`python -m benchmarks.ce`: a count < 1 or an unknown solver is a usage error (status 2) before
    any measurement (no median of zero runs, no traceback)."""
    from benchmarks import ce

    monkeypatch.setattr(ce, "uspst_problem", lambda **k: pytest.fail("measured"))
    with pytest.raises(SystemExit) as stop:
        ce.main(argv)
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_the_ce_benchmark_warms_each_solver_up_before_its_timed_fits(monkeypatch, capsys):
    """The process's start-up is paid by a first fit on a tiny problem, not by the first solver
    timed; it is printed apart from CE, for solvers with and without a kernel width."""
    from benchmarks import ce

    order = []
    settings = type("Settings", (), {"sigma": 7.4, "C": 38.0})
    monkeypatch.setattr(ce, "uspst_problem", lambda digit=0: (None, _FakeSplit(), settings))
    monkeypatch.setattr(ce, "cholesky_seconds", lambda *a: 0.1)
    monkeypatch.setattr(ce, "gemv_seconds", lambda n: 0.001)
    real_warm_up = ce.warm_up
    monkeypatch.setattr(ce, "warm_up", lambda name: (order.append(("warm", name)), real_warm_up(name))[1])
    monkeypatch.setattr(ce, "run_solver", lambda name, *a: (order.append(("timed", name)),
                                                            (1.0, 1.0, 2.0, 0.1, 3, 3, None))[1])
    assert ce.main(["--solvers", "cccp", "tsvm_linear", "--digits", "0", "1"]) == 0
    assert order == [("warm", "cccp"), ("timed", "cccp"), ("warm", "tsvm_linear"), ("timed", "tsvm_linear"),
                     ("timed", "cccp"), ("timed", "tsvm_linear")]
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("not counted: a first fit on a tiny problem") and "cccp" in last and "tsvm_linear" in last


class _FakeSplit:
    index = 0
    labeled = np.arange(50)
    unlabeled = np.arange(50, 2007)


def test_the_table3_benchmark_warms_each_loss_up_before_its_first_cell(monkeypatch):
    """``--table3``: the process's start-up is paid by a tiny fit per loss, not by the first cell."""
    import s3vm_bench.harness.grid as grid
    from benchmarks import ce

    order = []
    monkeypatch.setattr(ce, "warm_up", lambda name, params=None: (order.append(("warm", name, params["loss"])), 0.1)[1])
    monkeypatch.setattr(grid, "execute_cell", lambda cell: (order.append(("cell", cell.dataset, cell.params["loss"])),
                                                            {"status": "done", "cpu_seconds": 2.0, "n_binary": 1})[1])
    lines = []
    ce.table3(1, ("Flat", "Quadratic"), echo=lambda line, **kwargs: lines.append(line))
    warm = [i for i, o in enumerate(order) if o[0] == "warm"]
    assert [order[i][2] for i in warm] == ["flat", "quadratic"]
    for i in warm:  # each loss is warmed up just before its first cell
        assert order[i + 1][0] == "cell" and order[i + 1][2] == order[i][2]
        assert all(o[2] != order[i][2] for o in order[:i])
    assert len(order) - len(warm) > 2 and lines[-1].startswith("not counted: a first fit on a tiny problem per loss")
