"""Utilization truth in the window: a launch run for real on this machine's GPU hands its
predicted occupancy (a typed record, through the app context) to the Devices page's live view,
which shows it beside GPM's SM occupancy over the windows that covered the run."""

from __future__ import annotations

import time

import numpy as np

from explorer.devices.discovery import Discovery
from explorer.devices.live import LiveReading
from explorer.devices.model import CudaGpu, CudaLimits
from explorer.launch.config import Dim3, LaunchConfig
from explorer.launch.occupancy_truth import PredictedOccupancy
from explorer.launch.schedule import plan_launch
from explorer.launch.session import LaunchSetup
from explorer.launch_runs.realrun import RealRunResult
from explorer.ui.context import AppContext
from explorer.ui.live_monitor import LiveHistory


def _gpu() -> CudaGpu:
    return CudaGpu(
        name="NVIDIA H200",
        index=0,
        key="cuda:0",
        nvml_index=0,
        compute_capability=(9, 0),
        sm_count=132,
        memory_total_bytes=141 << 30,
        limits=CudaLimits(max_threads_per_block=1024, warp_size=32),
        driver_version="570.1",
        source="test",
    )


def test_a_gpu_run_for_real_sends_its_predicted_occupancy_through_the_context(qtbot, monkeypatch):
    from explorer.ui.visualizer import realrun_view
    from explorer.ui.visualizer.panel import VisualizerPanel

    gpu = _gpu()
    context = AppContext(Discovery(devices=[gpu], reports=[]))
    config = LaunchConfig(Dim3(264), Dim3(256), 0, 64)

    def fake_run(cfg, **_kw):  # the GPU run, as its child would answer
        n = cfg.grid.count * cfg.block.count
        zeros = np.zeros(n, dtype=np.int64)
        return RealRunResult(
            (264, 1, 1), (256, 1, 1), n, "gpu", gpu.name, zeros, zeros, np.ones(n, np.int32), True, 0.002, 1.5
        )

    monkeypatch.setattr(realrun_view, "run_real", fake_run)
    panel = VisualizerPanel(context)
    qtbot.addWidget(panel)
    try:
        panel.session.edit(LaunchSetup(gpu.key, config))
        panel.realrun_view.set_backend(False, gpu.name)
        with qtbot.waitSignal(context.occupancy_predicted, timeout=60_000) as got:
            panel.realrun_view.run_or_stop()
        p = got.args[0]
        plan = plan_launch(config, gpu)
        assert isinstance(p, PredictedOccupancy) and context.predictions[gpu.key] is p
        assert p.config == config and p.occupancy_pct == 100 * plan.occupancy.occupancy
        assert p.busy_s == 0.002 and p.started_at <= p.ended_at <= time.time()
    finally:
        panel.shutdown()


def test_the_live_view_shows_the_prediction_beside_gpm(qtbot):
    from explorer.ui.live_plot import LiveView

    gpu = _gpu()
    history = LiveHistory()
    view = LiveView(history, gpu)
    qtbot.addWidget(view)
    assert not view.prediction_label.isVisibleTo(view)
    plan = plan_launch(LaunchConfig(Dim3(264), Dim3(256), 0, 64), gpu)
    p = PredictedOccupancy.from_plan(gpu.key, gpu.name, plan, 0.5, 100.2, 100.9)
    view.set_prediction(PredictedOccupancy.from_plan("cuda:1", "other", plan, 0.5, 1, 2))  # not this GPU's
    assert view.prediction is None
    view.set_prediction(p)
    assert view.prediction_label.isVisibleTo(view)
    assert "waiting for the GPM reading" in view.prediction_label.text()
    history._record(gpu.key, LiveReading(timestamp_s=100.0, sm_occupancy_pct=0.0))
    history._record(gpu.key, LiveReading(timestamp_s=101.0, sm_occupancy_pct=20.0))
    history.updated.emit()
    text = view.prediction_label.text()
    expected = p.occupancy_pct * 0.5
    assert f"{p.occupancy_pct:.0f} % while the kernel runs" in text
    assert f"expected {p.occupancy_pct:.0f} % x 0.5 s / 1.0 s = {expected:.2f} %" in text
    assert "GPM read 20.0 %" in text
