"""Colours and fonts chosen to survive a classroom projector.

Projectors wash out pale greys and thin type, so both themes use near-black on near-white (or
the reverse), a base font a notch larger than a desktop default, and one saturated colour per
meaning: blue for selection, green for "present on this machine", amber for "catalog, not
present", and a warm banner for warnings. Widgets never hard-code colours: they set an object
name or a ``role`` property and the one application stylesheet below styles them, so switching
theme is a single call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

#: base font size in points: large enough for the back row, small enough for 1280x800
BASE_FONT_PT = 11

#: the text-size control's range and step, in percent of the base size (View > Text size)
TEXT_SCALE_MIN = 100
TEXT_SCALE_MAX = 250
TEXT_SCALE_STEP = 25


@dataclass(frozen=True)
class Theme:
    name: str
    window: str
    panel: str  # cards and group boxes
    text: str
    muted: str  # secondary text; still strong enough on a projector
    accent: str
    accent_text: str
    border: str
    present: str
    catalog: str
    catalog_bg: str
    banner_bg: str
    banner_border: str
    banner_text: str
    error: str
    plot_background: str
    plot_foreground: str
    plot_pens: tuple[str, str, str, str]  # utilization, memory, temperature, power


LIGHT = Theme(
    name="light",
    window="#f4f5f7",
    panel="#ffffff",
    text="#111418",
    muted="#3d4450",
    accent="#1a56b8",
    accent_text="#ffffff",
    border="#b8bec8",
    present="#137333",
    catalog="#8a4b00",
    catalog_bg="#fff1dc",
    banner_bg="#fff4cc",
    banner_border="#d99a00",
    banner_text="#2b2100",
    error="#b3261e",
    plot_background="#ffffff",
    plot_foreground="#111418",
    plot_pens=("#1a56b8", "#137333", "#c2410c", "#7e22ce"),
)

DARK = Theme(
    name="dark",
    window="#1b1d21",
    panel="#25282d",
    text="#f2f4f7",
    muted="#c3c8d0",
    accent="#5b9bff",
    accent_text="#0b0d10",
    border="#4a505a",
    present="#5fd38a",
    catalog="#ffb454",
    catalog_bg="#3a2a12",
    banner_bg="#3b3116",
    banner_border="#e0a800",
    banner_text="#fff3cf",
    error="#ff8a80",
    plot_background="#25282d",
    plot_foreground="#f2f4f7",
    plot_pens=("#7fb2ff", "#5fd38a", "#ff9a5c", "#d0a2ff"),
)

THEMES = {t.name: t for t in (LIGHT, DARK)}

_current: Theme = LIGHT
_text_scale_pct = TEXT_SCALE_MIN


def current_theme() -> Theme:
    return _current


def text_scale_pct() -> int:
    """The whole window's text size, in percent (100 to 250)."""
    return _text_scale_pct


def clamp_text_scale(percent: int) -> int:
    return max(TEXT_SCALE_MIN, min(TEXT_SCALE_MAX, int(percent)))


#: what a screen must hold at a text size for the pages to lay out: lines of label text down, and
#: label-text heights across (1024x768 holds 150%, 1280x800 200%, 1920x1080 250%: the sizes the
#: layout tests walk)
SCREEN_LINES = 22
SCREEN_EMS = 43
#: presentation mode's text size on a screen it has not been used on (where the screen holds it)
PRESENTATION_DEFAULT = 150


def fitting_text_scale(width: int, height: int) -> int:
    """The largest text size (a step of the control) a screen of ``width`` x ``height``
    device-independent pixels holds: a size carried over from a larger screen never leaves the
    pages a sliver."""
    best = TEXT_SCALE_MIN
    for percent in range(TEXT_SCALE_MIN, TEXT_SCALE_MAX + 1, TEXT_SCALE_STEP):
        em = BASE_FONT_PT * percent / 100 * 96 / 72
        if height / (1.2 * em) >= SCREEN_LINES and width / em >= SCREEN_EMS:
            best = percent
    return best


def px(size: float) -> int:
    """``size`` pixels at the current text size: what painted text and pixel-sized boxes use, so
    the SM picture, the wave bar and the graphs grow with the rest of the window."""
    return max(1, round(size * _text_scale_pct / 100))


