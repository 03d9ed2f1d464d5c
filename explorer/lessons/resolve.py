"""What a step means on this machine: which device it shows, and what to say when it cannot be
shown as it was made.

A lesson made on a laptop with a GTX 1650 is opened in a lab without one: the visualizer step
then shows the catalog's GTX 1650 (the same SMs and limits, so the same launch picture) and says
that it does; a benchmark step that ran on ``cuda:0`` runs on the CPU only and says the GPU is
missing, with the results recorded when the lesson was made shown apart. Same name rules as
``launch --device`` (``explorer.devices.names``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from explorer.devices.model import Device
from explorer.devices.names import best_match
from explorer.inputs import shown

from .model import BenchState, DevicesState, VisualizerState


@dataclass(frozen=True)
class Resolved:
    """The device key a panel should select (``""``: none fits), a note for the narration pane
    (a fallback the viewer must know about) and, when the step cannot apply, the problem."""

    key: str = ""
    note: str = ""
    problem: str = ""


def visualizer_device(state: VisualizerState, devices: Sequence[Device]) -> Resolved:
    """The GPU a visualizer step names: the one present when there is one, else its catalog sheet."""
    gpus = [d for d in devices if d.is_gpu]
    found = best_match(state.device, gpus)
    if not found:
        return Resolved(problem=f"device {shown(state.device)} is neither in this machine nor in the catalog")
    if len(found) > 1:
        names = ", ".join(d.name for d in found[:4])
        return Resolved(problem=f"device {shown(state.device)} could mean {names}; give more of the name")
    device = found[0]
    if state.device_kind == "present" and not device.present:
        return Resolved(
            device.key,
            note=(
                f"This step was made on a {device.name} in the lesson maker's machine; this machine has "
                "none, so its catalog spec sheet is shown (the same SMs and limits)."
            ),
        )
    return Resolved(device.key)


def bench_devices(state: BenchState, devices: Sequence[Device]) -> tuple[tuple[str, ...], str]:
    """The devices a benchmark step can run on here, and the note when some are missing."""
    usable = {d.key for d in devices if d.kind == "cpu" or (d.kind == "cuda" and getattr(d, "usable", True))}
    usable.add("cpu")
    here = tuple(d for d in state.devices if d in usable)
    missing = [d for d in state.devices if d not in usable]
    if not missing:
        return here, ""
    gpus = "a GPU" if len(missing) == 1 else f"{len(missing)} GPUs"
    note = f"This step runs on {gpus} ({', '.join(missing)}), which this machine does not have"
    note += ": only the CPU is chosen." if here else ": the CPU is chosen instead, to show the workload."
    if state.recorded is not None:
        note += f" The results {state.recorded.label} are shown for comparison."
    else:
        note += " The lesson holds no recorded results for it."
    return here or ("cpu",), note


def devices_device(state: DevicesState, devices: Sequence[Device]) -> Resolved:
    found = best_match(state.device, list(devices))
    if len(found) == 1:
        return Resolved(found[0].key)
    if not found:
        return Resolved(problem=f"device {shown(state.device)} is not in this machine or the catalog")
    return Resolved(found[0].key)
