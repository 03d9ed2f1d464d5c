"""The Benchmarks panel with the memory workloads: which cannot run on this machine is said before
any run, and the model's figure stands in its own column beside the measurement."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from explorer.bench.results import BenchPoint, save_last
from explorer.devices.discovery import Discovery, ProbeReport
from explorer.devices.model import CpuDevice, CudaGpu, Device
from explorer.ui.context import AppContext


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))


def _panel(qtbot, *extra: Device):
    from explorer.ui.bench_panel import BenchPanel

    cpu = CpuDevice(name="Test CPU", key="cpu")
    reports = [ProbeReport(probe="nvml", ok=False, message="NVML library not found.")]
    panel = BenchPanel(AppContext(Discovery(devices=[cpu, *extra], reports=reports)))
    qtbot.addWidget(panel)
    return panel


def _item_text(controls, name: str) -> str:
    return controls.workload_combo.itemText(controls.workload_combo.findData(name))


def test_without_a_gpu_the_gpu_only_workloads_say_so_before_a_run(qtbot):
    panel = _panel(qtbot)
    controls = panel.controls
    for name in ("shared_transpose", "branch", "utilization_trap", "two_gpus"):
        assert _item_text(controls, name).endswith("(not on this machine)"), name
        tip = controls.workload_combo.itemData(
            controls.workload_combo.findData(name), Qt.ItemDataRole.ToolTipRole
        )
        assert tip.startswith(f"{name} needs") and "NVML library not found" in tip
    controls.set_workload("utilization_trap")
    label = controls.cannot_run_label
    assert label.isVisibleTo(panel) and "Cannot run here: utilization_trap needs a GPU" in label.text()
    # the sizes field holds the GPU's defaults, and Start says what is missing instead of starting
    assert controls.sizes_edit.text() == "1, 8, 64, 512"
    assert not panel.start() and "needs a GPU chosen" in controls.message_label.text()
    controls.set_workload("strided_copy")
    assert (
        not label.isVisibleTo(panel) and _item_text(controls, "strided_copy") == "Strided copy (coalescing)"
    )
    panel.shutdown()


def test_with_a_gpu_nothing_is_marked_but_two_gpus(qtbot):
    panel = _panel(qtbot, CudaGpu(name="NVIDIA GeForce GTX 1650", index=0, key="cuda:0"))
    controls = panel.controls
    controls.set_workload("shared_transpose")
    assert not controls.cannot_run_label.isVisibleTo(panel)
    assert _item_text(controls, "shared_transpose") == "Shared-memory transpose (bank conflicts)"
    assert _item_text(controls, "two_gpus").endswith("(not on this machine)")
    panel.shutdown()


def _point(size: int, model: str = "", estimate: float | None = None) -> BenchPoint:
    return BenchPoint(
        "strided_copy",
        "cpu numpy strided",
        "cpu",
        size,
        f"stride={size}",
        median_s=1e-3,
        min_s=1e-3,
        spread_s=1e-5,
        repeats=5,
        throughput=20.0 / size,
        throughput_unit="GB/s",
        model=model,
        model_estimate=estimate,
        model_note="model, not a measurement: ..." if model else "",
    )


def test_the_model_column_shows_the_estimate_and_the_ratio_only_where_there_is_one(qtbot):
    from explorer.ui.bench.table import COLUMNS

    save_last([_point(1, "est. 40 GB/s", 40.0), _point(8, "est. 8.9 GB/s", 8.9)])
    panel = _panel(qtbot)
    panel.controls.set_workload("strided_copy")
    model = panel.table.model()
    column = COLUMNS.index("model")
    cells = [model.data(model.index(r, column)) for r in range(2)]
    assert cells == ["est. 40 GB/s (measured 0.50x)", "est. 8.9 GB/s (measured 0.28x)"]
    assert model.data(model.index(0, column), Qt.ItemDataRole.ToolTipRole).startswith(
        "model, not a measurement"
    )
    assert not panel.table.isColumnHidden(column)
    panel.shutdown()

    save_last([_point(1), _point(8)])
    panel = _panel(qtbot)
    panel.controls.set_workload("strided_copy")
    assert panel.table.isColumnHidden(column)
    panel.shutdown()
