"""``device-explorer tiling``: what the tiled matmul (PMPP chapter 5) executes, beside the naive kernel.

Counts from ``explorer.memory.tiling``, text from ``explorer.memory.tiling_texts`` (which the Memory
page shows too), JSON with ``--json``. The tile must fit a block on the device named with
``--device`` or ``--cc`` (without either: on every GPU of the limits table); a tile that does not is
refused in one line naming the limit (exit 2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from explorer.commands.shared import launch_target
from explorer.devices.limits import ArchLimits
from explorer.inputs import parse_whole
from explorer.memory import tiling_texts as texts
from explorer.memory.tiling import (
    MAX_DIM,
    BlockLimits,
    MatmulShape,
    TileCost,
    TilingModel,
    check_launch,
    tile_cost,
    tiling_model,
)


@dataclass(frozen=True)
class TilingRequest:
    """A checked ``tiling`` request: the shape launches on the target."""

    model: TilingModel
    limits: BlockLimits
    arch: ArchLimits | None  # the device's table, for the occupancy (None: no device named)
    cost: TileCost | None  # the block's shared memory and occupancy there (None: no device named)
    regs: int
    as_json: bool


def parse_tiling(args: Any) -> TilingRequest:
    """Parse and validate ``tiling``'s arguments and count (closed form, no output)."""
    sizes = {
        name: parse_whole(getattr(args, name), f"--{name}", minimum=1, maximum=MAX_DIM)
        for name in ("m", "n", "k")
    }
    tile = parse_whole(args.tile, "--tile", minimum=1, maximum=MAX_DIM)
    regs = parse_whole(args.regs, "--regs", minimum=1, maximum=255)
    shape = MatmulShape(sizes["m"], sizes["n"], sizes["k"], tile)
    arch: ArchLimits | None = None
    if args.device or args.cc:
        arch, name, _device = launch_target(args)
        limits = BlockLimits.of(arch, name)
    else:
        limits = BlockLimits.any_gpu()
    check_launch(shape, limits)
    cost = tile_cost(tile, arch, regs, limits.name) if arch is not None else None
    return TilingRequest(tiling_model(shape), limits, arch, cost, regs, bool(args.json))


def run_tiling(args: Any) -> int:
    req = parse_tiling(args)
    model = req.model
    if req.as_json:
        data = model.to_dict()
        data["limits_of"] = req.limits.name
        if req.arch is not None and req.cost is not None and req.cost.occupancy is not None:
            data["compute_capability"] = req.arch.cc_string
            data["regs_per_thread"] = req.regs
            data["occupancy"] = req.cost.occupancy.to_dict()
        print(json.dumps(data, indent=2))
        return 0
    print(texts.shape_line(model))
    print(texts.headline(model))
    print(texts.summary(model))
    print("\n".join(texts.count_table(model)))
    for r in model.reads:
        print("shared read " + texts.read_line(r))
    if req.cost is not None:
        print(f"on {req.limits.name} ({req.regs} registers per thread assumed): {texts.cost_line(req.cost)}")
    else:
        print(f"fits a block on {req.limits.name} (name one with --device or --cc for its occupancy)")
    for line in texts.notes(model):
        print(f"note: {line}")
    return 0
