"""The window's files (PNG of the plots, the screenshot, the device list) are written whole:
encoded in memory, then replaced in one step, so a full disk keeps the old file."""

from __future__ import annotations

import errno
import os
from argparse import Namespace

import pytest
from PySide6.QtGui import QImage

from explorer import atomicwrite
from explorer.errors import UserError
from explorer.ui.context import AppContext
from tests.points import cpu_matmul_point

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _points():
    return [cpu_matmul_point(n, float(n), median_s=1e-6 * n) for n in (64, 128, 256)]


@pytest.fixture
def full_disk(monkeypatch):
    real_write = os.write

    def half_then_full(fd, data):
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def apply():
        monkeypatch.setattr(atomicwrite.os, "write", half_then_full)

    return apply


@pytest.fixture
def bench_panel(qtbot, tmp_path, monkeypatch, no_gpu_discovery):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    from explorer.ui.bench_panel import BenchPanel

    panel = BenchPanel(AppContext(no_gpu_discovery))
    qtbot.addWidget(panel)
    panel.resize(1100, 700)
    panel.show()
    panel.set_run(_points())
    qtbot.waitExposed(panel)
    return panel


def test_the_plot_png_is_written_whole_and_a_full_disk_keeps_the_old_one(bench_panel, tmp_path, full_disk):
    out = tmp_path / "plot.png"
    assert bench_panel.export_png(out) == out
    good = out.read_bytes()
    assert good[:8] == PNG_MAGIC and not QImage(str(out)).isNull()
    full_disk()
    with pytest.raises(UserError, match="No space left on device"):
        bench_panel.export_png(out)
    assert out.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "home") == ["plot.png"]


def test_the_plot_png_refuses_a_missing_folder_without_making_it(bench_panel, tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        bench_panel.export_png(tmp_path / "nope" / "plot.png")
    assert not (tmp_path / "nope").exists()


def test_the_device_list_export_keeps_the_old_file_on_a_full_disk(
    qtbot, tmp_path, full_disk, two_gpu_discovery
):
    from explorer.ui.devices_panel import DevicesPanel

    panel = DevicesPanel(AppContext(two_gpu_discovery))
    qtbot.addWidget(panel)
    out = tmp_path / "devices.json"
    panel.export(out)
    good = out.read_bytes()
    full_disk()
    with pytest.raises(UserError, match="cannot write the device list"):
        panel.export(out)
    assert out.read_bytes() == good and sorted(os.listdir(tmp_path)) == ["devices.json"]
    panel.shutdown()


def test_the_screenshot_is_written_whole(qapp, tmp_path, capsys, full_disk, monkeypatch):
    from explorer.commands import gui

    monkeypatch.setattr(
        gui, "render_window", lambda panel, size, scale=100, lesson=None, view="": _solid(size)
    )
    out = tmp_path / "shot.png"
    assert gui.run_screenshot(Namespace(panel="devices", out=str(out), size="800x600")) == 0
    good = out.read_bytes()
    assert QImage(str(out)).size().width() == 800
    full_disk()
    with pytest.raises(UserError, match="cannot write the screenshot"):
        gui.run_screenshot(Namespace(panel="devices", out=str(out), size="800x600"))
    assert out.read_bytes() == good and sorted(os.listdir(tmp_path)) == ["shot.png"]


def _solid(size):
    image = QImage(size[0], size[1], QImage.Format.Format_ARGB32)
    image.fill(0xFF336699)
    return image
