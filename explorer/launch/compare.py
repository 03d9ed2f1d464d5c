"""Two launches side by side: the numbers that decide how each runs, and B's over A's.

A lesson asks "what changes on an H100?" or "what does 64 registers cost?": the same question
answered twice and read against each other. ``compare`` plans both launches with the same core
as a single launch (``plan_launch``), so a side's numbers are exactly what ``device-explorer
launch`` and the single visualizer show, and lays them out as rows: threads per block, blocks, SMs,
blocks per SM and at once,
waves, tail fill, theoretical occupancy and its limiter, each with the ratio B/A.

A side that cannot launch is not an error here: "shared memory 100 KB runs on an H100 but not on
a GTX 1650" is itself the answer, so that side carries the reason and its cells and ratios say
"cannot run" instead of a number. A ratio never divides by zero: with A at 0 it says why.

The texts (cells, ratios, the one-line verdict) are made here, once, for the CLI and the window.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explorer.devices.limits import ArchLimits, limits_for_device
from explorer.devices.model import Gpu
from explorer.errors import UserError
from explorer.launch.config import LaunchConfig
from explorer.launch.schedule import LaunchPlan, plan_launch
from explorer.words import count, percent

SIDES = ("A", "B")
CANNOT_RUN = "cannot run"


@dataclass(frozen=True)
class Side:
    """One launch of the two: its device, its launch, and its plan or why it has none."""

    label: str  # "A" or "B"
    device_name: str
    config: LaunchConfig | None  # None: the launch typed for this side did not parse
    plan: LaunchPlan | None
    problem: str = ""  # why the launch cannot run on the device ("" when ``plan`` is set)

    @property
    def valid(self) -> bool:
        return self.plan is not None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"label": self.label, "device": self.device_name, "valid": self.valid}
        if self.plan is not None:
            data["plan"] = self.plan.to_dict()
        else:
            data["config"] = self.config.to_dict() if self.config is not None else None
            data["error"] = self.problem
        return data


@dataclass(frozen=True)
class Ratio:
    """B / A of one row, or the reason there is none (never a division by zero)."""

    value: float | None
    reason: str = ""  # "A is 0", "B cannot run", "not a number", ...

    @property
    def text(self) -> str:
        """ "1x" when equal, "7x", "0.143x"; else the reason in words."""
        if self.value is None:
            return self.reason
        return f"{self.value:.3g}x"


@dataclass(frozen=True)
class Row:
    """One line of the table: a quantity for A and for B, as numbers and as text, and B / A."""

    key: str  # stable snake_case name, the JSON key: "blocks", "waves", "tail_fill", ...
    label: str  # words in the table: "blocks", "tail fill"
    a: float | int | str | None  # the value for A (None: A cannot run)
    b: float | int | str | None
    a_text: str
    b_text: str
    ratio: Ratio

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "a": self.a,
            "b": self.b,
            "a_text": self.a_text,
            "b_text": self.b_text,
            "ratio": self.ratio.value,
            "ratio_text": self.ratio.text,
        }


def ratio(a: float | int | None, b: float | int | None) -> Ratio:
    """B / A, or why not: a side that cannot run has no number; with A at 0 there is no ratio."""
    if a is None and b is None:
        return Ratio(None, "neither can run")
    if a is None:
        return Ratio(None, "A cannot run")
    if b is None:
        return Ratio(None, "B cannot run")
    if a == 0:
        return Ratio(None, "both 0" if b == 0 else "A is 0")
    return Ratio(b / a)


def _same(a: str | None, b: str | None) -> Ratio:
    """A row of words (the limiter) has no quotient: say whether the two agree."""
    if a is None or b is None:
        return ratio(None if a is None else 1, None if b is None else 1)
    return Ratio(None, "same" if a == b else "differs")


#: (key, label, the value from a plan, its text); the order is the table's
_NUMBERS: tuple[tuple[str, str, Any, Any], ...] = (
    ("threads_per_block", "threads per block", lambda p: p.threads_per_block, lambda v: f"{v:,}"),
    ("blocks", "blocks", lambda p: p.total_blocks, lambda v: f"{v:,}"),
    ("sm_count", "SMs", lambda p: p.sm_count, lambda v: f"{v:,}"),
    ("blocks_per_sm", "blocks per SM", lambda p: p.resident_blocks_per_sm, lambda v: f"{v:,}"),
    ("concurrent_blocks", "blocks at once", lambda p: p.concurrent_blocks, lambda v: f"{v:,}"),
    ("waves", "waves", lambda p: p.waves, lambda v: f"{v:,}"),
    ("tail_fill", "tail fill", lambda p: p.last_wave_fill, percent),
    ("occupancy", "theoretical occupancy", lambda p: p.occupancy.occupancy, percent),
)


@dataclass(frozen=True)
class Comparison:
    """Two launches and the rows that set them side by side."""

    a: Side
    b: Side
    rows: tuple[Row, ...]

    def row(self, key: str) -> Row:
        for r in self.rows:
            if r.key == key:
                return r
        raise KeyError(key)

    @property
    def sides(self) -> tuple[Side, Side]:
        return (self.a, self.b)

    def verdict(self) -> str:
        """One sentence a class reads first: which side needs fewer waves, or why none compares."""
        a, b = self.a.plan, self.b.plan
        if a is None or b is None:
            broken = [s for s in self.sides if s.plan is None]
            return "; ".join(f"{s.label} cannot run: {s.problem}" for s in broken) + "."
        if a.waves == b.waves:
            return f"A and B both need {count(a.waves, 'wave')}."
        fewer, more = (self.a, self.b) if a.waves < b.waves else (self.b, self.a)
        assert fewer.plan is not None and more.plan is not None
        return (
            f"{fewer.label} needs {count(fewer.plan.waves, 'wave')} where {more.label} needs "
            f"{more.plan.waves:,}: {fewer.plan.concurrent_blocks:,} blocks at once against "
            f"{more.plan.concurrent_blocks:,}."
        )

    def table_lines(self) -> list[str]:
        """The rows as aligned text columns (what ``launch --compare`` prints)."""
        header = ("", "A", "B", "B/A")
        body = [(r.label, r.a_text, r.b_text, r.ratio.text) for r in self.rows]
        widths = [max(len(line[i]) for line in (header, *body)) for i in range(4)]
        out = []
        for line in (header, *body):
            first = line[0].ljust(widths[0])
            rest = "  ".join(cell.rjust(w) for cell, w in zip(line[1:], widths[1:], strict=True))
            out.append(f"{first}  {rest}".rstrip())
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "rows": [r.to_dict() for r in self.rows],
            "verdict": self.verdict(),
        }


def side(label: str, device: Gpu, config: LaunchConfig, limits: ArchLimits | None = None) -> Side:
    """Plan one side; a launch the device refuses becomes a side with the reason, not an error."""
    try:
        plan = plan_launch(config, device, limits if limits is not None else limits_for_device(device))
    except UserError as exc:
        return Side(label, device.name, config, None, str(exc))
    return Side(label, device.name, config, plan)


def compare_sides(a: Side, b: Side) -> Comparison:
    """The rows for two planned sides (the visualizer's session plans each side once and reuses
    the plans)."""
    rows: list[Row] = []
    for key, label, value_of, text_of in _NUMBERS:
        va = value_of(a.plan) if a.plan is not None else None
        vb = value_of(b.plan) if b.plan is not None else None
        rows.append(
            Row(
                key,
                label,
                va,
                vb,
                text_of(va) if va is not None else CANNOT_RUN,
                text_of(vb) if vb is not None else CANNOT_RUN,
                ratio(va, vb),
            )
        )
    la = a.plan.occupancy.limiter_text if a.plan is not None else None
    lb = b.plan.occupancy.limiter_text if b.plan is not None else None
    rows.append(Row("limiter", "limited by", la, lb, la or CANNOT_RUN, lb or CANNOT_RUN, _same(la, lb)))
    return Comparison(a, b, tuple(rows))


def compare(
    device_a: Gpu,
    config_a: LaunchConfig,
    device_b: Gpu,
    config_b: LaunchConfig,
) -> Comparison:
    """Plan launch A on its device and launch B on its device, and set them side by side."""
    return compare_sides(
        side("A", device_a, config_a),
        side("B", device_b, config_b),
    )
