"""The handlers of the ``s3vm-bench`` subcommands (:mod:`harness.cli` builds the parser).

Each ``<command>_command(args)`` takes the parsed arguments of its subcommand and returns the
exit status: 0 on success, 1 when runs failed or a check found a difference, 2 on a usage or
data error (the message goes to standard error).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .paths import check_writable_folder, work_dir

__all__ = ["data_list_command", "data_fetch_command", "data_info_command", "demo_command", "run_command",
           "optima_build_command", "optima_show_command", "compare_command", "reproduce_command",
           "figures_command", "figure_data_command", "file_stem"]


def data_list_command(args) -> int:
    """``s3vm-bench data list``: every data set with its size, source and cache state."""
    from s3vm_bench.data_registry import DataFetchError, check_cache_dir, list_datasets

    try:
        check_cache_dir()
    except DataFetchError as exc:  # the list is still useful; its "cached" column then says no throughout
        print(f"warning: {exc}", file=sys.stderr)

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


def data_fetch_command(args) -> int:
    """``s3vm-bench data fetch``: download, verify and parse the named data sets (or ``--all``)."""
    from s3vm_bench.data_registry import DataFetchError, get_spec, list_datasets, load_dataset

    if args.all and args.names:
        print(f"error: --all fetches every data set; drop the names ({' '.join(args.names)}) or --all",
              file=sys.stderr)
        return 2
    names = [s.name for s in list_datasets(include_network=False)] if args.all else args.names
    if not names:
        print("error: name at least one data set, or --all", file=sys.stderr)
        return 2
    try:
        specs = [get_spec(name) for name in names]  # every name checked before any download
    except (TypeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    failures = 0
    for name, spec in zip(names, specs):
        try:
            ds = load_dataset(spec.name)  # fetches, verifies and parses: a full check
        except (ValueError, DataFetchError) as exc:
            failures += 1
            print(f"{name}: FAILED: {exc}", file=sys.stderr)
            continue
        print(f"{spec.name}: ok ({ds.n_samples} x {ds.n_features}, {ds.n_classes} classes)")
    return 1 if failures else 0


def data_info_command(args) -> int:
    """``s3vm-bench data info``: load one data set and describe it beside the paper's shape."""
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


def demo_command(args) -> int:
    """NIPS 2006 Table 1 (two moons) on a few realizations: every kernel solver and BB, no download."""
    import dataclasses

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
    spec = dataclasses.replace(base, configs=base.configs + tuple(extra), quick_splits=args.realizations,
                               command=f"s3vm-bench demo --realizations {args.realizations}")
    out_dir = work_dir(args.out).demo
    from .run import check_results_path

    try:
        check_results_path(out_dir / "runs.csv", "the demo's run table",
                           "move it away, or choose another work folder with --out")  # before any work
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
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


