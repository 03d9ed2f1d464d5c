"""The words the CLI's ``tiling`` command and the Memory page's stepper both show: made once, here."""

from __future__ import annotations

from explorer import words
from explorer.launch.occupancy import RESOURCE_NAMES
from explorer.memory.tiling import FLOAT32_BYTES, KernelCounts, TileCost, TileRead, TilingModel
from explorer.memory.tiling_session import RoofPoint
from explorer.memory.tiling_steps import BlockState, BlockTicks, Counters
from explorer.roofs.model import Ceiling, Roof
from explorer.words import percent


def grouped(n: int) -> str:
    """ "1,048,576": a whole number with its thousands grouped, as every count on the stepper reads."""
    return f"{n:,}"


def intensity_text(x: float) -> str:
    return f"{x:.3g}"


def shape_line(model: TilingModel) -> str:
    s = model.shape
    gx, gy = s.grid
    return (
        f"C = A ({s.m} x {s.k}) . B ({s.k} x {s.n}) in {s.tile} x {s.tile} tiles: {gx} x {gy} blocks of "
        f"{s.threads_per_block} threads, {words.count(s.phases, 'phase')} each"
    )


def headline(model: TilingModel) -> str:
    """The page's title line: what tiling buys at this T."""
    t = model.tiled
    return (
        f"T = {model.shape.tile}: {model.load_ratio:.3g}x fewer global loads than the naive kernel, "
        f"{t.barriers_per_block} barriers per block"
    )


def summary(model: TilingModel) -> str:
    """The counts behind the headline, in one sentence."""
    t, n = model.tiled, model.naive
    return (
        f"{grouped(t.global_loads)} global loads instead of {grouped(n.global_loads)}; "
        f"{intensity_text(t.intensity_flop_per_byte)} FLOP per byte of global traffic instead of "
        f"{intensity_text(n.intensity_flop_per_byte)}; {grouped(t.shared_bytes_per_block)} bytes of shared memory "
        "per block"
    )


#: (label, what a KernelCounts gives) in the order the table lists them
ROWS: tuple[tuple[str, str], ...] = (
    ("global loads", "global_loads"),
    ("global stores", "global_stores"),
    ("shared loads", "shared_loads"),
    ("shared stores", "shared_stores"),
    ("barriers per block", "barriers_per_block"),
    ("useful FLOPs", "flops"),
    ("shared memory per block (B)", "shared_bytes_per_block"),
)


def count_table(model: TilingModel) -> list[str]:
    """The two kernels side by side, one line per count."""
    t, n = model.tiled, model.naive
    head = f"tiled (T = {model.shape.tile})"
    lines = [f"{'':<30}{head:>18}{'naive':>18}"]
    for label, attr in ROWS:
        lines.append(f"{label:<30}{grouped(getattr(t, attr)):>18}{grouped(getattr(n, attr)):>18}")
    lines.append(
        f"{'FLOP per byte of global traffic':<30}{intensity_text(t.intensity_flop_per_byte):>18}"
        f"{intensity_text(n.intensity_flop_per_byte):>18}"
    )
    return lines


def read_line(r: TileRead) -> str:
    kind = "conflict-free" if r.conflict_free else f"{r.worst_degree}-way bank conflict"
    share = (
        f"up to {r.most_lanes_per_word} lanes of a warp read one word (a broadcast)"
        if r.most_lanes_per_word > 1
        else "each lane reads its own word"
    )
    return (
        f"{r.expression}: {kind}; {share}; {grouped(r.requests)} warp requests per phase take "
        f"{words.count(r.wavefronts, 'wavefront')}"
    )


def notes(model: TilingModel) -> list[str]:
    s = model.shape
    out = [
        f"counts are elements of {FLOAT32_BYTES} bytes (float32); global traffic is what the kernels ask "
        "of global memory, before any cache serves part of it"
    ]
    if not s.divisible:
        out.append(
            f"T = {s.tile} does not divide every size: edge blocks load zeros for elements outside A and B "
            f"(no global load) and {grouped(model.tiled.executed_flops - model.tiled.flops)} of the "
            f"{grouped(model.tiled.executed_flops)} FLOPs issued multiply those zeros"
        )
    return out


