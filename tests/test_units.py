"""Sizes read the same in the CLI, the window and a run's CSV (explorer.units)."""

from __future__ import annotations

import pytest

from explorer.bench.workloads import get_workload
from explorer.commands.devices import _row
from explorer.devices.model import CpuDevice
from explorer.ui import formatting
from explorer.units import binary_bytes


@pytest.mark.parametrize(
    "n,digits,text",
    [
        (80 * 2**30, 1, "80 GiB"),
        (int(15.5 * 2**30), 1, "15.5 GiB"),
        (48 * 1024, 1, "48 KiB"),
        (3 * 2**19, 2, "1.5 MiB"),
        (1000, 1, "1000 B"),
        (2**40 * 1536, 1, "1,536 TiB"),
        (None, 1, "n/a"),
    ],
)
def test_sizes_in_binary_units_without_trailing_zeros(n, digits, text):
    assert binary_bytes(n, digits) == text


def test_the_cli_the_window_and_a_benchmark_label_say_one_size_one_way():
    total = 16 * 2**30
    cpu = CpuDevice(name="Test CPU", key="cpu", memory_total_bytes=total, physical_cores=2, logical_cores=4)
    assert "16 GiB" in _row(cpu)  # the devices table (it said "16.0 GiB" while the window said 16 GiB)
    assert formatting.binary_bytes(total) == "16 GiB"
    assert get_workload("copies").size_label(3 * 2**19) == "1.5 MiB"  # the CSV said "1.50 MiB"
