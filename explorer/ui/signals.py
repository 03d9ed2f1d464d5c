"""Ctrl-C, SIGTERM and SIGHUP close the window as the close button does: panels stop their work and
children, settings are saved, and the process exits with 128 + the signal's number.

Python runs a signal handler only when the interpreter gets control, and Qt's event loop sits in
C++ for as long as nothing happens: a handler alone would wait for the next mouse move. So the
signal also wakes the loop: ``signal.set_wakeup_fd`` makes the C-level handler write the signal's
number to a socket, and a ``QSocketNotifier`` on the other end runs ``_woken`` on the GUI thread,
which closes the windows. The Python-level handler itself does nothing (the default SIGINT
handler would raise KeyboardInterrupt inside whatever slot happened to run: a traceback).
"""

from __future__ import annotations

import signal
import socket
from types import FrameType

from PySide6.QtCore import QObject, QSocketNotifier
from PySide6.QtWidgets import QApplication

from explorer.interrupts import TERMINATING, heard


def _note(signum: int, frame: FrameType | None) -> None:
    """The Python-level handler: the wakeup byte already carries the signal to ``_woken``."""


class SignalCloser(QObject):
    """While installed, a terminating signal closes every window and ends ``app.exec()`` with
    128 + its number (``exit_status``). ``uninstall()`` puts the previous handlers back."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self._app = app
        self.received: int | None = None
        self._read, self._write = socket.socketpair()
        for end in (self._read, self._write):
            end.setblocking(False)
        self._previous_fd = signal.set_wakeup_fd(self._write.fileno(), warn_on_full_buffer=False)
        # a signal the window was started ignoring (nohup's SIGHUP) stays ignored, as for a command
        self._previous = {int(s): signal.signal(s, _note) for s in heard()}
        self._notifier = QSocketNotifier(self._read.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._woken)

    @property
    def exit_status(self) -> int | None:
        return None if self.received is None else 128 + self.received

    def _woken(self) -> None:
        try:
            data = self._read.recv(64)
        except (BlockingIOError, InterruptedError):
            return
        signums = [b for b in data if b in {int(s) for s in TERMINATING}]
        if not signums or self.received is not None:
            return
        self.received = signums[0]
        self._app.closeAllWindows()  # each window's closeEvent stops its panels' work and children
        self._app.exit(128 + self.received)

    def uninstall(self) -> None:
        self._notifier.setEnabled(False)
        signal.set_wakeup_fd(self._previous_fd)
        for signum, handler in self._previous.items():
            if handler is not None:
                signal.signal(signum, handler)
        self._read.close()
        self._write.close()


def exec_with_signals(app: QApplication) -> int:
    """``app.exec()`` with terminating signals closing the windows; the exit status."""
    closer = SignalCloser(app)
    try:
        code = int(app.exec())
    finally:
        closer.uninstall()
    return closer.exit_status if closer.exit_status is not None else code
