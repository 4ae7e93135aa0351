"""Figures of experiments, drawn from stored result tables.

ICML 2013 Figs. 5-6 (Table 2's rows in ``reports/runs/icml2013-table2/`` and
``reports/icml2013/fig6.jsonl``), the learning curves of SIGIR 2006 Figs. 4-13 and ICML 2006 Fig. 5
(``reports/figures-data/sigir2006-curves.jsonl``), and JMLR 2008 Figs. 9-10
(``reports/figures-data/jmlr2008-fig9.jsonl``, ``jmlr2008-fig10.jsonl``).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from .figure_registry import MissingData, _make_data_cmd, _read_jsonl, _register, _Stored


_ICML2013_CELLS = _Stored("runs/icml2013-table2")
_ICML2013_CMD = "s3vm-bench reproduce icml2013-table2"
#: Figures 5-6 show Table 2's judged columns: the hinge S3VM-light and CCCP with its mean output
#: fixed (``light_l1``, ``cccp_b``; the "S3VM-light" and "CCCP" of harness.icml2013).
_METHOD_NAMES = {"path": "S3VM-path", "light_l1": "S3VM-light", "cccp_b": "CCCP"}


def _id_order(pid: str):
    """Sort key of an ICML 2013 data-set ID (``"D5"`` -> 5): the paper's order of Table 2."""
    return int(pid[1:]) if pid[1:].isdigit() else 0



def _label_panel(ax, key, n_splits, xlabel, ylabel=None):
    """Title a per-(data set, set name) panel of ICML 2013 Figs. 5-6 and label its axes (the y axis
    only when ``ylabel`` is given: the first panel of a row)."""
    ax.set_title(f"{key[0]} {key[1]} ({n_splits} splits)", fontsize=7.5)
    ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)


