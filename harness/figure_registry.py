"""What every figure module stands on: the figure registry and the stored inputs.

A figure is a :class:`FigureSpec` registered in :data:`FIGURES` by :func:`_register` (the
modules :mod:`harness.figures_losses`, :mod:`harness.figures_boundaries` and
:mod:`harness.figures_experiments`); :mod:`harness.figures` draws them. A stored input
(:class:`_Stored`) is found in the work folder's ``reports/`` or else the shipped one; one that
does not exist raises :class:`MissingData` naming the command that makes it (:func:`_need`,
:func:`_read_jsonl`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ._atomic import read_lines
from .paths import SHIPPED_REPORTS, work_dir

__all__ = ["FIGURES", "FigureSpec", "MissingData", "REPORTS_DIR"]

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


def _read_jsonl(path, what: str) -> list:
    """The records of the JSON-lines file ``path``; :class:`MissingData` if it is missing or empty."""
    rows = [json.loads(x) for x in read_lines(_need(path, what)) if x.strip()]
    if not rows:
        raise MissingData(f"{path} holds no result; {what}")
    return rows
