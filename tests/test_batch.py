"""One-versus-rest fits run together (solvers.batch): the same numbers as fits run one by one."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import s3vm_bench.solvers.grad_da as gd
import s3vm_bench.solvers.grad_s3vm as gs
from s3vm_bench.data_registry import Dataset, Split
from s3vm_bench.harness.protocol import ProtocolSettings, run_split
from s3vm_bench.solvers.base import PassGroup, current_group, run_together
from s3vm_bench.solvers.cs3vm import CS3VM
from s3vm_bench.solvers.grad_da import GradDA
from s3vm_bench.solvers.grad_s3vm import GradS3VM


def _four_blobs(seed=0, per_class=30, n_lab=3):
    rng = np.random.default_rng(seed)
    centers = np.array([[0, 0], [3, 0], [0, 3], [3, 3]], dtype=float)
    X = np.vstack([c + 0.9 * rng.standard_normal((per_class, 2)) for c in centers])
    y = np.repeat(np.arange(4), per_class)
    lab = np.concatenate([np.flatnonzero(y == k)[:n_lab] for k in range(4)])
    unl = np.setdiff1d(np.arange(y.size), lab)
    ds = Dataset(name="blobs4", X=X, y=y, class_names=("a", "b", "c", "d"))
    empty = np.array([], dtype=np.int64)
    return ds, Split(protocol="test", index=0, seed=0, labeled=lab, unlabeled=unl, validation=empty, test=empty)


@pytest.mark.parametrize("cls,module,batched", [(GradS3VM, gs, "_run_passes"), (CS3VM, gs, "_run_passes"),
                                                 (GradDA, gd, "_run_outputs")])
def test_batched_one_vs_rest_gives_the_sequential_numbers_bit_for_bit(cls, module, batched, monkeypatch):
    """run_split with the classes fitted together (the default for these solvers) and one after
    another give identical outputs, objectives and iteration counts; the products with Z were
    batched (nabla-S3VM and cS3VM: the objective passes; nabla-DA: the output products)."""
    ds, split = _four_blobs()
    settings = ProtocolSettings(kernel="rbf", sigma=1.0, C=1.0)
    sizes = []
    real = getattr(module, batched)

    def spy(payloads):
        sizes.append(len(payloads))
        return real(payloads)

    monkeypatch.setattr(module, batched, spy)
    together = run_split(cls, {}, ds, split, settings)
    assert max(sizes) == 4  # all four problems' products shared a pass
    monkeypatch.setattr(cls, "batched_ovr", False)
    sizes.clear()
    alone = run_split(cls, {}, ds, split, settings)
    assert max(sizes) == 1
    assert together.objective == alone.objective
    assert together.unlabeled_error == alone.unlabeled_error
    for a, b in zip(together.binary, alone.binary, strict=True):
        np.testing.assert_array_equal(a.unlabeled_outputs, b.unlabeled_outputs)
        assert (a.n_iter, a.dichotomic_iter, a.stop_reason) == (b.n_iter, b.dichotomic_iter, b.stop_reason)


def test_the_pass_of_one_point_does_not_depend_on_the_others():
    """_objective_pass gives point j's outputs, sums and Z^T d whatever points share the pass."""
    rng = np.random.default_rng(3)
    n, d, m = 37, 6, 5
    Z = rng.standard_normal((n, d))
    labeled = np.zeros(n, bool)
    labeled[::4] = True
    payloads = []
    for j in range(m):
        loss = gs.ExpUnlabeledLoss(5.0, 0.1 + rng.random(n - labeled.sum()))
        y_lab = np.where(rng.random(labeled.sum()) < 0.5, 1.0, -1.0)
        obj = gs.SmoothObjective(Z, 0.2 * j - 0.3, y_lab, labeled, 1.0 + j, 2.0, loss)
        obj._pass["block"] = 4  # several blocks
        payloads.append(dict(obj._pass, w=rng.standard_normal(d), b=obj.b, o=None))
    together = gs._run_passes(payloads)
    for p, (lab, unl, o, acc) in zip(payloads, together):
        lab1, unl1, o1, acc1 = gs._run_passes([p])[0]
        assert (lab, unl) == (lab1, unl1)
        np.testing.assert_array_equal(o, o1)
        np.testing.assert_array_equal(acc, acc1)


def test_grad_da_products_of_one_point_do_not_depend_on_the_others():
    """_outputs_pass and _gradient_pass give row j's Z w_j + b_j and Z^T d_j whatever rows share
    the pass, equal to the plain products up to rounding."""
    rng = np.random.default_rng(5)
    n, d, m = 41, 7, 4
    Z = rng.standard_normal((n, d))
    pay = [dict(Z=Z, block=5, w=rng.standard_normal(d), b=0.3 * j, d=rng.standard_normal(n)) for j in range(m)]
    outs, grads = gd._run_outputs(pay), gd._run_gradients(pay)
    for p, o, g in zip(pay, outs, grads):
        np.testing.assert_array_equal(o, gd._run_outputs([p])[0])
        np.testing.assert_array_equal(g, gd._run_gradients([p])[0])
        np.testing.assert_allclose(o, Z @ p["w"] + p["b"], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(g, Z.T @ p["d"], rtol=1e-12, atol=1e-12)


def test_run_together_returns_results_in_order_and_gathers_submissions():
    seen = []

    def execute(payloads):
        seen.append(sorted(payloads))
        return [p * 10 for p in payloads]

    def task(i):
        def run():
            group = current_group()
            assert isinstance(group, PassGroup)
            return [group.submit("k", i * 100 + step, execute) for step in range(i + 1)]
        return run

    out = run_together([task(i) for i in range(3)])
    assert out == [[0], [1000, 1010], [2000, 2010, 2020]]
    # every member still running submitted before a round ran
    assert seen == [[0, 100, 200], [101, 201], [202]]
    assert current_group() is None


def test_a_failing_member_cancels_the_group_and_its_error_is_raised():
    started = threading.Event()

    def bad():
        started.wait(5)
        raise ValueError("class 2 has no labeled point")

    def good():
        started.set()
        group = current_group()
        for step in range(1000):
            group.submit("k", step, lambda ps: ps)
        return "finished"

    with pytest.raises(ValueError, match="no labeled point"):
        run_together([good, bad])
    assert threading.active_count() == 1 or all(not t.name.startswith("s3vm-member")
                                                 for t in threading.enumerate())
