"""The ``s3vm-bench`` command line.

Subcommands::

    s3vm-bench data list                 name, n, d, classes, sparse, source, cached
    s3vm-bench data fetch NAME... | --all
    s3vm-bench data info NAME
    s3vm-bench run --solver NAME --dataset NAME [--splits N] ...
    s3vm-bench demo                      two-moons reproduction (NIPS 2006 Table 1), no download
    s3vm-bench optima build SET... [--n N] [--time-limit S] [--node-limit N] [--branching RULE] [--resume] [--jobs N]
                     [--only KEY...]
    s3vm-bench optima build g50c --bounds [--n N] [--time-limit S]   certified lower bounds (harness.certify)
    s3vm-bench optima show SET [--bounds]   what is stored, certified or not
    s3vm-bench compare SOLVER [--datasets SET...] [--splits N]  a solver against the optima (or, for g50c,
                     text, uspst, against the certified lower bounds: objective, bound, certified gap)
    s3vm-bench reproduce TABLE... | --all [--quick]   paper tables beside the published values
                     [--plan | --verify N | --from-cache]
    s3vm-bench figures FIGURE... | --all [--out DIR] [--list]   paper figures (PNG + SVG)
    s3vm-bench figures --make-data NAME... [--only PREFIX] [--out DIR]   their stored inputs
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import signal
import sys
import threading
import warnings

from . import cli_commands as commands
from .backends import one_line_warning
from .paths import DEFAULT_WORK_DIR, ENV_VAR, check_writable_folder, work_dir

__all__ = ["main", "build_parser", "positive_int"]


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (a bad value exits with status 2 and says why), by the
    solvers' own rule (:func:`s3vm_bench.solvers.numerics.check_int`)."""
    from s3vm_bench.solvers.numerics import check_int

    try:
        return check_int(_integer(text), "the value", 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text}") from None


def _jobs(text: str) -> int:
    """argparse type of ``--jobs``: an integer >= 1, or -1 for every core."""
    value = _integer(text)
    if value < 1 and value != -1:
        raise argparse.ArgumentTypeError(f"must be >= 1, or -1 for every core; got {value}")
    return value


#: What ``--param`` values are read as (:func:`harness.run.parse_params`).
_PARAM_VALUE = "VALUE is JSON (50, 1e-3, true, null) or True/False/None, else text"


