"""The files of the stored reference results: branch-and-bound optima and certified lower bounds.

``harness/optima/<set>.json`` holds the optima of a reference set (:mod:`harness.optima`, computed
by :mod:`solvers.bb`, NIPS 2006 Alg. 1) and ``harness/optima/bounds-<data set>.json`` the certified
lower bounds of a data set too large for branch and bound (:mod:`harness.optima_bounds`, computed by
:mod:`harness.certify`). Both are read from the work folder's ``optima/`` once it has its own copy,
from the shipped folder until then, and written atomically, entries in split/class order. An entry
is keyed by ``split<i>/class<k>`` and carries the digest of its problem: :func:`lookup` ignores one
whose digest no longer matches. Labelings are stored as strings of ``+`` and ``-``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from s3vm_bench import nearest_existing

from ._atomic import atomic_write
from .paths import work_dir
from .reference_sets import BinaryProblem, ReferenceSet, get_reference_set

__all__ = ["OPTIMA_DIR", "BOUND_SETS", "check_only", "labels_from_str", "labels_to_str", "load_bounds", "load_store",
           "lookup", "lookup_bound", "save_bounds", "save_store", "stored_file"]

#: The certified optima shipped with the package (read only, except from a source checkout with ``--out .``).
OPTIMA_DIR = Path(__file__).with_name("optima")
FORMAT = 1


# ------------------------------------------------------------------------------------ optima
def _path(file_name: str, directory=None) -> Path:
    """``file_name`` in ``directory``; by default in the work folder's ``optima/`` once it has that
    file (:attr:`harness.paths.WorkDir.optima`), the shipped one (:data:`OPTIMA_DIR`) until then.

    Raises
    ------
    ValueError
        ``directory`` is a file, or the path to read is a folder.
    """
    if directory is None:
        own = work_dir().optima / file_name
        if own.exists() and not own.is_file():  # it would be passed over when read and fail when written
            raise ValueError(f"{own} is a folder, not a stored reference file: move it away (the shipped store is "
                             "read until the work folder has its own file)")
        return own if own.is_file() else OPTIMA_DIR / file_name
    folder = _store_folder(directory)
    if (folder / file_name).exists() and not (folder / file_name).is_file():
        raise ValueError(f"{folder / file_name} is a folder, not a stored reference file: move it away")
    return folder / file_name


def _store_folder(directory) -> Path:
    """``directory`` as a Path; ValueError if it, or the nearest of its parents that exists, is a
    file (every store in it would read as absent and fail when written)."""
    folder = Path(directory)
    blocker = nearest_existing(folder)
    if not blocker.is_dir():
        raise ValueError(f"{folder} cannot hold stored reference files: {blocker} is a file, not a folder")
    return folder


def _save(store: dict, file_name: str, directory=None) -> Path:
    """Write ``store`` atomically (a temporary file renamed over the old one: never half-written),
    entries in split/class order, by default into the work folder's ``optima/`` (the shipped files
    are not written to, unless the work folder is the source checkout itself)."""
    path = (work_dir().optima if directory is None else _store_folder(directory)) / file_name
    store = dict(store, entries=dict(sorted(store["entries"].items(), key=lambda kv: _sort_key(kv[0]))))
    atomic_write(path, json.dumps(store, indent=1) + "\n")
    return path


def stored_file(name: str, bounds: bool = False) -> Path:
    """The file :func:`load_store` (or, with ``bounds``, :func:`load_bounds`) reads for ``name``
    now: the work folder's copy if it has one, else the shipped one (which may not exist yet)."""
    return _path(f"bounds-{name}.json" if bounds else f"{name}.json")


def load_store(set_name: str, directory=None) -> dict:
    """The stored reference file of a set (an empty one if none exists yet); by default the work
    folder's copy if it has one, else the shipped one."""
    ref = get_reference_set(set_name)
    path = _path(f"{set_name}.json", directory)
    if not path.is_file():
        s = ref.settings
        return {"format": FORMAT, "set": set_name, "description": ref.description, "paper": ref.paper,
                "settings": {"kernel": s.kernel, "sigma": s.sigma, "C": s.C, "C_star": s.c_star, "r": "exact"},
                "data": _data_checksums(ref), "entries": {}}
    return _read(path, FORMAT, _OPTIMUM_FIELDS)


#: Kinds of stored fields: (what the message calls it, the JSON-decoded types it may have).
_NUMBER, _NUMBER_OR_NULL = ("a number", (int, float)), ("a number or null", (int, float, type(None)))
_TEXT, _COUNT, _FLAG = ("a string", (str,)), ("an integer", (int,)), ("a boolean", (bool,))
#: The fields every stored optimum is read by (``compare``, ``optima show``, the figures) and their kinds.
_OPTIMUM_FIELDS = {"digest": _TEXT, "labels": _TEXT, "u": _COUNT, "objective": _NUMBER, "lower_bound": _NUMBER,
                   "gap": _NUMBER, "status": _TEXT, "certified": _FLAG, "nodes": _COUNT, "seconds": _NUMBER,
                   "unlabeled_error": _NUMBER, "objective_true_labels": _NUMBER}
