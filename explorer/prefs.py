"""The few things the window remembers between runs: theme, last panel, window size.

Kept Qt-free and forgiving: a lab machine may hand the app a settings file from another version,
a half-written one, or a read-only home. Reading never fails and never blocks:

* a file that is not a JSON object at all (random bytes, a Latin-1 byte, JSON nested 200,000
  deep, a named pipe or a folder in its place) is moved aside by ``explorer.statefile`` and the
  window says so once, naming both paths;
* in a good file, each field is checked against its declared type and its rule below, and a field
  that fails falls back to its default alone (a newer version may use a theme this one lacks);
* keys this version does not know are written back untouched on save, so a newer version's
  settings survive a session in this one.

Writing failures are logged, never shown as an error: losing a window size must not cost a
teacher a traceback. To add a setting, add a field to ``Prefs`` (its type is checked from the
annotation) and, where a type is not enough, a rule to ``RULES``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from explorer.panels import PANELS
from explorer.schema import SchemaError, check_value, field_types, show
from explorer.statefile import load_json, save_json
from explorer.userdirs import config_dir

log = logging.getLogger(__name__)

SETTINGS_FILE = "settings.json"
THEMES = ("light", "dark")
#: a window smaller than this, or larger than any screen, was not the user's choice
MIN_SIZE = (640, 480)
MAX_SIZE = (10_000, 10_000)
#: a settings file bigger than this was not written by the app
MAX_SETTINGS_BYTES = 1024 * 1024
#: text size in percent (View > Text size); the same range as ``explorer.ui.theme``'s control
TEXT_SCALE_RANGE = (100, 250)


@dataclass
class Prefs:
    theme: str = "light"
    panel: str = "devices"
    width: int = 1280
    height: int = 800
    #: what each page keeps of itself between runs (the visualizer: device, launch, speed and
    #: zoom), as the page wrote it with ``Panel.remembered``; the page checks it on ``restore``
    pages: dict[str, dict[str, str | int]] = field(default_factory=dict)
    #: text size in percent on the user's own screen, and in presentation mode (the projector)
    text_scale: int = 100
    presentation_text_scale: int = 150
    #: presentation mode's text size per screen size ("1920x1080": 250): what suits a projector
    #: is never carried to a smaller screen (``presentation_text_scale`` is the last one chosen)
    presentation_text_scales: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Any) -> Prefs:
        """Each field that is present and sensible is taken; everything else keeps its default."""
        prefs = cls()
        if not isinstance(data, dict):
            return prefs
        declared = field_types(cls)
        taken: set[str] = set()
        for f in fields(cls):
            if f.name not in data:
                continue
            try:
                value = check_value(data[f.name], declared[f.name], f.name)
                rule = RULES.get(f.name)
                if rule is not None and not rule(value):
                    raise SchemaError(f"{f.name} is {show(value)}, which this version does not offer")
            except SchemaError as exc:
                log.info("setting ignored, default kept: %s", exc)
                continue
            setattr(prefs, f.name, value)
            taken.add(f.name)
        if not {"width", "height"} <= taken:  # a window size is a pair: half of one is nobody's choice
            prefs.width, prefs.height = cls.width, cls.height
        return prefs

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: what a field's value must also satisfy, beyond its declared type
RULES: dict[str, Callable[[Any], bool]] = {
    "theme": lambda v: v in THEMES,
    "panel": lambda v: v in PANELS,
    "width": lambda v: MIN_SIZE[0] <= v <= MAX_SIZE[0],
    "height": lambda v: MIN_SIZE[1] <= v <= MAX_SIZE[1],
    "text_scale": lambda v: TEXT_SCALE_RANGE[0] <= v <= TEXT_SCALE_RANGE[1],
    "presentation_text_scale": lambda v: TEXT_SCALE_RANGE[0] <= v <= TEXT_SCALE_RANGE[1],
    "presentation_text_scales": lambda v: (
        all(
            re.fullmatch(r"\d{3,5}x\d{3,5}", k) and TEXT_SCALE_RANGE[0] <= s <= TEXT_SCALE_RANGE[1]
            for k, s in v.items()
        )
        and len(v) <= 64
    ),
}


def settings_path() -> Path:
    return config_dir() / SETTINGS_FILE


def _settings_object(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise SchemaError(f"it is {show(data)}, not an object of named settings")
    return data


def load_with_notice() -> tuple[Prefs, str]:
    """The saved settings (defaults where there are none) and, when the file was damaged and
    moved aside, the sentence to show the user once. Never raises, never blocks."""
    loaded = load_json(
        settings_path(),
        _settings_object,
        what="settings file",
        instead="the window opens with the default settings",
        max_bytes=MAX_SETTINGS_BYTES,
    )
    return Prefs.from_dict(loaded.value), loaded.notice


def load() -> Prefs:
    """``load_with_notice`` for a caller with nowhere to show the notice: it is logged instead."""
    prefs, notice = load_with_notice()
    if notice:
        log.warning("%s", notice)
    return prefs


def _unknown_keys_on_disk(path: Path) -> dict[str, Any]:
    """The keys of the file now on disk that this version does not know (a newer version's)."""
    loaded = load_json(
        path,
        _settings_object,
        what="settings file",
        instead="this session's settings are saved in its place",
        max_bytes=MAX_SETTINGS_BYTES,
    )
    if loaded.notice:
        log.warning("%s", loaded.notice)
    known = {f.name for f in fields(Prefs)}
    return {k: v for k, v in (loaded.value or {}).items() if k not in known}


def save(prefs: Prefs) -> bool:
    """Write atomically (a crash mid-write leaves the old file), keeping the keys this version
    does not know; ``False`` when it could not."""
    path = settings_path()
    try:
        save_json(path, {**_unknown_keys_on_disk(path), **prefs.to_dict()}, create_folder=True)
    except (OSError, ValueError) as exc:
        log.info("settings not saved to %s: %s", path, exc)
        return False
    return True


__all__ = ["PANELS", "RULES", "THEMES", "Prefs", "load", "load_with_notice", "save", "settings_path"]
