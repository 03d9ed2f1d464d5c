"""Every number a built-in lesson's narration states is one the app computes for that lesson.

The figures are not copied into this test: each visualizer step's launch is planned by the core
(``plan_launch``, the occupancy, the selected thread), each benchmark step's workload is asked of
the registry, and the narration's numbers must be among what those give. A narration that says
"7 waves" where the core says 6 fails here. The few numbers that are not the app's results
(a ceil() being explained, a figure quoted from the teaching material) are listed below, each
with its reason.
"""

from __future__ import annotations

import math
import re

import pytest

from explorer.devices.catalog import load_catalog
from explorer.devices.find import find_device
from explorer.devices.limits import limits_for_device
from explorer.devices.model import CpuDevice
from explorer.launch.config import parse_launch, parse_thread_ref
from explorer.launch.schedule import plan_launch
from explorer.lessons import BenchState, MemoryState, VisualizerState, load_lesson
from explorer.lessons.builtin import builtin_paths
from explorer.lessons.model import DispatchStep, LatencyStep
from explorer.lessons.resolve import visualizer_device
from explorer.words import percent

#: numbers a narration may use that the app does not compute, per lesson, with the reason
NOT_COMPUTED: dict[str, dict[float, str]] = {
    "01-blocks-and-threads": {},
    "02-waves-and-tail": {},
    "03-occupancy-limiters": {},
    "04-timing-trap": {
        10000: "the d2l notebook's matrix size, quoted (shared/teaching-material/d2l-gpus-notebook.txt)",
        6.0: "the d2l notebook's CPU time in seconds, quoted",
        0.001: "the d2l notebook's (unsynchronized) GPU time in seconds, quoted",
        1: "the same 0.001 s in milliseconds (the title)",
    },
    "05-matmul-crossover": {},
    "06-pinned-copies": {},
    "07-cifar10-step": {},
    "08-image-tiles": {
        67.5: "1,080 / 16, the division whose ceiling is the grid's y",
        1088: "68 tiles x 16 rows: the rows the grid covers (checked below)",
    },
    "09-coalescing": {},
    "10-bank-conflicts": {
        5.0: "compute capability 5.0, the first GPUs the bank model covers (explorer.memory.banks)",
    },
    "11-divergence": {
        7.0: "compute capability 7.0 (Volta), where independent thread scheduling begins (ITS_NOTE)",
    },
    "12-tiled-matmul": {},
    "13-tail-uneven-blocks": {},
    "14-latency-occupancy-ilp": {},
    "15-matvec-your-kernel": {
        8: "2,048 sectors of m / the 256 they fit in: line 17's 2,112 / 320 less x's 64 broadcast sectors",
    },
}

_NUMBER = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)(?![\w])")


def numbers_in(text: str) -> set[float]:
    # code (`blockIdx.x * blockDim.x`) and markdown markers hold no figures
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\b(?:GTX|RTX)\s+\d+|CIFAR-10", " ", text)  # model numbers and data set names
    return {float(m.replace(",", "")) for m in _NUMBER.findall(text)}


def _devices():
    return [CpuDevice(name="cpu", key="cpu"), *load_catalog()]


