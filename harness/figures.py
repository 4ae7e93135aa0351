"""``s3vm-bench figures``: the papers' figures, regenerated from stored results or closed forms.

Every figure is a function registered in :data:`FIGURES` under ``<paper><year>-fig<N>`` (the
papers of ``../shared/papers/INDEX.md``; the registry is :mod:`harness.figure_registry`). It
takes an output folder (and optional inputs in place of the stored results it reads) and writes
``<name>.png`` and ``<name>.svg``.

Three kinds of figures, one module each:

* **loss shapes** (:mod:`harness.figures_losses`) -- closed-form curves drawn with the project's
  own loss functions (:mod:`solvers._losses`, the DA/MFA effective loss of :mod:`solvers.da`, the
  balance function of :mod:`solvers._balance`); nothing is re-implemented here;
* **decision boundaries** (:mod:`harness.figures_boundaries`) -- stored models
  (``reports/figures-data/*.json``: training points, labeling and the expansion ``beta, b`` of the
  L2-SVM on that labeling), evaluated in closed form on a grid; the Coil3 cars are the images of
  the data set itself;
* **experiments** (:mod:`harness.figures_experiments`) -- stored result tables
  (``reports/figures-data/*.jsonl``, ``reports/icml2013/fig6.jsonl``, and ICML 2013 Table 2's rows
  in ``reports/runs/icml2013-table2/``).

The plotting code never trains a solver. The stored inputs are made by
``s3vm-bench figures --make-data NAME`` (:mod:`harness.figure_data`; Table 2's rows by
``s3vm-bench reproduce icml2013-table2``) into the work folder's ``reports/``; a figure reads the
work folder's copy when there is one, else the shipped one (:class:`_Stored`). A figure whose
stored input does not exist raises :class:`MissingData` naming the command that makes it; one whose
stored input is corrupt (empty, not valid JSON) raises :class:`CorruptData` naming the file, the
line and how to restore or remake it. ``figures --all`` reports either figure as skipped with the
reason and draws the others.

Determinism: an explicit ``Figure`` with an Agg canvas (no pyplot state), fixed size, dpi and
rcParams inside :func:`matplotlib.rc_context`, ``svg.hashsalt`` fixed (SVG element ids), and no
timestamps or software version in the metadata (PNG ``Software`` removed; SVG ``Date`` and
``Creator`` removed). Running a figure twice gives the same bytes.
"""

from __future__ import annotations

import io
from pathlib import Path

from s3vm_bench import PACKAGE_DIR

# The figure modules register their figures in FIGURES when imported; the registry's names are
# imported here for the callers of this module (the CLI, Python callers).
from . import figures_boundaries, figures_experiments, figures_losses  # noqa: F401
from ._atomic import atomic_write
from .figure_registry import FIGURES, REPORTS_DIR, CorruptData, FigureSpec, MissingData, _Stored  # noqa: F401
from .paths import work_dir

__all__ = ["FIGURES", "FigureSpec", "MissingData", "CorruptData", "make_figure", "make_figures",
           "gallery_markdown", "REPORTS_DIR"]

ROOT = PACKAGE_DIR

#: Fixed style: the same fonts, sizes and colours on every machine that has matplotlib's bundled
#: DejaVu Sans (always shipped with matplotlib, so no system font is looked up).
_RC = {
    "font.family": "DejaVu Sans",
    "font.size": 9.0,
    "axes.titlesize": 9.0,
    "axes.labelsize": 9.0,
    "legend.fontsize": 7.5,
    "xtick.labelsize": 8.0,
    "ytick.labelsize": 8.0,
    "lines.linewidth": 1.5,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "svg.hashsalt": "s3vm-bench",  # otherwise SVG ids are random per run
    "svg.fonttype": "path",        # glyphs as paths: no dependence on the viewer's fonts
    "path.simplify": True,
    "image.interpolation": "nearest",
    "axes.prop_cycle": None,       # filled in by _style() from seaborn's colorblind palette
}


# ------------------------------------------------------------------------------------ rendering
def _style() -> dict:
    import seaborn as sns
    from cycler import cycler

    rc = dict(_RC)
    rc["axes.prop_cycle"] = cycler(color=sns.color_palette("colorblind", 8).as_hex())
    return rc


def make_figure(name: str, out_dir=None, **inputs) -> list[Path]:
    """Draw figure ``name`` and write ``<out_dir>/<name>.png`` and ``.svg``.

    Parameters
    ----------
    name : str
        A key of :data:`FIGURES`.
    out_dir : path-like, optional
        Output folder (created if needed); default the work folder's ``figures/``
        (:func:`harness.paths.work_dir`).
    **inputs
        Input paths overriding the figure's defaults (e.g. ``cells=...``); a default stored input
        is the work folder's copy if there is one, else the shipped one.

    Returns
    -------
    list of Path
        The PNG and the SVG written.

    Raises
    ------
    ValueError
        Unknown figure name.
    MissingData
        The stored result the figure needs does not exist (nothing is written).
    CorruptData
        The stored result the figure needs is empty or not valid JSON (nothing is written); a
        :class:`ValueError`.
    """
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if name not in FIGURES:
        raise ValueError(f"unknown figure {name!r}; known: {', '.join(FIGURES)}")
    spec = FIGURES[name]
    unknown = set(inputs) - set(spec.inputs)
    if unknown:
        raise ValueError(f"{name} takes inputs {sorted(spec.inputs)}, got {sorted(unknown)}")
    kwargs = {k: v.path() if isinstance(v, _Stored) else v for k, v in {**spec.inputs, **inputs}.items()}
    out_dir = Path(out_dir if out_dir is not None else work_dir().figures)
    with matplotlib.rc_context(_style()):
        fig = Figure(figsize=spec.size, dpi=100)
        FigureCanvasAgg(fig)
        spec.draw(fig, **kwargs)  # raises MissingData or CorruptData before anything is written
        # A figure-level legend below the panels needs its strip kept free (see icml2013-fig5).
        fig.tight_layout(rect=getattr(fig, "tight_rect", (0.0, 0.0, 1.0, 1.0)))
        out_dir.mkdir(parents=True, exist_ok=True)
        png, svg = out_dir / f"{name}.png", out_dir / f"{name}.svg"
        # Rendered in memory and written atomically: an interrupted run never leaves a truncated image.
        for path, fmt, extra in ((png, "png", {"dpi": 100, "metadata": {"Software": None}}),
                                 (svg, "svg", {"metadata": {"Date": None, "Creator": None}})):
            buf = io.BytesIO()
            fig.savefig(buf, format=fmt, **extra)
            atomic_write(path, buf.getvalue())
    return [png, svg]


