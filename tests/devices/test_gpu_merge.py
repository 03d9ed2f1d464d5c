"""NVML and CUDA-runtime views are joined per physical GPU, by UUID or bus id, never by position."""

from __future__ import annotations

import dataclasses

from explorer.devices.discover import discover, merge_gpu_views, normalize_bus_id
from explorer.devices.model import CudaGpu
from tests.devices.fake_cuda import A100, GTX1650, make_fake_numba, make_fake_torch
from tests.devices.fake_nvml import make_fake_nvml


def test_bus_id_forms_compare_equal():
    assert (
        normalize_bus_id("00000000:41:00.0")
        == normalize_bus_id("0000:41:00.0")
        == normalize_bus_id("41:00.0")
    )
    assert normalize_bus_id("00000000:01:00.0") != normalize_bus_id("00000000:41:00.0")


def test_cuda_fastest_first_order_is_joined_to_nvml_bus_order(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    # NVML: 0 = GTX 1650 (bus 01), 1 = A100 (bus 41). CUDA: 0 = A100, 1 = GTX 1650.
    disc = discover(
        include_catalog=False,
        probe_cpu=False,
        nvml=make_fake_nvml(),
        torch=make_fake_torch([A100, GTX1650]),
        numba=make_fake_numba([A100, GTX1650]),
    )
    a100, gtx = disc.present_gpus
    assert (a100.key, a100.name, a100.nvml_index) == ("cuda:0", "NVIDIA A100-SXM4-40GB", 1)
    assert (gtx.key, gtx.name, gtx.nvml_index) == ("cuda:1", "NVIDIA GeForce GTX 1650", 0)
    # the A100's NVML facts, not the GTX's: its temperature is the unsupported one
    assert a100.live.temperature_c is None and gtx.live.temperature_c == 45.0
    assert a100.mig_mode == "disabled" and gtx.processes[0].pid == 4242
    assert a100.driver_version == "550.54.14"
    # runtime limits from torch, block/grid limits from numba, on the same device
    assert a100.limits.max_threads_per_sm == 2048 and a100.limits.max_block_dim == (1024, 1024, 64)
    assert "torch.cuda" in a100.source and "NVML" in a100.source


def test_join_falls_back_to_bus_id_when_uuids_are_missing():
    runtime = [CudaGpu(name="X", index=0, key="cuda:0", pci_bus_id="0000:41:00.0")]
    nvml = [
        CudaGpu(name="first", nvml_index=0, pci_bus_id="00000000:01:00.0", driver_version="a"),
        CudaGpu(name="second", nvml_index=1, pci_bus_id="00000000:41:00.0", driver_version="b"),
    ]
    (merged,) = merge_gpu_views(runtime, nvml)
    assert merged.nvml_index == 1 and merged.driver_version == "b"


def test_unmatched_runtime_device_says_live_readings_are_missing():
    runtime = [CudaGpu(name="X", index=0, key="cuda:0", uuid="abc")]
    (merged,) = merge_gpu_views(runtime, [dataclasses.replace(runtime[0], uuid="GPU-def", index=None)])
    assert merged.live is None and "live" in merged.unavailable


def test_nvml_only_gpus_are_listed_when_torch_is_cpu_only(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    disc = discover(
        include_catalog=False,
        probe_cpu=False,
        nvml=make_fake_nvml(),
        torch=make_fake_torch(None),
        numba=make_fake_numba(None),
    )
    (gpu,) = disc.present_gpus
    assert (gpu.key, gpu.name) == ("cuda:0", "NVIDIA A100-SXM4-40GB")
    assert gpu.compute_capability == (8, 0)  # NVML reports it too
    assert any("cannot run the app's GPU benchmarks" in n for n in gpu.notes)
    assert disc.why_no_gpu() is None


def test_cuda_visible_devices_hides_a_gpu_from_the_merged_list(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-11111111")
    disc = discover(
        include_catalog=False,
        probe_cpu=False,
        nvml=make_fake_nvml(),
        torch=make_fake_torch([GTX1650]),
        numba=make_fake_numba([GTX1650]),
    )
    assert [(d.key, d.name) for d in disc.present_gpus] == [("cuda:0", "NVIDIA GeForce GTX 1650")]


def test_mig_instance_joins_its_parent_by_bus_id():
    runtime = [CudaGpu(name="MIG 1g.10gb", index=0, key="cuda:0", uuid="MIG-1234", pci_bus_id="0000:81:00.0")]
    nvml = [CudaGpu(name="H100", nvml_index=3, uuid="GPU-9999", pci_bus_id="00000000:81:00.0")]
    (merged,) = merge_gpu_views(runtime, nvml)
    assert merged.nvml_index == 3


def test_runtime_gpu_without_nvml_says_why_there_are_no_live_readings():
    runtime = [CudaGpu(name="Orin", index=0, key="cuda:0", uuid="abc")]
    (merged,) = merge_gpu_views(runtime, [])
    assert "NVML" in merged.unavailable["live"] and "not available" in merged.unavailable["live"]


def test_numba_alone_provides_the_runtime_view_when_torch_is_cpu_only(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    disc = discover(
        include_catalog=False,
        probe_cpu=False,
        nvml=make_fake_nvml(),
        torch=make_fake_torch(None),
        numba=make_fake_numba([A100, GTX1650]),
    )
    a100, gtx = disc.present_gpus
    assert (a100.key, a100.nvml_index, gtx.key, gtx.nvml_index) == ("cuda:0", 1, "cuda:1", 0)
    assert a100.limits.max_threads_per_block == 1024 and a100.live.utilization_gpu_pct == 97.0
    assert not any("cannot run the app's GPU benchmarks" in n for n in a100.notes)
    torch_report = next(r for r in disc.reports if r.probe == "torch")
    assert "built without CUDA" in torch_report.message


def test_the_memory_total_is_nvml_s_the_one_nvidia_smi_shows():
    """The H100 run: torch's total_memory (85,017,493,504 B) leaves out what the driver keeps, so
    the app disagreed with nvidia-smi's 81,559 MiB; NVML's total is the card's."""

    def torch_view() -> list[CudaGpu]:
        return [CudaGpu(name="H100", index=0, key="cuda:0", uuid="GPU-1", memory_total_bytes=85_017_493_504)]

    nvml = [CudaGpu(name="H100", nvml_index=0, uuid="GPU-1", memory_total_bytes=81_559 * 2**20)]
    (merged,) = merge_gpu_views(torch_view(), nvml)
    assert merged.memory_total_bytes == 85_520_809_984
    # without NVML, torch's figure stands
    (alone,) = merge_gpu_views(torch_view(), [])
    assert alone.memory_total_bytes == 85_017_493_504
