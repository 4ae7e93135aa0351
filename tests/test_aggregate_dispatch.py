"""harness.reproduce.aggregate: one function per ``TableSpec.aggregate``, looked up by name."""

import dataclasses

import pytest

import s3vm_bench.harness.aggregates as aggregates
from s3vm_bench.harness.reproduce import ReportCell, aggregate, build_cells
from s3vm_bench.harness.specs import SPECS, Config, TableSpec


def _toy_spec(**kw):
    return TableSpec("toy-agg", "toy", (("2moons", "2moons"),), (Config("A", "svm"), Config("B", "newton")),
                     metrics=(("unlabeled", "unlabeled_error"),), n_splits=2, **kw)


def test_every_aggregate_of_the_committed_specs_has_a_function():
    assert {spec.aggregate for spec in SPECS.values()} <= set(aggregates._AGGREGATES)
    assert set(aggregates._AGGREGATES) == {"mean", "rank", "kendall", "success_count", "model_selection",
                                          "relative_improvement", "variance"}


def test_an_unknown_aggregate_is_a_clear_value_error():
    spec = _toy_spec()
    planned, _ = build_cells(spec)
    with pytest.raises(ValueError, match=r"unknown aggregate 'median' in spec toy-agg; known: \[.*'mean'"):
        aggregate(dataclasses.replace(spec, aggregate="median"), planned, [{"status": "failed"}] * len(planned),
                  {}, {})


def test_aggregate_dispatches_to_the_registered_function_with_done_and_failed_rows(monkeypatch):
    seen = []

    def fake(a):
        seen.append(a)
        return [ReportCell("r", "c", "%", None, "", 1.0, None, len(a.done), len(a.failed))]

    monkeypatch.setitem(aggregates._AGGREGATES, "toy-kind", fake)
    spec = dataclasses.replace(_toy_spec(), aggregate="toy-kind")
    planned, _ = build_cells(spec)
    rows = [{"status": "done", "unlabeled_error": 0.1} if p.config == 0 else {"status": "timeout"} for p in planned]
    (cell,) = aggregate(spec, planned, rows, {("2moons", 1): "why"}, {("r", "c"): (2.0, "2", "%")})
    (a,) = seen
    assert a.spec is spec and cell.n == 2 and cell.n_failed == 2
    assert all(p.config == 0 for p, _ in a.done) and all(p.config == 1 for p, _ in a.failed)
    assert a.target("r", "c") == (2.0, "2", "%") and a.target("r", "x") == (None, "", "")
    assert a.n_failed("2moons", 1) == 2 and a.n_failed("2moons", 0) == 0 and a.skipped == {("2moons", 1): "why"}


def test_mean_and_rank_aggregates_on_synthetic_rows():
    spec = _toy_spec()
    planned, _ = build_cells(spec)
    err = {(0, 0): 0.1, (1, 0): 0.3, (0, 1): 0.2, (1, 1): 0.2}  # (split, config) -> error
    rows = [{"status": "done", "unlabeled_error": err[(p.cell.split, p.config)]} for p in planned]
    cells = {c.column: c for c in aggregate(spec, planned, rows, {}, {})}
    assert cells["A unlabeled"].mean == pytest.approx(20.0) and cells["A unlabeled"].std == pytest.approx(14.142135, rel=1e-6)
    assert cells["B unlabeled"].mean == pytest.approx(20.0) and cells["B unlabeled"].std == pytest.approx(0.0) and cells["B unlabeled"].n == 2
    assert cells["A unlabeled"].unit == "%"  # no paper value: the metric's own unit
    # Rank: split 0 A wins (1 vs 2), split 1 B wins; mean ranks 1.5 each.
    ranked = {c.column: c for c in aggregate(dataclasses.replace(spec, aggregate="rank"), planned, rows, {}, {})}
    assert ranked["A"].mean == pytest.approx(1.5) and ranked["B"].mean == pytest.approx(1.5)
    assert ranked["A"].n == 2 and ranked["A"].unit == "rank"
    # No problem solved by both methods: no rank, and the note says why.
    one = [r if p.config == 0 else {"status": "failed"} for p, r in zip(planned, rows)]
    ranked = aggregate(dataclasses.replace(spec, aggregate="rank"), planned, one, {}, {})
    assert all(c.mean is None and "every method" in c.note for c in ranked)


def test_an_extra_column_changes_no_rank_of_the_paper_columns():
    """reproduce --solvers X on a rank table: the paper's columns keep the ranks they have among
    themselves (on every problem they all solved, whatever X ran), and X gets the rank it takes
    among them."""
    paper = dataclasses.replace(_toy_spec(), aggregate="rank")
    with_x = dataclasses.replace(paper, configs=paper.configs + (Config("X", "cccp", extra=True),))
    err = {(0, 0): 0.1, (0, 1): 0.3, (0, 2): 0.2, (1, 0): 0.4, (1, 1): 0.2}  # X ran split 0 only
    planned, _ = build_cells(with_x)
    rows = [{"status": "done", "unlabeled_error": err[(p.cell.split, p.config)]} if (p.cell.split, p.config) in err
            else {"status": "failed"} for p in planned]
    ranked = {c.column: c for c in aggregate(with_x, planned, rows, {}, {})}
    # A: ranks 1 (split 0) and 2 (split 1) among A, B; B: 2 and 1. X: 2 among A, B, X on split 0.
    assert (ranked["A"].mean, ranked["A"].n) == (1.5, 2) and (ranked["B"].mean, ranked["B"].n) == (1.5, 2)
    assert (ranked["X"].mean, ranked["X"].n) == (2.0, 1)
    base_planned, _ = build_cells(paper)
    base_rows = [{"status": "done", "unlabeled_error": err[(p.cell.split, p.config)]} for p in base_planned]
    alone = {c.column: c for c in aggregate(paper, base_planned, base_rows, {}, {})}
    assert all((alone[k].mean, alone[k].std, alone[k].n) == (ranked[k].mean, ranked[k].std, ranked[k].n) for k in "AB")


def test_reproduce_adds_no_extra_column_to_the_kendall_table():
    from s3vm_bench.harness.reproduce import split_keys

    (table6, table7) = split_keys(["jmlr2008-table6", "jmlr2008-table7"], solvers=["svm_balanced"])
    assert table6.configs == SPECS["jmlr2008-table6"].configs
    assert [c.label for c in table7.configs if c.extra] == ["svm_balanced"]


@pytest.mark.parametrize("keys, kw", [(["jmlr2008-table6"], {"solvers": ["svm_balanced"]}),
                                      (["jmlr2008-table6"], {"solvers": ["cccp"], "params": {"C": 2.0}}),
                                      (["icml2013-table2"], {"solvers": ["svm_balanced"]})])
def test_an_extra_solver_for_tables_that_take_none_is_refused(keys, kw):
    from s3vm_bench.harness.reproduce import split_keys

    with pytest.raises(ValueError, match=r"take\(s\) no extra column .* would run nothing; add a table that takes one"):
        split_keys(keys, **kw)
