"""Download-and-verify layer: the pooch registry of every data file the suite uses.

Every file named in ``registry.txt`` has a sha256 and, where one exists, a pinned public URL
(see ``../shared/data/MANIFEST.md`` for provenance). Files are cached under
``pooch.os_cache("s3vm-bench")`` unless ``S3VM_DATA_DIR`` names another folder.

``S3VM_DATA_MIRROR`` replaces every URL by ``MIRROR/<relative path>``, with the same checksum. It
may be an ``http(s)://`` base URL (what the tests use, through a loopback server), a ``file://``
URL or a plain local folder (a copy of the data made elsewhere). Whatever the source, pooch
downloads into a temporary file and moves it into the cache only once its hash matches, so a
failed or corrupted download never leaves a file behind.
"""

from __future__ import annotations

import os
import shutil
import urllib.parse
from functools import lru_cache
from importlib import resources
from pathlib import Path

import pooch

from s3vm_bench import did_you_mean, nearest_existing

__all__ = [
    "DataFetchError",
    "registry",
    "fetch",
    "cache_dir",
    "check_cache_dir",
    "is_cached",
    "make_pooch",
]

ENV_DIR = "S3VM_DATA_DIR"
ENV_MIRROR = "S3VM_DATA_MIRROR"
RETRIES = 3

# pooch logs every download at INFO; the CLI reports fetches itself, library users want quiet.
pooch.get_logger().setLevel("WARNING")


class DataFetchError(OSError):
    """A data file could not be obtained (network, mirror, or checksum failure)."""


@lru_cache(maxsize=1)
def registry() -> dict[str, tuple[str, str | None]]:
    """Parse ``registry.txt``.

    Returns
    -------
    dict
        ``{relative_path: (known_hash, url_or_None)}``; ``None`` marks a file with no
        upstream copy, which can only come from ``S3VM_DATA_MIRROR``.
    """
    text = resources.files(__package__).joinpath("registry.txt").read_text("utf-8")
    out: dict[str, tuple[str, str | None]] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) not in (2, 3) or not parts[1].startswith("sha256:"):
            raise RuntimeError(f"registry.txt line {lineno} is malformed: {raw!r}")
        url = parts[2] if len(parts) == 3 and parts[2] != "-" else None
        out[parts[0]] = (parts[1], url)
    return out


def cache_dir() -> Path:
    """The folder the data files are cached in (``S3VM_DATA_DIR`` or the OS cache)."""
    env = os.environ.get(ENV_DIR)
    return Path(env).expanduser() if env else Path(pooch.os_cache("s3vm-bench"))


def check_cache_dir() -> Path:
    """:func:`cache_dir` if it is a folder or can be made one; DataFetchError naming it otherwise
    (a file, or a path through a file). :func:`fetch` calls it before any download."""
    folder = cache_dir()
    probe = nearest_existing(folder)
    if not probe.is_dir():
        where = f"{ENV_DIR}={os.environ[ENV_DIR]}" if os.environ.get(ENV_DIR) else "the OS cache folder"
        raise DataFetchError(f"the data cache {folder} ({where}) cannot be a folder: {probe} is a file; set "
                             f"{ENV_DIR} to a folder")
    return folder


def _mirror() -> str | None:
    mirror = os.environ.get(ENV_MIRROR, "").strip()
    return mirror or None


def make_pooch() -> pooch.Pooch:
    """Build the :class:`pooch.Pooch` for the current environment variables.

    Built on each call (cheap) so that changes to ``S3VM_DATA_DIR`` or ``S3VM_DATA_MIRROR`` made
    after import, as the tests do, take effect.
    """
    reg = registry()
    mirror = _mirror()
    if mirror is not None:
        base = mirror if mirror.endswith("/") else mirror + "/"
        urls = {name: base + urllib.parse.quote(name) for name in reg}
    else:
        # pooch needs a URL for every file; files without one get a marker that fetch() refuses.
        urls = {name: (url or f"unavailable://{name}") for name, (_, url) in reg.items()}
    return pooch.create(
        path=pooch.os_cache("s3vm-bench"),
        base_url="",
        env=ENV_DIR,
        registry={name: h for name, (h, _) in reg.items()},
        urls=urls,
        retry_if_failed=RETRIES,
    )


