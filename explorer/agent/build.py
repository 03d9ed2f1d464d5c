"""Which build of the package this is: a hash of its source files, so two copies know each other.

Why: the version string names a release, but a lab server installed from an older commit, or a
laptop running a checkout with local changes, carries the same version and yet another protocol
in practice (a benchmark point without its roofline fields, a method that takes other params).
The agent's hello carries ``build_id()`` and the parent refuses a build that is not its own, in
the same one line as another version.

The id is a SHA-256 over the package's ``*.py`` files (their paths inside the package and their
bytes, in sorted order), cut to 16 hex digits: the same source gives the same id on every
machine, whoever installed it and however (a wheel, a checkout, an editable install). Hashing
2.6 MB takes a few milliseconds, but a shared venv on a network filesystem makes it slower, so
the id is computed at a user's first start and cached in their own folder (never beside the
code: ``explorer.userdirs``), keyed by each file's size and modification time: a later start
costs one ``stat`` per file. Inside the PyInstaller bundle (no source files) the id is the
one written into it at build time (``BUILD_ID_FILE`` in the bundle's data), "" when there is none:
an unknown build is compared by its version only.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path

from explorer.userdirs import APP_NAME, HOME_ENV

#: the name of the id a bundle carries in its data folder
BUILD_ID_FILE = "device-explorer-build-id"
_ID_CHARS = 16


def package_dir() -> Path:
    """The ``explorer`` package's folder."""
    return Path(__file__).resolve().parent.parent


def source_files(root: Path) -> list[Path]:
    """The package's ``*.py`` files, sorted by their path inside it (caches skipped)."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        found.extend(Path(folder) / f for f in files if f.endswith(".py"))
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def hash_sources(root: Path, files: list[Path]) -> str:
    """The id itself: SHA-256 over each file's path inside ``root`` and its bytes."""
    digest = hashlib.sha256()
    for path in files:
        name = path.relative_to(root).as_posix().encode()
        data = path.read_bytes()
        digest.update(len(name).to_bytes(4, "big") + name + len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()[:_ID_CHARS]


def _fingerprint(root: Path, files: list[Path]) -> str:
    """What the cached id is valid for: each file's path, size and modification time."""
    digest = hashlib.sha256(str(root).encode())
    for path in files:
        st = path.stat()
        digest.update(f"{path.relative_to(root).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _cache_file(root: Path) -> Path:
    """Where the id of the package at ``root`` is cached: the user's cache folder
    (``$DEVICE_EXPLORER_HOME`` when set, as for everything the app writes)."""
    home = os.environ.get(HOME_ENV)
    if home:
        folder = Path(home)
    else:
        import platformdirs

        folder = Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))
    key = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    return folder / f"build-id-{key}"


def _read_cache(path: Path, fingerprint: str) -> str | None:
    try:
        with open(path, encoding="ascii") as f:
            text = f.read(200).split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(text) == 2 and text[0] == fingerprint and len(text[1]) == _ID_CHARS:
        return text[1]
    return None


def _write_cache(path: Path, fingerprint: str, ident: str) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".build-id-")
        try:
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(f"{fingerprint} {ident}\n")
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return False
    return True


def _bundled() -> str:
    base = getattr(sys, "_MEIPASS", None)
    if not base:
        return ""
    try:
        text = (Path(base) / BUILD_ID_FILE).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return text if len(text) == _ID_CHARS and all(c in "0123456789abcdef" for c in text) else ""


_CACHED: list[str] = []


def build_id() -> str:
    """This package's build id (16 hex digits), "" where it cannot be known. Computed once per
    process; cached on disk between processes (see the module's docstring)."""
    if _CACHED:
        return _CACHED[0]
    if getattr(sys, "frozen", False):
        ident = _bundled()
    else:
        ident = _computed(package_dir())
    _CACHED.append(ident)
    return ident


def _computed(root: Path) -> str:
    try:
        files = source_files(root)
        fingerprint = _fingerprint(root, files)
    except (OSError, ValueError):
        return ""
    cache = _cache_file(root)
    found = _read_cache(cache, fingerprint)
    if found is not None:
        return found
    try:
        ident = hash_sources(root, files)
    except OSError:
        return ""
    _write_cache(cache, fingerprint, ident)
    return ident
