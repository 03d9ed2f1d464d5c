"""The timeline and latency-hiding views mounted in the visualizer, driven like a teacher would:
the tabs and the model agree, the timeline follows the session's clock (Play, wave steps), typed
durations reach the model or are refused in one line, the latency chart plays on Space, a
measurement without a GPU says why, lesson steps and the settings file bring a view back, and
every view and every step of the two lessons renders at the classroom sizes with text that
follows the text size."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from explorer.launch.config import Dim3, LaunchConfig
from explorer.launch.session import LaunchSetup
from explorer.launch.time_views import VIEWS, DispatchSettings, LatencySettings
from explorer.lessons import load_lesson
from explorer.lessons.builtin import builtin_paths
from explorer.ui.context import AppContext
from explorer.ui.theme import FIGURE_TEXT_MIN_SHARE, current_theme, figure_px
from explorer.ui.visualizer.measure_row import MeasureRow
from explorer.ui.visualizer.panel import VisualizerPanel
from tests.launch.test_time_views import _measured
from tests.ui.conftest import no_gpu_discovery, two_gpu_discovery
from tests.ui.layout_check import clipped
from tests.ui.test_layout_fits import _settle, window  # noqa: F401 - the window the layout test opens
from tests.ui.test_visualizer_keys import open_catalog_window


@pytest.fixture
def panel(visualizer_panel):
    return visualizer_panel


def test_the_centre_tabs_and_the_model_show_the_same_view(panel):
    pages = (panel.sm_view, panel.timeline_page, panel.latency_page)
    for i, view in enumerate(VIEWS):
        panel.centre.setCurrentIndex(i)  # a click on the tab
        assert panel.time_views.view == view
    for view, page in zip(VIEWS, pages, strict=True):
        panel.time_views.set_view(view)  # a lesson step
        assert panel.centre.currentWidget() is page


def test_the_timeline_plays_on_the_sessions_clock(panel, qtbot):
    s, m, view = panel.session, panel.time_views, panel.timeline_page.view
    m.set_view("timeline")
    assert view.shown is not None and view.time == s.moment == 0.0
    panel.playback.wave_button.click()  # a wave step of the SM picture moves the timeline
    assert view.time == s.moment > 0
    waiting, running, done = view.shown.timeline.counts_at(view.time)
    frame = s.animation(0).frame()
    assert (waiting, running, done) == (frame.queued, frame.running, frame.done) == (82, 16, 0)
    s.change_speed(1)
    s.change_speed(1)
    s.change_speed(1)  # 4 waves a second
    panel.toggle_play()  # Space
    assert panel.frame_clock.running
    qtbot.waitUntil(lambda: view.time > 1.5, timeout=10_000)
    panel.toggle_play()
    assert not s.playing and view.time == s.moment


def test_typed_durations_reach_the_model_and_bad_ones_are_refused_in_one_line(panel, qtbot):
    m, page = panel.time_views, panel.timeline_page
    m.set_view("timeline")
    line = page.durations_box.lineEdit()
    line.selectAll()
    qtbot.keyClicks(line, "heavy:1.5")
    qtbot.keyClick(line, Qt.Key.Key_Return)
    assert m.dispatch_settings.durations == "heavy:1.5" and m.dispatch.figures.makespan > 7
    assert page.seed_spin.isEnabled()  # random durations: the seed matters
    page.seed_spin.setValue(3)
    assert m.dispatch_settings.seed == 3
    line.selectAll()
    qtbot.keyClicks(line, "heavy:0.5")
    qtbot.keyClick(line, Qt.Key.Key_Return)
    assert not page.refused.isHidden() and page.refused.text() == m.durations_refused[1]
    assert "\n" not in page.refused.text() and "ALPHA" in page.refused.text()
    assert m.dispatch_settings.durations == "heavy:1.5"  # what was in force stays
    assert line.text() == "heavy:0.5"  # and what was typed stays to be corrected
    page.policy_box.setCurrentIndex(1)
    page.policy_box.activated.emit(1)
    assert m.dispatch_settings.policy == "round-robin"
    page.durations_box.setCurrentIndex(0)
    page.durations_box.activated.emit(0)  # "uniform" from the menu
    assert m.dispatch_settings.durations == "uniform" and page.refused.isHidden()
    assert not page.seed_spin.isEnabled()


def test_the_latency_view_follows_the_launch_and_plays_its_cycles_on_space(panel, qtbot):
    m, page = panel.time_views, panel.latency_page
    v100 = next(c for c in panel.session.devices if "V100" in c.device.name)
    panel.session.edit(LaunchSetup(v100.key, LaunchConfig(Dim3(640), Dim3(256), 0, 128)))
    m.set_view("latency")
    assert page.view.run is m.latency and m.latency.config.warps == 16
    assert "16 of 64 warp slots" in page.caption.text() and "registers" in page.caption.text()
    panel.controls.regs_spin.setValue(255)  # more registers: fewer warps, less latency hidden
    assert m.latency.config.warps == 8 and page.view.run is m.latency
    page.alu_spin.setValue(0)
    assert m.latency_settings.alu == 0 and m.latency.utilization < 0.1
    start = m.cycles.cycle
    panel.toggle_play()  # Space on this tab plays the chart, not the hidden SM picture
    assert m.cycles.playing and not panel.session.playing
    qtbot.waitUntil(lambda: page.view.cycle > start + 5, timeout=10_000)
    assert page.play_button.text() == "Pause cycles"
    panel.toggle_play()
    assert not m.cycles.playing and page.view.cycle == m.cycles.cycle


def test_without_a_gpu_the_measured_parts_say_why_in_one_line(qtbot):
    p = VisualizerPanel(AppContext(no_gpu_discovery()))
    qtbot.addWidget(p)
    for page in (p.timeline_page, p.latency_page):
        row = page.measure
        assert not row.button.isEnabled()
        line = row.status.text()
        assert "\n" not in line and "catalog sheet" in line and "NVML library" not in line
        assert "NVML library not found" in row.status.toolTip()  # discovery's whole reason on hover
    p.shutdown()


def test_with_a_gpu_in_this_machine_the_measure_button_is_offered(qtbot):
    p = VisualizerPanel(AppContext(two_gpu_discovery()))
    qtbot.addWidget(p)
    assert p.session.edited_side.device.kind == "cuda"
    assert p.timeline_page.measure.button.isEnabled() and p.latency_page.measure.button.isEnabled()
    p.shutdown()


def test_a_measured_timeline_is_drawn_under_the_simulated_one_on_the_same_clock(panel):
    m, page = panel.time_views, panel.timeline_page
    m.set_view("timeline")
    measured = _measured(panel.session.edited_side.plan, spin_ns=2000)
    assert m.take_measured(m.launch_key(), measured)
    assert page.measured_view.isVisible() and page.measured_view.shown.timeline is measured.timeline
    panel.session.show_moment(2.5)
    assert page.measured_view.time == pytest.approx(2.5 * measured.mean_block_ns)
    panel.controls.grid_spins[0].setValue(99)  # another launch: its measurement goes
    assert m.measured is None and not page.measured_view.isVisible()


def test_a_measurement_runs_off_the_ui_thread_and_stop_ends_it(qtbot):
    row = MeasureRow("Measure", "tip")
    qtbot.addWidget(row)
    release, results = threading.Event(), []

    class Agent:
        cancelled = False

        def cancel(self):
            self.cancelled = True
            release.set()

    agent = Agent()

    def job(on_process):
        on_process(agent)
        release.wait(10)
        return "done"

    row.start("Measuring", job, results.append)
    assert row.running and row.button.text() == "Stop"
    row.button.click()  # Stop
    qtbot.waitUntil(lambda: not row.running, timeout=10_000)
    assert agent.cancelled and results == [] and "Stopped" in row.status.text()
    release.clear()
    row.start("Measuring", lambda on_process: "answer", results.append)
    qtbot.waitUntil(lambda: results == ["answer"], timeout=10_000)
    row.start("Measuring", lambda on_process: 1 / 0, results.append)
    qtbot.waitUntil(lambda: not row.running, timeout=10_000)
    assert "division by zero" in row.status.text() and results == ["answer"]
    release.clear()
    agent.cancelled = False
    row.start("Measuring", job, results.append, "launch A")
    row.follow("launch A", "", ready="Ready")  # the same launch shown again: it goes on
    assert row.running and not agent.cancelled
    row.follow("launch B", "", ready="Ready")  # another launch: the measurement is stopped
    qtbot.waitUntil(lambda: not row.running, timeout=10_000)
    assert agent.cancelled and results == ["answer"] and "measure it again" in row.status.text()
    row.follow("launch B", "No GPU here.", "the whole reason")
    assert not row.button.isEnabled() and row.status.text() == "No GPU here."


def test_lesson_steps_and_the_settings_file_bring_the_view_back(
    qtbot, monkeypatch, tmp_path, fake_nvml, fake_clock, fake_timer
):
    from explorer import prefs

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    theme = current_theme()

    def open_window(saved=None):
        return open_catalog_window(qtbot, (fake_nvml, fake_clock, fake_timer), saved, panel="visualizer")

    first = open_window()
    panel = first.current_panel()
    m = panel.time_views
    m.load("timeline", DispatchSettings("rows:1,4,1", "round-robin", 5), LatencySettings("a100-l2", 3, "lrr"))
    m.show_time(3.0)
    step = panel.lesson_state()
    assert prefs.save(first.current_prefs())
    first.close()

    second = open_window(prefs.load())
    p2 = second.current_panel()
    m2 = p2.time_views
    assert p2.centre.currentWidget() is p2.timeline_page
    assert m2.dispatch_settings == DispatchSettings("rows:1,4,1", "round-robin", 5)
    assert m2.latency_settings == LatencySettings("a100-l2", 3, "lrr")
    assert p2.timeline_page.durations_box.currentText() == "rows:1,4,1"
    assert p2.timeline_page.policy_box.currentText() == "round-robin"
    assert p2.timeline_page.view.shown is not None
    p2.show_lesson_state(step)  # the recorded step: the same view, settings and moment
    assert (m2.view, m2.time) == ("timeline", 3.0) and p2.timeline_page.view.time == 3.0
    second.set_theme(theme.name)  # the settings' theme and text size were the whole app's
    second.apply_text_scale(100)
    second.close()


SIZES = [((1024, 768), 100), ((1280, 800), 200), ((1920, 1080), 250)]
LESSON_STEPS = [
    (path.stem, k, len(load_lesson(path).steps))
    for path in builtin_paths()
    if path.stem in ("13-tail-uneven-blocks", "14-latency-occupancy-ilp")
    for k in range(len(load_lesson(path).steps))
]
#: every step at the tightest of the sizes, the first and last at the others: the render walk
#: (``test_render_walk``) already checks every step at every classroom size for clipped text and
#: figure text; here it is the view a step names and the figure's small text at each scale
CASES = [
    (lesson, step, size, scale)
    for lesson, step, steps in LESSON_STEPS
    for size, scale in SIZES
    if scale == 200 or step in (0, steps - 1)
]


@pytest.mark.parametrize(
    ("lesson", "step", "size", "scale"),
    CASES,
    ids=[f"{lesson}-{step}-{size[0]}x{size[1]}-{scale}%" for lesson, step, size, scale in CASES],
)
def test_every_step_of_the_two_lessons_renders_whole_at_the_classroom_sizes(
    window,  # noqa: F811 - the layout test's fixture
    qapp,
    lesson,
    step,
    size,
    scale,
):
    window.set_theme("light")  # as the app starts: the theme's font and stylesheet
    window.apply_text_scale(scale)
    (path,) = [p for p in builtin_paths() if p.stem == lesson]
    window.lessons.open(load_lesson(path), step)
    _settle(qapp, window, size)
    panel = window.current_panel()
    shown = panel.centre.currentWidget()
    assert shown is (panel.timeline_page if panel.time_views.view == "timeline" else panel.latency_page)
    painted = shown.view
    # the small text follows the one figure rule: 0.85 of the labels at this text size, never 11 px at 100%
    assert painted.fonts().small.pixelSize() == figure_px(FIGURE_TEXT_MIN_SHARE) > round(11 * scale / 100)
    image = window.grab().toImage()
    assert (image.width(), image.height()) == size
    problems = [str(p) for p in clipped(window)]
    assert not problems, "\n".join(problems)
    QApplication.processEvents()


def test_the_settings_rows_share_a_line_where_the_page_is_wide_enough(qtbot, qapp):
    """The two rows of a time view's settings take one line of the page where its width holds
    both (at 1280x800 and 200% the second line was the chart's room), and stack again, whole,
    where it does not; a narrow page is never asked to grow for them."""
    from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QWidget

    from explorer.ui.widgets import JoiningRows

    first, second = QHBoxLayout(), QHBoxLayout()
    first.addWidget(QLabel("Latency"))
    box = QComboBox()
    box.addItem("arithmetic on cc 7.x: 4 cycles")
    first.addWidget(box, 1)
    second.addWidget(QLabel("Policy"))
    second.addWidget(QPushButton("Play cycles"))
    holder = QWidget()  # a page: it places the rows by hand (a window would hold them to its least)
    rows = JoiningRows(first, second, parent=holder)
    qtbot.addWidget(holder)
    holder.resize(2000, 400)
    holder.show()
    wide = sum(r.sizeHint().width() for r in (box.parentWidget(), rows.children()[-1])) + 40
    narrow = max(box.parentWidget().minimumSizeHint().width(), rows.children()[-1].minimumSizeHint().width())
    for width, joined in ((wide, True), (narrow, False), (wide, True)):
        rows.resize(width, rows.minimumSizeHint().height())
        for _ in range(3):
            qapp.processEvents()
        rows.resize(width, rows.minimumSizeHint().height())
        qapp.processEvents()
        assert rows.joined() is joined
        assert rows.minimumSizeHint().width() == narrow  # never wider than the widest row
        assert not clipped(rows), [str(p) for p in clipped(rows)]
    one_line = rows.minimumSizeHint().height()
    rows.resize(narrow, one_line)
    qapp.processEvents()
    assert rows.minimumSizeHint().height() > one_line  # stacked: two lines asked for
