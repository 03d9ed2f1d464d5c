"""Locate the data shipped in ``resources/``.

The folder sits at the top of the repository (so designers and packagers find it) and is
installed into the wheel as the package ``explorer_resources``. An editable install, a wheel
and a PyInstaller bundle each put it somewhere else; this module is the one place that knows.
"""

from __future__ import annotations

import os
import sys
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from explorer.schema import SchemaError, loads

if TYPE_CHECKING:
    from pathlib import Path


@lru_cache(maxsize=1)
def _resources_folder() -> str:
    """The folder, found with ``os.path`` so that reading a table (every command's first step)
    does not import ``pathlib`` (with ``urllib.parse`` and ``ipaddress``, about 17 M instructions,
    5 % of ``launch``)."""
    candidates: list[str] = []
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        candidates.append(os.path.join(frozen_root, "resources"))
    try:
        import explorer_resources  # installed from the top-level resources/ folder

        candidates.append(os.path.dirname(os.path.realpath(explorer_resources.__file__)))
    except ImportError:
        pass
    here = os.path.dirname(os.path.realpath(__file__))
    candidates.append(os.path.join(os.path.dirname(here), "resources"))
    for candidate in candidates:
        if any(os.path.isfile(os.path.join(candidate, name)) for name in ("catalog.json", "limits.json")):
            return candidate
    # Fall back to the source layout even if data is missing, so the error names a real path.
    return candidates[-1]


def resources_dir() -> Path:
    from pathlib import Path

    return Path(_resources_folder())


def resource_path(*parts: str) -> Path:
    return resources_dir().joinpath(*parts)


#: the largest data file shipped in resources/ (the catalog and the limits are tens of KB)
MAX_RESOURCE_BYTES = 4 * 1024 * 1024


@cache
def load_json(name: str) -> Any:
    """A shipped data file through the app's one JSON decoder (``explorer.schema.loads``): a
    damaged bundle is a ``SchemaError`` naming the file, never a half-read table."""
    path = os.path.join(_resources_folder(), name)
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        return loads(data, max_bytes=MAX_RESOURCE_BYTES)
    except SchemaError as exc:
        raise SchemaError(f"{path}: {exc}") from None
