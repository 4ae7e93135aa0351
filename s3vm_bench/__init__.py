"""s3vm-bench: semi-supervised SVM solvers, the common protocol and the papers' tables.

The distribution installs the project's folders as subpackages of this one (setuptools
``package-dir``), so that nothing generic lands at the top level of ``site-packages``:

* :mod:`s3vm_bench.data_registry` (folder ``data_registry/``): data sets, splits, generators;
* :mod:`s3vm_bench.solvers` (folder ``solvers/``): one estimator per algorithm, the public base
  class :mod:`s3vm_bench.solvers.base` and the shared numerics;
* :mod:`s3vm_bench.harness` (folder ``harness/``): the protocol, the runner, reports, the CLI;
* ``s3vm_bench/reports`` (folder ``reports/``, package data): paper targets and the committed
  results.

Module names stored in specs, result rows and cell keys (``"solvers.newton"``,
``"harness.protocol"``) are *project names*, relative to this package: :func:`import_name`
turns one into the importable name, :func:`project_name` back.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PACKAGES", "PACKAGE_DIR", "import_name", "project_name", "closest_name", "did_you_mean", "is_int",
           "is_real", "nearest_existing"]

#: The project's subpackages (their folders' names).
PACKAGES = ("data_registry", "solvers", "harness")

#: Folder holding the subpackages and the shipped ``reports/``: ``site-packages/s3vm_bench`` in a
#: regular install (where ``reports/`` is package data beside this file), the repository root in
#: a source checkout or an editable install.
PACKAGE_DIR = (Path(__file__).resolve().parent if (Path(__file__).resolve().parent / "reports").is_dir()
               else Path(__file__).resolve().parent.parent)


def import_name(name: str) -> str:
    """The importable name of module ``name``: a project name (``"solvers.newton"``) gets the
    ``s3vm_bench.`` prefix; any other name (an outside module) is returned as it is."""
    head = name.split(".", 1)[0]
    return f"{__name__}.{name}" if head in PACKAGES else name


def project_name(name: str) -> str:
    """The project name of module ``name`` (``"s3vm_bench.solvers.newton"`` -> ``"solvers.newton"``);
    an outside module's name is returned as it is."""
    prefix = __name__ + "."
    if name.startswith(prefix) and name[len(prefix):].split(".", 1)[0] in PACKAGES:
        return name[len(prefix):]
    return name


def closest_name(name, choices) -> str | None:
    """The choice closest to the unknown ``name``, or None if none is close.

    The one rule of every "unknown name" message (solvers, data sets, registry files, tables,
    figures, reference sets): :func:`difflib.get_close_matches` with cutoff 0.5 on lower-cased
    names, so a change of case alone (``"SVM"``) still finds ``"svm"`` and a prefix
    (``"tsvm"``) finds ``"tsvm_linear"``.
    """
    import difflib

    by_lower = {}
    for choice in choices:
        by_lower.setdefault(str(choice).lower(), str(choice))
    close = difflib.get_close_matches(str(name).lower(), list(by_lower), n=1, cutoff=0.5)
    return by_lower[close[0]] if close else None


def did_you_mean(name, choices) -> str:
    """``" Did you mean 'x'?"`` for the choice :func:`closest_name` finds, or ``""``."""
    close = closest_name(name, choices)
    return f" Did you mean {close!r}?" if close else ""


def is_int(value) -> bool:
    """Whether ``value`` is an integer by the suite's rule: a Python or NumPy integer, not a bool
    (a float is not an integer even when whole). The one rule of every count check."""
    import numbers

    import numpy as np

    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def is_real(value) -> bool:
    """Whether ``value`` is a real number by the suite's rule: any Python or NumPy real, not a bool
    (finiteness is checked apart)."""
    import numbers

    import numpy as np

    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def nearest_existing(path) -> Path:
    """``path`` (made absolute) if it exists, else its nearest existing parent: where a folder
    ``path`` would be created, and, when that is not a folder, the file in the way."""
    probe = Path(path).absolute()
    while not probe.exists():
        probe = probe.parent
    return probe