def _positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (value > 0 and value != float("inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def _version() -> str:
    """The installed distribution's version (``s3vm-bench``), or "unknown" when it is not installed."""
    from importlib import metadata

    try:
        return metadata.version("s3vm-bench")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _out_option(parser, what: str = "") -> None:
    """The work folder option shared by the commands that write (see :mod:`harness.paths`)."""
    parser.add_argument("--out", metavar="DIR", help=f"work folder (default: ${ENV_VAR} or ./{DEFAULT_WORK_DIR})"
                        + (f"; {what}" if what else ""))


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose message for a missing positional argument says where it may have
    gone when an option that takes several values was given (``--datasets a b`` takes every word
    after it)."""

    _words: list = []

    def parse_known_args(self, args=None, namespace=None):
        self._words = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message):
        given = [option for action in self._actions if action.nargs in ("+", "*")
                 for option in action.option_strings if option in self._words]
        if message.startswith("the following arguments are required") and given:
            message += (f"; {given[0]} takes every word after it: put this argument before the options that take "
                        "several values")
        super().error(message)


def _name_commands(subparsers) -> None:
    """Name the subcommands (``{list,fetch,info}``) where a missing one is reported, not the internal
    ``dest`` (argparse: "the following arguments are required: data_command")."""
    subparsers.metavar = "{" + ",".join(subparsers.choices) + "}"


def _add_data_parser(sub) -> None:
    """Add ``data list``, ``data fetch`` and ``data info``: the data sets of :mod:`data_registry`."""
    data = sub.add_parser("data", help="list, fetch and describe the data sets")
    dsub = data.add_subparsers(dest="data_command", required=True)
    dsub.add_parser("list", help="every data set with its size and cache state").set_defaults(func=commands.data_list_command)
    f = dsub.add_parser("fetch", help="download and verify data sets")
    f.add_argument("names", nargs="*", metavar="NAME")
    f.add_argument("--all", action="store_true", help="every data set that is not network-only")
    f.set_defaults(func=commands.data_fetch_command)
    i = dsub.add_parser("info", help="load one data set and describe it")
    i.add_argument("name", metavar="NAME")
    i.set_defaults(func=commands.data_info_command)
    _name_commands(dsub)


#: How a solver is named on the command line (solvers.get_solver).
SOLVER_NAME_HELP = ("a registered name (e.g. newton), the name of an installed package's entry point (group "
                    "s3vm_bench.solvers), package.module:Class or path/to/file.py:Class")


def _add_run_parser(sub) -> None:
    """Add ``run``: one solver on every split of one data set under the common protocol (JMLR 2008 Sec. 5.2)."""
    r = sub.add_parser("run", help="one solver on every split of one data set (common protocol)")
    r.add_argument("--solver", required=True, help=SOLVER_NAME_HELP)
    r.add_argument("--dataset", required=True)
    r.add_argument("--splits", type=positive_int, default=10, help="number of splits (default 10)")
    r.add_argument("--protocol", default="jmlr2008",
                   help="split protocol: jmlr2008 (default), icml2006, icml2013 or sigir2006")
    r.add_argument("--kernel", choices=("rbf", "linear"))
    r.add_argument("--sigma", type=float, help="default: JMLR 2008 Table 5")
    r.add_argument("--C", type=float, help="default: JMLR 2008 Table 5")
    r.add_argument("--C-star", dest="C_star", type=float, help="default: C* = C")
    r.add_argument("--r-mode", dest="r_mode", choices=("exact", "estimated"))
    r.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help=f"solver parameter (repeatable); {_PARAM_VALUE}")
    r.add_argument("--results", help="CSV the rows are appended to, each as soon as its split ends (default: "
                   "results/runs.csv of the work folder)")
    r.add_argument("--time-limit", dest="time_limit", type=_positive_float, default=3600.0,
                   help="seconds per split (default 3600); each split runs in a process of its own, killed past it")
    _out_option(r)
    r.set_defaults(func=commands.run_command)


def _add_optima_parser(sub) -> None:
    """Add ``optima build`` and ``optima show``: branch-and-bound optima (NIPS 2006 Alg. 1) and certified
    lower bounds (:mod:`harness.certify`)."""
    o = sub.add_parser("optima", help="branch-and-bound reference optima of the small problems")
    osub = o.add_subparsers(dest="optima_command", required=True)
    ob = osub.add_parser("build", help="compute and store the missing optima; retry the uncertified ones when "
                         "given a larger time or node limit than they had (merged: no bound is lost)")
    ob.add_argument("sets", nargs="+", metavar="SET", help="two_moons, coil3, 2moons, two_circles")
    ob.add_argument("--n", type=positive_int, help="problems (realizations or splits) per set (default: the paper's)")
    ob.add_argument("--time-limit", dest="time_limit", type=_positive_float, help="seconds per binary problem")
    ob.add_argument("--node-limit", dest="node_limit", type=positive_int, help="nodes per binary problem")
    ob.add_argument("--seed-truth", dest="seed_truth", action="store_true",
                    help="seed the incumbent with the true labeling (speeds up pruning; recorded)")
    ob.add_argument("--branching", choices=("nips", "bound", "product"),
                    help="branching rule of solvers.bb (default nips; all exact; a rule not yet tried on an "
                    "uncertified entry retries it)")
    ob.add_argument("--only", nargs="+", metavar="KEY",
                    help="only these problems: split<i>/class<k>, e.g. split6/class0 of coil3, split6/class1 of a "
                    "two-class set (`s3vm-bench optima show SET` lists them)")
    ob.add_argument("--jobs", type=positive_int, help="processes per search (default 1)")
    fresh_or_resumed = ob.add_mutually_exclusive_group()  # --force starts over, --resume continues
    fresh_or_resumed.add_argument("--resume", action="store_true",
                                  help="continue the stopped search of an uncertified entry from the frontier it "
                                  "kept, by the given limit (whatever the earlier limits were)")
    fresh_or_resumed.add_argument("--force", action="store_true",
                                  help="recompute every entry from scratch and replace it (after a change to the "
                                  "solver)")
    ob.add_argument("--bounds", action="store_true",
                    help="certified lower bounds (harness.certify) of a data set too large for branch and bound "
                    "(g50c, text, uspst: JMLR 2008 Table 8 splits) instead of optima; --time-limit per binary problem "
                    "(default 240 s), --n splits, --only, --force, --graph-neighbors, --max-iter")
    ob.add_argument("--graph-neighbors", dest="graph_neighbors", type=positive_int, metavar="K",
                    help="with --bounds: graph weights of the dual point only between each unlabeled point and its K "
                    "nearest unlabeled neighbours in the kernel (a search several times faster at a few thousand "
                    "points, a slightly weaker bound); default: every unlabeled pair")
    ob.add_argument("--max-iter", dest="max_iter", type=positive_int, metavar="N",
                    help="with --bounds: L-BFGS-B iterations per smoothing stage of the search (default 250; six "
                    "stages; --time-limit still cuts each stage)")
    _out_option(ob, "the stores are written to optima/ in it, starting from the shipped ones; `--out .` in a "
                "source checkout updates the shipped ones")
    ob.set_defaults(func=commands.optima_build_command)
    osh = osub.add_parser("show", help="print a stored reference file")
    osh.add_argument("set", metavar="SET")
    osh.add_argument("--bounds", action="store_true", help="print the stored certified lower bounds of a data set")
    _out_option(osh, "the stores of its optima/ are shown once it has them (as optima build --out writes them), the "
                "shipped ones until then")
    osh.set_defaults(func=commands.optima_show_command)
    _name_commands(osub)


def _add_compare_parser(sub) -> None:
    """Add ``compare``: a solver against the stored optima or certified lower bounds."""
    c = sub.add_parser("compare", help="a solver against the stored branch-and-bound optima")
    c.add_argument("solver", help=SOLVER_NAME_HELP)
    c.add_argument("--datasets", nargs="+", default=list(commands.COMPARE_DEFAULT_SETS), metavar="SET",
                   help="reference sets (default: two_moons coil3), or g50c/text/uspst: against their stored "
                   "certified lower bounds (objective, bound, certified gap)")
    c.add_argument("--splits", type=positive_int, help="problems per set (default: all stored for the paper's count)")
    c.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help=f"solver parameter (repeatable); {_PARAM_VALUE}")
    c.add_argument("--compute-missing", dest="compute_missing", action="store_true",
                   help="run branch and bound where no optimum is stored (and store it)")
    c.add_argument("--time-limit", dest="time_limit", type=_positive_float, help="with --compute-missing: seconds per problem")
    c.add_argument("--record-best", dest="record_best", action="store_true",
                   help="with g50c/text/uspst: where the solver's balanced objective is below the best objective "
                   "stored beside a bound, store it as the new best (bound store of the work folder)")
    _out_option(c, "the per-problem CSV goes to results/compare/ in it; with --record-best the bound "
                "stores are written to optima/ in it (`--out .` in a source checkout updates the shipped ones)")
    c.set_defaults(func=commands.compare_command)


def _add_reproduce_parser(sub) -> None:
    """Add ``reproduce``: the paper tables, their plan (``--plan``) and the check of cached cells (``--verify``)."""
    rp = sub.add_parser("reproduce", help="regenerate paper tables beside the published values")
    rp.add_argument("tables", nargs="*", metavar="TABLE", help="e.g. jmlr2008-table8 (see --list)")
    rp.add_argument("--all", action="store_true", help="every table with a spec")
    rp.add_argument("--list", action="store_true", help="list the tables and exit")
    rp.add_argument("--quick", action="store_true", help="fewer splits (each spec's quick count), run and reported: a "
                    "smoke run, whose report covers those splits only")
    rp.add_argument("--splits", type=positive_int, help="run at most the first N splits of each table (the report also "
                    "reads the other splits of the table already in the cache)")
    rp.add_argument("--datasets", nargs="+", metavar="NAME", help="only the rows of these data sets")
    rp.add_argument("--solvers", nargs="+", metavar="NAME",
                    help="only run the columns of these solvers (e.g. s3vm_light after a change to it); the other "
                         "cells are read from the cache (ICML 2013 Table 2's cells, which run every method, are "
                         "s3vm_path's). A solver that is not a column of the table (package.module:Class, path/to/file.py:Class, an entry point or "
                         "another registered name) is added as an extra column")
    rp.add_argument("--param", action="append", metavar="NAME=VALUE",
                    help=f"parameter of the extra columns' solver (repeatable); {_PARAM_VALUE}")
    rp.add_argument("--plan", action="store_true",
                    help="run nothing: list the cells cached and missing per table and data set, with the compute "
                         "time of the missing ones estimated from the cached cells' measured CPU times")
    rp.add_argument("--verify", type=positive_int, metavar="N",
                    help="rerun N cached cells drawn at random (without the cache) and compare them with their "
                         "stored results; runs nothing else and writes nothing (exit status 1 if one differs)")
    rp.add_argument("--verify-max-seconds", dest="verify_max_seconds", type=_positive_float,
                    help="with --verify: draw among the cells whose stored run took at most this (default 10)")
    rp.add_argument("--verify-seed", dest="verify_seed", type=int, help="with --verify: the draw's seed (default 0)")
    rp.add_argument("--from-cache", dest="from_cache", action="store_true",
                    help="run nothing: write the reports from the cells already in the cache")
    rp.add_argument("--jobs", type=_jobs, default=-1, help="parallel workers (default: all cores)")
    rp.add_argument("--backend", choices=("loky", "dask", "sequential"), default="loky")
    rp.add_argument("--scheduler", help="dask scheduler address (tcp://host:port) for --backend dask")
    rp.add_argument("--time-limit", dest="time_limit", type=_positive_float, default=3600.0,
                    help="seconds per cell (default 3600); a cell past it is reported as a timeout")
    _out_option(rp, "reports in reports/, cell cache in results/cache/; `--out .` in a source checkout "
                "rewrites the committed reports")
    rp.add_argument("--cache", help="cell cache folder (default: results/cache of the work folder)")
    rp.add_argument("--results", help="tidy results store: a folder of one CSV per table and data set (default: the reports "
                    "folder's runs/), or one CSV file (*.csv, *.csv.gz): the rows go there, and a cell whose row there or in the "
                    "shipped table carries its current key is read from it, not rerun")
    rp.add_argument("--reports", help="reports folder (default: reports/ of the work folder)")
    rp.add_argument("--ignore-store", "--no-table", dest="no_table", action="store_true",
                    help="read no cell from the results store (the work folder's and the shipped reports/runs/, or "
                         "--results), only from the cache folder: with an empty --cache every cell is recomputed, e.g. "
                         "under other package versions (the tables are printed either way; --summary shortens them)")
    rp.add_argument("--no-progress", dest="no_progress", action="store_true", help="no progress bar")
    rp.add_argument("--summary", action="store_true",
                    help="print only each table's one-line verdict, not its values beside the paper's (the "
                         "default with --all)")
    rp.set_defaults(func=commands.reproduce_command)


def _add_figures_parser(sub) -> None:
    """Add ``figures``: the paper figures and (``--make-data``) their stored inputs."""
    fg = sub.add_parser("figures", help="regenerate paper figures (PNG + SVG) from stored results")
    fg.add_argument("names", nargs="*", metavar="FIGURE", help="e.g. jmlr2008-fig2 (see --list)")
    fg.add_argument("--all", action="store_true", help="every figure; one whose stored input is missing or corrupt is reported and "
                    "skipped, the others are made")
    fg.add_argument("--list", action="store_true", help="list the figures and exit")
    fg.add_argument("--make-data", dest="make_data", nargs="+", metavar="NAME",
                    help="first compute these stored inputs of the figures (harness.figure_data.DATA: jmlr2008-fig1, "
                         "icml2006-fig4, jmlr2008-fig9, jmlr2008-fig10, sigir2006-curves, icml2013-fig6) into "
                         "reports/ of the work folder, from which the figures named (or --all) are drawn; seconds "
                         "to half an hour each, the experiments resumable")
    fg.add_argument("--only", metavar="PREFIX",
                    help="with --make-data: run only the experiment cells whose key starts with PREFIX (e.g. "
                         "'Newton/', 'D1/'), to split a run over processes; a run without it collects the cells")
    _out_option(fg, "the figures go to figures/ in it, the stored inputs of --make-data to reports/; `--out .` in "
                "a source checkout rewrites the committed ones")
    fg.set_defaults(func=commands.figures_command)


def _add_demo_parser(sub) -> None:
    """Add ``demo``: the two-moons reproduction of NIPS 2006 Table 1 on built-in data."""
    d = sub.add_parser("demo", help="the main job on built-in data (no download): two-moons reproduction")
    d.add_argument("--realizations", type=int, default=5, help="two-moons realizations (default 5)")
    d.add_argument("--jobs", type=_jobs, default=-1, help="parallel workers (default: all cores)")
    _out_option(d, "the report and the run table go to results/demo/ in it")
    d.set_defaults(func=commands.demo_command)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``s3vm-bench``: one subparser per subcommand, each with its handler
    (:mod:`harness.cli_commands`) as ``func``."""
    p = _Parser(prog="s3vm-bench", description="Semi-supervised SVM benchmark suite.")
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = p.add_subparsers(dest="command", required=True)
    _add_data_parser(sub)
    _add_run_parser(sub)
    _add_optima_parser(sub)
    _add_compare_parser(sub)
    _add_reproduce_parser(sub)
    _add_figures_parser(sub)
    _add_demo_parser(sub)
    _name_commands(sub)
    return p


def _work_folder_problem(out) -> str | None:
    """Why the work folder (``--out``, else ``$S3VM_RESULTS_DIR``, else ``./s3vm-results``) cannot be
    one -- empty, a file, or under a file -- or None. Checked for every command that has one, before
    any work."""
    if out is not None and not str(out).strip():
        return f"--out is empty: name a folder, or leave it out for ${ENV_VAR} or ./{DEFAULT_WORK_DIR}"
    try:
        root = work_dir(out).root
        option = "--out" if out is not None else (ENV_VAR if ENV_VAR in os.environ else "the work folder")
        check_writable_folder(option, root, write=False)
    except ValueError as exc:
        return str(exc)
    return None


class Terminated(KeyboardInterrupt):
    """The command was asked to stop by a signal other than Ctrl-C (SIGTERM, SIGHUP).

    Raised in the main thread by the handler :func:`main` installs, so that the command stops the
    way Ctrl-C stops it: the ``finally`` clauses of the runners kill the cells' processes and shut
    the worker pools down (``kill PID`` reaches this process only, not its children), and what was
    finished before is kept. The exit status is ``128 + signum``.
    """

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = int(signum)


#: The signals that stop a command like Ctrl-C does (besides SIGINT itself): ``kill PID`` and a
#: closed terminal.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextlib.contextmanager
def _stop_signals_interrupt():
    """While the command runs, SIGTERM and SIGHUP raise :class:`Terminated` where they were left at
    their default, which ends the process at once and leaves its children running (an ignored
    SIGHUP, under ``nohup``, stays ignored). Only in the main thread, where Python runs signal
    handlers.

    A process forked meanwhile (a cell's own process, a pool worker) inherits the handler; there it
    restores the default action and ends its process by the same signal, as if no handler were set.
    A second signal during the first one's clean-up ends the command at once.
    """
    installed = {}
    owner = os.getpid()

    def handler(signum, frame):
        for s, old in installed.items():
            signal.signal(s, old)
        if os.getpid() != owner:  # a forked child: the default action
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise Terminated(signum)

    if threading.current_thread() is threading.main_thread():
        for signum in STOP_SIGNALS:
            if signal.getsignal(signum) is signal.SIG_DFL:
                installed[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, old in installed.items():
            signal.signal(signum, old)


def _interrupt_cause(exc: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt (Ctrl-C, or :class:`Terminated`) among the causes of ``exc``, or None:
    numba's compiled code, for one, turns a Ctrl-C inside it into a SystemError "returned a result
    with an exception set"."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _report_interrupt(exc: KeyboardInterrupt) -> int:
    """Print what an interruption keeps and return the exit status: 130 (128 + SIGINT) for Ctrl-C,
    128 + the signal's number for :class:`Terminated`."""
    # What finished before it is kept (cells in the cache, whole rows in the results tables,
    # complete store files); reproduce, figures --make-data and optima build go on from there
    # when run again.
    if isinstance(exc, Terminated):
        try:
            name = signal.Signals(exc.signum).name
        except ValueError:
            name = f"signal {exc.signum}"
        what, status = f"stopped by {name}", 128 + exc.signum
    else:
        what, status = "interrupted", 130
    try:
        print(f"\n{what}: what was finished before is kept (cached cells, rows and files already written)",
              file=sys.stderr)
    except OSError:  # the terminal is gone (SIGHUP): nowhere to say it
        pass
    return status


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``s3vm-bench`` console script."""
    default_format = warnings.formatwarning
    warnings.formatwarning = one_line_warning  # in the cells' worker processes too
    try:
        with _stop_signals_interrupt():
            return _main(argv)
    except KeyboardInterrupt as exc:  # before _main's own handling (while the arguments are parsed)
        return _report_interrupt(exc)
    finally:
        warnings.formatwarning = default_format


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if hasattr(args, "out"):
        problem = _work_folder_problem(args.out)  # before any work, not at the first write
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
    if getattr(args, "out", None) is not None:
        # --out names the work folder of everything this command reads back or writes (the library
        # functions read it from the environment: harness.paths.work_dir).
        os.environ[ENV_VAR] = str(args.out)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt as exc:
        return _report_interrupt(exc)
    except BrokenPipeError:
        # The reader of the output went away (`s3vm-bench ... | head`): stop quietly, as Unix tools do;
        # stdout is pointed at /dev/null so that the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:  # e.g. an output folder that cannot be created or written, a scheduler not reached
        if _interrupt_cause(exc) is not None:
            return _report_interrupt(_interrupt_cause(exc))
        if exc.errno in (errno.ENOSPC, errno.EDQUOT) and not getattr(exc, "filename", None):
            # A write's error carries no file name: name the folder the command writes under.
            print(f"error: {exc.strerror or exc} while writing under the work folder {work_dir().root.resolve()}: free "
                  f"space there, or choose another folder with --out DIR or {ENV_VAR} (the files already written "
                  "are whole; a rerun continues from them)", file=sys.stderr)
        elif getattr(exc, "filename", None):
            print(f"error: {exc.filename}: {exc.strerror or exc} (a file or folder that cannot be read or written: "
                  f"the work folder is chosen with --out DIR or {ENV_VAR}, its parts with the command's options)",
                  file=sys.stderr)
        else:
            print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        interrupt = _interrupt_cause(exc)
        if interrupt is None:
            raise
        return _report_interrupt(interrupt)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
