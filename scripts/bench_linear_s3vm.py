"""Linear TSVM (S=1, S=max) and MFA on pcmac beside SIGIR 2006 Table 9 (issue 4); a script, not a test.

Setting (SIGIR 2006 Sec. 4 and Table 9): the ``text`` data set (pcmac, 1946 x 7511 CSR), the
SIGIR split protocol (``data_registry.sigir2006_splits``: 486 test points, the rest training,
class ratios kept), ``--n-labeled`` labeled points (default 45, the low end of the learning
curve), the first split; lambda = 0.001, lambda' = 1 in the SIGIR parameterization (bias
regularized, ``param="sigir"``); r is the true positive fraction of the unlabeled points.

Each solver runs through the common protocol (``harness.protocol.run_split``) with the linear
kernel and the JMLR costs that correspond to lambda, lambda' (C = 1/(2 lambda l),
C* = lambda'/(2 lambda u)), so the outputs are thresholded to exactly round(u r) positives
(``balance = "threshold"``) before the unlabeled (transduction) and test errors are counted,
and the protocol objective is the free-bias L2-SVM objective on the completed labels.
Seconds are those of ``fit`` alone, median of ``--repeats`` runs after one warm-up, solvers
alternated: wall time and CPU time of the process (the latter is what to read on a shared,
loaded machine). BLAS runs single-threaded by default (``--threads 1``);
the sparse products are single-threaded anyway.

Paper values: SIGIR 2006 Table 9, pcmac row (MATLAB with a C CGLS core, first split at the low
end of the learning curve; the table does not say which error rate it lists).

Run:  .venv/bin/python scripts/bench_linear_s3vm.py [--repeats 5] [--n-labeled 45] [--splits 1]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import scipy
from threadpoolctl import threadpool_info, threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from s3vm_bench.data_registry import load_dataset, sigir2006_splits  # noqa: E402
from s3vm_bench.harness.protocol import ProtocolSettings, run_split  # noqa: E402
from s3vm_bench.solvers._balance import n_positive, threshold_shift  # noqa: E402
from s3vm_bench.solvers.mfa import MFA  # noqa: E402
from s3vm_bench.solvers.svm import SVM  # noqa: E402
from s3vm_bench.solvers.tsvm_linear import LinearTSVM  # noqa: E402

#: SIGIR 2006 Table 9, pcmac: (seconds, error rate). SVM-light's TSVM for reference.
TABLE9_PCMAC = {"SVMlight": (167.0, 0.0597), "S=1": (4.0, 0.0782), "S=max": (2.0, 0.0802), "MFA": (12.0, 0.0556)}

LAM, LAM_U = 0.001, 1.0


def solvers():
    sigir = {"param": "sigir", "lam": LAM, "lam_u": LAM_U}
    return {"S=1": (LinearTSVM, sigir | {"S": 1}), "S=max": (LinearTSVM, sigir | {"S": "max"}),
            "MFA": (MFA, sigir)}


def settings_for(split):
    l, u = split.labeled.size, split.unlabeled.size
    return ProtocolSettings(kernel="linear", C=1.0 / (2 * LAM * l), C_star=LAM_U / (2 * LAM * u))


def bench_first_split(ds, n_labeled, repeats):
    split = sigir2006_splits(ds, n_labeled=n_labeled, n_splits=1)[0]
    settings = settings_for(split)
    l, u, t = split.labeled.size, split.unlabeled.size, split.test.size
    print(f"text (pcmac): {ds.n_samples} x {ds.n_features} CSR, SIGIR split 0: l={l}, u={u}, test={t}; "
          f"lambda={LAM:g}, lambda'={LAM_U:g} (C={settings.C:.6g}, C*={settings.c_star:.6g} for the protocol "
          f"objective)")
    table = solvers()
    idx = np.r_[split.labeled, split.unlabeled]
    X_tr = ds.X[idx]
    y_fit = ds.y[idx].copy()
    y_fit[l:] = -1
    r = float(np.mean(ds.y[split.unlabeled] == 1))

    def fit_once(cls, params):
        est = cls(r=r, **params)
        w0, c0 = time.perf_counter(), time.process_time()
        est.fit(X_tr, y_fit)
        return time.perf_counter() - w0, time.process_time() - c0

    wall = {name: [] for name in table}
    cpu = {name: [] for name in table}
    for name, (cls, params) in table.items():  # warm-up
        fit_once(cls, params)
    for _ in range(repeats):
        for name, (cls, params) in table.items():  # alternate so all see the same machine state
            w_s, c_s = fit_once(cls, params)
            wall[name].append(w_s)
            cpu[name].append(c_s)
    res = {name: run_split(cls, params, ds, split, settings) for name, (cls, params) in table.items()}
    sup = run_split(SVM, {"kernel": "linear"}, ds, split, settings)
    print(f"\n{'method':<8} {'wall s':>7} {'cpu s':>7} {'paper s':>8} {'unl err':>8} {'test err':>9} {'paper err':>10} "
          f"{'protocol obj':>13} {'n_iter':>7} {'balance':>8}")
    for name, r0 in res.items():
        p_s, p_e = TABLE9_PCMAC[name]
        print(f"{name:<8} {statistics.median(wall[name]):>7.3f} {statistics.median(cpu[name]):>7.3f} {p_s:>8.0f} "
              f"{r0.unlabeled_error:>8.4f} {r0.test_error:>9.4f} {p_e:>10.4f} {r0.objective:>13.6g} "
              f"{r0.binary[0].n_iter:>7} {str(r0.balance_exact):>8}")
        print(f"{'':<8} wall runs (s): {[round(v, 3) for v in wall[name]]}")
    p_s, p_e = TABLE9_PCMAC["SVMlight"]
    print(f"{'SVMlight':<8} {'-':>7} {'-':>7} {p_s:>8.0f} {'-':>8} {'-':>9} {p_e:>10.4f}   (paper only: SVM-light TSVM)")
    print(f"{'SVM':<8} {sup.fit_seconds:>7.3f} {'-':>7} {'-':>8} {sup.unlabeled_error:>8.4f} {sup.test_error:>9.4f} {'-':>10} "
          f"{sup.objective:>13.6g}   (supervised linear L2-SVM, C={settings.C:.6g}, labeled only)")
    print("wall/cpu s: median of the fit alone (time.perf_counter / time.process_time); errors, protocol objective "
          "and balance from harness.protocol.run_split.\nn_iter: L2-SVM-MFN trainings for the TSVM (the labeled-only "
          "one included); w/p alternations for MFA.")
    y_unl, y_test = ds.y[split.unlabeled], ds.y[split.test]
    print("\nOne direct fit each: own objective, SIGIR eq. (18) at the returned w (SIGIR units, bias regularized);")
    print("errors of the solver's own unlabeled labels and of sign(w.x + b) on the test set, without the")
    print("protocol's threshold shift (which puts the threshold midway between the k-th and (k+1)-th unlabeled")
    print("outputs and so moves every test output by half a low-density gap when sign(f) is off by one point):")
    for name, (cls, params) in table.items():
        m = cls(r=r, **params).fit(ds.X[idx], y_fit)
        info = m.binary_fits_[0].info
        eq18 = info.get("eq18_objective", info["objective"])
        o_u = m.decision_function(ds.X[split.unlabeled])
        own_unl = float(np.mean((info["y_unlabeled"] > 0).astype(int) != y_unl))
        sign_test = float(np.mean(m.predict(ds.X[split.test]) != y_test))
        extra = (f"{info['n_switches']} label switches, {info['n_mfn']} MFN calls, {info['n_cg']} CGLS iterations"
                 if cls is LinearTSVM else
                 f"{info['n_outer']} temperatures, {info['n_mfn']} w-steps, {info['n_cg']} CGLS iterations, "
                 f"stop: {m.stop_reason_[0]}")
        print(f"  {name:<6} eq18 {eq18:.6f}  unl err (own labels) {own_unl:.4f}  test err sign(f) {sign_test:.4f}  "
              f"sign(f) positives {int(np.sum(o_u > 0))} of target {int(np.sum(info['y_unlabeled'] > 0))}  "
              f"[{extra}]")


def bench_splits(ds, n_labeled, n_splits):
    """Errors over several splits, from one direct fit per split and solver.

    The protocol's numbers are reproduced here without refitting: unlabeled outputs and test
    outputs shifted by ``threshold_shift`` exactly as ``harness.protocol`` does for
    ``balance = "threshold"`` solvers; "sign" is the test error of sign(w.x + b) unshifted.
    """
    splits = sigir2006_splits(ds, n_labeled=n_labeled, n_splits=n_splits)
    errs = {name: [] for name in solvers()}
    for split in splits:
        idx = np.r_[split.labeled, split.unlabeled]
        l = split.labeled.size
        y_fit = ds.y[idx].copy()
        y_fit[l:] = -1
        y_unl, y_test = ds.y[split.unlabeled], ds.y[split.test]
        r = float(np.mean(y_unl == 1))
        k = n_positive(y_unl.size, r)
        for name, (cls, params) in solvers().items():
            m = cls(r=r, **params).fit(ds.X[idx], y_fit)
            o_u = m.decision_function(ds.X[split.unlabeled])
            o_t = m.decision_function(ds.X[split.test])
            t = threshold_shift(o_u, k)
            errs[name].append((np.mean((o_u - t > 0) != (y_unl == 1)), np.mean((o_t - t > 0) != (y_test == 1)),
                               np.mean((o_t > 0) != (y_test == 1))))
    print(f"\nMean +- sd over {n_splits} SIGIR splits (l={n_labeled}): unlabeled error (protocol) / test error "
          "(protocol shift) / test error sign(f)")
    for name, e in errs.items():
        e = np.array(e)
        cols = "   ".join(f"{e[:, c].mean():.4f} +- {e[:, c].std(ddof=1):.4f}" for c in range(3))
        print(f"  {name:<6} {cols}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n-labeled", type=int, default=45)
    parser.add_argument("--splits", type=int, default=1, help="also report mean errors over this many splits")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (0: library default)")
    args = parser.parse_args(argv)
    limits = threadpool_limits(limits=args.threads) if args.threads > 0 else None
    blas = ", ".join(f"{d['internal_api']} x{d['num_threads']}" for d in threadpool_info()) or "unknown"
    print(f"python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
          f"{os.cpu_count()} CPUs, BLAS threads: {blas}, median of {args.repeats} runs")
    try:
        ds = load_dataset("text")
        bench_first_split(ds, args.n_labeled, args.repeats)
        if args.splits > 1:
            bench_splits(ds, args.n_labeled, args.splits)
    finally:
        if limits is not None:
            limits.restore_original_limits()


if __name__ == "__main__":
    main()
