"""A command's signal handling leaves the process as it found it, and respects what it ignores."""

from __future__ import annotations

import signal

import pytest

from explorer.interrupts import TERMINATING, ignore_further, raise_on_termination, restore_handlers

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")


@pytest.fixture
def handlers_kept():
    """Whatever a test does to the handlers, this test process gets its own back."""
    before = {s: signal.getsignal(s) for s in TERMINATING}
    yield before
    for s, handler in before.items():
        signal.signal(s, handler)


def test_an_interrupted_command_puts_every_handler_back_sigint_included(handlers_kept):
    """``main()`` runs in-process too (the tests, the agent's requests): a command that was
    interrupted ignores the signals on its way out, and after it nothing may stay ignored (a
    later child would inherit an ignored Ctrl-C)."""
    previous = raise_on_termination()
    assert signal.getsignal(signal.SIGTERM) not in (handlers_kept[signal.SIGTERM], signal.SIG_IGN)
    ignore_further()
    assert all(signal.getsignal(s) == signal.SIG_IGN for s in TERMINATING)
    restore_handlers(previous)
    assert {s: signal.getsignal(s) for s in TERMINATING} == handlers_kept


def test_a_signal_ignored_before_the_command_stays_ignored(handlers_kept):
    """nohup ignores SIGHUP, a shell's background job SIGINT: the command must not undo that."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    previous = raise_on_termination()
    try:
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN)
    finally:
        restore_handlers(previous)
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_the_window_keeps_an_ignored_hangup_ignored_and_gives_every_handler_back(handlers_kept, qapp):
    """``nohup device-explorer &``: the window closes on SIGTERM and Ctrl-C, not on the hangup
    nohup asked it to ignore; closing puts back what it found."""
    from explorer.ui.signals import SignalCloser

    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    closer = SignalCloser(qapp)
    try:
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) not in (handlers_kept[signal.SIGTERM], signal.SIG_IGN)
    finally:
        closer.uninstall()
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) == handlers_kept[signal.SIGTERM]
