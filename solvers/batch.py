"""Fits run together so that their passes over shared features become one pass.

The one-versus-rest problems of a split (JMLR 2008 Sec. 5.2) share the training points and so the
kernel-PCA features ``Z`` of nabla-S3VM, cS3VM and nabla-DA (Sec. 4, "Method 1"); each evaluation
of their objectives (14) and (9) reads all of ``Z`` (``Z w`` and ``Z^T d``). :func:`run_together` runs such fits
in threads, one per problem, as members of a :class:`PassGroup`: a member that needs a pass
submits it and waits until every member still running has submitted one too (or finished); the
last to arrive then runs all the waiting passes that share their features in one sweep over
``Z``, so that each block of ``Z`` is read from memory once for all of them.

Each member's computation is unchanged -- the same floating-point operations in the same order as
when its fit runs alone, only interleaved with the others' -- so the results are the same, bit for
bit, and do not depend on which fits happened to be batched together.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Hashable, Sequence

__all__ = ["PassGroup", "current_group", "run_together"]

_local = threading.local()


class GroupCancelled(RuntimeError):
    """Raised in a member whose group was cancelled because another member failed."""


class PassGroup:
    """Members (threads) whose passes are gathered and run together.

    A member calls :meth:`submit` for each pass and :meth:`leave` when its fit is done. A round is
    run when every member still in the group is waiting in :meth:`submit`; the waiting requests
    are then grouped by ``key`` and each group is handed to its ``execute`` at once.

    Parameters
    ----------
    n_members : int
        Members that will join (each leaves exactly once).
    """

    def __init__(self, n_members: int):
        self._cond = threading.Condition()
        self._active = int(n_members)
        self._waiting: list[_Slot] = []
        self._error: BaseException | None = None
        #: Rounds run and passes in them (how much was batched).
        self.rounds = 0
        self.passes = 0

    def submit(self, key: Hashable, payload: Any, execute: Callable[[list], list]):
        """Run ``execute([payload, ...])`` for this payload together with the other members' ones
        of the same ``key``; returns this payload's result.

        ``execute`` takes a list of payloads of one key and returns their results in order.
        """
        with self._cond:
            if self._error is not None:
                raise GroupCancelled("another fit of the group failed") from self._error
            slot = _Slot(key, payload, execute)
            self._waiting.append(slot)
            if len(self._waiting) >= self._active:
                self._run_round()
            while not slot.done and self._error is None:
                self._cond.wait()
            if not slot.done or slot.failed:
                raise GroupCancelled("another fit of the group failed") from self._error
            return slot.result

    def leave(self, error: BaseException | None = None):
        """A member's fit is done (``error`` if it failed: the group is then cancelled)."""
        with self._cond:
            self._active -= 1
            if error is not None:
                self._cancel_locked(error)
            elif self._waiting and len(self._waiting) >= self._active:
                self._run_round()

    def cancel(self, error: BaseException):
        """Stop the group: members waiting or submitting later raise :class:`GroupCancelled`."""
        with self._cond:
            self._cancel_locked(error)

    def _cancel_locked(self, error):
        if self._error is None:
            self._error = error
        self._cond.notify_all()

    def _run_round(self):
        """Run the waiting passes, grouped by key (called with the lock held); an error in a pass
        is raised in the member that runs the round, and the others are cancelled."""
        waiting, self._waiting = self._waiting, []
        groups: dict = {}
        for slot in waiting:
            groups.setdefault((slot.key, slot.execute), []).append(slot)
        try:
            for (_, execute), slots in groups.items():
                for slot, result in zip(slots, execute([s.payload for s in slots]), strict=True):
                    slot.result = result
        except BaseException as exc:
            for slot in waiting:
                slot.failed = True
            self._cancel_locked(exc)
            raise
        finally:
            for slot in waiting:
                slot.done = True
            self.rounds += 1
            self.passes += len(waiting)
            self._cond.notify_all()


class _Slot:
    """One submitted pass: its key, payload, executor and, once run, its result."""

    __slots__ = ("key", "payload", "execute", "result", "done", "failed")

    def __init__(self, key, payload, execute):
        self.key, self.payload, self.execute = key, payload, execute
        self.result, self.done, self.failed = None, False, False


def current_group() -> PassGroup | None:
    """The group the calling thread is a member of (inside :func:`run_together`), else None."""
    return getattr(_local, "group", None)


def run_together(tasks: Sequence[Callable[[], Any]]) -> list:
    """Run ``tasks`` as members of one :class:`PassGroup`; returns their results in order.

    The first task runs in the calling thread (so that a signal-driven time limit raised there
    stops the group), the others in threads of their own. When a task raises, the group is
    cancelled (the others raise :class:`GroupCancelled` at their next pass), every thread is
    joined, and the first task's exception that is not a cancellation is raised.

    Parameters
    ----------
    tasks : sequence of callables without arguments
        The fits, e.g. one per one-versus-rest problem; solvers that do not submit passes simply
        run concurrently (one at a time under the interpreter lock).
    """
    tasks = list(tasks)
    if len(tasks) <= 1:
        return [t() for t in tasks]
    group = PassGroup(len(tasks))
    results: list = [None] * len(tasks)
    errors: list = [None] * len(tasks)

    def member(i):
        _local.group = group
        error = None
        try:
            results[i] = tasks[i]()
        except BaseException as exc:  # re-raised in the calling thread below
            errors[i] = error = exc
        finally:
            _local.group = None
            group.leave(error)

    threads = [threading.Thread(target=member, args=(i,), name=f"s3vm-member-{i}", daemon=True)
               for i in range(1, len(tasks))]
    for t in threads:
        t.start()
    try:
        member(0)
        for t in threads:
            t.join()
    except BaseException as exc:  # e.g. a time limit's signal while joining: stop the others too
        group.cancel(exc)
        for t in threads:
            t.join()
        raise
    first = next((e for e in errors if e is not None and not isinstance(e, GroupCancelled)), None)
    first = first or next((e for e in errors if e is not None), None)
    if first is not None:
        raise first
    return results
