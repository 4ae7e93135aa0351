"""Speed of the primal L2-SVM core (issue 3, "Speed"); a script, not a test.

(a) Linear L2-SVM-MFN (SIGIR 2006, Tables 1-3) on the ``text`` data set
    (1946 x 7511 sparse, all labels) against scikit-learn's
    ``LinearSVC(loss="squared_hinge", dual=False, penalty="l2")`` on the same
    objective: liblinear's primal L2-loss problem with the intercept as a
    regularized feature of value 1 (``intercept_scaling=1``) is
    ``1/2 (||w||^2 + b^2) + C sum max(0, 1 - y (w.x + b))^2``, which is
    ``l2svm_mfn(..., lam=1, cost=C, bias="regularized")``.  C = 31 is JMLR 2008
    Table 5's value for Text (chosen there for a Gaussian kernel; any C would
    do for a timing comparison, and this one is the suite's).
(b) Kernel Newton (JMLR 2008 eqs. 15-17; Chapelle 2007) on Uspst, digit 0
    versus the rest, Gaussian kernel sigma = 7.4, C = 38 (JMLR 2008 Table 5),
    all 2007 labels, against one dense Cholesky factorization of the
    2007 x 2007 kernel (+ 1e-8 ridge) timed in the same run.

Every timing is the median of ``--repeats`` runs after one warm-up; the
competitors are timed alternately so that both see the same machine state,
and ratios are ratios of those medians.  BLAS runs single-threaded by default
(``--threads 1``, through threadpoolctl): liblinear and scipy's sparse
products are single-threaded anyway, and a multi-threaded OpenBLAS on a shared
machine makes dense timings swing by an order of magnitude.  ``--threads 0``
keeps the library default.

Run:  .venv/bin/python scripts/bench_primal.py [--repeats 7] [--threads 1]
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
import scipy.linalg as sla
import sklearn
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_info, threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from s3vm_bench.solvers._kernels import gaussian_kernel  # noqa: E402
from s3vm_bench.solvers._primal import kernel_newton, l2svm_mfn, l2svm_objective  # noqa: E402

from s3vm_bench.data_registry import load_dataset  # noqa: E402


# Data through the registry (fetched and sha256-checked; S3VM_DATA_MIRROR=../shared/data works
# offline). Labels: text class 1 (mac) is +1; uspst y holds the digits 0..9.
def load_text():
    ds = load_dataset("text")
    return ds.X, np.where(ds.y == 1, 1.0, -1.0)


def load_uspst():
    ds = load_dataset("uspst")
    return ds.X, ds.y


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def alternate(fns, repeats):
    """Median seconds of each callable, run alternately after one warm-up each."""
    results = {name: fn() for name, fn in fns.items()}  # warm-up (imports, caches)
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            dt, results[name] = timed(fn)
            times[name].append(dt)
    return {name: statistics.median(ts) for name, ts in times.items()}, results


def bench_text(repeats, C=31.0):
    X, y = load_text()
    print(f"(a) text: X {X.shape[0]}x{X.shape[1]} CSR, nnz={X.nnz}, C={C:g}, all labels")

    def mfn():
        return l2svm_mfn(X, y, C, lam=1.0, bias="regularized")

    def svc(tol):
        def fit():
            m = LinearSVC(C=C, loss="squared_hinge", dual=False, penalty="l2", tol=tol, max_iter=10000)
            return m.fit(X, y)

        return fit

    med, res = alternate({"mfn": mfn, "svc": svc(1e-4), "svc6": svc(1e-6)}, repeats)

    def svc_obj(m):
        return l2svm_objective(y, C, m.coef_.ravel(), m.intercept_[0], X=X, bias="regularized")

    r = res["mfn"]
    print(
        f"  L2-SVM-MFN (bias regularized, lam=1, cost=C): objective {r.objective:.10g}  "
        f"median {med['mfn'] * 1e3:.1f} ms  [{r.n_iter} MFN iters, {r.n_inner_iter} CGLS iters, "
        f"stop: {r.stop_reason}]"
    )
    for key, tol in (("svc", 1e-4), ("svc6", 1e-6)):
        m = res[key]
        print(
            f"  LinearSVC(tol={tol:g}{', default' if tol == 1e-4 else ''}): objective "
            f"{svc_obj(m):.10g}  median {med[key] * 1e3:.1f} ms  [{int(np.max(m.n_iter_))} iters]"
        )
    print(f"  ratio MFN / LinearSVC(tol=1e-4, default) = {med['mfn'] / med['svc']:.2f}")
    print(f"  ratio MFN / LinearSVC(tol=1e-6)          = {med['mfn'] / med['svc6']:.2f}")


def bench_uspst(repeats, sigma=7.4, C=38.0, digit=0, ridge=1e-8):
    X, labels = load_uspst()
    y = np.where(labels == digit, 1.0, -1.0)
    n = X.shape[0]
    t_kernel, K = timed(lambda: gaussian_kernel(X, sigma=sigma))
    print(
        f"(b) uspst: digit {digit} vs rest, n={n} ({int((y > 0).sum())} positive), "
        f"Gaussian sigma={sigma:g}, C={C:g}, all labels; kernel matrix built in {t_kernel * 1e3:.0f} ms (not timed below)"
    )
    Kr = K + ridge * np.eye(n)
    subset = n // 5
    med, res = alternate(
        {
            "newton": lambda: kernel_newton(K, y, C),
            "newton_sub": lambda: kernel_newton(K, y, C, init_subset=subset, seed=0),
            "chol": lambda: sla.cho_factor(Kr, lower=True),
        },
        repeats,
    )
    for key, label in (("newton", "from beta=0"), ("newton_sub", f"init_subset={subset}")):
        r = res[key]
        print(
            f"  kernel Newton ({label}): objective {r.objective:.10g}  median {med[key] * 1e3:.1f} ms  "
            f"[{r.n_iter} Newton steps, {r.n_inner_iter} Cholesky factorizations, "
            f"{int(r.support.sum())} support vectors, stop: {r.stop_reason}]"
        )
    print(f"  one dense Cholesky of K + {ridge:g} I ({n}x{n}): median {med['chol'] * 1e3:.1f} ms")
    print(f"  ratio Newton (from 0) / Cholesky       = {med['newton'] / med['chol']:.2f}")
    print(f"  ratio Newton (init_subset) / Cholesky  = {med['newton_sub'] / med['chol']:.2f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", choices=["text", "uspst"], default=None)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (0: library default)")
    args = parser.parse_args(argv)
    limits = threadpool_limits(limits=args.threads) if args.threads > 0 else None
    blas = ", ".join(f"{d['internal_api']} x{d['num_threads']}" for d in threadpool_info()) or "unknown"
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"scikit-learn {sklearn.__version__}, {os.cpu_count()} CPUs, BLAS threads: {blas}, "
        f"median of {args.repeats} runs"
    )
    try:
        if args.only in (None, "text"):
            bench_text(args.repeats)
        if args.only in (None, "uspst"):
            bench_uspst(args.repeats)
    finally:
        if limits is not None:
            limits.restore_original_limits()


if __name__ == "__main__":
    main()
