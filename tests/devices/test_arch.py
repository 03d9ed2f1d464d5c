"""A present GPU gets its architecture, FP32 cores per SM and FP32 peak from its compute capability."""

from __future__ import annotations

from explorer.devices.arch import FP32_CORES_PER_SM, fill_from_compute_capability
from explorer.devices.catalog import load_catalog
from explorer.devices.discover import discover
from explorer.devices.model import CudaGpu
from tests.devices.fake_cuda import A100, make_fake_numba, make_fake_torch
from tests.devices.fake_nvml import make_fake_nvml


def test_present_gpu_shows_architecture_and_theoretical_peak():
    disc = discover(
        include_catalog=False,
        nvml=make_fake_nvml(),
        torch=make_fake_torch([A100]),
        numba=make_fake_numba([A100]),
    )
    (gpu,) = disc.present_gpus
    assert gpu.compute_capability == (8, 0)
    assert gpu.architecture == "Ampere"
    assert gpu.cuda_cores_per_sm == 64
    expected = gpu.sm_count * 64 * 2 * gpu.clock_sm_max_mhz / 1000
    assert gpu.fp32_peak_gflops == expected
    assert any("theoretical" in n for n in gpu.notes)
    assert gpu.fp32_peak_basis == "theoretical, from compute-capability tables"


def test_unknown_compute_capability_is_said_not_guessed():
    gpu = CudaGpu(name="Future GPU", compute_capability=(99, 0), sm_count=10, clock_sm_max_mhz=2000)
    fill_from_compute_capability(gpu)
    assert gpu.cuda_cores_per_sm is None and gpu.fp32_peak_gflops is None
    assert "99.0" in gpu.unavailable["cuda_cores_per_sm"]
    assert "architecture" in gpu.unavailable


def test_table_agrees_with_every_catalog_sheet():
    for sheet in load_catalog():
        if sheet.cuda_cores_per_sm is not None:
            assert FP32_CORES_PER_SM[sheet.compute_capability] == sheet.cuda_cores_per_sm, sheet.name
