"""The launch visualizer's session as text: what the settings file and a lesson step keep of it.

Both keep a launch as a teacher would type it (grid "98,1,1", n "100000" or "1920,1080"): a lesson
is written by hand, and a settings file may come from an older version. So this is where such text
becomes a ``LaunchConfig`` again, through the same parser as the ``launch`` command
(``parse_launch``), and where a ``LaunchSession`` is written out as text. The window's panel only
adds what is its own (the zoom, the side tab).

The keys (the settings file's ``pages.visualizer`` and a step's ``extra``): ``device``, ``grid``,
``block``, ``smem``, ``regs``, ``n``, ``preset`` (launch A), ``speed`` (an index into
``SPEEDS_WAVES_PER_S``), ``compare`` (1: A and B), ``side`` ("A" or "B": the side being edited) and
``b_device``, ``b_grid``, ... ``b_preset`` for B, each missing one taking A's value (B is A but for
what is named, as with ``launch --compare``).

Qt-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from explorer.devices.model import Device
from explorer.errors import UserError
from explorer.launch.animation import SPEEDS_WAVES_PER_S
from explorer.launch.config import (
    LaunchConfig,
    dims_text,
    field_problems,
    parse_launch,
    parse_thread_ref,
    problem_size_text,
)
from explorer.launch.presets import Preset, preset_named
from explorer.launch.session import LaunchSession, LaunchSetup

from .files import thread_ref_text
from .model import SideTab, VisualizerState
from .resolve import visualizer_device

Saved = dict[str, str | int]
#: a launch's text fields, in ``parse_launch``'s order
LAUNCH_KEYS = ("grid", "block", "smem", "regs", "n")
#: what ``saved_state`` holds that a lesson step has fields of its own for; any other key (B, or a
#: newer feature's state) travels in the step's ``extra`` and comes back through ``restore_state``
STEP_KEYS = frozenset({"device", *LAUNCH_KEYS, "preset", "speed", "zoom"})


def setup_texts(setup: LaunchSetup) -> dict[str, str]:
    """A side's launch as the launch fields show it (a refused size as it was typed)."""
    c = setup.config
    texts = {
        "grid": dims_text(c.grid),
        "block": dims_text(c.block),
        "smem": str(c.shared_mem_bytes),
        "regs": str(c.regs_per_thread),
        "n": problem_size_text(c),
    }
    if setup.bad_size is not None:
        texts["n"] = setup.bad_size.text
    return texts


def _preset_name(setup: LaunchSetup) -> str:
    return setup.preset.short_name if setup.preset is not None else ""


def saved_state(session: LaunchSession) -> Saved:
    """The session as the settings file keeps it (see the module's docstring for the keys)."""
    a = session.setups[0]
    saved: Saved = {"device": session.wanted_key or a.device_key, **setup_texts(a), "preset": _preset_name(a)}
    if session.compare:
        b = session.setups[1]
        saved.update(compare=1, side="AB"[session.edited], b_device=b.device_key)
        saved.update({f"b_{k}": v for k, v in setup_texts(b).items()})
        saved["b_preset"] = _preset_name(b)
    else:
        saved["compare"] = 0
    saved["speed"] = session.speed_index
    return saved


def _launch(texts: dict[str, str]) -> LaunchConfig | None:
    """The launch the texts hold, or None when a field does not parse or the launch fields could
    not hold it (a remembered launch is then skipped whole, never half taken)."""
    try:
        config = parse_launch(*(texts[k] for k in LAUNCH_KEYS))
    except UserError:
        return None
    return None if field_problems(config) else config


def _preset(name: object, config: LaunchConfig) -> Preset | None:
    """The preset named, kept only while the launch is still exactly that preset's."""
    preset = preset_named(name) if isinstance(name, str) else None
    return preset if preset is not None and preset.config == config else None


