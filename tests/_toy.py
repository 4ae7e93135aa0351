"""Tiny problems and helpers shared by several test modules."""

import numpy as np


def small_clusters(seed=0, n=40):
    """Two Gaussian clusters in 3-D, first 6 points labeled (3 per class); returns X, y, y_semi."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.standard_normal((n, 3)) + 2.5 * y[:, None]
    y_semi = y.copy()
    y_semi[6:] = -1
    return X, y, y_semi


#: Malformed (X, y_semi) inputs every S3VM must reject: (mutation, exception, message).
BAD_INPUTS = [
    (lambda X, y: (np.where(np.eye(*X.shape, dtype=bool), np.nan, X), y), ValueError, "NaN"),
    (lambda X, y: (X, -np.ones_like(y)), ValueError, "no labeled point"),
    (lambda X, y: (X, np.where(np.arange(y.size) < 5, 1, -1)), ValueError, "only one class"),
]
