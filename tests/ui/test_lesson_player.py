"""The lesson player in the real window: steps, keys, notes, damaged steps, and a lesson saved
from the window that replays to the same launch summary and inspector text."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from explorer.devices.catalog import load_catalog
from explorer.devices.discovery import Discovery, ProbeReport
from explorer.devices.model import CpuDevice
from explorer.launch.presets import PRESETS
from explorer.lessons import FORMAT_NAME, load_lesson
from explorer.ui.context import AppContext
from explorer.ui.lessons.player import NARRATION_SCALE
from explorer.ui.main_window import MainWindow
from explorer.ui.theme import BASE_FONT_PT, pt


def _discovery() -> Discovery:
    return Discovery(
        devices=[CpuDevice(name="Test CPU", key="cpu"), *load_catalog()],
        reports=[ProbeReport("nvml", False, "NVML library not found: no NVIDIA driver is installed.")],
    )


@pytest.fixture
def make_window(qtbot):
    windows = []

    def make() -> MainWindow:
        window = MainWindow(AppContext(_discovery()), discover_on_show=False)
        qtbot.addWidget(window)
        window.resize(1280, 800)
        window.show()
        qtbot.waitExposed(window)
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.close()


def _write(tmp_path, steps, name="lesson.json"):
    path = tmp_path / name
    data = {"format": FORMAT_NAME, "version": 1, "title": "Test lesson", "steps": steps}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _vis(narration="n", **state):
    return {"panel": "visualizer", "narration": narration, "state": {"device": "1650", **state}}


def test_a_lesson_saved_from_the_window_replays_the_same_summary_and_inspector(make_window, tmp_path):
    window = make_window()
    vis = window.show_panel("visualizer")
    vis.controls.select_device("h100")
    vis.controls.apply_preset(next(p for p in PRESETS if "5466" in p.name))
    vis.controls.regs_spin.setValue(64)
    vis.session.step_wave(1)
    vis.session.step_block(-1)
    vis.session.select_thread(5, 12, 16)
    vis.session.change_speed(1)
    vis.sm_view.zoom(1)
    vis.tabs.setCurrentIndex(1)
    summary, inspector = vis.sm_view.summary_label.text(), vis.inspector.label.text()
    frame = vis.session.animation(0).frame()
    assert "Selected thread" in inspector and "(400, 0, 0)" in inspector
    window.lessons.save_current_as_step(narration="**Look for** the thread.")
    window.show_panel("devices")
    window.lessons.save_current_as_step(narration="The devices.")
    saved = window.lessons.save_to(tmp_path / "made.json")
    assert saved is not None and load_lesson(saved).steps[0].state.grid == "6,1,1"

    other = make_window()
    assert other.lessons.open_path(saved)
    again = other.panels["visualizer"]
    assert other.current_panel_key() == "visualizer"
    assert again.sm_view.summary_label.text() == summary
    assert again.inspector.label.text() == inspector
    assert again.session.animation(0).frame() == frame
    assert (again.session.speed_index, again.sm_view.zoom_index, again.tabs.currentIndex()) == (
        vis.session.speed_index,
        vis.sm_view.zoom_index,
        1,
    )
    assert other.lessons.counter_label.text() == "1 / 2"
    assert "Look for" in other.lessons.narration.toPlainText()
    other.lessons.next()
    assert other.current_panel_key() == "devices"
    assert other.lessons.counter_label.text() == "2 / 2"


def test_page_down_and_page_up_step_through_the_lesson(make_window, tmp_path, qtbot):
    window = make_window()
    path = _write(
        tmp_path,
        [
            _vis(grid="6", block="1024", n="5466"),
            _vis(grid="98", block="1024", n="100000"),
            _vis(grid="1", block="32"),
        ],
    )
    window.lessons.open_path(path)
    vis = window.panels["visualizer"]
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=3000)
    window.tabs.tabBar().setFocus()  # as after clicking the page's tab
    qtbot.wait(20)

    def press(key) -> None:  # where a presenter's remote sends it: the widget with the focus
        qtbot.keyClick(QApplication.focusWidget() or window, key)

    press(Qt.Key.Key_PageDown)
    assert window.lessons.counter_label.text() == "2 / 3"
    assert "98 blocks" in vis.sm_view.summary_label.text()
    press(Qt.Key.Key_PageDown)
    press(Qt.Key.Key_PageDown)  # past the end: stays on the last step
    assert window.lessons.counter_label.text() == "3 / 3"
    assert not window.lessons.next_button.isEnabled()
    press(Qt.Key.Key_PageUp)
    assert window.lessons.counter_label.text() == "2 / 3"


def test_a_damaged_step_is_one_line_and_the_rest_of_the_lesson_plays(make_window, tmp_path):
    window = make_window()
    path = _write(
        tmp_path,
        [
            _vis(grid="6", block="1024", n="5466"),
            _vis(grid="lots", block="1024"),
            _vis(device="Voodoo 5", grid="1", block="32"),
            _vis(grid="98", block="1024", n="100000", wave=7),
        ],
    )
    assert window.lessons.open_path(path)
    vis = window.panels["visualizer"]
    assert "6 blocks" in vis.sm_view.summary_label.text()
    assert "step 2: grid x is 'lots'" in window.lessons.note  # named at opening
    window.lessons.next()
    assert window.lessons.note.startswith("This step cannot be shown: step 2: grid x is 'lots'")
    assert "\n" not in window.lessons.note
    assert "6 blocks" in vis.sm_view.summary_label.text()  # the page keeps what it had
    window.lessons.next()
    assert "Step 3 cannot be shown here: device 'Voodoo 5' is neither in this machine nor in the catalog" in (
        window.lessons.note
    )
    window.lessons.next()
    assert window.lessons.note == ""
    assert (
        "98 blocks" in vis.sm_view.summary_label.text()
        and vis.session.animation(0).frame().label == "wave 7 of 7"
    )


def test_a_newer_lesson_with_a_damaged_step_says_both_in_one_line(make_window, tmp_path):
    """A lesson from a newer version with a typo in step 2: opening it names the damaged step and
    says the file is newer (the second used to be dropped for the first), in one line; the steps
    that are fine play, and the unknown fields survive a save."""
    window = make_window()
    path = tmp_path / "newer.json"
    steps = [
        _vis(grid="6", block="1024", n="5466", future_field="x"),
        _vis(grid="6", block="-1"),
        _vis(grid="98", block="1024", n="100000", wave=7),
    ]
    data = {"format": FORMAT_NAME, "version": 3, "title": "T", "future_top": [1], "steps": steps}
    path.write_text(json.dumps(data), encoding="utf-8")
    assert window.lessons.open_path(path)
    note = window.lessons.note
    assert "1 step of this lesson cannot be shown: step 2: block x is -1; it must be at least 1. " in note
    assert "newer Device Explorer (lesson format 3" in note and "\n" not in note  # two sentences, one line
    vis = window.panels["visualizer"]
    assert "6 blocks" in vis.sm_view.summary_label.text()
    window.lessons.next()
    assert window.lessons.note.startswith("This step cannot be shown: step 2: block x is -1")
    assert "6 blocks" in vis.sm_view.summary_label.text()  # the page keeps what it had
    window.lessons.next()
    assert (
        "98 blocks" in vis.sm_view.summary_label.text()
        and vis.session.animation(0).frame().label == "wave 7 of 7"
    )
    assert "newer Device Explorer" in window.lessons.note
    saved = json.loads(window.lessons.save_to(tmp_path / "again.json").read_text(encoding="utf-8"))
    assert saved["future_top"] == [1] and saved["steps"][1] == steps[1]


def test_a_file_that_is_no_lesson_is_a_line_and_the_window_lives(make_window, tmp_path):
    window = make_window()
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json", encoding="utf-8")
    assert not window.lessons.open_path(bad)
    assert "is not a lesson file" in window.lessons.note and "\n" not in window.lessons.note
    assert window.lessons.lesson is None


def test_an_absent_gpu_shows_its_catalog_sheet_and_says_so(make_window, tmp_path):
    window = make_window()
    path = _write(
        tmp_path, [_vis(device="NVIDIA GeForce GTX 1650", device_kind="present", grid="98", block="1024")]
    )
    window.lessons.open_path(path)
    vis = window.panels["visualizer"]
    assert vis.controls.device().key == "catalog:gtx-1650-laptop"
    assert "this machine has none, so its catalog spec sheet is shown" in window.lessons.note


def test_a_gpu_benchmark_step_without_a_gpu_says_so_and_shows_what_was_recorded(make_window):
    window = make_window()
    window.lessons.open_path(_builtin("04-timing-trap"))
    bench = window.panels["benchmarks"]
    assert bench.controls.workload.name == "timing_lesson"
    assert "runs on a GPU (cuda:0), which this machine does not have" in window.lessons.note
    assert bench.controls.selected_devices() == ["cpu"]
    window.lessons.next()
    text = window.lessons.narration.toPlainText()
    assert "Results recorded on Intel Xeon Processor" in text and "2026-11-23" in text
    assert "not this one" in text
    assert bench.controls.sizes_edit.text() == "256, 512, 1024"
    assert bench.points == []  # recorded results are never put among this machine's


def test_the_narration_folds_away_and_follows_the_text_size(make_window):
    window = make_window()
    window.lessons.open_path(_builtin("01-blocks"))
    player = window.lessons
    assert player.body.isVisible()
    player.collapse_button.click()
    assert not player.body.isVisible() and player.next_button.isVisible()
    player.collapse_button.click()
    assert player.body.isVisible()
    small = player.narration.font().pointSizeF()
    window.set_presentation(True)
    QApplication.processEvents()
    # the screen's presentation text size, and the pane's own step up
    assert player.narration.font().pointSizeF() == pytest.approx(pt(BASE_FONT_PT) * NARRATION_SCALE[True])
    assert player.narration.font().pointSizeF() > small * 1.2
    window.set_presentation(False)


def _builtin(prefix: str):
    from explorer.lessons.builtin import builtin_paths

    return next(p for p in builtin_paths() if p.stem.startswith(prefix))


@pytest.mark.parametrize(
    "path", __import__("explorer.lessons.builtin", fromlist=["x"]).builtin_paths(), ids=lambda p: p.stem
)
def test_every_builtin_step_applies_without_a_problem(make_window, path):
    window = make_window()
    window.lessons.open_path(path)
    lesson = window.lessons.lesson
    for index in range(len(lesson.steps)):
        window.lessons.show_step(index)
        note = window.lessons.note
        assert "cannot be shown" not in note, (path.stem, index + 1, note)


def test_the_narration_never_folds_by_itself_and_scrolls_where_the_page_needs_the_room(make_window):
    """At 150% on a short projector the narration folded away (or showed two lines and
    hid its "Look for:" line). It now always shows, in full where the page can spare the room,
    else at least three lines that scroll; the page keeps its least height, so nothing of it
    overlaps, and the teacher may still fold it by hand."""
    window = make_window()
    try:
        window.apply_text_scale(150)
        window.resize(1280, 720)  # a projector at 150 %: the visualizer needs every pixel
        QApplication.processEvents()
        window.lessons.open_path(_builtin("01-blocks"))
        for _ in range(4):
            QApplication.processEvents()
        player = window.lessons
        view = player.narration
        assert player.body.isVisible() and player.next_button.isVisible()
        assert view.viewport().height() >= 3 * view.fontMetrics().lineSpacing()
        if view.document().size().height() > view.viewport().height():
            assert view.verticalScrollBar().maximum() > 0  # the rest scrolls: never cut
        page = window.panels["visualizer"]
        assert page.height() >= page.minimumSizeHint().height()
        player.collapse_button.click()  # the teacher folds it: only then is it folded
        assert not player.body.isVisible()
        player.collapse_button.click()
        assert player.body.isVisible()
        window.resize(1280, 1000)
        window.apply_text_scale(100)
        player.show_step(1)
        for _ in range(4):
            QApplication.processEvents()
        assert player.body.isVisible()
        document = view.document().size().height()
        assert view.viewport().height() >= document - 2  # room enough: the whole narration shows
    finally:
        window.apply_text_scale(100)


def test_an_a_b_comparison_is_a_step_and_replays(make_window, tmp_path):
    """The compare state travels through the visualizer's remembered()/restore(): a step saved in
    compare mode opens in compare mode, with the same B, the same moment and the same table."""
    window = make_window()
    vis = window.show_panel("visualizer")
    vis.controls.select_device("1650")
    vis.controls.apply_preset(next(p for p in PRESETS if "100000" in p.name))
    vis.session.step_wave(1)
    vis.session.step_wave(1)
    vis.session.set_compare(True)
    vis.session.select_side(1)
    assert vis.controls.select_device_key("catalog:h100-sxm5")
    vis.controls.regs_spin.setValue(64)
    table = [(r.a, r.b) for r in vis.session.comparison.rows]
    moment = vis.session.moment
    window.lessons.save_current_as_step(narration="A and B")
    step = window.lessons.lesson.steps[0]
    assert step.state.extra["compare"] == 1 and step.state.extra["b_regs"] == "64"
    assert step.state.device == "NVIDIA GeForce GTX 1650 Laptop GPU"  # A, though the form was editing B
    saved = window.lessons.save_to(tmp_path / "ab.json")

    other = make_window()
    assert other.lessons.open_path(saved)
    again = other.panels["visualizer"]
    assert again.session.compare and again.session.edited == 1
    assert [(r.a, r.b) for r in again.session.comparison.rows] == table
    assert again.session.moment == pytest.approx(moment)
    assert again.session.sides[1].plan.device_name.startswith("NVIDIA H100")


def test_the_builtin_a_b_step_compares_the_gtx_1650_and_the_h100(make_window):
    window = make_window()
    window.lessons.open_path(_builtin("02-waves"))
    lesson = window.lessons.lesson
    index = next(i for i, s in enumerate(lesson.steps) if s.state.extra.get("compare") == 1)
    window.lessons.show_step(index)
    vis = window.panels["visualizer"]
    assert vis.session.compare and window.lessons.note == ""
    a, b = (side.plan for side in vis.session.sides)
    assert a.device_name == "NVIDIA GeForce GTX 1650 Laptop GPU" and a.waves == 7
    assert b.device_name.startswith("NVIDIA H100") and b.waves == 1


def _memory_picture(panel):
    """What a Memory step shows: the tab, the model's answer, the words, and the painted canvas."""
    tab = panel.tabs.currentWidget()
    QApplication.processEvents()
    tab.canvas.resize(800, 420)  # the same size in both windows (a narration pane takes room)
    return (
        panel.tabs.currentIndex(),
        tab.result,
        tab.headline.text(),
        tab.preset.currentText(),
        tab.canvas.grab().toImage(),
    )


