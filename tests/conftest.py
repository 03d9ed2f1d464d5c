"""Test-wide settings: Qt renders offscreen, numba's CUDA simulator is never on by accident."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Keep any settings/results a test writes out of the user's real folders.
# Each pytest-xdist worker gets its own folder, so parallel tests never share saved files.
os.environ.setdefault(
    "DEVICE_EXPLORER_HOME",
    os.path.join(
        os.environ.get("TMPDIR", "/tmp"),
        "device-explorer-tests" + os.environ.get("PYTEST_XDIST_WORKER", ""),
    ),
)


def _deaf(signum: int, frame: object) -> None:
    """Hears a signal and does nothing: this process stays as deaf as it was started."""


# The commands the tests start stand for a terminal's foreground job, which hears Ctrl-C and a
# hangup. A suite started under nohup, or as a non-interactive shell's background job, was
# started ignoring SIGHUP or SIGINT, and every command a test starts would inherit that (a
# Ctrl-C test's command would never hear its Ctrl-C, and rightly keep ignoring it). A handler of
# our own keeps this process deaf to them, and the children start with the default, as exec
# resets a handled signal.
for _signal in (getattr(signal, "SIGINT", None), getattr(signal, "SIGHUP", None)):
    if _signal is not None and signal.getsignal(_signal) == signal.SIG_IGN:
        signal.signal(_signal, _deaf)

import pytest  # noqa: E402


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: two workers more than the usable cores. The longest tests mostly wait on real
    daemons (Slurm counts time limits in whole minutes; sshd, agents and heartbeats answer in
    seconds), so with one worker per core about a third of the cores' time went idle: on 2 cores
    the full loop took 14 min 43 s with 2 workers and 12 min 2 s with 4, all green.
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still sets the number: pytest-xdist's own count answers then,
    and it counts the cores otherwise (``-n logical`` included)."""
    from xdist.plugin import pytest_xdist_auto_num_workers as xdist_count

    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return xdist_count(config) + 2


@pytest.fixture(autouse=True)
def _no_store_notice_left_over():
    """The stored ceilings' notice (a damaged file moved aside) waits in the process until a
    window takes it: one test's planted file must not put a banner on a later test's window."""
    from explorer.roofs import store

    store.take_notice()
    yield
    store.take_notice()


#: The least time any of pytest-qt's waits here gives its event before calling it "never". A
#: wait ends as soon as its event comes, so a quick machine never spends this; a shared CI machine
#: under load may take seconds to lay out a window or to reap a process, and a deadline it
#: overran would fail a landing by chance. A test's own ``timeout=`` counts when it is longer.
QT_WAIT_FLOOR_MS = 30_000


@pytest.fixture
def qtbot(qtbot):
    """pytest-qt's ``qtbot``, whose waits give up no sooner than ``QT_WAIT_FLOOR_MS``."""
    qtbot.waitUntil = _patient(qtbot.waitUntil)
    qtbot.waitSignal = _patient(qtbot.waitSignal)
    qtbot.waitSignals = _patient(qtbot.waitSignals)
    qtbot.waitExposed = _patient(qtbot.waitExposed)
    qtbot.waitActive = _patient(qtbot.waitActive)
    qtbot.waitCallback = _patient(qtbot.waitCallback)
    return qtbot


def _patient(wait):
    import functools

    @functools.wraps(wait)
    def patient(*args, timeout=QT_WAIT_FLOOR_MS, **kwargs):
        if timeout is not None and timeout > 0:  # None or 0: waits for ever already
            timeout = max(timeout, QT_WAIT_FLOOR_MS)
        return wait(*args, timeout=timeout, **kwargs)

    return patient


@pytest.fixture
def cpu_record(monkeypatch):
    """A 2-core AVX-512 CPU record (its reported clock gives the old estimate), which the bench's
    peaks take for this machine's CPU: the roofline tests seed its measured ceilings."""
    from explorer.bench import peaks
    from explorer.devices.model import CpuDevice

    rec = CpuDevice(
        name="Test CPU",
        key="cpu",
        fp32_peak_gflops=294.4,
        fp32_peak_basis="estimate from maximum clock",
        memory_total_bytes=16 * 2**30,
        physical_cores=2,
        logical_cores=4,
        isa_flags=["avx", "avx2", "fma", "avx512f"],
    )
    monkeypatch.setattr(peaks, "device_record", {"cpu": rec}.get)
    return rec


