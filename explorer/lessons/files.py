"""Read and write lesson files (the format is described in ``explorer.lessons.model``).

Why per step: a teacher edits a lesson by hand the night before class, and one typo must not
cost the other eight steps. A file that is not a lesson at all (not JSON, not an object, no
steps) is one ``LessonError`` line; a step whose values fail the app's own parsers becomes a
damaged ``Step`` whose ``problem`` names the step and the field, and whose raw JSON is written
back unchanged on save. Unknown keys are kept at every level.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from explorer.bench.results import BenchPoint
from explorer.cleantext import clean_text
from explorer.errors import UserError
from explorer.inputs import InputError, one_line, parse_device_key, parse_sizes, parse_whole, shown
from explorer.launch.animation import SPEEDS_WAVES_PER_S
from explorer.launch.config import Dim3, field_problems, parse_launch, parse_thread_ref
from explorer.memory.session import BRANCH_KINDS
from explorer.memory.session import MAX_ELEMENTS as MEMORY_MAX_ELEMENTS
from explorer.schema import SchemaError, check_range, check_value, show
from explorer.statefile import Damaged, parse_json_bytes, read_bounded, save_json

from .model import (
    DEVICE_KINDS,
    FORMAT_NAME,
    FORMAT_VERSION,
    MEMORY_VIEWS,
    SIDE_TABS,
    STEP_PANELS,
    BenchState,
    DevicesState,
    DispatchStep,
    LatencyStep,
    Lesson,
    LessonError,
    MemoryState,
    PanelState,
    Recorded,
    Step,
    VisualizerState,
)

#: a lesson file bigger than this is not one (a lesson with recorded results is tens of KiB)
MAX_LESSON_BYTES = 4 * 1024 * 1024
#: more steps than this is not a class
MAX_STEPS = 500
#: the highest lesson format version read (a newer one loads with a note; a 400-digit one is damage,
#: and its note would have widened the window to thousands of pixels)
MAX_FORMAT_VERSION = 1000
#: the SM picture's zoom levels (the visualizer's Ctrl+Up / Ctrl+Down)
ZOOMS = (1.0, 1.5, 2.0, 3.0)
MIN_SPEED, MAX_SPEED = SPEEDS_WAVES_PER_S[0], SPEEDS_WAVES_PER_S[-1]


class StepError(ValueError):
    """One value of one step is wrong; the message names the field."""


# --------------------------------------------------------------------------- reading


def load_lesson(path: str | os.PathLike[str]) -> Lesson:
    """The lesson in ``path``; ``LessonError`` (one line) when it is not a lesson file at all."""
    p = Path(path)
    name = str(p) if len(str(p)) <= 120 else shown(str(p), 80)  # a long name costs one short line
    try:
        data = read_bounded(p, MAX_LESSON_BYTES)
    except Damaged as exc:
        raise LessonError(f"{name} is not a lesson file: {exc}") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise LessonError(f"{name} cannot be read: {reason}") from None
    if data is None:
        raise LessonError(f"{name} does not exist")
    try:
        value = parse_json_bytes(data)
    except Damaged as exc:
        raise LessonError(f"{name} is not a lesson file: {exc}") from None
    lesson = parse_lesson(value, name)
    lesson.path = p
    return lesson


def parse_lesson(data: Any, where: str = "the lesson") -> Lesson:
    """A lesson from parsed JSON. Whole-file problems raise ``LessonError``; a bad step becomes a
    damaged ``Step`` and the others load."""
    if not isinstance(data, dict):
        raise LessonError(f"{where} is not a lesson file: it is {show(data)}, not a JSON object")
    fmt = data.get("format")
    if fmt != FORMAT_NAME:
        raise LessonError(f'{where} is not a lesson file: its "format" is {show(fmt)}, not {FORMAT_NAME!r}')
    try:
        version = check_value(data.get("version", FORMAT_VERSION), int, "version")
        check_range(version, "version", 1, MAX_FORMAT_VERSION)
        # a teacher's file is someone else's text: no escape sequence in it reaches a terminal
        title = clean_text(check_value(data.get("title", ""), str, "title")).strip()
        summary = clean_text(check_value(data.get("summary", ""), str, "summary"), keep_newlines=True)
        steps = data.get("steps")
        if not isinstance(steps, list) or not steps:
            raise SchemaError(f"steps is {show(steps)}, not a list of at least one step")
        if len(steps) > MAX_STEPS:
            raise SchemaError(f"it has {len(steps):,} steps, more than {MAX_STEPS}")
    except SchemaError as exc:
        raise LessonError(f"{where} is not a usable lesson: {exc}") from None
    known = {"format", "version", "title", "summary", "steps"}
    return Lesson(
        title=title or "Untitled lesson",
        steps=[parse_step(raw, number) for number, raw in enumerate(steps, start=1)],
        summary=summary,
        version=version,
        extra={k: v for k, v in data.items() if k not in known},
    )


def parse_step(raw: Any, number: int) -> Step:
    """Step ``number`` (1-based) from its JSON; never raises: a bad one comes back damaged."""
    try:
        if not isinstance(raw, dict):
            raise StepError(f"it is {show(raw)}, not an object")
        panel = raw.get("panel")
        if panel not in STEP_PANELS:
            raise StepError(f"panel is {show(panel)}, not one of {', '.join(STEP_PANELS)}")
        title = clean_text(_text(raw.get("title", ""), "title"))
        narration = _narration(raw.get("narration", ""))
        state_raw = raw.get("state", {})
        if not isinstance(state_raw, dict):
            raise StepError(f"state is {show(state_raw)}, not an object")
        state = STATE_PARSERS[panel](state_raw)
    except (StepError, SchemaError, InputError) as exc:
        panel_text = raw.get("panel") if isinstance(raw, dict) else None
        return Step(
            panel=panel_text if panel_text in STEP_PANELS else "",
            state=None,
            narration=_narration_or_empty(raw),
            title=_title_or_empty(raw),
            problem=one_line(f"step {number}: {exc}"),
            raw=raw if isinstance(raw, dict) else {"unreadable": raw},
        )
    known = {"panel", "title", "narration", "state"}
    return Step(
        panel=panel,
        state=state,
        narration=narration,
        title=title,
        extra={k: v for k, v in raw.items() if k not in known},
    )


def _text(value: Any, name: str) -> str:
    return check_value(value, str, name)


def _narration(value: Any) -> str:
    """Narration (``explorer.lessons.narration``) as one string or a list of lines (easier to
    edit in JSON)."""
    if isinstance(value, list):
        return clean_text("\n".join(check_value(value, list[str], "narration")), keep_newlines=True)
    return clean_text(_text(value, "narration"), keep_newlines=True)


def _narration_or_empty(raw: Any) -> str:
    try:
        return _narration(raw.get("narration", "")) if isinstance(raw, dict) else ""
    except SchemaError:
        return ""


def _title_or_empty(raw: Any) -> str:
    value = raw.get("title", "") if isinstance(raw, dict) else ""
    return clean_text(value) if isinstance(value, str) else ""


def _launch_text(value: Any, name: str) -> str:
    """A grid, block or extent as the fields show it: "98", "120,68"; a list is joined."""
    if isinstance(value, list):
        return ",".join(str(check_value(v, int, name)) for v in value)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise StepError(f'{name} is {show(value)}, not a number or text such as "120,68"')
    return str(value).strip()


def _pop_known(state: dict[str, Any], cls: type) -> tuple[dict[str, Any], dict[str, Any]]:
    names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
    return {k: v for k, v in state.items() if k in names}, {k: v for k, v in state.items() if k not in names}


def parse_visualizer(state: dict[str, Any]) -> VisualizerState:
    known, extra = _pop_known(state, VisualizerState)
    v = VisualizerState(extra=extra)
    v.device = _text(known.get("device", v.device), "device").strip()
    if not v.device:
        raise StepError('device is empty; name a GPU, e.g. "GTX 1650" or "H100"')
    kind = known.get("device_kind", v.device_kind)
    if kind not in DEVICE_KINDS:
        raise StepError(f"device_kind is {show(kind)}, not one of {', '.join(DEVICE_KINDS)}")
    v.device_kind = kind
    v.grid = _launch_text(known.get("grid", v.grid), "grid")
    v.block = _launch_text(known.get("block", v.block), "block")
    v.smem = _launch_text(known.get("smem", v.smem), "smem")
    v.regs = _launch_text(known.get("regs", v.regs), "regs")
    n = known.get("n", v.n)
    v.n = "" if n is None else _launch_text(n, "n")
    # the launch as the window and `launch` read it: every field that fails is named at once; a
    # launch too big for the GPU is a step (the refusal is the lesson), a size of -1 is a typo
    problems = field_problems(parse_launch(v.grid, v.block, v.smem, v.regs, v.n or None))
    if problems:
        raise StepError("; ".join(problems))
    v.wave = parse_whole(known.get("wave", 0), "wave", minimum=0, maximum=2**31)
    placed = known.get("blocks_placed")
    v.blocks_placed = (
        None if placed is None else parse_whole(placed, "blocks_placed", minimum=0, maximum=2**31)
    )
    clock = known.get("clock")
    v.clock = None if clock is None else check_value(clock, float, "clock")
    if v.clock is not None and v.clock < 0:
        raise StepError(f"clock is {show(clock)}, less than 0")
    v.speed = check_value(known.get("speed", v.speed), float, "speed")
    if not MIN_SPEED <= v.speed <= MAX_SPEED:
        raise StepError(
            f"speed is {show(v.speed)} waves per second; it must be {MIN_SPEED:g} to {MAX_SPEED:g}"
        )
    v.zoom = check_value(known.get("zoom", v.zoom), float, "zoom")
    if v.zoom not in ZOOMS:
        raise StepError(f"zoom is {show(v.zoom)}; it must be one of {', '.join(f'{z:g}' for z in ZOOMS)}")
    v.thread = _text(known.get("thread", "") or "", "thread").strip()
    if v.thread:
        parse_thread_ref(v.thread, "thread")
    tab = known.get("side_tab")
    if tab is not None and tab not in SIDE_TABS:
        raise StepError(f"side_tab is {show(tab)}, not one of {', '.join(SIDE_TABS)}")
    v.side_tab = tab
    _parse_centre(known, v)
    return v


#: the latest moment a step's timeline may ask for, in mean blocks (far past any launch's end)
MAX_STEP_TIME = 1e9


def _parse_centre(known: dict[str, Any], v: VisualizerState) -> None:
    """The picture in the middle and the timeline's and latency view's states, checked by the
    parsers the window uses (``explorer.launch.time_views``, ``dispatch --durations``)."""
    from explorer.launch.durations import parse_durations
    from explorer.launch.latency import RECORD_CYCLES
    from explorer.launch.time_views import VIEWS, check_dispatch, check_latency

    view = known.get("view", v.view)
    if view not in VIEWS:
        raise StepError(f"view is {show(view)}, not one of {', '.join(VIEWS)}")
    v.view = view
    raw = known.get("dispatch", {})
    if not isinstance(raw, dict):
        raise StepError(f"dispatch is {show(raw)}, not an object")
    d, d_extra = _pop_known(raw, DispatchStep)
    step = DispatchStep(extra=d_extra)
    step.durations = _text(d.get("durations", step.durations), "dispatch durations").strip()
    try:
        parse_durations(step.durations)
        step.policy, step.seed = check_dispatch(d.get("policy", step.policy), d.get("seed", step.seed))
    except InputError as exc:
        raise StepError(f"dispatch: {exc}") from None
    if d.get("time") is not None:
        step.time = check_value(d["time"], float, "dispatch time")
        if not 0 <= step.time <= MAX_STEP_TIME:
            raise StepError(
                f"dispatch time is {show(d['time'])}; it must be 0 to {MAX_STEP_TIME:g} mean blocks"
            )
    v.dispatch = step
    raw = known.get("latency", {})
    if not isinstance(raw, dict):
        raise StepError(f"latency is {show(raw)}, not an object")
    lat, l_extra = _pop_known(raw, LatencyStep)
    default = LatencyStep()
    try:
        checked = check_latency(
            lat.get("preset", default.preset), lat.get("alu", default.alu), lat.get("policy", default.policy)
        )
        cycle = lat.get("cycle")
        cycle = (
            None if cycle is None else parse_whole(cycle, "latency cycle", minimum=0, maximum=RECORD_CYCLES)
        )
    except InputError as exc:
        raise StepError(f"latency: {exc}") from None
    v.latency = LatencyStep(checked.preset, checked.alu, checked.policy, cycle, l_extra)


def parse_recorded(value: Any) -> Recorded:
    if not isinstance(value, dict):
        raise StepError(f"recorded is {show(value)}, not an object")
    device = clean_text(_text(value.get("device", ""), "recorded's device")).strip()
    date = clean_text(_text(value.get("date", ""), "recorded's date")).strip()
    if not device or not date:
        raise StepError("recorded needs a device and a date: results are always shown as whose and when")
    rows = value.get("points")
    if not isinstance(rows, list) or not rows:
        raise StepError(f"recorded's points is {show(rows)}, not a list of points")
    from explorer.bench.judge import flag_recorded

    points = flag_recorded(
        [BenchPoint.from_dict(r, where=f"recorded point {i}") for i, r in enumerate(rows, start=1)]
    )
    known = {"device", "date", "note", "points"}
    return Recorded(
        device=device,
        date=date,
        points=points,
        note=clean_text(_text(value.get("note", ""), "recorded's note"), keep_newlines=True),
        extra={k: v for k, v in value.items() if k not in known},
    )


def parse_bench(state: dict[str, Any]) -> BenchState:
    from explorer.bench.workloads import get_workload

    known, extra = _pop_known(state, BenchState)
    b = BenchState(extra=extra)
    b.workload = _text(known.get("workload", b.workload), "workload").strip()
    try:
        get_workload(b.workload)
    except UserError as exc:
        raise StepError(f"workload: {exc}") from None
    devices = check_value(known.get("devices", list(b.devices)), list[str], "devices")
    if not devices:
        raise StepError('devices is empty; give at least "cpu" or "cuda:0"')
    b.devices = tuple(dict.fromkeys(parse_device_key(d) for d in devices))
    sizes = known.get("sizes")
    if sizes is not None:
        items = check_value(sizes, list[int | str], "sizes")
        b.sizes = tuple(parse_sizes(",".join(str(s) for s in items), "sizes"))
    repeats = known.get("repeats")
    b.repeats = None if repeats is None else parse_whole(repeats, "repeats", minimum=1, maximum=1000)
    b.budget_s = check_value(known.get("budget_s", b.budget_s), float, "budget_s")
    if not 0.1 <= b.budget_s <= 600:
        raise StepError(f"budget_s is {show(b.budget_s)}; it must be 0.1 to 600 seconds per point")
    if known.get("recorded") is not None:
        b.recorded = parse_recorded(known["recorded"])
    return b


def parse_devices(state: dict[str, Any]) -> DevicesState:
    known, extra = _pop_known(state, DevicesState)
    d = DevicesState(extra=extra)
    d.device = _text(known.get("device", d.device), "device").strip() or "cpu"
    return d


def _memory_whole(known: dict[str, Any], name: str, default: int, lo: int, hi: int, what: str) -> int:
    return parse_whole(known.get(name, default), f"{name} ({what})", minimum=lo, maximum=hi)


def parse_memory(state: dict[str, Any]) -> MemoryState:
    """The Memory page's state; each value is held to the range the page's field takes (and the
    core's model then accepts), so a step that loads is one the page can show."""
    from explorer.memory.coalescing import ELEMENT_SIZES, WARP_SIZE
    from explorer.memory.divergence import MAX_BLOCK_THREADS, MAX_K
    from explorer.memory.presets import BRANCH_PRESETS, P_DECIMALS, VIEW_PATTERNS

    known, extra = _pop_known(state, MemoryState)
    m = MemoryState(extra=extra)
    view = known.get("view", m.view)
    if view not in MEMORY_VIEWS:
        raise StepError(f"view is {show(view)}, not one of {', '.join(MEMORY_VIEWS)}")
    m.view = view
    m.pattern = _text(known.get("pattern", ""), "pattern").strip()
    preset_numbers: dict[str, int | float | str] = {}
    if m.pattern and view in VIEW_PATTERNS:
        pattern = next((p for p in VIEW_PATTERNS[view] if p.name == m.pattern), None)
        if pattern is None:
            names = "; ".join(p.name for p in VIEW_PATTERNS[view])
            raise StepError(f"pattern is {show(m.pattern)}, not one of the {view} presets: {names}")
        preset_numbers = dict(zip(("elem", "stride", "offset", "active"), pattern.numbers, strict=True))
    elif m.pattern:
        branch = next((b for b in BRANCH_PRESETS if b.name == m.pattern), None)
        if branch is None:
            names = "; ".join(b.name for b in BRANCH_PRESETS)
            raise StepError(f"pattern is {show(m.pattern)}, not one of the divergence presets: {names}")
        preset_numbers = {
            "branch": branch.kind,
            **({"p": branch.p} if branch.kind == "random" else {"k": branch.k}),
        }
    for name, value in preset_numbers.items():  # a preset sets its numbers; a clash is named
        if name in known and known[name] != value:
            raise StepError(
                f"{name} is {show(known[name])}, but pattern {m.pattern!r} sets it to {show(value)}; "
                "leave the pattern out to give other numbers"
            )
        known.setdefault(name, value)
    elem = parse_whole(known.get("elem", m.elem), "elem (element size in bytes)", minimum=1, maximum=16)
    if elem not in ELEMENT_SIZES:
        raise StepError(f"elem is {elem} bytes; it must be one of {', '.join(map(str, ELEMENT_SIZES))}")
    m.elem = elem
    lowest_stride = 0 if view == "banks" else 1  # every lane on one word: a broadcast, shared memory only
    m.stride = _memory_whole(known, "stride", m.stride, lowest_stride, MEMORY_MAX_ELEMENTS, "elements")
    m.offset = _memory_whole(known, "offset", m.offset, 0, MEMORY_MAX_ELEMENTS, "elements")
    m.active = _memory_whole(known, "active", m.active, 1, WARP_SIZE, "lanes")
    m.warp = _memory_whole(known, "warp", m.warp, 0, MAX_BLOCK_THREADS // WARP_SIZE - 1, "warp of the block")
    pad = known.get("pad", m.pad)
    if not isinstance(pad, bool):
        raise StepError(f"pad is {show(pad)}, not true or false")
    m.pad = pad
    if m.view == "banks" and m.pad and m.stride + 1 > MEMORY_MAX_ELEMENTS:
        raise StepError(f"stride {m.stride} padded by one is more than {MEMORY_MAX_ELEMENTS} elements")
    m.block = _memory_whole(known, "block", m.block, 1, MAX_BLOCK_THREADS, "threads")
    branch_kind = known.get("branch", m.branch)
    if branch_kind not in BRANCH_KINDS:
        raise StepError(f"branch is {show(branch_kind)}, not one of {', '.join(BRANCH_KINDS)}")
    m.branch = branch_kind
    m.k = _memory_whole(known, "k", m.k, 0 if m.branch == "lt" else 1, MAX_K, f"K of the {m.branch} branch")
    p = check_value(known.get("p", m.p), float, "p")
    if not 0.0 <= p <= 1.0:
        raise StepError(f"p is {show(p)}; it must be 0 to 1 (the share of lanes taking the branch)")
    if round(p, P_DECIMALS) != p:
        raise StepError(f"p is {show(p)}; the page takes at most {P_DECIMALS} decimals")
    m.p = p
    m.seed = _memory_whole(known, "seed", m.seed, 0, 1 << 30, "of the random data")
    _parse_tiling(known, m)
    _parse_example(known, m)
    return m


def _parse_example(known: dict[str, Any], m: MemoryState) -> None:
    """The kernel tab's script: a shipped example by name, which a "kernel" step must give."""
    from explorer.kernels.examples import example_path

    example = _text(known.get("example", ""), "example").strip()
    if example:
        try:
            example_path(example)
        except UserError as exc:
            raise StepError(str(exc)) from None
    elif m.view == "kernel":
        raise StepError('a "kernel" step names its script: "example" is one of the shipped examples')
    m.example = example
    m.line = _memory_whole(known, "line", m.line, 0, 1 << 20, "the source line picked")


def _parse_tiling(known: dict[str, Any], m: MemoryState) -> None:
    """The tiled-matmul stepper's fields, held to what its controls take (the block inside the
    grid, the tick inside the block's steps)."""
    from explorer.memory.tiling import MatmulShape
    from explorer.memory.tiling_session import TILE_MAX, TILE_MIN
    from explorer.memory.tiling_steps import MAX_STEPPER_DIM, BlockTicks

    m.rows = _memory_whole(known, "rows", m.rows, 1, MAX_STEPPER_DIM, "M, rows of A and C")
    m.cols = _memory_whole(known, "cols", m.cols, 1, MAX_STEPPER_DIM, "N, columns of B and C")
    m.inner = _memory_whole(known, "inner", m.inner, 1, MAX_STEPPER_DIM, "K, columns of A and rows of B")
    m.tile = _memory_whole(known, "tile", m.tile, TILE_MIN, TILE_MAX, "T, the tile side")
    shape = MatmulShape(m.rows, m.cols, m.inner, m.tile)
    gx, gy = shape.grid
    m.block_x = _memory_whole(known, "block_x", m.block_x, 0, gx - 1, "the block's column in the grid")
    m.block_y = _memory_whole(known, "block_y", m.block_y, 0, gy - 1, "the block's row in the grid")
    steps = len(BlockTicks(shape, m.block_x, m.block_y))
    m.tick = _memory_whole(known, "tick", m.tick, 0, steps, "the stepper's position")
    m.gpu = _text(known.get("gpu", m.gpu), "gpu").strip() or m.gpu
    m.regs = _memory_whole(known, "regs", m.regs, 1, 255, "registers per thread")


STATE_PARSERS: dict[str, Callable[[dict[str, Any]], PanelState]] = {
    "visualizer": parse_visualizer,
    "benchmarks": parse_bench,
    "devices": parse_devices,
    "memory": parse_memory,
}


# --------------------------------------------------------------------------- writing


def _state_dict(state: PanelState) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(state, VisualizerState):
        default = VisualizerState()
        for f in dataclasses.fields(VisualizerState):
            if f.name == "extra":
                continue
            value = getattr(state, f.name)
            # the launch is always written; the rest only where it differs from the default
            if f.name in ("device", "device_kind", "grid", "block", "smem", "regs", "n") or value != getattr(
                default, f.name
            ):
                out[f.name] = _object_dict(value) if isinstance(value, (DispatchStep, LatencyStep)) else value
    elif isinstance(state, BenchState):
        out["workload"] = state.workload
        out["devices"] = list(state.devices)
        if state.sizes is not None:
            out["sizes"] = list(state.sizes)
        if state.repeats is not None:
            out["repeats"] = state.repeats
        out["budget_s"] = state.budget_s
        if state.recorded is not None:
            r = state.recorded
            out["recorded"] = {
                "device": r.device,
                "date": r.date,
                **({"note": r.note} if r.note else {}),
                "points": [p.to_dict() for p in r.points],
                **r.extra,
            }
    elif isinstance(state, DevicesState):
        out["device"] = state.device
    elif isinstance(state, MemoryState):
        memory_default = MemoryState()
        shown_fields = MemoryState.VIEW_FIELDS[state.view]
        out["view"] = state.view
        for f in dataclasses.fields(MemoryState):
            if f.name in ("extra", "view"):
                continue
            value = getattr(state, f.name)
            # the shown tab's controls are always written; another tab's only where set
            if (f.name in shown_fields and (f.name != "pattern" or value)) or value != getattr(
                memory_default, f.name
            ):
                out[f.name] = value
    out.update(state.extra)
    return out


def _object_dict(value: DispatchStep | LatencyStep) -> dict[str, Any]:
    """A step's timeline or latency state: every field set, the moment only when one is given."""
    out = {
        f.name: getattr(value, f.name)
        for f in dataclasses.fields(value)
        if f.name != "extra" and getattr(value, f.name) is not None
    }
    out.update(value.extra)
    return out


def step_dict(step: Step) -> dict[str, Any]:
    """A step as the file holds it; a damaged step is written back exactly as it was read."""
    if step.raw is not None:
        return step.raw
    assert step.state is not None
    out: dict[str, Any] = {"panel": step.panel}
    if step.title:
        out["title"] = step.title
    lines = step.narration.split("\n")
    out["narration"] = lines if len(lines) > 1 else step.narration
    out["state"] = _state_dict(step.state)
    out.update(step.extra)
    return out


def dump_lesson(lesson: Lesson) -> dict[str, Any]:
    """The lesson as the JSON object its file holds (version: the newer of this app's and the
    file's, so a newer file's kept fields are not relabelled as this version's)."""
    out: dict[str, Any] = {
        "format": FORMAT_NAME,
        "version": max(lesson.version, FORMAT_VERSION),
        "title": lesson.title,
    }
    if lesson.summary:
        out["summary"] = lesson.summary
    out["steps"] = [step_dict(s) for s in lesson.steps]
    out.update(lesson.extra)
    return out


def save_lesson(lesson: Lesson, path: str | os.PathLike[str]) -> Path:
    """Write ``lesson`` to ``path`` atomically (a crash leaves the old file whole)."""
    p = Path(path)
    try:
        written = save_json(p, dump_lesson(lesson), create_folder=False)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise LessonError(f"the lesson could not be saved to {p}: {reason}") from None
    lesson.path = written
    return written


def thread_ref_text(block_idx: Dim3, thread_idx: Dim3) -> str:
    """The ``thread`` field for one thread: "48,2,0:4,5,0"."""
    return f"{block_idx.x},{block_idx.y},{block_idx.z}:{thread_idx.x},{thread_idx.y},{thread_idx.z}"