def make_figures(names, out_dir=None, echo=print, error=None) -> dict:
    """Make several figures; a figure whose stored input is missing or corrupt is skipped with the
    reason, not raised, and the others are made.

    Parameters
    ----------
    names : iterable of str
        Keys of :data:`FIGURES`.
    out_dir : path-like, optional
        Output folder, as for :func:`make_figure`.
    echo : callable
        Takes one line per figure: the files written, or ``"<name>: skipped: <reason>"`` when its
        stored input is missing.
    error : callable, optional
        Takes the line ``"error: <name>: <reason>"`` of a figure whose stored input is corrupt
        (:class:`CorruptData`); default ``echo``.

    Returns
    -------
    dict
        ``name -> list of paths`` for the figures made, ``name -> "skipped: reason"`` for missing
        data, ``name -> "error: reason"`` for corrupt data.
    """
    error = echo if error is None else error
    out = {}
    for name in names:
        try:
            out[name] = make_figure(name, out_dir)
            echo(f"{name}: {', '.join(str(p) for p in out[name])}")
        except MissingData as exc:
            out[name] = f"skipped: {exc}"
            echo(f"{name}: skipped: {exc}")
        except CorruptData as exc:
            out[name] = f"error: {exc}"
            error(f"error: {name}: {exc}")
    return out


# ------------------------------------------------------------------------------------ gallery
def gallery_markdown(results: dict, out_dir=None) -> str:
    """``figures/README.md``: every registered figure, made or skipped, with caption and command."""
    out = ["# Figures", "",
           "The papers' figures regenerated by `s3vm-bench figures --all` (code: `harness/figures.py`). Loss "
           "shapes are closed-form curves of the project's own loss functions; every other figure is drawn from "
           "a stored result, never by running a solver inside the plotting code. PNG and SVG are byte-for-byte "
           "reproducible (fixed metadata, fixed style). Re-make one figure with `s3vm-bench figures NAME`.", "",
           "Stored inputs, made by `s3vm-bench figures --make-data NAME` (code: `harness/figure_data.py`) into "
           "the work folder's `reports/` (`--out .` in a source checkout rewrites the shipped ones): "
           "`reports/figures-data/*.json` (decision boundaries: `jmlr2008-fig1`, `icml2006-fig4`), "
           "`reports/figures-data/*.jsonl` (experiments, resumable: `jmlr2008-fig9`, `jmlr2008-fig10`, "
           "`sigir2006-curves` -- the last one feeds SIGIR 2006 Figs. 4-13 and ICML 2006 Fig. 5) and "
           "`reports/icml2013/fig6.jsonl` (`icml2013-fig6`); ICML 2013 Table 2's rows, `reports/runs/icml2013-table2/`, "
           "come from `s3vm-bench reproduce icml2013-table2`. A figure reads the work folder's copy of its input if there is one, else "
           "the shipped one. The Coil3 images need the data in the cache (`s3vm-bench data fetch coil3`). A "
           "figure whose input is missing is listed under *Not made* with the reason.", ""]
    made = [n for n in FIGURES if isinstance(results.get(n), list)]
    skipped = [n for n in FIGURES if n not in made]
    for n in made:
        s = FIGURES[n]
        out += [f"## {n} -- {s.paper}", "", f"![{n}]({n}.png)", "", s.caption, "",
                f"Data: {s.source}. Command: `s3vm-bench figures {n}` ([SVG]({n}.svg)).", ""]
    if skipped:
        out += ["## Not made", "", "| figure | paper | why |", "|---|---|---|"]
        for n in skipped:
            why = results.get(n, "not run")
            why = why[len("skipped: "):] if isinstance(why, str) and why.startswith("skipped: ") else why
            why = str(why).replace(str(ROOT) + "/", "").replace("|", "/")
            out.append(f"| {n} | {FIGURES[n].paper} | {why} |")
        out.append("")
    return "\n".join(out)


# The gallery and `--all` go paper by paper, figure by figure (registration order is by kind).
_PAPER_ORDER = ("jmlr2008", "nips2006", "icml2006", "sigir2006", "icml2013")


def _order(name: str):
    paper, fig = name.split("-fig")
    return _PAPER_ORDER.index(paper), int(fig)


_sorted = sorted(FIGURES.items(), key=lambda kv: _order(kv[0]))
FIGURES.clear()
FIGURES.update(_sorted)
del _sorted
