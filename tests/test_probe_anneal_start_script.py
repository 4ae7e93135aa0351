"""scripts/probe_anneal_start.py: the three readings of JMLR 2008's C* schedule reach the solvers."""

import numpy as np

from tests._toy import load_script


def test_each_reading_runs_the_protocol_and_ours_is_the_solvers_default(data_env, capsys):
    mod = load_script("probe_anneal_start")
    from s3vm_bench.solvers import get_solver

    for solver in ("grad_s3vm", "newton"):
        default = get_solver(solver)().get_params()
        assert {k: default[k] for k in ("anneal_start", "anneal_steps")} == mod.READINGS["2^-9 x10 (ours)"]
    out = mod.probe("2moons", "grad_s3vm", n_splits=1)
    assert list(out) == list(mod.READINGS)
    for err, obj in out.values():
        assert err.shape == (1,) and np.all((0 <= err) & (err <= 100)) and np.all(obj > 0)
    assert mod.main(["2moons", "--solver", "grad_s3vm", "--splits", "1"]) == 0
    assert "2moons grad_s3vm: 2^-9 x10 (ours):" in capsys.readouterr().out
