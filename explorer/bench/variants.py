"""Typed workload variants: what one series of a workload runs, declared next to the code that runs it.

A variant is an object, not a label: ``key`` is what a plan and the worker use to pick it, ``label``
is only what the screen shows, and ``run`` is the function that measures one point. Rewording a
label therefore changes a series name and nothing else; no code splits or compares labels.

Each ``wl_*`` module declares its workloads' variants; the registry (``workloads.py``) reaches
them through a small loader that imports the module on first use, so listing workloads imports
neither torch nor numba (the ``wl_*`` modules import those inside their run functions).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from explorer.bench.execute import Checked, Outcome, PointSpec
    from explorer.bench.workload import Workload

Where = Literal["cpu", "gpu", "both"]


@dataclass(frozen=True)
class Variant:
    key: str  # stable identifier: "h2d_pinned"; what a PointSpec carries
    label: str  # shown after the device in the series name: "H2D pinned" ("" for the plain one)
    run: Callable[[Workload, PointSpec], Outcome]  # measures one point
    where: Where = "both"  # the devices it runs on
    #: set for a variant that checks a result and times nothing (a kernel under numba's CUDA
    #: simulator, whose seconds are Python's, not a GPU's): the point is made from what this
    #: returns, with no time and no throughput, and ``run`` is never called
    check: Callable[[Workload, PointSpec], Checked] | None = None

    def runs_on(self, device: str) -> bool:
        return self.where == "both" or (self.where == "cpu") == (device == "cpu")

    def series_name(self, device: str) -> str:
        """The name of this variant's series on ``device``: unique within a run."""
        return f"{device} {self.label}" if self.label else device
