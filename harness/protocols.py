"""The cell protocols as objects with one interface, registered by name.

A grid cell (:class:`harness.grid.Cell`) names its protocol; :func:`get_protocol` returns the
:class:`Protocol` that runs it, and :meth:`Protocol.run` returns the cell's result fields
(:data:`RESULT_FIELDS` plus protocol-specific ones such as ICML 2006's ``validation_error``).
:func:`harness.grid.execute_cell` adds the cell's identity, its status, the time-limit and
failure handling and the provenance stamps around it.

The protocols:

* :class:`SplitProtocol` -- one split of ``data_registry.make_splits`` (``jmlr2008``,
  ``sigir2006``, ``icml2013``, ...) through the common protocol of JMLR 2008 Sec. 5.2
  (:func:`harness.protocol.run_split`: the data set's kernel, C and C*, the balance target r,
  the recomputed objective);
* :class:`ReferenceProtocol` (``"reference"``) -- problem ``split`` of a reference set of
  :mod:`harness.reference_sets` (e.g. the two-moons realizations of JMLR 2008 Sec. 5.1), under
  the set's own settings unless the cell overrides them;
* :class:`ICML2006Protocol` (``"icml2006"``) -- an l/u/v/t split of ICML 2006 Sec. 4, whose
  validation and test errors are reported separately (:func:`harness.icml2006.run_with_validation`);
* :class:`PairwiseProtocol` (``"jmlr2008-pairwise"``) -- every pair of classes of a JMLR 2008
  split of a multi-class set, JMLR 2008 Sec. 5.6.1 / Table 14 (:func:`harness.pairwise.run_pairwise`);
* :class:`ICML2013Protocol` (``"icml2013-table2"``) -- one split of ICML 2013 Table 2 (Sec. 6):
  SVM, S3VM-light, CCCP and S3VM-path, each with its model selection over the paper's grid, the
  path timed beside S3VM-light and Figure 5's objectives (:func:`harness.icml2013.run_cell`); the
  split record goes into the row's ``details``.

The cache key of a cell does not depend on this module: it takes the declared result versions
of the modules listed per protocol name in :data:`harness.grid.PROTOCOL_MODULES` (the modules
that compute the result, which these classes only call), so this module declares no
``RESULT_VERSION``.
"""

from __future__ import annotations

import dataclasses

__all__ = ["Protocol", "SplitProtocol", "ReferenceProtocol", "ICML2006Protocol", "PairwiseProtocol",
           "ICML2013Protocol", "PROTOCOLS", "RESULT_FIELDS", "get_protocol", "protocol_names"]

#: The fields every protocol's :meth:`Protocol.run` returns, in the order of a result row.
RESULT_FIELDS = ("split_seed", "kernel", "sigma", "C", "C_star", "r_mode", "objective", "unlabeled_error",
                 "test_error", "fit_seconds", "balance_exact", "n_binary")


def settings_fields(settings) -> dict:
    """The row fields of a :class:`harness.protocol.ProtocolSettings`: kernel, sigma, C, C*, r mode."""
    return {"kernel": settings.kernel, "sigma": settings.sigma, "C": settings.C, "C_star": settings.c_star,
            "r_mode": settings.r_mode}


def outcome_fields(res, n_binary: int) -> dict:
    """The row fields of a :class:`harness.protocol.SplitResult` solved over ``n_binary`` binary problems."""
    return {"objective": res.objective, "unlabeled_error": res.unlabeled_error, "test_error": res.test_error,
            "fit_seconds": res.fit_seconds, "balance_exact": res.balance_exact, "n_binary": n_binary}


