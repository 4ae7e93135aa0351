"""Resumable parallel grid runner: (data set x solver x split x settings) cells with a result cache.

A :class:`Cell` is one run of the common protocol (``harness.protocol.run_split``): one solver
with its parameters on one split of one data set under one :class:`ProtocolSettings`. Its
:meth:`Cell.key` hashes what determines the result *by declaration* (:func:`cell_key`): the
solver's name and declared result version, the declared versions of the shared numerics, of
the protocol and of the data modules, the parameters, the settings, the data set's checksums,
the protocol and the split. A change of code that moves no result keeps every key; a change
that moves results bumps a version. The hash of the code that ran is stored in each row as
provenance (``code_sha256``, :func:`solver_source_hash`). :func:`run_cells`

* returns cached results for the cells already computed (one small JSON file per key, written
  atomically, so an interrupted run resumes and reruns only what is missing);
* runs the others in parallel with joblib (``backend="loky"``, default all cores) or on a
  dask.distributed cluster (``backend="dask"``, ``scheduler="tcp://..."``);
* records a failure (exception, or the per-cell ``time_limit`` exceeded) with its traceback in
  the returned rows -- failures are never cached, so a rerun retries them;
* shows a progress bar with cells done, failures and ETA (tqdm).

Rows are the tidy-table dictionaries of :mod:`harness.results` (``append_rows`` stores them).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import threading
import time
import traceback
import warnings
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from s3vm_bench import PACKAGES, import_name, project_name

__all__ = ["Cell", "CellTimeout", "run_cells", "cell_key", "solver_version", "declared_versions", "data_digest",
           "code_text", "solver_source_hash", "execute_cell", "store_rows", "ResultCache", "PROTOCOL_MODULES",
           "PROTOCOL_SOLVERS"]


class CellTimeout(Exception):
    """A cell ran past its time limit."""


#: Subpackages of this project whose modules can change a cell's result.
_PROJECT_PACKAGES = PACKAGES


def _module_file(name: str) -> Path | None:
    """Source file of module ``name`` (a project name such as ``"solvers.newton"``, or an outside
    module's name) without importing it (None for builtins, namespaces)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(import_name(name))
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


def _local_imports(name: str, path: Path, roots: tuple) -> set:
    """Modules under ``roots`` that module ``name`` (file ``path``) imports, by reading its AST."""
    import ast

    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(project_name(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = project_name(node.module or "")
            # ``from pkg import sub`` may name a submodule; ``from pkg import func`` names the
            # package itself: keep whichever exists.
            subs = [project_name(f"{mod}.{alias.name}") for alias in node.names]
            named = [m for m in subs if _module_file(m) is not None]
            found.update(named)
            if len(named) < len(subs) or not node.names:
                found.add(mod)
    return {m for m in found if m and m.split(".")[0] in roots}


def source_closure(module: str, roots=_PROJECT_PACKAGES) -> dict:
    """``{module: path}`` for ``module`` and every module under ``roots`` it imports, transitively.

    Module names are project names (:func:`s3vm_bench.project_name`: ``"solvers._primal"``, not
    ``"s3vm_bench.solvers._primal"``), so that keys and hashes do not depend on the install.

    Parent packages' ``__init__`` files are included only where they are imported from
    directly, so registering a new solver in ``solvers/__init__.py`` does not invalidate the
    cells of the others.
    """
    module = project_name(module)
    roots = tuple(roots) + (module.split(".")[0],)
    todo, seen = [module], {}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = _module_file(name)
        if path is None:
            continue
        seen[name] = path
        todo.extend(_local_imports(name, path, roots) - seen.keys())
    return seen


def code_text(path) -> bytes:
    """The source of ``path`` without its comments, docstrings and blank lines: what a cache key hashes.

    Editing a comment or a docstring of a shared module such as ``solvers._primal`` must not
    rerun every cell (about 29 h of compute on the 2-core machine); editing its code must. The
    docstrings (first statement of the module, of each class and function, when a string) are
    found in the AST and the comments by :mod:`tokenize`; both are cut out of the text, trailing
    blanks and blank lines dropped -- except inside multi-line strings, whose text is code -- and
    the rest kept as it is, indentation and line breaks included, so that a formatting change of
    code still counts as a change and the result does not depend on the Python version
    (``ast.unparse`` or a token stream would: f-strings are tokenized differently from 3.12).
    """
    import ast
    import io
    import tokenize

    data = Path(path).read_bytes()
    encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
    text = data.decode(encoding)
    # The lines the tokenizer and the AST count (str.splitlines would also break at \f, \x1c ...).
    lines = io.StringIO(text, newline="").readlines()

    def column(line, byte):  # AST columns count UTF-8 bytes, tokenize's count characters
        return len(lines[line - 1].encode()[:byte].decode())

    docstrings = []  # ((line, column), (line, column)) in characters, 1-based lines
    for node in ast.walk(ast.parse(text, filename=str(path))):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                docstrings.append(((first.lineno, column(first.lineno, first.col_offset)),
                                   (first.end_lineno, column(first.end_lineno, first.end_col_offset))))
    comments, strings, fstrings = [], [], []
    starts = {start for start, _ in docstrings}
    for tok in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
        if tok.type == tokenize.COMMENT:
            comments.append((tok.start, tok.end))
        elif tok.type == tokenize.STRING and tok.start not in starts:
            strings.append((tok.start[0], tok.end[0]))
        elif tok.type == getattr(tokenize, "FSTRING_START", None):  # Python >= 3.12
            fstrings.append(tok.start[0])
        elif tok.type == getattr(tokenize, "FSTRING_END", None):
            strings.append((fstrings.pop(), tok.end[0]))
    # A line break inside a string is part of its value: the line before it keeps its trailing
    # blanks, the line after it is kept even if blank.
    open_end = {i for first, last in strings for i in range(first, last)}
    inside = {i for first, last in strings for i in range(first + 1, last + 1)}
    for (l0, c0), (l1, c1) in sorted(docstrings + comments, reverse=True):  # back to front
        if lines[l0 - 1][c0:c0 + 1] not in ("#", "'", '"', "r", "R", "u", "U"):
            raise RuntimeError(f"code_text: a cut at line {l0}, column {c0} of {path} starts with "
                               f"{lines[l0 - 1][c0:c0 + 1]!r}, neither a comment nor a string")
        lines[l0 - 1] = lines[l0 - 1][:c0] + lines[l1 - 1][c1:]
        lines[l0:l1] = [None] * (l1 - l0)  # keeps the numbering of the lines after the cut
    kept = []
    for i, line in enumerate(lines, 1):
        if line is None:
            continue
        body = line.rstrip("\r\n")
        if i not in open_end:
            body = body.rstrip(" \t\f")
        if body.strip(" \t\f") or i in inside:
            kept.append(body)
    return (("" if encoding == "utf-8" else f"{encoding}\n") + "\n".join(kept)).encode("utf-8")


def _files_hash(files: dict) -> str:
    """SHA-256 over the modules' names and :func:`code_text`."""
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + code_text(files[name]) + b"\0")
    return h.hexdigest()


def _solver_files(solver: str) -> dict:
    from s3vm_bench.solvers import get_solver

    files = source_closure(get_solver(solver).__module__)
    files.update(source_closure("harness.protocol"))
    return files


@lru_cache(maxsize=None)
def solver_source_hash(solver: str) -> str:
    """SHA-256 over the code of the solver's module and of everything a cell run depends on.

    That is the solver's module, the project modules it imports (transitively: the shared
    losses, kernels, primal solvers and balance search) and those of ``harness.protocol``, which
    runs the cell and recomputes its objective; comments and docstrings do not count
    (:func:`code_text`). It is provenance, stored in each row (``code_sha256``), and the
    version of an outside solver that declares none (:func:`solver_version`); it is not part
    of a registered solver's cell key.
    """
    return _files_hash(_solver_files(solver))


#: The modules that run a cell of each protocol besides the solver (their declared
#: ``RESULT_VERSION`` enters the key; see :func:`cell_key`).
PROTOCOL_MODULES = {
    "reference": ("harness.protocol", "harness.reference_sets"),
    "icml2006": ("harness.protocol", "harness.icml2006", "data_registry.catalog", "data_registry.splits"),
    "jmlr2008-pairwise": ("harness.protocol", "harness.pairwise", "data_registry.catalog", "data_registry.splits"),
    "icml2013-table2": ("harness.icml2013", "data_registry.catalog", "data_registry.splits"),
}
_DEFAULT_PROTOCOL_MODULES = ("harness.protocol", "data_registry.catalog", "data_registry.splits")
#: Registered solvers a protocol runs besides the cell's own (ICML 2013 Table 2: one cell runs the
#: S3VM-path, S3VM-light and CCCP): their :func:`solver_version` enters the key too (:func:`cell_key`).
PROTOCOL_SOLVERS = {"icml2013-table2": ("s3vm_light", "cccp")}


@lru_cache(maxsize=None)
def declared_versions(modules: tuple) -> dict:
    """``{module: RESULT_VERSION}`` of ``modules`` and the project modules they import, transitively,
    for those that declare one (the shared numerics, the protocol, the data loaders and splits)."""
    import importlib

    files = {}
    for module in modules:
        files.update(source_closure(module))
    out = {}
    for name in sorted(files):
        version = getattr(importlib.import_module(import_name(name)), "RESULT_VERSION", None)
        if version is not None:
            out[name] = version
    return out


def _is_project_module(module: str) -> bool:
    return project_name(module) != module


@lru_cache(maxsize=None)
def solver_version(solver: str) -> dict:
    """What a cell key takes of the solver's code: its declared result version and those of the
    shared numerics it imports.

    A project solver declares ``result_version`` (a class attribute, :class:`solvers._base.BaseS3VM`
    has 1), bumped by whoever changes its results; a shared module declares ``RESULT_VERSION``.
    A solver outside the project counts as declared only where its own class body sets
    ``result_version``; otherwise its key carries the hash of its code
    (:func:`solver_source_hash`), so that editing it reruns its cells.
    """
    from s3vm_bench.solvers import get_solver

    cls = get_solver(solver)
    if _is_project_module(cls.__module__) or "result_version" in vars(cls):
        version = getattr(cls, "result_version", None)
    else:
        version = None
    if version is None:
        return {"source_sha256": solver_source_hash(solver)}
    return {"version": version, "numerics": declared_versions((cls.__module__,))}


@lru_cache(maxsize=None)
def data_digest(dataset: str) -> str:
    """SHA-256 over the registered checksums of the files data set ``dataset`` is read from
    (``data_registry/registry.txt``); empty for a generated data set or a name that is not a
    catalog entry (a reference set, whose problems the versions of its modules determine)."""
    from s3vm_bench.data_registry import get_spec, registry

    try:
        spec = get_spec(dataset)
    except (ValueError, TypeError):
        return ""
    entries = registry()
    h = hashlib.sha256()
    for name in sorted(spec.files):
        h.update(name.encode() + b"\0" + str(entries.get(name, ("", None))[0]).encode() + b"\0")
    return h.hexdigest() if spec.files else ""


#: Solver parameters the protocol sets itself for every solver (JMLR 2008 Sec. 5.2: one kernel,
#: one C and C*, the balance target r): passed as a solver's own parameter they would make the
#: solver train on values other than those the protocol's objective and the stored row use.
PROTOCOL_PARAMS = ("kernel", "sigma", "C", "C_star", "r")


def check_solver_params(params) -> dict:
    """``params`` as a dict; ValueError if it sets one of :data:`PROTOCOL_PARAMS`."""
    params = dict(params or {})
    shared = [k for k in PROTOCOL_PARAMS if k in params]
    if shared:
        raise ValueError(f"solver parameter(s) {', '.join(shared)} are the protocol's, the same for every solver "
                         "(the objective and the stored row use them): set them as protocol settings (`s3vm-bench run "
                         "--kernel/--sigma/--C/--C-star/--r-mode`, a spec's settings), not as solver parameters")
    return params


@dataclass(frozen=True)
class Cell:
    """One protocol run. ``settings`` holds :class:`ProtocolSettings` fields as a plain dict."""

    experiment: str
    dataset: str
    solver: str
    split: int
    protocol: str = "jmlr2008"
    n_splits: int = 10
    params: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    #: Extra arguments of the split protocol (``data_registry.make_splits``), e.g. SIGIR 2006's
    #: ``n_labeled``; empty for the protocols whose sizes come from the paper's data set table.
    split_kwargs: dict = field(default_factory=dict)

    def __post_init__(self):
        check_solver_params(self.params)

    def __hash__(self):
        return hash(self.key())

    def key(self) -> str:
        return cell_key(self)


def cell_key(cell: Cell) -> str:
    """Hash of everything that determines the cell's result, by declaration.

    The key covers the solver's name and :func:`solver_version` (its declared result version
    and those of the shared numerics it imports), the parameters, the protocol settings, the
    data set and :func:`data_digest`, the protocol and the declared versions of the modules
    that run it (:data:`PROTOCOL_MODULES`) and of the other solvers it runs
    (:data:`PROTOCOL_SOLVERS`, for the protocols that have any), the split index, the number of
    splits and the split arguments. The code itself is not part of it: a refactor that moves no result keeps
    every key, and a change that moves results bumps a declared version.
    """
    from .pairwise import parent_name

    dataset = parent_name(cell.dataset) if cell.protocol == "jmlr2008-pairwise" else cell.dataset
    payload = {"solver": cell.solver, "solver_version": solver_version(cell.solver), "params": cell.params,
               "settings": cell.settings, "dataset": cell.dataset, "data_sha256": data_digest(dataset),
               "protocol": cell.protocol,
               "protocol_versions": declared_versions(PROTOCOL_MODULES.get(cell.protocol, _DEFAULT_PROTOCOL_MODULES)),
               "split": cell.split, "n_splits": cell.n_splits, "split_kwargs": cell.split_kwargs}
    if cell.protocol in PROTOCOL_SOLVERS:  # only there: every other key stays what it was
        payload["protocol_solvers"] = {s: solver_version(s) for s in PROTOCOL_SOLVERS[cell.protocol]}
    blob = json.dumps(payload, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:32]


@contextmanager
def _alarm(seconds):
    """Raise CellTimeout after ``seconds`` (only in a process's main thread, where signals work).

    Yields whether the alarm is armed: elsewhere (a threaded dask worker) nothing can interrupt
    the solver, and the caller checks the limit once the cell has run.
    """
    armed = bool(seconds) and threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    if not armed:
        yield False
        return

    def handler(signum, frame):
        raise CellTimeout(f"cell exceeded its time limit of {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))
    try:
        yield True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, old)


def execute_cell(cell: Cell, time_limit: float | None = None) -> dict:
    """Run one cell (in whatever process it lands); always returns a row, never raises.

    The cell's protocol (:func:`harness.protocols.get_protocol`) computes the result fields;
    this function adds the cell's identity and status, enforces ``time_limit`` (a timeout and
    any exception become a ``"timeout"`` / ``"failed"`` row with the error, keeping the fields
    the protocol had already determined) and stamps the row with its provenance (CPU seconds,
    code hash, package versions, commit, time).
    """
    from .protocols import RESULT_FIELDS, get_protocol

    row = {"experiment": cell.experiment, "dataset": cell.dataset, "protocol": cell.protocol,
           "split": cell.split, "solver": cell.solver, "params": dict(cell.params)}
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        with _alarm(time_limit) as armed:
            fields = get_protocol(cell.protocol).run(cell, known=row)
        elapsed = time.perf_counter() - t0
        if time_limit and not armed and elapsed > time_limit:
            # Nothing could interrupt the solver (no alarm outside a main thread): the limit still
            # holds, so a cell that ran past it is a timeout, as it would be anywhere else.
            raise CellTimeout(f"cell ran {elapsed:.1f} s, past its time limit of {time_limit} s (in a thread, "
                              "where the limit cannot interrupt the solver: it was checked at the end)")
    except CellTimeout as exc:
        row |= {"status": "timeout", "error": str(exc), "fit_seconds": time.perf_counter() - t0}
    except Exception as exc:  # recorded with its traceback; the other cells are unaffected
        row |= {"status": "failed", "error": "".join(traceback.format_exception(exc))[-4000:],
                "fit_seconds": time.perf_counter() - t0}
    else:
        # The common fields, the status, then the protocol's own (e.g. ICML 2006's validation error).
        row |= ({k: fields[k] for k in RESULT_FIELDS} | {"status": "done"}
                | {k: v for k, v in fields.items() if k not in RESULT_FIELDS})
    # Stamped where the cell runs, so a row read back from the cache keeps the code it came from.
    from .results import environment_info

    versions, commit = environment_info()
    # CPU seconds of this process for the whole cell (the solver's fits and the protocol's
    # objective): on a shared machine the stable measure of its cost, which --plan estimates from.
    row["cpu_seconds"] = time.process_time() - c0
    try:
        row["code_sha256"] = solver_source_hash(cell.solver)
    except Exception:  # an unknown solver is already a failed row; provenance is then unknown
        row["code_sha256"] = None
    return row | {"versions": versions, "git_commit": commit,
                  "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def _execute_pair(cell, time_limit, env):
    # Reused loky workers keep the environment they started with: pass the data location.
    os.environ.update(env)
    from .isolate import wall_guard

    try:  # imports first: a fresh worker's import time is not the cell's
        from s3vm_bench.solvers import get_solver

        from .protocols import get_protocol

        get_protocol(cell.protocol), get_solver(cell.solver)
    except Exception:  # reported by execute_cell, as a failed row
        pass
    with wall_guard(time_limit):  # a cell stuck in compiled code ends its worker (see run_cells)
        return cell, execute_cell(cell, time_limit)


def check_row(row) -> str | None:
    """Why ``row`` is not a valid successful result row (None if it is).

    A successful row is a dict with ``status == "done"``, the cell's identity (``dataset``,
    ``solver``, ``protocol`` as text, ``split`` an integer), ``n_binary`` a non-negative integer,
    ``unlabeled_error`` (and ``test_error``, ``validation_error`` where present) a fraction in
    [0, 1], ``objective`` a finite number or missing (None or NaN: the 5-fold CV reference of JMLR
    2008 Table 8 has none; a solver's NaN outputs fail the cell before a row is made, see
    :func:`harness.protocol.run_split`) and ``balance_exact`` a bool.
    """
    if not isinstance(row, dict):
        return f"a {type(row).__name__}, not a row"
    if row.get("status") != "done":
        return f"status {row.get('status')!r}, not 'done'"
    for name in ("dataset", "solver", "protocol"):
        if not isinstance(row.get(name), str):
            return f"no {name}"
    for name in ("split", "n_binary"):
        value = row.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f"{name} {value!r} is not a non-negative integer"
    for name in ("unlabeled_error", "test_error", "validation_error"):
        value = row.get(name)
        if value is None and name != "unlabeled_error":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            return f"{name} {value!r} is not a fraction in [0, 1]"
    objective = row.get("objective")
    if objective is None or (isinstance(objective, float) and math.isnan(objective)):
        pass  # a solver without a transductive objective (the 5-fold CV reference)
    elif isinstance(objective, bool) or not isinstance(objective, (int, float)):
        return f"objective {objective!r} is not a number"
    elif not math.isfinite(objective):
        return f"objective {objective!r} is not finite"
    if not isinstance(row.get("balance_exact"), bool):
        return f"balance_exact {row.get('balance_exact')!r} is not a bool"
    return None


def _is_row_of(row: dict, cell: Cell) -> bool:
    return (row.get("dataset"), row.get("solver"), row.get("protocol"), row.get("split"),
            row.get("params")) == (cell.dataset, cell.solver, cell.protocol, cell.split, dict(cell.params))


class ResultCache:
    """One JSON file per cell key under ``directory``; writes are atomic (temp file + rename).

    Parameters
    ----------
    directory : path
        The cache folder (created on the first write).
    table : path or sequence of paths, optional
        Results tables (:mod:`harness.results`, e.g. the work folder's and the shipped
        ``reports/runs/``) whose successful rows answer for the cells missing from the
        folder: a row whose ``cell_key`` is the cell's key was computed under the same declared
        versions, parameters, settings and split. A table that does not exist (yet) is skipped;
        where two hold the same key, the first one named wins. The cache folder is not versioned
        and a fresh clone starts without it; the shipped table is, so the rows of the committed
        run are not recomputed.
    """

    def __init__(self, directory, table=None):
        self.directory = Path(directory)
        tables = [] if table is None else [table] if isinstance(table, (str, os.PathLike)) else list(table)
        self.tables = list(dict.fromkeys(Path(t) for t in tables))
        self.table = self.tables[0] if self.tables else None
        self._table_rows = None

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        """The row cached under ``key``, or None when there is none or it is not a valid row.

        An entry that cannot be read or fails :func:`check_row` is reported (a ``RuntimeWarning``
        naming its path and what is wrong) and treated as missing, so its cell is recomputed and
        the entry overwritten; it is never returned.
        """
        p = self._path(key)
        if not p.exists():
            return None
        try:
            row = json.loads(p.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            reason = f"unreadable ({exc})"
        else:
            reason = check_row(row)
            if reason is None:
                return row
        warnings.warn(f"ignoring the cache entry {p}: {reason}; its cell will be recomputed", RuntimeWarning,
                      stacklevel=2)
        return None

    def lookup(self, cell: Cell, key: str | None = None, *, migrate: bool = True) -> dict | None:
        """The cached row of ``cell`` (``key``: its :meth:`Cell.key`, if already computed), or None.

        A cell missing from the folder is looked up in :attr:`table`; with ``migrate`` a row
        found there is copied into the folder.
        """
        key = key or cell.key()
        hit = self.get(key)
        if hit is not None and not _is_row_of(hit, cell):
            warnings.warn(f"ignoring the cache entry {self._path(key)}: it is not a row of {cell.dataset} / "
                          f"{cell.solver} / split {cell.split}; its cell will be recomputed", RuntimeWarning,
                          stacklevel=2)
            hit = None
        if hit is None:
            hit = self.from_table(key, cell)
            if hit is not None and migrate:
                try:
                    self.put(key, hit)
                except OSError:
                    pass  # a read-only cache: the row is still returned
        return hit

    def table_records(self) -> dict:
        """``{cell_key: record}`` of the successful rows of :attr:`tables` (read once; empty without one)."""
        if self._table_rows is None:
            from .results import read_results_text

            records = {}
            for path in reversed(self.tables):  # the first named wins
                if not path.exists():
                    continue
                try:
                    table = read_results_text(path)
                    done = table[table["status"] == "done"]
                    records.update(zip(done["cell_key"], done.to_dict("records")))
                except Exception as exc:
                    raise ValueError(f"cannot read the results table {path} ({exc!r}); restore it "
                                     "(in a source checkout: git checkout -- reports/runs), delete it or "
                                     "name another one") from exc
            self._table_rows = records
        return self._table_rows

    def from_table(self, key: str, cell: Cell | None = None) -> dict | None:
        """The successful row of :attr:`table` stored under ``key``, as a cache row (or None).

        With ``cell``, a row that is not of that cell (data set, solver, protocol, split,
        parameters) is refused although its key matches: a guard against a mis-keyed table.
        """
        record = self.table_records().get(key)
        if record is None:
            return None
        from .results import row_from_table

        row = row_from_table(record)
        reason = check_row(row)
        if reason is not None:
            warnings.warn(f"ignoring the row of {key} in the results table: {reason}; its cell will be recomputed",
                          RuntimeWarning, stacklevel=2)
            return None
        if cell is not None and not _is_row_of(row, cell):
            return None
        return row

    def put(self, key: str, row: dict) -> None:
        if row.get("status") != "done":
            raise ValueError("only successful cells are cached")
        from ._atomic import atomic_write

        atomic_write(self._path(key), json.dumps(row, sort_keys=True, default=float))


def _iter_results(todo, n_jobs, backend, scheduler, time_limit):
    """Yield (cell, row) as cells finish, in completion order."""
    env = {k: v for k, v in os.environ.items() if k.startswith("S3VM_DATA")}
    if backend == "sequential" or (backend == "loky" and n_jobs == 1 and not time_limit):
        from threadpoolctl import threadpool_limits

        # One BLAS thread per cell, as joblib gives each loky worker when n_jobs = cores: the
        # parallelism is across cells, fit times do not depend on the backend, and BLAS threads
        # spinning against other processes on a shared machine made cells 16-50x slower.
        # "sequential" runs the cells in this process (for debugging: no isolation, the time
        # limit is the alarm of execute_cell only).
        for cell in todo:
            with threadpool_limits(limits=1):
                row = execute_cell(cell, time_limit)
            yield cell, row
    elif backend == "loky" and n_jobs == 1:
        from .isolate import run_isolated

        # One cell at a time with a time limit: each in a process of its own (harness.isolate), so
        # that the limit also stops a solver stuck in compiled code and a cell that kills its
        # process is recorded as failed while the run goes on.
        for cell in todo:
            yield cell, run_isolated(cell, time_limit, env)
    elif backend == "loky":
        from joblib import Parallel, delayed

        from joblib.externals.loky.process_executor import TerminatedWorkerError

        from .isolate import run_isolated

        par = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
        finished = set()
        try:
            for cell, row in par(delayed(_execute_pair)(c, time_limit, env) for c in todo):
                finished.add(cell.key())
                yield cell, row
        except TerminatedWorkerError as exc:
            # A worker died (a crash, the out-of-memory killer, or the watchdog of wall_guard on a
            # cell stuck in compiled code): which of its cells did it is not known, so every cell
            # that has not returned runs alone in a process of its own, where a death is that
            # cell's and is recorded as its row.
            rest = [c for c in todo if c.key() not in finished]
            warnings.warn(f"a worker process died ({exc.__class__.__name__}); the {len(rest)} unfinished cell(s) "
                          "run one by one in processes of their own", RuntimeWarning, stacklevel=2)
            for cell in rest:
                yield cell, run_isolated(cell, time_limit, env)
    elif backend == "dask":
        try:
            from distributed import Client, LocalCluster, as_completed
        except ImportError as exc:
            raise ImportError("backend='dask' needs dask.distributed: pip install 's3vm-bench[dask]'") from exc
        cluster = None
        if scheduler is None:  # a cluster of this machine: n_jobs worker processes, one thread each
            cluster = LocalCluster(n_workers=n_jobs if n_jobs > 0 else (os.cpu_count() or 1), threads_per_worker=1,
                                   processes=True, dashboard_address=None, host="127.0.0.1")
        client = scheduler if isinstance(scheduler, Client) else Client(cluster or scheduler)
        # Workers started elsewhere do not have this process's data location: it goes with each cell.
        try:
            futures = {client.submit(_execute_pair, c, time_limit, env, pure=False): c for c in todo}
            for fut in as_completed(futures):
                try:
                    yield fut.result()
                except Exception as exc:  # e.g. KilledWorker: the cell's workers died; the run goes on
                    from .isolate import death_row

                    yield futures[fut], death_row(futures[fut], "failed", f"dask: {type(exc).__name__}: {exc}", 0.0)
        finally:
            if not isinstance(scheduler, Client):
                client.close()
            if cluster is not None:
                cluster.close()
    else:
        raise ValueError(f"backend must be 'loky', 'dask' or 'sequential', got {backend!r}")


def run_cells(cells, cache_dir, *, n_jobs: int = -1, backend: str = "loky", scheduler=None,
              time_limit: float | None = None, progress: bool = True, table=None) -> list[dict]:
    """Run the cells not in the cache; return one row per cell, in the order of ``cells``.

    Parameters
    ----------
    cells : iterable of Cell
    cache_dir : path or ResultCache
        Result cache (created if missing), or an open one (its table already read).
    n_jobs : int
        joblib workers (-1: all cores).
    backend : {"loky", "dask", "sequential"}
        ``"loky"`` with ``n_jobs == 1`` and a ``time_limit`` runs each cell in a child process of
        its own (:func:`harness.isolate.run_isolated`: a hard limit, a death recorded as the
        cell's); ``"sequential"`` runs every cell in this process (no isolation: for debugging).
    scheduler : str or distributed.Client, optional
        The dask scheduler address (or a connected client) for ``backend="dask"``; without one, a
        ``distributed.LocalCluster`` of ``n_jobs`` worker processes is started for the run. The
        data location (the ``S3VM_DATA*`` environment variables) is sent with every cell.
    time_limit : float, optional
        Seconds per cell; a cell past it is stopped and reported with status ``timeout``
        (enforced by an alarm in the main thread of a worker process: loky and sequential; in a
        threaded dask worker nothing can interrupt the solver, so the cell runs to its end and is
        reported as ``timeout`` if it took longer, its error saying so).
    progress : bool
        tqdm progress bar (cells done, failures, ETA).
    table : path, optional
        Results table whose rows count as cached (:class:`ResultCache`; ignored when
        ``cache_dir`` is a ResultCache).

    Returns
    -------
    list of dict
        Rows for :func:`harness.results.append_rows`; ``cached`` is True for rows read from the cache.
    """
    cells = list(cells)
    if not all(isinstance(c, Cell) for c in cells):
        raise TypeError("cells must be harness.grid.Cell instances")
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time_limit must be > 0 seconds, got {time_limit!r}")
    cache = cache_dir if isinstance(cache_dir, ResultCache) else ResultCache(cache_dir, table=table)
    keys = [c.key() for c in cells]
    rows: dict[str, dict] = {}
    for cell, key in zip(cells, keys):
        hit = cache.lookup(cell, key)
        if hit is not None:
            rows[key] = hit | {"cached": True}
    todo, seen = [], set()
    for c, key in zip(cells, keys):
        if key not in rows and key not in seen:
            todo.append(c)
            seen.add(key)
    bar = None
    if progress and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="cells", unit="cell")
    failures = 0
    try:
        for cell, row in _iter_results(todo, n_jobs, backend, scheduler, time_limit):
            key = cell.key()
            if row.get("status") == "done":
                cache.put(key, row)
            else:
                failures += 1
            rows[key] = row | {"cached": False}
            if bar is not None:
                bar.update(1)
                bar.set_postfix(failed=failures)
    finally:
        if bar is not None:
            bar.close()
    # A cell shared by two experiments (same key) is computed once and reported under each.
    return [dict(rows[k]) | {"cell_key": k, "experiment": c.experiment} for c, k in zip(cells, keys)]


def cells_as_dicts(cells) -> list[dict]:
    """Plain dictionaries of cells (for logging or a spec dump)."""
    return [asdict(c) for c in cells]


def store_rows(path, rows) -> None:
    """Store the rows in the tidy results table, replacing earlier rows of the same cells and experiments.

    See :func:`harness.results.replace_rows`.
    """
    from .results import COLUMNS, replace_rows

    replace_rows(path, [{k: v for k, v in r.items() if k in COLUMNS} for r in rows])
