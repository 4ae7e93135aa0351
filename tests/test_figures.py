"""harness.figures and harness.figure_data: every registered figure on tiny stored inputs, byte-identical
reruns, missing data; the stored inputs made by ``figures --make-data``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from s3vm_bench.harness import figure_data as fd
from s3vm_bench.harness import figure_data_records as fdr
from s3vm_bench.harness import figures as F
from s3vm_bench.harness import figures_experiments as FE
from s3vm_bench.harness import figures_losses as FL
from s3vm_bench.harness.cli import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _problem(n_lab=2):
    # Six points in 2-D, the first two labeled; a model whose boundary is the line x = 0.
    X = [[-1.0, 0.0], [1.0, 0.0], [-1.2, 0.5], [-0.8, -0.5], [1.1, 0.4], [0.9, -0.6]]
    y = [-1.0, 1.0, -1.0, -1.0, 1.0, 1.0]
    return {"X": X, "y": y, "n_lab": n_lab, "kernel": "linear", "sigma": 1.0, "C": 1.0, "C_star": 1.0}


def _model(name):
    return {"name": name, "labels": "--++", "beta": [-0.5, 0.5, 0.0, 0.0, 0.0, 0.0], "b": 0.0,
            "objective": 1.5, "unlabeled_error": 0.0}


def _curves(path, datasets, methods):
    # Records as `figures --make-data sigir2006-curves` writes them (the fields the figures read).
    rows = []
    for ds in datasets:
        for m_i, m in enumerate(methods):
            for n in (45, 90):
                for split in (0, 1):
                    rows.append({"key": f"{ds}/{n}/{split}/{m}", "dataset": ds, "method": m, "n_labels": n,
                                 "split": split, "objective": None if m == "SVM" else 0.1 + 0.01 * m_i + 1 / n,
                                 "unlabeled_error": 0.1 + 0.01 * m_i, "test_error": 0.12 + 0.005 * split,
                                 "cpu_seconds": 0.5 * n * (m_i + 1)})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _fig10(path):
    rows = [{"method": m, "split": s, "angle": 25.0 + 7 * s + m_i, "unlabeled_error": 0.06,
             "test_error": 0.05 + 0.01 * s} for m_i, m in enumerate(("S3VM-light", "nabla-S3VM")) for s in range(4)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _icml2013_rows(path, fig5=None):
    # ICML 2013 Table 2's rows as the grid stores them (harness.icml2013.record_fields), under the
    # keys of the spec's cells: D1 and D5, splits 0-1; a failed row and a row of an earlier key of
    # split 2 carry no Figure 5 values that count.
    from s3vm_bench.harness.grid import store_rows
    from s3vm_bench.harness.icml2013 import KEY, record_fields
    from s3vm_bench.harness.reproduce import build_cells
    from s3vm_bench.harness.specs import get_spec

    best = {m: {"val_err": 0.0, "unl_err": 0.1, "test_err": 0.1, "C": 1.0, "gamma": 1.0, "c_star": 1.0}
            for m in ("svm", "light", "cccp", "path", "light_l1", "cccp_b")}
    rows = []
    for p in build_cells(get_spec(KEY))[0]:
        if p.dataset not in ("breast-cancer-wdbc", "ionosphere") or p.cell.split > 2:
            continue
        fields = record_fields({"n_train": 10, "n_lab": 2, "best": best, "timing": [], "seconds": 1.0,
                                "fig5": fig5 or [{"C": C, "path": C, "light": 2 * C, "cccp": 3 * C,
                                                  "light_l1": 1.5 * C, "cccp_b": 2.5 * C} for C in (1.0, 10.0)]})
        row = {"experiment": KEY, "dataset": p.dataset, "protocol": p.cell.protocol, "split": p.cell.split,
               "solver": p.cell.solver, "params": {}, "cell_key": p.cell.key(), "status": "done"} | fields
        if p.cell.split == 2:
            row |= {"status": "failed", "error": "Traceback: boom"} if p.dataset == "ionosphere" else \
                {"cell_key": "0" * 32}
        rows.append(row)
    store_rows(path, rows)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Tiny stored results for every figure that reads one, by figure name."""
    d = tmp_path_factory.mktemp("fig_inputs")
    fig1 = d / "jmlr2008-fig1.json"
    fig1.write_text(json.dumps({"problem": _problem(), "models": [_model("global"), _model("local")]}))
    fig4 = d / "icml2006-fig4.json"
    fig4.write_text(json.dumps({"panels": [{"title": t, "problem": _problem(), "models": [_model("DA")]}
                                           for t in ("2MOONS", "2CIRCLES")]}))
    cells = d / "runs"
    _icml2013_rows(cells)
    fig6 = d / "fig6.jsonl"
    fig6.write_text("".join(json.dumps({"id": "D1", "dataset": "a", "split": s, "C": 10.0, "path": 0.3,
                                        "light_l1": {"1": 0.1, "5": 0.4}, "cccp_b": {"1": 0.2, "5": 1.0}}) + "\n"
                            for s in (0, 1)))
    sigir = d / "sigir2006-curves.jsonl"
    _curves(sigir, FE._SIGIR_ALL, ("SVM", "TSVM S=1", "TSVM S=10", "TSVM S=100", "TSVM S=max", "MFA", "MFA T=1",
                                  "MFA T=0.1", "MFA T=0.01", "MFA T=0.001", "MFA T=0.2", "MFA T=0.02", "MFA T=0.002"))
    fig9 = d / "jmlr2008-fig9.jsonl"
    fig9.write_text("".join(json.dumps({"method": m, "steps": k, "unlabeled_error": e}) + "\n"
                            for m, k, e in (("CCCP", 1, 0.3), ("CCCP", 10, 0.2), ("Newton", 1, 0.25),
                                            ("Newton", 10, 0.26))))
    fig10 = d / "jmlr2008-fig10.jsonl"
    _fig10(fig10)
    cars = [(f"car{i}", np.arange(1024, dtype=float).reshape(32, 32) % (50 * (i + 1))) for i in range(3)]
    out = {"jmlr2008-fig1": {"data": fig1}, "icml2006-fig4": {"data": fig4}, "icml2013-fig5": {"cells": cells},
           "icml2013-fig6": {"data": fig6}, "icml2006-fig5": {"data": sigir}, "jmlr2008-fig9": {"data": fig9},
           "jmlr2008-fig10": {"data": fig10}, "nips2006-fig2": {"images": cars}}
    out.update({n: {"data": sigir} for n in F.FIGURES if n.startswith("sigir2006-") and F.FIGURES[n].inputs})
    return out


