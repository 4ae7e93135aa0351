"""Argument checks shared by every solver module (one rule and one wording for one mistake).

An estimator declares what each of its ``__init__`` parameters may be in the class attribute
``_parameter_constraints``: a dict ``name -> list of constraints``, the value being valid when it
satisfies any one of them. The constraints are

* :class:`Interval` -- a number of a kind (``numbers.Integral`` or ``numbers.Real``) between
  bounds, e.g. ``Interval(Real, 0, None, closed="neither")`` for a float > 0;
* :class:`Options` -- one of a few values, e.g. ``Options({"rbf", "linear"})``;
* :class:`Boolean` -- ``True`` or ``False``;
* :class:`InstanceOf` -- an instance of a type (``str``, ``collections.abc.Callable``, ...);
* ``None`` -- the value ``None``.

:func:`validate_params` checks an estimator's parameters against them (the solvers' base class
calls it first thing in ``fit``), so a solver's own ``_check_params`` keeps only the rules that
tie several parameters together. The rules for numbers, the same in :func:`check_int` and
:func:`check_positive`:

* a bool (``True``, ``numpy.True_``) is never a number;
* an integer parameter takes a Python or NumPy integer; a float is refused even when its value
  is whole (``3.0``): the parameter counts something, and a float there is most often a slip;
* a float parameter takes any real number -- Python or NumPy, integer or floating -- that is
  finite (NaN and infinity are refused).

A refused parameter raises :class:`InvalidParameterError`, both a ``ValueError`` and a
``TypeError`` (as scikit-learn's own), whose message names the parameter, the value and what is
allowed: ``"SVM: C must be a float > 0, got -1.0"``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.sparse as sp

from s3vm_bench import is_int, is_real

__all__ = ["check_positive", "check_int", "check_kernel_matrix", "check_symmetric_kernel", "Interval", "Options",
           "Boolean", "InstanceOf", "InvalidParameterError", "validate_params"]


class InvalidParameterError(ValueError, TypeError):
    """A parameter value that its declared constraints refuse (a ValueError and a TypeError)."""


def _is_bool(value) -> bool:
    return isinstance(value, (bool, np.bool_))


#: The number rules of the suite (:func:`s3vm_bench.is_int`, :func:`s3vm_bench.is_real`).
_is_int, _is_real = is_int, is_real


def _is_finite(value) -> bool:
    """Whether a number (by the rules above) is finite; integers always are."""
    return _is_int(value) or math.isfinite(value)


def _bound(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


class Interval:
    """Numbers of one kind within bounds.

    Parameters
    ----------
    type : {numbers.Integral, numbers.Real}
        ``Integral`` for an integer parameter, ``Real`` for a float one (see the module's rules).
    left, right : number or None
        The bounds; None leaves that side open (a Real value must still be finite).
    closed : {"left", "right", "both", "neither"}, default="both"
        Which bounds are included.
    """

    def __init__(self, type, left, right, *, closed="both"):
        if type not in (numbers.Integral, numbers.Real):
            raise ValueError(f"Interval type must be numbers.Integral or numbers.Real, got {type!r}")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"closed must be 'left', 'right', 'both' or 'neither', got {closed!r}")
        if left is not None and right is not None and left > right:
            raise ValueError(f"Interval bounds are reversed: left={left!r} > right={right!r}")
        self.type, self.left, self.right, self.closed = type, left, right, closed

    def accepts_type(self, value) -> bool:
        """Whether ``value`` is a number of this interval's kind (bounds aside)."""
        return _is_int(value) if self.type is numbers.Integral else _is_real(value)

    def is_satisfied_by(self, value) -> bool:
        """Whether ``value`` is of this interval's kind, finite and within its bounds."""
        if not self.accepts_type(value) or not _is_finite(value):
            return False
        if self.left is not None:
            if value < self.left or (value == self.left and self.closed in ("right", "neither")):
                return False
        if self.right is not None:
            if value > self.right or (value == self.right and self.closed in ("left", "neither")):
                return False
        return True

    def __str__(self):
        kind = "an int" if self.type is numbers.Integral else "a float"
        left_in = self.closed in ("left", "both")
        right_in = self.closed in ("right", "both")
        if self.left is not None and self.right is not None:
            return (f"{kind} in {'[' if left_in else '('}{_bound(self.left)}, "
                    f"{_bound(self.right)}{']' if right_in else ')'}")
        if self.left is not None:
            return f"{kind} {'>=' if left_in else '>'} {_bound(self.left)}"
        if self.right is not None:
            return f"{kind} {'<=' if right_in else '<'} {_bound(self.right)}"
        return kind if self.type is numbers.Integral else "a finite float"

    def __repr__(self):
        return f"Interval({self.type.__name__}, {self.left!r}, {self.right!r}, closed={self.closed!r})"


class Options:
    """One of a few values, matched by type and equality (the text ``"rbf"`` is not the number 1).

    Parameters
    ----------
    options : set or sequence
        The allowed values (typically strings); listed in the messages in sorted order.
    """

    def __init__(self, options):
        self.options = tuple(sorted(options, key=repr))
        if not self.options:
            raise ValueError("Options needs at least one allowed value")

    def is_satisfied_by(self, value) -> bool:
        """Whether ``value`` is one of the options (of the same type)."""
        return any(isinstance(value, type(o)) and _is_bool(value) == _is_bool(o) and value == o
                   for o in self.options)

    def __str__(self):
        names = [repr(o) for o in self.options]
        return names[0] if len(names) == 1 else "one of " + ", ".join(names)

    def __repr__(self):
        return f"Options({set(self.options)!r})"


class Boolean:
    """``True`` or ``False`` (a Python or NumPy bool; not the numbers 0 and 1)."""

    def is_satisfied_by(self, value) -> bool:
        return _is_bool(value)

    def __str__(self):
        return "a bool (True or False)"

    def __repr__(self):
        return "Boolean()"


class InstanceOf:
    """An instance of ``type`` (``collections.abc.Callable`` for a callable), described as ``description``."""

    def __init__(self, type, description):
        self.type, self.description = type, description

    def is_satisfied_by(self, value) -> bool:
        return isinstance(value, self.type)

    def __str__(self):
        return self.description

    def __repr__(self):
        return f"InstanceOf({self.type.__name__}, {self.description!r})"


def _satisfies(constraint, value) -> bool:
    return value is None if constraint is None else constraint.is_satisfied_by(value)


def _describe(constraints) -> str:
    names = ["None" if c is None else str(c) for c in constraints]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _check_value(value, name: str, constraints, owner: str = "") -> None:
    """Raise :class:`InvalidParameterError` unless ``value`` satisfies one of ``constraints``.

    The message names ``name`` (prefixed by ``owner``, e.g. the estimator's class name), the
    value and what is allowed, with the reason when it is one of the module's rules (a bool is
    not a number, a float is not an int, NaN and infinity are not finite).
    """
    if any(_satisfies(c, value) for c in constraints):
        return
    hint = ""
    numeric = [c for c in constraints if isinstance(c, Interval)]
    if numeric and _is_bool(value):
        hint = " (a bool is not a number)"
    elif any(c.type is numbers.Integral for c in numeric) and _is_real(value) and not _is_int(value):
        if _is_finite(value) and float(value).is_integer():
            hint = f" (an integer parameter takes an int: write {int(value)}, not {value!r})"
    elif any(c.accepts_type(value) for c in numeric) and not _is_finite(value):
        hint = " (NaN and infinity are refused)"
    prefix = f"{owner}: " if owner else ""
    raise InvalidParameterError(f"{prefix}{name} must be {_describe(constraints)}, got {value!r}{hint}")


def validate_params(estimator) -> None:
    """Check ``estimator.get_params(deep=False)`` against ``type(estimator)._parameter_constraints``.

    Each parameter with a declared constraint list must satisfy one of its constraints; a
    parameter without one is not checked (the suite's registered estimators declare one for
    every parameter, which ``tests/test_sklearn_conventions.py`` enforces).

    Parameters
    ----------
    estimator : BaseEstimator
        The estimator whose parameters are checked; the messages name its class.

    Raises
    ------
    InvalidParameterError
        A ValueError and a TypeError: the first refused parameter, its value and what is allowed.
    """
    constraints = getattr(type(estimator), "_parameter_constraints", None) or {}
    owner = type(estimator).__name__
    for name, value in estimator.get_params(deep=False).items():
        if name in constraints:
            _check_value(value, name, constraints[name], owner)


def check_positive(value, name: str) -> float:
    """Return ``value`` as a float if it is a finite real number > 0.

    Raises
    ------
    TypeError
        ``value`` is not a real number (a string, None, a bool, an array).
    ValueError
        ``value`` is <= 0, NaN or infinite.
    """
    if not _is_real(value):
        raise TypeError(f"{name} must be a positive number, got {value!r}")
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be > 0 and finite, got {value!r}")
    return float(value)


def check_int(value, name: str, minimum: int) -> int:
    """Return ``value`` as an int if it is an integer (not a bool, not a float) ``>= minimum``, else ``ValueError``."""
    if not _is_int(value) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_kernel_matrix(K) -> np.ndarray:
    """Return ``K`` as a float64 ndarray if it is a dense, square, finite matrix.

    Raises
    ------
    TypeError
        ``K`` is a scipy.sparse matrix.
    ValueError
        ``K`` is not square 2-D or contains NaN or inf.
    """
    if sp.issparse(K):
        raise TypeError("K must be a dense ndarray kernel matrix")
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square (n, n) kernel matrix, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError("K contains NaN or inf")
    return K


def _max_asymmetry(K, block: int = 256) -> float:
    """``max |K - K^T|`` of a square ``K``, over blocks of rows of its upper triangle (the largest
    temporary is ``block`` x n, not n x n)."""
    n, worst = K.shape[0], 0.0
    for i in range(0, n, block):
        j = min(i + block, n)
        worst = max(worst, float(np.max(np.abs(K[i:j, i:] - K[i:, i:j].T))))
    return worst


def check_symmetric_kernel(K) -> np.ndarray:
    """:func:`check_kernel_matrix`, and ``K`` symmetric up to rounding (``|K - K^T| <= 1e-8 max|K|``).

    An O(n^2) check: for the functions that take a whole training kernel once per fit (its
    centering, its explicit feature map), not for inner loops.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_kernel_matrix`; ValueError if ``K`` is not symmetric.
    """
    K = check_kernel_matrix(K)
    if K.size and _max_asymmetry(K) > 1e-8 * max(float(K.max()), -float(K.min()), 1e-300):
        raise ValueError("K must be a symmetric kernel matrix (K[i, j] == K[j, i]); pass the training Gram "
                         "matrix k(x_i, x_j) of the points, not a cross-kernel or a one-sided one")
    return K
