"""Probe: could a low-rank-plus-residual completion bound certify the open Coil3 problems? (issue 6)

A measurement, not a bound the branch and bound uses. At the root of one binary problem
(labeled points only, value ``P_L*``), every completion ``y`` of the unlabeled points satisfies

    J(y) >= P_L* + min_{delta, beta} 1/2 delta^T R^+ delta + C* sum_x max(0, 1 - y_x (f_L(x) + delta_x + beta))^2

with ``R = K_UU`` and the bias shift ``beta`` free (valid: the labeled-only problem is 1-strongly
convex in ``w``), or ``R`` = the Schur residual of ``K_UU`` against the labeled support vectors
bordered with the bias, ``beta = 0`` (optimistic: the curvature at the labeled optimum, which is
only local). Writing ``delta = V_d c + e`` with ``V_d`` the top ``d`` eigenvectors of ``R`` and
charging ``e`` at the ``(d+1)``-th eigenvalue gives a relaxation whose inner part is separable
(each point's Moreau envelope ``h^2 / (1/C* + 2 lam_{d+1})``; the balance by sorting), so only the
``d`` (+1) outer variables are non-convex. The script minimizes them by multistart Powell: that
*over*-estimates the relaxation's global minimum, so if even that number is far below the
optimum, the bound is too weak to help, whatever ``d`` a certified outer search could afford.

Measured (stop 33, Coil3 split 6 class 0, optimum 92.89, root ``P_L*`` 8.85): the valid bound is
at most 11.3, 13.9, 20.8 and 38.8 for d = 2, 3, 10 and 40, the optimistic one at most 18.4, 22.1,
30.7 and 53.4; split 0 class 1 (optimum 101.08): valid <= 8.4 (d = 3), 37.9 (d = 40). The
residual spectrum decays slowly (``lam_11`` about 0.95, ``lam_31`` about 0.27 against a mean
diagonal of 1 and ``1/C*`` = 0.01), so the residual keeps every point cheap to fix::

    OPENBLAS_NUM_THREADS=1 python scripts/probe_lowrank_bound.py split6/class0 [split0/class1 ...]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.optimize import minimize

from s3vm_bench.harness.optima import REFERENCE_SETS, binary_problems
from s3vm_bench.harness.protocol import _gram
from s3vm_bench.solvers._primal import kernel_newton


def balanced_cost(z, k, a):
    """Cheapest labeling of outputs ``z`` with ``k`` positives, each point at ``max(0, 1 - y z)^2 / a``."""
    cost_pos = np.maximum(0.0, 1.0 - z) ** 2 / a
    cost_neg = np.maximum(0.0, 1.0 + z) ** 2 / a
    gain = cost_pos - cost_neg
    return cost_neg.sum() + (np.partition(gain, k - 1)[:k].sum() if k > 0 else 0.0)


def probe(key, dims=(0, 1, 2, 3, 5, 10, 20, 40), starts=12, seed=0):
    """Print the relaxed root bounds of Coil3 problem ``key`` (``"split6/class0"``) for each ``d``."""
    rng = np.random.default_rng(seed)
    split, label = (int(part.removeprefix(p)) for part, p in zip(key.split("/"), ("split", "class")))
    ref = REFERENCE_SETS["coil3"]
    ds, sp = ref.make(split)
    prob = next(p for p in binary_problems("coil3", ds, sp, ref.settings) if p.label == label)
    s = prob.settings
    K = _gram(prob.X, s)
    nl, yl, k = prob.n_lab, prob.y[: prob.n_lab], prob.k
    root = kernel_newton(K[:nl, :nl], yl, s.C)
    f_u = K[nl:, :nl] @ root.coef + root.intercept
    print(f"{key}: l={nl} u={K.shape[0] - nl} k={k} P_L*={root.objective:.2f}")
    K_uu = K[nl:, nl:]
    sv = np.flatnonzero(yl * (K[:nl, :nl] @ root.coef + root.intercept) < 1 - 1e-9)
    M = np.block([[K[np.ix_(sv, sv)] + np.eye(sv.size) / (2 * s.C), np.ones((sv.size, 1))],
                  [np.ones((1, sv.size)), np.zeros((1, 1))]])
    B = np.hstack([K[nl:][:, sv], np.ones((K_uu.shape[0], 1))])
    for name, R, free_bias in (("valid (K_UU, bias free)", K_uu, True),
                               ("optimistic (Schur residual)", K_uu - B @ np.linalg.solve(M, B.T), False)):
        lam, V = np.linalg.eigh(R)
        lam, V = lam[::-1].clip(0.0), V[:, ::-1]
        print(f"  {name}: eigenvalues {np.round(lam[:6], 3)}, mean diagonal {np.mean(np.diag(R)):.3g}")
        for d in dims:
            a = 1.0 / s.c_star + 2.0 * lam[d]
            V_d, lam_d = V[:, :d], lam[:d]

            def relaxed(p, d=d, a=a, V_d=V_d, lam_d=lam_d):
                c, beta = p[:d], (p[d] if free_bias else 0.0)
                return root.objective + np.sum(c * c / (2 * lam_d)) + balanced_cost(f_u + V_d @ c + beta, k, a)

            n_par = d + int(free_bias)
            if n_par == 0:
                best = relaxed(np.zeros(0))
            else:
                scale = np.r_[np.sqrt(lam_d), np.ones(n_par - d)]
                x0s = [np.zeros(n_par)] + [rng.normal(size=n_par) * scale for _ in range(starts)]
                best = min(minimize(relaxed, x0, method="Powell",
                                    options={"maxiter": 4000, "xtol": 1e-6, "ftol": 1e-9}).fun for x0 in x0s)
            print(f"    d={d:3d}  relaxed bound <= {best:.2f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problems", nargs="+", help="Coil3 entry keys, e.g. split6/class0")
    ap.add_argument("--starts", type=int, default=12, help="random starts of the outer search")
    args = ap.parse_args(argv)
    for key in args.problems:
        probe(key, starts=args.starts)


if __name__ == "__main__":
    main()
