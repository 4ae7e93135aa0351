"""Every registered solver against a matrix of bad and degenerate inputs (``slow``).

Each case runs in a child process of its own with a wall-clock limit and is classified as

* ``clear``: a bad input refused by a ValueError or TypeError with a message of its own (what was
  wrong, what to do);
* ``refused``: an input the solver should accept refused that way (a failure, unless the refusal
  is one of :data:`REFUSALS`, each with its reason);
* ``valid``: an input the solver should accept gave finite outputs (and, under the protocol, a
  balance-enforcing solver met round(u r) exactly, JMLR 2008 eq. 3);
* ``unclear``: another exception, or one with a bare message;
* ``hang``: no answer within the limit;
* ``silent``: a bad input accepted, non-finite outputs, or a missed balance.

Run with ``pytest -m slow tests/test_bad_input_matrix.py -s`` to see the counts per solver; the
test fails on any ``unclear``, ``hang`` or ``silent`` outcome, and on a ``refused`` one not listed in
:data:`REFUSALS`.
"""

from __future__ import annotations

import collections
import multiprocessing
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from s3vm_bench.data_registry import Dataset, Split
from s3vm_bench.harness.protocol import ProtocolSettings, run_split
from s3vm_bench.solvers import REGISTRY, get_solver

pytestmark = pytest.mark.slow

SOLVERS = sorted(REGISTRY)
LINEAR_ONLY = {"tsvm_linear", "mfa"}
#: Limits that keep the exhaustive search short (its own time limit is tested elsewhere).
LIMITS = {"bb": {"node_limit": 3000, "time_limit": 5.0}}
#: Valid inputs a solver refuses with a clear message, and why that is right: (solver, case) -> reason.
REFUSALS = {
    ("grad_s3vm", "constant X"): "its features are the kernel-PCA map of JMLR 2008 Sec. 4 (Method 1), which a "
                                 "kernel without a positive eigenvalue does not have",
    ("cs3vm", "constant X"): "the same features as grad_s3vm",
    ("s3vm_path", "C* = 1e12"): "the S3VM path runs C* over the paper's range [0, C] (ICML 2013), so C* > C is not on it",
}
#: Seconds a case may take before it counts as a hang.
WALL = 120.0


def _base(n=30, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] > 0).astype(int)
    y_semi = y.copy()
    lab = np.r_[np.flatnonzero(y == 1)[:3], np.flatnonzero(y == 0)[:3]]
    y_semi[np.setdiff1d(np.arange(n), lab)] = -1
    return X, y_semi


def _estimator_cases():
    """(name, expectation, parameter the case needs or None, builder -> (X, y, params))."""
    X, y = _base()
    obj = y.astype(object)
    cases = [
        ("X with NaN", "refuse", None, lambda: (np.where(np.arange(X.size).reshape(X.shape) == 4, np.nan, X), y, {})),
        ("X with inf", "refuse", None, lambda: (np.where(np.arange(X.size).reshape(X.shape) == 4, np.inf, X), y, {})),
        ("X 1-D", "refuse", None, lambda: (X[:, 0], y, {})),
        ("X 3-D", "refuse", None, lambda: (X[:, :, None], y, {})),
        ("X of words", "refuse", None, lambda: (np.full(X.shape, "a"), y, {})),
        ("X and y of different lengths", "refuse", None, lambda: (X[:-2], y, {})),
        ("X without rows", "refuse", None, lambda: (X[:0], y[:0], {})),
        ("y all unlabeled", "refuse", None, lambda: (X, np.full(y.size, -1), {})),
        ("y one labeled class", "refuse", None, lambda: (X, np.where(y == 0, 0, -1), {})),
        ("y with NaN", "refuse", None, lambda: (X, np.where(np.arange(y.size) == 7, np.nan, y.astype(float)), {})),
        ("y 2-D", "refuse", None, lambda: (X, np.c_[y, y], {})),
        ("y mixing words and numbers", "refuse", None,
         lambda: (X, np.where(y == 1, "pos", obj).astype(object), {})),
        ("C = -1", "refuse", "C", lambda: (X, y, {"C": -1.0})),
        ("C = NaN", "refuse", "C", lambda: (X, y, {"C": float("nan")})),
        ("sigma = 0", "refuse", "sigma", lambda: (X, y, {"sigma": 0.0})),
        ("kernel = 'poly'", "refuse", "kernel", lambda: (X, y, {"kernel": "poly"})),
        ("r = 1.5", "refuse", "r", lambda: (X, y, {"r": 1.5})),
        ("C_star = -1", "refuse", "C_star", lambda: (X, y, {"C_star": -1.0})),
        ("max_iter = 0", "refuse", "max_iter", lambda: (X, y, {"max_iter": 0})),
        ("fully labeled y", "accept", None, lambda: (X, (X[:, 0] > 0).astype(int), {})),
        ("text labels, '-1' unlabeled", "accept", None,
         lambda: (X, np.where(y == -1, "-1", np.where(y == 1, "pos", "neg")), {})),
        ("labels 3 and 7", "accept", None, lambda: (X, np.where(y == -1, -1, np.where(y == 1, 7, 3)), {})),
        ("one unlabeled point", "accept", None, lambda: (X, np.where(np.arange(y.size) == 29, -1, (X[:, 0] > 0)), {})),
        ("X as lists", "accept", None, lambda: (X.tolist(), y, {})),
        ("one feature", "accept", None, lambda: (X[:, :1], y, {})),
        ("sparse X", "accept", None, lambda: (sp.csr_matrix(X), y, {})),
    ]
    return cases