def test_every_figure_has_inputs_or_is_closed_form(inputs):
    for name, spec in F.FIGURES.items():
        assert set(spec.inputs) == set(inputs.get(name, {})), name


#: SIGIR Figs. 5-13 share the learning-curve code of Fig. 4; one of each metric runs by default.
_SIGIR_REPEATS = {f"sigir2006-fig{k}" for k in (6, 7, 9, 10, 11, 13)}
#: One figure of each kind is rendered twice by default (a render takes about a second).
_TWICE = ("jmlr2008-fig4", "jmlr2008-fig1", "nips2006-fig2", "icml2013-fig5", "sigir2006-fig5", "jmlr2008-fig9",
          "jmlr2008-fig10", "icml2006-fig5", "sigir2006-fig11")
_ONCE = [n for n in F.FIGURES if n not in _TWICE]
_ALL = [pytest.param(n, marks=pytest.mark.slow) if n in _SIGIR_REPEATS else n for n in _ONCE]


def _check_files(name, paths):
    assert [p.name for p in paths] == [f"{name}.png", f"{name}.svg"]
    png, svg = (p.read_bytes() for p in paths)
    assert png.startswith(PNG_MAGIC) and b"<svg" in svg[:2000]
    # No timestamp or software version: the bytes depend on the drawing only.
    assert b"Software" not in png and b"<dc:date>" not in svg and b"Matplotlib v" not in svg


@pytest.mark.parametrize("name", _ALL)
def test_figure_writes_png_and_svg(name, inputs, tmp_path):
    _check_files(name, F.make_figure(name, tmp_path, **inputs.get(name, {})))


@pytest.mark.parametrize("name", list(_TWICE) + [pytest.param(n, marks=pytest.mark.slow) for n in _ONCE])
def test_two_runs_give_identical_bytes(name, inputs, tmp_path):
    first = F.make_figure(name, tmp_path / "a", **inputs.get(name, {}))
    second = F.make_figure(name, tmp_path / "b", **inputs.get(name, {}))
    _check_files(name, first)
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes(), f"{a.name} differs between two runs"


