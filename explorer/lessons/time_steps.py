"""The visualizer's timeline and latency views as text: what the settings file and a lesson step
keep of ``explorer.launch.time_views.TimeViews``.

The settings file (``pages.visualizer``, beside the session's keys of ``explorer.lessons.visualizer``)
keeps ``view`` ("sms", "timeline" or "latency"), ``durations``, ``dispatch_policy`` and ``seed``,
``latency_preset``, ``alu`` and ``latency_policy``; a lesson step keeps them in its own fields
(``VisualizerState.view``, ``.dispatch`` and ``.latency``) with the moment each view shows.

Qt-free.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from explorer.devices.model import CatalogGpu, CudaGpu, Device, Gpu
from explorer.errors import UserError
from explorer.launch.durations import parse_durations
from explorer.launch.time_views import (
    VIEWS,
    DispatchSettings,
    LatencySettings,
    TimeViews,
    check_dispatch,
    check_latency,
)

from .model import DispatchStep, LatencyStep, VisualizerState

Saved = dict[str, str | int]


def saved_time_views(model: TimeViews) -> Saved:
    """What the settings file keeps, so the next start shows the same view with the same settings."""
    d, lat = model.dispatch_settings, model.latency_settings
    return {
        "view": model.view,
        "durations": d.durations,
        "dispatch_policy": d.policy,
        "seed": d.seed,
        "latency_preset": lat.preset,
        "alu": lat.alu,
        "latency_policy": lat.policy,
    }


def restore_time_views(model: TimeViews, saved: Saved) -> None:
    """Take back what ``saved_time_views`` wrote. Each value that parses is taken, each that does
    not keeps what is in force (a durations file that has gone since, a hand-edited seed); nothing
    raises."""
    d, lat = model.dispatch_settings, model.latency_settings
    durations = _checked(saved, "durations", d.durations, parse_durations)
    policy = _checked(saved, "dispatch_policy", d.policy, lambda v: check_dispatch(v, 0)[0])
    seed = _checked(saved, "seed", d.seed, lambda v: check_dispatch("free", v)[1])
    preset = _checked(saved, "latency_preset", lat.preset, lambda v: check_latency(v, 0, "gto").preset)
    alu = _checked(saved, "alu", lat.alu, lambda v: check_latency(lat.preset, v, "gto").alu)
    lat_policy = _checked(
        saved, "latency_policy", lat.policy, lambda v: check_latency(lat.preset, 0, v).policy
    )
    view = saved.get("view")
    try:
        model.load(
            view if isinstance(view, str) and view in VIEWS else model.view,
            DispatchSettings(str(durations), str(policy), int(seed)),
            LatencySettings(str(preset), int(alu), str(lat_policy)),
        )
    except UserError:  # a durations file read a moment ago and gone since: the rest still holds
        model.load(model.view, d, LatencySettings(str(preset), int(alu), str(lat_policy)))


def _checked(saved: Saved, key: str, default: str | int, check: Callable[[object], object]) -> str | int:
    """The saved value when ``check`` takes it (bools are not numbers here), else ``default``."""
    value = saved.get(key)
    if value is None or isinstance(value, bool):
        return default
    try:
        check(value)
    except UserError:
        return default
    return value


def record_time_views(model: TimeViews, state: VisualizerState) -> None:
    """Fill a step being recorded with the view shown, both views' settings and the moment shown."""
    d, lat = model.dispatch_settings, model.latency_settings
    state.view = model.view
    state.dispatch = DispatchStep(
        d.durations, d.policy, d.seed, round(model.time, 6) if model.view == "timeline" else None
    )
    state.latency = LatencyStep(
        lat.preset, lat.alu, lat.policy, model.cycles.cycle if model.view == "latency" else None
    )


def apply_time_views(model: TimeViews, state: VisualizerState) -> None:
    """Put the model in a step's state, after the step's launch is in the session: its view, both
    views' settings (the defaults for what it leaves out), and the moment: the timeline's time (the
    launch's end when absent) or the latency chart's cycle (its first window when absent).
    UserError (one line) when a setting cannot apply here (a durations file that is not there)."""
    d, lat = state.dispatch, state.latency
    model.load(
        state.view,
        DispatchSettings(d.durations, d.policy, d.seed),
        LatencySettings(lat.preset, lat.alu, lat.policy),
    )
    if state.view == "timeline":
        model.show_time(d.time)
    elif state.view == "latency" and lat.cycle is not None:
        model.cycles.seek(lat.cycle)


def headless_views(devices: Sequence[Device]) -> tuple[TimeViews, list[Gpu]]:
    """The visualizer's models with no window, over the GPUs among ``devices``: what a step is
    applied to when it is checked (``lessons --check``) or asked about (a predict step)."""
    from explorer.launch.session import DeviceChoice, LaunchSession

    gpus: list[Gpu] = [d for d in devices if isinstance(d, (CudaGpu, CatalogGpu))]
    return TimeViews(LaunchSession([DeviceChoice(d) for d in gpus])), gpus
