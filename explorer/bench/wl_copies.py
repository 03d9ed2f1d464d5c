"""Host <-> device copies from pageable and pinned memory, and a host memcpy for scale on the CPU.

Imported only inside the benchmark worker.
"""

from __future__ import annotations

from functools import partial

from explorer.bench import peaks
from explorer.bench.execute import Outcome, PointError, PointSpec, time_plain, time_torch, torch_device
from explorer.bench.variants import Variant
from explorer.bench.workload import Workload


def _host_memcpy(w: Workload, spec: PointSpec) -> Outcome:
    import numpy as np

    # numpy's copyto is a plain memcpy on one core: the honest "host memory speed" reference.
    # (torch's copy_ splits large copies over its thread pool, which measures the pool too.)
    src = np.full(spec.size, 7, dtype=np.uint8)
    dst = np.empty(spec.size, dtype=np.uint8)
    timing = time_plain(spec, lambda: np.copyto(dst, src))
    if not np.array_equal(dst[:64], src[:64]):
        raise PointError("the host copy did not arrive")
    return Outcome(
        timing,
        threads=1,
        roof_bytes=2.0 * spec.size,  # it reads n bytes and writes n, as the memory levels' roofs count
        extra={"note": "host memcpy (numpy.copyto, one core, no bus), for scale"},
    )


def _bus_copy(w: Workload, spec: PointSpec, *, to_device: bool, pinned: bool) -> Outcome:
    import torch

    n = spec.size
    dev = torch_device(spec)
    direction, memory = ("H2D" if to_device else "D2H"), ("pinned" if pinned else "pageable")
    # the destination starts different from the source (7), so a copy that did not arrive is seen
    host = torch.empty(n, dtype=torch.uint8, pin_memory=pinned).fill_(7 if to_device else 0)
    device_buf = torch.zeros(n, dtype=torch.uint8, device=dev)
    if to_device:

        def step() -> None:
            device_buf.copy_(host, non_blocking=pinned)  # async only from pinned memory
    else:
        device_buf.fill_(7)

        def step() -> None:
            host.copy_(device_buf, non_blocking=pinned)

    timing = time_torch(spec, step, dev)  # the Timer synchronizes the device around each block
    arrived = device_buf if to_device else host
    if int(arrived.min().item()) != 7 or int(arrived.max().item()) != 7:
        raise PointError(f"the {direction} copy did not arrive whole (the bytes differ from the source)")
    gen, width = peaks.pcie_link(spec.device)
    extra: dict[str, float | str] = {"direction": direction, "host_memory": memory}
    if gen and width:
        extra["pcie_link"] = f"gen{gen} x{width}"
    return Outcome(timing, peak=peaks.pcie_peak_gbps(gen, width), extra=extra, bus_bound=True)


# --- the variants, as the registry lists them (order = the order points run and legends list) -----

COPIES = (
    Variant("host_memcpy", "host memcpy", _host_memcpy, where="cpu"),
    Variant("h2d_pageable", "H2D pageable", partial(_bus_copy, to_device=True, pinned=False), where="gpu"),
    Variant("h2d_pinned", "H2D pinned", partial(_bus_copy, to_device=True, pinned=True), where="gpu"),
    Variant("d2h_pageable", "D2H pageable", partial(_bus_copy, to_device=False, pinned=False), where="gpu"),
    Variant("d2h_pinned", "D2H pinned", partial(_bus_copy, to_device=False, pinned=True), where="gpu"),
)
