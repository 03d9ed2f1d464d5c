"""``device-explorer memory`` and ``device-explorer divergence``: one warp's accesses and branches.

Text for people, JSON (``--json``) for scripts and for checking the model against an independent
reference; bad input is one line naming the value and the limit (exit 2). The words come from
``explorer.memory.texts``, which the window shows too.
"""

from __future__ import annotations

import json
from typing import Any

from explorer.commands.shared import launch_target
from explorer.errors import UserError
from explorer.inputs import parse_whole
from explorer.memory import texts
from explorer.memory.banks import SOURCE, BankConflicts, SharedAccess, bank_conflicts
from explorer.memory.coalescing import (
    DRAM_GRANULARITIES,
    MAX_ELEMENTS,
    MAX_WARP_INDEX,
    WARP_SIZE,
    Coalescing,
    DramGranularity,
    GlobalAccess,
    coalesce,
    dram_granularity,
)
from explorer.memory.divergence import (
    EQUAL_COST_NOTE,
    ITS_NOTE,
    MAX_BLOCK_THREADS,
    Divergence,
    divergence,
    parse_branch,
)


def _access_numbers(args: Any) -> dict[str, int]:
    return {
        "elem_bytes": parse_whole(args.elem, "--elem", minimum=1, maximum=16, unit=" bytes"),
        "stride": parse_whole(args.stride, "--stride", minimum=0, maximum=MAX_ELEMENTS),
        "offset": parse_whole(args.offset, "--offset", minimum=0, maximum=MAX_ELEMENTS),
        "active_lanes": parse_whole(args.active, "--active", minimum=1, maximum=WARP_SIZE),
    }


def _grid(cells: list[str], per_row: int = 8) -> list[str]:
    return ["  " + "  ".join(cells[i : i + per_row]) for i in range(0, len(cells), per_row)]


def _dram(args: Any) -> DramGranularity:
    """The DRAM granule: ``--dram-granularity`` when given, else estimated from the GPU named with
    ``--device`` or ``--cc`` (its compute capability), else the 8.0-and-newer default."""
    chosen = None
    text = args.dram_granularity
    if text is not None:
        chosen = parse_whole(text, "--dram-granularity", minimum=32, maximum=128, unit=" bytes")
        if chosen not in DRAM_GRANULARITIES:
            raise UserError(
                f"--dram-granularity {chosen}: use {', '.join(map(str, DRAM_GRANULARITIES))} bytes"
            )
    if chosen is None and (args.device or args.cc is not None):
        limits, name, device = launch_target(args)
        return dram_granularity(cc=limits.cc, where=name if device is not None else "")
    return dram_granularity(chosen)


def parse_memory(args: Any) -> Coalescing | BankConflicts:
    """Parse and validate ``memory``'s arguments and work out the access (closed form, no output)."""
    numbers = _access_numbers(args)
    warp = parse_whole(args.warp, "--warp", minimum=0, maximum=MAX_WARP_INDEX)
    if args.space == "global":
        return coalesce(GlobalAccess(warp=warp, **numbers), _dram(args))
    if warp != 0:
        raise UserError("--warp applies to --space global only (a shared-memory pattern is one warp's)")
    for option, given in (
        ("--dram-granularity", getattr(args, "dram_granularity", None) is not None),
        ("--device", bool(getattr(args, "device", None))),
        ("--cc", getattr(args, "cc", None) is not None),
    ):
        if given:
            raise UserError(f"{option} applies to --space global only (shared memory never reaches DRAM)")
    return bank_conflicts(SharedAccess(**numbers))


def run_memory(args: Any) -> int:
    result = parse_memory(args)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0
    if isinstance(result, Coalescing):
        c = result
        print(texts.coalescing_headline(c))
        print("\n".join(texts.coalescing_lines(c)))
        print("\n".join(texts.dram_lines(c)))
        print("lane:address")
        print("\n".join(_grid([f"{la.lane:2d}:{la.address:>7d}" for la in c.lanes])))
        return 0
    b = result
    print(texts.bank_headline(b))
    print("\n".join(texts.bank_lines(b)))
    print("lane->bank (word)")
    print("\n".join(_grid([f"{lb.lane:2d}->{lb.bank:2d} ({lb.word})" for lb in b.lanes])))
    print(f"rule: {SOURCE}")
    return 0


def parse_divergence(args: Any) -> Divergence:
    """Parse and validate ``divergence``'s arguments and work out the warps (closed form, no output)."""
    block = parse_whole(args.block, "--block", minimum=1, maximum=MAX_BLOCK_THREADS, unit=" threads")
    seed = parse_whole(args.seed, "--seed", minimum=0, maximum=2**63 - 1)
    return divergence(block, parse_branch(args.branch, seed=seed))


def run_divergence(args: Any) -> int:
    d = parse_divergence(args)
    if args.json:
        print(json.dumps(d.to_dict(), indent=2))
        return 0
    print(texts.divergence_headline(d))
    for w in d.warps:
        print("  " + texts.warp_line(w))
    print(EQUAL_COST_NOTE)
    print(ITS_NOTE)
    return 0
