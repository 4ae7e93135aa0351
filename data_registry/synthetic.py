"""Synthetic data sets, deterministic given a seed (no download).

Same label convention as the catalog: ``y`` in ``{0, 1}`` with class 1 the positive class.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from s3vm_bench import is_real

from .catalog import Dataset
from .splits import _check_int

__all__ = ["two_moons", "two_circles", "g50c_like", "TWO_MOONS_LABELED"]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1

_SCALE = 1.25  # radius of the 2moons.mat moons (x spans about [-1.4, 2.5] there)
_NOISE = 0.1

#: The two fixed labeled points of the two-moons problem: the apex of each moon (JMLR 2008
#: Sec. 5.1: "the labeled points are fixed and new unlabeled points are randomly generated").
#: The papers do not print them; the apexes are our choice, the least ambiguous points.
TWO_MOONS_LABELED = np.array([[0.0, _SCALE], [_SCALE, 0.5 * _SCALE - _SCALE]])


def _rng(seed) -> np.random.Generator:
    if seed is None:
        raise ValueError("pass an explicit integer seed: synthetic data must be reproducible")
    return np.random.default_rng(_check_int(seed, "seed", 0))


def _check_real(value, name: str, what: str) -> float:
    """``value`` as a float if it is a finite real number >= 0 (not a bool)."""
    if not is_real(value):
        raise TypeError(f"{name} must be a number >= 0 ({what}), got {value!r}")
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be finite and >= 0 ({what}), got {value!r}")
    return float(value)


def _moons(n_pos: int, n_neg: int, rng: np.random.Generator, noise: float):
    t_pos = rng.uniform(0.0, np.pi, n_pos)
    t_neg = rng.uniform(0.0, np.pi, n_neg)
    # Upper moon (class 1) centred at the origin, lower moon (class 0) shifted as in the
    # 2moons.mat file; Gaussian noise on top.
    pos = _SCALE * np.column_stack([np.cos(t_pos), np.sin(t_pos)])
    neg = _SCALE * np.column_stack([1.0 - np.cos(t_neg), 0.5 - np.sin(t_neg)])
    X = np.vstack([pos, neg]) + noise * rng.standard_normal((n_pos + n_neg, 2))
    y = np.r_[np.ones(n_pos, np.int64), np.zeros(n_neg, np.int64)]
    return X, y


def two_moons(seed: int, n_unlabeled: int = 100, n_test: int = 200, noise: float = _NOISE) -> Dataset:
    """One realization of the two-moons problem of JMLR 2008 Sec. 5.1 and NIPS 2006 Sec. 7.1.

    The first two rows are the fixed labeled points :data:`TWO_MOONS_LABELED` (class 1 then
    class 0); the next ``n_unlabeled`` rows are new unlabeled points, half per moon (NIPS 2006:
    "each moon contained 50 unlabeled points"); a test set of ``n_test`` points from the same
    distribution is attached. The fixed split is ``splits[2]``.

    Parameters
    ----------
    seed : int
        Realization seed (required), >= 0.
    n_unlabeled : int, default=100
        Unlabeled points, an even number >= 2 (half per moon).
    n_test : int, default=200
        Test points, >= 2 (about half per moon).
    noise : float, default=0.1
        Standard deviation of the Gaussian noise added to each coordinate, >= 0.
    """
    if _check_int(n_unlabeled, "n_unlabeled", 2, "a number of points") % 2:
        raise ValueError(f"n_unlabeled must be an even number >= 2 (half per moon), got {n_unlabeled}")
    _check_int(n_test, "n_test", 2, "a number of points")
    noise = _check_real(noise, "noise", "the standard deviation of the Gaussian noise")
    rng = _rng(seed)
    Xu, yu = _moons(n_unlabeled // 2, n_unlabeled // 2, rng, noise)
    Xt, yt = _moons(n_test - n_test // 2, n_test // 2, rng, noise)
    X = np.vstack([TWO_MOONS_LABELED, Xu])
    y = np.r_[np.array([1, 0], np.int64), yu]
    lab = np.array([[0, 1]], dtype=np.int64)
    unl = np.arange(2, 2 + n_unlabeled, dtype=np.int64)[None, :]
    return Dataset(name=f"two_moons[seed={seed}]", X=X, y=y, class_names=("lower moon", "upper moon"),
                   X_test=Xt, y_test=yt, splits={2: (lab, unl)},
                   citation="JMLR 2008 Sec. 5.1; NIPS 2006 Sec. 7.1", source="synthetic (data_registry.synthetic)",
                   description=f"two moons, 2 fixed labeled + {n_unlabeled} unlabeled points, noise {noise}")


def two_circles(seed: int, n: int = 200, noise: float = 0.05, radii=(0.5, 1.0), n_test: int = 200) -> Dataset:
    """Two concentric circles (ICML 2006 Sec. 3.2, Fig. 4 "2CIRCLES"), inner circle = class 1.

    Points are spread uniformly in angle on each circle with Gaussian noise; there are no
    fixed labeled points (ICML 2006 draws 2 labeled examples at random per trial).

    Parameters
    ----------
    seed : int
        Realization seed (required), >= 0.
    n : int, default=200
        Points of the data set, >= 4 (half per circle).
    noise : float, default=0.05
        Standard deviation of the Gaussian noise added to each coordinate, >= 0.
    radii : (float, float), default=(0.5, 1.0)
        Radii of the inner (class 1) and outer (class 0) circle, ``0 <= inner < outer``.
    n_test : int, default=200
        Test points, >= 2 (half per circle).
    """
    _check_int(n, "n", 4, "a number of points")
    _check_int(n_test, "n_test", 2, "a number of points")
    noise = _check_real(noise, "noise", "the standard deviation of the Gaussian noise")
    if isinstance(radii, (str, bytes)) or np.ndim(radii) != 1 or len(radii) != 2:
        raise ValueError(f"radii must be two numbers (inner radius, outer radius), got {radii!r}")
    inner = _check_real(radii[0], "radii[0]", "the inner circle's radius")
    outer = _check_real(radii[1], "radii[1]", "the outer circle's radius")
    if not inner < outer:
        raise ValueError(f"radii must be (inner, outer) with inner < outer (the inner circle is class 1), got {radii!r}")
    rng = _rng(seed)

    def draw(m):
        k_in = m // 2
        theta = rng.uniform(0.0, 2 * np.pi, m)
        r = np.r_[np.full(k_in, radii[0]), np.full(m - k_in, radii[1])]
        X = np.column_stack([r * np.cos(theta), r * np.sin(theta)]) + noise * rng.standard_normal((m, 2))
        return X, np.r_[np.ones(k_in, np.int64), np.zeros(m - k_in, np.int64)]

    X, y = draw(n)
    Xt, yt = draw(n_test)
    return Dataset(name=f"two_circles[seed={seed}]", X=X, y=y, class_names=("outer", "inner"),
                   X_test=Xt, y_test=yt, citation="ICML 2006 Sec. 3.2", source="synthetic",
                   description=f"two concentric circles, radii {radii}, noise {noise}")


def g50c_like(seed: int, n: int = 550, d: int = 50, bayes_error: float = 0.05) -> Dataset:
    """Two unit-covariance Gaussians in ``d`` dimensions with the given Bayes error (g50c style).

    The means are ``+-mu`` with ``||mu|| = Phi^{-1}(1 - bayes_error)``, so the Bayes-optimal
    rule (the hyperplane through 0) errs with probability ``bayes_error`` (Bengio & Grandvalet
    2004, as used for g50c in JMLR 2008 Sec. 5.1). Classes are balanced.
    """
    _check_int(n, "n", 2, "a number of points")
    _check_int(d, "d", 1, "a number of dimensions")
    if not is_real(bayes_error):
        raise TypeError(f"bayes_error must be a number in (0, 0.5), got {bayes_error!r}")
    if not 0.0 < bayes_error < 0.5:
        raise ValueError(f"bayes_error must be in (0, 0.5), got {bayes_error}")
    rng = _rng(seed)
    mu = np.full(d, norm.ppf(1.0 - bayes_error) / np.sqrt(d))
    y = np.r_[np.ones(n - n // 2, np.int64), np.zeros(n // 2, np.int64)]
    X = rng.standard_normal((n, d)) + np.where(y[:, None] == 1, mu, -mu)
    return Dataset(name=f"g50c_like[seed={seed}]", X=X, y=y, class_names=("-1", "+1"),
                   citation="Bengio & Grandvalet 2004; JMLR 2008 Sec. 5.1", source="synthetic",
                   description=f"two Gaussians in {d} dims, Bayes error {bayes_error}")
