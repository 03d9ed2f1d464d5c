"""The Benchmarks form as a lesson step holds it, and a step put back into the form.

A step holds the workload, devices, sizes (none: the workload's defaults), repeats (none: until
the spread settles) and the time budget; putting it back fills the form and leaves the run to the
teacher. Devices this machine lacks are left out and the returned note says so (the narration
pane shows any recorded results beside it).
"""

from __future__ import annotations

from collections.abc import Sequence

from explorer.bench.sizes import sizes_text
from explorer.devices.model import Device
from explorer.errors import UserError
from explorer.inputs import parse_sizes
from explorer.lessons.model import BenchState
from explorer.lessons.resolve import bench_devices
from explorer.ui.bench.controls import BenchControls


def form_state(c: BenchControls) -> BenchState:
    devices = tuple(c.selected_devices()) or ("cpu",)
    try:
        sizes: tuple[int, ...] | None = tuple(parse_sizes(c.sizes_edit.text(), c.workload.size_name))
    except UserError:
        sizes = None
    if sizes is not None and sorted(sizes) == c.workload.default_sizes_for(list(devices)):
        sizes = None
    return BenchState(
        workload=c.workload.name,
        devices=devices,
        sizes=sizes,
        repeats=c.repeats_spin.value() or None,
        budget_s=round(c.budget_spin.value(), 1),
    )


def fill_form(c: BenchControls, state: BenchState, present: Sequence[Device]) -> str:
    devices, note = bench_devices(state, list(present))
    c.set_workload(state.workload)
    for key, box in c.device_boxes().items():
        if box.isEnabled():
            box.setChecked(key in devices)
    if state.sizes is None:
        c.reset_sizes_button.click()
    else:
        c.sizes_edit.setText(sizes_text(state.sizes, c.workload.size_format == "bytes"))
        c.sizes_edit.setCursorPosition(0)
    c.repeats_spin.setValue(state.repeats or 0)
    c.budget_spin.setValue(state.budget_s)
    return note
