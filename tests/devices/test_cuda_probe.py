"""The CUDA-runtime probes (torch, numba) and the reasons they give when no GPU is there."""

from __future__ import annotations

import sys

from explorer.devices.cuda import probe_numba, probe_torch
from tests.devices.fake_cuda import A100, GTX1650, make_fake_numba, make_fake_torch


def test_cpu_only_torch_says_it_was_built_without_cuda():
    devices, report = probe_torch(make_fake_torch(None))
    assert devices == [] and not report.ok
    assert "torch was built without CUDA (CPU-only build 2.13.0+cpu)" in report.message


def test_torch_not_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` raise ImportError
    devices, report = probe_torch(None)
    assert devices == [] and report.message.startswith("torch is not installed")


def test_cuda_torch_without_gpu_names_the_likely_causes(monkeypatch):
    torch = make_fake_torch(None)
    torch.version.cuda = "12.6"
    torch.__version__ = "2.13.0+cu126"
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    _, report = probe_torch(torch)
    assert "built for CUDA 12.6 but finds no usable GPU" in report.message
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    _, report = probe_torch(torch)
    assert "hides every GPU" in report.message


def test_torch_properties_become_limits_and_identity():
    devices, report = probe_torch(make_fake_torch([A100, GTX1650]))
    assert report.ok and report.devices_found == 2
    a100 = devices[0]
    assert (a100.key, a100.name, a100.compute_capability, a100.sm_count) == (
        "cuda:0",
        "NVIDIA A100-SXM4-40GB",
        (8, 0),
        108,
    )
    assert a100.pci_bus_id == "0000:41:00.0"
    assert a100.limits.max_threads_per_sm == 2048
    assert a100.limits.max_smem_per_block_optin_bytes == 163 * 1024
    assert a100.limits.l2_cache_bytes == 40 * 1024**2
    assert a100.limits.warp_size == 32


def test_numba_without_driver_says_driver_not_found():
    devices, report = probe_numba(make_fake_numba(None))
    assert devices == [] and not report.ok
    assert report.message.startswith("CUDA driver not found")


def test_numba_attributes_fill_block_and_grid_limits():
    devices, report = probe_numba(make_fake_numba([GTX1650]))
    (dev,) = devices
    assert report.ok and dev.name == "NVIDIA GeForce GTX 1650"  # bytes from numba decoded
    assert dev.limits.max_threads_per_block == 1024
    assert dev.limits.max_block_dim == (1024, 1024, 64)
    assert dev.limits.max_grid_dim == (2147483647, 65535, 65535)
    assert dev.limits.max_regs_per_block == 65536
    assert dev.sm_count == 16 and dev.memory_bus_width_bits == 128
    assert dev.clock_memory_max_mhz == 4001
    # 2 x 4001 MHz x 128 bit / 8 = 128.0 GB/s, the GTX 1650's published figure
    assert dev.memory_bandwidth_gbps == 128.0
    assert dev.memory_bandwidth_basis == "theoretical, from memory clock and bus width"


def test_simulator_is_reported_not_probed(monkeypatch):
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    devices, report = probe_numba(None)
    assert devices == [] and "simulator" in report.message
