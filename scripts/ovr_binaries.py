"""Per-binary diagnosis of one-versus-rest runs: objective, error and the leading kernel components.

The common protocol (``harness.protocol.run_split``) reports one objective and one error per split:
the mean of the binary objectives and the error of the argmax. This script runs each solver on
the chosen one-versus-rest problems of one split alone, through the same protocol steps
(dichotomic search or threshold, then the L2-SVM objective of the completed labeling), and prints
per binary problem::

    class, solver, protocol objective, binary unlabeled error, positives, seconds, r~ solves

With ``--pc N`` it also prints the correlation of each solver's unlabeled outputs with the first N
principal components of the centered kernel matrix of the unlabeled points (kernel PCA), and that
of the true labels. This is how the stop 24 note showed that cS3VM (JMLR 2008 Alg. 5) follows the
leading component on Uspst's one-versus-rest problems while nabla-S3VM follows the class::

    OPENBLAS_NUM_THREADS=1 python scripts/ovr_binaries.py uspst --split 0 --classes 2 4 \\
        --solver grad_s3vm --solver cs3vm --solver cs3vm:n_smooth=30 --pc 5

``--pc`` forms the dense u x u kernel matrix of the unlabeled points (u = 1957 on Uspst): a
diagnostic for the small benchmark sets, not for the large text sets.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.linalg import eigh

from s3vm_bench.data_registry import jmlr2008_splits, load_dataset
from s3vm_bench.harness.protocol import ProtocolSettings, _fit_binary_problem, _gram, protocol_objective
from s3vm_bench.solvers import get_solver
from s3vm_bench.solvers._balance import exact_r


def parse_solver(text: str):
    """``name[:param=value[:param=value...]]`` -> (label, solver class, params).

    ``name`` is a registry name or ``package.module:Class``; values are read as int, then float,
    then kept as strings.
    """
    parts = text.split(":")
    first = next((i for i, part in enumerate(parts) if "=" in part), len(parts))
    name, pairs = ":".join(parts[:first]), parts[first:]
    params = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"solver parameter {pair!r} in {text!r} is not of the form name=value")
        for cast in (int, float):
            try:
                params[key] = cast(raw)
                break
            except ValueError:
                continue
        else:
            params[key] = raw
    return text, get_solver(name), params


def leading_components(K_unl: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Top ``n`` eigenpairs of the doubly centered kernel matrix (kernel PCA scores, up to scale)."""
    u = K_unl.shape[0]
    if not 1 <= n <= u:
        raise ValueError(f"asked for {n} components of a {u} x {u} kernel matrix; pass 1 <= --pc <= {u}")
    row = K_unl.mean(axis=0)
    Kc = K_unl - row[None, :] - row[:, None] + row.mean()
    vals, vecs = eigh(Kc, subset_by_index=[u - n, u - 1])  # only the top n (LAPACK ?syevr)
    return vals[::-1], vecs[:, ::-1]


def corr(a, b) -> float:
    return float(np.corrcoef(a, b)[0, 1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("--split", type=int, default=0)
    ap.add_argument("--classes", type=int, nargs="+", help="classes to run (default: all)")
    ap.add_argument("--solver", action="append", required=True,
                    help="registry name or package.module:Class, optionally followed by :param=value pairs (repeatable)")
    ap.add_argument("--pc", type=int, default=0, help="correlate outputs with this many kernel components")
    args = ap.parse_args(argv)
    if args.pc < 0:
        ap.error("--pc must be >= 0")
    try:
        solvers = [parse_solver(s) for s in args.solver]
    except (ValueError, KeyError) as exc:
        ap.error(str(exc))

    ds = load_dataset(args.dataset)
    splits = jmlr2008_splits(ds)
    if not 0 <= args.split < len(splits):
        raise SystemExit(f"{args.dataset} has splits 0..{len(splits) - 1}; got --split {args.split}")
    split = splits[args.split]
    settings = ProtocolSettings.for_dataset(args.dataset)
    idx = np.r_[split.labeled, split.unlabeled]
    X, y_true = ds.X[idx], ds.y[idx]
    n_lab = split.labeled.size
    gram = _gram(X, settings) if settings.kernel == "rbf" else None
    classes = args.classes if args.classes is not None else list(range(ds.n_classes))
    bad = sorted(set(classes) - set(range(ds.n_classes)))
    if bad:
        raise SystemExit(f"{args.dataset} has classes 0..{ds.n_classes - 1}; got {bad}")
    if args.pc and gram is None:
        raise SystemExit("--pc needs the rbf kernel (the Table 5 setting of the data set)")
    comps = leading_components(gram[n_lab:, n_lab:], args.pc) if args.pc else None
    if comps is not None:
        print("leading eigenvalues of the centered unlabeled kernel:", np.round(comps[0], 2))

    for k in classes:
        y_pm = np.where(y_true == k, 1.0, -1.0)
        y_fit = np.where(y_true == k, 1, 0)
        y_fit[n_lab:] = -1
        r = exact_r(y_pm[n_lab:])
        if comps is not None:
            print(f"class {k}: corr(true labels, PC1..{args.pc}) =",
                  np.round([corr(y_pm[n_lab:], v) for v in comps[1].T], 3))
        for label, cls, params in solvers:
            _, unl_out, _, seconds, solves = _fit_binary_problem(cls, params, settings, X, y_fit, n_lab, None, r)
            obj = protocol_objective(X[:n_lab], y_pm[:n_lab], X[n_lab:], unl_out, settings, gram)
            err = float(np.mean(np.where(unl_out > 0, 1.0, -1.0) != y_pm[n_lab:]))
            line = (f"class {k} {label:28s} objective {obj:10.3f} error {100 * err:5.1f}% "
                    f"positives {int(np.sum(unl_out > 0))} seconds {seconds:7.1f} r~ solves {solves}")
            if comps is not None:
                line += (f"\n    corr(outputs, PC1..{args.pc}) = {np.round([corr(unl_out, v) for v in comps[1].T], 3)}"
                         f", corr(outputs, true labels) = {corr(unl_out, y_pm[n_lab:]):.3f}")
            print(line, flush=True)


if __name__ == "__main__":
    main()
