"""What the pointer is on: a thread's coordinates and the index sum it does, from ``ThreadInfo``.

A view of the ``LaunchSession``: which thread, slot or hint to show is the session's
``inspection()``, asked again whenever the launch, the moment or the selection changes.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QLabel, QVBoxLayout, QWidget

from explorer.launch.plan_records import ThreadInfo
from explorer.launch.session import EmptySlot, LaunchSession, NoThread, ThreadShown
from explorer.launch.texts import html, thread_rows, thread_state
from explorer.ui.theme import current_theme

HINT = "Hover over or click a block, a warp or a lane to see which thread it is and how it finds its element."


class Inspector(QGroupBox):
    def __init__(self, session: LaunchSession, parent: QWidget | None = None) -> None:
        super().__init__("Inspector", parent)
        self.session = session
        lay = QVBoxLayout(self)
        self.label = QLabel(HINT)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        lay.addWidget(self.label)
        self.info: ThreadInfo | None = None
        for event in (session.events.launch, session.events.moment, session.events.selection):
            event.connect(self.refresh)

    def refresh(self) -> None:
        """Show what the session says is under the pointer or pinned, for the moment shown."""
        shown = self.session.inspection()
        if isinstance(shown, ThreadShown):
            self.show_thread(shown.info, shown.pinned, shown.now)
        elif isinstance(shown, EmptySlot):
            self.show_slot(shown.sm, shown.slot, shown.wave_label)
        elif isinstance(shown, NoThread):
            self.show_no_thread(shown.block_text, shown.warp, shown.lane)
        else:
            self.show_hint()

    def _set(self, text: str) -> None:
        """Set the text only when it changed: the panel re-asks on every animation frame."""
        if self.label.text() != text:
            self.label.setText(text)

    def show_hint(self) -> None:
        self.info = None
        self._set(HINT)

    def show_slot(self, sm: int, slot: int | None, wave_label: str) -> None:
        self.info = None
        where = f"SM {sm}" + (f", block slot {slot}" if slot is not None else "")
        self._set(f"<b>{escape(where)}</b>: empty now ({escape(wave_label)}).")

    def show_no_thread(self, block_text: str, warp: int, lane: int) -> None:
        self.info = None
        self._set(
            f"<b>{escape(block_text)}</b>, warp {warp}, lane {lane}: <b>no thread</b>. The block's size is not a "
            "multiple of 32, so its last warp is partial: this lane does nothing but still occupies a warp slot."
        )

    def show_thread(self, info: ThreadInfo, pinned: bool, now: str = "") -> None:
        """The core's description of the thread (``explorer.launch.texts``, as ``launch --thread``
        prints it): per-axis position, the index over the problem, the linear number, warp, lane."""
        self.info = info
        t = current_theme()
        rows = thread_rows(info) + ([("now", now)] if now else [])
        table = "".join(
            f"<tr><td style='padding-right:8px'><b>{escape(k)}</b></td><td>{escape(v)}</td></tr>"
            for k, v in rows
            if not _is_formula(k, v)
        )
        formulas = "".join(
            f"<p><b>{escape(k) or '&nbsp;'}</b><br><code>{escape(v)}</code></p>"
            if k
            else f"<p style='margin-top:0'><code>{escape(v)}</code></p>"
            for k, v in rows
            if _is_formula(k, v)
        )
        title = "Selected thread" if pinned else "Thread under the pointer"
        self._set(
            # the verdict before the formulas: a 3D formula is long and may run past the bottom
            f"<b>{title}</b><table>{table}</table><p>{html(thread_state(info), t.error)}</p>{formulas}"
        )


def _is_formula(label: str, value: str) -> bool:
    """Rows holding arithmetic get a line of their own under the table (they are long)."""
    return " = " in value or not label
