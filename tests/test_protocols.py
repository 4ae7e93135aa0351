"""harness.protocols: the cell protocols registered by name, and execute_cell's use of them."""

import ast
from pathlib import Path

import pytest

import s3vm_bench.harness.cell_keys as cell_keys
import s3vm_bench.harness.grid as grid
import s3vm_bench.harness.protocols as protocols
from s3vm_bench.harness.grid import Cell, execute_cell
from s3vm_bench.harness.protocol import ProtocolSettings, SplitResult
from s3vm_bench.harness.protocols import (PROTOCOLS, RESULT_FIELDS, ICML2006Protocol, ICML2013Protocol,
                                          PairwiseProtocol, Protocol, ReferenceProtocol, SplitProtocol, get_protocol,
                                          protocol_names)

_STAMPS = ("fit_seconds", "cpu_seconds", "code_sha256", "versions", "git_commit", "timestamp")


def _fake_result(unlabeled_error=0.25, test_error=0.5, n=2) -> SplitResult:
    return SplitResult(objective=3.0, unlabeled_error=unlabeled_error, test_error=test_error, fit_seconds=0.125,
                       binary=[object()] * n, balance_exact=True)


# ----------------------------------------------------------------------------- registry


@pytest.mark.parametrize("name", ["jmlr2009", "", "Reference", "jmlr2008 "])
def test_an_unknown_protocol_name_is_a_clear_value_error(name):
    with pytest.raises(ValueError, match=r"unknown protocol .*choose one of .*jmlr2008-pairwise.*reference"):
        get_protocol(name)


def test_the_registry_gives_each_protocol_its_class_and_split_protocols_by_name():
    assert isinstance(get_protocol("reference"), ReferenceProtocol)
    assert isinstance(get_protocol("icml2006"), ICML2006Protocol)  # registered: not the plain split class
    assert isinstance(get_protocol("jmlr2008-pairwise"), PairwiseProtocol)
    for name in ("jmlr2008", "sigir2006", "icml2013"):
        p = get_protocol(name)
        assert type(p) is SplitProtocol and p.name == name
    assert all(p.name == name and isinstance(p, Protocol) for name, p in PROTOCOLS.items())
    from s3vm_bench.data_registry.splits import PROTOCOLS as SPLIT_PROTOCOLS

    assert set(protocol_names()) == set(SPLIT_PROTOCOLS) | {"reference", "jmlr2008-pairwise", "icml2013-table2"}
    # ICML 2013 Table 2's protocol has a name of its own: "icml2013" stays the split protocol any
    # solver runs under (`s3vm-bench run --protocol icml2013`).
    assert isinstance(get_protocol("icml2013-table2"), ICML2013Protocol)
    # Every protocol a committed table runs has a protocol object.
    from s3vm_bench.harness.reproduce import build_cells
    from s3vm_bench.harness.specs import SPECS

    used = {p.cell.protocol for spec in SPECS.values() for p in build_cells(spec, n_splits=1)[0]}
    assert used and all(isinstance(get_protocol(n), Protocol) for n in used)


def test_the_cache_key_does_not_depend_on_the_protocol_objects():
    # Keys take the declared versions of the modules of grid.PROTOCOL_MODULES; the protocol
    # objects only call those modules, so a protocol with its own class has its own entry there,
    # and this module is neither listed nor versioned (editing it must rerun nothing).
    assert set(PROTOCOLS) <= set(grid.PROTOCOL_MODULES)
    assert not hasattr(protocols, "RESULT_VERSION")
    for modules in [*grid.PROTOCOL_MODULES.values(), cell_keys._DEFAULT_PROTOCOL_MODULES]:
        assert "harness.protocols" not in modules
        closure = {}
        for m in modules:
            closure.update(grid.source_closure(m))
        assert "harness.protocols" not in closure


def test_the_protocols_module_declares_no_result_version_in_its_source():
    tree = ast.parse(Path(protocols.__file__).read_text())
    names = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) for t in node.targets
             if isinstance(t, ast.Name)}
    assert "RESULT_VERSION" not in names


# ----------------------------------------------------------------------------- dispatch


class _Recording(Protocol):
    name = "toy-protocol"

    def __init__(self, fail=False):
        self.calls, self.fail = [], fail

    def run(self, cell, known=None):
        self.calls.append(cell)
        early = {"split_seed": 7, "kernel": "linear", "sigma": None, "C": 1.0, "C_star": 0.5, "r_mode": "exact"}
        if known is not None:
            known.update(early)
        if self.fail:
            raise RuntimeError("the fit broke")
        return early | {"objective": 2.0, "unlabeled_error": 0.1, "test_error": None, "fit_seconds": 0.5,
                        "balance_exact": False, "n_binary": 3, "extra_metric": 9.0}


