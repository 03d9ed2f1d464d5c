"""The CPU's data caches as the OS reports them: each level's size and how many separate caches of
it the machine has (the roofline's levels are named by these)."""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer.devices.caches import CpuCache, caches_from_cpuinfo, parse_size, read_sysfs_caches


def _index(root: Path, cpu: int, index: int, level: int, kind: str, size: str, shared: str) -> None:
    folder = root / f"cpu{cpu}" / "cache" / f"index{index}"
    folder.mkdir(parents=True)
    for name, value in (("level", level), ("type", kind), ("size", size), ("shared_cpu_list", shared)):
        (folder / name).write_text(f"{value}\n")


def test_sysfs_gives_each_data_level_once_with_its_instances(tmp_path):
    """Four CPUs on two cores (SMT): per-core L1d and L2 shared by sibling threads, one L3."""
    for cpu in range(4):
        core = f"{cpu // 2 * 2}-{cpu // 2 * 2 + 1}"
        _index(tmp_path, cpu, 0, 1, "Data", "48K", core)
        _index(tmp_path, cpu, 1, 1, "Instruction", "32K", core)  # not data: left out
        _index(tmp_path, cpu, 2, 2, "Unified", "1280K", core)
        _index(tmp_path, cpu, 3, 3, "Unified", "30M", "0-3")
    assert read_sysfs_caches(tmp_path) == [
        CpuCache("L1", 48 << 10, 2),
        CpuCache("L2", 1280 << 10, 2),
        CpuCache("L3", 30 << 20, 1),
    ]
    assert CpuCache("L2", 1280 << 10, 2).total_bytes == 2560 << 10


def test_sysfs_that_says_nothing_or_nonsense_gives_nothing(tmp_path):
    assert read_sysfs_caches(tmp_path) == []
    _index(tmp_path, 0, 0, 1, "Data", "lots", "0")
    _index(tmp_path, 0, 1, 9, "Unified", "1M", "0")
    assert read_sysfs_caches(tmp_path) == []


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("32K", 32 << 10),
        ("1024K", 1 << 20),
        ("32M", 32 << 20),
        ("512", 512),
        ("2 MiB", 2 << 20),
        ("2 GiB", 2 << 30),
        ("", None),
        ("9" * 20, None),
    ],
)
def test_cache_sizes_as_sysfs_writes_them(text, size):
    assert parse_size(text) == size


def test_py_cpuinfo_sizes_stand_in_where_sysfs_says_nothing():
    info = {"l1_data_cache_size": 49152, "l2_cache_size": "2 MiB", "l3_cache_size": 33554432}
    assert caches_from_cpuinfo(info, 8) == [
        CpuCache("L1", 48 << 10, 8),
        CpuCache("L2", 2 << 20, 8),
        CpuCache("L3", 32 << 20, 1),
    ]
    assert caches_from_cpuinfo({}, 8) == [] and caches_from_cpuinfo({"l2_cache_size": True}, 2) == []


def test_this_machines_cpu_record_carries_its_caches_or_says_why_not():
    from explorer.devices.cpu import probe_cpu

    cpu = probe_cpu()
    assert cpu.caches or "caches" in cpu.unavailable
    if cpu.caches:
        assert [c.level for c in cpu.caches] == sorted(c.level for c in cpu.caches)
        assert all(c.size_bytes > 0 and c.instances >= 1 for c in cpu.caches)