@pytest.fixture
def gpu_here():
    """Skips a ``gpu``-marked test, saying why, where this machine has no NVIDIA GPU to run it on."""
    from explorer.commands.bench import gpus_here

    count, why = gpus_here()
    if not count:
        pytest.skip(f"needs an NVIDIA GPU: {why}")


#: the fixtures that give a test Qt widgets (every window fixture asks for one of them)
_QT_FIXTURES = frozenset({"qtbot", "qapp"})


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item):
    """Destroy the test's windows here, at the top level, not in a later test's event loop.

    pytest-qt closes the widgets a test registered and calls ``deleteLater`` on them, and a
    window's Python wrapper is kept alive by reference cycles (slots bound to its own methods).
    Left alone, the C++ objects were destroyed wherever the next event loop ran or the garbage
    collector happened to start: inside another test's ``waitUntil``, in the middle of its
    paint or timer events. That rarely, and only on a loaded machine, ended the whole run with a
    segmentation fault (CI, test_lesson_player). Collecting and flushing the deferred deletions
    right after each test makes the destruction happen at one known, quiet moment.

    Only after a test that may have had widgets (a Qt fixture, or any test of the window's in
    tests/ui): a full collection walks every object the
    process holds (torch, numba, Qt: a quarter of a million, 0.13 s and growing), and doing it
    twice after each of 2,000 tests was a third of the suite's time. What survives it is frozen
    (``gc.freeze``): the next test's collection walks only what was made since, so it stays
    milliseconds. A cycle among frozen objects is never collected: nothing a test made is
    frozen until it has outlived that test's own collection.
    """
    result = yield
    qt_widgets = sys.modules.get("PySide6.QtWidgets")
    had_widgets = _QT_FIXTURES & set(getattr(item, "fixturenames", ())) or _WINDOW_TESTS in (
        Path(str(item.fspath)).resolve().parents
    )
    if had_widgets and qt_widgets is not None and qt_widgets.QApplication.instance() is not None:
        from PySide6.QtCore import QCoreApplication, QEvent

        gc.collect()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        QCoreApplication.processEvents()
        gc.collect()
        gc.freeze()
    return result


# Fixtures that start real daemons, each shared by the tests of one module.
_SERVER_FIXTURES = frozenset({"sshd", "slurm"})
# Fixtures that bring up something real outside this process (a daemon, local users, an X
# server): a test using one belongs to the full loop only.
_SLOW_FIXTURES = _SERVER_FIXTURES | {"two_users", "display"}


#: the window's tests (each builds real widgets and lays them out, 0.2 to 30 s): the full loop's
_WINDOW_TESTS = Path(__file__).resolve().parent / "ui"


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (``--dist loadgroup``) keep each module that uses a real sshd or Slurm on
    one worker: its module-wide server then starts once, and two single-node Slurm clusters never
    run side by side on one machine. A test using a real daemon, users or X server is ``slow``, and
    so is every test of the window (tests/ui): the fast loop is the unit and core tests.

    Known gap: with pytest 9.1+ and pytest-xdist 3.8 the groups are not kept (xdist writes the
    group into ``item._nodeid``, which pytest no longer reads), so a module's tests may run on
    both workers, each with its own server; the servers use their own ports and files."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if _WINDOW_TESTS in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.slow)
        if _SERVER_FIXTURES & fixtures:
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
        if _SLOW_FIXTURES & fixtures:
            item.add_marker(pytest.mark.slow)


# --- the fast loop starts no process -------------------------------------------------------------
#
# ``pytest -m "not slow"`` is the loop a developer runs after each change: unit and core tests in
# this process only. A test that starts a process (a worker, an agent, ssh, the CLI, numba's
# simulator) must be marked ``slow``; one that is not fails here, naming what it started, so the
# fast loop stays fast as tests are added. The process still starts (nothing the test sees changes).
_STARTED: list[str] = []
_popen_init = subprocess.Popen.__init__


def _noting_popen_init(self, args, *more, **kwargs):  # type: ignore[no-untyped-def]
    _STARTED.append(str(args if isinstance(args, (str, bytes)) else list(args))[:200])
    _popen_init(self, args, *more, **kwargs)


subprocess.Popen.__init__ = _noting_popen_init  # type: ignore[method-assign]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _STARTED.clear()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if call.when == "call" and report.passed and _STARTED and item.get_closest_marker("slow") is None:
        report.outcome = "failed"
        report.longrepr = (
            f"a test outside the slow set started {len(_STARTED)} process(es), first {_STARTED[0]}: "
            "mark it @pytest.mark.slow (the fast loop, pytest -m 'not slow', starts none)"
        )
    return report