def test_missing_data_names_the_producing_command(tmp_path):
    with pytest.raises(F.MissingData, match="run `s3vm-bench figures --make-data jmlr2008-fig1`"):
        F.make_figure("jmlr2008-fig1", tmp_path, data=tmp_path / "absent.json")
    with pytest.raises(F.MissingData, match="run `s3vm-bench figures --make-data jmlr2008-fig10`"):
        F.make_figure("jmlr2008-fig10", tmp_path, data=tmp_path / "absent.jsonl")
    with pytest.raises(F.MissingData, match="run `s3vm-bench reproduce icml2013-table2`"):
        F.make_figure("icml2013-fig5", tmp_path, cells=tmp_path / "absent")
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_icml2013_figures_need_the_judged_solvers(tmp_path):
    # Figure 5 rows and Figure 6 lines of the squared-hinge S3VM-light and count-searched CCCP
    # only are not these figures' data: named as missing, nothing drawn.
    cells = tmp_path / "runs"
    _icml2013_rows(cells, fig5=[{"C": 1.0, "path": 1.0, "light": 2.0, "cccp": 3.0}])
    with pytest.raises(F.MissingData, match="no Figure 5 value of S3VM-light"):
        F.make_figure("icml2013-fig5", tmp_path, cells=cells)
    fig6 = tmp_path / "fig6.jsonl"
    fig6.write_text(json.dumps({"id": "D1", "dataset": "a", "split": 0, "C": 10.0, "path": 0.3, "light": {"1": 0.1},
                                "cccp": {"1": 0.2}}) + "\n"
                    # the judged solvers at another C than the caption's 10: not this figure's either
                    + json.dumps({"id": "D1", "dataset": "a", "split": 0, "C": 100.0, "path": 0.3,
                                  "light_l1": {"1": 0.1}, "cccp_b": {"1": 0.2}}) + "\n")
    with pytest.raises(F.MissingData, match="judged S3VM-light and CCCP"):
        F.make_figure("icml2013-fig6", tmp_path, data=fig6)
    assert not list(tmp_path.glob("icml2013-fig*.*"))
    # A store with some of the cells (a stopped run): drawn, and said.
    with fig6.open("a") as f:
        f.write(json.dumps({"id": "D1", "dataset": "a", "split": 0, "C": 10.0, "path": 0.3, "light_l1": {"1": 0.1},
                            "cccp_b": {"1": 0.2}}) + "\n")
    with pytest.warns(RuntimeWarning, match=r"drawn from 1 of the 30 \(data set, split\) timings of a full run"):
        F.make_figure("icml2013-fig6", tmp_path, data=fig6)
    assert (tmp_path / "icml2013-fig6.png").is_file()


def test_empty_result_file_is_missing_data(tmp_path):
    empty = tmp_path / "runs"  # a results store without a row of the table
    empty.mkdir()
    with pytest.raises(F.MissingData, match="no result"):
        F.make_figure("icml2013-fig5", tmp_path, cells=empty)


def test_unknown_figure_and_input(tmp_path):
    with pytest.raises(ValueError, match="unknown figure"):
        F.make_figure("jmlr2008-fig99", tmp_path)
    with pytest.raises(ValueError, match="takes inputs"):
        F.make_figure("jmlr2008-fig2", tmp_path, data="x")


def test_cli_all_skips_missing_and_writes_gallery(monkeypatch, tmp_path, capsys):
    keep = {n: F.FIGURES[n] for n in ("jmlr2008-fig2", "jmlr2008-fig9")}
    keep["jmlr2008-fig9"] = F.FigureSpec(**{**keep["jmlr2008-fig9"].__dict__,
                                            "inputs": {"data": tmp_path / "absent.csv"}})
    monkeypatch.setattr(F, "FIGURES", keep)
    assert main(["figures", "--all", "--out", str(tmp_path / "out")]) == 0
    text = capsys.readouterr().out
    assert "jmlr2008-fig9: skipped" in text and "1 figure(s) made, 1 skipped" in text
    gallery = (tmp_path / "out" / "figures" / "README.md").read_text()
    assert "![jmlr2008-fig2](jmlr2008-fig2.png)" in gallery and "s3vm-bench figures jmlr2008-fig2" in gallery
    assert "| jmlr2008-fig9 | JMLR 2008 Fig. 9 |" in gallery
    assert (tmp_path / "out" / "figures" / "jmlr2008-fig2.svg").is_file()