#: The same for a stored certified lower bound (``gap`` and ``best_objective`` may be null: no solver value yet).
_BOUND_FIELDS = {"digest": _TEXT, "lower_bound": _NUMBER, "best_objective": _NUMBER_OR_NULL, "gap": _NUMBER_OR_NULL,
                 "seconds": _NUMBER, "certified_optimal": _FLAG, "best_solver": _TEXT}


def _entry_problem(key: str, entry, fields: dict) -> str | None:
    """Why the stored entry ``key`` cannot be read -- not an object, a field of ``fields``
    (``name -> (kind, types)``) missing or of another kind, a labeling that is not ``u`` signs --
    or None."""
    if not isinstance(entry, dict):
        return f"its entry {key!r} is not a JSON object"
    for name, (kind, types) in fields.items():
        if name not in entry:
            return f"its entry {key!r} has no field {name!r}"
        value = entry[name]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            return f"the field {name!r} of its entry {key!r} is {json.dumps(value)[:40]}, not {kind}"
    labels = entry.get("labels")
    if isinstance(labels, str) and (set(labels) - {"+", "-"} or len(labels) != entry["u"]):
        return f"the labeling of its entry {key!r} is not {entry['u']} signs + and -"
    return None


def _read(path: Path, fmt: int, fields: dict) -> dict:
    """The store in ``path``, each of whose entries has the ``fields`` (:func:`_entry_problem`).

    Raises
    ------
    ValueError
        If the file is not a store (empty, cut short, not JSON, not an object with an
        ``entries`` object, an entry without a field its readers need or with one of another
        kind; the message names the file, the entry and how to recover it, :func:`_unreadable`),
        or a store of another format than ``fmt``.
    """
    try:
        store = json.loads(path.read_text("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _unreadable(path, "empty" if not path.stat().st_size else f"not valid JSON: {exc}") from None
    if not isinstance(store, dict) or not isinstance(store.get("entries"), dict):
        raise _unreadable(path, "not a JSON object with an \"entries\" object")
    if store.get("format") != fmt:
        raise ValueError(f"{path} has format {store.get('format')!r}; this version reads format {fmt}")
    for key, entry in store["entries"].items():
        problem = _entry_problem(key, entry, fields)
        if problem:
            raise _unreadable(path, problem)
    return store


def _unreadable(path: Path, why: str) -> ValueError:
    """The error for a store file that cannot be read: it names ``path``, says ``why``, and says to
    restore the file (from the shipped copy, when there is one and it is another file) or to delete
    it. Nothing is written over such a file: every build reads its store first."""
    shipped = OPTIMA_DIR / path.name
    if shipped.is_file() and not (path.is_file() and path.resolve() == shipped.resolve()):
        fix = (f"restore it (copy the shipped {shipped} over it) or delete it (the shipped store is then read; "
               "the entries computed into this copy are lost)")
    elif shipped.is_file():
        fix = "it is the shipped store: restore it from the package's source, or reinstall the package"
    else:
        fix = "restore it from a backup or delete it (the entries it held are then computed again)"
    return ValueError(f"the stored reference file {path} cannot be read ({why}): {fix}")


def save_store(store: dict, directory=None) -> Path:
    """Write a store of optima (:func:`_save`) as ``<set>.json``."""
    return _save(store, f"{store['set']}.json", directory)


def check_only(set_name: str, only, n: int, labels, show: str = "optima show") -> None:
    """Raise ``ValueError`` unless every key of ``only`` names a problem among the first ``n``.

    Parameters
    ----------
    set_name : str
        The reference set or bound set the keys are of.
    only : iterable of str or None
        Entry keys ``split<i>/class<k>``; None checks nothing.
    n : int
        The splits (or realizations) asked for: ``i`` must be in ``0..n-1``.
    labels : iterable of int
        The classes of the set's binary problems (``k``), e.g. ``[1]`` for a two-class set.
    show : str
        The ``s3vm-bench`` command that lists the stored keys, named in the message.

    The message lists the unknown keys and the first and last of the real ones.
    """
    if only is None:
        return
    keys = [f"split{i}/class{c}" for i in range(n) for c in sorted(int(c) for c in labels)]
    bad = sorted(set(only) - set(keys))
    if bad:
        real = keys[0] if len(keys) == 1 else f"{keys[0]} .. {keys[-1]}"
        raise ValueError(f"{set_name} has no problem {', '.join(bad)} among its first {n} split(s): its keys are "
                         f"{real} (see `s3vm-bench {show} {set_name}`)")


def _sort_key(key: str):
    """``(split, class)`` of an entry key ``split<i>/class<k>``, as integers."""
    split, cls = key.split("/")
    return int(split[5:]), int(cls[5:])


def _data_checksums(ref: ReferenceSet) -> dict:
    """The registry checksums of a reference set's data files (or its generator, when synthetic)."""
    if not ref.files:
        return {"synthetic": ref.synthetic}
    from s3vm_bench.data_registry import registry

    reg = registry()
    return {f: reg[f][0] for f in ref.files}


def lookup(problem: BinaryProblem, store: dict, what: str = "optimum", rebuild: str = "optima build") -> dict | None:
    """The stored entry of ``problem``, or None if missing or computed for a different problem
    (a warning names the ``what`` and the ``s3vm-bench`` command that rebuilds it)."""
    entry = store["entries"].get(problem.key)
    if entry is None:
        return None
    if entry["digest"] != problem.digest():
        warnings.warn(f"stored {what} {store['set']}/{problem.key} was computed for different data or settings "
                      f"(digest mismatch); it is ignored -- rebuild it with `s3vm-bench {rebuild}`", stacklevel=3)
        return None
    return entry


# ------------------------------------------------------------------------------------ provenance and labelings
def _closure_sha(module: str) -> str:
    """First 16 hex digits of the sha256 over the code of ``module`` and of every project module it
    imports, transitively (:func:`harness.cell_keys.source_closure`; comments and docstrings do not
    count): which code ran a search, however the search is divided into modules."""
    from .cell_keys import _files_hash, source_closure

    return _files_hash(source_closure(module))[:16]


def labels_to_str(labels) -> str:
    """A +-1 labeling as the string stored in an entry (``"+"`` for +1, ``"-"`` for -1)."""
    return "".join("+" if v > 0 else "-" for v in labels)


def labels_from_str(text: str) -> np.ndarray:
    """The +-1 labeling of a stored string (:func:`labels_to_str`)."""
    return np.array([1.0 if ch == "+" else -1.0 for ch in text])


def _frontier_to_json(frontier) -> list:
    """A search's frontier as ``[[partial labeling ("+", "-", "." = free), bound], ...]``."""
    return [["".join("+" if v > 0 else "-" if v < 0 else "." for v in part), float(bound)]
            for part, bound in frontier]


def _frontier_from_json(items) -> list:
    """The ``(partial labeling, bound)`` pairs of a stored frontier (:func:`_frontier_to_json`)."""
    return [(np.array([1.0 if ch == "+" else -1.0 if ch == "-" else 0.0 for ch in text]), float(bound))
            for text, bound in items]


# ------------------------------------------------------------------------------------ certified lower bounds
#: Data sets with stored certified lower bounds (:mod:`harness.certify`) and their splits:
#: JMLR 2008 Table 8's g50c and Text rows (10 splits) and Uspst's one-versus-rest
#: problems of split 0.  Problems are those of the common protocol on the JMLR 2008 splits with
#: the Table 5 hyperparameters (:func:`harness.optima_bounds.bound_problems`).
BOUND_SETS = {"g50c": 10, "text": 10, "uspst": 1}
BOUNDS_FORMAT = 1
#: The committed Table 8 runs whose objectives give the best value any registered solver reached.
BOUND_RUNS_TABLE = "jmlr2008-table8"


def _check_bound_set(dataset: str) -> None:
    """Raise ``ValueError`` unless ``dataset`` is one of :data:`BOUND_SETS`."""
    if dataset not in BOUND_SETS:
        raise ValueError(f"no certified lower bounds for {dataset!r}; the bound sets: {', '.join(BOUND_SETS)}")


def load_bounds(dataset: str, directory=None) -> dict:
    """The stored lower bounds of a data set (an empty store if none exists yet)."""
    from .protocol import ProtocolSettings

    _check_bound_set(dataset)
    path = _path(f"bounds-{dataset}.json", directory)
    if not path.is_file():
        s = ProtocolSettings.for_dataset(dataset)
        return {"format": BOUNDS_FORMAT, "set": dataset, "kind": "certified lower bounds (harness.certify)",
                "objective": "JMLR 2008 eq. 1 (p = 2, free bias) over labelings with round(u r) positives (eq. 3, "
                             "exact r), as harness.protocol.protocol_objective computes it",
                "settings": {"kernel": s.kernel, "sigma": s.sigma, "C": s.C, "C_star": s.c_star, "r": "exact"},
                "best_objective_from": f"reports/runs/{BOUND_RUNS_TABLE}/{dataset}.csv", "entries": {}}
    return _read(path, BOUNDS_FORMAT, _BOUND_FIELDS)


def save_bounds(store: dict, directory=None) -> Path:
    """Write a bound store (:func:`_save`) as ``bounds-<data set>.json``."""
    return _save(store, f"bounds-{store['set']}.json", directory)


def lookup_bound(problem: BinaryProblem, store: dict) -> dict | None:
    """The stored bound of ``problem``, or None if missing or computed for a different problem."""
    return lookup(problem, store, "bound", "optima build --bounds")
