"""The data registry: every file fetched through pooch from a loopback mirror and checked.

Expected sizes below are transcribed from the papers (JMLR 2008 Table 4, ICML 2006 Table 3,
ICML 2013 Table 1) and from ``shared/data/MANIFEST.md``, never from the loaders themselves.
"""

from __future__ import annotations

import re
import urllib.request

import numpy as np
import pytest
import scipy.sparse as sp

from s3vm_bench import data_registry
from s3vm_bench.data_registry import DataFetchError, fetch, get_spec, list_datasets, load_dataset

from .conftest import LoopbackServer

# (n, d, classes) as printed in the papers.
JMLR_TABLE4 = {"g50c": (550, 50, 2), "text": (1946, 7511, 2), "uspst": (2007, 256, 10),
               "isolet": (1620, 617, 9), "coil20": (1440, 1024, 20), "coil3": (216, 1024, 3),
               "2moons": (200, 2, 2)}  # Table 4 prints 102 dims for 2moons, a typo for 2
ICML2006_TABLE3 = {"usps2": (93 + 1000 + 32 + 375, 241, 2), "coil6": (90 + 1008 + 30 + 372, 241, 6),
                   "text": (37 + 1410 + 13 + 486, 7511, 2)}
ICML2013_TABLE1 = {"breast-cancer-wdbc": (569, 30, 2), "digit1": (1500, 241, 2), "dna": (2000, 180, 3),
                   "fourclass": (862, 2, 2), "ionosphere": (351, 33, 2), "segment": (2310, 19, 7),
                   "splice": (1000, 60, 2), "vowel": (528, 10, 11)}
# Held copies that differ from the paper's table; the catalog must say why (spec.note).
PAPER_MISMATCH = {"eset2": (2700, 617, 2), "breast-cancer": (569, 30, 2), "svmguide1": (300, 10, 2),
                  "vehicle": (864, 18, 4)}

# (n, d, class counts in class-index order) from MANIFEST.md, or counted in the raw files with awk.
MANIFEST = {
    "g50c": (550, 50, (275, 275)), "text": (1946, 7511, (961, 985)),
    "uspst": (2007, 256, (327, 273, 206, 178, 196, 140, 174, 173, 160, 180)),
    "isolet": (1620, 617, (180,) * 9), "coil20": (1440, 1024, (72,) * 20), "coil3": (216, 1024, (72,) * 3),
    "2moons": (200, 2, (96, 104)), "g10n": (550, 10, (276, 274)),
    "digit1": (1500, 241, (766, 734)), "usps2": (1500, 241, (1200, 300)), "coil2": (1500, 241, (750, 750)),
    "bci": (400, 117, (200, 200)), "g241c": (1500, 241, (750, 750)), "coil6": (1500, 241, (250,) * 6),
    "g241n": (1500, 241, (752, 748)), "ssl-text": (1500, 11960, (750, 750)),
    "eset2": (1620, 617, (900, 720)), "breast-cancer": (683, 10, (444, 239)),
    "breast-cancer-wdbc": (569, 30, (212, 357)), "fourclass": (862, 2, (555, 307)),
    "ionosphere": (351, 33, (126, 225)), "splice": (1000, 60, (483, 517)),
    "svmguide1": (3089, 4, (1089, 2000)), "vehicle": (846, 18, (212, 217, 218, 199)),
    "dna": (2000, 180, (464, 485, 1051)), "segment": (2310, 19, (330,) * 7), "vowel": (528, 10, (48,) * 11),
    "news-mac-windows": (1948, 64711, (985, 963)), "news-autos-motorcycles": (1986, 24135, (996, 990)),
    "news-electronics-space": (1971, 28492, (987, 984)),
}
SPARSE = {"text", "ssl-text", "news-mac-windows", "news-autos-motorcycles", "news-electronics-space"}
LOCAL = [s.name for s in list_datasets(include_network=False)]


def test_manifest_covers_every_local_dataset():
    assert sorted(MANIFEST) == sorted(LOCAL)


def test_registry_matches_shared_registry(shared_data):
    ours = data_registry.registry()
    theirs = dict(line.split() for line in (shared_data / "registry.txt").read_text().splitlines() if line.strip())
    assert {k: v[0] for k, v in ours.items()} == theirs
    for name, (_, url) in ours.items():
        if name.startswith("text-large/"):
            assert url is None, "the 20 Newsgroups tarball is our own packaging: no upstream URL"
        else:
            # pinned: a raw URL at a 40-hex commit
            assert re.match(r"https://raw\.githubusercontent\.com/[^/]+/[^/]+/[0-9a-f]{40}/", url), (name, url)


