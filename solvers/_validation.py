"""Small argument checks shared by every solver module (one wording for one mistake)."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

__all__ = ["check_positive", "check_int", "check_kernel_matrix"]


def check_positive(value, name: str) -> float:
    """Return ``value`` as a float if it is a finite real number > 0.

    Raises
    ------
    TypeError
        ``value`` is not a real number (a string, None, a bool, an array).
    ValueError
        ``value`` is <= 0, NaN or infinite.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive number, got {value!r}")
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be > 0 and finite, got {value!r}")
    return float(value)


def check_int(value, name: str, minimum: int) -> int:
    """Return ``value`` as an int if it is an integer (not a bool) ``>= minimum``, else ``ValueError``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < minimum:
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