def _work_copy(out, name, text):
    # The work folder's copy of a stored input (read before the shipped one), with the given text.
    path = out / "reports" / "figures-data" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_empty_stored_json_is_an_error_naming_the_file(tmp_path, capsys, monkeypatch):
    # An empty work folder copy of jmlr2008-fig1.json: a one-line error naming the file, what is
    # wrong and how to restore or remake it, status 2, nothing drawn; never a JSONDecodeError.
    monkeypatch.setenv("S3VM_RESULTS_DIR", str(tmp_path))
    path = _work_copy(tmp_path, "jmlr2008-fig1.json", "")
    assert main(["figures", "jmlr2008-fig1", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: jmlr2008-fig1: {path} is empty, not valid JSON; restore it")
    assert f"copy the shipped {F.REPORTS_DIR / 'figures-data' / 'jmlr2008-fig1.json'} over it" in err[0]
    assert err[0].endswith("or delete it and run `s3vm-bench figures --make-data jmlr2008-fig1` to make it")
    assert not (tmp_path / "figures").exists()
    with pytest.raises(F.CorruptData, match="jmlr2008-fig1.json is empty, not valid JSON"):
        F.make_figure("jmlr2008-fig1", tmp_path / "figures")
    assert issubclass(F.CorruptData, ValueError)
    # A JSON document that is not an object, and the line of a syntax error.
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]\n")
    with pytest.raises(F.CorruptData, match="bad.json holds a JSON list, not a JSON object"):
        F.make_figure("jmlr2008-fig1", tmp_path / "figures", data=bad)
    bad.write_text('{"problem": {},\n "models": [,]}\n')
    with pytest.raises(F.CorruptData, match=r"bad.json is not valid JSON at line 2, column 13 \(Expecting value\)"):
        F.make_figure("jmlr2008-fig1", tmp_path / "figures", data=bad)
    # The shipped file itself is restored from git.
    from s3vm_bench.harness.figure_registry import _corrupt

    msg = str(_corrupt(F.REPORTS_DIR / "figures-data" / "jmlr2008-fig1.json", "is empty", "run `x`"))
    assert "restore it (`git checkout -- reports/figures-data/jmlr2008-fig1.json` in a source checkout)" in msg


def test_corrupt_middle_line_of_stored_jsonl_is_an_error_with_its_line(tmp_path, capsys, monkeypatch):
    # A garbage line between records: the error names the file and the line, status 2. A last
    # line cut short (no newline) is a write that did not finish: left out with a warning, drawn.
    monkeypatch.setenv("S3VM_RESULTS_DIR", str(tmp_path))
    good = [json.dumps({"method": "CCCP", "steps": k, "unlabeled_error": 0.2}) for k in (1, 10)]
    path = _work_copy(tmp_path, "jmlr2008-fig9.jsonl", "\n".join([good[0], "garbage{", good[1]]) + "\n")
    assert main(["figures", "jmlr2008-fig9", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: jmlr2008-fig9: {path} is not readable: line 2 is not valid JSON ")
    assert err[0].endswith("or delete it and run `s3vm-bench figures --make-data jmlr2008-fig9`")
    with pytest.raises(F.CorruptData, match=r"jmlr2008-fig9.jsonl is not readable: line 2 is not valid JSON \(Expecting value"):
        F.make_figure("jmlr2008-fig9", tmp_path / "figures")
    path.write_text("\n".join(good) + "\n" + good[0] + "\n7\n")
    with pytest.raises(F.CorruptData, match="is not readable: line 4 is a JSON int, not a JSON object"):
        F.make_figure("jmlr2008-fig9", tmp_path / "figures")
    path.write_text("\n".join(good) + "\n" + good[0][:20])
    with pytest.warns(RuntimeWarning, match="unterminated last line"):
        _check_files("jmlr2008-fig9", F.make_figure("jmlr2008-fig9", tmp_path / "figures"))


def test_cli_all_reports_a_corrupt_input_and_draws_the_others(monkeypatch, tmp_path, capsys):
    # --all: the figure with a corrupt input is reported (stderr) and left out of the gallery's
    # figures, the figure with a missing input is skipped as before, the others are drawn; status 2.
    keep = {n: F.FIGURES[n] for n in ("jmlr2008-fig1", "jmlr2008-fig2", "jmlr2008-fig9")}
    keep["jmlr2008-fig9"] = F.FigureSpec(**{**keep["jmlr2008-fig9"].__dict__,
                                            "inputs": {"data": tmp_path / "absent.jsonl"}})
    monkeypatch.setattr(F, "FIGURES", keep)
    out = tmp_path / "out"
    _work_copy(out, "jmlr2008-fig1.json", "")
    assert main(["figures", "--all", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: jmlr2008-fig1: ") and len(captured.err.strip().splitlines()) == 1
    assert "jmlr2008-fig9: skipped" in captured.out
    assert "1 figure(s) made, 1 skipped (missing stored results), 1 not made (corrupt stored input" in captured.out
    assert (out / "figures" / "jmlr2008-fig2.png").is_file() and not (out / "figures" / "jmlr2008-fig1.png").exists()
    gallery = (out / "figures" / "README.md").read_text()
    assert "| jmlr2008-fig1 | JMLR 2008 Fig. 1 | error: " in gallery and "| jmlr2008-fig9 | JMLR 2008 Fig. 9 |" in gallery


def test_cli_list_and_errors(capsys, tmp_path):
    assert main(["figures", "--list"]) == 0
    assert "icml2013-fig5" in capsys.readouterr().out
    assert main(["figures", "--out", str(tmp_path)]) == 2
    assert main(["figures", "nope", "--out", str(tmp_path)]) == 2
    assert main(["figures", "sigir2006-fig3", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "figures" / "sigir2006-fig3.png").is_file()


def test_da_effective_loss_limits():
    # T -> 0 recovers min(V(t), V(-t)) (JMLR 2008 Fig. 4 caption); tiny T is close to it.
    t = np.linspace(-2, 2, 41)
    exact = FL._da_effective_loss(t, 0.0, "l2")
    np.testing.assert_allclose(FL._da_effective_loss(t, 1e-4, "l2"), exact, atol=1e-3)
    # Large T: the mean of V(t) and V(-t) (p* -> 1/2), after the T log 2 shift.
    from s3vm_bench.solvers.losses import squared_hinge_loss

    mean = 0.5 * (squared_hinge_loss(t).value + squared_hinge_loss(-t).value)
    np.testing.assert_allclose(FL._da_effective_loss(t, 1e4, "l2"), mean, atol=2e-3)


# ------------------------------------------------------------------ harness.figure_data
@pytest.mark.parametrize("k", [1, 2, 3, 5, 10, 20])
def test_fig9_params_give_k_annealing_steps(k):
    # JMLR 2008 Fig. 9 varies only the number of steps: every method's schedule has exactly k values.
    from s3vm_bench.solvers._mean_output import c_star_schedule
    from s3vm_bench.solvers.s3vm_light import anneal_schedule

    light = fdr._fig9_params("S3VM-light", k)
    sched = anneal_schedule(31.0, light["anneal_start"], light.get("anneal_factor", 1.5))
    assert sched.size == k and sched[-1] == 31.0
    assert c_star_schedule(31.0, fdr._fig9_params("Newton", k)["anneal_steps"], 2.0 ** -9).size == k
    cccp = fdr._fig9_params("CCCP", k)
    assert cccp["anneal"] == (k > 1) and cccp["anneal_steps"] == k
    da = fdr._fig9_params("DA", k)
    assert da.pop("select") == "last"  # JMLR's DA: the final iterate, as in Table 2
    assert "select" not in fdr._fig9_params("nabla-DA", k)  # grad_da has no such choice
    if k == 1:
        assert da == {"T_fixed": fdr.FIG9_T_END}
    else:
        assert da["max_anneal"] == k
        assert da["T0"] / da["R"] ** (k - 1) == pytest.approx(fdr.FIG9_T_END)


def test_records_resume_and_atomic_finish(tmp_path):
    calls = []

    def cell(v):
        calls.append(v)
        return {"v": v}

    store = fd._Records(tmp_path / "x.jsonl", only="a")
    assert store.get("a/1", lambda: cell(1)) == {"key": "a/1", "v": 1}
    assert store.get("b/1", lambda: cell(2)) is None  # filtered: not run
    store.finish([store.done["a/1"], None])
    assert not (tmp_path / "x.jsonl").exists()  # a filtered run never writes the final file
    store = fd._Records(tmp_path / "x.jsonl")  # resumes from the partial file
    recs = [store.get("a/1", lambda: cell(3)), store.get("b/1", lambda: cell(4))]
    assert calls == [1, 4] and store.resumed == 1
    store.finish(recs)
    lines = (tmp_path / "x.jsonl").read_text().splitlines()
    assert [json.loads(x)["v"] for x in lines] == [1, 4]
    assert not (tmp_path / "x.jsonl.partial").exists()


def test_a_corrupt_line_of_a_partial_records_file_is_named(tmp_path):
    """A resumed run whose partial file has a line that is not a JSON object: an error naming the
    file and the line, not a bare JSONDecodeError; an unterminated last line is still left out."""
    partial = tmp_path / "x.jsonl.partial"
    partial.write_text('{"key": "a/1", "v": 1}\n{"key": "a/2", \n{"key": "a/3", "v": 3}\n')
    with pytest.raises(ValueError, match=r"x\.jsonl\.partial: line 2 is not valid JSON .*delete that line"):
        fd._Records(tmp_path / "x.jsonl")
    partial.write_text('{"key": "a/1", "v": 1}\n[1, 2]\n')
    with pytest.raises(ValueError, match="line 2 is a JSON list, not a JSON object"):
        fd._Records(tmp_path / "x.jsonl")
    partial.write_text('{"key": "a/1", "v": 1}\n{"v": 2}\n')  # valid JSON without the key
    with pytest.raises(ValueError, match="line 2 is a record without the field 'key'; delete that line"):
        fd._Records(tmp_path / "x.jsonl")
    partial.write_text('{"key": "a/1", "v": 1}\n{"key": "a/2", "v"')
    with pytest.warns(RuntimeWarning, match="unterminated last line"):
        assert list(fd._Records(tmp_path / "x.jsonl").done) == ["a/1"]


def test_records_of_other_parameters_are_computed_again(tmp_path):
    store = fd._Records(tmp_path / "x.jsonl")
    store.get("a/1", lambda: {"params": {"T0": 10.0}, "v": 1}, params={"T0": 10.0})
    store = fd._Records(tmp_path / "x.jsonl")
    assert store.get("a/1", lambda: {"v": 2}, params={"T0": 10.0})["v"] == 1  # same parameters: read back
    new = store.get("a/1", lambda: {"params": {"T0": 10.0, "select": "last"}, "v": 3},
                    params={"T0": 10.0, "select": "last"})
    assert new["v"] == 3
    assert fd._Records(tmp_path / "x.jsonl").done["a/1"]["v"] == 3  # the newer line wins on reload


def test_biased_split_partition_and_angle():
    from s3vm_bench.data_registry import Split

    rng = np.random.default_rng(0)
    ds = type("DS", (), {"X": rng.standard_normal((120, 5)) * [3.0, 1, 1, 1, 1]})()
    split = Split("t", 0, 0, np.arange(10), np.arange(10, 120), np.empty(0, int), np.empty(0, int))
    b0, a0 = fd.biased_split(ds, split, 0.0, seed=1)
    b1, a1 = fd.biased_split(ds, split, 0.0, seed=1)
    assert np.array_equal(b0.test, b1.test) and a0 == a1  # seeded
    assert b0.test.size == round(0.25 * 110) and np.intersect1d(b0.test, b0.unlabeled).size == 0
    assert np.array_equal(np.sort(np.r_[b0.test, b0.unlabeled]), np.arange(10, 120))
    assert 0.0 <= a0 <= 90.0


def test_coil3_images_are_fetched_through_the_registry(data_env, tmp_path):
    # An empty cache with a mirror set: the input data is fetched and checked, not skipped.
    paths = F.make_figure("nips2006-fig2", tmp_path)
    _check_files("nips2006-fig2", paths)


def test_coil3_images_unfetchable_is_missing_data(tmp_path, monkeypatch, no_retry_wait):
    monkeypatch.setenv("S3VM_DATA_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("S3VM_DATA_MIRROR", str(tmp_path / "no-such-mirror"))
    with pytest.raises(F.MissingData, match="s3vm-bench data fetch coil3"):
        F.make_figure("nips2006-fig2", tmp_path / "out")
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_icml2013_figures_plot_the_judged_solvers_values(inputs):
    # Fig. 5 rows carry both solver sets (light/cccp: the squared-hinge and count-searched ones;
    # light_l1/cccp_b: Table 2's judged ones); the curves must be the judged ones and the path.
    from matplotlib.figure import Figure

    fig = Figure()
    F.FIGURES["icml2013-fig5"].draw(fig, **inputs["icml2013-fig5"])
    curves = {line.get_label(): list(line.get_ydata()) for line in fig.axes[0].get_lines()}
    assert curves == {"S3VM-path": [1.0, 10.0], "S3VM-light": [1.5, 15.0], "CCCP": [2.5, 25.0]}
    fig = Figure()
    F.FIGURES["icml2013-fig6"].draw(fig, **inputs["icml2013-fig6"])
    curves = {line.get_label(): list(line.get_ydata()) for line in fig.axes[0].get_lines()}
    assert curves["S3VM-light"] == [0.1, 0.4] and curves["CCCP"] == [0.2, 1.0]
    assert curves["S3VM-path"] == [0.3, 0.3]  # the path's time, one horizontal line


def test_every_stored_input_is_made_by_a_named_command():
    # Each figure's default stored input is a file of figure_data.DATA (made by --make-data) or
    # ICML 2013 Table 2's rows (made by `reproduce`), and DATA says which figures read it.
    made = {d.path: d for d in fd.DATA.values()}
    for name, spec in F.FIGURES.items():
        for value in spec.inputs.values():
            if isinstance(value, F._Stored):
                if value.relpath == "runs/icml2013-table2":
                    assert "reproduce icml2013-table2" in spec.source, name
                    continue
                assert value.relpath in made, (name, value.relpath)
                assert name in made[value.relpath].figures, name
                assert f"--make-data {made[value.relpath].name}" in spec.source, name
    for d in fd.DATA.values():
        assert (F.REPORTS_DIR / d.path).is_file(), d.path  # shipped
    # The CLI's help names every data set it can make (it does not import figure_data to list them).
    from s3vm_bench.harness.cli import build_parser

    fg = build_parser()._subparsers._group_actions[0].choices["figures"]
    help_text = next(a.help for a in fg._actions if a.dest == "make_data")
    assert all(n in help_text for n in fd.DATA)


def test_figures_read_the_work_folder_copy_before_the_shipped_one(tmp_path, monkeypatch):
    monkeypatch.setenv("S3VM_RESULTS_DIR", str(tmp_path))
    stored = F.FIGURES["jmlr2008-fig10"].inputs["data"]
    assert stored.path() == F.REPORTS_DIR / "figures-data" / "jmlr2008-fig10.jsonl"
    local = tmp_path / "reports" / "figures-data" / "jmlr2008-fig10.jsonl"
    local.parent.mkdir(parents=True)
    local.write_text("\n")
    assert stored.path() == local
    with pytest.raises(F.MissingData, match="no result"):  # the (empty) work folder copy is the one read
        F.make_figure("jmlr2008-fig10", tmp_path / "figures")


def test_make_data_reproduces_the_shipped_boundary_models_and_draws_them(tmp_path, capsys):
    # The two decision-boundary inputs (seconds to make) against the committed ones: same
    # realization and labelings, the same numbers up to the last digits of the linear algebra.
    out = tmp_path / "w"
    assert main(["figures", "jmlr2008-fig1", "icml2006-fig4", "--make-data", "jmlr2008-fig1", "icml2006-fig4",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2 figure(s) made" in text
    for name in ("jmlr2008-fig1", "icml2006-fig4"):
        made = json.loads((out / "reports" / "figures-data" / f"{name}.json").read_text())
        shipped = json.loads((F.REPORTS_DIR / "figures-data" / f"{name}.json").read_text())
        panels = [(m, s) for a, b in zip(made.get("panels", [made]), shipped.get("panels", [shipped]))
                  for m, s in zip([a] + a["models"], [b] + b["models"])]
        assert len(panels) == (3 if name == "jmlr2008-fig1" else 4)
        for m, s in panels:
            assert m.keys() == s.keys()
            for key in m:
                if key in ("beta", "b", "objective", "problem"):
                    np.testing.assert_allclose(np.hstack([np.ravel(v) for v in _numbers(m[key])]),
                                               np.hstack([np.ravel(v) for v in _numbers(s[key])]), rtol=1e-6, atol=1e-9)
                elif key not in ("models",):
                    assert m[key] == s[key], (name, key)
        assert (out / "figures" / f"{name}.png").is_file()


def _numbers(v):
    if isinstance(v, dict):
        return [x for k in sorted(v) for x in _numbers(v[k]) if not isinstance(v[k], str)]
    if isinstance(v, list):
        return [x for item in v for x in _numbers(item)]
    return [] if isinstance(v, str) else [float(v)]


def test_make_data_cli_errors(tmp_path, capsys):
    assert main(["figures", "--make-data", "jmlr2008-fig99", "--out", str(tmp_path)]) == 2
    assert "unknown figure data 'jmlr2008-fig99' (did you mean 'jmlr2008-fig9'?)" in capsys.readouterr().err
    assert main(["figures", "--only", "D1/", "--out", str(tmp_path)]) == 2
    assert main(["figures", "--make-data", "jmlr2008-fig1", "--only", "x", "--out", str(tmp_path)]) == 2
    assert "--only does not apply" in capsys.readouterr().err
    assert not (tmp_path / "reports").exists()


def test_make_data_records_split_over_workers_then_collected(tmp_path, monkeypatch):
    # A resumable experiment: a run with `only` computes its cells and leaves the partial file; a
    # full run computes only the rest and writes the file in the experiment's cell order.
    calls = []

    def experiment(store):
        recs = []
        for key in ("b/1", "a/1", "a/2"):
            recs.append(store.get(key, lambda key=key: calls.append(key) or {"v": key}))
        return recs

    monkeypatch.setitem(fd.DATA, "toy", fd.DataSpec("toy", "figures-data/toy.jsonl", experiment, "records", ()))
    partial = fd.make_data("toy", tmp_path, only="a/", echo=lambda m: None)
    assert partial.name == "toy.jsonl.partial" and calls == ["a/1", "a/2"]
    final = fd.make_data("toy", tmp_path, echo=lambda m: None)
    assert final == tmp_path / "figures-data" / "toy.jsonl" and calls == ["a/1", "a/2", "b/1"]
    assert [json.loads(x)["key"] for x in final.read_text().splitlines()] == ["b/1", "a/1", "a/2"]
    assert not partial.exists()
    with pytest.raises(ValueError, match="unknown figure data"):
        fd.make_data("nope", tmp_path)
    # An `only` that no key starts with is a mistyped prefix, not an empty share of the work.
    with pytest.raises(ValueError, match="no cell of toy has a key starting with 'c/'.*'b/1'"):
        fd.make_data("toy", tmp_path, only="c/", echo=lambda m: None)
    assert calls == ["a/1", "a/2", "b/1"]


def test_icml2013_fig6_appends_the_missing_cells_only(tmp_path, monkeypatch):
    # One line per (data set, split) not yet stored with the judged solvers' times at this C; the
    # first cell is run once more, untimed, before the stored runs.
    calls = []

    def fake_split(pid, index, C):
        calls.append((pid, index))
        return {"id": pid, "dataset": "x", "split": index, "C": C, "gamma": 0.5, "path": 0.1,
                "light_l1": {"1": 0.1}, "cccp_b": {"1": 0.2}}

    monkeypatch.setattr(fd, "fig6_split", fake_split)
    path = tmp_path / "icml2013" / "fig6.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps({"id": "D1", "split": 0, "C": 10.0, "light_l1": {}}) + "\n"
                    + json.dumps({"id": "D1", "split": 1, "C": 10.0, "light": {}}) + "\n"  # other solvers
                    + json.dumps({"id": "D1", "split": 2, "C": 100.0, "light_l1": {}}) + "\n")  # other C
    assert fd.icml2013_fig6(path, datasets=["D1", "D5"], n_splits=3, only="D1/", echo=lambda m: None) == 2
    assert calls == [("D1", 1), ("D1", 1), ("D1", 2)]
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [(r["id"], r["split"]) for r in lines[3:]] == [("D1", 1), ("D1", 2)]
    calls.clear()
    fd.make_data("icml2013-fig6", tmp_path, only="D1/", echo=lambda m: None)  # nothing left of D1
    assert calls == []
    with pytest.raises(ValueError, match="no cell of icml2013-fig6 has a key starting with 'D99/'"):
        fd.icml2013_fig6(path, datasets=["D1", "D5"], n_splits=3, only="D99/", echo=lambda m: None)
    assert calls == []
    # A line with the judged solvers' times but without its split is named.
    path.write_text(json.dumps({"id": "D1", "C": 10.0, "light_l1": {}}) + "\n")
    with pytest.raises(ValueError, match="line 1 is a record without the field 'split'; delete that line"):
        fd.icml2013_fig6(path, datasets=["D1"], n_splits=3, echo=lambda m: None)
    assert calls == []


def test_stored_input_without_a_field_the_figure_reads_is_corrupt_data(tmp_path):
    """Valid JSON from an older or hand-edited file: the part without the field is named."""
    fig1 = json.loads((F.REPORTS_DIR / "figures-data" / "jmlr2008-fig1.json").read_text())
    fig4 = json.loads((F.REPORTS_DIR / "figures-data" / "icml2006-fig4.json").read_text())
    no_beta = json.loads(json.dumps(fig1))
    del no_beta["models"][1]["beta"]
    no_sigma = json.loads(json.dumps(fig1))
    del no_sigma["problem"]["sigma"]
    models_object = dict(fig1, models={})
    no_b = json.loads(json.dumps(fig4))
    del no_b["panels"][0]["models"][0]["b"]
    no_title = json.loads(json.dumps(fig4))
    del no_title["panels"][1]["title"]
    rec = json.dumps({"method": "CCCP", "steps": 1, "unlabeled_error": 0.2})
    cases = [("jmlr2008-fig1", no_beta, r"models\[1\] has no field 'beta'"),
             ("jmlr2008-fig1", no_sigma, "problem has no field 'sigma'"),
             ("jmlr2008-fig1", models_object, "models is a JSON object, not a non-empty JSON array"),
             ("icml2006-fig4", no_b, r"panels\[0\]\.models\[0\] has no field 'b'"),
             ("icml2006-fig4", no_title, r"panels\[1\] has no field 'title'"),
             ("icml2006-fig4", {"figure": "icml2006-fig4"}, "the document has no field 'panels'"),
             ("jmlr2008-fig9", f"{rec}\n" + json.dumps({"method": "CCCP", "steps": 2}) + "\n",
              "line 2 is a record without the field 'unlabeled_error'"),
             ("jmlr2008-fig10", json.dumps({"method": "CCCP", "angle": 1.0}) + "\n",
              "line 1 is a record without the fields 'unlabeled_error', 'test_error'"),
             ("sigir2006-fig4", json.dumps({"method": "MFA", "dataset": "pcmac"}) + "\n",
              "line 1 is a record without the field 'n_labels'"),
             ("icml2013-fig6", json.dumps({"id": "D1", "C": 10.0, "light_l1": {}}) + "\n",
              "line 1 is a record without the fields 'dataset', 'path', 'cccp_b'")]
    for name, doc, match in cases:
        path = tmp_path / ("in.json" if isinstance(doc, dict) else "in.jsonl")
        path.write_text(json.dumps(doc) if isinstance(doc, dict) else doc)
        with pytest.raises(F.CorruptData, match=f"{path.name} is not readable: {match}; restore it"):
            F.make_figure(name, tmp_path / "figures", data=path)
    assert not (tmp_path / "figures").exists()
    # The shipped files have every field: both figures are drawn from copies of them.
    for name, doc in (("jmlr2008-fig1", fig1), ("icml2006-fig4", fig4)):
        (tmp_path / "ok.json").write_text(json.dumps(doc))
        _check_files(name, F.make_figure(name, tmp_path / "figures", data=tmp_path / "ok.json"))
