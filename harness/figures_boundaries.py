"""Decision-boundary figures and the Coil3 images.

JMLR 2008 Fig. 1 and ICML 2006 Fig. 4 draw stored models (``reports/figures-data/*.json``:
training points, labeling and the expansion ``beta, b`` of the L2-SVM on that labeling), evaluated
in closed form on a grid (:func:`_boundary_panel`); NIPS 2006 Fig. 2 shows the cars of the Coil3
data set itself.
"""

from __future__ import annotations

import numpy as np

from .figure_registry import MissingData, _check_fields, _check_list, _make_data_cmd, _read_json, _register, _Stored

#: The fields :func:`_boundary_panel` reads of a stored problem and of a stored model.
_PROBLEM_FIELDS = ("X", "y", "n_lab", "kernel", "sigma")
_MODEL_FIELDS = ("name", "beta", "b", "objective", "unlabeled_error")


def _load_models(path, command, panels: bool = False):
    """The stored models of the JSON file ``path``: ``{"problem", "models"}``, or with ``panels``
    ``{"panels": [{"title", "problem", "models"}, ...]}``.

    Raises :class:`MissingData` naming ``command`` if the file is absent and :class:`CorruptData`
    if it is not a valid JSON object (:func:`_read_json`) or lacks a field the figure reads.
    """
    what = f"run `{command}` to make it"
    doc = _read_json(path, what)
    if panels:
        _check_fields(doc, ("panels",), path, what, "the document")
        groups = [(f"panels[{i}]", panel) for i, panel in enumerate(_check_list(doc["panels"], path, what, "panels"))]
    else:
        groups = [("", doc)]
    for where, group in groups:
        _check_fields(group, ("problem", "models") + (("title",) if panels else ()), path, what,
                      where or "the document")
        prefix = f"{where}." if where else ""
        _check_fields(group["problem"], _PROBLEM_FIELDS, path, what, f"{prefix}problem")
        for i, model in enumerate(_check_list(group["models"], path, what, f"{prefix}models")):
            _check_fields(model, _MODEL_FIELDS, path, what, f"{prefix}models[{i}]")
    return doc


def _boundary_panel(ax, problem: dict, model: dict, title: str, n_grid: int = 121):
    """Points and the zero contour of the stored model ``f(x) = sum_i beta_i k(x, x_i) + b``."""
    from s3vm_bench.solvers.numerics import gaussian_kernel, linear_kernel

    X = np.asarray(problem["X"], dtype=float)
    y = np.asarray(problem["y"], dtype=float)
    n_lab = int(problem["n_lab"])
    pad = 0.4
    lo, hi = X.min(axis=0) - pad, X.max(axis=0) + pad
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], n_grid), np.linspace(lo[1], hi[1], n_grid))
    G = np.column_stack([gx.ravel(), gy.ravel()])
    K = gaussian_kernel(G, X, sigma=problem["sigma"]) if problem["kernel"] == "rbf" else linear_kernel(G, X)
    f = (K @ np.asarray(model["beta"], dtype=float) + model["b"]).reshape(gx.shape)
    ax.contourf(gx, gy, f > 0, levels=[-0.5, 0.5, 1.5], colors=["#dde8f4", "#f6e3d3"])
    ax.contour(gx, gy, f, levels=[0.0], colors="black", linewidths=1.8)
    Xu, yu = X[n_lab:], y[n_lab:]
    ax.scatter(Xu[yu > 0, 0], Xu[yu > 0, 1], s=9, color="C1", label="unlabeled (class +1)")
    ax.scatter(Xu[yu < 0, 0], Xu[yu < 0, 1], s=9, color="C0", label="unlabeled (class -1)")
    Xl, yl = X[:n_lab], y[:n_lab]
    ax.scatter(Xl[yl > 0, 0], Xl[yl > 0, 1], marker="^", s=90, color="black", label="labeled +1")
    ax.scatter(Xl[yl < 0, 0], Xl[yl < 0, 1], marker="x", s=90, color="black", linewidths=2.5, label="labeled -1")
    ax.set_title(title)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    ax.set_aspect("equal")
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])