def cost_line(c: TileCost) -> str:
    head = f"T = {c.tile}: {c.threads_per_block} threads, {grouped(c.shared_bytes_per_block)} B of shared memory per block"
    if c.occupancy is None:
        return f"{head}; cannot launch: {c.refused}"
    o = c.occupancy
    return (
        f"{head}; {words.count(o.active_blocks_per_sm, 'block')} per SM, "
        f"{percent(o.occupancy)} occupancy (limited by {' and '.join(RESOURCE_NAMES[r] for r in o.limiters)})"
    )


def roof_line(p: RoofPoint, roof: Roof, ceilings: tuple[Ceiling, Ceiling]) -> str:
    """Where one kernel sits under the roof: its intensity, the most it can reach, and the two
    ceilings (compute, main memory) with how each was had (measured here, theoretical, spec sheet)."""
    what = "naive" if p.tile is None else f"T = {p.tile}"
    assert p.attainable_gflops is not None
    compute, memory = ceilings
    return (
        f"{what}: {intensity_text(p.intensity_flop_per_byte)} FLOP/byte, at most "
        f"{p.attainable_gflops:,.0f} GFLOP/s under {roof.name}'s roof ({p.bound}-bound; "
        f"{compute.name} {compute.value:,.0f} GFLOP/s, {compute.kind_text}: {compute.basis}; "
        f"{memory.name} {memory.value:,.0f} GB/s, {memory.kind_text}: {memory.basis}). "
        "A bound from the model, not a measurement"
    )


COUNTER_ROWS: tuple[tuple[str, str], ...] = (
    ("global loads", "global_loads"),
    ("global stores", "global_stores"),
    ("shared loads", "shared_loads"),
    ("shared stores", "shared_stores"),
    ("barriers passed", "barriers"),
    ("useful FLOPs", "flops"),
)


def counter_value(c: Counters, attr: str) -> int:
    return int(getattr(c, attr))


def naive_counter(k: KernelCounts, attr: str) -> int:
    """The naive kernel's count for a counter row (its barriers: none)."""
    return k.barriers if attr == "barriers" else int(getattr(k, attr))


def step_caption(timeline: BlockTicks, state: BlockState) -> str:
    """What the tick just taken did, in words."""
    s = timeline.shape
    t = s.tile
    bx, by = timeline.bx, timeline.by
    tick = state.tick
    if tick is None:
        return (
            f"Block ({bx}, {by}) of the {s.grid[0]} x {s.grid[1]} grid: {s.threads_per_block} threads in "
            f"{words.count(timeline.warps, 'warp')}, each will compute one element of C's "
            f"tile at rows {by * t}..{by * t + t - 1}, columns {bx * t}..{bx * t + t - 1}. Step to begin."
        )
    p = tick.phase
    of = f"phase {p + 1} of {s.phases}"
    if tick.kind == "load":
        return (
            f"{of}: warp {tick.warp} copies its threads' elements of A (columns {p * t}..{p * t + t - 1}) and "
            f"B (rows {p * t}..{p * t + t - 1}) into As and Bs, a zero where the element is outside the "
            "matrix, then waits at the first __syncthreads()"
        )
    if tick.kind == "barrier" and tick.barrier == 1:
        return (
            f"{of}: the last warp has arrived, the first barrier opens: As and Bs are whole, every thread may "
            "read any element of them"
        )
    if tick.kind == "compute":
        return (
            f"{of}: warp {tick.warp} runs k = 0..{t - 1}: each thread adds As[ty][k] x Bs[k][tx] to its sum, "
            f"{2 * t} shared loads and {t} multiply-adds per thread, no global memory; then it waits at the "
            "second __syncthreads()"
        )
    if tick.kind == "barrier":
        last = p + 1 == s.phases
        return f"{of}: the second barrier opens: every warp is done with these tiles, " + (
            "so the outputs can be written" if last else "so the next phase may overwrite them"
        )
    return f"warp {tick.warp} writes its threads' sums to C (threads outside C write nothing)"