def pt(size: float) -> float:
    """``size`` points at the current text size (stylesheets)."""
    return round(size * _text_scale_pct / 100, 1)


# --- the text of drawn figures -----------------------------------------------------------------
# Every painted figure (the SMs, the wave bar, the memory pictures, the graphs and plots) takes its
# fonts from here, so the one text-size control reaches them all, up and back down, and none of
# them draws text a class cannot read from the back row.

#: no text a figure paints is smaller than this share of the label text around it: a label that
#: cannot be drawn this large is left out (and shown on hover or when zoomed in), never drawn tiny
FIGURE_TEXT_MIN_SHARE = 0.85


def label_px() -> float:
    """The pixel size of the window's label text now (the base font at the current text size)."""
    screen = QGuiApplication.primaryScreen() if QGuiApplication.instance() is not None else None
    dpi = screen.logicalDotsPerInch() if screen is not None else 96.0
    return pt(BASE_FONT_PT) * dpi / 72.0


def readable_px() -> int:
    """The least pixel size any figure may draw text at, at the current text size."""
    return math.ceil(FIGURE_TEXT_MIN_SHARE * label_px() - 1e-9)


def figure_px(share: float = 1.0) -> int:
    """Figure text ``share`` times the label text's size, in pixels (never below ``readable_px``)."""
    return max(readable_px(), round(share * label_px()))


def figure_font(share: float = 1.0, *, bold: bool = False, base: QFont | None = None) -> QFont:
    """A figure's font: the application's family at ``figure_px(share)`` pixels."""
    font = QFont(base if base is not None else QApplication.font())
    font.setPixelSize(figure_px(share))
    font.setBold(bold)
    return font


def figure_pt(share: float = 1.0) -> float:
    """``figure_px(share)`` in points, for what takes its size in points (pyqtgraph's labels)."""
    return round(figure_px(share) * pt(BASE_FONT_PT) / label_px(), 2)


def line_px(width: float) -> float:
    """A figure's line or border ``width`` (pixels at 100% text) at the current text size: thin
    lines grow with the text, so a 250% picture is not drawn in hairlines."""
    return width * _text_scale_pct / 100


def _palette(t: Theme) -> QPalette:
    p = QPalette()
    roles = {
        QPalette.ColorRole.Window: t.window,
        QPalette.ColorRole.WindowText: t.text,
        QPalette.ColorRole.Base: t.panel,
        QPalette.ColorRole.AlternateBase: t.window,
        QPalette.ColorRole.Text: t.text,
        QPalette.ColorRole.Button: t.panel,
        QPalette.ColorRole.ButtonText: t.text,
        QPalette.ColorRole.Highlight: t.accent,
        QPalette.ColorRole.HighlightedText: t.accent_text,
        QPalette.ColorRole.ToolTipBase: t.panel,
        QPalette.ColorRole.ToolTipText: t.text,
        QPalette.ColorRole.PlaceholderText: t.muted,
        QPalette.ColorRole.Link: t.accent,
    }
    for role, colour in roles.items():
        p.setColor(role, QColor(colour))
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor(t.muted))
    p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor(t.muted))
    return p


def tab_padding_px(percent: int) -> int:
    """The page tabs' side padding: at large text the words themselves set the tabs apart, and
    the four tabs must still fit a 1024 px projector at 250% (see ``PageTabs``)."""
    return 22 if percent < 200 else 14