def derived_visualizer(state: VisualizerState) -> set[float]:
    """What the app computes and shows for a visualizer step (summary, readings, occupancy, inspector)."""
    devices = _devices()
    key = visualizer_device(state, devices).key
    device = next(d for d in devices if d.key == key)
    limits = limits_for_device(device)
    config = parse_launch(state.grid, state.block, state.smem, state.regs, state.n or None)
    out: set[float] = {
        *config.grid.as_tuple(),
        *config.block.as_tuple(),
        config.shared_mem_bytes,
        config.shared_mem_bytes / 1024,
        config.regs_per_thread,
        device.sm_count or 0,
        limits.warp_size,
        limits.max_regs_per_block,
        limits.max_smem_per_block_optin_bytes,
        limits.smem_per_sm_bytes // 1024,  # "228 KiB of shared memory per SM"
    }
    if config.n is not None:
        out.add(config.n)
    if config.extent is not None:
        out |= {*config.extent.as_tuple(), config.extent.count}
    block_count = config.block.count
    out.add(block_count * config.regs_per_thread)  # registers a block asks for
    out.add(block_count * 256)  # 1024 x 255 allocated in units of 256 per warp: what the error names
    try:
        plan = plan_launch(config, device, limits)
    except Exception:  # an intentionally impossible launch: the error's numbers
        from explorer.launch.config import validate

        problems = " ".join(validate(config, limits, device.name))
        assert problems, state
        return out | numbers_in(problems)
    occ = plan.occupancy
    out |= {
        plan.total_blocks,
        plan.threads_per_block,
        plan.total_threads,
        plan.idle_threads,
        plan.warps_per_block,
        plan.total_warps,
        plan.waves,
        plan.waves - 1,  # the full waves before the tail
        plan.resident_blocks_per_sm,
        plan.concurrent_blocks,
        plan.last_wave_blocks,
        plan.concurrent_blocks - plan.last_wave_blocks,  # SMs' slots idle in the tail (1 block per SM)
        plan.busy_sms,
        plan.sm_count - plan.busy_sms,
        plan.peak_resident_warps,
        plan.warp_slots,
        float(percent(plan.gpu_fill).rstrip("%")),
        float(percent(plan.last_wave_fill).rstrip("%")),
        occ.active_warps_per_sm,
        occ.max_warps_per_sm,
        float(percent(occ.occupancy).rstrip("%")),
        occ.regs_per_block_allocated,
        occ.regs_per_sm,
        occ.smem_carveout_bytes,
        occ.reserved_smem_per_block_bytes,
    }
    if state.view == "timeline":
        out |= derived_dispatch(plan, state.dispatch)
    if state.view == "latency":
        out |= derived_latency(plan, limits, state.latency)
    if state.thread:
        block_idx, thread_idx = parse_thread_ref(state.thread)
        info = plan.thread(plan.block_linear(block_idx), plan.thread_linear(thread_idx))
        pos = info.global_position
        out |= {*block_idx.as_tuple(), *thread_idx.as_tuple(), info.global_linear, info.warp, info.lane}
        out |= {*pos.as_tuple()}
    return out


def derived_dispatch(plan, step: DispatchStep) -> set[float]:
    """A step's dispatch in time (the timeline view's figures, to 2 decimals as it prints them),
    the moment it shows, and the numbers of its durations (P and 1 +- P, ALPHA, row weights)."""
    from explorer.launch.dispatch import simulate_dispatch
    from explorer.launch.durations import parse_durations

    spec = parse_durations(step.durations)
    r = simulate_dispatch(plan, spec, step.policy, step.seed)
    f = r.figures
    figures = (
        f.makespan,
        r.lower_bound,
        r.upper_bound,
        f.longest_block,
        f.tail_start,
        f.tail_length,
        f.tail_idle_sm_time,
        f.tail_idle_slot_time,
        f.total_work,
    )
    out = {round(x, 2) for x in figures} | {round(100 * r.efficiency, 1), step.seed}
    if step.time is not None:
        out.add(step.time)
        out |= set(r.timeline.counts_at(step.time))  # the waiting, running and done counts shown
    out |= {spec.value, round(1 - spec.value, 2), round(1 + spec.value, 2), *spec.weights}
    return out


def derived_latency(plan, limits, step: LatencyStep) -> set[float]:
    """A step's latency model on the launch's SM: the preset's latency and L, K and the loop's
    length, warps per scheduler, N* per scheduler and per SM, and the curve the view draws
    (utilization at every warp count, to 1 decimal as it prints them)."""
    from explorer.launch.latency import config_for_launch, find_preset, simulate_latency, utilization_curve

    preset = find_preset(step.preset)
    k = step.alu
    config = config_for_launch(plan.occupancy, limits, preset.mem_latency, k, step.policy)
    run = simulate_latency(config)
    curve = utilization_curve(preset.mem_latency, k, config.schedulers, config.policy, config.slots)
    out: set[float] = {preset.latency_cycles, preset.mem_latency, k, k + 1, config.period, config.schedulers}
    out |= {config.warps_on(s) for s in range(config.schedulers)} | {config.warps_on(0) - 1}
    out |= {run.warps_needed_per_scheduler, run.warps_needed}
    out |= {round(100 * run.utilization, 1), round(100 * run.model_utilization, 1)}
    out |= {round(100 * p.simulated, 1) for p in curve.points}
    return out


def derived_bench(state: BenchState) -> set[float]:
    from explorer.bench import workload, workloads

    w = workloads.get_workload(state.workload)
    out: set[float] = {*(state.sizes or ()), *w.default_sizes_cpu, *w.default_sizes_gpu}
    if w.size_format == "bytes":  # sizes in KiB and MiB, as the narration names them
        out |= {s / 1024 for s in out} | {s / 1024**2 for s in out}
    out |= {workload.LESSON_MATMULS, workload.SMALL_MATRIX, workload.MATVEC_COLS}
    if w.name == "tiled_matmul":
        from explorer.memory.tiling import BENCH_TILES

        out |= set(BENCH_TILES)
    return out


