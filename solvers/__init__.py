"""Solvers: one module per algorithm, each a scikit-learn estimator, plus shared primal machinery.

The registry maps a short name to ``"module:Class"``; classes are imported only when asked for,
so importing :mod:`solvers` stays cheap. A user's own solver is named ``"package.module:Class"``.

>>> from solvers import get_solver
>>> SVM = get_solver("svm")
"""

from __future__ import annotations

import difflib
import importlib

from s3vm_bench import import_name

__all__ = ["REGISTRY", "get_solver", "available_solvers"]

#: short name -> "module:Class" (modules relative to this package).
REGISTRY: dict[str, str] = {
    "svm": "solvers.svm:SVM",
    "svm_5cv": "solvers.svm:SVM5CV",
    "svm_balanced": "solvers.svm_balanced:BalancedSVM",
    "s3vm_light": "solvers.s3vm_light:S3VMLight",
    "tsvm_linear": "solvers.tsvm_linear:LinearTSVM",
    "mfa": "solvers.mfa:MFA",
    "da": "solvers.da:DA",
    "grad_da": "solvers.grad_da:GradDA",
    "grad_s3vm": "solvers.grad_s3vm:GradS3VM",
    "cs3vm": "solvers.cs3vm:CS3VM",
    "cccp": "solvers.cccp:CCCP",
    "newton": "solvers.newton:NewtonS3VM",
    "bb": "solvers.bb:BranchAndBoundS3VM",
    "s3vm_path": "solvers.s3vm_path:S3VMPath",
    "lapsvm": "solvers.lapsvm:LapSVM",
    "lapsvm_balanced": "solvers.lapsvm_balanced:BalancedLapSVM",
    "lapsvm_s3vm_light": "solvers.lapsvm_s3vm_light:LapSVMS3VMLight",
}


def available_solvers() -> list[str]:
    """Registered short names."""
    return sorted(REGISTRY)


def get_solver(name: str):
    """Return the estimator class registered as ``name``, or named by ``"package.module:Class"``.

    Raises
    ------
    ValueError
        Unknown short name (with a close-match suggestion) or a malformed path.
    ImportError, AttributeError
        The module or class of a ``"package.module:Class"`` path does not exist.
    """
    if not isinstance(name, str):
        raise TypeError(f"solver name must be a str, got {type(name).__name__}")
    target = REGISTRY.get(name)
    if target is None:
        if ":" not in name:
            close = difflib.get_close_matches(name, REGISTRY, n=1, cutoff=0.5)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"unknown solver {name!r}.{hint} Registered: {', '.join(available_solvers())}; "
                             "or name your own as 'package.module:Class'.")
        target = name
    module_name, _, cls_name = target.partition(":")
    if not module_name or not cls_name:
        raise ValueError(f"solver path {name!r} must look like 'package.module:Class'")
    module = importlib.import_module(import_name(module_name))
    try:
        return getattr(module, cls_name)
    except AttributeError:
        raise AttributeError(f"module {module_name!r} has no class {cls_name!r}") from None
