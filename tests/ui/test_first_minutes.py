"""What a new user meets in the first minutes: the screenshot help names every view, number fields
apply without Enter, the Devices notice on stored measurements names what differs."""

from __future__ import annotations

import contextlib
import io
import re
import time

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractSpinBox, QDoubleSpinBox, QLabel, QMenu, QSpinBox, QVBoxLayout, QWidget

from explorer.bench import peaks
from explorer.cli import build_parser
from explorer.devices.discovery import Discovery, ProbeReport
from explorer.devices.model import CpuDevice
from explorer.devices.roofs import RoofBook, fingerprint
from explorer.panels import PANELS
from explorer.roofs import store
from explorer.roofs.store import MeasuredRoof
from explorer.ui.bench_panel import BenchPanel
from explorer.ui.context import AppContext
from explorer.ui.main_window import MainWindow
from explorer.ui.memory.panel import MemoryPanel
from explorer.ui.visualizer.panel import VisualizerPanel
from explorer.ui.widgets import number_field
from tests.roofs.levels import levels
from tests.ui.machines import lab_discovery


def _screenshot_help() -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        build_parser().parse_args(["screenshot", "--help"])
    return " ".join(out.getvalue().split())


def test_screenshot_help_names_every_view_each_page_has():
    text = _screenshot_help()
    for panel in (VisualizerPanel, BenchPanel, MemoryPanel):
        assert panel.SCREENSHOT_VIEWS, panel
        for view in panel.SCREENSHOT_VIEWS:
            assert view in text, (panel.__name__, view)


@pytest.fixture
def form(qtbot):
    """A number field, a second field, and a drawing that takes no focus (like the SMs)."""
    w = QWidget()
    lay = QVBoxLayout(w)
    box = number_field(QSpinBox())
    box.setRange(0, 10_000)
    other = number_field(QDoubleSpinBox())
    drawing = QLabel("the SMs")
    drawing.setMinimumSize(200, 100)
    drawing.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    for x in (box, other, drawing):
        lay.addWidget(x)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    got: list[int] = []
    box.valueChanged.connect(got.append)
    box.setFocus()
    qtbot.waitUntil(box.hasFocus)
    yield box, other, drawing, got
    w.close()


def _type(qtbot, box: QSpinBox, text: str) -> None:
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), text)


def test_a_typed_number_applies_on_enter_not_on_each_key(qtbot, form):
    box, _other, _drawing, got = form
    _type(qtbot, box, "1024")
    assert got == []  # "1", "10", "102" were never applied
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)
    assert got == [1024]


def test_a_typed_number_applies_when_focus_leaves(qtbot, form):
    box, other, _drawing, got = form
    _type(qtbot, box, "98")
    other.setFocus()
    qtbot.waitUntil(lambda: got == [98])


def test_a_typed_number_applies_on_a_click_on_a_drawing_that_takes_no_focus(qtbot, form):
    box, _other, drawing, got = form
    _type(qtbot, box, "98")
    qtbot.mouseClick(drawing, Qt.MouseButton.LeftButton)
    assert got == [98] and box.hasFocus()
    qtbot.mouseClick(drawing, Qt.MouseButton.LeftButton)  # nothing pending: nothing applied again
    assert got == [98]


def test_the_arrow_keys_apply_at_once_even_after_typing(qtbot, form):
    box, _other, _drawing, got = form
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Up)
    assert got == [1]
    _type(qtbot, box, "7")
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Up)
    assert got == [1, 8]


def _plot_menu(widget: QWidget) -> bool:
    """pyqtgraph's own plot menus (its "Max Traces" and friends): not the app's fields."""
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QMenu) or type(parent).__module__.startswith("pyqtgraph"):
            return True
        parent = parent.parentWidget()
    return False


def test_every_number_field_of_the_window_applies_without_enter(qtbot):
    window = MainWindow(AppContext(lab_discovery()), discover_on_show=False)
    qtbot.addWidget(window)
    for key in PANELS:
        window._ensure_panel(key)
    boxes = [b for b in window.findChildren(QAbstractSpinBox) if not _plot_menu(b)]
    assert len(boxes) > 10
    made_plain = [
        b.toolTip() or b.objectName() or type(b).__name__ for b in boxes if not b.property("numberField")
    ]
    assert made_plain == []


# --- the Devices page's note on stored measurements -------------------------------------------------


