"""What data exists and how to get it: the pooch registry, the catalog, synthetic sets, splits.

>>> from s3vm_bench.data_registry import load_dataset, two_moons, jmlr2008_splits
>>> ds = load_dataset("g50c")            # doctest: +SKIP
>>> splits = jmlr2008_splits(ds)         # doctest: +SKIP
"""

from ._fetch import DataFetchError, cache_dir, check_cache_dir, fetch, registry
from .catalog import CATALOG, Dataset, DatasetSpec, get_spec, list_datasets, load_dataset, newsgroups_pair
from .splits import (Split, derive_seed, icml2006_splits, icml2013_splits, jmlr2008_splits, make_splits,
                     sigir2006_splits)
from .synthetic import g50c_like, two_circles, two_moons

__all__ = [
    "CATALOG", "DataFetchError", "Dataset", "DatasetSpec", "Split", "cache_dir", "check_cache_dir", "derive_seed",
    "fetch",
    "g50c_like", "get_spec", "icml2006_splits", "icml2013_splits", "jmlr2008_splits", "list_datasets",
    "load_dataset", "make_splits", "newsgroups_pair", "registry", "sigir2006_splits", "two_circles",
    "two_moons",
]
