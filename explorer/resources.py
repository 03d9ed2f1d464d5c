"""Locate the data shipped in ``resources/``.

The folder sits at the top of the repository (so designers and packagers find it) and is
installed into the wheel as the package ``explorer_resources``. An editable install, a wheel
and a PyInstaller bundle each put it somewhere else; this module is the one place that knows.
"""

from __future__ import annotations

import sys
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from explorer.schema import SchemaError, loads


@lru_cache(maxsize=1)
def resources_dir() -> Path:
    candidates: list[Path] = []
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        candidates.append(Path(frozen_root) / "resources")
    try:
        import explorer_resources  # installed from the top-level resources/ folder

        candidates.append(Path(explorer_resources.__file__).resolve().parent)
    except ImportError:
        pass
    candidates.append(Path(__file__).resolve().parent.parent / "resources")
    for candidate in candidates:
        if (candidate / "catalog.json").is_file() or (candidate / "limits.json").is_file():
            return candidate
    # Fall back to the source layout even if data is missing, so the error names a real path.
    return candidates[-1]


def resource_path(*parts: str) -> Path:
    return resources_dir().joinpath(*parts)


#: the largest data file shipped in resources/ (the catalog and the limits are tens of KB)
MAX_RESOURCE_BYTES = 4 * 1024 * 1024


@cache
def load_json(name: str) -> Any:
    """A shipped data file through the app's one JSON decoder (``explorer.schema.loads``): a
    damaged bundle is a ``SchemaError`` naming the file, never a half-read table."""
    path = resource_path(name)
    try:
        return loads(path.read_bytes(), max_bytes=MAX_RESOURCE_BYTES)
    except SchemaError as exc:
        raise SchemaError(f"{path}: {exc}") from None
