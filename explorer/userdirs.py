"""Where the app keeps what it writes: never next to its code (a bundle folder is read-only on a
lab machine), always in the user's own folders, and in one folder when tests say so."""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "device-explorer"
#: when set (tests, a portable USB-stick setup), both data and settings live in this one folder
HOME_ENV = "DEVICE_EXPLORER_HOME"


def data_dir() -> Path:
    """Results: ``$DEVICE_EXPLORER_HOME`` when set, else the platform's user data folder."""
    home = os.environ.get(HOME_ENV)
    if home:
        return Path(home)
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def config_dir() -> Path:
    """Settings: ``$DEVICE_EXPLORER_HOME`` when set, else the platform's user config folder."""
    home = os.environ.get(HOME_ENV)
    if home:
        return Path(home)
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    """What can be rebuilt (numba's compiled code): the platform's user cache folder, also when
    ``$DEVICE_EXPLORER_HOME`` is set, so that tests and portable setups share one compiled copy
    instead of compiling again in every fresh home. A headless GPU server may lack platformdirs
    (the acceptance runs there): XDG's rule then, which is what platformdirs gives on Linux."""
    try:
        import platformdirs
    except ImportError:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base) / APP_NAME
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))
