"""The Benchmarks panel's remote side that needs no remote: a run queued behind another run on
its GPU says so, and points measured elsewhere name their machine in the table and the title.
(The run over ssh itself is tests/remote/test_window.py, against the real loopback sshd.)"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from explorer.bench.results import BenchPoint
from explorer.devices.discovery import Discovery
from explorer.devices.model import CpuDevice
from explorer.ui.context import AppContext


@pytest.fixture
def panel(qtbot, tmp_path, monkeypatch):
    from explorer.ui.bench_panel import BenchPanel

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    p = BenchPanel(AppContext(Discovery(devices=[CpuDevice(name="Test CPU", key="cpu")], reports=[])))
    qtbot.addWidget(p)
    p.controls.ceilings_combo.setCurrentIndex(p.controls.ceilings_combo.findData("skip"))
    yield p
    p.shutdown()


@pytest.mark.slow
def test_the_engines_waiting_line_is_shown_while_the_run_queues(panel, qtbot, tmp_path, monkeypatch):
    """Another run (a process of its own) holds the GPU's turn: the progress bar says who holds it
    and where this run stands; once that run leaves, the points come and replace the line."""
    import dataclasses

    from explorer.gpuqueue import share as gpushare
    from tests.remote.queueing import QueueRun, user_name

    monkeypatch.setenv(gpushare.LOCK_DIR_ENV, str(tmp_path))
    key, _ = gpushare.gpu_identity("cuda:0")  # no NVML here: the ordinal's key
    holder = QueueRun(tmp_path, key, "train")
    try:
        holder.ask("take", "held")
        holder.ask("busy", "busy")
        controls = panel.controls
        form_plan = controls.build_plan
        # this laptop has no GPU to tick: the form's plan, on cuda:0, with the hidden test workload
        # whose GPU variant is a plain Python sum
        monkeypatch.setattr(
            controls,
            "build_plan",
            lambda: dataclasses.replace(
                form_plan(), workload="_crash_test", devices=["cuda:0"], sizes=[1, 3]
            ),
        )
        assert panel.start()
        qtbot.waitUntil(
            lambda: panel.progress_bar.format().startswith("waiting for cuda:0: "), timeout=60_000
        )
        # a few words on the bar, the whole sentence under it and on hover
        assert panel.progress_bar.format().startswith(f"waiting for cuda:0: {user_name()} has it; ")
        said = panel.wait_label.text()
        assert panel.wait_label.isVisibleTo(panel) and panel.progress_bar.toolTip() == said
        assert f"{user_name()} has held it since " in said and "(train, " in said, said
        holder.ask("idle", "idle")
        holder.ask("leave", "left")
        qtbot.waitUntil(lambda: not panel.running, timeout=120_000)
    finally:
        holder.close()
    assert panel.progress_bar.format().startswith("done: 2 / 2")  # replaced once points came
    assert not panel.wait_label.isVisibleTo(panel)
    assert not panel.wait_label.isVisibleTo(panel)
    assert [p.ok for p in panel.points] == [True, True]


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
