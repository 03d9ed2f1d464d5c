"""The printed handout: a PDF page (or more) per step, each step's first page carrying the
figure the player showed, on A4 or Letter; from the window's File menu and from the command line
with no display; bad input in one line. The PDFs are read with tests/pdf_pages.py (no poppler)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF
from PySide6.QtGui import QImage, QPageLayout, QPageSize, QPainter, QPdfWriter
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox

from explorer import cli
from explorer.devices.catalog import load_catalog
from explorer.devices.discovery import Discovery, ProbeReport
from explorer.devices.model import CpuDevice
from explorer.lessons import FORMAT_NAME, load_lesson
from explorer.lessons.builtin import open_lesson
from explorer.ui import handout
from explorer.ui.context import AppContext
from explorer.ui.main_window import MainWindow
from explorer.ui.theme import current_theme
from tests.pdf_pages import pages

ROOT = Path(__file__).resolve().parents[2]
#: a page's size in points, as PDF viewers and printers read its MediaBox
A4_PT = (595.0, 842.0)
LETTER_PT = (612.0, 792.0)


def _discovery() -> Discovery:
    return Discovery(
        devices=[CpuDevice(name="Test CPU", key="cpu"), *load_catalog()],
        reports=[ProbeReport("nvml", False, "NVML library not found: no NVIDIA driver is installed.")],
    )


@pytest.fixture
def window(qtbot):
    win = MainWindow(AppContext(_discovery()), discover_on_show=False)
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.close()


def _lesson_file(tmp_path: Path, narration: str = "Look at the SMs.") -> Path:
    """Three steps on three pages: a launch, a memory access, and a step the page cannot show."""
    steps = [
        {"panel": "visualizer", "title": "Seven waves", "narration": narration,
         "state": {"device": "1650", "grid": "98", "block": "1024", "n": "100000", "wave": 2}},
        {"panel": "memory", "title": "Stride 32", "narration": "Sectors.",
         "state": {"view": "coalescing", "stride": 32}},
        {"panel": "visualizer", "title": "Nowhere", "narration": "Still printed.",
         "state": {"device": "no such gpu"}},
    ]  # fmt: skip
    path = tmp_path / "lesson.json"
    path.write_text(
        json.dumps({"format": FORMAT_NAME, "version": 1, "title": "Handout test", "steps": steps})
    )
    return path


def _page_bytes(images: int) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setPageLayout(
        QPageLayout(QPageSize(QPageSize.PageSizeId.A5), QPageLayout.Orientation.Landscape, QMarginsF())
    )
    painter = QPainter(writer)
    painter.drawText(100, 100, "words only")
    for i in range(images):
        image = QImage(40 + i, 30, QImage.Format.Format_RGB32)
        image.fill(0x336699 + i)
        painter.drawImage(200 * i, 200, image)
    painter.end()
    buffer.close()
    return bytes(data.data())


@pytest.mark.parametrize("images", [0, 1, 2])
def test_the_pdf_reader_counts_the_images_a_page_draws(images, tmp_path, qapp):
    path = tmp_path / "x.pdf"
    path.write_bytes(_page_bytes(images))
    (page,) = pages(path)
    assert [size[0] for size in page.images] == [40 + i for i in range(images)]
    assert round(page.width_pt) > round(page.height_pt)  # A5 landscape: 595 x 420


@pytest.mark.parametrize(("page_size", "points"), [("A4", A4_PT), ("Letter", LETTER_PT)])
def test_each_step_gets_a_page_with_its_figure_on_the_paper_asked(window, tmp_path, page_size, points):
    lesson = load_lesson(_lesson_file(tmp_path))
    out = tmp_path / "handout.pdf"
    assert handout.write_handout(window, lesson, out, page_size) == out
    found = pages(out)
    assert len(found) == len(lesson.steps)
    for page in found:
        assert (round(page.width_pt), round(page.height_pt)) == points
        (figure,) = page.images
        # the page as the player lays it out, painted at twice its pixels
        assert figure[0] == window.tabs.currentWidget().width() * handout.FIGURE_DPR
    assert not list(tmp_path.glob("*.tmp*"))  # written in one step, nothing left beside it


def test_long_narration_flows_onto_more_pages_and_each_step_still_starts_with_its_figure(window, tmp_path):
    long = "\n\n".join(f"Paragraph {i}: " + "the waves and the tail, " * 30 for i in range(40))
    lesson = load_lesson(_lesson_file(tmp_path, narration=long))
    out = tmp_path / "long.pdf"
    handout.write_handout(window, lesson, out, "A4")
    found = pages(out)
    assert len(found) > len(lesson.steps)
    assert found[0].images  # the first step's page carries its figure, the words go on after it
    assert sum(1 for page in found if page.images) == len(lesson.steps)
    assert not found[1].images  # the first step's words go on over the next page


def test_the_window_is_given_back_as_it_was(window, tmp_path):
    played = open_lesson("02")
    window.lessons.open(played, 2)
    window.set_theme("dark")
    handout.write_handout(window, load_lesson(_lesson_file(tmp_path)), tmp_path / "h.pdf", "A4")
    assert window.lessons.lesson is played and window.lessons.index == 2
    assert window.current_panel_key() == "visualizer"
    assert window.panels["visualizer"].session.compare  # step 3 of lesson 02 compares two GPUs
    assert not window.lessons.body.isHidden()  # the narration the teacher had open is open again
    assert current_theme().name == "dark"
    window.set_theme("light")


def test_a_teachers_own_launch_is_not_lost_to_the_handouts_steps(window, tmp_path):
    vis = window.show_panel("visualizer")
    mine = vis.lesson_state()
    assert mine is not None
    mine.grid, mine.block, mine.regs = "300", "192", "64"
    vis.show_lesson_state(mine)
    before = vis.lesson_state()
    handout.write_handout(window, load_lesson(_lesson_file(tmp_path)), tmp_path / "h.pdf", "A4")
    assert window.lessons.lesson is None and window.lessons.isHidden()
    assert vis.lesson_state() == before


def test_file_menu_exports_the_lesson_being_played(window, tmp_path, monkeypatch):
    played = load_lesson(_lesson_file(tmp_path))
    window.lessons.open(played, 1)
    file_menu = window.menuBar().actions()[0].menu()
    action = next(a for a in file_menu.actions() if a.text() == "Export &handout…")
    asked: list[list[str]] = []

    def get_item(_parent, _title, _label, items, *_args):
        asked.append(list(items))
        return items[0], True

    out = tmp_path / "from-menu"  # ".pdf" is added, as a save dialog's filter would
    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(get_item))
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(out), "PDF, Letter (*.pdf)"))
    )
    action.trigger()
    assert asked[0][0] == "The lesson being played: Handout test"
    assert any(item.startswith("Waves and the tail effect") for item in asked[0])  # the built-in ones
    written = out.with_suffix(".pdf")
    found = pages(written)
    assert len(found) == len(played.steps) and all(page.images for page in found)
    assert (round(found[0].width_pt), round(found[0].height_pt)) == LETTER_PT
    assert str(written) in window.statusBar().currentMessage()
    assert window.lessons.index == 1


def test_file_menu_offers_the_built_in_lessons_when_none_is_played(window, tmp_path, monkeypatch):
    lesson = open_lesson("01")
    wanted = f"{lesson.title} ({len(lesson.steps)} steps)"
    offered: list[str] = []

    def get_item(_parent, _title, _label, items, *_args):
        offered.extend(items)
        return wanted, True

    out = tmp_path / "blocks.pdf"
    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(get_item))
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(out), "PDF, A4 (*.pdf)"))
    )
    assert handout.export_handout_dialog(window) == out
    assert offered[0] == wanted and offered[-1] == "A lesson file…"  # nothing played: no such line first
    found = pages(out)
    assert len(found) == len(lesson.steps) and all(page.images for page in found)
    assert (round(found[0].width_pt), round(found[0].height_pt)) == A4_PT
    assert window.lessons.lesson is None


def test_a_handout_that_cannot_be_written_is_a_message_and_the_window_goes_on(window, tmp_path, monkeypatch):
    said: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda _p, _t, text: said.append(text)))
    lesson = load_lesson(_lesson_file(tmp_path))
    (tmp_path / "a-file").write_text("x")
    assert handout.export_handout_to(window, lesson, tmp_path / "a-file" / "h.pdf", "A4") is None
    assert len(said) == 1 and "a-file" in said[0] and "\n" not in said[0]
    folder = tmp_path / "folder.pdf"
    folder.mkdir()
    assert handout.export_handout_to(window, lesson, folder, "A4") is None
    assert "it is a folder" in said[1]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (
            ["--handout", "no-such-lesson", "--out", "h.pdf"],
            "no lesson file or built-in lesson 'no-such-lesson'",
        ),
        (["--handout", "02", "--out", "folder.pdf"], "cannot write 'folder.pdf': it is a folder"),
        (["--handout", "02", "--out", "a-file/h.pdf"], "cannot write 'a-file/h.pdf'"),
        (["--handout", "02", "--out", "missing/h.pdf"], "the folder 'missing' does not exist"),
        (["--handout", "02", "--out", "h.png"], "--out must name a .pdf file"),
        (["--handout", "02", "--out", "h.pdf", "--page-size", "A3"], "--page-size 'A3' is not a paper size"),
        (["--handout", "02"], "--handout needs --out FILE.pdf"),
        (["--out", "h.pdf"], "--out needs --handout LESSON"),
        (["--handout", "02", "--out", "h.pdf", "--check", "01"], "without --check and --json"),
    ],
)
def test_bad_handout_arguments_are_one_line_and_exit_2(argv, words, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder.pdf").mkdir()
    (tmp_path / "a-file").write_text("x")
    assert cli.main(["lessons", *argv]) == 2  # refused before Qt loads: nothing rendered
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "h.pdf").exists()


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """The command as a user runs it, with no display at all: it must go offscreen by itself."""
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["DEVICE_EXPLORER_HOME"] = str(cwd / "home")
    return subprocess.run(
        [sys.executable, "-m", "explorer", "lessons", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.mark.slow
def test_cli_prints_a_built_in_lesson_without_a_display(tmp_path):
    done = _cli(["--handout", "02", "--out", "waves.pdf"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "waves.pdf"
    assert "Traceback" not in done.stderr
    found = pages(tmp_path / "waves.pdf")
    assert len(found) >= len(open_lesson("02").steps)
    assert sum(1 for page in found if page.images) == len(open_lesson("02").steps)
    assert {(round(p.width_pt), round(p.height_pt)) for p in found} == {A4_PT}


@pytest.mark.slow
def test_cli_prints_on_letter_and_notes_a_step_that_cannot_be_shown(tmp_path):
    lesson = _lesson_file(tmp_path)
    lesson.write_text(lesson.read_text().replace('"no such gpu"}', '"1650", "grid": "x"}'))
    done = _cli(["--handout", str(lesson), "--out", "h.pdf", "--page-size", "letter"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "note: step 3: grid" in done.stderr and "Traceback" not in done.stderr
    found = pages(tmp_path / "h.pdf")
    assert len(found) == 3 and all(page.images for page in found)
    assert {(round(p.width_pt), round(p.height_pt)) for p in found} == {LETTER_PT}
