"""The visualizer's animation buttons, the frame clock that moves a playing session, and the line
that says which launch the form edits in compare mode.

Views of the ``LaunchSession``: the buttons call its clock methods and show its state (Play or
Pause, the speed, whether anything can play); the frame clock turns wall time into
``session.advance`` calls while the session plays, and nothing else.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QElapsedTimer, QObject, Qt, QTimer
from PySide6.QtWidgets import QGridLayout, QGroupBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from explorer.events import Event
from explorer.launch.session import LaunchSession
from explorer.ui.theme import px

FRAME_INTERVAL_MS = 16


class PlaybackBox(QGroupBox):
    """Play, restart, compare, step by wave or block, and the speed."""

    def __init__(self, session: LaunchSession, parent: QWidget | None = None) -> None:
        super().__init__("Animation", parent)
        self.session = session
        self.play_button = QPushButton("Play")
        self.play_button.setToolTip("Play / pause (Space)")
        self.restart_button = QPushButton("Restart")
        self.restart_button.setToolTip("Back to the first wave (Home)")
        self.back_wave_button = QPushButton("< Wave")
        self.back_wave_button.setToolTip("Previous wave (Left)")
        self.wave_button = QPushButton("Wave >")
        self.wave_button.setToolTip("Next wave (Right)")
        self.back_block_button = QPushButton("< Block")
        self.back_block_button.setToolTip("One block back (Shift+Left)")
        self.block_button = QPushButton("Block >")
        self.block_button.setToolTip("Dispatch one more block (Shift+Right)")
        self.slower_button = QPushButton("-")
        self.slower_button.setToolTip("Slower (-)")
        self.faster_button = QPushButton("+")
        self.faster_button.setToolTip("Faster (+)")
        self.speed_label = QLabel("")
        self.compare_button = QPushButton("Compare")
        self.compare_button.setCheckable(True)
        self.compare_button.setToolTip(
            "Split the SMs into launch A and launch B (B starts as a copy of A), on one clock; "
            "the launch controls edit the side whose A or B button is down"
        )
        pl = QVBoxLayout(self)
        row1 = QHBoxLayout()
        for b in (self.play_button, self.restart_button, self.compare_button):
            row1.addWidget(b)
        # the steps two by two (back on the left, on on the right): four in a row made the column
        # wider than it is at 150% and more, and it scrolled sideways
        row2 = QGridLayout()
        row2.addWidget(self.back_wave_button, 0, 0)
        row2.addWidget(self.wave_button, 0, 1)
        row2.addWidget(self.back_block_button, 1, 0)
        row2.addWidget(self.block_button, 1, 1)
        row3 = QHBoxLayout()
        row3.addWidget(QLabel("Speed"))
        row3.addWidget(self.slower_button)
        row3.addWidget(self.speed_label, 1, Qt.AlignmentFlag.AlignCenter)
        row3.addWidget(self.faster_button)
        for r in (row1, row2, row3):
            pl.addLayout(r)

        self.play_button.clicked.connect(session.toggle_play)
        self.restart_button.clicked.connect(session.restart)
        self.wave_button.clicked.connect(lambda: session.step_wave(1))
        self.back_wave_button.clicked.connect(lambda: session.step_wave(-1))
        self.block_button.clicked.connect(lambda: session.step_block(1))
        self.back_block_button.clicked.connect(lambda: session.step_block(-1))
        self.faster_button.clicked.connect(lambda: session.change_speed(1))
        self.slower_button.clicked.connect(lambda: session.change_speed(-1))
        self.compare_button.toggled.connect(session.set_compare)
        session.events.launch.connect(self._show_launch)
        session.events.moment.connect(self._show_moment)
        self._show_launch()
        self._show_moment()

    def apply_text_scale(self) -> None:
        for b in (self.slower_button, self.faster_button):
            b.setFixedWidth(px(44))
        # a button needs its words and a margin, not the style's 80 px floor: four of those made
        # the column wider than its 350 px, and it scrolled sideways
        for b in (
            self.play_button,
            self.restart_button,
            self.compare_button,
            self.back_wave_button,
            self.back_block_button,
            self.block_button,
            self.wave_button,
        ):
            words = max(b.fontMetrics().horizontalAdvance(t) for t in (b.text(), "Pause"))
            b.setMinimumWidth(words + px(18))

    def _show_launch(self) -> None:
        """Nothing plays while no side can run (each then says why)."""
        playable = self.session.clock is not None
        for button in (
            self.play_button,
            self.restart_button,
            self.back_wave_button,
            self.wave_button,
            self.back_block_button,
            self.block_button,
        ):
            button.setEnabled(playable)
        self.compare_button.setChecked(self.session.compare)

    def _show_moment(self) -> None:
        self.play_button.setText("Pause" if self.session.playing else "Play")
        self.speed_label.setText(f"{self.session.speed_waves_per_s:g} waves/s")


class EditingNote(QLabel):
    """In compare mode, which launch the form below edits and how to edit the other."""

    def __init__(self, session: LaunchSession, parent: QWidget | None = None) -> None:
        super().__init__("", parent)
        self.session = session
        self.setWordWrap(True)
        self.hide()
        session.events.launch.connect(self._show)

    def _show(self) -> None:
        s = self.session
        self.setVisible(s.compare)
        if s.compare:
            other = "AB"[1 - s.edited]
            self.setText(
                f"<b>The fields below edit launch {'AB'[s.edited]}.</b> Press {other} above its SMs to edit {other}."
            )


class _HasMoment(Protocol):
    moment: Event


class Playable(Protocol):
    """What a frame clock drives: the ``LaunchSession``, or the latency chart's ``CycleClock``."""

    @property
    def events(self) -> _HasMoment: ...

    @property
    def playing(self) -> bool: ...

    def advance(self, dt_s: float) -> bool: ...


class FrameClock(QObject):
    """Moves a playing session's clock (or another ``Playable``) by the wall time between frames
    (about 60 a second)."""

    def __init__(self, session: Playable, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.timer = QTimer(self)
        self.timer.setInterval(FRAME_INTERVAL_MS)
        self.timer.timeout.connect(self._tick)
        self._elapsed = QElapsedTimer()
        session.events.moment.connect(self._follow)

    @property
    def running(self) -> bool:
        """Whether frames are being driven (the session plays and the page is alive)."""
        return self.timer.isActive()

    def _follow(self) -> None:
        if self.session.playing and not self.timer.isActive():
            self._elapsed.start()
            self.timer.start()
        elif not self.session.playing and self.timer.isActive():
            self.timer.stop()

    def _tick(self) -> None:
        self.session.advance(self._elapsed.restart() / 1000.0)

    def stop(self) -> None:
        """The page is closing: no more frames, whatever the session says."""
        self.session.events.moment.disconnect(self._follow)
        self.timer.stop()
