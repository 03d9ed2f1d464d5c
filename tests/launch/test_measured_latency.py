""" "L measured on this GPU": the latency view's L from the edited GPU's own stored latency ladder
(its DRAM level), offered only where one is stored for this machine, and said why otherwise."""

from __future__ import annotations

import pytest

from explorer.devices import roofs as device_roofs
from explorer.devices.model import CudaGpu
from explorer.errors import UserError
from explorer.launch.config import Dim3, LaunchConfig
from explorer.launch.latency import MEASURED_PRESET_KEY, preset_from_ladder
from explorer.launch.session import DeviceChoice, LaunchSession, LaunchSetup
from explorer.launch.time_views import LatencySettings, TimeViews
from explorer.roofs import store
from explorer.roofs.latency import LatencyLadder, LatencyRung
from explorer.roofs.store import MeasuredRoof

GIB = 1 << 30


def _gpu(index: int, name: str = "NVIDIA H200") -> CudaGpu:
    return CudaGpu(
        name=name,
        index=index,
        key=f"cuda:{index}",
        compute_capability=(9, 0),
        sm_count=132,
        memory_total_bytes=141 * GIB,
        driver_version="570.1",
        source="test",
    )


def _ladder(dram: tuple[float, ...] = (700.0, 720.0, 760.0)) -> LatencyLadder:
    cycles = (34.0, 35.0, 36.0, 240.0, 250.0, 260.0, *dram)
    rungs = tuple(LatencyRung(4096 << k, c, c / 1.98) for k, c in enumerate(cycles))
    return LatencyLadder("NVIDIA H200", 1000.0, rungs, 30.0, 1980.0, "pointer chase (test)", 20000)


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    store.take_notice()


def _store(gpu: CudaGpu, ladder: LatencyLadder | None) -> None:
    fp = device_roofs.fingerprint(gpu)
    assert fp is not None
    store.save(MeasuredRoof(gpu.key, fp, 1000.0, latency=ladder))


def _model(*gpus: CudaGpu) -> TimeViews:
    session = LaunchSession([DeviceChoice(g) for g in gpus])
    session.load([LaunchSetup(gpus[0].key, LaunchConfig(Dim3(264), Dim3(256)))])
    m = TimeViews(session)
    m.set_view("latency")
    return m


def test_the_stored_dram_level_becomes_l_and_the_model_runs_with_it():
    measured, bare = _gpu(0), _gpu(1, "NVIDIA H100 PCIe")
    _store(measured, _ladder())
    m = _model(measured, bare)
    preset = m.measured_preset
    assert preset is not None and preset.key == MEASURED_PRESET_KEY
    assert preset.latency_cycles == 720  # the median of the DRAM run
    assert "pointer-chase ladder" in preset.source and "1980 MHz" in preset.source
    m.use_measured_latency()
    assert m.preset == preset and m.latency.config.mem_latency == 719
    # another GPU without a ladder: no measured L, said why, and L falls back to a published one
    m.session.edit(LaunchSetup(bare.key, LaunchConfig(Dim3(264), Dim3(256))))
    assert (
        m.measured_preset is None
        and "no latency ladder is stored for NVIDIA H100 PCIe" in m.measured_preset_why
    )
    assert m.latency_settings.preset == LatencySettings().preset and m.latency is not None
    with pytest.raises(UserError, match="no latency measured on this GPU: no latency ladder"):
        m.use_measured_latency()
    with pytest.raises(UserError, match="not one of"):
        m.set_latency(LatencySettings(MEASURED_PRESET_KEY, 9, "gto"))


def test_a_ladder_stored_after_the_page_opened_is_read_again():
    gpu = _gpu(0)
    m = _model(gpu)
    assert m.measured_preset is None
    _store(gpu, _ladder((900.0, 910.0, 920.0)))
    m.reload_measured_latency()
    assert m.measured_preset is not None and m.measured_preset.latency_cycles == 910


def test_a_ladder_too_short_to_tell_dram_offers_nothing():
    short = LatencyLadder("NVIDIA H200", 1.0, (LatencyRung(4096, 30.0, 15.0),), None, 2000.0, "m", 10)
    assert preset_from_ladder(short) is None
    gpu = _gpu(0)
    _store(gpu, short)
    m = _model(gpu)
    assert m.measured_preset is None and "too few rungs" in m.measured_preset_why
