"""A CPU's measured memory levels as the tests use them (a 2-core Zen 4: two 32 KiB L1s, two 1 MiB
L2s, one 32 MiB L3), each with the working sets its plateau held over."""

from __future__ import annotations

from explorer.roofs.model import Ceiling

KIB, MIB = 1 << 10, 1 << 20

#: (level, GB/s, working sets from, to, the caches' size, how many caches)
ROWS = (
    ("L1", 450.0, 4 * KIB, 60 * KIB, 64 * KIB, 2),
    ("L2", 225.0, 88 * KIB, 1300 * KIB, 2 * MIB, 2),
    ("L3", 184.0, 2300 * KIB, 17 * MIB, 32 * MIB, 1),
    ("DRAM", 40.0, 127 * MIB, 220 * MIB, None, None),
)


def levels(at: float = 1000.0, **gbps: float) -> list[Ceiling]:
    """The four levels' measured ceilings; ``L2=160.0`` (etc.) gives a level another value."""
    return [
        Ceiling(
            "memory",
            gbps.get(name, value),
            "measured",
            name,
            f"{name} sweep",
            at,
            level=name,  # type: ignore[arg-type]
            ws_lo_bytes=lo,
            ws_hi_bytes=hi,
            cache_bytes=cache,
            instances=count,
        )
        for name, value, lo, hi, cache, count in ROWS
    ]
