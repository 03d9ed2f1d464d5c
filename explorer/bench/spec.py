"""What identifies a benchmark point, and the typed record the parent sends a worker for each one.

A point is *what it measures*: on which machine (``host``, "" for this one), on which device, by
which variant of its workload (the variant's stable ``key``, never its on-screen label) and at
which size. ``PointKey`` is that identity: resuming a run, skipping its finished points and
checking a worker's answer all compare keys, so rewording a label changes a series name and
nothing else.

``PointSpec`` is one planned point, built by ``runner.plan_points`` and sent to the worker
(``bench.point``) as its JSON form; the worker reads it back with ``PointSpec.from_dict``, every
field checked, so a stray or hostile message is one line, never a traceback.

Qt-free and light: the runner (parent side) and ``execute`` (worker side) both import it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar, NamedTuple

from explorer.schema import Ranges, build

#: the longest a point's time budget may be (a day: a point is stopped after minutes)
MAX_BUDGET_S = 86_400.0


class PointKey(NamedTuple):
    """A point's identity: (host, device, variant key, size); host "" is this machine."""

    host: str
    device: str
    variant_key: str
    size: int


@dataclass(frozen=True)
class PointSpec:
    """One point of a plan: what the parent sends to the worker."""

    index: int
    workload: str
    device: str
    variant: str  # the series name, e.g. "cuda:0 H2D pinned": shown, never parsed or compared
    variant_key: str  # the variant's stable key, e.g. "h2d_pinned": what picks the code that runs
    size: int
    repeats: int | None = None
    budget_s: float = 2.0
    cpu_threads: int | None = None
    partner: str | None = None  # the second GPU of a two-GPU workload; None -> the next one
    measure_roof: bool = False  # measure the device's ceilings first where none fresh are cached
    remeasure_roof: bool = False  # ... and even where fresh ones are
    #: a GPU memory workload's samples start with the L2 as the previous sample left it (warm)
    #: instead of flushed (cold, the default: its data comes from DRAM); ``Workload.l2_switch``
    warm_l2: bool = False

    #: the allowed range of each number, beyond its type (``schema.check_fields``)
    RANGES: ClassVar[Ranges] = {
        "index": (0, None),
        "size": (1, None),
        "repeats": (1, 100_000),
        "budget_s": (0, MAX_BUDGET_S),
        "cpu_threads": (1, 1 << 20),
    }

    def key(self, host: str = "") -> PointKey:
        """This point's identity on ``host`` (the plan's machine; "" for this one)."""
        return PointKey(host, self.device, self.variant_key, self.size)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form a worker is sent (``bench.point``'s params)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> PointSpec:
        """The spec a worker was sent, every field checked against its type and range;
        ``SchemaError`` (a ``ValueError``) names the first that does not fit. Keys this version
        does not know are ignored (a newer parent's)."""
        return build(cls, data, "the point")
