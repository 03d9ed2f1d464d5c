"""The Benchmarks panel's remote side that needs no remote: a run queued behind another run on
its GPU says so, and points measured elsewhere name their machine in the table and the title.
(The run over ssh itself is tests/remote/test_window.py, against the real loopback sshd.)"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from explorer.bench.results import BenchPoint
from explorer.devices.model import CpuDevice, Discovery
from explorer.ui.context import AppContext

WAITING = "waiting: another run is using this GPU (3s)"


@pytest.fixture
def panel(qtbot, tmp_path, monkeypatch):
    from explorer.ui.bench_panel import BenchPanel

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    p = BenchPanel(AppContext(Discovery(devices=[CpuDevice(name="Test CPU", key="cpu")], reports=[])))
    qtbot.addWidget(p)
    p.controls.ceilings_combo.setCurrentIndex(p.controls.ceilings_combo.findData("skip"))
    yield p
    p.shutdown()


def test_the_engines_waiting_line_is_shown_while_the_run_queues(panel, qtbot):
    panel.controls.set_workload("matmul")
    panel.controls.sizes_edit.setText("32, 64, 128, 256")
    assert panel.start()
    stream = panel._stream
    qtbot.waitUntil(lambda: stream._run is not None, timeout=10_000)
    # the engine calls this about once a second while another run holds the GPU's lock
    stream._run.on_waiting(WAITING)
    assert panel.progress_bar.format() == WAITING
    qtbot.waitUntil(lambda: not panel.running, timeout=120_000)
    assert panel.progress_bar.format().startswith("done: 4 / 4")  # replaced once points came


def test_points_from_a_remote_machine_name_it(panel):
    point = BenchPoint(
        workload="matmul", variant="cuda:0", device="cuda:0", size=64, size_label="n=64", median_s=1e-4,
        host="gpu-lab",
    )  # fmt: skip
    panel.set_run([point])
    model = panel.table.model()
    columns = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    assert model.data(model.index(0, columns.index("device"))) == "cuda:0 ON gpu-lab"
    assert panel.plot.main.getPlotItem().titleLabel.text.startswith("Matrix multiply (float32) ON gpu-lab")
    # this machine's roofs are not drawn under another machine's points
    assert panel.roofline.roofs == []
    local = BenchPoint(
        workload="matmul", variant="cpu", device="cpu", size=64, size_label="n=64", median_s=1e-4
    )
    panel.set_run([local])
    assert [r.device for r in panel.roofline.roofs] == ["cpu"]
