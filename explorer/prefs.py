"""The few things the window remembers between runs: theme, last panel, window size.

Kept Qt-free and forgiving: a lab machine may hand the app a settings file from another version,
a half-written one, or a read-only home. Reading never fails (whatever is unusable falls back to
the default, field by field) and writing failures are logged, never shown as an error: losing a
window size must not cost a teacher a traceback.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeGuard

from explorer.cli import PANELS
from explorer.userdirs import config_dir

log = logging.getLogger(__name__)

SETTINGS_FILE = "settings.json"
THEMES = ("light", "dark")
#: a window smaller than this, or larger than any screen, was not the user's choice
MIN_SIZE = (640, 480)
MAX_SIZE = (10_000, 10_000)


def _whole(value: Any) -> TypeGuard[int]:
    """An int that is not a bool (JSON's true would otherwise pass as 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass
class Prefs:
    theme: str = "light"
    panel: str = "devices"
    width: int = 1280
    height: int = 800

    @classmethod
    def from_dict(cls, data: Any) -> Prefs:
        """Each field that is present and sensible is taken; everything else keeps its default."""
        prefs = cls()
        if not isinstance(data, dict):
            return prefs
        if data.get("theme") in THEMES:
            prefs.theme = data["theme"]
        if data.get("panel") in PANELS:
            prefs.panel = data["panel"]
        width, height = data.get("width"), data.get("height")
        if _whole(width) and _whole(height):
            if MIN_SIZE[0] <= width <= MAX_SIZE[0] and MIN_SIZE[1] <= height <= MAX_SIZE[1]:
                prefs.width, prefs.height = width, height
        return prefs

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def settings_path() -> Path:
    return config_dir() / SETTINGS_FILE


def load() -> Prefs:
    path = settings_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Prefs()
    except OSError as exc:
        log.info("settings not read from %s: %s", path, exc)
        return Prefs()
    try:
        return Prefs.from_dict(json.loads(text))
    except ValueError as exc:
        log.info("settings file %s is not valid JSON (%s); using the defaults", path, exc)
        return Prefs()


def save(prefs: Prefs) -> bool:
    """Write atomically (a crash mid-write leaves the old file); ``False`` when it could not."""
    path = settings_path()
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(prefs.to_dict(), indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        log.info("settings not saved to %s: %s", path, exc)
        return False
    return True


__all__ = ["PANELS", "THEMES", "Prefs", "load", "save", "settings_path"]
