"""ICML 2013 Table 2's report: reproduced mean (sd) beside the paper's, the path timing, Figure 5.

The table's cells are grid cells (protocol ``"icml2013-table2"``, :mod:`harness.icml2013`): one per
(data set, split), whose row holds the split's record in ``details``. :func:`write_table` is the
spec's report writer (``TableSpec.report``): from the rows of the planned cells it writes
``icml2013-table2.md`` -- per data set and method, the mean and sample sd over the splits of the
unlabeled and test errors (%) of the selected model beside ICML 2013 Table 2's values
(``reports/targets/icml2013-table2.csv``); the time of the entire S3VM-path over that of
S3VM-light with its 10 annealing steps, per S3VM-path source version (``path_code``); Figure 5's
objectives J(f*, y^) at C* = C (ICML 2013 Sec. 6) -- and ``icml2013-table2.csv`` (one line per
report cell, as every table's). :func:`stored_records` reads the records of a results store for
Figure 5 (:mod:`harness.figures`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._atomic import atomic_write
from .icml2013 import DATASETS, KEY, METHOD_LABELS, REPORT_METHODS, parse_details, pid_of
from .report_cells import ReportCell, load_targets
from .table_cells import build_cells
from .table_report import table_verdict, write_cells_csv

__all__ = ["records", "stored_records", "report_cells", "report", "write_table"]


def records(rows) -> dict:
    """``{(paper ID, split): record}`` of the successful rows of ICML 2013 Table 2 among ``rows``.

    A record is the row's ``details`` (:func:`harness.icml2013.parse_details`) with ``id``,
    ``dataset`` and ``split``; rows of other tables, failed rows and rows without details are
    left out.
    """
    out = {}
    for r in rows:
        if r.get("experiment") != KEY or r.get("status") != "done" or not r.get("details"):
            continue
        split = int(r["split"])
        out[(pid_of(r["dataset"]), split)] = parse_details(r["details"]) | {
            "id": pid_of(r["dataset"]), "dataset": r["dataset"], "split": split}
    return out


def stored_records(path) -> dict:
    """:func:`records` of the results store ``path`` whose rows are of the table's current cells.

    ``path`` is a results store (a folder of tables, ``reports/runs``), the table's folder in one
    (``reports/runs/icml2013-table2``) or one CSV file. A row counts only under the key of one of
    the cells the spec plans now (:meth:`harness.grid.Cell.key`: the declared versions of this
    table's code and solvers), as the report reads them: a row run by an earlier declared version
    is not a result of this one.
    """
    from .results import read_results_text
    from .specs import get_spec

    path = Path(path)
    if path.is_dir() and (path / KEY).is_dir():
        path = path / KEY
    files = sorted(path.glob("*.csv")) if path.is_dir() else [path]
    current = {p.cell.key() for p in build_cells(get_spec(KEY))[0]}
    rows = [r for f in files for r in read_results_text(f).to_dict("records") if r.get("cell_key") in current]
    return records(rows)


def _column(m: str, j: int) -> str:
    return f"{METHOD_LABELS[m]} {('unlabeled', 'test')[j]}"


def report_cells(cells) -> list:
    """:class:`harness.report_cells.ReportCell` per (data set, method, unlabeled/test) beside the targets.

    Mean and sample sd (in %) over the stored splits of each data set; the verdict rule is
    :attr:`harness.report_cells.ReportCell.verdict` (within our split-to-split sd of the paper's value).
    """
    targets = load_targets(KEY)
    out = []
    for pid in DATASETS:
        recs = [c for (p, _), c in sorted(cells.items()) if p == pid]
        for m in REPORT_METHODS:
            for j, key in enumerate(("unl_err", "test_err")):
                col = _column(m, j)
                pv, pt, pu = targets.get((pid, col), (None, "", "%"))
                v = 100 * np.array([r["best"][m][key] for r in recs if m in r["best"]])
                out.append(ReportCell(pid, col, pu or "%", pv, pt, float(v.mean()) if v.size else None,
                                      float(v.std(ddof=1)) if v.size > 1 else None, int(v.size), 0))
    return out


def report(cells, out=None, notes=()):
    """Markdown table: reproduced mean (sd) beside the paper's, per data set and method.

    Parameters
    ----------
    cells : dict
        The records per (data set, split) (:func:`records`).
    out : path, optional
        Where to write the Markdown (atomically); by default nothing is written.
    notes : sequence of str, default=()
        The protocol's choices, printed as a list under "Protocol and choices" (the spec's notes,
        :data:`harness.icml2013.PROTOCOL_CHOICES`).

    Returns
    -------
    str
        The Markdown text.
    """
    targets = load_targets(KEY)
    n = [f"{pid} {k}" for pid in DATASETS if (k := sum(1 for (p, _) in cells if p == pid))]
    lines = ["# icml2013-table2: ICML 2013 Table 2 (regenerated) -- unlabeled / test error %, mean (sd) over splits",
             "", f"Regenerated by `s3vm-bench reproduce {KEY}` (harness/icml2013.py; protocol and choices below); "
             f"splits with results: {', '.join(n) or 'none'}. "
             "Paper values in brackets.", "",
             f"**Verdict:** {table_verdict(report_cells(cells))}", "",
             "| ID | data | splits | " + " | ".join(f"{m} unl | {m} test" for m in REPORT_METHODS) + " |",
             "|---|---|---|" + "---|---|" * len(REPORT_METHODS)]
    ratios, fig = {}, {}
    for pid in DATASETS:
        recs = [c for (p, _), c in sorted(cells.items()) if p == pid]
        if not recs:
            continue
        cols = []
        for m in REPORT_METHODS:
            for j, key in enumerate(("unl_err", "test_err")):
                v = 100 * np.array([r["best"][m][key] for r in recs if m in r["best"]])
                pm = targets.get((pid, _column(m, j)))
                got = (f"{v.mean():.2f} ({v.std(ddof=1) if v.size > 1 else 0:.2f})"
                       + (f" n={v.size}" if v.size != len(recs) else "")) if v.size else "not run"
                cols.append(got + (f" [{pm[0]:.2f}]" if pm else ""))
        lines.append(f"| {pid} | {DATASETS[pid][0]} | {len(recs)} | " + " | ".join(cols) + " |")
        for r in recs:
            per = ratios.setdefault(r.get("path_code", "(before the field)"), {}).setdefault(pid, [])
            per += [t["path_s"] / t["light_s"] for t in r["timing"]]
            for row in r["fig5"]:
                fig.setdefault((pid, row["C"]), []).append(row)
    lines += ["", "Stand-ins: " + "; ".join(f"{k} {v[0]} ({v[2]})" for k, v in DATASETS.items()), ""]
    for code, per in ratios.items():
        allr = [x for v in per.values() for x in v]
        q = np.percentile(allr, [25, 50, 75])
        lines += [f"Time of the entire path / S3VM-light l2 with 10 annealing steps (s3vm_path.py {code}), over "
                  f"{len(allr)} (data set, split, C, gamma) cells measured in one process: median {q[1]:.2f} "
                  f"(quartiles {q[0]:.2f}-{q[2]:.2f}); per data set: "
                  + ", ".join(f"{pid} {np.median(v):.2f}" for pid, v in per.items()) + ".", ""]
    if notes:
        lines += ["## Protocol and choices", ""] + [f"- {n}" for n in notes] + [""]
    if fig:
        lines += ["## Figure 5: J(f*, y^) at C* = C, gamma = 1/d (mean over splits; lower is better)", "",
                  "S3VM-light and CCCP are Table 2's judged columns (hinge; mean output fixed); 'path best' counts "
                  "the splits where the path's J is the lowest of the three. The squared-hinge S3VM-light and the "
                  "count-searched CCCP are beside them.", "",
                  "| ID | C | S3VM-path | S3VM-light | CCCP | path best | S3VM-light l2 | CCCP searched |",
                  "|---|---|---|---|---|---|---|---|"]
        for (pid, C), rows in fig.items():
            m = {k: f"{np.mean([r[k] for r in rows]):.4g}" if all(k in r for r in rows) else "not run"
                 for k in ("path", "light_l1", "cccp_b", "light", "cccp")}
            wins = f"{sum(r['path'] <= min(r['light_l1'], r['cccp_b']) * (1 + 1e-9) for r in rows)}/{len(rows)}" \
                if all("light_l1" in r and "cccp_b" in r for r in rows) else "not run"
            lines.append(f"| {pid} | {C:g} | {m['path']} | {m['light_l1']} | {m['cccp_b']} | {wins} | "
                         f"{m['light']} | {m['cccp']} |")
    text = "\n".join(lines) + "\n"
    if out:
        atomic_write(out, text)
    return text


def write_table(spec, planned, rows, directory) -> list:
    """The spec's report writer: ``<key>.md`` (:func:`report`) and ``<key>.csv`` into ``directory``.

    Parameters
    ----------
    spec : harness.specs.TableSpec
        ICML 2013 Table 2's spec.
    planned : list
        The planned cells with a row (:func:`harness.table_cells.build_cells`), in the order of ``rows``.
    rows : list of dict
        Their rows (cached or just run; failed ones are left out).
    directory : path

    Returns
    -------
    list of harness.report_cells.ReportCell
    """
    directory = Path(directory)
    cells = records(rows)
    report(cells, directory / f"{spec.key}.md", notes=spec.notes)
    out = report_cells(cells)
    write_cells_csv(directory / f"{spec.key}.csv", out)
    return out
