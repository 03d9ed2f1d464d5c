"""Host <-> device copies from pageable and pinned memory, and a host memcpy for scale on the CPU.

Imported only inside the benchmark worker.
"""

from __future__ import annotations

from explorer.bench import peaks
from explorer.bench.execute import Outcome, PointError, PointSpec, time_plain, time_torch, torch_device
from explorer.bench.workloads import Workload


def run(w: Workload, spec: PointSpec) -> Outcome:
    import torch

    n = spec.size
    dev = torch_device(spec)
    if dev.type == "cpu":
        import numpy as np

        # numpy's copyto is a plain memcpy on one core: the honest "host memory speed" reference.
        # (torch's copy_ splits large copies over its thread pool, which measures the pool too.)
        src = np.full(n, 7, dtype=np.uint8)
        dst = np.empty(n, dtype=np.uint8)
        timing = time_plain(spec, lambda: np.copyto(dst, src))
        if not np.array_equal(dst[:64], src[:64]):
            raise PointError("the host copy did not arrive")
        return Outcome(
            timing, threads=1, extra={"note": "host memcpy (numpy.copyto, one core, no bus), for scale"}
        )

    direction, memory = spec.suffix.split()  # "H2D pinned" -> ("H2D", "pinned")
    pinned = memory == "pinned"
    host = torch.empty(n, dtype=torch.uint8, pin_memory=pinned).fill_(7)
    device_buf = torch.empty(n, dtype=torch.uint8, device=dev)
    if direction == "H2D":

        def step() -> None:
            device_buf.copy_(host, non_blocking=pinned)  # async only from pinned memory
    else:
        device_buf.fill_(7)

        def step() -> None:
            host.copy_(device_buf, non_blocking=pinned)

    timing = time_torch(spec, step, dev)  # the Timer synchronizes the device around each block
    gen, width = peaks.pcie_link(spec.device)
    extra: dict[str, float | str] = {"direction": direction, "host_memory": memory}
    if gen and width:
        extra["pcie_link"] = f"gen{gen} x{width}"
    return Outcome(timing, peak=peaks.pcie_peak_gbps(gen, width), extra=extra)
