"""scripts/probe_lowrank_bound.py: the balanced per-point minimum it relaxes to."""

import itertools

import numpy as np

from tests._toy import load_script


def test_balanced_cost_is_the_cheapest_labeling_with_k_positives():
    mod = load_script("probe_lowrank_bound")
    rng = np.random.default_rng(3)
    for trial in range(30):
        n = int(rng.integers(1, 9))
        k = int(rng.integers(0, n + 1))
        z = rng.normal(scale=1.5, size=n)
        a = float(rng.uniform(0.05, 3.0))
        brute = min(sum((max(0.0, 1 - z[i]) ** 2 if i in pos else max(0.0, 1 + z[i]) ** 2) / a for i in range(n))
                    for pos in map(set, itertools.combinations(range(n), k)))
        assert np.isclose(mod.balanced_cost(z, k, a), brute, rtol=1e-12, atol=1e-12), (trial, n, k)
