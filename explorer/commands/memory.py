"""``device-explorer memory`` and ``device-explorer divergence``: one warp's accesses and branches.

Text for people, JSON (``--json``) for scripts and for checking the model against an independent
reference; bad input is one line naming the value and the limit (exit 2). The words come from
``explorer.memory.texts``, which the window shows too.
"""

from __future__ import annotations

import json
from typing import Any

from explorer.errors import UserError
from explorer.inputs import parse_whole
from explorer.memory import texts
from explorer.memory.banks import SOURCE, SharedAccess, bank_conflicts
from explorer.memory.coalescing import MAX_ELEMENTS, MAX_WARP_INDEX, WARP_SIZE, GlobalAccess, coalesce
from explorer.memory.divergence import ITS_NOTE, MAX_BLOCK_THREADS, divergence, parse_branch


def _access_numbers(args: Any) -> dict[str, int]:
    return {
        "elem_bytes": parse_whole(args.elem, "--elem", minimum=1, maximum=16, unit=" bytes"),
        "stride": parse_whole(args.stride, "--stride", minimum=0, maximum=MAX_ELEMENTS),
        "offset": parse_whole(args.offset, "--offset", minimum=0, maximum=MAX_ELEMENTS),
        "active_lanes": parse_whole(args.active, "--active", minimum=1, maximum=WARP_SIZE),
    }


def _grid(cells: list[str], per_row: int = 8) -> list[str]:
    return ["  " + "  ".join(cells[i : i + per_row]) for i in range(0, len(cells), per_row)]


def run_memory(args: Any) -> int:
    numbers = _access_numbers(args)
    if args.space == "global":
        warp = parse_whole(args.warp, "--warp", minimum=0, maximum=MAX_WARP_INDEX)
        c = coalesce(GlobalAccess(warp=warp, **numbers))
        if args.json:
            print(json.dumps(c.to_dict(), indent=2))
            return 0
        print(texts.coalescing_headline(c))
        print("\n".join(texts.coalescing_lines(c)))
        print("lane:address")
        print("\n".join(_grid([f"{la.lane:2d}:{la.address:>7d}" for la in c.lanes])))
        return 0
    if parse_whole(args.warp, "--warp", minimum=0, maximum=MAX_WARP_INDEX) != 0:
        raise UserError("--warp applies to --space global only (a shared-memory pattern is one warp's)")
    b = bank_conflicts(SharedAccess(**numbers))
    if args.json:
        print(json.dumps(b.to_dict(), indent=2))
        return 0
    print(texts.bank_headline(b))
    print("\n".join(texts.bank_lines(b)))
    print("lane->bank (word)")
    print("\n".join(_grid([f"{lb.lane:2d}->{lb.bank:2d} ({lb.word})" for lb in b.lanes])))
    print(f"rule: {SOURCE}")
    return 0


def run_divergence(args: Any) -> int:
    block = parse_whole(args.block, "--block", minimum=1, maximum=MAX_BLOCK_THREADS, unit=" threads")
    seed = parse_whole(args.seed, "--seed", minimum=0, maximum=2**63 - 1)
    d = divergence(block, parse_branch(args.branch, seed=seed))
    if args.json:
        print(json.dumps(d.to_dict(), indent=2))
        return 0
    print(texts.divergence_headline(d))
    for w in d.warps:
        print("  " + texts.warp_line(w))
    print(ITS_NOTE)
    return 0
