"""Branch and bound (NIPS 2006, Alg. 1) shared out over processes.

:func:`parallel_branch_and_bound` runs :func:`solvers.bb.branch_and_bound` on pieces of the tree:
the pending subtrees a search leaves (its resumable ``frontier``) are queued and searched by
worker processes from the best labeling known, each subtree keeping the bound proved for it.
"""

from __future__ import annotations

import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

import numpy as np

from . import _bb_kernels as _kern
from ._validation import check_int, check_positive


_WORKER = {}



def _worker_init(K, y, n_pos, C, C_star, options):
    """Pool initializer of :func:`parallel_branch_and_bound`: the problem, and warm kernels."""
    _WORKER.update(K=K, y=y, n_pos=n_pos, C=C, C_star=C_star, options=options)
    _kern.warm_up()



def _search_part(part, bound, incumbent, node_limit, time_limit):
    """One piece of :func:`parallel_branch_and_bound` in a worker: the subtree ``part`` (proved
    bound ``bound``) searched by :func:`solvers.bb.branch_and_bound` from ``incumbent``."""
    from .bb import branch_and_bound

    w = _WORKER
    return branch_and_bound(w["K"], w["y"], w["n_pos"], w["C"], w["C_star"], frontier=[(part, bound)],
                            initial_labels=incumbent, node_limit=node_limit, time_limit=time_limit, **w["options"])



def parallel_branch_and_bound(K, y, n_pos, C, C_star, *, n_jobs=2, chunk_nodes=5_000, gap_tol=1e-9,
                              node_limit=None, time_limit=None, initial_labels=None, branching="nips",
                              lookahead=True, fixing=True, frontier=None) -> BBResult:
    """:func:`solvers.bb.branch_and_bound` on ``n_jobs`` processes: the tree is shared out in pieces.

    The search starts in this process; when ``chunk_nodes`` nodes have not closed it, its
    pending subtrees (the ``frontier``) go to a queue, and each worker takes the deepest
    subtree, searches it for at most ``chunk_nodes`` nodes from the best labeling known (the
    resume of :func:`solvers.bb.branch_and_bound`), and puts back what it left unsearched. Every subtree
    keeps the bound proved for it, so the result is exact as the serial search is, with the same
    guarantees (``lower_bound <= optimum <= objective``); only the order of the search, hence the
    node count and, among ties, the returned labeling, depend on timing. Workers learn of a
    better incumbent when they take their next subtree.

    Parameters
    ----------
    n_jobs : int, default=2
        Worker processes (1: the serial :func:`solvers.bb.branch_and_bound`).
    chunk_nodes : int, default=5000
        Nodes per piece of work. Each piece first solves the root and its subtree's node again
        (two warm-started L2-SVMs, counted in ``nodes``), so smaller pieces balance the workers
        better but repeat more of that work; a problem ends serially while it has fewer nodes
        than this.
    gap_tol, node_limit, time_limit, initial_labels, branching, lookahead, fixing, frontier
        As in :func:`solvers.bb.branch_and_bound`; ``node_limit`` and ``time_limit`` hold for the whole
        search (the pieces running when a limit strikes finish theirs first, within the limit).

    Returns
    -------
    BBResult
        ``seconds`` is the wall time, the workers' start included (process creation and
        loading the compiled kernels: a fraction of a second); ``frontier`` is what the limits
        left, resumable by either function; ``max_depth`` is the deepest over the pieces and
        ``found_at_node`` the node count when the piece that found the returned labeling ended.
    """
    from .bb import branch_and_bound

    n_jobs = check_int(n_jobs, "n_jobs", 1)
    chunk_nodes = check_int(chunk_nodes, "chunk_nodes", 1)
    options = dict(gap_tol=gap_tol, branching=branching, lookahead=lookahead, fixing=fixing)
    if n_jobs == 1:
        return branch_and_bound(K, y, n_pos, C, C_star, node_limit=node_limit, time_limit=time_limit,
                                initial_labels=initial_labels, frontier=frontier, **options)
    node_limit = None if node_limit is None else check_int(node_limit, "node_limit", 1)
    time_limit = None if time_limit is None else check_positive(time_limit, "time_limit")
    _kern.warm_up()
    t0 = time.perf_counter()
    first = chunk_nodes if node_limit is None else min(chunk_nodes, node_limit)
    best = branch_and_bound(K, y, n_pos, C, C_star, node_limit=first, time_limit=time_limit,
                            initial_labels=initial_labels, frontier=frontier, **options)
    if best.status == "optimal" or best.status == "time_limit" or first == node_limit:
        return best  # closed, or stopped by the caller's own limit
    K, y = np.asarray(K, dtype=np.float64), np.asarray(y, dtype=np.float64).ravel()  # checked by the first search
    shared = _SharedSearch(best, gap_tol, node_limit, time_limit, t0)
    status = "optimal"
    with ProcessPoolExecutor(n_jobs, initializer=_worker_init, initargs=(K, y, n_pos, C, C_star, options)) as pool:
        running = {}
        while True:
            status = shared.hand_out(pool, running, n_jobs, chunk_nodes) or status
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                del running[fut]
                shared.merge(fut.result())
    return shared.result(status)