@pytest.mark.parametrize("name", LOCAL)
def test_loader_shape_and_counts(name, data_env):
    ds = load_dataset(name)
    n, d, counts = MANIFEST[name]
    assert ds.X.shape == (n, d)
    assert ds.y.shape == (n,) and ds.y.dtype == np.int64
    assert tuple(np.bincount(ds.y, minlength=len(counts))) == counts
    assert len(ds.class_names) == len(counts)
    assert ds.y.min() >= 0, "-1 is reserved for 'unlabeled'"
    assert sp.issparse(ds.X) == (name in SPARSE)
    if sp.issparse(ds.X):
        assert ds.X.format == "csr" and ds.X.has_sorted_indices
    assert ds.X.dtype == np.float64 and np.all(np.isfinite(ds.X.data if sp.issparse(ds.X) else ds.X))
    for lab, (L, U) in ds.splits.items():
        assert L.shape[1] == lab and L.shape[1] + U.shape[1] == n
        for i in range(L.shape[0]):
            assert np.array_equal(np.sort(np.r_[L[i], U[i]]), np.arange(n)), "a split row must partition 0..n-1"


@pytest.mark.parametrize("table", [JMLR_TABLE4, ICML2006_TABLE3, ICML2013_TABLE1], ids=["jmlr-t4", "icml06-t3", "icml13-t1"])
def test_loaded_sizes_match_paper_tables(table, data_env):
    for name, (n, d, k) in table.items():
        ds = load_dataset(name)
        assert (ds.n_samples, ds.n_features, ds.n_classes) == (n, d, k), name


def test_paper_mismatches_are_documented():
    for name, paper in PAPER_MISMATCH.items():
        spec = get_spec(name)
        assert spec.paper_shape == paper and spec.expected_shape != paper
        assert spec.note, f"{name} differs from its paper's table and must say why"


def test_lds_fixed_splits(data_env):
    for name in ("g50c", "text", "uspst"):
        L, U = load_dataset(name).splits[50]
        assert L.shape[0] == 10  # JMLR 2008: 10 splits of 50 labeled points


def test_sslbook_fixed_splits(data_env):
    ds = load_dataset("usps2")
    assert ds.splits[10][0].shape == (12, 10) and ds.splits[100][0].shape == (12, 100)


def test_coil_images_are_the_objects(data_env):
    coil20, coil3 = load_dataset("coil20"), load_dataset("coil3")
    # coil3 is objects 3, 6, 19 of coil20 (rows grouped by object, 72 each)
    for k, obj in enumerate((3, 6, 19)):
        np.testing.assert_array_equal(coil3.X[coil3.y == k], coil20.X[coil20.y == obj - 1])


def test_text_class_names_follow_the_newsgroup_sizes(data_env, shared_data):
    """text1.mat names neither class: +1 has as many posts as comp.os.ms-windows.misc in the
    20news-bydate listing (985; comp.sys.mac.hardware has 963 there, 961 in 20news-18828)."""
    import gzip

    with gzip.open(shared_data / "text-large/20news-bydate/20news-bydate.files.tsv.gz", "rt") as f:
        groups = [line.split("\t")[0].split("/")[2] for line in f.read().splitlines()[1:]]
    text = load_dataset("text")
    assert int(np.sum(text.y == 1)) == groups.count("comp.os.ms-windows.misc") == 985
    assert "mswindows" in text.class_names[1] and "mac" in text.class_names[0]


def test_alias_and_close_match():
    assert get_spec("pcmac").name == "text"
    with pytest.raises(ValueError, match="Did you mean 'uspst'"):
        get_spec("usspt")
    with pytest.raises(ValueError, match="unknown data set"):
        load_dataset("no-such-thing-at-all")
    with pytest.raises(TypeError):
        get_spec(3)


def test_fetch_unknown_file():
    with pytest.raises(ValueError, match="Did you mean 'g50c/g50c.mat'"):
        fetch("g50c/g50c.mar")


# ------------------------------------------------------------------------- failure paths
def _cache_files(path):
    return sorted(p.name for p in path.rglob("*") if p.is_file())


