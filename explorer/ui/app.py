"""Create the QApplication: name, icon, high-DPI behaviour and theme.

Kept free of torch and numba so the window can be on screen before they load; the main
window then discovers devices in a background thread.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import QApplication

from explorer import __version__
from explorer.resources import resource_path
from explorer.ui.theme import apply_theme

APP_NAME = "Device Explorer"
ORGANISATION = "Device Explorer"

# Icon file names the packaging work may ship, best first.
_ICON_NAMES = ("device-explorer.svg", "device-explorer.png", "app.svg", "app.png", "icon.svg", "icon.png")


def app_icon_path() -> Path | None:
    """The application icon in resources/icons/, or ``None`` where none is shipped."""
    folder = resource_path("icons")
    if not folder.is_dir():
        return None
    for name in _ICON_NAMES:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    pngs = sorted(folder.glob("*.png"), key=lambda p: p.stat().st_size, reverse=True)
    return pngs[0] if pngs else None


def create_application(argv: Sequence[str] | None = None, theme: str = "light") -> QApplication:
    """Return the one QApplication, creating and styling it on the first call."""
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        return existing
    # Fractional scale factors (125 %, 150 %) are common on school laptops; rounding them makes
    # text blurry or too small. Qt 6 always scales for high DPI; this keeps the exact factor.
    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    QApplication.setApplicationName(APP_NAME)
    QApplication.setApplicationDisplayName(APP_NAME)
    QApplication.setOrganizationName(ORGANISATION)
    QApplication.setApplicationVersion(__version__)
    QGuiApplication.setDesktopFileName("device-explorer")
    app = QApplication(list(argv) if argv is not None else sys.argv[:1])
    icon = app_icon_path()
    if icon is not None:
        app.setWindowIcon(QIcon(str(icon)))
    apply_theme(app, theme)
    return app
