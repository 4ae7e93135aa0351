"""Reference optima of the small benchmark problems, computed once by branch and bound and stored.

The S3VM objective of the common protocol (JMLR 2008 Sec. 5.2, eq. 1 with p = 2) is globally
minimized over balanced labelings by :mod:`solvers.bb` (NIPS 2006, Alg. 1) for every binary
problem of the reference sets below; the results live in ``harness/optima/<set>.json`` so that
``s3vm-bench compare``, the asv suites and the reports read them instead of recomputing.

The problems themselves (data, split, settings, digest) are defined in :mod:`harness.reference_sets`
(re-exported here), which the cached cells of protocol ``"reference"`` are keyed on. The files are
read and written by :mod:`harness.optima_store`, and the certified lower bounds of the data sets
too large for branch and bound are built by :mod:`harness.optima_bounds`; this module computes
the optima and evaluates them, and re-exports the names of both.

Each stored entry is keyed by ``split<i>/class<k>`` and carries the SHA-256 ``digest`` of the
exact problem (training inputs in order, labeled labels, n_lab, the balance target k, kernel,
sigma, C, C*): a lookup whose digest no longer matches (the generator, the split protocol or the
data changed) is treated as missing, never silently reused. An entry records the optimal
labeling, its objective, the certified lower bound, the relative gap and the status: it is a
*certified* optimum only when ``status == "optimal"``; otherwise (a time or node limit) it is the
best labeling known with a valid lower bound. ``initial`` says whether the search was seeded with
an upper bound: ``"ground_truth"`` means the true labeling's objective seeded the incumbent,
``"stored_labeling"`` the best labeling of an earlier search of the entry (a retry) -- this only
speeds up pruning, the certificate is the search's lower bound either way; ``found_by`` says
whether the entry's labeling came from the search or is that seed.

A retry with more budget is merged into the stored entry (:func:`merge_entries`), and
``previous_runs`` lists the earlier searches, so an entry's history of effort is in the file. An
uncertified entry also keeps its search's ``frontier`` (the pending subtrees, each a partial
labeling with its proved bound) and ``closed_bound`` (the bound of the parts it closed); a search
resumed from them (``build(resume=True)``, ``certify(resume=entry)``) goes on where it stopped, so
a proof of 1e8 nodes can be run in pieces (``frontier_nodes`` adds up the chain). A
search may also be seeded with a labeling stored for *another split of the same data*, when that
labeling fits this split's labeled points (``seed_from`` names the entry it came from); as the
splits of a set differ only in which points are labeled, such labelings are also a consistency
check: none may beat a certified optimum (``tests/test_bb.py`` checks this on the shipped Coil3 store).
What the shipped optima cost to certify, which of them differ from the true labeling, and which
search variants were tried and not kept is recorded in ``reports/DIFFERENCES.md`` ("Branch and
bound: the search and its cost").
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from s3vm_bench import is_int
from s3vm_bench.solvers.numerics import check_int, kernel_newton

from .optima_bounds import (CERTIFIED_GAP_TOL, best_run_objectives, bound_entry, bound_gram, bound_problems,
                            build_bounds, check_bound_count, solver_spec, table8_rows)
from .optima_store import (BOUND_SETS, OPTIMA_DIR, _closure_sha, _frontier_from_json, _frontier_to_json,
                           check_only, labels_from_str, labels_to_str, load_bounds, load_store, lookup, lookup_bound,
                           save_bounds, save_store)
from .protocol import _gram
from .reference_sets import REFERENCE_SETS, BinaryProblem, ReferenceSet, binary_problems, get_reference_set

__all__ = ["REFERENCE_SETS", "OPTIMA_DIR", "BinaryProblem", "ReferenceSet", "StoredOptimum", "binary_problems",
           "build", "certify", "evaluate_optimum", "get_reference_set", "load_store", "lookup", "merge_entries",
           "optimum_model", "save_store", "stored_optimum", "BOUND_SETS", "best_run_objectives", "bound_problems",
           "build_bounds", "load_bounds", "lookup_bound", "save_bounds", "solver_spec", "table8_rows",
           "CERTIFIED_GAP_TOL", "bound_entry", "bound_gram", "check_bound_count", "labels_from_str", "labels_to_str"]

# ------------------------------------------------------------------------------------ compute
def certify(problem: BinaryProblem, *, time_limit=None, node_limit=None, seed_truth=False, gram=None,
            branching="nips", seed_labels=None, resume=None, jobs=1) -> dict:
    """Run branch and bound on one problem; return the entry to store.

    Parameters
    ----------
    jobs : int, default=1
        Processes of the search (:func:`solvers.bb.parallel_branch_and_bound`; recorded).
    seed_truth : bool
        Seed the incumbent with the true labeling (a valid upper bound that only speeds up
        pruning; recorded as ``initial = "ground_truth"``).
    branching : str
        Branching rule of :func:`solvers.bb.branch_and_bound` (recorded; every rule is exact).
        ``"product"`` is the one to prove a seeded incumbent optimal (it explores ambiguous
        points first, so without a good incumbent it finds its first leaves late).
    seed_labels : str or dict, optional
        A stored labeling (``labels_to_str``), e.g. the best one an earlier search found, or a
        dict mapping where each candidate labeling comes from (an entry key such as
        ``"split8/class2"``) to it. The candidate of lowest objective seeds the incumbent instead
        of the true labeling when its objective is lower (recorded as ``initial =
        "stored_labeling"``, with its key as ``seed_from``); like any seed it only speeds up
        pruning. Every candidate must be a labeling of this problem's unlabeled points with
        ``problem.k`` positives.
    resume : dict, optional
        A stored entry of this problem whose search a limit stopped: only the subtrees it left
        (its ``frontier``) are searched (:func:`solvers.bb.branch_and_bound` ``frontier``; any
        branching rule may continue any frontier), and the returned lower bound is that of the
        whole problem: the minimum of this search's and the ``closed_bound`` of the parts the
        earlier searches closed. ``frontier_nodes`` adds up the nodes of such a chain.

    An entry that is not certified keeps its search's ``frontier`` and ``closed_bound`` so that
    it can be resumed.
    """
    from s3vm_bench.solvers.bb import parallel_branch_and_bound, s3vm_objective

    if resume is not None:
        _check_resumable(problem, resume)
    s = problem.settings
    K = _gram(problem.X, s) if gram is None else gram
    y = problem.y_masked
    truth = problem.y[problem.n_lab:]
    j_true = float(s3vm_objective(K, y, truth, s.C, s.c_star).objective)
    initial, seed, seed_from = _initial_labeling(problem, K, j_true, seed_truth, seed_labels)
    frontier = None if resume is None else _frontier_from_json(resume["frontier"])
    res = parallel_branch_and_bound(K, y, problem.k, s.C, s.c_star, n_jobs=jobs, time_limit=time_limit,
                                    node_limit=node_limit, initial_labels=seed, branching=branching, frontier=frontier)
    closed, lower, gap = _whole_tree_bounds(res, resume)
    optimal = res.status == "optimal"
    return {"digest": problem.digest(), "split": problem.split, "label": problem.label,
            "u": int(truth.size), "k": problem.k, "objective": res.objective, "lower_bound": lower,
            "gap": gap, "status": res.status, "certified": optimal, "nodes": res.nodes,
            "seconds": round(res.seconds, 3), "initial": initial, "seed_from": seed_from,
            "found_by": "search" if res.found_at_node else "initial labeling",
            "unlabeled_error": float(np.mean(res.labels != truth)), "objective_true_labels": j_true,
            "labels": labels_to_str(res.labels), "bb_module_sha256": _closure_sha("solvers.bb"),
            "bb_kernels_sha256": _closure_sha("solvers._bb_kernels"),
            "time_limit": time_limit, "node_limit": node_limit, "branching": branching, "jobs": jobs,
            "resumed": resume is not None,
            "frontier": None if optimal else _frontier_to_json(res.frontier),
            "closed_bound": None if optimal or not np.isfinite(closed) else float(closed),
            "frontier_nodes": res.nodes + (0 if resume is None else int(resume.get("frontier_nodes") or 0))}


def _check_resumable(problem: BinaryProblem, resume: dict) -> None:
    """Raise ``ValueError`` unless ``resume`` is an entry of ``problem`` that kept a frontier."""
    if resume.get("digest") != problem.digest():
        raise ValueError(f"the entry to resume is not {problem.key}'s (digest mismatch)")
    if not resume.get("frontier"):
        raise ValueError(f"the entry of {problem.key} has no frontier to resume (its search closed, or it was "
                         "stored before searches kept one): run a search without resume")


def _initial_labeling(problem: BinaryProblem, K, j_true: float, seed_truth: bool, seed_labels):
    """The labeling that seeds the incumbent of :func:`certify`: ``(initial, labels, seed_from)``.

    The true labeling (objective ``j_true``) with ``seed_truth``; a candidate of ``seed_labels``
    (a string, or a dict from where it comes to it) replaces it when its objective is lower.
    ``labels`` is None when nothing seeds the search (``initial == "none"``).
    """
    from s3vm_bench.solvers.bb import s3vm_objective

    s = problem.settings
    truth = problem.y[problem.n_lab:]
    initial, seed, seed_from = ("ground_truth", truth, None) if seed_truth else ("none", None, None)
    candidates = {None: seed_labels} if isinstance(seed_labels, str) else dict(seed_labels or {})
    best = j_true if seed_truth else np.inf
    for source, text in candidates.items():
        stored = labels_from_str(text)
        if stored.size != truth.size or int(np.sum(stored > 0)) != problem.k:
            raise ValueError(f"seed labeling {'' if source is None else source + ' '}of {problem.key} is not a "
                             f"labeling of its {truth.size} unlabeled points with {problem.k} positives")
        value = float(s3vm_objective(K, problem.y_masked, stored, s.C, s.c_star).objective)
        if value < best:
            best, initial, seed, seed_from = value, "stored_labeling", stored, source
    return initial, seed, seed_from


def _whole_tree_bounds(res, resume):
    """``(closed bound, lower bound, relative gap)`` of the whole problem after the search ``res``.

    For a resumed search the parts the earlier searches closed (the ``closed_bound`` of the
    ``resume`` entry) bound the rest of the tree too.
    """
    closed, lower, gap = res.closed_bound, res.lower_bound, res.gap
    if resume is not None:
        before = resume.get("closed_bound")
        before = np.inf if before is None else float(before)
        closed, lower = min(closed, before), min(lower, before)
        gap = max(0.0, (res.objective - lower) / abs(res.objective)) if res.objective else 0.0
    return closed, lower, gap


def _more_budget(entry: dict, time_limit, node_limit, branching="nips") -> bool:
    """Whether a search with these limits and this branching rule may go further than every
    stored search of the entry (itself and its ``previous_runs``) with the same rule did.

    Entries written before the rule was recorded were searched with ``"nips"``.
    """
    def larger(new, old):
        return old is not None and (new is None or new > old)

    runs = [r for r in [entry, *entry.get("previous_runs", [])] if r.get("branching", "nips") == branching]
    return all(larger(time_limit, r.get("time_limit")) or larger(node_limit, r.get("node_limit")) for r in runs)


def merge_entries(old: dict, new: dict) -> dict:
    """Combine two searches of the same problem (same digest) without losing what either proved.

    Both lower bounds are certified bounds on the same optimum and both incumbents are feasible
    labelings, so the merged entry keeps the larger bound and the better labeling (its objective,
    labels, error and how it was found); it is ``optimal`` when they meet within branch and
    bound's relative gap tolerance. ``nodes``, ``seconds`` and the limits are those of the new
    search; the earlier searches are listed under ``previous_runs``.

    Raises
    ------
    ValueError
        Entries of different problems, or a labeling whose objective is below the other search's
        certified lower bound by more than the gap tolerance: one of the two searches is wrong, and
        nothing is merged.
    """
    from s3vm_bench.solvers.bb import branch_and_bound

    if old["digest"] != new["digest"]:
        raise ValueError("entries of different problems (digest mismatch) cannot be merged")
    gap_tol = inspect.signature(branch_and_bound).parameters["gap_tol"].default
    # On a tie the labeling is the seed the retry started from: keep where it was first found.
    best = new if new["objective"] < old["objective"] else old
    bound = max(old["lower_bound"], new["lower_bound"])
    if best["objective"] < bound - gap_tol * abs(bound):
        raise ValueError(f"a labeling of objective {best['objective']!r} lies below the certified lower bound "
                         f"{bound!r} of the other search of the same problem: one of the two searches is wrong; "
                         "the entries are not merged (recompute the entry with --force)")
    merged = dict(new)
    for k in ("objective", "labels", "unlabeled_error", "found_by", "initial", "seed_from"):
        merged[k] = best.get(k)
    merged["lower_bound"] = min(max(old["lower_bound"], new["lower_bound"]), merged["objective"])
    merged["gap"] = max(0.0, (merged["objective"] - merged["lower_bound"]) / abs(merged["objective"])) \
        if merged["objective"] else 0.0
    if new["status"] == "optimal" or old["status"] == "optimal" or merged["gap"] <= gap_tol:
        merged["status"] = "optimal"
        merged["gap"] = 0.0 if merged["gap"] <= gap_tol else merged["gap"]
    merged["certified"] = merged["status"] == "optimal"
    # The frontier to resume is that of the longer chain of searches (a resumed search's replaces
    # the one it continued); a certified entry needs none.
    chain = max((e for e in (new, old) if e.get("frontier")), key=lambda e: e.get("frontier_nodes") or 0,
                default=None)
    for k in ("frontier", "closed_bound", "frontier_nodes"):
        merged[k] = None if merged["certified"] or chain is None else chain.get(k)
    run = {k: old.get(k) for k in ("status", "objective", "lower_bound", "nodes", "seconds", "time_limit",
                                   "node_limit", "bb_module_sha256", "bb_kernels_sha256", "resumed")}
    run["branching"] = old.get("branching", "nips")
    merged["previous_runs"] = list(old.get("previous_runs", [])) + [run]
    return merged


def _made(ref: ReferenceSet, made: dict, i: int):
    """``ref.make(i)``, made once per :func:`build` (the other splits are read for their labelings)."""
    if i not in made:
        made[i] = ref.make(i)
    return made[i]


def _same_data(A, B) -> bool:
    if A is B:
        return True
    if A.shape != B.shape or sp.issparse(A) != sp.issparse(B):
        return False
    return (A != B).nnz == 0 if sp.issparse(A) else bool(np.array_equal(A, B))


def _labelings_from_other_splits(set_name: str, problem: BinaryProblem, i: int, store: dict, made: dict,
                                 n: int) -> dict:
    """Stored labelings of other splits of the same data, of any class, that are feasible here.

    A split only chooses which points are labeled, and a binary problem's labeling is just a +-1
    vector over the data, so a labeling of all the data found for one problem is a feasible
    labeling of another -- of any class -- when it gives that problem's labeled points their
    labels and its unlabeled points ``problem.k`` positives (and covers all of its training
    points). Such a labeling is an upper bound for this problem too: with ``C == C*`` its
    objective does not even depend on the split. On Coil3 (three classes of 72 images, so every
    one-versus-rest problem has 72 positives) this crosses classes: the certified class-2 optimum
    of split 8 (79.353, 46% of its unlabeled points off the class-2 truth) fits the labeled points
    of split 0's *class-1* problem and is its optimum (``reports/DIFFERENCES.md``, "Branch and
    bound", has what finding it by search alone cost).
    Only other splits' problems are read: two classes of one split label each other's labeled
    points differently. Splits of different data (the two-moons realizations) give none.
    Returns ``{entry key: labels_to_str}`` of this problem's unlabeled points.
    """
    ref = get_reference_set(set_name)
    ds, split = made[i]
    idx = np.r_[split.labeled, split.unlabeled]
    out = {}
    for j in range(n):
        if j == i:
            continue
        ds_j, split_j = _made(ref, made, j)
        if not _same_data(ds_j.X, ds.X):
            continue
        for other in binary_problems(set_name, ds_j, split_j, ref.settings):
            entry = lookup(other, store)
            if entry is None:
                continue
            full = np.zeros(ds.X.shape[0])
            full[np.r_[split_j.labeled, split_j.unlabeled]] = np.r_[other.y[:other.n_lab],
                                                                    labels_from_str(entry["labels"])]
            here = full[idx]
            if np.all(here != 0) and np.array_equal(here[:problem.n_lab], problem.y[:problem.n_lab]) \
                    and int(np.sum(here[problem.n_lab:] > 0)) == problem.k:
                out[other.key] = labels_to_str(here[problem.n_lab:])
    return out


def build(set_name: str, n: int | None = None, *, time_limit=None, node_limit=None, seed_truth=False,
          directory=None, force=False, branching="nips", resume=False, only=None, jobs=1, echo=print) -> dict:
    """Compute the entries of the first ``n`` problems that a search with these limits can improve.

    That is every missing entry and every uncertified one whose searches with this ``branching``
    rule all had a smaller time or node limit than the one given now (``None``: no limit; a rule
    not tried on the entry yet always runs); a rerun is merged with the stored
    entry by :func:`merge_entries`, so it never loses a bound or a labeling. Certified entries
    are kept. ``force`` recomputes every entry from scratch and replaces it (after a change to
    the solver). A search is seeded with the best of the entry's labeling and the labelings
    stored for other splits of the same data that fit this split
    (:func:`_labelings_from_other_splits`; not with ``force``). The store is re-read and saved
    after each problem, so builds of the same set running at once keep each other's entries (an
    entry another build stored meanwhile for the same problem is merged, :func:`merge_entries`).
    With ``resume``, an uncertified entry that kept the frontier of its search continues that
    search instead (``certify(resume=...)``), whatever the limits of earlier searches: run
    again and again, a long proof advances by the given limit each time. ``only`` restricts the
    build to these entry keys (``"split6/class0"``) among the first ``n`` problems. ``jobs``
    processes search each problem (``certify(jobs=...)``); problems run one after the other.
    """
    ref = get_reference_set(set_name)
    jobs = check_int(jobs, "jobs", 1)
    only = None if only is None else set(only)
    n = ref.n_default if n is None else int(n)
    if n < 1:
        raise ValueError(f"the number of problems must be >= 1, got {n}")
    store = load_store(set_name, directory)
    made = {}
    asked = searched = 0
    if only is not None:
        check_only(set_name, only, n, [p.label for p in binary_problems(set_name, *_made(ref, made, 0), ref.settings)])
    for i in range(n):
        ds, split = _made(ref, made, i)
        gram = None
        for prob in binary_problems(set_name, ds, split, ref.settings):
            if only is not None and prob.key not in only:
                continue
            asked += 1
            old = None if force else lookup(prob, store)
            cont = resume and old is not None and bool(old.get("frontier"))
            if old is not None and (old["status"] == "optimal"
                                    or not (cont or _more_budget(old, time_limit, node_limit, branching))):
                continue
            gram = _gram(prob.X, ref.settings) if gram is None else gram
            searched += 1
            t0 = time.perf_counter()
            # A search starts from the best labeling known (a better upper bound prunes more):
            # the entry's own, or one stored for another split of the same data that fits this one.
            seeds = {} if force else _labelings_from_other_splits(set_name, prob, i, store, made,
                                                                  max(n, ref.n_default))
            if old is not None:
                seeds[prob.key] = old["labels"]
            entry = certify(prob, time_limit=time_limit, node_limit=node_limit, seed_truth=seed_truth, gram=gram,
                            branching=branching, seed_labels=seeds, resume=old if cont else None, jobs=jobs)
            seeded_from = entry.get("seed_from")
            if old is not None:
                entry = merge_entries(old, entry)
            # Re-read the file: another build of this set (other --only keys, or this key) may have
            # stored entries since this one started, and saving the store read at the start would
            # drop them. An entry of this problem stored meanwhile is merged, not overwritten.
            started = store["entries"].get(prob.key)
            store = load_store(set_name, directory)
            stored = store["entries"].get(prob.key)
            if stored is not None and stored != started and stored.get("digest") == entry["digest"]:
                entry = merge_entries(stored, entry)
            store["entries"][prob.key] = entry
            save_store(store, directory)
            echo(f"{set_name} {prob.key}: objective {entry['objective']:.4f} lower bound {entry['lower_bound']:.4f} "
                 f"{entry['status']} ({entry['nodes']} nodes, {time.perf_counter() - t0:.2f} s)"
                 + (f", seeded with the labeling stored for {seeded_from}" if seeded_from not in (None, prob.key) else "")
                 + (f", resumed ({entry['frontier_nodes']} nodes in the chain)" if cont and entry.get("frontier_nodes")
                    else ", resumed" if cont else "")
                 + (f", merged with {len(entry['previous_runs'])} earlier search(es)" if old is not None else ""))
    if not searched:
        echo(f"{set_name}: nothing to compute: the {asked} problem(s) asked for are stored, certified optimal or "
             "searched with these limits already (a larger --time-limit or --node-limit, --resume or --force searches "
             "again)")
    return store


def _labeling_fit(problem: BinaryProblem, labels):
    """The L2-SVM on the completed labeling (NIPS 2006 eq. 1-3, p = 2): its objective is the S3VM
    objective of that labeling."""
    s = problem.settings
    y = problem.y_masked
    y[problem.n_lab:] = labels
    cost = np.where(np.arange(y.size) < problem.n_lab, s.C, s.c_star)
    return kernel_newton(_gram(problem.X, s), y, cost)


def optimum_model(problem: BinaryProblem, labels) -> tuple[np.ndarray, float]:
    """(beta, b) of the L2-SVM on the completed labeling: evaluates the optimum on new points."""
    res = _labeling_fit(problem, labels)
    return res.coef, res.intercept


#: Relative difference between a stored optimum's objective and its labeling's objective recomputed
#: by :func:`evaluate_optimum` above which the entry is refused (the two agree to about 1e-12).
OBJECTIVE_RTOL = 1e-7


# ------------------------------------------------------------------------------------ evaluate
@dataclass
class StoredOptimum:
    """The stored optima of one problem (split or realization) of a reference set, evaluated as
    the common protocol evaluates a solver (JMLR 2008 Sec. 5.2).

    Attributes
    ----------
    objective : float
        Mean of the binary problems' optima (the protocol's objective of a one-versus-rest split).
    unlabeled_error, test_error : float, float or None
        Errors (fractions) of the L2-SVMs trained on the optimal labelings: the sign of the
        output for a binary set, the class of the largest output for one-versus-rest.
    n_certified : int
        Binary problems whose entry is a certified optimum; the others hold the best labeling
        known (with a valid lower bound), so the values above are then an upper bound's.
    """

    split: int
    problems: list
    entries: list
    objective: float
    unlabeled_error: float
    test_error: float | None
    n_certified: int

    @property
    def certified(self) -> bool:
        return self.n_certified == len(self.entries)


def _gram_cross(A, B, settings):
    from s3vm_bench.solvers.numerics import gaussian_kernel, linear_kernel

    return linear_kernel(A, B) if settings.kernel == "linear" else gaussian_kernel(A, B, sigma=settings.sigma)


def evaluate_optimum(ds, split, problems: list, entries: list) -> StoredOptimum:
    """Objective and errors of the stored optimal labelings ``entries`` of ``problems`` (one split).

    The errors are those :func:`harness.protocol.run_split` would report for a solver whose
    binary outputs are those of the L2-SVMs on the optimal labelings (its ``_error``, test set
    chosen in its order); the objective is the mean of the stored optima, each checked against
    the objective of its labeling recomputed here.

    Raises
    ------
    ValueError
        A stored objective that differs from its labeling's by more than :data:`OBJECTIVE_RTOL`
        (relative): the store was edited or damaged.
    """
    from types import SimpleNamespace

    from .protocol import _error

    s = problems[0].settings
    X_test, y_test = (ds.X[split.test], ds.y[split.test]) if split.test.size else (None, None)
    if X_test is None and ds.X_test is not None:
        X_test, y_test = ds.X_test, ds.y_test
    outs = []
    for prob, entry in zip(problems, entries):
        res = _labeling_fit(prob, labels_from_str(entry["labels"]))
        stored = float(entry["objective"])
        if not abs(res.objective - stored) <= OBJECTIVE_RTOL * abs(res.objective):
            raise ValueError(f"the stored optimum of {prob.set_name} {prob.key} has objective {stored!r}, but its "
                             f"labeling's is {res.objective!r}: the optima store was edited or damaged; restore it, "
                             f"or recompute the entry (`s3vm-bench optima build {prob.set_name} --n {prob.split + 1} "
                             f"--only {prob.key} --force`)")
        beta, bias = res.coef, res.intercept
        outs.append(SimpleNamespace(
            label=prob.label, unl=_gram_cross(prob.X[prob.n_lab:], prob.X, s) @ beta + bias,
            test=None if X_test is None else _gram_cross(X_test, prob.X, s) @ beta + bias))
    return StoredOptimum(split.index, list(problems), list(entries), float(np.mean([e["objective"] for e in entries])),
                         _error(outs, ds.y[split.unlabeled], "unl"),
                         None if X_test is None else _error(outs, y_test, "test"),
                         sum(bool(e["certified"]) for e in entries))


def stored_optimum(set_name: str, i: int, store: dict | None = None, directory=None) -> StoredOptimum | None:
    """The stored optima of problem ``i`` of a reference set, evaluated; None if any is missing.

    An entry whose digest no longer matches its problem counts as missing (:func:`lookup`).
    ValueError if ``i`` is not an integer >= 0.
    """
    if not is_int(i) or i < 0:
        raise ValueError(f"the problem index must be an integer >= 0, got {i!r}")
    ref = get_reference_set(set_name)
    store = load_store(set_name, directory) if store is None else store
    if not any(key.startswith(f"split{i}/") for key in store["entries"]):
        return None  # not stored: the problem itself is not made (a large i would take long)
    ds, split = ref.make(int(i))
    problems = binary_problems(set_name, ds, split, ref.settings)
    entries = [lookup(p, store) for p in problems]
    if any(e is None for e in entries):
        return None
    return evaluate_optimum(ds, split, problems, entries)