@pytest.fixture
def cpu_rec(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(peaks, "_book", RoofBook())
    store.take_notice()
    return CpuDevice(
        name="Test CPU", key="cpu", physical_cores=2, logical_cores=2, memory_total_bytes=8 << 30
    )


def _stored_with(rec, fp: str) -> None:
    store.save(
        MeasuredRoof("cpu", fp, time.time(), clock_ghz=3.0, clock_threads=2, ceilings=levels(time.time()))
    )


def _roof_note(qtbot, rec) -> tuple[str, object, object]:
    from explorer.devices.catalog import load_catalog
    from explorer.ui.bench_panel import BenchPanel
    from explorer.ui.devices_panel import DevicesPanel

    context = AppContext(
        Discovery(devices=[rec, *load_catalog()[:1]], reports=[ProbeReport("nvml", False, "")])
    )
    devices, bench = DevicesPanel(context), BenchPanel(context)
    qtbot.addWidget(devices)
    qtbot.addWidget(bench)
    devices.select_device("cpu")
    return devices.roof_section.note.text(), devices, bench


def test_the_note_names_the_torch_version_that_differs(qtbot, cpu_rec):
    here = fingerprint(cpu_rec)
    assert here.endswith(f"torch {store._torch_version()}")
    _stored_with(cpu_rec, here.rsplit("torch ", 1)[0] + "torch 2.0.1")
    note, devices, bench = _roof_note(qtbot, cpu_rec)
    try:
        assert note == (
            "the stored measurements are from other software on this machine (measured with torch "
            f"2.0.1; this is {store._torch_version()}); not used (measure again)"
        )
    finally:
        bench.shutdown()
        devices.shutdown()


def test_the_note_names_the_cpu_that_differs(qtbot, cpu_rec):
    _stored_with(
        cpu_rec, fingerprint(cpu_rec).replace("|Test CPU|", "|Old CPU|").replace("|2c/2t|", "|4c/8t|")
    )
    note, devices, bench = _roof_note(qtbot, cpu_rec)
    try:
        assert note.startswith("the stored measurements are from another machine (")
        assert (
            "measured with CPU Old CPU; this is Test CPU; measured with cores/threads 4c/8t; this is 2c/2t"
            in note
        )
    finally:
        bench.shutdown()
        devices.shutdown()


def test_a_benchmark_that_measured_the_ceilings_clears_the_note_without_refresh(qtbot, cpu_rec):
    """The run's worker measured and stored this machine's ceilings; the run's stream hands the page
    that roof: the Devices page shows it at once (it used to wait for Refresh)."""
    from explorer.devices.roofs import record_roof

    _stored_with(cpu_rec, "cpu|some other machine")
    note, devices, bench = _roof_note(qtbot, cpu_rec)
    try:
        assert "from another machine (measured on another kind of device)" in note
        _stored_with(cpu_rec, fingerprint(cpu_rec))  # what the worker stored before its first point
        measured = record_roof(cpu_rec)
        assert measured.measured_at is not None
        bench.roofs.add_roof(measured, "vector_add")
        qtbot.waitUntil(lambda: "from another machine" not in devices.roof_section.note.text())
        assert devices.roof_section.note.text().startswith("measured")
    finally:
        bench.shutdown()
        devices.shutdown()


@pytest.mark.parametrize("seed", range(3))
def test_what_differs_names_every_field_that_differs_and_only_those(seed):
    import random

    rng = random.Random(seed)
    base = ["cpu", "A CPU", "2c/4t", "8 GiB", "Linux x86_64", "torch 2.13.0"]
    labels = ["CPU", "cores/threads", "memory", "system", "torch"]
    for _ in range(500):
        changed = [i for i in range(1, 6) if rng.random() < 0.4]
        new = list(base)
        for i in changed:
            new[i] = "torch 2.14.1" if i == 5 else f"other {i}"
        words, software = store.what_differs("|".join(base), "|".join(new))
        named = [
            label
            for label in labels
            if f"with {label} " in words or (label == "torch" and "with torch" in words)
        ]
        assert named == [labels[i - 1] for i in changed]
        assert software == all(i == 5 for i in changed)
        if changed == [5]:
            assert words == "measured with torch 2.13.0; this is 2.14.1"


# --- numba's first compile, said in the window ---------------------------------------------------------


def test_the_timeline_says_the_first_compile_while_it_runs_and_hides_it_after(qtbot, monkeypatch):
    """The warm-up thread hears numba's notice (a cold cache); the page shows it with the seconds
    so far until the compile ends. The compile is stood in for: it waits for the test."""
    import threading

    from explorer.devices.catalog import load_catalog
    from explorer.jitcache import CompileNotice, notice_text
    from explorer.ui.visualizer import timeline_page
    from explorer.ui.visualizer.panel import VisualizerPanel

    release = threading.Event()

    def cold_warm_up(say=None):
        say(CompileNotice("start", notice_text("the dispatch loop", 10)))
        say(CompileNotice("tick", "  still compiling the dispatch loop: 5 s so far", 5.0))
        release.wait(60)
        say(CompileNotice("done", "  compiled the dispatch loop in 1.0 s", 1.0))

    monkeypatch.setattr(timeline_page, "warm_up", cold_warm_up)
    panel = VisualizerPanel(AppContext(Discovery(devices=load_catalog(), reports=[])))
    qtbot.addWidget(panel)
    panel.resize(1280, 800)
    panel.show()
    try:
        panel.time_views.set_view("timeline")
        label = panel.timeline_page.compiling
        qtbot.waitUntil(label.isVisible, timeout=10_000)
        assert label.text().startswith("compiling the dispatch loop once, about 10 s; later runs are instant")
        qtbot.waitUntil(lambda: "s so far)" in label.text(), timeout=10_000)  # counted on the GUI thread
        release.set()
        qtbot.waitUntil(lambda: not label.isVisible(), timeout=10_000)
    finally:
        release.set()
        panel.shutdown()


# --- the first window waits for nothing it does not show ------------------------------------------


def test_the_lessons_menu_lists_every_built_in_lesson_as_checking_it_would():
    from explorer.lessons.builtin import builtin_lessons, builtin_menu

    listed = [(i.name, i.title, i.steps) for i in builtin_menu()]
    assert listed == [(i.name, i.title, i.steps) for i in builtin_lessons()] and len(listed) >= 10


def test_the_window_checks_no_lesson_before_its_first_paint(qtbot, monkeypatch):
    """Checking the 14 built-in lessons (every step's pictures) took most of the time to the first
    window; the menu needs only their titles, and a lesson is checked when opened."""
    from explorer.lessons import files

    checked: list[str] = []
    real = files.load_lesson
    monkeypatch.setattr(files, "load_lesson", lambda path: checked.append(str(path)) or real(path))
    window = MainWindow(AppContext(lab_discovery()), discover_on_show=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert checked == []
    menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Lessons")
    built_in = next(a.menu() for a in menu.actions() if a.text() == "&Built-in lessons")
    titles = [a.text() for a in built_in.actions()]
    assert titles and all(re.fullmatch(r".+ \(\d+ steps\)", t) for t in titles)
