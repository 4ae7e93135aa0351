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
import sys
from pathlib import Path

import numpy as np

from .paths import DEFAULT_WORK_DIR, ENV_VAR, work_dir

__all__ = ["main", "build_parser"]


def _data_list(args) -> int:
    from s3vm_bench.data_registry import list_datasets

    rows = []
    for s in list_datasets():
        n, d, k = s.expected_shape
        src = "network" if s.network_only else (s.files[0].split("/")[0] if s.files else "scikit-learn")
        rows.append((s.name, str(n), str(d), str(k), "yes" if s.sparse else "no", src,
                     "n/a" if s.network_only or not s.files else ("yes" if s.cached() else "no")))
    head = ("name", "n", "d", "classes", "sparse", "source", "cached")
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(c.ljust(w) if i in (0, 5) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    return 0


def _data_fetch(args) -> int:
    from s3vm_bench.data_registry import DataFetchError, get_spec, list_datasets, load_dataset

    names = [s.name for s in list_datasets(include_network=False)] if args.all else args.names
    if not names:
        print("name at least one data set, or --all", file=sys.stderr)
        return 2
    failures = 0
    for name in names:
        try:
            spec = get_spec(name)
            ds = load_dataset(spec.name)  # fetches, verifies and parses: a full check
        except (ValueError, DataFetchError) as exc:
            failures += 1
            print(f"{name}: FAILED: {exc}", file=sys.stderr)
            continue
        print(f"{spec.name}: ok ({ds.n_samples} x {ds.n_features}, {ds.n_classes} classes)")
    return 1 if failures else 0


def _data_info(args) -> int:
    from s3vm_bench.data_registry import DataFetchError, get_spec, load_dataset

    try:
        spec = get_spec(args.name)
        ds = load_dataset(spec.name)
    except (ValueError, DataFetchError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(ds.summary())
    if spec.paper_shape is not None:
        n, d, k = spec.paper_shape
        print(f"  paper ({spec.paper_ref}): {n} x {d}, {k} classes")
    if spec.note:
        print(f"  note: {spec.note}")
    print("  files: " + (", ".join(spec.files) if spec.files else "(none: built in or network-only)"))
    return 0


def _demo(args) -> int:
    """NIPS 2006 Table 1 (two moons) on a few realizations: every kernel solver and BB, no download."""
    import dataclasses
    from pathlib import Path

    from s3vm_bench.solvers import REGISTRY, get_solver

    from .reproduce import reproduce
    from .specs import SPECS, Config

    base = SPECS["nips2006-table1"]
    if isinstance(args.realizations, bool) or not 1 <= args.realizations <= base.n_splits:
        print(f"error: --realizations must be an integer from 1 to {base.n_splits} (the two-moons realizations "
              f"of NIPS 2006 Table 1), got {args.realizations}", file=sys.stderr)
        return 2
    have = {c.solver for c in base.configs}
    extra = []
    for name in sorted(REGISTRY):
        cls = get_solver(name)
        # Transductive kernel solvers only: svm_5cv reports a cross-validation error, and the
        # linear-only text solvers (tsvm_linear, mfa) do not take the Gaussian kernel.
        if name in have or getattr(cls, "evaluation", "transductive") != "transductive":
            continue
        if cls().get_params().get("kernel") != "rbf":
            continue
        extra.append(Config(name, name))
    spec = dataclasses.replace(base, configs=base.configs + tuple(extra), quick_splits=args.realizations)
    out_dir = work_dir(args.out).demo
    print(f"== two moons, NIPS 2006 Table 1 on {args.realizations} realization(s): {len(spec.configs)} solvers "
          f"(sigma = 0.5, C = C* = 10, 2 labeled + 100 unlabeled points, 200 test points) ==", flush=True)
    SPECS_BACKUP = dict(SPECS)
    try:
        SPECS[spec.key] = spec
        reproduce([spec.key], quick=True, reports_dir=out_dir, cache_dir=out_dir / "cache",
                  results=out_dir / "runs.csv", n_jobs=args.jobs, progress=False, echo=lambda *a: None)
    finally:
        SPECS.clear()
        SPECS.update(SPECS_BACKUP)
    print((out_dir / f"{spec.key}.md").read_text())
    print(f"(report and the tidy per-run table in {out_dir}/; the paper's values in brackets; "
          "the full table: `s3vm-bench reproduce nips2006-table1`)")
    return 0


def _run(args) -> int:
    from s3vm_bench.data_registry import DataFetchError

    from .protocol import ProtocolSettings
    from .run import parse_params, run_solver

    try:
        from s3vm_bench.data_registry import get_spec
        from s3vm_bench.solvers import get_solver

        get_solver(args.solver)  # an unknown solver or data set is named before anything else
        get_spec(args.dataset)
        overrides = {k: v for k, v in {"kernel": args.kernel, "sigma": args.sigma, "C": args.C,
                                       "C_star": args.C_star, "r_mode": args.r_mode}.items() if v is not None}
        settings = ProtocolSettings.for_dataset(args.dataset, **overrides)
        rows = run_solver(args.solver, args.dataset, n_splits=args.splits, protocol=args.protocol,
                          settings=settings, params=parse_params(args.param),
                          results=args.results or work_dir(args.out).runs, time_limit=args.time_limit)
    except (ValueError, TypeError, ImportError, AttributeError, DataFetchError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0 if all(r["status"] == "done" for r in rows) else 1


def _optima_build(args) -> int:
    from s3vm_bench.data_registry import DataFetchError

    from threadpoolctl import threadpool_limits

    from .optima import build, build_bounds

    try:
        if args.bounds:
            # harness.certify: one full eigendecomposition per iteration, one BLAS thread as below.
            with threadpool_limits(1):
                for name in args.sets:
                    build_bounds(name, args.n, only=args.only, force=args.force,
                                 time_limit=240.0 if args.time_limit is None else args.time_limit)
            return 0
        # Branch and bound factors matrices of at most a few hundred rows, node after node: a
        # second BLAS thread only adds synchronization, and on a loaded machine it made every
        # node several times slower (Coil3 split 2 class 0: 145 s with the default threads,
        # 39 s with one, the same 72875 nodes).
        with threadpool_limits(1):
            for name in args.sets:
                build(name, args.n, time_limit=args.time_limit, node_limit=args.node_limit,
                      seed_truth=args.seed_truth, force=args.force, branching=args.branching, resume=args.resume,
                      only=args.only, jobs=args.jobs)
    except (ValueError, DataFetchError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _optima_show(args) -> int:
    from .optima import load_bounds, load_store

    if args.bounds:
        try:
            store = load_bounds(args.set)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"{store['set']}: {store['kind']}; settings {store['settings']}; best objectives from "
              f"{store['best_objective_from']}")
        print(f"{'problem':>14} {'bound':>10} {'best obj':>10} {'gap%':>8} {'seconds':>8}  best solver")
        for key, e in store["entries"].items():
            gap = "--" if e["gap"] is None else f"{100 * e['gap']:.1f}"
            print(f"{key:>14} {e['lower_bound']:>10.4f} {e['best_objective']:>10.4f} {gap:>8} "
                  f"{e['seconds']:>8.1f}  {e['best_solver']}")
        if store["entries"]:
            print(f"{len(store['entries'])} binary problems, median gap "
                  f"{100 * np.median([np.inf if e['gap'] is None else e['gap'] for e in store['entries'].values()]):.1f}%, "
                  "certified optimal "
                  f"{sum(e['certified_optimal'] for e in store['entries'].values())}")
        from .compare import gap_table

        print(f"JMLR 2008 Table 8 solvers on {args.set}: median certified gap (J - L)/L over the splits, unlabeled error")
        for r in gap_table(args.set):
            gap = "--" if r["median_gap"] is None else f"{100 * r['median_gap']:.1f}%"
            print(f"{r['solver']:>28} {gap:>9} ({r['n_gaps']}/{r['n_splits']} splits)  {100 * r['unlabeled_error']:.1f}%")
        return 0
    try:
        store = load_store(args.set)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    entries = store["entries"]
    print(f"{store['set']}: {store['description']} ({store['paper']}); settings {store['settings']}")
    print(f"{'problem':>14} {'objective':>10} {'lower bd':>10} {'gap%':>8} {'status':>10} {'nodes':>8} {'seconds':>8} "
          f"{'unl.err%':>8} {'J(truth)':>10}")
    for key, e in entries.items():
        print(f"{key:>14} {e['objective']:>10.4f} {e['lower_bound']:>10.4f} {100 * e['gap']:>8.3f} {e['status']:>10} "
              f"{e['nodes']:>8} {e['seconds']:>8.2f} {100 * e['unlabeled_error']:>8.1f} {e['objective_true_labels']:>10.4f}")
    if entries:
        cert = sum(e["certified"] for e in entries.values())
        print(f"{len(entries)} binary problems, {cert} certified optimal; median seconds "
              f"{np.median([e['seconds'] for e in entries.values()]):.2f}, median nodes "
              f"{np.median([e['nodes'] for e in entries.values()]):.0f}")
    return 0


def _compare(args) -> int:
    from s3vm_bench.data_registry import DataFetchError

    from threadpoolctl import threadpool_limits

    from .compare import compare, write_csv
    from .run import parse_params

    try:
        out = work_dir(args.out).compare / f"{_file_stem(args.solver)}.csv"
        # One BLAS thread, as the grid runs its cells: the problems are small (see _optima_build)
        # and the solver's time should not depend on how busy the machine's other cores are.
        with threadpool_limits(1):
            rows = compare(args.solver, args.datasets, args.splits, params=parse_params(args.param),
                           compute_missing=args.compute_missing, time_limit=args.time_limit)
        print(f"per-problem table: {write_csv(rows, out, args.solver)}")
    except (ValueError, TypeError, ImportError, AttributeError, DataFetchError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _reproduce(args) -> int:
    from s3vm_bench.data_registry import DataFetchError

    from .reproduce import reproduce
    from .specs import SPECS, UNSPECIFIED

    if args.list:
        for key, spec in SPECS.items():
            print(f"{key:18} {spec.title}")
        for key, why in UNSPECIFIED.items():
            print(f"{key:18} (no spec: {why})")
        return 0
    keys = list(SPECS) if args.all else args.tables
    if not keys:
        print("name at least one table (see --list), or --all", file=sys.stderr)
        return 2
    try:
        wd = work_dir(args.out)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from .run import parse_params

    try:
        params = parse_params(args.param)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    reports = Path(args.reports) if args.reports else wd.reports
    cache = Path(args.cache) if args.cache else wd.cache
    results = Path(args.results) if args.results else reports / "runs"
    if args.verify is not None:
        from .verify import verify

        if args.plan or args.from_cache:
            print("error: --verify runs only the check; it does not combine with --plan or --from-cache",
                  file=sys.stderr)
            return 2

        try:
            checks = verify(keys, args.verify, max_seconds=args.verify_max_seconds, seed=args.verify_seed,
                            quick=args.quick, n_splits=args.splits, datasets=args.datasets, solvers=args.solvers,
                            params=params, cache_dir=cache, results=results,
                            read_table=not args.no_table, echo=lambda m: print(m, flush=True))
        except (ValueError, TypeError, DataFetchError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0 if all(c.same for c in checks) else 1
    if args.plan:
        import os

        from .plan import format_plan, plan

        try:
            rows, total = plan(keys, quick=args.quick, n_splits=args.splits, datasets=args.datasets,
                                         solvers=args.solvers, params=params, cache_dir=cache,
                                         results=results,
                                         read_table=not args.no_table)
        except (ValueError, TypeError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        jobs = args.jobs if args.jobs and args.jobs > 0 else (os.cpu_count() or 1)
        print(format_plan(rows, total, n_cores=jobs))
        return 0
    try:
        out = reproduce(keys, quick=args.quick, n_splits=args.splits, datasets=args.datasets, solvers=args.solvers,
                        params=params, cache_dir=cache, results=results, reports_dir=reports, n_jobs=args.jobs,
                        backend=args.backend, scheduler=args.scheduler,
                        time_limit=args.time_limit, progress=not args.no_progress, run=not args.from_cache,
                        read_table=not args.no_table)
    except (ValueError, TypeError, ImportError, DataFetchError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    failed = sum(c.n_failed for cells in out.values() for c in cells)
    return 1 if failed else 0


def _figures(args) -> int:
    from pathlib import Path

    from .figures import FIGURES, gallery_markdown, make_figures

    if args.list:
        for name, spec in FIGURES.items():
            print(f"{name:16} {spec.paper:40} {spec.source}")
        return 0
    names = list(FIGURES) if args.all else args.names
    if args.only is not None and not args.make_data:
        print("error: --only goes with --make-data", file=sys.stderr)
        return 2
    if args.make_data:
        status = _figure_data(args)
        if status or not names:
            return status
    if not names:
        print("name at least one figure (see --list), or --all, or --make-data NAME", file=sys.stderr)
        return 2
    unknown = [n for n in names if n not in FIGURES]
    if unknown:
        import difflib

        hints = [f"{n} (did you mean {m[0]}?)" if (m := difflib.get_close_matches(n, list(FIGURES), n=1, cutoff=0.6))
                 else n for n in unknown]
        print(f"error: unknown figure(s) {', '.join(hints)}; see `s3vm-bench figures --list`", file=sys.stderr)
        return 2
    from ._atomic import atomic_write

    out = work_dir(args.out).figures
    results = make_figures(names, out)
    if args.all:
        # The gallery lists every figure, so it is rewritten only when all of them were attempted.
        atomic_write(out / "README.md", gallery_markdown(results, out) + "\n")
        print(f"gallery: {out / 'README.md'}")
    made = sum(isinstance(v, list) for v in results.values())
    print(f"{made} figure(s) made, {len(results) - made} skipped (missing stored results)")
    return 0


def _figure_data(args) -> int:
    """``figures --make-data``: compute stored inputs of the figures (:mod:`harness.figure_data`)."""
    from s3vm_bench.data_registry import DataFetchError

    from .figure_data import DATA, make_data

    unknown = [n for n in args.make_data if n not in DATA]
    if unknown:
        print(f"error: unknown figure data {', '.join(unknown)}; known: {', '.join(DATA)}", file=sys.stderr)
        return 2
    try:
        for name in args.make_data:
            make_data(name, only=args.only, echo=lambda m: print(m, flush=True))
    except (ValueError, RuntimeError, DataFetchError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def _positive_int(text: str) -> int:
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


def _file_stem(spec: str) -> str:
    """A file name for a solver spec (``path/to/my.py:Class`` -> ``my.py_Class``)."""
    import re

    return re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(spec.replace("\\", "/")).name).strip("._") or "solver"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="s3vm-bench", description="Semi-supervised SVM benchmark suite.")
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = p.add_subparsers(dest="command", required=True)

    data = sub.add_parser("data", help="list, fetch and describe the data sets")
    dsub = data.add_subparsers(dest="data_command", required=True)
    dsub.add_parser("list", help="every data set with its size and cache state").set_defaults(func=_data_list)
    f = dsub.add_parser("fetch", help="download and verify data sets")
    f.add_argument("names", nargs="*", metavar="NAME")
    f.add_argument("--all", action="store_true", help="every data set that is not network-only")
    f.set_defaults(func=_data_fetch)
    i = dsub.add_parser("info", help="load one data set and describe it")
    i.add_argument("name", metavar="NAME")
    i.set_defaults(func=_data_info)

    r = sub.add_parser("run", help="one solver on every split of one data set (common protocol)")
    r.add_argument("--solver", required=True, help="registry name or package.module:Class")
    r.add_argument("--dataset", required=True)
    r.add_argument("--splits", type=_positive_int, default=10, help="number of splits (default 10)")
    r.add_argument("--protocol", default="jmlr2008", help="split protocol (default jmlr2008)")
    r.add_argument("--kernel", choices=("rbf", "linear"))
    r.add_argument("--sigma", type=float, help="default: JMLR 2008 Table 5")
    r.add_argument("--C", type=float, help="default: JMLR 2008 Table 5")
    r.add_argument("--C-star", dest="C_star", type=float, help="default: C* = C")
    r.add_argument("--r-mode", dest="r_mode", choices=("exact", "estimated"))
    r.add_argument("--param", action="append", metavar="NAME=VALUE", help="solver parameter (repeatable)")
    r.add_argument("--results", help="CSV the rows are appended to, each as soon as its split ends (default: "
                   "results/runs.csv of the work folder)")
    r.add_argument("--time-limit", dest="time_limit", type=_positive_float, default=3600.0,
                   help="seconds per split (default 3600); each split runs in a process of its own, killed past it")
    _out_option(r)
    r.set_defaults(func=_run)

    o = sub.add_parser("optima", help="branch-and-bound reference optima of the small problems")
    osub = o.add_subparsers(dest="optima_command", required=True)
    ob = osub.add_parser("build", help="compute and store the missing optima; retry the uncertified ones when "
                         "given a larger time or node limit than they had (merged: no bound is lost)")
    ob.add_argument("sets", nargs="+", metavar="SET", help="two_moons, coil3, 2moons, two_circles")
    ob.add_argument("--n", type=_positive_int, help="problems (realizations or splits) per set (default: the paper's)")
    ob.add_argument("--time-limit", dest="time_limit", type=_positive_float, help="seconds per binary problem")
    ob.add_argument("--node-limit", dest="node_limit", type=_positive_int, help="nodes per binary problem")
    ob.add_argument("--seed-truth", dest="seed_truth", action="store_true",
                    help="seed the incumbent with the true labeling (speeds up pruning; recorded)")
    ob.add_argument("--branching", choices=("nips", "bound", "product"), default="nips",
                    help="branching rule of solvers.bb (all exact; a rule not yet tried on an uncertified entry "
                    "retries it)")
    ob.add_argument("--only", nargs="+", metavar="KEY", help="only these problems, e.g. split6/class0")
    ob.add_argument("--jobs", type=_positive_int, default=1, help="processes per search (default 1)")
    ob.add_argument("--resume", action="store_true",
                    help="continue the stopped search of an uncertified entry from the frontier it kept, by the "
                    "given limit (whatever the earlier limits were)")
    ob.add_argument("--force", action="store_true", help="recompute every entry from scratch and replace it (after a change to "
                    "the solver)")
    ob.add_argument("--bounds", action="store_true",
                    help="certified lower bounds (harness.certify) of a data set too large for branch and bound "
                    "(g50c, text, uspst: JMLR 2008 Table 8 splits) instead of optima; --time-limit per binary problem "
                    "(default 240 s), --n splits, --only, --force")
    _out_option(ob, "the stores are written to optima/ in it, starting from the shipped ones; `--out .` in a "
                "source checkout updates the shipped ones")
    ob.set_defaults(func=_optima_build)
    osh = osub.add_parser("show", help="print a stored reference file")
    osh.add_argument("set", metavar="SET")
    osh.add_argument("--bounds", action="store_true", help="print the stored certified lower bounds of a data set")
    osh.set_defaults(func=_optima_show)

    c = sub.add_parser("compare", help="a solver against the stored branch-and-bound optima")
    c.add_argument("solver", help="registry name or package.module:Class")
    c.add_argument("--datasets", nargs="+", default=["two_moons", "coil3"], metavar="SET",
                   help="reference sets (default: two_moons coil3), or g50c/text/uspst: against their stored "
                   "certified lower bounds (objective, bound, certified gap)")
    c.add_argument("--splits", type=_positive_int, help="problems per set (default: all stored for the paper's count)")
    c.add_argument("--param", action="append", metavar="NAME=VALUE", help="solver parameter (repeatable)")
    c.add_argument("--compute-missing", dest="compute_missing", action="store_true",
                   help="run branch and bound where no optimum is stored (and store it)")
    c.add_argument("--time-limit", dest="time_limit", type=_positive_float, help="with --compute-missing: seconds per problem")
    _out_option(c, "the per-problem CSV goes to results/compare/ in it")
    c.set_defaults(func=_compare)

    rp = sub.add_parser("reproduce", help="regenerate paper tables beside the published values")
    rp.add_argument("tables", nargs="*", metavar="TABLE", help="e.g. jmlr2008-table8 (see --list)")
    rp.add_argument("--all", action="store_true", help="every table with a spec")
    rp.add_argument("--list", action="store_true", help="list the tables and exit")
    rp.add_argument("--quick", action="store_true", help="fewer splits (each spec's quick count): a smoke run")
    rp.add_argument("--splits", type=_positive_int, help="run at most the first N splits of each table (the report also "
                    "reads the other splits of the table already in the cache)")
    rp.add_argument("--datasets", nargs="+", metavar="NAME", help="only the rows of these data sets")
    rp.add_argument("--solvers", nargs="+", metavar="NAME",
                    help="only run the columns of these solvers (e.g. s3vm_light after a change to it); the other "
                         "cells are read from the cache (ICML 2013 Table 2's cells, which run every method, are "
                         "s3vm_path's). A solver that is not a column of the table (package.module:Class, path/to/file.py:Class, an entry point or "
                         "another registered name) is added as an extra column")
    rp.add_argument("--param", action="append", metavar="NAME=VALUE",
                    help="parameter of the extra columns' solver (repeatable)")
    rp.add_argument("--plan", action="store_true",
                    help="run nothing: list the cells cached and missing per table and data set, with the compute "
                         "time of the missing ones estimated from the cached cells' fit times")
    rp.add_argument("--verify", type=_positive_int, metavar="N",
                    help="rerun N cached cells drawn at random (without the cache) and compare them with their "
                         "stored results; runs nothing else and writes nothing (exit status 1 if one differs)")
    rp.add_argument("--verify-max-seconds", dest="verify_max_seconds", type=_positive_float, default=10.0,
                    help="with --verify: draw among the cells whose stored run took at most this (default 10)")
    rp.add_argument("--verify-seed", dest="verify_seed", type=int, default=0, help="with --verify: the draw's seed")
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
    rp.add_argument("--no-table", dest="no_table", action="store_true",
                    help="take no cell from the results table, only from the cache folder (with an empty --cache: "
                         "recompute everything, e.g. under other package versions)")
    rp.add_argument("--no-progress", dest="no_progress", action="store_true", help="no progress bar")
    rp.set_defaults(func=_reproduce)

    fg = sub.add_parser("figures", help="regenerate paper figures (PNG + SVG) from stored results")
    fg.add_argument("names", nargs="*", metavar="FIGURE", help="e.g. jmlr2008-fig2 (see --list)")
    fg.add_argument("--all", action="store_true", help="every figure; missing data is reported, not fatal")
    fg.add_argument("--list", action="store_true", help="list the figures and exit")
    fg.add_argument("--make-data", dest="make_data", nargs="+", metavar="NAME",
                    help="first compute these stored inputs of the figures (harness.figure_data.DATA: jmlr2008-fig1, "
                         "icml2006-fig4, jmlr2008-fig9, jmlr2008-fig10, sigir2006-curves, icml2013-fig6) into "
                         "reports/ of the work folder, from which the figures are then drawn; seconds to half an "
                         "hour each, the experiments resumable")
    fg.add_argument("--only", metavar="PREFIX",
                    help="with --make-data: run only the experiment cells whose key starts with PREFIX (e.g. "
                         "'Newton/', 'D1/'), to split a run over processes; a run without it collects the cells")
    _out_option(fg, "the figures go to figures/ in it, the stored inputs of --make-data to reports/; `--out .` in "
                "a source checkout rewrites the committed ones")
    fg.set_defaults(func=_figures)

    d = sub.add_parser("demo", help="the main job on built-in data (no download): two-moons reproduction")
    d.add_argument("--realizations", type=int, default=5, help="two-moons realizations (default 5)")
    d.add_argument("--jobs", type=_jobs, default=-1, help="parallel workers (default: all cores)")
    _out_option(d, "the report and the run table go to results/demo/ in it")
    d.set_defaults(func=_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``s3vm-bench`` console script."""
    args = build_parser().parse_args(argv)
    if getattr(args, "out", None) is not None:
        import os

        # --out names the work folder of everything this command reads back or writes (the library
        # functions read it from the environment: harness.paths.work_dir).
        if not str(args.out).strip():
            print(f"error: --out is empty: name a folder, or leave it out for ${ENV_VAR} or ./{DEFAULT_WORK_DIR}",
                  file=sys.stderr)
            return 2
        os.environ[ENV_VAR] = str(args.out)
    try:
        return int(args.func(args) or 0)
    except OSError as exc:  # e.g. an output folder that cannot be created or written
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        print(f"error: {where}{exc.strerror or exc} (the work folder is chosen with --out DIR or {ENV_VAR})",
              file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
