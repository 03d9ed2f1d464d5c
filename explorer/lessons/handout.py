"""What a printed handout of a lesson says on each step's page: the heading, the narration and
the numbers the step's page computes.

The numbers come from the same Qt-free models the pages hold (``LaunchSession`` and
``TimeViews`` for the visualizer, ``explorer.memory`` for the Memory page, the recorded points
for a benchmark step), put in the step's state by the same functions the pages call
(``apply_step``, ``apply_time_views``), and worded by the texts the window and the CLI already
show. A step that cannot be shown keeps its narration and says why in one line.

Qt-free: the pictures and the PDF are ``explorer.ui.handout``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from explorer.devices.model import Device, Gpu
from explorer.devices.names import best_match
from explorer.errors import UserError
from explorer.inputs import one_line, shown
from explorer.launch.compare import compare_sides
from explorer.launch.session import DeviceChoice, LaunchSession
from explorer.launch.texts import launch_summary, occupancy_headline, plain, readings, thread_lines
from explorer.launch.time_views import TimeViews
from explorer.memory import texts as memory_texts
from explorer.memory import tiling_texts
from explorer.memory.banks import SharedAccess, bank_conflicts
from explorer.memory.coalescing import GlobalAccess, coalesce
from explorer.memory.divergence import Branch, divergence
from explorer.memory.tiling import MatmulShape
from explorer.memory.tiling_session import TilingSession
from explorer.units import binary_bytes
from explorer.words import count

from .model import BenchState, DevicesState, Lesson, MemoryState, Step, VisualizerState
from .resolve import bench_devices, devices_device
from .texts import RECORDED_COLUMNS, recorded_row
from .time_steps import apply_time_views
from .visualizer import apply_step

#: the paper sizes a handout is printed on, as ``--page-size`` takes them
PAGE_SIZES = ("A4", "Letter")
#: recorded points listed on a step's page; a lesson may carry thousands (the rest are counted)
MAX_RECORDED_ROWS = 40


def parse_page_size(text: str) -> str:
    """'a4' -> 'A4', 'letter' -> 'Letter'; any other paper is one line naming the two."""
    for name in PAGE_SIZES:
        if str(text).strip().lower() == name.lower():
            return name
    raise UserError(f"--page-size {shown(str(text))} is not a paper size here; use {' or '.join(PAGE_SIZES)}")


@dataclass(frozen=True)
class HandoutStep:
    """One step as the handout prints it beside its picture."""

    number: int  # 1-based
    of: int  # the lesson's number of steps
    title: str  # the step's own title ("" when it has none)
    panel: str
    narration: str  # as the lesson holds it: plain text with the narration's three marks
    numbers: tuple[str, ...]  # what the step's page computed, one line each
    problem: str = ""  # why the step (or its numbers) cannot be shown here; "" when it can
    note: str = ""  # what the player would say about it (a catalog sheet standing in for a GPU)

    @property
    def heading(self) -> str:
        """ "Step 3 of 5: Waves on two GPUs"."""
        return f"Step {self.number} of {self.of}" + (f": {self.title}" if self.title else "")


@dataclass(frozen=True)
class Handout:
    title: str
    summary: str
    steps: tuple[HandoutStep, ...]


def lesson_handout(lesson: Lesson, devices: Sequence[Device]) -> Handout:
    """Every step of ``lesson`` with the numbers its page computes on ``devices`` (this machine's
    and the catalog's, as discovery lists them)."""
    total = len(lesson.steps)
    steps = []
    for number, step in enumerate(lesson.steps, start=1):
        problem, note = step.problem.removeprefix(f"step {number}: "), ""
        numbers: list[str] = []
        if not problem and step.state is not None:
            try:
                note, numbers = step_numbers(step, devices)
            except UserError as exc:
                problem = one_line(str(exc))
        steps.append(
            HandoutStep(number, total, step.title, step.panel, step.narration, tuple(numbers), problem, note)
        )
    return Handout(lesson.title, lesson.summary, tuple(steps))


def step_numbers(step: Step, devices: Sequence[Device]) -> tuple[str, list[str]]:
    """(the note the page would give, the numbers it shows) for a step whose state parsed;
    UserError (one line) when the page would refuse it here."""
    state = step.state
    if isinstance(state, VisualizerState):
        return visualizer_numbers(state, devices)
    if isinstance(state, MemoryState):
        return "", memory_numbers(state, devices)
    if isinstance(state, BenchState):
        return bench_numbers(state, devices)
    if isinstance(state, DevicesState):
        return "", device_numbers(state, devices)
    return "", []


# --- the launch visualizer ------------------------------------------------------------------------
def visualizer_numbers(state: VisualizerState, devices: Sequence[Device]) -> tuple[str, list[str]]:
    """The launch (both sides in compare mode), the wave shown, a selected thread, and the timeline's
    or the latency chart's figures when the step shows one of those."""
    session = LaunchSession([DeviceChoice(d) for d in devices if isinstance(d, Gpu)])
    note = apply_step(session, state, devices)
    views = TimeViews(session)
    apply_time_views(views, state)
    lines: list[str] = []
    if session.compare:
        comparison = compare_sides(session.sides[0].compared, session.sides[1].compared)
        lines.append(comparison.verdict())
        lines += comparison.table_lines()
    for index, side in enumerate(session.sides):
        label = f"{side.label}: " if session.compare else ""
        if side.plan is None:
            lines.append(f"{label}this launch cannot run: {side.problem}")
            continue
        plan = side.plan
        c = plan.config
        lines.append(
            f"{label}{plan.device_name}: grid {c.grid} x block {c.block}, {c.shared_mem_bytes:,} bytes "
            f"shared memory, {c.regs_per_thread} registers per thread"
        )
        lines.append(label + plain(launch_summary(plan)))
        if not session.compare:
            lines.append(plain(occupancy_headline(plan.occupancy)))
            lines += [plain(t) for t in readings(plan)]
        animation = session.animation(index)
        if animation is not None and views.view == "sms":
            lines.append(label + moment_text(*animation.position(), plan.waves))
        lines += [f"note{f' ({side.label})' if session.compare else ''}: {n}" for n in side.notes]
    selection = session.selection
    if selection is not None:
        animation = session.animation(selection.side)
        info = animation.thread_at(*selection.thread) if animation is not None else None
        if info is not None:
            lines.append("selected thread:")
            lines += ["  " + line for line in thread_lines(info)]
    if views.view == "timeline":
        lines.append(f"timeline at {views.time:.3f} mean blocks:")
        if views.dispatch is not None:
            lines += ["  " + line for line in views.dispatch.summary_lines()]
        else:
            lines.append(f"  {views.dispatch_problem}")
    elif views.view == "latency":
        lines.append(f"latency hiding: {views.preset.label}")
        if views.latency is not None:
            lines.append("  " + views.latency_caption())
            lines += ["  " + line for line in views.latency.summary_lines()]
        else:
            lines.append(f"  {views.latency_problem}")
    return note, lines


def moment_text(wave: int, placed: int | None, waves: int) -> str:
    """Where the wave picture stands, as a step's ``wave`` and ``blocks_placed`` put it."""
    if wave <= 0:
        return f"shown: before the first of {count(waves, 'wave')}"
    if wave > waves:
        return f"shown: all {count(waves, 'wave')} finished"
    placing = f", {count(placed, 'block')} placed so far" if placed is not None else ""
    return f"shown: wave {wave} of {waves}{placing}"


# --- the Memory page ------------------------------------------------------------------------------
def memory_numbers(state: MemoryState, devices: Sequence[Device]) -> list[str]:
    """The tab the step shows, worked out by the same functions and words as the page and the
    ``memory``, ``divergence`` and ``tiling`` commands."""
    if state.view == "coalescing":
        c = coalesce(GlobalAccess(state.elem, state.stride, state.offset, state.active, state.warp))
        return [memory_texts.coalescing_headline(c), *memory_texts.coalescing_lines(c)]
    if state.view == "banks":
        stride = state.stride + (1 if state.pad else 0)  # the page's padding adds one element per row
        b = bank_conflicts(SharedAccess(state.elem, stride, state.offset, state.active))
        return [memory_texts.bank_headline(b), *memory_texts.bank_lines(b)]
    if state.view == "divergence":
        d = divergence(state.block, Branch(state.branch, k=state.k, p=state.p, seed=state.seed))
        return [memory_texts.divergence_headline(d), *(memory_texts.warp_line(w) for w in d.warps[:8])] + (
            [f"... and {count(len(d.warps) - 8, 'more warp')}"] if len(d.warps) > 8 else []
        )
    return tiling_numbers(state, devices)


def tiling_numbers(state: MemoryState, devices: Sequence[Device]) -> list[str]:
    gpus = [d for d in devices if isinstance(d, Gpu)]
    found = best_match(state.gpu, gpus)
    if len(found) != 1:
        what = "not among this machine's GPUs or the catalog" if not found else "more than one GPU"
        raise UserError(f"gpu {shown(state.gpu)} is {what}")
    session = TilingSession(
        MatmulShape(state.rows, state.cols, state.inner, state.tile), found[0], state.regs
    )
    session.set_block(state.block_x, state.block_y)
    session.seek(state.tick)
    model = session.model
    lines = [
        tiling_texts.shape_line(model),
        tiling_texts.headline(model),
        tiling_texts.summary(model),
        f"block ({state.block_x}, {state.block_y}), step {session.state.position} of {session.steps}: "
        + tiling_texts.step_caption(session.timeline, session.state),
        *tiling_texts.count_table(model),
    ]
    cost = session.cost
    if cost is not None:
        lines.append(
            f"on {found[0].name} ({state.regs} registers per thread): {tiling_texts.cost_line(cost)}"
        )
    roof, ceilings = session.roof, session.roof_ceilings()
    here = next((p for p in session.roof_points() if p.tile == state.tile), None)
    if roof is not None and ceilings is not None and here is not None:
        lines.append(tiling_texts.roof_line(here, roof, ceilings))
    return lines


# --- benchmarks and devices -----------------------------------------------------------------------
def bench_numbers(state: BenchState, devices: Sequence[Device]) -> tuple[str, list[str]]:
    """The workload the form is set to and the results the lesson carries (a run is made in
    class, so a handout can only print what was recorded)."""
    _here, note = bench_devices(state, devices)
    sizes = ", ".join(f"{s:,}" for s in state.sizes) if state.sizes else "the workload's own"
    lines = [f"workload {state.workload} on {', '.join(state.devices)}; sizes: {sizes}"]
    recorded = state.recorded
    if recorded is None:
        lines.append("no results recorded with the lesson: the run is made in class")
        return note, lines
    lines.append(f"results {recorded.label} (not this machine's):")
    if recorded.note:
        lines.append(recorded.note)
    rows = [recorded_row(p) for p in recorded.points[:MAX_RECORDED_ROWS]]
    lines += _columns([RECORDED_COLUMNS, *rows])
    if len(recorded.points) > MAX_RECORDED_ROWS:
        lines.append(f"... and {count(len(recorded.points) - MAX_RECORDED_ROWS, 'more point')}")
    return note, lines


def _columns(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def device_numbers(state: DevicesState, devices: Sequence[Device]) -> list[str]:
    """The selected device's sheet: the figures the later steps read."""
    resolved = devices_device(state, devices)
    if resolved.problem:
        raise UserError(resolved.problem)
    device = next(d for d in devices if d.key == resolved.key)
    lines = [device.display_name + (" (catalog spec sheet)" if not device.present else "")]
    if isinstance(device, Gpu):
        cc = device.compute_capability
        if cc is not None:
            lines.append(
                f"compute capability {cc[0]}.{cc[1]}"
                + (f" ({device.architecture})" if device.architecture else "")
            )
        if device.sm_count is not None:
            cores = f" x {device.cuda_cores_per_sm} FP32 lanes" if device.cuda_cores_per_sm else ""
            lines.append(f"{device.sm_count} SMs{cores}")
        if device.clock_sm_max_mhz is not None:
            lines.append(f"boost clock {device.clock_sm_max_mhz:,} MHz")
    if device.memory_total_bytes is not None:
        lines.append(f"memory {binary_bytes(device.memory_total_bytes)}")
    if device.fp32_peak_gflops is not None:
        lines.append(f"FP32 peak {device.fp32_peak_gflops:,.0f} GFLOP/s" + _basis(device.fp32_peak_basis))
    if device.memory_bandwidth_gbps is not None:
        lines.append(
            f"memory bandwidth {device.memory_bandwidth_gbps:,.0f} GB/s"
            + _basis(device.memory_bandwidth_basis)
        )
    return lines


def _basis(text: str) -> str:
    return f" ({text})" if text else ""


__all__ = [
    "PAGE_SIZES",
    "Handout",
    "HandoutStep",
    "lesson_handout",
    "parse_page_size",
    "step_numbers",
]
