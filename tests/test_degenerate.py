"""Degenerate data under the protocol: every balance-enforcing solver meets round(u r) exactly, or
says why it cannot; never a silent miss (JMLR 2008 eq. 3)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from s3vm_bench.data_registry import Dataset, Split
from s3vm_bench.harness.protocol import ProtocolSettings, break_ties, run_split
from s3vm_bench.solvers import REGISTRY, get_solver

BALANCED = sorted(n for n in REGISTRY if getattr(get_solver(n), "balance", None) in ("threshold", "mean_output"))
#: Parameters that keep the slow searches short on these tiny problems.
FAST = {"bb": {"time_limit": 5.0, "node_limit": 20000}}


def _problem(kind: str, n: int = 28, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X = {"constant": np.ones_like(X), "far": X * 1e8, "near": X * 1e-8, "plain": X}[kind]
    y = np.arange(n) % 2
    e = np.empty(0, dtype=int)
    lab = np.array([0, 1, 2, 3])
    return Dataset(f"degenerate-{kind}", X, y, ("0", "1")), Split("t", 0, None, lab, np.arange(4, n), e, e)


#: (solver, kind) pairs; the linear solvers' constant case is X - mean = 0, the 'near' case's limit.
CASES = [(name, kind) for name in BALANCED for kind in ("constant", "far", "near")
         if not (name in ("tsvm_linear", "mfa") and kind == "constant")]


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_degenerate_kernels_get_exact_balance(name, kind):
    ds, split = _problem(kind)
    settings = ProtocolSettings(kernel="linear" if name in ("tsvm_linear", "mfa") else "rbf", sigma=1.0, C=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (RuntimeWarning, ConvergenceWarning, UserWarning))
        try:
            res = run_split(get_solver(name), FAST.get(name, {}), ds, split, settings)
        except ValueError as exc:  # allowed only with the reason
            assert "constant" in str(exc), exc
            return
    (b,) = res.binary
    assert b.n_pos == b.n_pos_target == 12 and res.balance_exact
    assert np.all(np.isfinite(b.unlabeled_outputs))


def test_grad_da_with_a_huge_c_star_meets_the_balance():
    ds, split = _problem("plain")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (RuntimeWarning, ConvergenceWarning))
        res = run_split(get_solver("grad_da"), {}, ds, split, ProtocolSettings(sigma=1.0, C=1.0, C_star=1e12))
    assert res.balance_exact and res.binary[0].n_pos == 12


def test_break_ties_moves_only_the_tied_outputs_and_says_so():
    o = np.array([2.0, 0.5, 0.5, 0.5, -1.0])
    with pytest.warns(RuntimeWarning, match="1 unlabeled outputs tied"):
        out = break_ties(o, 3, "toy")
    assert np.sum(out > 0) == 3 and out[0] == 2.0 and out[4] == -1.0
    assert list(out[1:4] > 0) == [True, True, False]  # equal outputs taken in order
    with pytest.warns(RuntimeWarning, match="all unlabeled outputs are equal"):
        out = break_ties(np.zeros(4), 1)
    assert list(out > 0) == [True, False, False, False]
    same = np.array([1.0, -1.0])
    assert break_ties(same, 1) is not None and np.array_equal(break_ties(same, 1), same)  # nothing to do


def test_bb_has_a_default_time_limit_and_warns_when_a_limit_stops_it():
    from s3vm_bench.solvers.bb import BranchAndBoundS3VM

    assert BranchAndBoundS3VM().time_limit == 600.0
    ds, split = _problem("plain", n=40)
    y = np.where(np.isin(np.arange(40), split.labeled), ds.y, -1)
    with pytest.warns(ConvergenceWarning, match="stopped by a limit"):
        est = BranchAndBoundS3VM(sigma=1.0, node_limit=2, r=0.5).fit(ds.X, y)
    assert est.status_ == ["node_limit"]