def _local_source(url: str) -> Path | None:
    """Return the local path behind a ``file://`` URL or a bare path, else ``None``."""
    if url.startswith("file://"):
        return Path(urllib.parse.unquote(urllib.parse.urlparse(url).path))
    if "://" not in url:
        return Path(urllib.parse.unquote(url))
    return None


def _copy_downloader(url: str, output_file, pup) -> None:  # noqa: ARG001 - pooch's signature
    """pooch downloader for a local mirror: a plain copy, still hash-checked by pooch."""
    src = _local_source(url)
    if src is None or not src.is_file():
        raise DataFetchError(f"mirror file {src} does not exist")
    with open(src, "rb") as fin:
        if isinstance(output_file, (str, os.PathLike)):
            with open(output_file, "wb") as fout:
                shutil.copyfileobj(fin, fout)
        else:
            shutil.copyfileobj(fin, output_file)


def is_cached(name: str) -> bool:
    """Whether ``name`` is already in the cache (existence only; fetch() re-verifies the hash)."""
    return (cache_dir() / name).is_file()


def fetch(name: str) -> Path:
    """Return the local path of registry file ``name``, downloading and verifying it if needed.

    Parameters
    ----------
    name : str
        Relative path as listed in ``registry.txt`` (e.g. ``"g50c/g50c.mat"``).

    Raises
    ------
    ValueError
        ``name`` is not in the registry (the message suggests a close match).
    DataFetchError
        The file could not be downloaded, or its sha256 did not match (the message names the
        file, the expected and the actual hash). Nothing is left in the cache in either case.
    """
    reg = registry()
    if name not in reg:
        raise ValueError(f"{name!r} is not a file of the s3vm-bench data registry.{did_you_mean(name, reg)}")
    check_cache_dir()
    pup = make_pooch()
    url = pup.get_url(name)
    if url.startswith("unavailable://") and not (Path(pup.abspath) / name).is_file():
        # A cached copy is still served (and hash-checked by pooch); only a download is impossible.
        raise DataFetchError(
            f"{name} has no public URL: it is this project's own packaging of data described in "
            f"shared/data/MANIFEST.md. Set {ENV_MIRROR} to a folder or URL holding a copy "
            f"(e.g. {ENV_MIRROR}=/path/to/shared/data)."
        )
    downloader = _copy_downloader if _local_source(url) is not None else None
    made = [p for p in (Path(pup.abspath) / name).parents if not p.exists()]  # folders a failed fetch must not leave
    try:
        return _download(pup, name, url, downloader)
    except BaseException:
        for folder in made:  # innermost first; only the empty ones this fetch created
            try:
                folder.rmdir()
            except OSError:
                break
        raise


def _download(pup: pooch.Pooch, name: str, url: str, downloader) -> Path:
    """``pup.fetch(name)``, its failures as :class:`DataFetchError` saying what to do (see :func:`fetch`)."""
    try:
        return Path(pup.fetch(name, downloader=downloader))
    except ValueError as exc:
        # pooch reports a hash mismatch as ValueError naming both hashes; keep its words.
        raise DataFetchError(
            f"checksum mismatch for {name} (downloaded from {url}): {exc} "
            "The corrupted download was discarded; nothing was written to the cache."
        ) from exc
    except DataFetchError as exc:
        raise DataFetchError(f"could not fetch {name} from {url}: {exc}") from exc
    except Exception as exc:  # requests' network errors and OSError from the copy
        import requests

        if isinstance(exc, (requests.exceptions.RequestException, OSError)):
            hint = (
                f" Check the network, or set {ENV_MIRROR} to a reachable copy of the data."
                if _mirror() is None
                else f" Is the mirror {_mirror()!r} ({ENV_MIRROR}) reachable?"
            )
            raise DataFetchError(f"could not fetch {name} from {url}: {exc}.{hint}") from exc
        raise
