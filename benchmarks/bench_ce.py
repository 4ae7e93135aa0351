"""CPU cost of the kernel S3VMs in Cholesky equivalents (CE), tracked across commits.

One Uspst one-versus-rest problem (split 0, digit 0 against the rest, exact r, JMLR 2008 Table 5
settings), fitted through the common protocol by each continuous kernel S3VM of JMLR 2008 Sec. 4
(:mod:`benchmarks.ce` builds it and measures). ``track_ce`` is the fits' CPU seconds divided by
the CPU seconds of one dense Cholesky factorization of the 2007 x 2007 kernel timed in the same
process: a ratio that a noisy shared machine moves far less than wall time. ``track_cpu_seconds``
is the same fits' CPU seconds. Both read one table computed once per benchmark run
(``setup_cache``, every solver fitted once, about a minute in all).

Not in the ``tiny`` profile (the CI smoke run), which has no Uspst.
"""

from __future__ import annotations

from . import _problems as P

CE_SOLVERS = ("cccp", "newton", "grad_s3vm", "cs3vm")


def _ce_table():
    """``{solver: (cpu seconds, CE)}`` on the Uspst problem, or ``{}`` in the tiny profile."""
    if P.profile() == "tiny":
        return {}
    from threadpoolctl import threadpool_limits

    from .ce import cholesky_seconds, run_solver, uspst_problem, warm_up

    with threadpool_limits(limits=1):  # CE compares one-core costs
        ds, split, settings = uspst_problem()
        chol = cholesky_seconds(ds, split, settings)
        table = {}
        for name in CE_SOLVERS:
            warm_up(name)  # the process's start-up is not the solver's cost
            cpu = run_solver(name, ds, split, settings)[0]
            table[name] = (cpu, cpu / chol)
    return table


class CholeskyEquivalents:
    """CE and CPU seconds of one Uspst binary problem (lower is better)."""

    params = (list(CE_SOLVERS),)
    param_names = ("solver",)
    timeout = 1800
    setup_cache = staticmethod(_ce_table)

    def setup(self, table, solver):
        if solver not in table:
            raise NotImplementedError("the CE benchmark needs Uspst: not in the tiny profile")

    def track_ce(self, table, solver):
        return table[solver][1]

    track_ce.unit = "CE"

    def track_cpu_seconds(self, table, solver):
        return table[solver][0]

    track_cpu_seconds.unit = "seconds"
