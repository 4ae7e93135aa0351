"""Cells of the grid and their keys: what determines a cell's result, by declaration.

A :class:`Cell` is one run of the common protocol (``harness.protocol.run_split``): one solver
with its parameters on one split of one data set under one :class:`ProtocolSettings`. Its
:meth:`Cell.key` hashes what determines the result *by declaration* (:func:`cell_key`): the
solver's name and declared result version, the declared versions of the shared numerics, of
the protocol and of the data modules, the parameters, the settings, the data set's checksums,
the protocol and the split. A change of code that moves no result keeps every key; a change
that moves results bumps a version. The hash of the code that ran is stored in each row as
provenance (``code_sha256``, :func:`solver_source_hash`).

The runner (:mod:`harness.grid`) re-exports every public name of this module.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from s3vm_bench import PACKAGES, import_name, project_name

from .protocol import PROTOCOL_PARAMS, check_solver_params

__all__ = ["Cell", "cell_key", "solver_version", "declared_versions", "data_digest", "source_closure", "code_text",
           "solver_source_hash", "check_solver_params", "PROTOCOL_MODULES", "PROTOCOL_SOLVERS", "PROTOCOL_PARAMS"]


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


@lru_cache(maxsize=None)
def _import_statements(path: str, mtime_ns: int, size: int) -> tuple:
    """``(level, module, names)`` of every import statement of the file at ``path``, from its AST
    (``level`` 0 and ``names`` None for a plain ``import module``); cached per version of the
    file (its modification time and size)."""
    import ast

    out = []
    for node in ast.walk(ast.parse(Path(path).read_bytes(), filename=path)):
        if isinstance(node, ast.Import):
            out.extend((0, alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.append((node.level, node.module, tuple(alias.name for alias in node.names)))
    return tuple(out)


def _local_imports(name: str, path: Path, roots: tuple) -> set:
    """Modules under ``roots`` that module ``name`` (file ``path``) imports, by reading its AST."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    stat = path.stat()
    for level, module, names in _import_statements(str(path), stat.st_mtime_ns, stat.st_size):
        if names is None:
            found.add(project_name(module))
        else:
            if level:
                base = package.split(".")
                base = base[:len(base) - level + 1]
                mod = ".".join(base + ([module] if module else []))
            else:
                mod = project_name(module or "")
            # ``from pkg import sub`` may name a submodule; ``from pkg import func`` names the
            # package itself: keep whichever exists.
            subs = [project_name(f"{mod}.{alias}") for alias in names]
            named = [m for m in subs if _module_file(m) is not None]
            found.update(named)
            if len(named) < len(subs) or not names:
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
    rerun every cell; editing its code must. The docstrings (first statement of the module, of
    each class and function, when a string) are found in the AST and the comments by
    :mod:`tokenize`; both are cut out of the text, trailing blanks and blank lines dropped --
    except inside multi-line strings, whose text is code -- and the rest kept as it is,
    indentation and line breaks included, so that a formatting change of
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