def restore_state(session: LaunchSession, saved: Saved) -> None:
    """Take back what ``saved_state`` wrote, in an earlier run or a lesson step. Each part that
    parses is taken; a launch that does not is skipped whole (A keeps the one it has, B copies A);
    a device not found yet is remembered (``wanted_key``) and taken when discovery finds it."""
    a = session.setups[0]
    key, wanted = a.device_key, ""
    device = saved.get("device")
    if isinstance(device, str) and device:
        if any(c.key == device for c in session.devices):
            key = device
        else:
            wanted = device
    config = _launch({k: str(saved.get(k, "")) for k in LAUNCH_KEYS})
    a = (
        replace(a, device_key=key)
        if config is None
        else LaunchSetup(key, config, _preset(saved.get("preset"), config))
    )
    setups = [a]
    edited = 0
    if saved.get("compare") == 1:
        a_texts = setup_texts(a)
        b_config = _launch({k: str(saved.get(f"b_{k}", a_texts[k])) for k in LAUNCH_KEYS})
        b_device = saved.get("b_device")
        b_key = a.device_key
        if isinstance(b_device, str) and b_device:
            found = session.find_device(b_device)
            b_key = found.key if found is not None else b_device
        if b_config is None:  # B's launch does not parse: a copy of A's
            setups.append(replace(a, device_key=b_key))
        else:
            setups.append(LaunchSetup(b_key, b_config, _preset(saved.get("b_preset"), b_config)))
        edited = 1 if saved.get("side") == "B" else 0
    session.load(setups, edited, wanted)
    speed = saved.get("speed")
    if isinstance(speed, int) and not isinstance(speed, bool):
        session.set_speed(speed)


def step_state(session: LaunchSession, zoom: float, side_tab: SideTab | None) -> VisualizerState | None:
    """What a lesson step records of the session: launch A's fields, the moment shown, the speed,
    the thread pinned on A, B in ``extra``; the view adds its zoom and side tab. None when A's
    device is not one a lesson can name (not found here, or another machine's)."""
    saved = saved_state(session)
    choice = session.find_device(str(saved["device"]))
    if choice is None or choice.remote is not None:
        return None
    device = choice.device
    state = VisualizerState(
        device=device.name,
        device_kind="present" if device.present else "catalog",
        grid=str(saved["grid"]),
        block=str(saved["block"]),
        smem=str(saved["smem"]),
        regs=str(saved["regs"]),
        n=str(saved["n"]),
        speed=SPEEDS_WAVES_PER_S[session.speed_index],
        zoom=zoom,
        side_tab=side_tab,
        extra={k: v for k, v in saved.items() if k not in STEP_KEYS},
    )
    a = session.animation(0)
    if a is not None:
        state.wave, state.blocks_placed = a.position()
        state.clock = session.moment  # in compare mode the one clock both sides show
        s = session.selection
        if s is not None and s.side == 0:
            info = a.thread_at(*s.thread)
            if info is not None:
                state.thread = thread_ref_text(info.block_idx, info.thread_idx)
    return state


def apply_step(session: LaunchSession, state: VisualizerState, devices: Sequence[Device]) -> str:
    """Put the session in a lesson step's state (paused at its moment, its thread pinned) and
    return the note for the narration pane. UserError (one line) when the step's device is not
    here nor in the catalog, or its thread is not in its launch."""
    resolved = visualizer_device(state, devices)
    if resolved.problem:
        raise UserError(resolved.problem)
    speed = min(range(len(SPEEDS_WAVES_PER_S)), key=lambda i: abs(SPEEDS_WAVES_PER_S[i] - state.speed))
    saved: Saved = {
        k: v for k, v in state.extra.items() if isinstance(v, (str, int)) and not isinstance(v, bool)
    }
    saved.update(
        device=resolved.key,
        grid=state.grid,
        block=state.block,
        smem=state.smem,
        regs=state.regs,
        n=state.n,
        preset="",
        speed=speed,
    )
    restore_state(session, saved)
    a = session.animation(0)
    if a is None:  # a launch that cannot run shows why, and has no moment
        return resolved.note
    if state.clock is None:
        session.seek_wave(state.wave, state.blocks_placed)  # A's wave, as the one clock's time
    else:
        session.show_moment(state.clock)
    if state.thread:
        plan = a.plan
        try:
            block_idx, thread_idx = parse_thread_ref(state.thread, "thread")
            block = plan.block_linear(block_idx)
            warp, lane = divmod(plan.thread_linear(thread_idx), plan.warp_size)
        except UserError as exc:
            raise UserError(f"thread {state.thread}: {exc}") from None
        session.select_thread(block, warp, lane)
    return resolved.note
