"""The Devices page's truth on a real GPU: discovery against torch and the driver, devices --json,
the live readings (PCIe traffic, and SM activity and occupancy on Hopper and newer), self-test."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
REPO = Path(__file__).resolve().parents[2]


def test_discovery_merges_nvml_and_cuda_into_one_record_that_agrees_with_torch(gpu):
    import torch

    props = torch.cuda.get_device_properties(gpu.index)
    assert gpu.usable and gpu.key == f"cuda:{gpu.index}"
    assert gpu.name == props.name
    assert gpu.compute_capability == (props.major, props.minor)
    assert gpu.sm_count == props.multi_processor_count
    assert gpu.nvml_index is not None and gpu.uuid and gpu.driver_version
    assert gpu.limits is not None and gpu.limits.max_threads_per_block == 1024
    assert gpu.fp32_peak_gflops and gpu.memory_bandwidth_gbps  # the roofline's theoretical roofs
    assert not gpu.unexplained(), gpu.unexplained()


def test_devices_json_lists_the_gpu_with_every_live_reading_or_its_reason(gpu):
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "devices", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    record = next(d for d in json.loads(proc.stdout)["devices"] if d["key"] == gpu.key)
    live = record["live"]
    for field in (
        "utilization_gpu_pct",
        "memory_used_bytes",
        "pcie_rx_bytes_per_s",
        "pcie_tx_bytes_per_s",
        "sm_activity_pct",
    ):
        assert live[field] is not None or live["unavailable"].get(field), field
    if gpu.compute_capability >= (9, 0):
        assert live["sm_activity_pct"] is not None, live["unavailable"].get("sm_activity_pct")


def test_a_live_reading_has_pcie_traffic_or_says_why(gpu):
    from explorer.devices.nvml import NvmlSession

    with NvmlSession() as session:
        live = session.read_live(gpu.nvml_index)
    assert live.utilization_gpu_pct is not None and live.memory_total_bytes
    for field in ("pcie_rx_bytes_per_s", "pcie_tx_bytes_per_s"):
        value = getattr(live, field)
        assert (value is not None and value >= 0) or live.unavailable.get(field), field


def _busy(seconds: float, work) -> threading.Thread:
    def loop() -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            work()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def test_nvml_counts_a_pinned_copy_in_the_pcie_traffic(gpu):
    import torch

    from explorer.devices.nvml import NvmlSession

    host = torch.empty(256 << 20, dtype=torch.uint8, pin_memory=True)
    dev = torch.empty_like(host, device=gpu.key)

    def copy() -> None:
        dev.copy_(host, non_blocking=True)
        torch.cuda.synchronize()

    thread = _busy(1.5, copy)
    readings = []
    with NvmlSession() as session:
        while thread.is_alive():
            live = session.read_live(gpu.nvml_index)
            if live.pcie_rx_bytes_per_s is None:
                pytest.skip(f"NVML gives no PCIe counter here: {live.unavailable['pcie_rx_bytes_per_s']}")
            readings.append(live.pcie_rx_bytes_per_s)
    thread.join()
    assert max(readings) > 1e9, readings  # more than 1 GB/s into the GPU while it copies


def test_gpm_sm_activity_is_high_while_every_sm_works(hopper):
    import torch

    from explorer.devices.nvml import NvmlSession

    a = torch.rand(4096, 4096, device=hopper.key)
    thread = _busy(3.0, lambda: (a @ a, torch.cuda.synchronize()))
    with NvmlSession() as session:
        session.read_live(hopper.nvml_index)  # the GPM window opens
        time.sleep(1.0)  # the window the reading covers: a second of matmuls
        live = session.read_live(hopper.nvml_index)
    thread.join()
    assert live.sm_activity_pct is not None, live.unavailable.get("sm_activity_pct")
    assert live.sm_activity_pct > 50 and live.sm_occupancy_pct is not None and live.sm_occupancy_pct > 0
    assert live.utilization_gpu_pct is not None and live.utilization_gpu_pct > 50


def test_the_limits_table_agrees_with_the_driver_for_this_gpu(gpu):
    from explorer.acceptance.cudadriver import device_attributes
    from explorer.devices.limits import limits_for_cc

    attrs = device_attributes(gpu.index)
    table = limits_for_cc(gpu.compute_capability)
    pairs = {
        "max_threads_per_sm": "MAX_THREADS_PER_MULTIPROCESSOR",
        "max_blocks_per_sm": "MAX_BLOCKS_PER_MULTIPROCESSOR",
        "regs_per_sm": "MAX_REGISTERS_PER_MULTIPROCESSOR",
        "max_regs_per_block": "MAX_REGISTERS_PER_BLOCK",
        "smem_per_sm_bytes": "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
        "max_smem_per_block_optin_bytes": "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
        "reserved_smem_per_block_bytes": "RESERVED_SHARED_MEMORY_PER_BLOCK",
    }
    wrong = {
        f: (getattr(table, f), attrs[a])
        for f, a in pairs.items()
        if attrs[a] is not None and getattr(table, f) != attrs[a]
    }
    assert not wrong, wrong


def test_self_test_passes_the_gpu_checks_on_a_machine_without_qt_too(gpu):
    from explorer.acceptance.checks_devices import judge_self_test

    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "self-test", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(proc.stdout)
    counted, _qt_only = judge_self_test(report)
    assert not counted, counted
    workload = next(c for c in report["checks"] if c["name"] == "gpu workload")
    assert workload["status"] == "pass", workload