def test_memory_steps_saved_from_the_window_replay_the_same_numbers_and_picture(make_window, tmp_path):
    window = make_window()
    mem = window.show_panel("memory")
    pictures = []
    # coalescing: a preset, then numbers of one's own on warp 3
    mem.tabs.setCurrentWidget(mem.coalescing)
    mem.coalescing.preset.setCurrentIndex(6)  # array of structs
    mem.coalescing.offset.setValue(2)  # the z field: no preset has these numbers
    mem.coalescing.warp.setValue(3)
    assert mem.coalescing.preset.currentText() == "Custom"
    pictures.append(_memory_picture(mem))
    window.lessons.save_current_as_step(narration="AoS, z field")
    # banks: the transpose's column with the padding fix
    mem.tabs.setCurrentWidget(mem.banks)
    mem.banks.preset.setCurrentIndex(mem.banks.preset.findText("Column of tile[32][32]"))
    mem.banks.pad.setChecked(True)
    pictures.append(_memory_picture(mem))
    window.lessons.save_current_as_step(narration="padded")
    # divergence: data-dependent, an odd block, its own seed and p
    mem.tabs.setCurrentWidget(mem.divergence)
    mem.divergence.preset.setCurrentIndex(3)
    mem.divergence.block.setValue(200)
    mem.divergence.p.setValue(0.3)
    mem.divergence.seed.setValue(11)
    pictures.append(_memory_picture(mem))
    window.lessons.save_current_as_step(narration="random")
    saved = window.lessons.save_to(tmp_path / "memory.json")
    lesson = load_lesson(saved)
    assert not lesson.problems
    assert lesson.steps[1].state.pad and lesson.steps[1].state.pattern == "Column of tile[32][32]"

    other = make_window()
    assert other.lessons.open_path(saved)
    again = other.panels["memory"]
    for index, picture in enumerate(pictures):
        other.lessons.show_step(index)
        assert other.current_panel_key() == "memory"
        assert other.lessons.note == ""
        assert _memory_picture(again) == picture, f"step {index + 1}"


