"""File-format readers for the registry files, each handling the quirks listed in MANIFEST.md.

Readers return raw arrays; the catalog turns them into :class:`data_registry.Dataset` values.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

__all__ = ["read_mat", "read_svmlight", "read_csv_label_first", "read_csv_label_last",
           "read_newsgroups", "mat_splits"]

#: Version of the results this module's numerics produce: part of the cache key of every cell
#: that runs this code (harness.grid.cell_key). Bump it when a change moves any result.
RESULT_VERSION = 1


def read_mat(path: Path, *keys: str) -> tuple:
    """Load variables ``keys`` from a MATLAB v5 file.

    Dense arrays are returned as float64 (labels flattened to 1-D); sparse matrices as CSR
    float64 with sorted indices (the LDS text file is stored CSC).
    """
    data = scipy.io.loadmat(str(path))
    out = []
    for key in keys:
        if key not in data:
            raise ValueError(f"{path.name} holds no variable {key!r} (it has {sorted(k for k in data if not k.startswith('__'))})")
        v = data[key]
        if sp.issparse(v):
            v = sp.csr_matrix(v, dtype=np.float64)
            v.sort_indices()
        else:
            v = np.asarray(v)
            if v.ndim == 2 and 1 in v.shape and key.lower() in {"y", "gnd", "yt"}:
                v = v.ravel()
        out.append(v)
    return tuple(out)


def mat_splits(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Fixed splits stored as 1-based MATLAB index rows ``idxLabs``/``idxUnls``, made 0-based."""
    labs, unls = read_mat(path, "idxLabs", "idxUnls")
    return labs.astype(np.int64) - 1, unls.astype(np.int64) - 1


def read_svmlight(path: Path, *, skip_header: bool = False, n_features: int | None = None):
    """Read an svmlight/LIBSVM text file (CRLF line endings are accepted).

    Parameters
    ----------
    skip_header : bool
        Drop the first line (the splice copy starts with a ``"2 1000 60"`` size line).
    """
    raw = Path(path).read_bytes().replace(b"\r\n", b"\n")
    if skip_header:
        raw = raw.split(b"\n", 1)[1]
    X, y = load_svmlight_file(io.BytesIO(raw), n_features=n_features, dtype=np.float64)
    return X.tocsr(), y


def read_csv_label_first(path: Path):
    """CSV with the label in the first column (svmguide1 copies)."""
    arr = np.loadtxt(path, delimiter=",", dtype=np.float64)
    return arr[:, 1:], arr[:, 0]


def read_csv_label_last(path: Path):
    """CSV with the label in the last column (the ionosphere copy: +1/-1)."""
    arr = np.loadtxt(path, delimiter=",", dtype=np.float64)
    return arr[:, :-1], arr[:, -1]


def read_newsgroups(path: Path, groups: tuple[str, ...]) -> tuple[list[str], np.ndarray]:
    """Read the raw messages of ``groups`` (train and test pooled) from the bydate tarball.

    Members are read straight from the archive (no extraction, so nothing half-extracted can be
    left behind), decoded as latin-1 like :func:`sklearn.datasets.fetch_20newsgroups`, and
    returned in archive-name order with the index of their group.
    """
    wanted = {g: i for i, g in enumerate(groups)}
    docs: list[tuple[str, int, str]] = []
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            if not member.isfile():
                continue
            parts = member.name.split("/")
            group = next((p for p in parts if p in wanted), None)
            if group is None:
                continue
            text = tar.extractfile(member).read().decode("latin-1")
            docs.append((member.name, wanted[group], text))
    missing = set(groups) - {groups[d[1]] for d in docs}
    if missing:
        raise ValueError(f"no messages for newsgroup(s) {sorted(missing)} in {Path(path).name}")
    docs.sort(key=lambda d: d[0])
    return [d[2] for d in docs], np.array([d[1] for d in docs], dtype=np.int64)