class Protocol:
    """How one grid cell is run: its problem, its settings and which errors it reports.

    Subclasses implement :meth:`run`. An instance holds no state of a run, so one instance per
    name serves every cell (:data:`PROTOCOLS`).
    """

    #: The protocol name a cell carries (``Cell.protocol``).
    name: str = ""

    def run(self, cell, known: dict | None = None) -> dict:
        """Run ``cell``; return its result fields.

        Parameters
        ----------
        cell : harness.grid.Cell
            The cell (data set, solver and parameters, split index, number of splits, settings
            overrides, split arguments).
        known : dict, optional
            Receives the fields known before the solver's fit ends (the settings and the split
            seed) as soon as they are, so that the row of a cell that fails in its fit still
            records them.

        Returns
        -------
        dict
            :data:`RESULT_FIELDS` (errors as fractions, ``test_error`` None where the protocol
            has no test set), followed by the protocol's own fields.

        Raises
        ------
        Exception
            Whatever the data loading, the split or the solver raise; the caller records it.
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def _publish(known: dict | None, fields: dict) -> dict:
    if known is not None:
        known.update(fields)
    return fields


class SplitProtocol(Protocol):
    """A split of ``data_registry.make_splits(ds, name)`` through the common protocol.

    JMLR 2008 Sec. 5.2: every solver on the same split with the data set's kernel, C, C* and
    balance target (``ProtocolSettings.for_dataset``, overridden by the cell's settings), the
    objective recomputed by :func:`harness.protocol.run_split`. The split arguments come from
    the cell (``n_splits`` and ``split_kwargs``, e.g. SIGIR 2006's ``n_labeled``).
    """

    def __init__(self, name: str):
        self.name = name

    def problem(self, cell):
        """``(dataset, split, settings)`` of ``cell``."""
        from s3vm_bench.data_registry import load_dataset, make_splits

        from .protocol import ProtocolSettings

        ds = load_dataset(cell.dataset)
        settings = ProtocolSettings.for_dataset(ds.name, **cell.settings)
        split = make_splits(ds, self.name, n_splits=cell.n_splits, **cell.split_kwargs)[cell.split]
        return ds, split, settings

    def fit(self, cell, ds, split, settings) -> dict:
        """Run the cell's solver on the split; the outcome fields (:func:`outcome_fields`)."""
        from s3vm_bench.solvers import get_solver

        from .protocol import run_split

        res = run_split(get_solver(cell.solver), dict(cell.params), ds, split, settings)
        return outcome_fields(res, len(res.binary))

    def run(self, cell, known: dict | None = None) -> dict:
        ds, split, settings = self.problem(cell)
        fields = _publish(known, {"split_seed": split.seed} | settings_fields(settings))
        return fields | self.fit(cell, ds, split, settings)


class ReferenceProtocol(SplitProtocol):
    """Problem ``cell.split`` of the reference set ``cell.dataset`` (:mod:`harness.reference_sets`).

    A reference set (e.g. the two-moons realizations of JMLR 2008 Sec. 5.1, whose global optima
    :mod:`harness.optima` stores) makes its own data and split per index and carries its own
    settings; the cell's settings override them field by field.
    """

    def __init__(self):
        super().__init__("reference")

    def problem(self, cell):
        from .reference_sets import get_reference_set

        ref = get_reference_set(cell.dataset)
        ds, split = ref.make(cell.split)
        return ds, split, dataclasses.replace(ref.settings, **cell.settings)


class ICML2006Protocol(SplitProtocol):
    """An l/u/v/t split of ICML 2006 Sec. 4 (``data_registry.icml2006_splits``).

    The solver is run on the labeled and unlabeled points with validation and test points held
    out (:func:`harness.icml2006.run_with_validation`); the row's ``test_error`` is the error on
    the test points alone and ``validation_error`` that on the validation points, from which the
    parameters are selected per split (``aggregate="model_selection"`` in :mod:`harness.reproduce`).
    """

    def __init__(self):
        super().__init__("icml2006")

    def fit(self, cell, ds, split, settings) -> dict:
        from s3vm_bench.solvers import get_solver

        from .icml2006 import run_with_validation

        res, val_err, test_err = run_with_validation(get_solver(cell.solver), dict(cell.params), ds, split, settings)
        return outcome_fields(res, len(res.binary)) | {"test_error": test_err, "validation_error": val_err}


class PairwiseProtocol(Protocol):
    """JMLR 2008 Sec. 5.6.1 (Table 14): every pair of classes of a ``jmlr2008`` split.

    The cell's data set is a multi-class catalog set or a grouped view of one
    (:data:`harness.pairwise.GROUPED`); the settings are those of the parent data set. The
    objective and errors are the means over the pairs, ``fit_seconds`` their sum and
    ``n_binary`` the number of pairs run (:func:`harness.pairwise.run_pairwise`).
    """

    name = "jmlr2008-pairwise"

    def run(self, cell, known: dict | None = None) -> dict:
        from s3vm_bench.solvers import get_solver

        from .pairwise import parent_name, run_pairwise
        from .protocol import ProtocolSettings

        settings = ProtocolSettings.for_dataset(parent_name(cell.dataset), **cell.settings)
        fields = _publish(known, settings_fields(settings))
        res, info = run_pairwise(get_solver(cell.solver), dict(cell.params), cell.dataset, cell.split,
                                 cell.n_splits, settings)
        fields |= _publish(known, {"split_seed": info["split_seed"]})
        return fields | outcome_fields(res, info["pairs"])


class ICML2013Protocol(Protocol):
    """One (data set, split) of ICML 2013 Table 2 (Sec. 6), every method at once.

    The cell's data set is one of :data:`harness.icml2013.DATASETS` and its split an index of
    ``data_registry.icml2013_splits``; its solver is the S3VM-path, the method the table is
    about. :func:`harness.icml2013.run_cell` runs the SVM, S3VM-light (hinge and squared hinge),
    CCCP (mean output fixed, and count-searched) and the S3VM-path, each with the paper's model
    selection on the validation points over C x gamma (x C*), times the entire path against
    S3VM-light in the same process and scores Figure 5's labelings. The row's common fields are
    the S3VM-path's selected errors (:func:`harness.icml2013.record_fields`: no objective, no
    settings of its own, the grid being the protocol's); ``details`` holds the whole record
    (every method's selected model and errors, the timing, Figure 5), which
    :mod:`harness.icml2013_report` reads.
    """

    name = "icml2013-table2"

    def run(self, cell, known: dict | None = None) -> dict:
        from .icml2013 import pid_of, record_fields, run_cell

        if cell.solver != "s3vm_path":
            raise ValueError(f"protocol {self.name!r} runs every method of ICML 2013 Table 2 with the S3VM-path as "
                             f"the cell's solver, not {cell.solver!r}")
        if cell.params or cell.settings or cell.split_kwargs:
            raise ValueError(f"protocol {self.name!r} takes no parameters, settings or split arguments: its grid "
                             "and splits are the paper's (harness.icml2013)")
        pid = pid_of(cell.dataset)
        _publish(known, {"kernel": "rbf"})
        return record_fields(run_cell(pid, cell.split))


#: The protocols with a class of their own, by name; every other name that
#: ``data_registry.make_splits`` knows is a :class:`SplitProtocol` (:func:`get_protocol`).
PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (ReferenceProtocol(), ICML2006Protocol(), PairwiseProtocol(),
                                                      ICML2013Protocol())}


def protocol_names() -> list[str]:
    """Every protocol name :func:`get_protocol` accepts, sorted."""
    from s3vm_bench.data_registry.splits import PROTOCOLS as SPLIT_PROTOCOLS

    return sorted(set(PROTOCOLS) | set(SPLIT_PROTOCOLS))


def get_protocol(name: str) -> Protocol:
    """The protocol that runs cells of protocol ``name``.

    A name of :data:`PROTOCOLS` gives its registered instance; another name that
    ``data_registry.make_splits`` knows (``jmlr2008``, ``sigir2006``, ``icml2013``) a
    :class:`SplitProtocol` of that split protocol.

    Raises
    ------
    ValueError
        For any other name, listing the known ones.
    """
    from s3vm_bench.data_registry.splits import PROTOCOLS as SPLIT_PROTOCOLS

    if name in PROTOCOLS:
        return PROTOCOLS[name]
    if isinstance(name, str) and name in SPLIT_PROTOCOLS:
        return SplitProtocol(name)
    raise ValueError(f"unknown protocol {name!r}; choose one of {protocol_names()}")