def derived_tiling(state: MemoryState) -> set[float]:
    """What the Tiled matmul tab computes and shows for a step: the count model of both kernels
    (as the page prints them), the block shown and its step, the bank model's reads, and the
    chosen GPU's limits, occupancy and roof (``explorer.memory.tiling_session``)."""
    from explorer.devices.names import best_match
    from explorer.memory import tiling_texts
    from explorer.memory.banks import BANKS
    from explorer.memory.coalescing import WARP_SIZE
    from explorer.memory.tiling import FLOAT32_BYTES, MatmulShape
    from explorer.memory.tiling_session import TilingSession

    (gpu,) = best_match(state.gpu, [d for d in _devices() if d.is_gpu])
    shape = MatmulShape(state.rows, state.cols, state.inner, state.tile)
    session = TilingSession(shape, gpu, state.regs)
    session.set_block(state.block_x, state.block_y)
    session.seek(state.tick)
    model, t, n = session.model, session.model.tiled, session.model.naive
    out: set[float] = {FLOAT32_BYTES, WARP_SIZE, BANKS, 2.0}  # 2: barriers per phase, FLOPs per product
    out |= {shape.m, shape.n, shape.k, shape.tile, shape.tile - 1, shape.phases, shape.threads_per_block}
    out |= {shape.warps_per_block, *range(shape.warps_per_block), *shape.grid, state.block_x, state.block_y}
    for kernel in (t, n):
        out |= {kernel.global_loads, kernel.global_stores, kernel.shared_loads, kernel.shared_stores}
        out |= {
            kernel.barriers_per_block,
            kernel.barriers,
            kernel.blocks,
            kernel.flops,
            kernel.executed_flops,
        }
        out |= {
            kernel.shared_bytes_per_block,
            float(tiling_texts.intensity_text(kernel.intensity_flop_per_byte)),
        }
    out |= {t.executed_flops - t.flops, float(f"{model.load_ratio:.3g}")}
    rows, cols = shape.block_extent(*session.block)
    out |= {state.block_y * shape.tile, state.block_y * shape.tile + shape.tile - 1, shape.m - 1, shape.n - 1}
    out |= {state.block_x * shape.tile, rows, cols}
    for r in model.reads:
        out |= {r.requests, r.wavefronts, r.worst_degree, r.most_lanes_per_word}
    limits = limits_for_device(gpu)
    out |= {gpu.sm_count or 0, limits.max_threads_per_block, limits.warp_size}
    cost = session.cost
    if cost is not None and cost.occupancy is not None:
        o = cost.occupancy
        out |= {cost.shared_bytes_per_block, o.active_blocks_per_sm, float(percent(o.occupancy).rstrip("%"))}
    ceilings = session.roof_ceilings()
    if ceilings is not None:
        out |= {round(ceilings[0].value), round(ceilings[1].value)}
        for point in session.roof_points():
            if point.tile in (None, shape.tile):
                out.add(round(point.attainable_gflops or 0))
    grid, block = session.state.grid, session.state.block
    for counters in (grid, block):
        out |= {counters.global_loads, counters.shared_loads, counters.barriers, counters.flops}
    return out


