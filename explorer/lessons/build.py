"""Build a lesson step's models headless, as its page does when the step is shown.

A step whose every value parses can still fail when its page builds the picture: a model that
breaks on a launch it should take leaves a dead tab in class. ``lessons --check`` runs this for
every step, so such a step is reported before class, in one line naming the step and the part:

* a visualizer step: its launch on its device (the plan, the wave animation at the step's moment,
  the pinned thread), the words and occupancy graphs beside it, then the timeline (``explorer.launch.dispatch``) and the
  latency view (``explorer.launch.latency``) with the step's settings, both of them, because the
  class can click either tab;
* a memory step: the tab it shows (coalescing, bank conflicts, divergence, or the tiled-matmul
  stepper with its GPU's occupancy and roofline) and the words the page writes for it;
* a benchmarks step: its workload and the devices it would run on here.

Devices are the catalog's sheets (a check does not look for this machine's GPUs). What a page
shows in place of a picture by design (a launch too big for the GPU, the lesson being the
refusal) is no problem; what it would show for the view a step opens instead of that view is.

Qt-free.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from explorer.devices.model import Device
from explorer.errors import UserError
from explorer.inputs import one_line

from .model import BenchState, MemoryState, Step, VisualizerState


@dataclass(frozen=True)
class BuildProblem:
    """What building one part of a step's page gave: ``part`` ("launch", "occupancy", "timeline",
    "latency", "coalescing", "banks", "divergence", "tiling", "benchmarks") and one line."""

    part: str
    text: str

    def __str__(self) -> str:
        return f"{self.part}: {self.text}"


def _crash(exc: BaseException) -> str:
    """A model that raised something other than its one-line refusal: a bug the page would hit."""
    return one_line(f"the page's model fails building it ({type(exc).__name__}: {exc})")


def _attempt(part: str, build: Callable[[], str], problems: list[BuildProblem]) -> bool:
    """Run ``build``; a returned line or a refusal (UserError) is a problem, anything else raised
    is a crash. True when the part was built with nothing to say."""
    try:
        said = build()
    except UserError as exc:
        problems.append(BuildProblem(part, one_line(str(exc))))
        return False
    except Exception as exc:  # the point of the check: no model error may reach a class
        problems.append(BuildProblem(part, _crash(exc)))
        return False
    if said:
        problems.append(BuildProblem(part, one_line(said)))
        return False
    return True


def build_step(step: Step, devices: Sequence[Device]) -> list[BuildProblem]:
    """Every problem building ``step``'s page would meet ([] for a damaged step: its problem is
    already the parser's)."""
    state = step.state
    problems: list[BuildProblem] = []
    if isinstance(state, VisualizerState):
        _build_visualizer(state, devices, problems)
    elif isinstance(state, MemoryState):
        _build_memory(state, devices, problems)
    elif isinstance(state, BenchState):
        _attempt("benchmarks", lambda: _build_bench(state, devices), problems)
    return problems


def _build_visualizer(
    state: VisualizerState, devices: Sequence[Device], problems: list[BuildProblem]
) -> None:
    from .time_steps import apply_time_views, headless_views
    from .visualizer import apply_step

    model, gpus = headless_views(devices)

    def launch() -> str:
        apply_step(model.session, state, gpus)
        return ""

    if not _attempt("launch", launch, problems):
        return

    def figures() -> str:
        """The words and graphs beside the SMs: summary, readings, occupancy and its three sweeps,
        the pinned thread in the inspector (each side of a comparison)."""
        from explorer.launch import texts
        from explorer.launch.session import ThreadShown
        from explorer.launch.sweep import sweep_block_size, sweep_registers, sweep_shared_memory

        for side in model.session.sides:
            plan, limits = side.plan, side.limits
            if plan is None or limits is None:
                continue
            occ, c = plan.occupancy, plan.config
            texts.launch_summary(plan)
            texts.gpu_fill(plan)
            texts.readings(plan)
            texts.occupancy_headline(occ)
            occ.explain()
            sweep_block_size(limits, c.regs_per_thread, c.shared_mem_bytes, occ.threads_per_block)
            sweep_registers(limits, occ.threads_per_block, c.shared_mem_bytes, c.regs_per_thread)
            sweep_shared_memory(limits, occ.threads_per_block, c.regs_per_thread, c.shared_mem_bytes)
        shown = model.session.inspection()
        if isinstance(shown, ThreadShown):
            texts.thread_rows(shown.info)
            texts.thread_state(shown.info)
        return ""

    _attempt("occupancy", figures, problems)
    runs = model.session.edited_side.plan is not None  # else the refusal is what the step shows

    def shown() -> str:
        apply_time_views(model, state)
        if not runs:
            return ""
        return model.dispatch_problem if state.view == "timeline" else model.latency_problem

    part = state.view if state.view != "sms" else "launch"
    if not _attempt(part, shown, problems):
        return
    for view in ("timeline", "latency"):  # the tab the class may click, with the step's settings
        if view != state.view:

            def other(v: str = view) -> str:
                model.set_view(v)
                return ""

            _attempt(view, other, problems)