def _legend_below(fig, ax):
    """One legend under the panels (inside any panel it hid some points), from ``ax``'s labels."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.tight_rect = (0.0, 0.5 / fig.get_figheight(), 1.0, 1.0)


@_register("icml2013-fig5", "ICML 2013 Fig. 5",
           "Objective J(f*, y^) of eq. (1) on the labeled and unlabeled training points at C* = C (gamma = 1/d) for "
           "the labels y^ of S3VM-path, S3VM-light and CCCP, mean over the splits run; smaller is a better local "
           "optimum. Only the data sets of the stored run. S3VM-light and CCCP are Table 2's judged columns: "
           "S3VM-light with the hinge (10 annealing steps up to C* = C) and CCCP without annealing, its mean "
           "output fixed at b = 2r - 1 as the path's; f*_y^ is the conditionally optimal solution for the labels "
           "(the path's centred kernel). CCCP minimizes the squared hinge, not eq. (1)'s hinge.", size=(8.0, 2.9),
           source=f"reports/runs/icml2013-table2/ ({_ICML2013_CMD})", cells=_ICML2013_CELLS)
def _icml2013_fig5(fig, cells):
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from .icml2013_report import stored_records

    # The split records of the table's current cells (failed rows and rows of earlier declared
    # versions left out), each with its Figure 5 rows.
    path = Path(cells)
    if not path.exists():
        raise MissingData(f"{path} does not exist; run `{_ICML2013_CMD}`")
    rows = list(stored_records(path).values())
    if not rows:
        raise MissingData(f"{cells} holds no result; run `{_ICML2013_CMD}`")
    by_id: dict = {}
    for r in rows:
        by_id.setdefault((r["id"], r["dataset"]), []).append(r)
    keys = sorted(by_id, key=lambda k: _id_order(k[0]))
    # At most 5 panels a row: with all ten data sets one row leaves the titles overlapping.
    ncols = min(5, len(keys))
    nrows = -(-len(keys) // ncols)
    fig.set_size_inches(fig.get_figwidth(), fig.get_figheight() * nrows)
    for i, key in enumerate(keys):
        ax = fig.add_subplot(nrows, ncols, i + 1)
        recs = by_id[key]
        Cs = sorted({row["C"] for r in recs for row in r["fig5"]})
        for m in ("path", "light_l1", "cccp_b"):
            got = [row for r in recs for row in r["fig5"] if m in row]
            if len(got) < len(recs) * len(Cs):  # the Figure 5 lines of the judged solvers not run yet
                raise MissingData(f"{cells}: {key[0]} has no Figure 5 value of {_METHOD_NAMES[m]} on some "
                                  f"split; run `{_ICML2013_CMD}`")
            vals = [np.mean([row[m] for row in got if row["C"] == C]) for C in Cs]
            ax.plot(Cs, vals, marker="o", ms=3.5, label=_METHOD_NAMES[m])
        ax.set_xscale("log")
        ax.set_yscale("log")
        # Ticks at 1, 2, 5 x 10^k in plain numbers: some panels span less than a decade.
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        _label_panel(ax, key, len(recs), "C = C*", "J(f, y^)" if i % ncols == 0 else None)
    _legend_below(fig, ax)


_ICML2013_FIG6 = _Stored("icml2013/fig6.jsonl")
_ICML2013_FIG6_CMD = _make_data_cmd("icml2013-fig6")


@_register("icml2013-fig6", "ICML 2013 Fig. 6",
           "Total computation time for a sequence of solutions over C*: S3VM-light with k annealing steps and CCCP "
           "with k candidates of C*, against the entire S3VM-path (independent of k), mean over the splits run "
           "(C = 10, gamma = 1/d; the paper does not say which C). Timed one after the other, one BLAS thread, "
           "on a shared 2-core machine under load: single points are noisy. S3VM-light and CCCP are Table 2's "
           "judged columns (the hinge S3VM-light; CCCP with its mean output fixed, one run per candidate, no "
           "search on the count).",
           size=(8.0, 2.9), source=f"reports/icml2013/fig6.jsonl ({_ICML2013_FIG6_CMD})", data=_ICML2013_FIG6)
def _icml2013_fig6(fig, data):
    # Only the lines with the judged solvers' times (others time the squared-hinge S3VM-light and
    # the count-searched CCCP), at C = 10, the C the caption names.
    rows = [r for r in _read_jsonl(data, f"run `{_ICML2013_FIG6_CMD}`", ("id", "dataset", "C", "path", "cccp_b"),
                                   when=lambda r: "light_l1" in r) if "light_l1" in r and r["C"] == 10.0]
    if not rows:
        raise MissingData(f"{data} holds no timing of the judged S3VM-light and CCCP at C = 10; run "
                          f"`{_ICML2013_FIG6_CMD}`")
    from .figure_data import FIG6_SPLITS
    from .icml2013 import DATASETS

    got, full = len({(r["id"], r.get("split")) for r in rows}), len(DATASETS) * FIG6_SPLITS
    if got < full:  # a run stopped (or split with --only) before every cell: drawn, and said
        warnings.warn(f"icml2013-fig6 is drawn from {got} of the {full} (data set, split) timings of a full run in "
                      f"{data}; `{_ICML2013_FIG6_CMD}` computes the others", RuntimeWarning, stacklevel=2)
    keys = sorted({(r["id"], r["dataset"]) for r in rows}, key=lambda k: _id_order(k[0]))
    ncols = min(5, len(keys))  # as Figure 5: at most 5 panels a row
    nrows = -(-len(keys) // ncols)
    fig.set_size_inches(fig.get_figwidth(), fig.get_figheight() * nrows)
    for i, key in enumerate(keys):
        ax = fig.add_subplot(nrows, ncols, i + 1)
        recs = [r for r in rows if (r["id"], r["dataset"]) == key]
        for m in ("light_l1", "cccp_b"):
            ks = sorted({k for r in recs for k in map(int, r[m])})
            ax.plot(ks, [np.mean([r[m][str(k)] for r in recs]) for k in ks], marker="o", ms=3.5,
                    label=_METHOD_NAMES[m])
        ax.axhline(np.mean([r["path"] for r in recs]), color="black", ls="--", label=_METHOD_NAMES["path"])
        ax.set_yscale("log")
        _label_panel(ax, key, len(recs), "steps / C* candidates", "seconds" if i % ncols == 0 else None)
    _legend_below(fig, ax)


# Learning curves (SIGIR 2006 Figs. 4-13, ICML 2006 Fig. 5): one JSONL record per (data set,
# number of labels, split, method), made by `s3vm-bench figures --make-data sigir2006-curves`; each
# figure draws the mean over splits against the number of labels, one panel per data set.
_CURVES = _Stored("figures-data/sigir2006-curves.jsonl")
_CURVES_CMD = _make_data_cmd("sigir2006-curves")
_CURVES_SRC = f"reports/figures-data/sigir2006-curves.jsonl ({_CURVES_CMD})"
_METRIC_LABEL = {"objective": "minimum objective (eq. 18)", "unlabeled_error": "transduction error (%)",
                 "test_error": "test error (%)", "cpu_seconds": "CPU seconds"}
_DATASET_LABEL = {"text": "pcmac", "news-autos-motorcycles": "autos vs motorcycles",
                  "news-electronics-space": "electronics vs space"}
#: SIGIR Table 8 holds six sets, we hold one (pcmac); the two 20 Newsgroups pairs stand in for the
#: others (see harness.figure_data_records.SIGIR_SETS). Figs. 5-7 and 8-10 show two sets each in the paper (which
#: two is not in the text; Table 8 order assumed): one panel each here, the stand-in of that pair.
_SIGIR_ALL = ("news-autos-motorcycles", "news-electronics-space", "text")
_SIGIR_PAIRS = ((("news-autos-motorcycles",), "auto-vs-aviation and real-vs-simulated (SRAA, not held): stand-in "
                 "rec.autos vs rec.motorcycles, lambda' = 10 as for auto-vs-aviation"),
                (("news-electronics-space",), "ccat and gcat (RCV1, not held): stand-in sci.electronics vs sci.space, "
                 "lambda' = 1 (the SIGIR default; by the rule of the first panel, copying the first set's "
                 "lambda', it would be ccat's 10)"),
                (("text",), "33-vs-36 (not held) and pcmac: pcmac only, lambda' = 1"))
_SIGIR_MAIN = (("TSVM S=1", "TSVM (single switch)"), ("TSVM S=max", "TSVM (multiple switch)"), ("MFA", "MFA"))
_SIGIR_ERR = (("SVM", "SVM"),) + _SIGIR_MAIN
_SIGIR_SWITCH = (("TSVM S=1", "TSVM S=1"), ("TSVM S=10", "TSVM S=10"), ("TSVM S=100", "TSVM S=100"),
                 ("TSVM S=max", "TSVM S=max"), ("MFA", "MFA"))
_SIGIR_FIXED_T = (("MFA", "MFA (annealing)"), ("MFA T=1", "fixed T = 1"), ("MFA T=0.1", "fixed T = 0.1"))
_SIGIR_SETUP = ("SIGIR 2006 Sec. 4 protocol on the text sets we hold: lambda = 0.001, r exact, labels 45 to 720, "
                "mean over 5 random splits (the paper: 10) with a class-stratified test set (486 points for pcmac, "
                "a quarter otherwise); errors of the classifier sign(w.x + b) (the protocol's thresholded errors are "
                "stored too).")


def _plain_log_ticks(ax, values):
    """Log x axis ticked at the values run, in plain numbers (not 4 x 10^1)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

    ax.xaxis.set_major_locator(FixedLocator(list(values)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())


def _read_curves(path, datasets, methods):
    rows = _read_jsonl(path, f"run `{_CURVES_CMD}`", ("dataset", "method", "n_labels"))
    keep = [r for r in rows if r["dataset"] in datasets and r["method"] in dict(methods)]
    if not keep:
        raise MissingData(f"{path} has no rows for methods {[m for m, _ in methods]} on {list(datasets)}; "
                          f"run `{_CURVES_CMD}`")
    return keep


def _curve_panel(ax, rows, dataset, metric, methods, legend):
    """Mean of ``metric`` over splits against the number of labels, one line per method."""
    scale = 100.0 if metric.endswith("error") else 1.0
    ticks: set = set()
    for key, label in methods:
        pts: dict = {}
        for r in rows:
            if r["dataset"] == dataset and r["method"] == key and r.get(metric) is not None:
                pts.setdefault(int(r["n_labels"]), []).append(float(r[metric]))
        if pts:
            xs = sorted(pts)
            ticks.update(xs)
            ax.plot(xs, [scale * np.mean(pts[x]) for x in xs], marker="o", ms=3.5, label=label)
    ax.set_xscale("log")
    _plain_log_ticks(ax, sorted(ticks))
    if metric == "cpu_seconds":
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_title(_DATASET_LABEL.get(dataset, dataset))
    ax.set_xlabel("number of labels")
    ax.set_ylabel(_METRIC_LABEL[metric])
    if legend:
        ax.legend(loc="best")


def _learning_curves(fig, path, metric, methods, datasets):
    rows = _read_curves(path, datasets, methods)
    sets = [d for d in datasets if any(r["dataset"] == d for r in rows)]
    for i, ds in enumerate(sets):
        _curve_panel(fig.add_subplot(1, len(sets), i + 1), rows, ds, metric, methods, legend=i == 0)


def _sigir(fig_no, caption, metric, methods, datasets=_SIGIR_ALL):
    size = (8.0, 2.9) if len(datasets) > 1 else (4.2, 3.0)

    @_register(f"sigir2006-fig{fig_no}", f"SIGIR 2006 Fig. {fig_no}", f"{caption} {_SIGIR_SETUP}", size=size,
               source=_CURVES_SRC, data=_CURVES)
    def draw(fig, data):
        _learning_curves(fig, data, metric, methods, datasets)

    return draw


_sigir(4, "Minimum value of the objective function (SIGIR eq. 18, the solver's own value at the w it returns) "
       "achieved by MFA and transductive L2-SVM-MFN (TSVM, single and multiple switching) against the number of "
       "labels, on the three text sets (pcmac and two 20 Newsgroups stand-ins).", "objective", _SIGIR_MAIN)
for _k, (_sets, _which) in enumerate(_SIGIR_PAIRS):
    _sigir(5 + _k, f"Transduction error (unlabeled points) of SVM, TSVM and MFA against the number of labels. The "
           f"paper's panels: {_which}.", "unlabeled_error", _SIGIR_ERR, _sets)
for _k, (_sets, _which) in enumerate(_SIGIR_PAIRS):
    _sigir(8 + _k, f"Test error (unseen test points) of SVM, TSVM and MFA against the number of labels. The "
           f"paper's panels: {_which}.", "test_error", _SIGIR_ERR, _sets)
_sigir(11, "Computation time (CPU seconds of the fit, one thread) against the number of labels for MFA and "
       "transductive L2-SVM-MFN with 1, 10, 100 and maximum switching. Python/SciPy, not the paper's MATLAB + C.",
       "cpu_seconds", _SIGIR_SWITCH)
_sigir(12, "Minimum objective (SIGIR eq. 18) achieved by MFA (annealing) and by the same alternating w, p "
       "optimization at a fixed temperature T = 1 and T = 0.1, against the number of labels.", "objective",
       _SIGIR_FIXED_T)
_sigir(13, "Transduction error of MFA (annealing) and of fixed-temperature optimization (T = 1, 0.1) against the "
       "number of labels.", "unlabeled_error", _SIGIR_FIXED_T)

_ICML_DA = (("MFA", "DA"), ("TSVM S=1", "JTSVM"))
#: ICML Table 5's fixed T = 0.1, 0.01, 0.001 run as MFA temperatures: SIGIR 2006 eq. 8 weights the
#: entropy by T/(2u), ICML 2006 eq. 4 by T/u with the same loss term, so MFA's T is twice ICML's.
_ICML_FIXED = (("MFA", "DA"), ("MFA T=0.2", "T = 0.1"), ("MFA T=0.02", "T = 0.01"), ("MFA T=0.002", "T = 0.001"))


@_register("icml2006-fig5", "ICML 2006 Fig. 5",
           "Large-scale text classification learning curves, on rec.autos vs rec.motorcycles (20 Newsgroups, 1986 "
           "documents) in place of AUT-AVN, which we do not hold: linear DA with the quadratic hinge (= SIGIR 2006 "
           "MFA) against JTSVM (= transductive L2-SVM-MFN with single switching), lambda = 0.001, lambda' = 10 as in "
           "the paper. Top: minimum objective (SIGIR eq. 18); middle: test error; bottom: test error of DA and of "
           "fixed-temperature optimization (T = 0.1, 0.01, 0.001 in ICML's units, ICML Table 5: MFA at T = 0.2, 0.02, "
           "0.002, whose entropy weight T/(2u) is half ICML's T/u). Mean over 5 splits (the paper: 10).",
           size=(4.2, 7.6), source=_CURVES_SRC, data=_CURVES)
def _icml_fig5(fig, data):
    ds = "news-autos-motorcycles"
    rows = _read_curves(data, (ds,), _ICML_DA + _ICML_FIXED)
    for i, (metric, methods) in enumerate((("objective", _ICML_DA), ("test_error", _ICML_DA),
                                           ("test_error", _ICML_FIXED))):
        ax = fig.add_subplot(3, 1, i + 1)
        _curve_panel(ax, rows, ds, metric, methods, legend=True)
        if i:
            ax.set_title("")


_JMLR_FIG9 = _Stored("figures-data/jmlr2008-fig9.jsonl")
_JMLR_FIG9_CMD = _make_data_cmd("jmlr2008-fig9")


@_register("jmlr2008-fig9", "JMLR 2008 Fig. 9",
           "Influence of the number of annealing steps on the first split of Text (data-file split 1, 50 labeled "
           "points; Table 5: Gaussian kernel sigma = 3.5, C = C* = 31; common protocol, r exact): unlabeled error "
           "against the number of steps, 1 step = no annealing. Only the number of steps varies (Sec. 5.4.4): C* "
           "from 2^-9 C* (nabla-S3VM, Newton), 1e-3 C* (CCCP) or 1e-5 C* (S3VM-light) up to C*; T from 10 C* down to "
           "a fixed 1e-3 C* (DA, nabla-DA; the end value is ours). Steps 1, 2, 3, 5, 10, 20; CCCP and Newton (minutes "
           "per run here) up to 10 only. cS3VM is not swept. DA returns its last iterate, as in Table 2 (not "
           "the best on its path, ICML 2006's rule). With 2 steps or more it runs 100 alternations per temperature: "
           "its KL stop shares its threshold with the entropy stop, which is off so that every run has its k "
           "temperatures; with 1 step (the fixed end temperature) it stops on the KL test (epsilon = 1e-6).",
           size=(4.8, 3.3), source=f"reports/figures-data/jmlr2008-fig9.jsonl ({_JMLR_FIG9_CMD})", data=_JMLR_FIG9)
def _jmlr_fig9(fig, data):
    rows = _read_jsonl(data, f"run `{_JMLR_FIG9_CMD}`", ("method", "steps", "unlabeled_error"))
    ax = fig.add_subplot()
    for i, m in enumerate(dict.fromkeys(r["method"] for r in rows)):
        pts = sorted((int(r["steps"]), float(r["unlabeled_error"])) for r in rows if r["method"] == m)
        ax.plot([k for k, _ in pts], [100.0 * e for _, e in pts], marker="os^vDP"[i % 6], ms=4, label=m)
    ax.set_xscale("log")
    _plain_log_ticks(ax, sorted({int(r["steps"]) for r in rows}))
    ax.set_xlabel("number of annealing steps")
    ax.set_ylabel("unlabeled error (%)")
    ax.legend(loc="best", ncol=2)


_JMLR_FIG10 = _Stored("figures-data/jmlr2008-fig10.jsonl")
_JMLR_FIG10_CMD = _make_data_cmd("jmlr2008-fig10")


@_register("jmlr2008-fig10", "JMLR 2008 Fig. 10",
           "g50c: 25% of the unlabeled points of each of the 10 data-file splits (50 labeled) are moved to a test set "
           "drawn with a bias (weights exp(kappa |z|), z the projection on a random direction; kappa in {0, 1, 2, 4, 8}, "
           "2 directions each: 100 splits, of which kappa = 0's 20 are unbiased); x = angle between the first "
           "principal directions of the remaining 375 unlabeled and the 125 test points, y = unlabeled minus test error (negative: better on the unlabeled "
           "set), for S3VM-light and nabla-S3VM under the common protocol (Table 5: sigma = 38, C = C* = 19). Lines: "
           "least-squares fits, r = correlation. The paper does not say how it biased the split nor which S3VM it "
           "ran; both are ours. Note that the angle is ~30 deg even without bias: 125 points in 50 dimensions. With "
           "100 splits a correlation |r| below 0.2 is not significant at the 5% level.",
           size=(4.8, 3.4), source=f"reports/figures-data/jmlr2008-fig10.jsonl ({_JMLR_FIG10_CMD})", data=_JMLR_FIG10)
def _jmlr_fig10(fig, data):
    rows = _read_jsonl(data, f"run `{_JMLR_FIG10_CMD}`", ("method", "angle", "unlabeled_error", "test_error"))
    ax = fig.add_subplot()
    methods = list(dict.fromkeys(r["method"] for r in rows))
    for i, m in enumerate(methods):
        a = np.array([r["angle"] for r in rows if r["method"] == m], dtype=float)
        d = 100.0 * np.array([r["unlabeled_error"] - r["test_error"] for r in rows if r["method"] == m], dtype=float)
        color = f"C{i}"
        label = m
        if a.size > 1 and np.ptp(a) > 0:
            slope, icpt = np.polyfit(a, d, 1)
            xs = np.array([a.min(), a.max()])
            ax.plot(xs, slope * xs + icpt, color=color, lw=1.2)
            label = f"{m} (r = {np.corrcoef(a, d)[0, 1]:+.2f})"
        ax.scatter(a, d, s=10, color=color, marker="os^"[i % 3], alpha=0.7, label=label)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("angle between principal directions (degrees)")
    ax.set_ylabel("unlabeled - test error (%)")
    ax.legend(loc="lower left")
