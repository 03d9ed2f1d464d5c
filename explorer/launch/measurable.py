"""Which device a measured run can go to, and the one line saying why not.

A pure check on a ``Device`` record: the visualizer's model (``explorer.launch.time_views``) asks it
before it offers a measurement, and the runner (``explorer.launch_runs.measured``) before it starts
one. It lives here, below both, so the model never imports the package that runs kernels.
"""

from __future__ import annotations

from explorer.devices.model import Device


def measurable(device: Device) -> bool:
    """Whether a measured run can go to ``device``: a GPU in this machine that CUDA can use."""
    return (
        device.kind == "cuda"
        and getattr(device, "index", None) is not None
        and getattr(device, "usable", False)
    )


def not_measurable(device: Device, why_no_gpu: str = "", subject: str = "--measure") -> str:
    """One line: why ``subject`` (the CLI's option, or the window's words) cannot run on ``device``,
    with discovery's reason there is no usable GPU here when there is one to give."""
    what = (
        "a catalog sheet (not in this machine)" if device.kind == "catalog" else "not usable from CUDA here"
    )
    return f"{subject} runs on a GPU in this machine; {device.name} is {what}. {why_no_gpu}".strip()
