"""Where the suite reads its shipped files and where it writes: one work folder.

Every command writes under one folder, the *work folder*: ``--out DIR``, else the environment
variable ``S3VM_RESULTS_DIR``, else ``./s3vm-results``. Inside it::

    reports/            paper tables (Markdown + CSV); ``reports/runs/<table>/<dataset>.csv``: the tidy rows of their cells
    figures/            paper figures (PNG + SVG)
    results/cache/      one JSON file per computed cell (resumable runs)
    results/runs.csv    rows of ``s3vm-bench run``
    results/compare/    per-problem CSV of ``s3vm-bench compare``
    results/demo/       ``s3vm-bench demo``
    optima/             branch-and-bound optima and certified lower bounds computed by ``optima build`` or
                        ``compare --compute-missing``, best objectives recorded by ``compare --record-best``

The repository root has the same layout, so the committed reports and results are rewritten only
when asked for explicitly: ``s3vm-bench reproduce ... --out .`` run from a source checkout.

Read-only, shipped with the package (:data:`SHIPPED_REPORTS`): the paper targets and the committed
results table; a cell found there with its current key is not recomputed.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from s3vm_bench import PACKAGE_DIR, nearest_existing

__all__ = ["SHIPPED_REPORTS", "SHIPPED_RESULTS", "DEFAULT_WORK_DIR", "ENV_VAR", "work_dir", "WorkDir",
           "check_writable_folder"]

#: The reports folder shipped with the package (repository ``reports/``): targets and committed results.
SHIPPED_REPORTS = PACKAGE_DIR / "reports"
#: The committed tidy results: one CSV per table and data set (:mod:`harness.results`, folder store).
SHIPPED_RESULTS = SHIPPED_REPORTS / "runs"
#: The work folder when neither ``--out`` nor :data:`ENV_VAR` names one (relative to the current folder).
DEFAULT_WORK_DIR = "s3vm-results"
#: Environment variable naming the work folder.
ENV_VAR = "S3VM_RESULTS_DIR"


class WorkDir:
    """The folders of one work folder (see the module doc)."""

    def __init__(self, root):
        self.root = Path(root)

    @property
    def reports(self) -> Path:
        return self.root / "reports"

    @property
    def results_table(self) -> Path:
        return self.reports / "runs"

    @property
    def figures(self) -> Path:
        return self.root / "figures"

    @property
    def cache(self) -> Path:
        return self.root / "results" / "cache"

    @property
    def runs(self) -> Path:
        return self.root / "results" / "runs.csv"

    @property
    def compare(self) -> Path:
        return self.root / "results" / "compare"

    @property
    def demo(self) -> Path:
        return self.root / "results" / "demo"

    @property
    def optima(self) -> Path:
        """Branch-and-bound optima computed here; the shipped ones (``harness/optima/``) when the
        work folder is the source checkout."""
        return PACKAGE_DIR / "harness" / "optima" if self.is_shipped() else self.root / "optima"

    def is_shipped(self) -> bool:
        """Whether this work folder's reports are the shipped ones (``--out .`` in a source checkout)."""
        try:
            return self.reports.resolve() == SHIPPED_REPORTS.resolve()
        except OSError:
            return False


def work_dir(out=None) -> WorkDir:
    """The work folder: ``out``, else ``$S3VM_RESULTS_DIR``, else ``./s3vm-results``.

    Raises
    ------
    ValueError
        ``out`` or the variable is set to an empty string.
    """
    value = out if out is not None else os.environ.get(ENV_VAR, DEFAULT_WORK_DIR)
    if not str(value).strip():
        raise ValueError(f"the work folder is empty: name one with --out DIR or {ENV_VAR}, or unset them "
                         f"for ./{DEFAULT_WORK_DIR}")
    return WorkDir(Path(value).expanduser())


def check_writable_folder(option: str, folder, write: bool = True, remedy: str | None = None) -> Path:
    """Check, before any work, that files can be written in ``folder`` or that it can be created.

    Nothing is created: a file is made and removed at once in ``folder``, or in its nearest
    existing parent when ``folder`` does not exist yet.

    Parameters
    ----------
    option : str
        The command-line option that named the folder (``"--cache"``), for the message.
    folder : path
    write : bool, default=True
        Whether to try writing a file; False checks only that ``folder`` is, or can become, a
        folder (no file on its path), for a command that may only read it.
    remedy : str, optional
        What the message tells the user to do (default: name another folder).

    Returns
    -------
    Path

    Raises
    ------
    ValueError
        ``folder`` or a parent of it is a file, or no file can be created there (a read-only file
        system, missing permissions).
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{option} {folder} is a file, not a folder: {remedy or 'name a folder'}")
    probe = nearest_existing(folder)
    if not probe.is_dir():
        raise ValueError(f"{option} {folder} cannot be created: {probe} is a file; {remedy or 'name another folder'}")
    if not write:
        return folder
    try:
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as exc:
        raise ValueError(f"{option} {folder} cannot be created or written ({exc.strerror or exc}): "
                         f"{remedy or 'name another folder'}") from None
    return folder
