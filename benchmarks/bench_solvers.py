"""Runtime and objective quality of every registered solver on small protocol problems.

``params = (solvers, problems)``: every name in ``solvers.REGISTRY`` (read at import, so a solver
added later is picked up without touching this file) times the problems of
:mod:`benchmarks._problems` (``S3VM_ASV_PROFILE``: ``commit`` by default, ``full``, or ``tiny`` for CI).

* :class:`Fit` -- ``time_fit`` and ``peakmem_fit``: one run of the common protocol
  (``harness.protocol.run_split``: training, the dichotomic search where the protocol applies it,
  and the protocol's L2-SVM objective, which costs the same for every solver).
* :class:`Objective`, :class:`Error` -- ``track_objective_ratio`` (protocol objective / certified optimum, else the
  best objective known; 1.0 is optimal), ``track_unlabeled_error`` and ``track_rank`` (1 = lowest
  objective among the solvers on that problem). All three read one table computed once per
  benchmark run in ``setup_cache`` (each solver fitted once per problem), never inside timing.

Combinations that cannot run (a linear-only solver on a Gaussian-kernel problem, branch and bound
beyond two moons, a solver missing from an older commit) raise ``NotImplementedError`` in
``setup``, which asv records as skipped. ``svm_5cv`` is the JMLR 2008 "SVM-5cv" reference (5-fold
CV error with every true label): it is timed and its error is tracked, but it has no transductive
objective, so its ratio and rank are skipped.
"""

from __future__ import annotations

from . import _problems as P

SOLVERS = P.solver_names()
PROBLEMS = P.problem_names()


class Fit:
    """Time and peak memory of one protocol run of a solver on a problem."""

    params = (SOLVERS, PROBLEMS)
    param_names = ("solver", "problem")
    # Few samples: a fit takes 0.01-30 s and the whole history run must stay tractable; the
    # minimum of up to three samples is stable enough to see regressions of tens of percent.
    number = 1
    repeat = (1, 3, 10.0)
    rounds = 1
    warmup_time = 0.0
    timeout = 600

    def setup(self, solver, problem):
        reason = P.skip_reason(solver, problem)
        if reason is not None:
            raise NotImplementedError(reason)
        self.cls = P.solvers.get_solver(solver)
        self.problem = P.load_problem(problem)
        if solver == "bb":
            # Its numba kernels compile (or load from the cache) on first use in a process:
            # seconds that are not part of a fit.
            P.warm_up_bb()

    def _run(self):
        p = self.problem
        P.run_split(self.cls, {}, p.ds, p.split, p.settings)

    def time_fit(self, solver, problem):
        self._run()

    def peakmem_fit(self, solver, problem):
        self._run()


def _quality_table():
    """Every solver on every problem, once per benchmark run (see ``_problems.quality_table``)."""
    return P.quality_table()


# The whole table costs the sum of all solvers' protocol runs (each run is also capped, see
# _problems.RUN_LIMIT). Not named ``setup_cache``: asv would apply a module-level one to Fit too.
_quality_table.timeout = 3600


class _QualityBase:
    """Rows of the once-per-run quality table; both subclasses share its ``setup_cache`` key."""

    params = (SOLVERS, PROBLEMS)
    param_names = ("solver", "problem")
    timeout = 3600
    setup_cache = staticmethod(_quality_table)

    def setup(self, table, solver, problem):
        row = table["runs"].get((solver, problem))
        if row is None:
            raise NotImplementedError(f"{solver} x {problem} is not in this profile")
        if row["status"] == "skipped":
            raise NotImplementedError(row["reason"])
        if row["status"] == "failed":
            # A solver that breaks must show as a failed benchmark, not as a silent skip.
            raise RuntimeError(f"{solver} on {problem} failed in the quality table: {row['error']}")
        self.row = row


class Objective(_QualityBase):
    """Protocol objective against the optimum, and rank among the solvers (lower is better)."""

    def setup(self, table, solver, problem):
        super().setup(table, solver, problem)
        if "ratio" not in self.row:
            raise NotImplementedError(f"{solver} has no transductive protocol objective (e.g. svm_5cv's "
                                      "5-fold CV evaluation): no ratio or rank")

    def track_objective_ratio(self, table, solver, problem):
        return self.row["ratio"]

    track_objective_ratio.unit = "objective/optimum"

    def track_rank(self, table, solver, problem):
        return self.row["rank"]

    track_rank.unit = "rank"


class Error(_QualityBase):
    """Unlabeled (transductive) error of the protocol's predictions (svm_5cv: its 5-fold CV error)."""

    def track_unlabeled_error(self, table, solver, problem):
        return self.row["unlabeled_error"]

    track_unlabeled_error.unit = "fraction"
