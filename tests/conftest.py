"""Shared fixtures: the real data served over loopback HTTP, so pooch's fetch-and-verify path runs.

``../shared/data`` (beside the checkout; ``S3VM_SHARED_DATA`` overrides) is served by a
``http.server`` on 127.0.0.1; ``S3VM_DATA_MIRROR`` points at it and ``S3VM_DATA_DIR`` at a
temporary cache, so every loader really downloads and checks the sha256 of its files. No test
reaches the internet.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("S3VM_SHARED_DATA", REPO.parent / "shared" / "data"))


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output readable
        pass


@functools.cache
def _check_shared() -> Path:
    if not (SHARED_DATA / "registry.txt").is_file():
        pytest.fail(f"the shared data folder {SHARED_DATA} is missing: the tests serve the real data "
                    "from there (set S3VM_SHARED_DATA to its location)", pytrace=False)
    return SHARED_DATA


class LoopbackServer:
    """A static file server on 127.0.0.1 for the duration of a test (or session)."""

    def __init__(self, directory: Path):
        handler = functools.partial(_QuietHandler, directory=str(directory))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return _check_shared()


@pytest.fixture(scope="session")
def mirror_server(shared_data):
    with LoopbackServer(shared_data) as server:
        yield server


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("s3vm-cache")


@pytest.fixture
def data_env(monkeypatch, mirror_server, session_cache):
    """Point the registry at the loopback mirror and a session-wide temporary cache."""
    monkeypatch.setenv("S3VM_DATA_MIRROR", mirror_server.url)
    monkeypatch.setenv("S3VM_DATA_DIR", str(session_cache))
    return session_cache


@pytest.fixture
def no_retry_wait(monkeypatch):
    """pooch sleeps 1 s, 2 s, 3 s between its retries; failure tests need not wait."""
    import pooch.core

    monkeypatch.setattr(pooch.core.time, "sleep", lambda s: None)


@pytest.fixture(autouse=True)
def work_folder(tmp_path_factory, monkeypatch):
    """Every test's default work folder (``S3VM_RESULTS_DIR``) is a fresh temporary one, never the checkout's."""
    path = tmp_path_factory.mktemp("work")
    monkeypatch.setenv("S3VM_RESULTS_DIR", str(path))
    return path


@pytest.fixture
def no_shipped_table(monkeypatch, tmp_path_factory):
    """The shipped results are not read (a test that counts what its own runs stored)."""
    import s3vm_bench.harness.reproduce as rep

    none = tmp_path_factory.mktemp("none")
    monkeypatch.setattr(rep, "SHIPPED_RESULTS", none / "runs")
