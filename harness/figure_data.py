"""Stored inputs of the figures: the models and experiment records ``s3vm-bench figures`` draws.

The plotting code (:mod:`harness.figures`) never trains a solver: it draws stored results. This
module computes them, through the common protocol (:func:`harness.protocol.run_split`, JMLR 2008
Sec. 5.2) or the ICML 2013 runner (:mod:`harness.icml2013`), and writes them under the reports
folder of the work folder (:func:`harness.paths.work_dir`; ``--out .`` in a source checkout
rewrites the shipped ones). Each data set of :data:`DATA` is made by
``s3vm-bench figures --make-data NAME``:

``jmlr2008-fig1`` -> ``figures-data/jmlr2008-fig1.json``
    JMLR 2008 Fig. 1 ("Two moons ... The global optimum of S3VM correctly identifies the decision
    boundary"): one realization of :func:`data_registry.two_moons` (2 fixed labeled points, 100
    unlabeled), sigma = 0.5, C = C* = 10 (NIPS 2006 Sec. 7.1). The global optimum is the stored,
    certified branch-and-bound labeling of ``harness/optima/two_moons.json``; the local optimum is
    the labeling S3VM-light (JMLR 2008 Alg. 1) reaches under the common protocol on the same
    realization (:func:`jmlr2008_fig1`).
``icml2006-fig4`` -> ``figures-data/icml2006-fig4.json``
    ICML 2006 Fig. 4: the 2MOONS and 2CIRCLES toy sets "(a particular labeling is shown)", labeled
    by DA with the hinge loss (:func:`icml2006_fig4`).
``jmlr2008-fig9`` -> ``figures-data/jmlr2008-fig9.jsonl``
    JMLR 2008 Fig. 9: unlabeled error against the number of annealing steps on Text
    (:func:`jmlr2008_fig9`).
``jmlr2008-fig10`` -> ``figures-data/jmlr2008-fig10.jsonl``
    JMLR 2008 Fig. 10: unlabeled minus test error against the angle between the unlabeled and a
    biased test set on g50c (:func:`jmlr2008_fig10`).
``sigir2006-curves`` -> ``figures-data/sigir2006-curves.jsonl``
    SIGIR 2006 Figs. 4-13 and ICML 2006 Fig. 5: learning curves of SVM, TSVM and MFA on text
    (:func:`sigir2006_curves`).
``icml2013-fig6`` -> ``icml2013/fig6.jsonl``
    ICML 2013 Fig. 6: total computation time of a sequence of solutions over C*
    (:func:`icml2013_fig6`).

The decision-boundary files store, per model, the training inputs (labeled rows first), the true
labels, the number of labeled points, the completed labeling and the expansion ``(beta, b)`` of the
L2-SVM trained on that labeling (:func:`harness.optima.optimum_model`, the model whose objective the
protocol reports), so ``f(x) = sum_i beta_i k(x, x_i) + b`` is evaluated in closed form by the
figure. Numbers are rounded to 10 significant digits so that the file, and the figure drawn from
it, do not depend on the last bits of the linear algebra.

The experiments are JSON lines, one record per cell, and resumable: a finished cell is appended
at once, an interrupted run loses at most the cell in progress, and a rerun computes only the
missing cells (:class:`_Records`; ICML 2013 Fig. 6: one line per data set and split, appended).
A finished experiment file is written in one piece, in the experiment's cell order; making it
again computes every cell again.

The decision-boundary documents are computed in :mod:`harness.figure_data_boundaries`, the
records of the experiments in :mod:`harness.figure_data_records` (this module re-exports their
functions), ICML 2013 Fig. 6 here.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ._atomic import append_line, atomic_write, read_records
from .figure_data_boundaries import icml2006_fig4, jmlr2008_fig1
from .figure_data_records import _Records, biased_split, jmlr2008_fig9, jmlr2008_fig10, sigir2006_curves
from .paths import work_dir

__all__ = ["DATA", "DataSpec", "make_data", "biased_split", "jmlr2008_fig1", "icml2006_fig4",
           "jmlr2008_fig9", "jmlr2008_fig10", "sigir2006_curves", "icml2013_fig6", "fig6_split"]


# ------------------------------------------------------------------------ ICML 2013 Fig. 6 (timing)
#: ICML 2013 Fig. 6: annealing steps of S3VM-light / candidates of C* of CCCP on the x axis.
FIG6_STEPS = (1, 2, 3, 5, 7, 10)
#: Splits per data set and the C of the figure (the paper does not say which C it uses).
FIG6_SPLITS = 3
FIG6_C = 10.0


def _c_grid(C: float, k: int) -> np.ndarray:
    """``k`` values of C* from 2^-9 C to C, geometric (``[C]`` for k = 1)."""
    return np.array([C]) if k == 1 else C * 2.0 ** (-9.0 + 9.0 * np.arange(k) / (k - 1))


def fig6_split(pid: str, index: int, C: float = FIG6_C) -> dict:
    """Seconds of the three solvers of ICML 2013 Fig. 6 on one split of one data set.

    Same data handling and splits as :mod:`harness.icml2013` (its docstring lists the protocol
    choices), gamma = 1/d, and the solvers of Table 2's judged columns, timed one after the other
    in this process (wall clock):

    * S3VM-path: one fit of the entire path on C* in [0, C];
    * S3VM-light with the hinge (``loss="l1"``) and k annealing steps, C~ = 2^-9 C ... C
      geometrically (k = 1: no annealing, C* = C), for each k of :data:`FIG6_STEPS`;
    * CCCP without annealing, its mean output fixed at b = 2r - 1 (r the labeled fraction), at
      the k candidates C* = 2^-9 C ... C (:func:`_c_grid`), one fit per candidate, times summed.

    Parameters
    ----------
    pid : str
        Paper ID of the data set (a key of :data:`harness.icml2013.DATASETS`).
    index : int
        Split index.
    C : float
        Cost of the labeled points.

    Returns
    -------
    dict
        ``{"id", "dataset", "split", "C", "gamma", "path": seconds, "light_l1": {k: seconds},
        "cccp_b": {k: seconds}}`` (k as strings): one line of ``icml2013/fig6.jsonl``.

    Raises
    ------
    RuntimeError
        S3VM-light did not run the expected number of annealing steps.
    """
    from s3vm_bench.solvers.cccp import CCCP
    from s3vm_bench.solvers.s3vm_light import S3VMLight
    from s3vm_bench.solvers.s3vm_path import S3VMPath

    from .icml2013 import _split_data

    name, X, y, sp, Xtr, ytr = _split_data(pid, index)
    r = float(np.mean(y[sp.labeled] == 1))
    gamma = 1.0 / X.shape[1]
    sigma = 1.0 / math.sqrt(2.0 * gamma)
    t0 = time.perf_counter()
    S3VMPath(sigma=sigma, C=C).fit(Xtr, ytr)
    out = {"id": pid, "dataset": name, "split": index, "C": C, "gamma": gamma,
           "path": time.perf_counter() - t0, "light_l1": {}, "cccp_b": {}}
    for k in FIG6_STEPS:
        start, factor = (1.0, 2.0) if k == 1 else (2.0 ** -9, 2.0 ** (9.0 / (k - 1)))
        t0 = time.perf_counter()
        light = S3VMLight(sigma=sigma, C=C, C_star=C, loss="l1", anneal_start=start,
                          anneal_factor=factor).fit(Xtr, ytr)
        out["light_l1"][str(k)] = time.perf_counter() - t0
        steps = len(light.binary_fits_[0].info["anneal_schedule"])
        if steps != k:
            raise RuntimeError(f"S3VM-light ran {steps} annealing steps, expected {k}")
        t0 = time.perf_counter()
        for c_star in _c_grid(C, k):
            CCCP(sigma=sigma, C=C, C_star=float(c_star), anneal=False, r=r, r_tilde=r).fit(Xtr, ytr)
        out["cccp_b"][str(k)] = time.perf_counter() - t0
    return out


def icml2013_fig6(path, only: str | None = None, datasets=None, n_splits: int = FIG6_SPLITS, C: float = FIG6_C,
                  echo=print) -> int:
    """ICML 2013 Fig. 6: total computation time for a sequence of solutions over C*.

    "The horizontal axis indicates the number of annealing steps in S3VM-light and the number of
    candidates of C* in CCCP. ... the total computation time of S3VM-path does not depend on the
    number of C*s because it computes the entire path" (ICML 2013 Sec. 6, Fig. 6 caption). One
    line per (data set, split) of :func:`fig6_split` is appended to ``path``; the cells already
    there (with the judged solvers' times at this C) are not recomputed. BLAS runs on one thread,
    as the table's runner: the timings should not depend on how busy the other cores are. The
    first cell is run once untimed before the timed runs, so that the one-time costs of a process
    (lazy imports, caches) are not charged to it.

    Parameters
    ----------
    path : path-like
        The JSON-lines store (``reports/icml2013/fig6.jsonl``).
    only : str, optional
        Run only the cells whose key ``"<pid>/<split>"`` starts with this (e.g. ``"D1/"``).
    datasets : list of str, optional
        Paper IDs (default: all ten of :data:`harness.icml2013.DATASETS`).
    n_splits : int
        Splits per data set.
    C : float
        Cost of the labeled points.
    echo : callable
        Progress lines.

    Returns
    -------
    int
        Number of lines appended.
    """
    from threadpoolctl import threadpool_limits

    from .icml2013 import DATASETS

    path = Path(path)
    done = set()
    # A line cut short by a killed run is left out: its split runs again. The figure reads only the
    # lines with the judged solvers' times.
    for rec in read_records(path, fields=("id", "split", "C"), when=lambda r: "light_l1" in r):
        if "light_l1" in rec:
            done.add((rec["id"], rec["split"], rec["C"]))
    cells = [(pid, i) for pid in (datasets or list(DATASETS)) for i in range(n_splits)]
    if only is not None and not any(f"{pid}/{i}".startswith(only) for pid, i in cells):
        raise ValueError(f"no cell of icml2013-fig6 has a key starting with {only!r} (--only); its keys look like "
                         f"'{cells[0][0]}/{cells[0][1]}'")
    todo = [(pid, i) for pid, i in cells if (pid, i, C) not in done and (only is None or f"{pid}/{i}".startswith(only))]
    with threadpool_limits(limits=1):
        if todo:
            fig6_split(*todo[0], C)  # untimed warm-up
        for pid, i in todo:
            rec = fig6_split(pid, i, C)
            append_line(path, json.dumps(rec))
            echo(f"{pid} split {i}: path {rec['path']:.2f} s; S3VM-light {rec['light_l1']}; CCCP {rec['cccp_b']}")
    return len(todo)


# ------------------------------------------------------------------------ registry and entry point
@dataclass(frozen=True)
class DataSpec:
    """One stored input of the figures and how it is made.

    Attributes
    ----------
    name : str
        Name on the command line (``s3vm-bench figures --make-data NAME``).
    path : str
        Path relative to a reports folder (``reports/`` of the work folder, or the shipped one).
    make : callable
        ``make()`` returns the JSON document (``kind="json"``), ``make(store)`` returns the records
        of a :class:`_Records` store (``kind="records"``), ``make(path, only, echo=...)`` appends
        lines itself (``kind="lines"``).
    kind : str
        ``"json"``, ``"records"`` or ``"lines"``.
    figures : tuple of str
        The figures (:data:`harness.figures.FIGURES`) drawn from it.
    """

    name: str
    path: str
    make: Callable
    kind: str
    figures: tuple


DATA: dict[str, DataSpec] = {d.name: d for d in (
    DataSpec("jmlr2008-fig1", "figures-data/jmlr2008-fig1.json", jmlr2008_fig1, "json", ("jmlr2008-fig1",)),
    DataSpec("icml2006-fig4", "figures-data/icml2006-fig4.json", icml2006_fig4, "json", ("icml2006-fig4",)),
    DataSpec("jmlr2008-fig9", "figures-data/jmlr2008-fig9.jsonl", jmlr2008_fig9, "records", ("jmlr2008-fig9",)),
    DataSpec("jmlr2008-fig10", "figures-data/jmlr2008-fig10.jsonl", jmlr2008_fig10, "records",
             ("jmlr2008-fig10",)),
    DataSpec("sigir2006-curves", "figures-data/sigir2006-curves.jsonl", sigir2006_curves, "records",
             ("icml2006-fig5",) + tuple(f"sigir2006-fig{k}" for k in range(4, 14))),
    DataSpec("icml2013-fig6", "icml2013/fig6.jsonl", icml2013_fig6, "lines", ("icml2013-fig6",)),
)}


def make_data(name: str, reports_dir=None, only: str | None = None, echo=print) -> Path:
    """Make the stored input ``name`` of :data:`DATA` under ``reports_dir``.

    Parameters
    ----------
    name : str
        A key of :data:`DATA`.
    reports_dir : path-like, optional
        Reports folder the file is written under (default: the work folder's ``reports/``;
        ``s3vm-bench figures --make-data NAME --out .`` in a source checkout rewrites the shipped
        file).
    only : str, optional
        Experiments only (``kind`` ``"records"`` or ``"lines"``): run only the cells whose key
        starts with this, to split a long run over processes. A records store is then left as its
        ``.partial`` file; a run without ``only`` collects every stored cell and writes the file.
    echo : callable
        Progress and summary lines.

    Returns
    -------
    Path
        The file written (the ``.partial`` file of a records store that is not finished).

    Raises
    ------
    ValueError
        Unknown name, or ``only`` given for a JSON document.
    """
    if name not in DATA:
        from s3vm_bench import did_you_mean

        raise ValueError(f"unknown figure data {name!r}.{did_you_mean(name, DATA)} Known: {', '.join(DATA)}")
    spec = DATA[name]
    if only is not None and spec.kind == "json":
        raise ValueError(f"{name} is one document, not cells: --only does not apply to it")
    path = Path(reports_dir if reports_dir is not None else work_dir().reports) / spec.path
    path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.process_time()
    if spec.kind == "lines":
        n = spec.make(path, only=only, echo=echo)
        echo(f"{path}: {n} line(s) appended, {time.process_time() - t0:.0f} s CPU")
        return path
    if spec.kind == "records":
        store = _Records(path, only=only)
        records = spec.make(store)
        if only is not None and not store.matched:
            raise ValueError(f"no cell of {name} has a key starting with {only!r} (--only); its keys look like "
                             f"{store.first_key!r}")
        store.finish(records)
        where = store.path if store.path.is_file() and not store.partial.is_file() else store.partial
        echo(f"{where}: {sum(r is not None for r in records)} records ({store.resumed} resumed), "
             f"{time.process_time() - t0:.0f} s CPU")
        return where
    data = spec.make()
    atomic_write(path, json.dumps(data, indent=1) + "\n")
    summary = "; ".join(f"{m['name']}: J = {m['objective']:.4f}, unlabeled error {100 * m['unlabeled_error']:.0f}%"
                        for p in data.get("panels", [data]) for m in p["models"])
    echo(f"{path}: {summary}")
    return path