def run_command(args) -> int:
    """``s3vm-bench run``: one solver on every split of one data set under the common protocol (JMLR 2008 Sec. 5.2)."""
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
        if settings.kernel == "linear" and args.sigma is not None:
            raise ValueError("--sigma is the width of the Gaussian kernel; with the linear kernel it has no effect "
                             "and would only mislabel the stored row: drop it")
        rows = run_solver(args.solver, args.dataset, n_splits=args.splits, protocol=args.protocol,
                          settings=settings, params=parse_params(args.param),
                          results=args.results or work_dir(args.out).runs, time_limit=args.time_limit)
    except (ValueError, TypeError, ImportError, AttributeError, DataFetchError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0 if all(r["status"] == "done" for r in rows) else 1


def optima_build_command(args) -> int:
    """``s3vm-bench optima build``: branch-and-bound optima (NIPS 2006 Alg. 1) or, with ``--bounds``,
    certified lower bounds (:mod:`harness.certify`) of the named sets.

    ``--graph-neighbors`` and ``--max-iter`` are options of the bound search only; ``--node-limit``,
    ``--seed-truth``, ``--branching``, ``--resume`` and ``--jobs`` of the branch-and-bound search
    only (a ``--bounds`` build always skips the problems whose bound is stored, and runs in one
    process); ``--n``, ``--time-limit``, ``--only`` and ``--force`` apply to both. An option of the
    other kind of build, and a set name that is not of this kind, are refused before anything is
    computed (status 2); a bad ``--only`` key or ``--n`` and an unreadable store are refused by the
    build itself, before its first search.
    """
    from s3vm_bench.data_registry import DataFetchError

    from threadpoolctl import threadpool_limits

    from .optima import BOUND_SETS, REFERENCE_SETS, build, build_bounds, get_reference_set, load_bounds, load_store

    if args.bounds:
        other_kind = (("--node-limit", args.node_limit is not None), ("--seed-truth", args.seed_truth),
                      ("--branching", args.branching is not None), ("--resume", args.resume),
                      ("--jobs", args.jobs is not None))
        why = ("applies to branch-and-bound optima only, not to --bounds (which takes --n, --time-limit, --only, "
               "--force, --graph-neighbors and --max-iter): drop it")
    else:
        other_kind = (("--graph-neighbors", args.graph_neighbors is not None), ("--max-iter", args.max_iter is not None))
        why = "applies to --bounds only"
    for option, given in other_kind:
        if given:
            print(f"error: {option} {why}", file=sys.stderr)
            return 2
    try:
        for name in args.sets:  # every name, and its store, is checked before any set is built
            if not args.bounds:
                get_reference_set(name)
                load_store(name)
                continue
            if name not in BOUND_SETS:
                hint = (f"{name} has branch-and-bound optima instead: drop --bounds" if name in REFERENCE_SETS
                        else f"name one of {', '.join(BOUND_SETS)}")
                raise ValueError(f"no certified lower bounds for {name!r}: --bounds builds those of "
                                 f"{', '.join(BOUND_SETS)} only; {hint}")
            load_bounds(name)
        if args.bounds:
            # harness.certify: one eigendecomposition per iteration, one BLAS thread as below.
            with threadpool_limits(1):
                for name in args.sets:
                    build_bounds(name, args.n, only=args.only, force=args.force,
                                 time_limit=240.0 if args.time_limit is None else args.time_limit,
                                 graph_neighbors=args.graph_neighbors,
                                 max_iter=250 if args.max_iter is None else args.max_iter)
            return 0
        # Branch and bound factors matrices of at most a few hundred rows, node after node: a
        # second BLAS thread only adds synchronization, and when the cores are busy it waits for
        # one at every node.
        with threadpool_limits(1):
            for name in args.sets:
                build(name, args.n, time_limit=args.time_limit, node_limit=args.node_limit,
                      seed_truth=args.seed_truth, force=args.force,
                      branching="nips" if args.branching is None else args.branching, resume=args.resume,
                      only=args.only, jobs=1 if args.jobs is None else args.jobs)
    except (ValueError, DataFetchError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def optima_show_command(args) -> int:
    """``s3vm-bench optima show``: print a stored store of optima or of certified lower bounds."""
    from .optima import load_bounds, load_store
    from .optima_store import stored_file

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
            best = "--" if e["best_objective"] is None else f"{e['best_objective']:.4f}"
            print(f"{key:>14} {e['lower_bound']:>10.4f} {best:>10} {gap:>8} "
                  f"{e['seconds']:>8.1f}  {e['best_solver']}")
        if store["entries"]:
            print(f"{len(store['entries'])} binary problems, median gap "
                  f"{100 * np.median([np.inf if e['gap'] is None else e['gap'] for e in store['entries'].values()]):.1f}%, "
                  "certified optimal "
                  f"{sum(e['certified_optimal'] for e in store['entries'].values())}")
        print(f"(from {stored_file(args.set, bounds=True)})" if stored_file(args.set, bounds=True).is_file()
              else "(nothing stored yet)")
        from .compare import gap_table

        print(f"JMLR 2008 Table 8 solvers on {args.set}: median certified gap (J - L)/L over the splits, unlabeled error")
        for r in gap_table(args.set):
            gap = "--" if r["median_gap"] is None else f"{100 * r['median_gap']:.1f}%"
            print(f"{r['solver']:>28} {gap:>9} ({r['n_gaps']}/{r['n_splits']} splits)  {100 * r['unlabeled_error']:.1f}%")
        return 0
    try:
        store = load_store(args.set)
    except ValueError as exc:
        from .optima_store import BOUND_SETS

        hint = (f"; {args.set} has certified lower bounds: `s3vm-bench optima show {args.set} --bounds`"
                if args.set in BOUND_SETS else "")
        print(f"error: {exc}{hint}", file=sys.stderr)
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
    print(f"(from {stored_file(args.set)})" if stored_file(args.set).is_file() else "(nothing stored yet)")
    return 0


def compare_command(args) -> int:
    """``s3vm-bench compare``: a solver against the stored optima or certified lower bounds.

    Status 2 for bad input (nothing is run), 1 when the solver raised on a problem
    (:class:`harness.compare.SolverFailed`: the message names the solver, the problem and the
    exception; no table is written), 0 otherwise.
    """
    from s3vm_bench.data_registry import DataFetchError

    from threadpoolctl import threadpool_limits

    from .compare import SolverFailed, compare, write_csv
    from .run import parse_params

    if args.time_limit is not None and not args.compute_missing:
        print("error: --time-limit is the limit of the searches --compute-missing runs; add --compute-missing "
              "or drop it", file=sys.stderr)
        return 2
    twice = sorted({name for name in args.datasets if args.datasets.count(name) > 1})
    if twice:
        print(f"error: --datasets names {', '.join(twice)} more than once: name each set once", file=sys.stderr)
        return 2
    try:
        folder = work_dir(args.out).compare
        check_writable_folder("--out:", folder)  # before any problem is solved
        out = folder / compare_file_name(args.solver, args.datasets, args.splits, args.param)
        # One BLAS thread, as the grid runs its cells: the problems are small (see optima_build_command)
        # and the solver's time should not depend on how busy the machine's other cores are.
        with threadpool_limits(1):
            rows = compare(args.solver, args.datasets, args.splits, params=parse_params(args.param),
                           compute_missing=args.compute_missing, time_limit=args.time_limit,
                           record_best=args.record_best)
        print(f"per-problem table: {write_csv(rows, out, args.solver)}")
    except SolverFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, ImportError, AttributeError, DataFetchError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def reproduce_command(args) -> int:
    """``s3vm-bench reproduce``: paper tables beside the published values (or their plan, or a
    verification of cached cells)."""
    from s3vm_bench.data_registry import DataFetchError

    from .reproduce import reproduce  # it checks where it writes before any cell runs
    from .specs import SPECS, UNSPECIFIED

    conflict = _reproduce_conflict(args)
    if conflict:
        print(f"error: {conflict}", file=sys.stderr)
        return 2
    if args.list:
        for key, spec in SPECS.items():
            print(f"{key:18} {spec.title}")
        for key, why in UNSPECIFIED.items():
            print(f"{key:18} (no spec: {why})")
        return 0
    keys = list(SPECS) if args.all else args.tables
    if not keys:
        swallowed = [f"{name} (read as a value of {option})" for option, names in
                     (("--datasets", args.datasets), ("--solvers", args.solvers)) for name in names or ()
                     if name in SPECS]
        hint = (f"; {', '.join(swallowed)}: name the tables before the options that take several values"
                if swallowed else "")
        print(f"error: name at least one table (see --list), or --all{hint}", file=sys.stderr)
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
    for option, folder in (("--reports", reports), ("--cache", cache)):
        if folder.exists() and not folder.is_dir():  # checked before any cell is read or run
            print(f"error: {option} {folder} is a file, not a folder: name a folder", file=sys.stderr)
            return 2
    if args.verify is not None:
        return _reproduce_verify(args, keys, params, cache, results)
    if args.plan:
        return _reproduce_plan(args, keys, params, cache, results)
    try:
        out = reproduce(keys, quick=args.quick, n_splits=args.splits, datasets=args.datasets, solvers=args.solvers,
                        params=params, cache_dir=cache, results=results, reports_dir=reports, n_jobs=args.jobs,
                        backend=args.backend, scheduler=args.scheduler,
                        time_limit=args.time_limit, progress=not args.no_progress, run=not args.from_cache,
                        read_table=not args.no_table)
    except (ValueError, TypeError, ImportError, DataFetchError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not (args.all or args.summary):
        for key in out:
            print_report_head(reports / f"{key}.md")
    failed = sum(c.n_failed for cells in out.values() for c in cells)
    return 1 if failed else 0


def _reproduce_conflict(args) -> str | None:
    """Why the options of ``reproduce`` contradict each other (None if they do not): an option
    that would be ignored is refused rather than dropped without a word."""
    if args.list and (args.tables or args.all):
        return "--list only lists the tables: drop it to run them, or drop the table names and --all"
    if args.all and args.tables:
        return f"name tables ({' '.join(args.tables)}) or --all, not both"
    if args.plan and args.from_cache:
        return "--plan runs nothing and writes nothing; --from-cache writes the reports: choose one"
    if args.scheduler is not None and not args.scheduler.strip():
        return "--scheduler is empty: give the address of a dask scheduler (tcp://host:port), or drop it"
    if args.scheduler and args.backend != "dask":
        return "--scheduler is the address of a dask scheduler: add --backend dask, or drop --scheduler"
    if args.backend == "sequential" and args.jobs not in (-1, 1):
        return f"--backend sequential runs one cell at a time: drop --jobs {args.jobs}, or choose --backend loky"
    given = [o for o, v in (("--verify-seed", args.verify_seed), ("--verify-max-seconds", args.verify_max_seconds))
             if v is not None]
    if given and args.verify is None:
        return f"{' and '.join(given)} set how --verify N draws its cells: add --verify N, or drop them"
    return None


def _reproduce_verify(args, keys, params, cache, results) -> int:
    """``reproduce --verify N``: rerun N cached cells and compare (exit status 1 if one differs)."""
    from s3vm_bench.data_registry import DataFetchError

    from .verify import verify

    if args.plan or args.from_cache:
        print("error: --verify runs only the check; it does not combine with --plan or --from-cache",
              file=sys.stderr)
        return 2
    try:
        draw = {k: v for k, v in (("max_seconds", args.verify_max_seconds), ("seed", args.verify_seed)) if v is not None}
        checks = verify(keys, args.verify, **draw, quick=args.quick, n_splits=args.splits, datasets=args.datasets,
                        solvers=args.solvers, params=params, cache_dir=cache, results=results,
                        read_table=not args.no_table, echo=lambda m: print(m, flush=True))
    except (ValueError, TypeError, DataFetchError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0 if all(c.same for c in checks) else 1


def _reproduce_plan(args, keys, params, cache, results) -> int:
    """``reproduce --plan``: the cells cached and missing per table and data set, and the time estimate."""
    import os

    from .plan import format_plan, plan

    try:
        rows, total = plan(keys, quick=args.quick, n_splits=args.splits, datasets=args.datasets,
                           solvers=args.solvers, params=params, cache_dir=cache, results=results,
                           read_table=not args.no_table)
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    jobs = args.jobs if args.jobs and args.jobs > 0 else (os.cpu_count() or 1)
    print(format_plan(rows, total, n_cores=jobs))
    return 0


def print_report_head(path: Path) -> None:
    """Print a table report's opening part: its title, verdict, legend and the values beside the paper's
    (everything before the first ``## `` section); nothing when the report was not written."""
    if not path.is_file():
        return
    head = path.read_text(encoding="utf-8").split("\n## ", 1)[0].rstrip()
    print("\n" + head + "\n", flush=True)


def _with_hints(names, choices) -> str:
    """The unknown ``names``, each with the closest of ``choices`` (:func:`s3vm_bench.closest_name`)."""
    from s3vm_bench import closest_name

    return ", ".join(f"{n!r}" + (f" (did you mean {c!r}?)" if (c := closest_name(n, choices)) else "") for n in names)


def _figures_conflict(args) -> str | None:
    """Why the options of ``figures`` contradict each other or would be ignored (None if they do not)."""
    if args.list and (args.names or args.all or args.make_data):
        return "--list only lists the figures: drop the other arguments"
    if args.all and args.names:
        return f"--all draws every figure; drop the names ({' '.join(args.names)}) or --all"
    if args.only is not None and not args.make_data:
        return "--only goes with --make-data"
    if args.only is not None and not args.only.strip():
        return "--only is empty: give the prefix of the cell keys to run (the keys are printed by a run)"
    return None


def figures_command(args) -> int:
    """``s3vm-bench figures``: paper figures (PNG + SVG) from stored results."""
    from .figures import FIGURES, gallery_markdown, make_figures

    conflict = _figures_conflict(args)
    if conflict:
        print(f"error: {conflict}", file=sys.stderr)
        return 2
    if args.list:
        for name, spec in FIGURES.items():
            print(f"{name:16} {spec.paper:40} {spec.source}")
        return 0
    names = list(FIGURES) if args.all else args.names
    if args.make_data:
        status = figure_data_command(args)
        if status or not names:
            return status
    if not names:
        print("error: name at least one figure (see --list), or --all, or --make-data NAME", file=sys.stderr)
        return 2
    unknown = [n for n in names if n not in FIGURES]
    if unknown:
        print(f"error: unknown figure(s) {_with_hints(unknown, FIGURES)}; see `s3vm-bench figures --list`",
              file=sys.stderr)
        return 2
    from ._atomic import atomic_write

    out = work_dir(args.out).figures
    # A corrupt stored input is an error (stderr, exit status 2) but does not stop the other figures.
    results = make_figures(names, out, error=lambda m: print(m, file=sys.stderr, flush=True))
    if args.all:
        # The gallery lists every figure, so it is rewritten only when all of them were attempted.
        atomic_write(out / "README.md", gallery_markdown(results, out) + "\n")
        print(f"gallery: {out / 'README.md'}")
    made = sum(isinstance(v, list) for v in results.values())
    corrupt = sum(isinstance(v, str) and v.startswith("error: ") for v in results.values())
    print(f"{made} figure(s) made, {len(results) - made - corrupt} skipped (missing stored results)"
          + (f", {corrupt} not made (corrupt stored input: see the error lines)" if corrupt else ""))
    return 2 if corrupt else 0


def figure_data_command(args) -> int:
    """``figures --make-data``: compute stored inputs of the figures (:mod:`harness.figure_data`)."""
    from s3vm_bench.data_registry import DataFetchError

    from .figure_data import DATA, make_data

    unknown = [n for n in args.make_data if n not in DATA]
    if unknown:
        print(f"error: unknown figure data {_with_hints(unknown, DATA)}; known: {', '.join(DATA)}", file=sys.stderr)
        return 2
    try:
        for name in args.make_data:
            make_data(name, only=args.only, echo=lambda m: print(m, flush=True))
    except (ValueError, RuntimeError, DataFetchError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0



#: The data sets ``compare`` runs on when ``--datasets`` is not given (see ``harness.cli``).
COMPARE_DEFAULT_SETS = ("two_moons", "coil3")


def compare_file_name(solver: str, datasets, splits=None, params=None) -> str:
    """The CSV name of one ``compare`` run: the solver's :func:`file_stem`, then the data sets when
    they are not the default ones, the number of problems per set when given, and the parameters
    (``my.py_Class_g50c_3splits_n_rounds=5.csv``), so that runs that differ in what they measured
    do not overwrite one another's table, and the same run writes the same file again.

    Data sets and parameters are sorted (their order does not change the run). Where making the
    text a file name changed it, or the name would be long, a digest of the whole text tells apart
    runs whose names would otherwise meet.
    """
    import hashlib
    import json

    from s3vm_bench.data_registry import get_spec

    from .run import parse_params

    def own_name(name):  # an alias (pcmac) under the set's own name; compare refuses unknown ones
        try:
            return get_spec(name).name
        except (KeyError, ValueError):
            return name

    sets = sorted(own_name(d) for d in datasets)
    parsed = parse_params(params)
    parts = [] if sets == sorted(COMPARE_DEFAULT_SETS) else ["-".join(sets)]
    if splits is not None:
        parts.append(f"{int(splits)}splits")
    if parsed:
        parts.append(",".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in sorted(parsed.items())))
    text = "_".join(parts)
    safe = _file_safe(text, keep="=,")
    if safe != text or len(safe) > 100:
        safe = safe[:100] + "_" + hashlib.sha256(text.encode()).hexdigest()[:10]
    return file_stem(solver) + ("_" + safe if safe else "") + ".csv"


def _file_safe(text: str, keep: str = "") -> str:
    """``text`` with every run of characters other than letters, digits, ``_.-`` and ``keep``
    replaced by one ``_``."""
    import re

    return re.sub(rf"[^A-Za-z0-9_.{re.escape(keep)}-]+", "_", text)


def file_stem(spec: str) -> str:
    """A file name for a solver spec (``path/to/my.py:Class`` -> ``my.py_Class``)."""
    return _file_safe(Path(spec.replace("\\", "/")).name).strip("._") or "solver"

