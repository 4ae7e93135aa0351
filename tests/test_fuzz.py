"""Property-based fuzzing of every registered solver under the protocol (hypothesis).

Random small problems, degenerate ones included (constant features, points far apart or all
alike at the kernel's width, duplicated rows, few labels): each run either raises a clear
ValueError/TypeError or gives finite outputs, and a balance-enforcing solver meets round(u r)
exactly (JMLR 2008 eq. 3). The default run tries a few problems per solver; the ``slow`` marker
runs a larger sweep.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from s3vm_bench.data_registry import Dataset, Split
from s3vm_bench.harness.protocol import ProtocolSettings, run_split
from s3vm_bench.solvers import REGISTRY, get_solver

SOLVERS = sorted(REGISTRY)
#: Limits that keep the exhaustive search short on random problems (its time limit is tested elsewhere).
PARAMS = {"bb": {"node_limit": 3000, "time_limit": 5.0}}
LINEAR_ONLY = {"tsvm_linear", "mfa"}


@st.composite
def problems(draw):
    n = draw(st.integers(8, 26))
    d = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**31 - 1))
    kind = draw(st.sampled_from(["plain", "constant", "far", "near", "duplicated", "integer"]))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if kind == "constant":
        X[:] = draw(st.floats(-5, 5))
    elif kind == "far":
        X *= 1e8
    elif kind == "near":
        X *= 1e-8
    elif kind == "duplicated":
        X = np.repeat(X[: (n + 1) // 2], 2, axis=0)[:n]
    elif kind == "integer":
        X = np.round(X)
    y = rng.permutation(np.arange(n) % 2)
    n_lab = draw(st.integers(2, n - 2))
    # the protocol needs a labeled point of each class and an unlabeled point of each
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    lab = np.concatenate([pos[:1], neg[:1], rng.permutation(np.concatenate([pos[1:-1], neg[1:-1]]))[: n_lab - 2]])
    unl = np.setdiff1d(np.arange(n), lab)
    sigma = draw(st.sampled_from([0.1, 1.0, 10.0]))
    C = draw(st.sampled_from([0.01, 1.0, 100.0]))
    e = np.empty(0, dtype=int)
    return kind, Dataset("fuzz", X, y, ("0", "1")), Split("fuzz", 0, None, np.sort(lab), unl, e, e), sigma, C


def _check(name, problem):
    kind, ds, split, sigma, C = problem
    cls = get_solver(name)
    settings = ProtocolSettings(kernel="linear" if name in LINEAR_ONLY else "rbf", sigma=sigma, C=C)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (RuntimeWarning, ConvergenceWarning, UserWarning))
        try:
            res = run_split(cls, PARAMS.get(name, {}), ds, split, settings)
        except (ValueError, TypeError) as exc:
            msg = str(exc)
            assert len(msg) > 20 and "Traceback" not in msg, f"{name} on {kind}: unclear error {msg!r}"
            return
    if getattr(cls, "evaluation", "transductive") == "cv5":
        assert 0.0 <= res.unlabeled_error <= 1.0
        return
    for b in res.binary:
        assert np.all(np.isfinite(b.unlabeled_outputs)), f"{name} on {kind}: non-finite outputs"
        if getattr(cls, "balance", None) in ("threshold", "mean_output"):
            assert b.n_pos == b.n_pos_target, f"{name} on {kind}: {b.n_pos} positives, target {b.n_pos_target}"
    assert np.isfinite(res.objective) and 0.0 <= res.unlabeled_error <= 1.0


@pytest.mark.parametrize("name", SOLVERS)
@settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems())
def test_every_solver_on_random_and_degenerate_problems(name, problem):
    _check(name, problem)


@pytest.mark.slow
@pytest.mark.parametrize("name", SOLVERS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems())
def test_every_solver_on_many_random_problems(name, problem):
    _check(name, problem)
