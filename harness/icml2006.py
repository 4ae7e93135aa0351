"""ICML 2006 Sec. 4 protocol: the validation error beside the unlabeled and test errors.

Sindhwani, Keerthi, Chapelle, ICML 2006, Sec. 4 "Experimental protocol": each split has l
labeled, u unlabeled, v validation and t test points (their Table 3); "parameters were chosen
with respect to performance on the validation set for each split". The common protocol
(:func:`harness.protocol.run_split`) reports the unlabeled and test errors only, so
:func:`run_with_validation` hands it a split whose test part is the validation points followed
by the test points, and cuts the binary test outputs back into the two parts. Nothing else
changes: the solver is trained on the labeled and unlabeled points alone, and the outputs of
the held-out points come from ``decision_function`` after training (with the bias shift of the
threshold-balanced solvers, applied to both parts alike), so the unlabeled error, the objective
and the test error are those :func:`run_split` reports for the plain split.

This module's ``RESULT_VERSION`` enters the key of ``protocol="icml2006"`` cells only
(:data:`harness.grid.PROTOCOL_MODULES`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from s3vm_bench.data_registry import Dataset, Split

from .protocol import ProtocolSettings, SplitResult, _error, run_split

__all__ = ["run_with_validation"]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1


def run_with_validation(solver_cls, params: dict, ds: Dataset, split: Split,
                        settings: ProtocolSettings) -> tuple[SplitResult, float, float]:
    """Run one solver on an l/u/v/t split; return the protocol result and the v and t errors.

    Parameters
    ----------
    solver_cls : type
        A registered solver class.
    params : dict
        Its parameters.
    ds : Dataset
    split : Split
        Must have a non-empty ``validation`` and ``test`` part.
    settings : ProtocolSettings

    Returns
    -------
    result : SplitResult
        :func:`harness.protocol.run_split` on the split with test = validation + test; its
        ``test_error`` is over both parts together and should not be used.
    validation_error, test_error : float
        Error (fraction) on the validation points and on the test points: the sign of the
        output for two classes, the argmax of the one-versus-rest outputs otherwise (the same
        rule as the unlabeled error).
    """
    val, test = np.asarray(split.validation), np.asarray(split.test)
    if val.size == 0:
        raise ValueError(f"split {split.index} of {ds.name} has no validation points: the ICML 2006 protocol "
                         "selects parameters on them (use the 'icml2006' split protocol)")
    if test.size == 0:
        raise ValueError(f"split {split.index} of {ds.name} has no test points")
    joined = dataclasses.replace(split, validation=np.empty(0, np.int64), test=np.r_[val, test])
    res = run_split(solver_cls, params, ds, joined, settings)
    if not res.binary:
        raise ValueError(f"{solver_cls.__name__} is not evaluated on held-out points (evaluation="
                         f"{getattr(solver_cls, 'evaluation', None)!r}): no validation error")
    nv = val.size
    # Same decision rule as the protocol's errors (harness.protocol._error), on each part.
    head = [dataclasses.replace(b, test_outputs=np.asarray(b.test_outputs)[:nv]) for b in res.binary]
    tail = [dataclasses.replace(b, test_outputs=np.asarray(b.test_outputs)[nv:]) for b in res.binary]
    return res, _error(head, ds.y[val], "test_outputs"), _error(tail, ds.y[test], "test_outputs")