def derived_memory(state: MemoryState) -> set[float]:
    """What the Memory page computes and shows for a step: the model's answer for the view shown
    (counts, bytes, percentages as the page prints them, each lane's word and bank, each warp's
    lanes per path) and the fixed sizes the model is built on."""
    from explorer.memory.banks import BANKS, WORD_BYTES, SharedAccess, bank_conflicts
    from explorer.memory.coalescing import (
        BASE_ALIGNMENT,
        LINE_BYTES,
        SECTOR_BYTES,
        WARP_SIZE,
        GlobalAccess,
        coalesce,
    )
    from explorer.memory.divergence import Branch, divergence

    out: set[float] = {WARP_SIZE, SECTOR_BYTES, LINE_BYTES, BASE_ALIGNMENT}
    if state.view == "coalescing":
        a = GlobalAccess(state.elem, state.stride, state.offset, state.active, state.warp)
        c = coalesce(a)
        out |= {a.elem_bytes, a.stride, a.offset, a.active_lanes, a.warp, a.offset * a.elem_bytes}
        out |= {c.sectors_per_request, c.lines_per_request, c.bytes_requested, c.bytes_fetched}
        out |= {c.ideal_sectors, c.bytes_fetched // c.bytes_requested, float(percent(c.efficiency)[:-1])}
        out.add(SECTOR_BYTES // a.elem_bytes)  # the stride from which each lane has a sector of its own
    elif state.view == "banks":
        a = SharedAccess(state.elem, state.stride + (1 if state.pad else 0), state.offset, state.active)
        b = bank_conflicts(a)
        out |= {BANKS, WORD_BYTES, a.elem_bytes, a.stride, a.offset, a.active_lanes, a.lanes_per_phase}
        out |= {b.conflict_degree, b.wavefronts, b.ideal_wavefronts, a.active_lanes * a.elem_bytes}
        for phase in b.phases:
            out |= {phase.lanes.start, phase.lanes.stop - 1}
        # the lanes the narration names: lane 0 and those asking its bank for another word in its pass
        first = b.lanes[0]
        meet = [first] + [
            lb
            for lb in b.lanes
            if lb.phase == first.phase and lb.bank == first.bank and lb.word != first.word
        ]
        for lb in meet:
            out |= {lb.lane, lb.word, *lb.banks}
    else:
        d = divergence(state.block, Branch(state.branch, k=state.k, p=state.p, seed=state.seed))
        out |= {d.block_threads, len(d.warps), d.diverged_warps, float(percent(d.simt_efficiency)[:-1])}
        out |= {state.k, state.p}
        for w in d.warps:
            out |= {w.lanes, w.paths, *w.active_lanes, float(percent(w.simt_efficiency)[:-1])}
        # warps named: the first and last of each run of warps that go the same way ("warps 0 to 2")
        runs: list[list] = []
        for w in d.warps:
            way = (w.diverges, bool(w.taken))
            if runs and runs[-1][0] == way:
                runs[-1][2] = w.warp
            else:
                runs.append([way, w.warp, w.warp])
        out |= {run[i] for run in runs for i in (1, 2)}
    return out


def derived_kernel(state: MemoryState) -> set[float]:
    """What the "Your kernel" tab shows for a step: every figure of the example's trace (line
    numbers, requests, sectors, wavefronts, warps, lanes, its grid and block) and the sizes the
    coalescing model is built on."""
    from explorer.kernels.examples import example_path
    from explorer.kernels.run import trace_script
    from explorer.memory.coalescing import LINE_BYTES, SECTOR_BYTES, WARP_SIZE

    found: set[float] = {WARP_SIZE, SECTOR_BYTES, LINE_BYTES, LINE_BYTES // SECTOR_BYTES}

    def walk(value: object) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, (int, float)):
            found.add(float(value))
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v)

    walk(trace_script(str(example_path(state.example))).to_dict())
    return found


def _number_cases():
    for path in builtin_paths():  # a kernel lesson traces its examples: a child process each
        kernel = any(
            isinstance(s.state, MemoryState) and s.state.view == "kernel" for s in load_lesson(path).steps
        )
        yield pytest.param(path, id=path.stem, marks=[pytest.mark.slow] if kernel else [])


@pytest.mark.parametrize("path", list(_number_cases()))
def test_every_number_in_the_narration_is_computed_by_the_app(path):
    lesson = load_lesson(path)
    allowed_extra = NOT_COMPUTED.get(path.stem)
    assert allowed_extra is not None, f"add {path.stem} to NOT_COMPUTED (even empty)"
    derived: set[float] = set()
    for step in lesson.steps:  # a step may recall an earlier one's figures
        if isinstance(step.state, VisualizerState):
            derived |= derived_visualizer(step.state)
        elif isinstance(step.state, BenchState):
            derived |= derived_bench(step.state)
        elif isinstance(step.state, MemoryState) and step.state.view == "tiling":
            derived |= derived_tiling(step.state)
        elif isinstance(step.state, MemoryState) and step.state.view == "kernel":
            derived |= derived_kernel(step.state)
        elif isinstance(step.state, MemoryState):
            derived |= derived_memory(step.state)
    for number, step in enumerate(lesson.steps, start=1):
        for value in numbers_in(step.narration + " " + step.title):
            if value in derived or value in allowed_extra:
                continue
            # ceil(N / threads) explained as a division: both sides are derived already
            pytest.fail(f"{path.stem} step {number} says {value:g}, which the app does not compute here")


def test_the_not_computed_figures_hold():
    h100 = find_device("h100")
    occ_carveout = derived_visualizer(VisualizerState(device="h100", grid="1", block="256", smem="48K"))
    assert 228 * 1024 in occ_carveout
    assert h100.sm_count == 132
    assert 1080 / 16 == 67.5 and math.ceil(1080 / 16) * 16 == 1088