def test_execute_cell_runs_the_registered_protocol_of_the_cell(monkeypatch):
    proto = _Recording()
    monkeypatch.setitem(PROTOCOLS, proto.name, proto)
    cell = Cell("t", "2moons", "svm", 1, protocol=proto.name)
    row = execute_cell(cell)
    assert proto.calls == [cell]
    assert row["status"] == "done" and row["n_binary"] == 3 and row["extra_metric"] == 9.0
    assert row["fit_seconds"] == 0.5 and row["split_seed"] == 7
    # Identity, then the common fields in their order, the status, the protocol's own fields, the stamps.
    keys = list(row)
    assert keys[:6] == ["experiment", "dataset", "protocol", "split", "solver", "params"]
    assert keys[6:6 + len(RESULT_FIELDS)] == list(RESULT_FIELDS)
    assert keys[6 + len(RESULT_FIELDS):] == ["status", "extra_metric", "cpu_seconds", "code_sha256", "versions",
                                             "git_commit", "timestamp"]


def test_a_failed_fit_keeps_the_fields_the_protocol_already_knew(monkeypatch):
    proto = _Recording(fail=True)
    monkeypatch.setitem(PROTOCOLS, proto.name, proto)
    row = execute_cell(Cell("t", "2moons", "svm", 0, protocol=proto.name))
    assert row["status"] == "failed" and "the fit broke" in row["error"]
    assert row["split_seed"] == 7 and row["C_star"] == 0.5 and "objective" not in row


def test_a_cell_of_an_unknown_protocol_is_a_failed_row_not_an_exception():
    row = execute_cell(Cell("t", "2moons", "svm", 0, protocol="no-such-protocol"))
    assert row["status"] == "failed" and "unknown protocol 'no-such-protocol'" in row["error"]


#: Settings of an ICML 2006 cell (its data sets have none in JMLR 2008 Table 5).
_ICML = {"kernel": "rbf", "sigma": 8.0, "C": 1.0, "C_star": 0.1, "r_mode": "exact"}


def test_each_protocol_calls_the_code_that_computes_its_result(monkeypatch, data_env):
    # The protocols wrap harness.protocol.run_split, harness.icml2006.run_with_validation and
    # harness.pairwise.run_pairwise; replaced here by recorders, each cell reaches its own.
    import s3vm_bench.harness.icml2006 as icml2006
    import s3vm_bench.harness.pairwise as pairwise
    import s3vm_bench.harness.protocol as protocol

    calls = []

    def run_split(solver_cls, params, ds, split, settings):
        calls.append(("run_split", ds.name, settings))
        return _fake_result()

    def run_with_validation(solver_cls, params, ds, split, settings):
        calls.append(("run_with_validation", ds.name, settings))
        return _fake_result(), 0.0625, 0.375

    def run_pairwise(solver_cls, params, name, split_index, n_splits, settings):
        calls.append(("run_pairwise", name, settings))
        return _fake_result(test_error=None, n=6), {"split_seed": 11, "pairs": 3, "pairs_skipped": 0}

    monkeypatch.setattr(protocol, "run_split", run_split)
    monkeypatch.setattr(icml2006, "run_with_validation", run_with_validation)
    monkeypatch.setattr(pairwise, "run_pairwise", run_pairwise)

    rows = {p: execute_cell(Cell("t", d, "svm", 0, protocol=p, n_splits=2, settings=s))
            for p, d, s in [("jmlr2008", "2moons", {}), ("reference", "two_moons", {"C": 5.0}),
                            ("icml2006", "usps2", _ICML), ("jmlr2008-pairwise", "coil3", {})]}
    assert [c[0] for c in calls] == ["run_split", "run_split", "run_with_validation", "run_pairwise"]
    assert all(r["status"] == "done" for r in rows.values()), [r.get("error") for r in rows.values()]
    for r in rows.values():
        assert set(RESULT_FIELDS) <= set(r)

    assert rows["jmlr2008"]["n_binary"] == 2 and rows["jmlr2008"]["test_error"] == 0.5
    assert "validation_error" not in rows["jmlr2008"]
    # The reference set's own settings, the cell's override on top.
    assert calls[1][2].C == 5.0 and rows["reference"]["C"] == 5.0
    # ICML 2006: the test error of the test points alone, and the validation error.
    assert rows["icml2006"]["test_error"] == 0.375 and rows["icml2006"]["validation_error"] == 0.0625
    # Pairwise: the parent set's settings, the pair count as n_binary, the split seed of the run.
    assert calls[3][2] == ProtocolSettings.for_dataset("coil3")
    assert rows["jmlr2008-pairwise"]["n_binary"] == 3 and rows["jmlr2008-pairwise"]["split_seed"] == 11
    assert rows["jmlr2008-pairwise"]["test_error"] is None


def test_a_real_cell_row_has_the_fields_in_their_order(data_env):
    row = execute_cell(Cell("toy", "2moons", "svm", 0, n_splits=2))
    assert row["status"] == "done", row.get("error")
    assert list(row) == ["experiment", "dataset", "protocol", "split", "solver", "params", *RESULT_FIELDS,
                         "status", *_STAMPS[1:]]
    assert 0.0 <= row["unlabeled_error"] <= 1.0 and row["n_binary"] == 1
