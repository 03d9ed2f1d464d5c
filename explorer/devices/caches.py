"""The CPU's data caches: each level's size and how many separate caches of it the machine has.

The roofline's memory levels are named by these sizes (a bandwidth plateau over working sets up
to 2 MiB is "L2" because the L2 caches hold 2 MiB, not because it was the second plateau found),
and a cache private to each core holds more, all cores together, than one core sees. Linux says
both in sysfs (``/sys/devices/system/cpu/cpu*/cache/index*``: level, type, size and the CPUs that
share each cache); elsewhere py-cpuinfo's sizes are used, assuming per-core L1 and L2 and one
shared L3, as on every current desktop and server CPU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class CpuCache:
    """One level of the CPU's data caches as the OS reports it: one cache's size, and how many
    separate caches of that level the machine has (a per-core L2 on 8 cores: 8; a shared L3: 1)."""

    level: str  # "L1", "L2", "L3"
    size_bytes: int
    instances: int = 1

    @property
    def total_bytes(self) -> int:
        return self.size_bytes * self.instances


SYSFS_CPUS = Path("/sys/devices/system/cpu")
_SIZE = re.compile(r"^\s*(\d{1,12})\s*([KMG]?)i?B?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int | None:
    """ "32K" -> 32768, "1024K", "32M", "512" (bytes); ``None`` for anything else."""
    match = _SIZE.match(text)
    if not match:
        return None
    return int(match.group(1)) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[match.group(2).upper()]


def read_sysfs_caches(root: Path = SYSFS_CPUS) -> list[CpuCache]:
    """Data and unified caches by level, from sysfs; empty where it does not say (not Linux, a
    sandbox). A level's instances are the distinct sets of CPUs sharing one cache of it."""
    found: dict[int, tuple[int, set[str]]] = {}
    for index in sorted(root.glob("cpu[0-9]*/cache/index[0-9]*")):
        try:
            kind = (index / "type").read_text().strip()
            if kind not in ("Data", "Unified"):
                continue
            level = int((index / "level").read_text().strip())
            size = parse_size((index / "size").read_text())
            shared = (index / "shared_cpu_list").read_text().strip()
        except (OSError, ValueError):
            continue
        if size is None or not 1 <= level <= 4:
            continue
        size_seen, sharers = found.setdefault(level, (size, set()))
        sharers.add(shared)
        found[level] = (max(size_seen, size), sharers)
    return [CpuCache(f"L{level}", size, len(sharers)) for level, (size, sharers) in sorted(found.items())]


def caches_from_cpuinfo(info: dict[str, Any], physical_cores: int | None) -> list[CpuCache]:
    """py-cpuinfo's cache sizes (bytes, or text such as "32 KiB"): L1 and L2 taken as one per core,
    L3 as one shared cache."""
    cores = physical_cores or 1
    out = []
    for level, key, instances in (
        ("L1", "l1_data_cache_size", cores),
        ("L2", "l2_cache_size", cores),
        ("L3", "l3_cache_size", 1),
    ):
        value = info.get(key)
        size = value if isinstance(value, int) and not isinstance(value, bool) else None
        if isinstance(value, str):
            size = parse_size(value.replace(" ", ""))
        if size and size > 0:
            out.append(CpuCache(level, size, instances))
    return out
