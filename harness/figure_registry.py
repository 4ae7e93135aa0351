"""What every figure module stands on: the figure registry and the stored inputs.

A figure is a :class:`FigureSpec` registered in :data:`FIGURES` by :func:`_register` (the
modules :mod:`harness.figures_losses`, :mod:`harness.figures_boundaries` and
:mod:`harness.figures_experiments`); :mod:`harness.figures` draws them. A stored input
(:class:`_Stored`) is found in the work folder's ``reports/`` or else the shipped one; one that
does not exist raises :class:`MissingData` naming the command that makes it (:func:`_need`,
:func:`_read_jsonl`); one that is not valid JSON, or lacks a field a figure reads, raises
:class:`CorruptData` naming the file, the line or the part and how to restore or remake it
(:func:`_read_json`, :func:`_read_jsonl`, :func:`_check_fields`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ._atomic import read_records
from .paths import SHIPPED_REPORTS, work_dir

__all__ = ["FIGURES", "FigureSpec", "MissingData", "CorruptData", "REPORTS_DIR"]

#: The shipped reports (read only): the stored data the figures are drawn from by default.
REPORTS_DIR = SHIPPED_REPORTS


@dataclass(frozen=True)
class _Stored:
    """A default input of a figure: a file under a reports folder, found when the figure is drawn.

    :meth:`path` is the work folder's ``reports/<relpath>`` when it exists (made by
    ``figures --make-data`` or ``reproduce``), else the shipped one.
    """

    relpath: str

    def path(self) -> Path:
        local = work_dir().reports / self.relpath
        return local if local.is_file() or local.is_dir() else REPORTS_DIR / self.relpath


def _make_data_cmd(name: str) -> str:
    """The command that makes the stored input ``name`` of :data:`harness.figure_data.DATA`."""
    return f"s3vm-bench figures --make-data {name}"


class MissingData(FileNotFoundError):
    """The stored result a figure needs does not exist; the message says what produces it."""


class CorruptData(ValueError):
    """The stored result a figure needs exists but cannot be read (not UTF-8, not valid JSON, not
    JSON objects); the message names the file, what is wrong with it and how to restore or remake it."""


@dataclass(frozen=True)
class FigureSpec:
    """One paper figure and how it is made.

    Attributes
    ----------
    name : str
        ``<paper><year>-fig<N>``; also the output file stem.
    paper : str
        The figure reproduced, e.g. ``"JMLR 2008 Fig. 2"``.
    caption : str
        Our caption: what is drawn (the paper's caption paraphrased, plus our choices).
    draw : callable
        ``draw(fig, **inputs)`` fills a :class:`matplotlib.figure.Figure`.
    size : (float, float)
        Figure size in inches.
    source : str
        Where the data comes from (for the gallery).
    inputs : dict
        Default inputs, by keyword of ``draw``: stored files (:class:`_Stored`, located when the
        figure is drawn) or values; overridable in :func:`make_figure`.
    """

    name: str
    paper: str
    caption: str
    draw: Callable
    size: tuple = (4.0, 3.0)
    source: str = "closed form"
    inputs: dict = field(default_factory=dict)


FIGURES: dict[str, FigureSpec] = {}


def _register(name, paper, caption, size=(4.0, 3.0), source="closed form", **inputs):
    """Decorator: register the drawing function as figure ``name`` of :data:`FIGURES` (the
    arguments are the fields of :class:`FigureSpec`, ``inputs`` its default inputs)."""
    def deco(fn):
        FIGURES[name] = FigureSpec(name, paper, caption, fn, size, source, inputs)
        return fn

    return deco


def _need(path, what: str) -> Path:
    """``path`` as a :class:`~pathlib.Path`; :class:`MissingData` (its message ending with ``what``,
    the command that makes the file) if it is not a file."""
    path = Path(path)
    if not path.is_file():
        raise MissingData(f"{path} does not exist; {what}")
    return path


def _corrupt(path, problem: str, what: str) -> CorruptData:
    """:class:`CorruptData` for the stored input ``path``, whose message names the file, says what is
    wrong with it (``problem``) and how to restore it, or to delete it and remake it (``what``: the
    command that makes it, as for :func:`_need`).

    A shipped file is restored by ``git checkout`` in a source checkout, a work folder's copy of a
    shipped file by copying the shipped one over it.
    """
    path = Path(path)
    shipped, local = REPORTS_DIR.resolve(), work_dir().reports.resolve()
    target = path.resolve()
    if target.is_relative_to(shipped):
        how = f" (`git checkout -- reports/{target.relative_to(shipped).as_posix()}` in a source checkout)"
    elif target.is_relative_to(local) and (shipped / target.relative_to(local)).is_file():
        how = f" (copy the shipped {REPORTS_DIR / target.relative_to(local)} over it)"
    else:
        how = ""
    return CorruptData(f"{path} {problem}; restore it{how}, or delete it and {what}")


def _read_json(path, what: str) -> dict:
    """The JSON object stored in the file ``path``.

    Raises
    ------
    MissingData
        ``path`` is not a file (the message ends with ``what``, the command that makes it).
    CorruptData
        The file is empty, not UTF-8, not valid JSON (the message gives the line and column) or not
        a JSON object.
    """
    try:
        text = _need(path, what).read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise _corrupt(path, f"is not UTF-8 text (byte {exc.start})", what) from None
    if not text.strip():
        raise _corrupt(path, "is empty, not valid JSON", what)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _corrupt(path, f"is not valid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})",
                       what) from None
    if not isinstance(doc, dict):
        raise _corrupt(path, f"holds a JSON {type(doc).__name__}, not a JSON object", what)
    return doc


def _json_kind(obj) -> str:
    """The JSON name of the kind of a decoded value (``"a JSON object"``, ``"a JSON array"``, ...)."""
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if obj is None else f"a JSON {names.get(type(obj), type(obj).__name__)}"


def _check_fields(obj, fields, path, what: str, where: str) -> dict:
    """``obj`` (a part of the stored input ``path``, described by ``where``, e.g. ``"models[1]"``) if
    it is a JSON object with every key of ``fields``, else :class:`CorruptData` naming the part and
    the missing keys (``what``: the command that makes the file, as for :func:`_need`)."""
    if not isinstance(obj, dict):
        raise _corrupt(path, f"is not readable: {where} is {_json_kind(obj)}, not a JSON object", what)
    missing = [f for f in fields if f not in obj]
    if missing:
        raise _corrupt(path, f"is not readable: {where} has no field{'s' if len(missing) > 1 else ''} "
                             f"{', '.join(map(repr, missing))}", what)
    return obj


def _check_list(obj, path, what: str, where: str) -> list:
    """``obj`` if it is a non-empty JSON array, else :class:`CorruptData` (see :func:`_check_fields`)."""
    if not isinstance(obj, list) or not obj:
        kind = "an empty array" if isinstance(obj, list) else _json_kind(obj)
        raise _corrupt(path, f"is not readable: {where} is {kind}, not a non-empty JSON array", what)
    return obj


def _read_jsonl(path, what: str, fields=(), when=None) -> list:
    """The records (JSON objects, one a line) of the JSON-lines file ``path``.

    Blank lines are skipped; an unterminated last line (a write cut short) is left out with a
    warning (:func:`harness._atomic.read_records`). Each record (for which ``when(record)`` is
    true, if ``when`` is given) must have the keys ``fields`` that the figure reads.

    Raises
    ------
    MissingData
        ``path`` is not a file, or holds no record (the message ends with ``what``, the command that
        makes it).
    CorruptData
        A line is not valid JSON, not a JSON object or lacks one of ``fields`` (the message gives its
        line number), or the file is not UTF-8.
    """
    try:
        rows = read_records(_need(path, what), fields=fields, when=when,
                            bad=lambda number, why: _corrupt(path, f"is not readable: line {number} is {why}", what))
    except UnicodeDecodeError as exc:
        raise _corrupt(path, f"is not UTF-8 text (byte {exc.start})", what) from None
    if not rows:
        raise MissingData(f"{path} holds no result; {what}")
    return rows