@_register("jmlr2008-fig1", "JMLR 2008 Fig. 1",
           "Two moons, 2 labeled points (triangle, cross) and 100 unlabeled points (sigma = 0.5, C = C* = 10). Left: "
           "the certified global optimum of the S3VM objective (branch and bound, harness/optima/two_moons.json) "
           "follows the gap between the moons; right: a local optimum (S3VM-light) on the same realization. Black "
           "line: decision boundary of the L2-SVM on each labeling; J = objective of the common protocol.",
           size=(8.0, 3.0), source=f"reports/figures-data/jmlr2008-fig1.json ({_make_data_cmd('jmlr2008-fig1')})",
           data=_Stored("figures-data/jmlr2008-fig1.json"))
def _jmlr_fig1(fig, data):
    d = _load_models(data, _make_data_cmd("jmlr2008-fig1"))
    for i, m in enumerate(d["models"]):
        ax = fig.add_subplot(1, 2, i + 1)
        _boundary_panel(ax, d["problem"], m, f"{m['name']}\nJ = {m['objective']:.2f}, unlabeled error "
                                             f"{100 * m['unlabeled_error']:.0f}%")
        if i == 0:
            ax.legend(loc="lower left", fontsize=6.5, framealpha=0.85)


@_register("icml2006-fig4", "ICML 2006 Fig. 4",
           "The 2MOONS and 2CIRCLES toy sets with a particular labeling: DA with the hinge loss from 2 labeled "
           "points (triangle, cross); black line: the decision boundary of the L2-SVM on DA's labeling. Kernel "
           "widths and C are ours (the paper reports the best of a grid). Each panel is the first seed on which DA "
           "labels every unlabeled point correctly; the seeds that failed before it are recorded in the data file "
           "(the paper says DA succeeded in every trial).",
           size=(8.0, 3.6), source=f"reports/figures-data/icml2006-fig4.json ({_make_data_cmd('icml2006-fig4')})",
           data=_Stored("figures-data/icml2006-fig4.json"))
def _icml_fig4(fig, data):
    d = _load_models(data, _make_data_cmd("icml2006-fig4"), panels=True)
    for i, panel in enumerate(d["panels"]):
        ax = fig.add_subplot(1, len(d["panels"]), i + 1)
        m = panel["models"][0]
        _boundary_panel(ax, panel["problem"], m, f"{panel['title']}: {m['name']}, unlabeled error "
                                                 f"{100 * m['unlabeled_error']:.0f}%")


def _coil3_images():
    from s3vm_bench.data_registry import DataFetchError, load_dataset

    # Input data, not a result: fetched (hash-checked) through the registry when not cached.
    try:
        ds = load_dataset("coil3")
    except DataFetchError as exc:
        raise MissingData(f"the Coil3 data (coil20/COIL20.mat) is neither in the data cache nor fetchable ({exc}); "
                          "run `s3vm-bench data fetch coil3` on a networked machine (or set S3VM_DATA_MIRROR / "
                          "S3VM_DATA_DIR)") from None
    # First image (pose 0) of each car; the 1024 values are a 32x32 image stored column-major.
    return [(ds.class_names[c], np.asarray(ds.X[np.flatnonzero(ds.y == c)[0]]).reshape(32, 32, order="F"))
            for c in range(ds.n_classes)]


@_register("nips2006-fig2", "NIPS 2006 Fig. 2 (= JMLR 2008 Fig. 8)",
           "The 3 cars of the COIL data set (Coil3: COIL-20 objects 3, 6 and 19), subsampled to 32x32; first pose "
           "of each.", size=(6.0, 2.3), source="data set coil3 (data_registry, COIL20.mat)", images=None)
def _nips_fig2(fig, images):
    # ``images``: (name, 32x32 array) pairs; None reads the cached Coil3 data (tests pass tiny ones).
    images = _coil3_images() if images is None else images
    for i, (name, img) in enumerate(images):
        ax = fig.add_subplot(1, len(images), i + 1)
        ax.imshow(img, cmap="gray", vmin=0.0, vmax=255.0)
        ax.set_title(name)
        ax.set_axis_off()