def _protocol_cases():
    """Degenerate data under the protocol: (name, X transform, settings overrides)."""
    return [("constant X", lambda X: np.full_like(X, 2.0), {}),
            ("X x 1e8", lambda X: X * 1e8, {}),
            ("X x 1e-8", lambda X: X * 1e-8, {}),
            ("duplicated rows", lambda X: np.repeat(X[:15], 2, axis=0), {}),
            ("C* = 1e12", lambda X: X, {"C_star": 1e12})]


def _run_estimator(name, build):
    X, y, params = build()
    cls = get_solver(name)
    est = cls()
    names = est.get_params(deep=False)
    base = {k: v for k, v in LIMITS.get(name, {}).items() if k in names}
    if name in LINEAR_ONLY and "kernel" in names and "kernel" not in params:
        base["kernel"] = "linear"
    est.set_params(**(base | params))
    est.fit(X, y)
    out = np.asarray(est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X), dtype=float)
    return bool(np.all(np.isfinite(out)))


def _run_protocol(name, transform, overrides):
    X, y = _base(seed=1)
    y01 = (X[:, 0] > 0).astype(int)
    X = transform(X)
    lab = np.r_[np.flatnonzero(y01 == 1)[:3], np.flatnonzero(y01 == 0)[:3]]
    unl = np.setdiff1d(np.arange(y01.size), lab)
    e = np.empty(0, dtype=int)
    ds, split = Dataset("bad", X, y01, ("0", "1")), Split("bad", 0, None, np.sort(lab), unl, e, e)
    settings = ProtocolSettings(kernel="linear" if name in LINEAR_ONLY else "rbf", sigma=1.0, C=1.0, **overrides)
    cls = get_solver(name)
    res = run_split(cls, LIMITS.get(name, {}), ds, split, settings)
    if getattr(cls, "evaluation", "transductive") == "cv5":
        return bool(0.0 <= res.unlabeled_error <= 1.0)
    finite = all(np.all(np.isfinite(b.unlabeled_outputs)) for b in res.binary)
    exact = all(b.n_pos == b.n_pos_target for b in res.binary) or getattr(cls, "balance", None) not in (
        "threshold", "mean_output")
    return finite and exact


def _child(conn, kind, name, case):
    warnings.simplefilter("ignore")
    try:
        ok = _run_estimator(name, case) if kind == "estimator" else _run_protocol(name, *case)
        conn.send(("returned", ok, ""))
    except (ValueError, TypeError) as exc:
        conn.send(("clear-type", None, f"{type(exc).__name__}: {exc}"))
    except Exception as exc:  # classified below
        conn.send(("other", None, f"{type(exc).__name__}: {exc}"))
    conn.close()


def _outcome(kind, name, case, expectation):
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, kind, name, case), daemon=True)
    proc.start()
    send.close()
    got, died = None, False
    if recv.poll(WALL):
        try:
            got = recv.recv()
        except EOFError:  # the child died without an answer
            died = True
    if proc.is_alive():
        proc.kill()
    proc.join(5)
    if died:
        return "unclear", f"the process died (exit {proc.exitcode})"
    if got is None:
        return "hang", f"no answer in {WALL} s"
    how, ok, msg = got
    if how == "clear-type":
        # a message of its own: more than a few words, no internal array dump
        if len(msg) <= 30 or "Traceback" in msg:
            return "unclear", msg
        return ("clear" if expectation == "refuse" else "refused"), msg
    if how == "other":
        return "unclear", msg
    if expectation == "refuse":
        return "silent", "accepted"
    return ("valid" if ok else "silent"), ("" if ok else "non-finite outputs or missed balance")


def test_bad_input_matrix_has_no_unclear_hang_or_silent_outcome():
    counts = collections.Counter()
    per_solver = collections.defaultdict(collections.Counter)
    bad = []
    for name in SOLVERS:
        names = get_solver(name)().get_params(deep=False)
        for case, expectation, needs, build in _estimator_cases():
            if needs is not None and needs not in names:
                continue
            outcome, msg = _outcome("estimator", name, build, expectation)
            counts[outcome] += 1
            per_solver[name][outcome] += 1
            if outcome in ("unclear", "hang", "silent") or (outcome == "refused" and (name, case) not in REFUSALS):
                bad.append((name, case, outcome, msg[:200]))
        for case, transform, overrides in _protocol_cases():
            outcome, msg = _outcome("protocol", name, (transform, overrides), "accept")
            counts[outcome] += 1
            per_solver[name][outcome] += 1
            if outcome in ("unclear", "hang", "silent") or (outcome == "refused" and (name, case) not in REFUSALS):
                bad.append((name, case, outcome, msg[:200]))
    kinds = ("clear", "valid", "refused", "unclear", "hang", "silent")
    print("\nsolver               " + " ".join(f"{k:>8}" for k in kinds))
    for name in SOLVERS:
        print(f"{name:<20} " + " ".join(f"{per_solver[name][k]:8d}" for k in kinds))
    print(f"{'total':<20} " + " ".join(f"{counts[k]:8d}" for k in kinds))
    for row in bad:
        print("  ", row)
    assert not bad, f"{len(bad)} case(s) unclear, hung or silent: {bad[:5]}"
