"""Solvers: one module per algorithm, each a scikit-learn estimator, plus shared primal machinery.

The registry maps a short name to ``"module:Class"``; classes are imported only when asked for,
so importing :mod:`s3vm_bench.solvers` stays cheap. A solver from outside is named
``"package.module:Class"`` or ``"path/to/file.py:Class"``, or registered by an installed package
under the entry-point group ``s3vm_bench.solvers``.

>>> from s3vm_bench.solvers import get_solver
>>> SVM = get_solver("svm")
"""

from __future__ import annotations

import importlib
import inspect

from s3vm_bench import did_you_mean, import_name

__all__ = ["REGISTRY", "ENTRY_POINT_GROUP", "BALANCE_RULES", "get_solver", "available_solvers", "check_solver_class"]

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


#: Entry-point group through which installed packages register solvers (``name = "pkg.module:Class"``).
ENTRY_POINT_GROUP = "s3vm_bench.solvers"


def _entry_points() -> dict:
    """``{name: EntryPoint}`` of the solvers registered by installed packages."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available_solvers() -> list[str]:
    """Registered short names: the suite's and those of installed packages' entry points."""
    return sorted(set(REGISTRY) | set(_entry_points()))


def _load_file(path_text: str):
    """Import the Python file ``path_text`` as a module (once per file and content)."""
    import hashlib
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(path_text).expanduser()
    if not path.is_file():
        raise ValueError(f"solver file {path_text!r} does not exist (from {Path.cwd()}); give the path of a .py "
                         "file, e.g. 'path/to/my_solver.py:MyClass'")
    data = path.read_bytes()
    name = f"s3vm_bench_user_{path.stem.replace('-', '_')}_{hashlib.sha256(data).hexdigest()[:12]}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path.resolve())
    if spec is None or spec.loader is None:  # not a Python source file (e.g. a .csv)
        raise ValueError(f"solver file {path_text!r} is not a Python source file; give the path of a .py file, "
                         "e.g. 'path/to/my_solver.py:MyClass'")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before exec: the module may refer to itself (dataclasses, pickling)
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # SystemExit: a script's sys.exit() run on import
        del sys.modules[name]
        raise ValueError(f"solver file {path_text!r} could not be imported: {type(exc).__name__}: {exc}"
                         + _script_hint(exc)) from exc
    return module


def _script_hint(exc: BaseException) -> str:
    """What to do when importing a solver's module ran a script's ``sys.exit()``."""
    if isinstance(exc, SystemExit):
        return " (the module calls sys.exit() when imported: put its script part under `if __name__ == \"__main__\":`)"
    return ""


#: The values of a solver's class attribute ``balance`` (:mod:`solvers.base`): none, the harness's
#: threshold shift, the dichotomic search on r~ of the mean-output constraint, eq. 12 at r~ = r only.
BALANCE_RULES = (None, "threshold", "mean_output", "soft")


def check_solver_class(cls, name: str):
    """``cls`` if it can be run by the protocol: a class with ``fit`` and one of ``decision_function``,
    ``predict_proba`` or ``predict``; TypeError naming ``name`` and what is missing otherwise."""
    if not isinstance(cls, type):
        raise TypeError(f"solver {name!r} is a {type(cls).__name__}, not a class: name an estimator class")
    missing = [] if callable(getattr(cls, "fit", None)) else ["fit(X, y)"]
    if not any(callable(getattr(cls, m, None)) for m in ("decision_function", "predict_proba", "predict")):
        missing.append("decision_function, predict_proba or predict")
    if missing:
        raise TypeError(f"solver {name!r} ({cls.__module__}.{cls.__qualname__}) has no {' and no '.join(missing)}: "
                        "a solver is a scikit-learn classifier whose fit takes y == -1 for unlabeled points")
    balance = getattr(cls, "balance", None)
    if balance not in BALANCE_RULES:
        raise ValueError(f"solver {name!r}: balance = {balance!r} is not a balance rule; set it to one of "
                         f"{', '.join(map(repr, BALANCE_RULES[1:]))}, or leave it out (no balance)")
    if balance == "mean_output" and "r_tilde" not in inspect.signature(cls).parameters:
        raise TypeError(f"solver {name!r}: balance = 'mean_output' needs an r_tilde constructor parameter (the "
                        "threshold the dichotomic search sets, JMLR 2008 eq. 12); add it, or use balance = 'threshold'")
    return cls


def get_solver(name: str):
    """Return the estimator class named ``name``.

    ``name`` is a registered short name (:data:`REGISTRY`, or an entry point of the group
    :data:`ENTRY_POINT_GROUP` of an installed package), ``"package.module:Class"`` (an importable
    module) or ``"path/to/file.py:Class"`` (a Python file, imported by path).

    Raises
    ------
    ValueError
        Unknown short name (with a close-match suggestion), a malformed name, a file that does
        not exist, a module that cannot be imported or a class it does not define.
    TypeError
        Not a class, or a class without ``fit`` or without ``decision_function``/``predict_proba``/``predict``.
    """
    if not isinstance(name, str):
        raise TypeError(f"solver name must be a str, got {type(name).__name__}")
    target = REGISTRY.get(name)
    if target is None and ":" not in name:
        eps = _entry_points()
        if name in eps:
            return check_solver_class(eps[name].load(), name)
        raise ValueError(f"unknown solver {name!r}.{did_you_mean(name, available_solvers())} Registered: "
                         f"{', '.join(available_solvers())}; "
                         "or name your own as 'package.module:Class' or 'path/to/file.py:Class'.")
    target = target or name
    module_name, _, cls_name = target.rpartition(":")
    if not module_name or not cls_name:
        raise ValueError(f"solver {name!r} must look like 'package.module:Class' or 'path/to/file.py:Class'")
    if module_name.endswith(".py") or "/" in module_name or "\\" in module_name:
        module = _load_file(module_name)
    else:
        try:
            module = importlib.import_module(import_name(module_name))
        except ModuleNotFoundError as exc:
            raise ValueError(f"solver {name!r}: no module named {exc.name!r} (install it, add its folder to "
                             "PYTHONPATH, or name the file: 'path/to/file.py:Class')") from None
        except (Exception, SystemExit) as exc:  # the module's own code failed, or exited
            raise ValueError(f"solver {name!r}: module {module_name!r} could not be imported: "
                             f"{type(exc).__name__}: {exc}" + _script_hint(exc)) from exc
    try:
        cls = getattr(module, cls_name)
    except AttributeError:
        raise ValueError(f"solver {name!r}: {module_name!r} has no class {cls_name!r}") from None
    return check_solver_class(cls, name)