def _build_memory(state: MemoryState, devices: Sequence[Device], problems: list[BuildProblem]) -> None:
    builders: dict[str, Callable[[], str]] = {
        "coalescing": lambda: _build_coalescing(state),
        "banks": lambda: _build_banks(state),
        "divergence": lambda: _build_divergence(state),
        "tiling": lambda: _build_tiling(state, devices),
        "kernel": lambda: _build_kernel(state),
    }
    _attempt(state.view, builders[state.view], problems)


def _build_kernel(state: MemoryState) -> str:
    """The example is there and is a script the tab can trace (its trace runs in the window, in a
    child process, when the step is shown)."""
    from explorer.kernels.examples import example_path
    from explorer.kernels.run import check_script

    check_script(str(example_path(state.example)))
    return ""


def _build_coalescing(state: MemoryState) -> str:
    from explorer.memory import texts
    from explorer.memory.coalescing import GlobalAccess, coalesce, stride_sweep

    c = coalesce(GlobalAccess(state.elem, state.stride, state.offset, state.active, state.warp))
    texts.coalescing_headline(c)
    texts.coalescing_lines(c)
    stride_sweep(state.elem)
    return ""


def _build_banks(state: MemoryState) -> str:
    from explorer.memory import texts
    from explorer.memory.banks import SharedAccess, bank_conflicts

    b = bank_conflicts(
        SharedAccess(state.elem, state.stride + (1 if state.pad else 0), state.offset, state.active)
    )
    texts.bank_headline(b)
    texts.bank_lines(b)
    return ""


def _build_divergence(state: MemoryState) -> str:
    from explorer.memory import texts
    from explorer.memory.divergence import Branch, divergence

    d = divergence(state.block, Branch(state.branch, k=state.k, p=state.p, seed=state.seed))
    texts.divergence_headline(d)
    for w in d.warps:
        texts.warp_line(w)
    return ""


def _build_tiling(state: MemoryState, devices: Sequence[Device]) -> str:
    from explorer.devices.names import best_match
    from explorer.memory import tiling_texts as texts
    from explorer.memory.tiling import MatmulShape
    from explorer.memory.tiling_session import TilingSession

    found = best_match(state.gpu, [d for d in devices if d.is_gpu])
    if len(found) != 1:
        where = "not in the catalog" if not found else "more than one GPU; give more of its name"
        return f"gpu {state.gpu!r} is {where}"
    session = TilingSession(
        MatmulShape(state.rows, state.cols, state.inner, state.tile), found[0], state.regs
    )
    session.set_block(state.block_x, state.block_y)
    session.seek(state.tick)
    model = session.model
    texts.headline(model)
    texts.summary(model)
    texts.step_caption(session.timeline, session.state)
    session.timeline.block_counters(session.steps)
    cost = session.cost
    if cost is not None:
        texts.cost_line(cost)
    roof, ceilings = session.roof, session.roof_ceilings()
    if roof is None or ceilings is None:  # a sheet without a roofline: the tab says so in place of the plot
        return ""
    points = session.roof_points()
    here = next((p for p in points if p.tile == state.tile), None)
    if here is not None:
        texts.roof_line(here, roof, ceilings)
    return ""


def _build_bench(state: BenchState, devices: Sequence[Device]) -> str:
    from explorer.bench.workloads import get_workload

    from .resolve import bench_devices

    get_workload(state.workload)
    bench_devices(state, devices)
    return ""
