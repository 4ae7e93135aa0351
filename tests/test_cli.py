"""The ``s3vm-bench`` command line (data list / fetch / info, demo)."""

from __future__ import annotations

import subprocess
import sys

from harness.cli import main


def test_data_list(capsys, data_env):
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("g50c", "text", "coil3", "usps2", "news-mac-windows", "ccat", "aut-avn"):
        assert f"\n{name} " in out
    assert out.splitlines()[0].split() == ["name", "n", "d", "classes", "sparse", "source", "cached"]


def test_data_fetch_and_info(capsys, data_env):
    assert main(["data", "fetch", "g50c", "coil3"]) == 0
    out = capsys.readouterr().out
    assert "g50c: ok (550 x 50, 2 classes)" in out and "coil3: ok (216 x 1024, 3 classes)" in out
    assert main(["data", "info", "g50c"]) == 0
    out = capsys.readouterr().out
    assert "g50c: 550 x 50 dense" in out and "10 fixed splits with l=50" in out
    assert "JMLR 2008 Table 4" in out


def test_data_fetch_errors(capsys, data_env):
    assert main(["data", "fetch", "g5oc"]) == 1
    assert "Did you mean 'g50c'" in capsys.readouterr().err
    assert main(["data", "info", "nope-nope"]) == 2


def test_demo_runs_without_download(tmp_path, monkeypatch):
    monkeypatch.setenv("S3VM_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("S3VM_DATA_MIRROR", "http://127.0.0.1:9/")  # any download would fail
    out = subprocess.run([sys.executable, "-m", "harness.cli", "demo"], capture_output=True, text=True,
                         check=True).stdout
    assert "two_moons[seed=0]: 102 x 2 dense" in out
    assert "class counts [50, 50]" in out
    assert list(tmp_path.iterdir()) == []