def test_a_bad_memory_step_is_one_line_and_the_page_keeps_what_it_showed(make_window, tmp_path):
    window = make_window()
    path = _write(
        tmp_path,
        [
            {"panel": "memory", "narration": "n", "state": {"view": "banks", "stride": 2}},
            {"panel": "memory", "narration": "n", "state": {"view": "banks", "elem": 3}},
            {"panel": "memory", "narration": "n", "state": {"view": "divergence", "branch": "warp", "k": 4}},
        ],
    )
    window.lessons.open_path(path)
    mem = window.panels["memory"]
    assert mem.banks.result.access.stride == 2
    window.lessons.next()
    assert "step 2: elem is 3 bytes; it must be one of 1, 2, 4, 8, 16" in window.lessons.note
    assert mem.banks.result.access.stride == 2  # the page is left as it was
    window.lessons.next()
    assert mem.tabs.currentWidget() is mem.divergence
    assert mem.divergence.result.diverged_warps == 0


def test_a_title_too_long_for_the_bar_gives_way_to_the_steps_own_and_is_whole_on_hover(make_window):
    """At 200% text on a 1280x800 projector the title was cut mid-word ("Six blocks fo"), then
    to "Why 25% occupancy can still be enough: 16..." at 150% on 1024x768, which said nothing
    of the step. Where the whole title is too long the step's own title is shown whole; where
    that is too long as well it ends in an ellipsis; the whole is on hover."""
    window = make_window()
    window.lessons.open_path(_builtin("14-latency"))
    title = window.lessons.title_label
    heading = title.text()
    step = window.lessons.lesson.steps[0].title
    assert heading.endswith(step) and heading != step
    fm = title.fontMetrics()
    title.setFixedWidth(fm.horizontalAdvance(step) + fm.averageCharWidth())  # the step's fits, not all
    QApplication.processEvents()
    assert fm.horizontalAdvance(heading) > title.contentsRect().width()
    assert title.shown_text() == step  # the step's own title, whole
    assert heading in title.toolTip()
    title.setFixedWidth(fm.horizontalAdvance(step) // 2)  # too narrow even for the step's title
    QApplication.processEvents()
    shown = title.shown_text()
    assert shown.endswith("…") and step.startswith(shown[:-1].rstrip())
    assert fm.horizontalAdvance(shown) <= title.contentsRect().width()
    title.setMinimumWidth(0)
    title.setMaximumWidth(16777215)
    window.apply_text_scale(100)
    QApplication.processEvents()
    window.resize(1920, 800)
    QApplication.processEvents()
    assert title.shown_text() == heading  # room enough: whole
    window.lessons.show_step(1)  # another step: its own shorter title, not the first's
    QApplication.processEvents()
    assert (
        title.shown_text() == title.text() == f"{heading[: -len(step)]}{window.lessons.lesson.steps[1].title}"
    )


def _recorded_step(points: int) -> dict:
    rows = [
        {
            "workload": "matmul",
            "variant": "cpu",
            "device": "cpu",
            "size": 16 + i,
            "size_label": f"n={16 + i}",
            "median_s": 1e-4,
            "repeats": 5,
            "throughput": 10.0 + i % 100,
            "throughput_unit": "GFLOP/s",
        }  # fmt: skip
        for i in range(points)
    ]
    return {
        "panel": "benchmarks",
        "narration": "The CPU's side.",
        "state": {
            "workload": "matmul",
            "devices": ["cpu"],
            "recorded": {"device": "a lab PC", "date": "2026-11-23", "points": rows},
        },
    }


def test_a_lesson_with_20000_recorded_points_shows_them_in_a_table_not_the_narration(make_window, tmp_path):
    """As rows of the narration's Markdown, 20,000 points (3.2 MB) took 110 s to
    show, 107 s in QTextEdit.setMarkdown, and the window stood still. The rows are a table view now,
    which draws only what is on screen (benchmarks/lesson_open.py --recorded 20000 times it)."""
    window = make_window()
    path = _write(tmp_path, [_recorded_step(20_000)])
    assert window.lessons.open_path(path)
    player = window.lessons
    narration = player.narration.toPlainText()
    assert "Results recorded on a lab PC, 2026-11-23" in narration and "20,000 points" in narration
    assert "n=16" not in narration and len(narration) < 2_000  # no row went through the Markdown
    model = player.recorded_table.model()
    assert player.recorded_table.isVisible() and model.rowCount() == 20_000
    cells = [model.data(model.index(19_999, c)) for c in range(model.columnCount())]
    assert cells == ["cpu", "n=20015", "100 µs", "109 GFLOP/s", "ok"]
    player.close_lesson()
    assert window.lessons.open_path(_write(tmp_path, [_vis()], "plain.json"))
    assert not player.recorded_table.isVisible()  # a step without recorded results has no table


def test_a_lesson_version_of_400_digits_is_refused_in_one_line_without_widening_the_window(
    make_window, tmp_path
):
    """Its note once widened the window to 3,863 px."""
    window = make_window()
    width = window.width()
    path = tmp_path / "v.json"
    steps = '[{"panel": "devices", "state": {}}]'
    path.write_text(f'{{"format": "{FORMAT_NAME}", "version": 1{"0" * 400}, "title": "T", "steps": {steps}}}')
    assert not window.lessons.open_path(path)
    note = window.lessons.note
    assert "version is a 401-digit number" in note and "\n" not in note and len(note) < 400
    QApplication.processEvents()
    assert window.width() == width and window.minimumSizeHint().width() < 1280
    newer = _write(tmp_path, [_vis()], "newer.json")
    newer.write_text(newer.read_text().replace('"version": 1', '"version": 1001'))
    assert not window.lessons.open_path(newer)
    assert "version is 1001, more than 1,000" in window.lessons.note


def test_one_key_folds_the_narration_and_the_lesson_remembers_it(make_window, qtbot):
    """N (and View > Lesson narration, listed under F1) folds the lesson's words to the title
    line and gives the page their height; the fold stays from step to step and when the lesson is
    opened again, and another lesson opens with its words shown."""
    window = make_window()
    player = window.lessons
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "View")
    item = next(a for a in view_menu.actions() if a.text().replace("&", "") == "Lesson narration")
    assert not item.isEnabled()  # no lesson open: nothing to fold
    rows = dict((words, keys) for keys, words in window.shortcuts_dialog().sections[0][1])
    assert rows["Lesson narration"] == "N"

    player.open_path(_builtin("14-latency"), step=1)
    window.activateWindow()  # a key reaches the window's shortcuts only while it is the active one
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=30_000)
    for _ in range(4):
        QApplication.processEvents()
    area = window.centralWidget()
    before = area.height()
    assert player.narration_shown() and item.isChecked()
    qtbot.keyClick(window, Qt.Key.Key_N)
    for _ in range(4):
        QApplication.processEvents()
    assert not player.narration_shown() and not item.isChecked()
    assert player.title_label.isVisible() and player.next_button.isVisible()
    assert player.height() <= player.title_label.height() + 20  # the title line only
    assert area.height() > before + 2 * player.narration.fontMetrics().lineSpacing()  # the page took it

    qtbot.keyClick(window, Qt.Key.Key_PageDown)  # the next step keeps the words folded
    QApplication.processEvents()
    assert player.index == 2 and not player.narration_shown()

    player.close_lesson()
    player.open_path(_builtin("01-blocks"))  # another lesson: its words show
    QApplication.processEvents()
    assert player.narration_shown() and item.isChecked()
    player.close_lesson()
    player.open_path(_builtin("14-latency"))  # the first again: folded, as the teacher left it
    QApplication.processEvents()
    assert not player.narration_shown()

    item.trigger()  # the View menu's item brings the words back
    for _ in range(4):
        QApplication.processEvents()
    assert player.narration_shown() and item.isChecked()
    assert area.height() < before + player.narration.fontMetrics().lineSpacing()


def test_n_typed_into_a_field_is_a_letter_not_the_narration_key(make_window, qtbot):
    """The narration key has no modifier: a field being edited keeps its letters."""
    window = make_window()
    window.lessons.open_path(_builtin("01-blocks"))
    bench = window.show_panel("benchmarks")
    field = bench.controls.sizes_edit
    field.setFocus()
    field.clear()
    qtbot.keyClicks(field, "n")
    QApplication.processEvents()
    assert field.text() == "n"
    assert window.lessons.narration_shown()


def test_a_steps_note_leaves_the_status_bar_with_the_step(catalog_window):
    """A step's note (a GPU this machine lacks) is in the status bar while the step shows; the
    next step without a note takes it away, never leaving the last step's words there."""
    from explorer.lessons.builtin import builtin_paths

    window = catalog_window
    player = window.lessons
    player.open_path(next(p for p in builtin_paths() if p.stem.startswith("05")))
    player.show_step(0)
    assert player.note and window.statusBar().currentMessage() == player.note
    player.open_path(next(p for p in builtin_paths() if p.stem.startswith("09")))
    player.show_step(0)
    assert not player.note and window.statusBar().currentMessage() == ""
