"""Branch and bound: seconds and nodes to certify a stored optimum (NIPS 2006 Alg. 1).

:class:`Certify` runs :func:`solvers.bb.branch_and_bound` (serial, default options) on one
binary problem seeded with its stored optimum (``harness/optima``), so the search only has to
prove it: ``time_certify`` is the node arithmetic and the bounds, ``track_nodes`` the size of the
proof tree, which changes only when the bounds or the branching change. The problems:

* ``two_moons_0`` -- NIPS 2006 Table 1 realization 0 (100 unlabeled points);
* ``coil3_split4_class2`` -- Coil3 split 4, class 2 against the rest (210 unlabeled points).
  Needs the COIL-20 file (``S3VM_DATA_MIRROR`` offline) and is
  left out of the ``tiny`` CI profile.

The compiled kernels are loaded in ``setup``, outside the timing. A commit without stored optima
or without these functions is skipped (``NotImplementedError``).
"""

from __future__ import annotations

from . import _problems as P

CASES = {"two_moons_0": ("two_moons", 0, 0), "coil3_split4_class2": ("coil3", 4, 2)}


def _cases():
    return ["two_moons_0"] if P.profile() == "tiny" else list(CASES)


class Certify:
    """Seconds and nodes of a search seeded with the stored optimum of one binary problem."""

    params = (_cases(),)
    param_names = ("problem",)
    number = 1
    repeat = (1, 3, 30.0)
    rounds = 1
    warmup_time = 0.0
    timeout = 600

    def setup(self, case):
        try:
            optima, bb = P.project("harness.optima"), P.project("solvers.bb")
            REFERENCE_SETS, binary_problems, labels_from_str, load_store, lookup = (
                optima.REFERENCE_SETS, optima.binary_problems, optima.labels_from_str, optima.load_store, optima.lookup)
            branch_and_bound = bb.branch_and_bound
        except (ImportError, AttributeError) as exc:
            raise NotImplementedError(f"this commit lacks the branch-and-bound API: {exc}") from exc
        set_name, split, cls = CASES[case]
        ref = REFERENCE_SETS[set_name]
        problems = binary_problems(set_name, *ref.make(split), ref.settings)
        problem = problems[cls]
        entry = lookup(problem, load_store(set_name))
        if entry is None or not entry.get("certified"):
            raise NotImplementedError(f"no certified stored optimum for {set_name} {problem.key} in this commit")
        P.warm_up_bb()
        s = ref.settings
        K = P.gram(problem.X, s)
        seed = labels_from_str(entry["labels"])
        self.search = lambda: branch_and_bound(K, problem.y_masked, problem.k, s.C, s.c_star, initial_labels=seed)
        self.optimum = float(entry["objective"])

    def time_certify(self, case):
        self.search()

    def track_nodes(self, case):
        res = self.search()
        if res.status != "optimal" or abs(res.objective - self.optimum) > 1e-6 * abs(self.optimum):
            raise RuntimeError(f"{case}: the search did not certify the stored optimum "
                               f"({res.status}, {res.objective} vs {self.optimum})")
        return res.nodes

    track_nodes.unit = "nodes"
