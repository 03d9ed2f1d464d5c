"""Locate the data shipped in ``resources/``.

The folder sits at the top of the repository (so designers and packagers find it) and is
installed into the wheel as the package ``explorer_resources``. An editable install, a wheel
and a PyInstaller bundle each put it somewhere else; this module is the one place that knows.
"""

from __future__ import annotations

import json
import sys
from functools import cache, lru_cache
from pathlib import Path
from typing import Any


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


@cache
def load_json(name: str) -> Any:
    with resource_path(name).open(encoding="utf-8") as fh:
        return json.load(fh)
