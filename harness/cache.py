"""The result cache of the grid: one JSON file per cell key, backed by the shipped results tables.

:class:`ResultCache` answers for the cells already computed (a cache file, or a successful row of
a results table with the cell's key); :func:`check_row` says why a stored row is not a valid
successful result. The runner (:mod:`harness.grid`) re-exports both.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from pathlib import Path

from .cell_keys import Cell

__all__ = ["ResultCache", "check_row"]


def check_row(row) -> str | None:
    """Why ``row`` is not a valid successful result row (None if it is).

    A successful row is a dict with ``status == "done"``, the cell's identity (``dataset``,
    ``solver``, ``protocol`` as text, ``split`` an integer), ``n_binary`` a non-negative integer,
    ``unlabeled_error`` (and ``test_error``, ``validation_error`` where present) a fraction in
    [0, 1], ``objective`` a finite number or missing (None or NaN: the 5-fold CV reference of JMLR
    2008 Table 8 has none; a solver's NaN outputs fail the cell before a row is made, see
    :func:`harness.protocol.run_split`), ``balance_exact`` a bool, ``fit_seconds`` (and
    ``cpu_seconds`` where present) a non-negative number and ``timestamp`` a non-empty text (a
    stored row cut short lacks its last fields).
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
    seconds = row.get("fit_seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds >= 0.0:
        return f"fit_seconds {seconds!r} is not a number of seconds"
    cpu = row.get("cpu_seconds")  # absent from rows older than the column
    if cpu is not None and (isinstance(cpu, bool) or not isinstance(cpu, (int, float)) or not cpu >= 0.0):
        return f"cpu_seconds {cpu!r} is not a number of seconds"
    if not isinstance(row.get("timestamp"), str) or not row["timestamp"]:
        return "no timestamp (a row written only in part)"
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
                except ValueError:  # names the file of the store that cannot be read, and what to do
                    raise
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

        try:
            row = row_from_table(record)
        except ValueError as exc:  # a hand-edited or damaged field: treated as a row that does not check
            row, reason = None, str(exc)
        else:
            reason = check_row(row)
        if reason is not None:
            warnings.warn(f"ignoring the row of {key} in the results table: {reason}; its cell will be recomputed",
                          RuntimeWarning, stacklevel=2)
            return None
        if cell is not None and not _is_row_of(row, cell):
            return None
        return row

    def put(self, key: str, row: dict) -> None:
        """Write ``row``, a successful one, under ``key`` (ValueError for any other status)."""
        if row.get("status") != "done":
            raise ValueError("only successful cells are cached")
        from ._atomic import atomic_write

        atomic_write(self._path(key), json.dumps(row, sort_keys=True, default=float))