def test_checksum_mismatch_leaves_nothing(tmp_path, monkeypatch, shared_data, no_retry_wait):
    served = tmp_path / "served"
    (served / "g50c").mkdir(parents=True)
    blob = bytearray((shared_data / "g50c/g50c.mat").read_bytes())
    blob[len(blob) // 2] ^= 0xFF  # corrupt one byte
    (served / "g50c/g50c.mat").write_bytes(bytes(blob))
    cache = tmp_path / "cache"
    monkeypatch.setenv("S3VM_DATA_DIR", str(cache))
    with LoopbackServer(served) as server:
        monkeypatch.setenv("S3VM_DATA_MIRROR", server.url)
        with pytest.raises(DataFetchError) as info:
            load_dataset("g50c")
    msg = str(info.value)
    expected = data_registry.registry()["g50c/g50c.mat"][0].split(":")[1]
    import hashlib

    actual = hashlib.sha256(bytes(blob)).hexdigest()
    assert "g50c.mat" in msg and expected in msg and actual in msg
    assert _cache_files(cache) == []


def test_truncated_file_leaves_nothing(tmp_path, monkeypatch, shared_data, no_retry_wait):
    served = tmp_path / "served"
    (served / "coil20").mkdir(parents=True)
    blob = (shared_data / "coil20/COIL20.mat").read_bytes()
    (served / "coil20/COIL20.mat").write_bytes(blob[: len(blob) // 3])
    cache = tmp_path / "cache"
    monkeypatch.setenv("S3VM_DATA_DIR", str(cache))
    with LoopbackServer(served) as server:
        monkeypatch.setenv("S3VM_DATA_MIRROR", server.url)
        with pytest.raises(DataFetchError, match="checksum mismatch for coil20/COIL20.mat"):
            load_dataset("coil3")
    assert _cache_files(cache) == []


def test_unreachable_mirror(tmp_path, monkeypatch, no_retry_wait):
    import socket

    with socket.socket() as s:  # a loopback port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("S3VM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("S3VM_DATA_MIRROR", f"http://127.0.0.1:{port}/")
    with pytest.raises(DataFetchError, match=r"could not fetch g50c/g50c\.mat .*mirror"):
        load_dataset("g50c")
    assert _cache_files(tmp_path) == []


def test_missing_file_on_mirror(tmp_path, monkeypatch, no_retry_wait):
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("S3VM_DATA_DIR", str(tmp_path / "cache"))
    with LoopbackServer(tmp_path / "empty") as server:
        monkeypatch.setenv("S3VM_DATA_MIRROR", server.url)
        with pytest.raises(DataFetchError, match="404"):
            fetch("uspst/uspst.mat")
    assert not (tmp_path / "cache").exists() or _cache_files(tmp_path / "cache") == []


def test_a_failed_fetch_leaves_no_empty_folder(tmp_path, monkeypatch, no_retry_wait):
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("S3VM_DATA_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("S3VM_DATA_MIRROR", str(tmp_path / "empty"))
    with pytest.raises(DataFetchError, match="mirror file .* does not exist"):
        fetch("uspst/uspst.mat")
    assert not (tmp_path / "cache").exists()  # neither cache/ nor cache/uspst/ was left behind


def test_a_data_cache_that_cannot_be_a_folder_is_named_before_any_download(tmp_path, monkeypatch, shared_data):
    """S3VM_DATA_DIR naming a file (or a path through one) is named as the problem, not the mirror."""
    a_file = tmp_path / "afile"
    a_file.write_text("x")
    monkeypatch.setenv("S3VM_DATA_MIRROR", str(shared_data))
    for cache in (a_file, a_file / "sub"):
        monkeypatch.setenv("S3VM_DATA_DIR", str(cache))
        with pytest.raises(DataFetchError, match=f"the data cache {re.escape(str(cache))} \\(S3VM_DATA_DIR=.*\\) "
                                                 f"cannot be a folder: {re.escape(str(a_file))} is a file"):
            load_dataset("g50c")
    assert a_file.read_text() == "x"


def test_a_data_cache_under_the_home_folder_is_expanded(tmp_path, monkeypatch, shared_data):
    """pooch expands ``~`` in S3VM_DATA_DIR; `data list` (is_cached) now reads the same folder."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("S3VM_DATA_DIR", "~/data-cache")
    monkeypatch.setenv("S3VM_DATA_MIRROR", str(shared_data))
    assert data_registry.cache_dir() == tmp_path / "data-cache"
    fetch("g50c/g50c.mat")
    assert (tmp_path / "data-cache" / "g50c" / "g50c.mat").is_file() and get_spec("g50c").cached()


def test_no_public_url_needs_mirror(tmp_path, monkeypatch):
    monkeypatch.setenv("S3VM_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("S3VM_DATA_MIRROR", raising=False)
    with pytest.raises(DataFetchError, match="has no public URL.*S3VM_DATA_MIRROR"):
        fetch("text-large/20news-bydate/20news-bydate.tar.gz")


def test_local_folder_mirror(tmp_path, monkeypatch, shared_data):
    """A plain folder works as a mirror too, and is still checksum-verified."""
    monkeypatch.setenv("S3VM_DATA_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("S3VM_DATA_MIRROR", str(shared_data))
    path = fetch("g10n/g10n.mat")
    assert path.read_bytes() == (shared_data / "g10n/g10n.mat").read_bytes()


def test_cached_file_is_not_refetched(data_env, monkeypatch):
    fetch("g50c/g50c.mat")
    monkeypatch.setenv("S3VM_DATA_MIRROR", "http://127.0.0.1:9/")  # would fail if contacted
    assert fetch("g50c/g50c.mat").is_file()
    assert get_spec("g50c").cached()


def test_network_only_offline_message(monkeypatch, tmp_path):
    import sklearn.datasets

    def offline(*args, **kwargs):
        raise urllib.error.URLError("no network here")

    monkeypatch.setenv("S3VM_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(sklearn.datasets, "fetch_rcv1", offline)
    with pytest.raises(DataFetchError, match="ccat is network-only data .*fetch_rcv1.*no network here"):
        load_dataset("ccat")


def test_network_only_listed():
    names = {s.name for s in list_datasets() if s.network_only}
    assert names == {"ccat", "gcat", "real-sim", "aut-avn"}
    assert not any(s.cached() for s in list_datasets() if s.network_only)


@pytest.mark.network
@pytest.mark.parametrize("name,d", [("ccat", 47236), ("gcat", 47236), ("real-sim", 20958)])
def test_network_datasets(name, d):
    ds = load_dataset(name)
    assert ds.n_features == d and ds.n_classes == 2 and sp.issparse(ds.X)


def test_a_dataset_refuses_labels_that_are_not_class_indices():
    """Labels -1/+1, or one label short, would be read as other classes by the protocol, silently."""
    from s3vm_bench.data_registry import Dataset

    X = np.ones((4, 2))
    with pytest.raises(ValueError, match=r"y must hold class indices 0\.\.1 .*got \[-1, 1\]"):
        Dataset("pm", X, np.array([-1, 1, -1, 1]), ("a", "b"))
    with pytest.raises(ValueError, match=r"one row per label .*\(4, 2\) and \(3,\)"):
        Dataset("short", X, np.array([0, 1, 0]), ("a", "b"))
    with pytest.raises(ValueError, match="y must hold class indices"):
        Dataset("float", X, np.array([0.0, 1.0, 0.0, 1.0]), ("a", "b"))
    with pytest.raises(ValueError, match="X_test and y_test come together"):
        Dataset("test", X, np.array([0, 1, 0, 1]), ("a", "b"), X_test=X)
    assert Dataset("ok", sp.csr_matrix(X), np.array([0, 1, 0, 1], dtype=np.int32), ("a", "b")).n_classes == 2


@pytest.mark.parametrize("n_splits", [0, -1, 2.5, "3", None, True])
def test_split_protocols_refuse_a_split_count_that_is_not_a_positive_integer(n_splits):
    from s3vm_bench.data_registry import icml2006_splits, jmlr2008_splits, make_splits, two_moons

    ds = two_moons(seed=0)
    for call in (lambda: jmlr2008_splits(ds, n_splits=n_splits, n_labeled=2),
                 lambda: icml2006_splits(ds, n_splits=n_splits),
                 lambda: make_splits(ds, "jmlr2008", n_splits=n_splits, n_labeled=2)):
        with pytest.raises(ValueError, match=f"n_splits must be an integer >= 1, got {re.escape(repr(n_splits))}"):
            call()
    with pytest.raises(TypeError, match=r"ds must be a Dataset \(e\.g\. load_dataset\('g50c'\)\), got str"):
        jmlr2008_splits("g50c")


def test_newsgroups_pair_needs_two_different_groups():
    from s3vm_bench.data_registry import newsgroups_pair

    with pytest.raises(ValueError, match="a binary task needs two different newsgroups"):
        newsgroups_pair("comp.sys.mac.hardware", "comp.sys.mac.hardware")
    with pytest.raises(TypeError, match="negative must be a newsgroup name"):
        newsgroups_pair("comp.sys.mac.hardware", None)
