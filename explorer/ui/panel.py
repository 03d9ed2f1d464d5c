"""The one interface the main window uses to talk to a page (Devices, Launch visualizer, ...).

Every page derives from ``Panel``; the window calls these methods and nothing else, so a page
never has to guess what the window will look for (and the window never probes a page with
``getattr``). The defaults do nothing, so a page implements only what it has: a page with no
``export_formats`` gets File > Export greyed out, one with several gets a save dialog listing
each format.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from explorer.lessons.model import PanelState
from explorer.ui.theme import Theme


@dataclass(frozen=True)
class ExportFormat:
    """One kind of file a page can write: what File > Export offers and the page then writes."""

    key: str  # "csv", "json", "png": stable, used by the page to pick its writer
    label: str  # words in the save dialog: "CSV table"
    suffix: str  # ".csv": added to a file name typed without it

    @property
    def name_filter(self) -> str:
        """The Qt file-dialog filter, e.g. ``CSV table (*.csv)``."""
        return f"{self.label} (*{self.suffix})"

    def with_suffix(self, path: Path) -> Path:
        """``path`` itself when it already ends in this format's suffix, else with it added."""
        return path if path.suffix.lower() == self.suffix else path.with_name(path.name + self.suffix)


def export_format(path: Path, formats: tuple[ExportFormat, ...], chosen: ExportFormat) -> ExportFormat:
    """The format File > Export writes ``path`` as: the one its typed name ends in where the page
    offers it ("vecadd.json" is JSON whichever filter the dialog showed: it became
    "vecadd.json.csv"), else the one chosen in the dialog."""
    typed = path.suffix.lower()
    return next((f for f in formats if f.suffix == typed), chosen)


class Panel(QWidget):
    """A page of the main window. Subclasses override what applies to them."""

    #: what ``export_formats`` returns has changed (e.g. the first result arrived): the window
    #: re-reads it to enable or grey out File > Export
    exports_changed = Signal()

    def apply_theme(self, theme: Theme) -> None:
        """The user switched between light and dark: redraw whatever does not follow the palette."""

    #: whether the window is in presentation mode (full screen on a projector): a page then gives
    #: its picture the room before its side columns
    presenting = False

    def set_presenting(self, on: bool) -> None:
        """The window entered (``on``) or left presentation mode; the default only records it."""
        self.presenting = on

    def apply_text_scale(self, percent: int) -> None:
        """The user changed the text size (View > Text size, 100 to 250 %). The application font
        and stylesheet have already changed and widgets that follow them reflow by themselves:
        resize what is sized in pixels (``theme.px``) and repaint what paints its own text."""

    def export_formats(self) -> tuple[ExportFormat, ...]:
        """The files File > Export can write for this page now; empty greys the menu item out."""
        return ()

    def export(self, path: Path, fmt: ExportFormat) -> Path:
        """Write the page's content as ``fmt`` to ``path``; returns the path written.

        Raises ``UserError`` (or ``OSError``) with words for the user when it cannot.
        """
        raise NotImplementedError(f"{type(self).__name__} has no {fmt.key} export")

    def remembered(self) -> dict[str, str | int]:
        """What this page keeps between runs (saved in the settings file); empty: nothing."""
        return {}

    def restore(self, saved: dict[str, str | int]) -> None:
        """Take back what ``remembered`` returned in an earlier run. It comes from a file a user
        may have edited or an older version wrote: use what is sensible, skip the rest, never raise."""

    def lesson_state(self) -> PanelState | None:
        """What a lesson step records of this page now ("Save current state as a step"), as the
        core's record for it (``explorer.lessons.model``); ``None``: this page has nothing a step
        can hold yet."""
        return None

    def show_lesson_state(self, state: PanelState) -> str:
        """Put the page in a lesson step's state. Returns a note the narration pane shows with the
        step ("" when none), e.g. that an absent GPU's catalog sheet stands in for it. Raises
        ``UserError`` (one line naming the field) when the step cannot apply here; the page is
        then left as it was."""
        return ""

    def lesson_closed(self) -> None:
        """The lesson that set this page's state was closed: take away what only a lesson shows
        (the Benchmarks page's recorded results); the page's own state stays."""

    def toggle_predict(self) -> str:
        """View > Predict on this page: the page's Predict mode on or off (its answers hidden until
        the student commits a prediction); returns the line the status bar shows."""
        return "This page has no Predict mode: the Memory page and the visualizer's occupancy have one"

    def prepare_screenshot(self) -> None:
        """Put the page in the state ``device-explorer screenshot`` should show."""

    def finish_pending(self) -> None:
        """Wait for the work the page started for what it shows (a kernel's trace) before a
        picture of it is taken: a screenshot or a handout page of a half-made page shows nothing.
        The page says how long at most."""

    #: other views of the page ``device-explorer screenshot --view NAME`` can show (after
    #: ``prepare_screenshot``), e.g. the Benchmarks page's roofline tab
    SCREENSHOT_VIEWS: tuple[str, ...] = ()

    def show_screenshot_view(self, view: str) -> None:
        """Show ``view`` (one of ``SCREENSHOT_VIEWS``) for the screenshot."""
        from explorer.errors import UserError

        known = ", ".join(self.SCREENSHOT_VIEWS) or "none"
        raise UserError(f"this page has no view {view!r}; its views: {known}")

    def shutdown(self) -> None:
        """The window is closing: stop timers, runs and child processes. Must not raise."""


class UnavailablePanel(Panel):
    """Stands in for a page that is missing from this build or failed to open, saying why."""

    def __init__(self, heading: str, reason: str, parent: QWidget | None = None) -> None:
        from PySide6.QtWidgets import QLabel, QVBoxLayout

        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(32, 32, 32, 32)
        title = QLabel(heading)
        title.setProperty("role", "pageTitle")
        title.setWordWrap(True)
        detail = QLabel(reason)
        detail.setProperty("role", "muted")
        detail.setWordWrap(True)
        layout.addWidget(title)
        layout.addWidget(detail)
        layout.addStretch(1)
        self.setProperty("unavailable", True)
