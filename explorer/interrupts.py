"""SIGTERM and SIGHUP end a command the way Ctrl-C does: as an exception on the main thread.

Python's default for SIGTERM and SIGHUP is to die at once, running no ``finally`` block: a command
killed that way leaves its worker running and writes nothing of what finished. Here they raise
``Interrupted`` (a ``KeyboardInterrupt``, so every place that already handles Ctrl-C handles them
too); the command stops its children, writes what finished, says so in one line and exits with
the shell's status for the signal (128 + its number: 130 for Ctrl-C, 143 for SIGTERM, 129 for
SIGHUP). The window installs its own handlers (``explorer.ui.signals``), which close it instead.

Children are not this module's job: an agent dies with its parent whatever happens
(``explorer.agent``); this module is what lets the parent report and exit cleanly.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

#: The signals that end a command: Ctrl-C (SIGINT), a polite kill (SIGTERM), a closed terminal or
#: ssh session (SIGHUP). SIGHUP does not exist on Windows.
TERMINATING: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived; raised on the main thread like Ctrl-C's KeyboardInterrupt."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def signum_of(exc: KeyboardInterrupt) -> int:
    """The signal behind an interruption: SIGINT for a plain KeyboardInterrupt (Ctrl-C)."""
    return exc.signum if isinstance(exc, Interrupted) else int(signal.SIGINT)


def exit_status(exc: KeyboardInterrupt) -> int:
    """The shell's convention: 128 + the signal's number (130 for Ctrl-C)."""
    return 128 + signum_of(exc)


def describe(exc: KeyboardInterrupt) -> str:
    """'interrupted' for Ctrl-C, 'interrupted by SIGTERM' for another signal."""
    signum = signum_of(exc)
    if signum == signal.SIGINT:
        return "interrupted"
    try:
        return f"interrupted by {signal.Signals(signum).name}"
    except ValueError:
        return f"interrupted by signal {signum}"


def _on_main_thread() -> bool:
    """Python sets signal handlers only on the main thread. A process that never imported
    ``threading`` has started no thread through it, so this is the main thread; not importing
    ``threading`` just to ask keeps a command such as ``launch`` quick to answer."""
    threading = sys.modules.get("threading")
    return threading is None or threading.current_thread() is threading.main_thread()


def _raise(signum: int, frame: FrameType | None) -> None:
    # Once is enough: the command is stopping; a second signal must not break its clean-up.
    ignore_further()
    raise Interrupted(signum)


Handlers = dict[int, object]


def raise_on_termination() -> Handlers:
    """Make SIGTERM and SIGHUP raise ``Interrupted`` on the main thread (SIGINT already raises
    KeyboardInterrupt); returns every terminating signal's handler as it was, SIGINT's too (an
    interrupted command ignores it on its way out), for ``restore_handlers``.

    A signal this process ignores stays ignored: ``nohup`` ignores SIGHUP so that a closed ssh
    session does not end a long benchmark, and a shell starts a background job ignoring SIGINT.
    Does nothing off the main thread, where Python cannot set handlers."""
    if not _on_main_thread():
        return {}
    previous: Handlers = {int(s): signal.getsignal(s) for s in TERMINATING}
    for s in heard():
        if s != signal.SIGINT:
            signal.signal(s, _raise)
    return previous


def heard() -> tuple[signal.Signals, ...]:
    """The terminating signals this process does not ignore: the ones a command (and the window)
    may handle. One it was started ignoring stays ignored, whoever installs handlers."""
    return tuple(s for s in TERMINATING if signal.getsignal(s) != signal.SIG_IGN)


def restore_handlers(previous: Handlers) -> None:
    """Put back what ``raise_on_termination`` (or ``ignore_further``) replaced."""
    if not _on_main_thread():
        return
    for signum, handler in previous.items():
        if handler is not None:
            signal.signal(signum, handler)  # type: ignore[arg-type]


def ignore_further() -> Handlers:
    """Ignore the terminating signals from now on (the process is already on its way out);
    returns the handlers replaced."""
    if not _on_main_thread():
        return {}
    return {int(s): signal.signal(s, signal.SIG_IGN) for s in TERMINATING}