class _SharedSearch:
    """The search of :func:`parallel_branch_and_bound` between pieces.

    It holds the best result so far, the queue of pending subtrees with the bound proved for
    each (the ``frontier`` of the pieces), the least bound of the subtrees closed so far and the
    counts summed over the pieces.
    """

    def __init__(self, first, gap_tol, node_limit, time_limit, t0):
        self.best, self.gap_tol, self.node_limit, self.time_limit, self.t0 = first, gap_tol, node_limit, time_limit, t0
        self.queue = list(first.frontier)
        self.closed, self.nodes = first.closed_bound, first.nodes
        self.totals = {k: getattr(first, k) for k in ("n_leaves", "n_pruned_bound", "n_pruned_balance", "n_refactor")}
        self.max_depth, self.found_at, self.initial_ub = first.max_depth, first.found_at_node, first.initial_upper_bound

    def level(self):
        """The prune level: a subtree whose bound reaches it cannot beat the incumbent (``gap_tol``)."""
        return self.best.objective - self.gap_tol * abs(self.best.objective)

    def left(self):
        """The nodes and seconds still allowed (None: no limit; <= 0: spent)."""
        n_left = None if self.node_limit is None else self.node_limit - self.nodes
        t_left = None if self.time_limit is None else self.time_limit - (time.perf_counter() - self.t0)
        return n_left, t_left

    def hand_out(self, pool, running, n_jobs, chunk_nodes):
        """Submit queued subtrees, last queued first, until ``n_jobs`` pieces run (``running``: future
        -> bound); a subtree whose bound reaches the incumbent is closed instead.  Returns the
        limit that stopped handing out work, ``"node_limit"`` or ``"time_limit"``, or None."""
        while self.queue and len(running) < n_jobs:
            n_left, t_left = self.left()
            if n_left is not None and n_left <= 0:
                return "node_limit"
            if t_left is not None and t_left <= 0:
                return "time_limit"
            part, bound = self.queue.pop()
            if bound >= self.level():
                self.closed = min(self.closed, bound)
                continue
            limit = chunk_nodes if n_left is None else max(1, min(chunk_nodes, n_left))
            running[pool.submit(_search_part, part, bound, self.best.labels, limit, t_left)] = bound
        return None

    def merge(self, r):
        """Take in the result ``r`` of a piece: its counts, its labeling if better, its closed
        bound, and what it left unsearched (queued)."""
        self.nodes += r.nodes
        for k in self.totals:
            self.totals[k] += getattr(r, k)
        self.max_depth = max(self.max_depth, r.max_depth)
        if r.objective < self.best.objective:
            self.best, self.found_at = r, self.nodes
        self.closed = min(self.closed, r.closed_bound)
        self.queue.extend(r.frontier)

    def result(self, status) -> BBResult:
        """The :class:`solvers.bb.BBResult` of the whole search, stopped with ``status``."""
        from .bb import BBResult

        best, closed = self.best, self.closed
        for _, bound in self.queue:
            if bound >= self.level():  # closed by an incumbent found after the part was queued
                closed = min(closed, bound)
        queue = [(part, bound) for part, bound in self.queue if bound < self.level()]
        if not queue:
            status = "optimal"
        lower = min([closed, best.objective] + [b for _, b in queue])
        gap = (best.objective - lower) / abs(best.objective) if best.objective else 0.0
        return BBResult(labels=best.labels, objective=best.objective, lower_bound=float(lower),
                        gap=float(max(gap, 0.0)), status=status, nodes=self.nodes,
                        seconds=time.perf_counter() - self.t0, coef=best.coef, intercept=best.intercept,
                        outputs=best.outputs, max_depth=self.max_depth, found_at_node=self.found_at,
                        initial_upper_bound=self.initial_ub, frontier=queue, closed_bound=float(closed),
                        **self.totals)