def stylesheet(t: Theme) -> str:
    return f"""
    QToolTip {{ color: {t.text}; background: {t.panel}; border: 1px solid {t.border}; padding: 4px; }}
    QTabWidget#areas > QTabBar::tab {{
        font-size: {pt(BASE_FONT_PT + 2)}pt; padding: 8px {tab_padding_px(_text_scale_pct)}px; margin-right: 2px;
        color: {t.muted}; background: {t.window}; border: 1px solid {t.border}; border-bottom: none;
        border-top-left-radius: 6px; border-top-right-radius: 6px;
    }}
    QTabWidget#areas > QTabBar::tab:selected {{
        color: {t.accent_text}; background: {t.accent}; border-color: {t.accent}; font-weight: 600;
    }}
    QTabWidget#areas > QTabBar {{ qproperty-drawBase: 0; }}
    QTabWidget#areas::pane {{ border-top: 2px solid {t.accent}; }}
    QListWidget#deviceList {{ background: {t.panel}; border: 1px solid {t.border}; outline: 0; }}
    QListWidget#deviceList::item {{ padding: 6px 6px; }}
    QListWidget#deviceList::item:selected {{ background: {t.accent}; color: {t.accent_text}; }}
    QFrame#banner {{
        background: {t.banner_bg}; border: 2px solid {t.banner_border}; border-radius: 6px;
    }}
    QFrame#banner QLabel {{ color: {t.banner_text}; }}
    QFrame#banner QLabel#bannerTitle {{ font-weight: 600; font-size: {pt(BASE_FONT_PT + 1)}pt; }}
    QLabel[role="title"] {{ font-size: {pt(BASE_FONT_PT + 7)}pt; font-weight: 600; }}
    QLabel[role="pageTitle"] {{ font-size: {pt(BASE_FONT_PT + 5)}pt; font-weight: 600; }}
    QLabel[role="muted"] {{ color: {t.muted}; }}
    QLabel[role="present"] {{
        color: {t.present}; font-weight: 600;
    }}
    QLabel[role="catalog"] {{
        color: {t.catalog}; background: {t.catalog_bg}; border: 1px solid {t.catalog};
        border-radius: 4px; padding: 2px 8px; font-weight: 600;
    }}
    QLabel[role="na"] {{ color: {t.muted}; font-style: italic; }}
    QLabel[role="caption"] {{ color: {t.muted}; }}
    QLabel[role="error"] {{ color: {t.error}; font-weight: 600; }}
    QLabel[role="warning"] {{
        color: {t.banner_text}; background: {t.banner_bg}; border: 1px solid {t.banner_border};
        border-radius: 4px; padding: 4px;
    }}
    QLabel[textSize="large"] {{ font-size: {pt(BASE_FONT_PT + 1)}pt; }}
    QLabel[textSize="small"] {{ font-size: {pt(BASE_FONT_PT - 1)}pt; }}
    QLabel[textSize="tiny"] {{ font-size: {pt(BASE_FONT_PT - 2)}pt; }}
    QGroupBox {{
        background: {t.panel}; border: 1px solid {t.border}; border-radius: 6px;
        margin-top: 14px; padding: 10px 8px 6px 8px; font-weight: 600;
    }}
    QGroupBox::title {{
        subcontrol-origin: margin; left: 10px; padding: 0 4px; color: {t.accent};
        font-size: {pt(BASE_FONT_PT + 1)}pt;
    }}
    QGroupBox QLabel {{ font-weight: normal; }}
    QGroupBox#plainGroup {{ border: none; margin-top: 0; padding: 0; background: transparent; }}
    QScrollArea#details, QWidget#detailsBody {{ background: {t.window}; border: none; }}
    QStatusBar {{ border-top: 1px solid {t.border}; }}
    """


def apply_theme(
    app: QApplication, name_or_theme: str | Theme = "light", text_scale: int | None = None
) -> Theme:
    """Switch the whole application to a theme (and, given ``text_scale``, a text size in
    percent); returns the theme now in use. Widgets that follow the application font and
    stylesheet reflow by themselves; what is sized in pixels asks ``px``."""
    global _current, _text_scale_pct
    theme = THEMES[name_or_theme] if isinstance(name_or_theme, str) else name_or_theme
    _current = theme
    if text_scale is not None:
        _text_scale_pct = clamp_text_scale(text_scale)
    app.setStyle("Fusion")  # the one style that honours palettes identically on every OS
    app.setPalette(_palette(theme))
    font = QFont(app.font())
    font.setPointSizeF(pt(BASE_FONT_PT))
    app.setFont(font)
    app.setStyleSheet(stylesheet(theme))
    return theme


def set_text_scale(app: QApplication, percent: int) -> int:
    """The whole window's text size (clamped to 100..250 %); returns the size now in use."""
    apply_theme(app, _current, percent)
    return _text_scale_pct
