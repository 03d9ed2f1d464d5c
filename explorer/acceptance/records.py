"""What a check found, and the whole report: JSON for scripts, a summary for people.

A figure is always shown with its target and where that target comes from, so a reader never
has to look up what "0.83" is measured against; a figure without a target is recorded for the
record (``met`` is None).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["pass", "miss", "fail", "error", "timeout", "skip", "not run"]
STATUSES: tuple[Status, ...] = ("pass", "miss", "fail", "error", "timeout", "skip", "not run")
#: the statuses that mean the app is broken or the check could not tell
BAD: frozenset[str] = frozenset({"fail", "error", "timeout"})

REPORT_FORMAT = "device-explorer-gpu-acceptance"
REPORT_VERSION = 1


@dataclass
class Figure:
    """One measured number against its target: ``ratio`` is value / reference where the target
    is a share of a reference (a peak, a model), ``met`` whether the target holds (None: no target)."""

    name: str
    value: float | None
    unit: str
    target: str = ""
    reference: float | None = None
    reference_name: str = ""
    ratio: float | None = None
    met: bool | None = None
    note: str = ""
    #: above the hardware's own limit (``judge.share_figure``'s bound): the check fails, whatever
    #: its target (a figure no hardware reaches is a timing that missed work, not a success)
    impossible: bool = False

    def line(self) -> str:
        value = "n/a" if self.value is None else f"{_number(self.value)} {self.unit}".strip()
        parts = [f"{self.name}: {value}"]
        if self.reference is not None:
            ratio = ""
            if self.ratio is not None:  # a share of a peak in percent, a comparison as a factor
                ratio = f" = {self.ratio:.0%}" if "%" in self.target else f" = {self.ratio:.2f}x"
            parts.append(f"vs {self.reference_name or 'reference'} {_number(self.reference)}{ratio}")
        if self.target:
            verdict = "FAILED" if self.impossible else {True: "met", False: "MISSED", None: ""}[self.met]
            parts.append(f"target {self.target}{' ' + verdict if verdict else ''}")
        if self.note:
            parts.append(self.note)
        return "; ".join(parts)


def _number(x: float) -> str:
    if x == 0 or 0.01 <= abs(x) < 1e6:
        return f"{x:,.3g}" if abs(x) < 100 else f"{x:,.0f}"
    return f"{x:.3g}"


@dataclass
class CheckResult:
    name: str
    status: Status
    summary: str  # one line: what was found
    figures: list[Figure] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)  # JSON-ready: rows, versions, raw readings
    duration_s: float = 0.0
    title: str = ""
    expected_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        """A child's answer, read back by the parent (it wrote it with ``to_dict``)."""
        status = data.get("status")
        if status not in STATUSES:
            raise ValueError(f"status {status!r} is not one of {', '.join(STATUSES)}")
        figures = [Figure(**f) for f in data.get("figures", [])]
        return cls(
            name=str(data["name"]),
            status=status,
            summary=str(data.get("summary", "")),
            figures=figures,
            details=dict(data.get("details", {})),
            duration_s=float(data.get("duration_s", 0.0)),
            title=str(data.get("title", "")),
            expected_s=float(data.get("expected_s", 0.0)),
        )


@dataclass
class Report:
    started_at: str  # ISO 8601, UTC
    host: str
    device: str  # "cuda:0"
    gpu: str  # the GPU's name, or why there is none
    budget_s: float
    checks: list[CheckResult] = field(default_factory=list)
    total_s: float = 0.0
    command: str = ""

    @property
    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATUSES, 0)
        for c in self.checks:
            out[c.status] += 1
        return {k: v for k, v in out.items() if v}

    @property
    def ok(self) -> bool:
        """Nothing failed, broke or timed out (misses are findings, not failures)."""
        return not any(c.status in BAD for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["format"], data["version"] = REPORT_FORMAT, REPORT_VERSION
        data["counts"], data["ok"] = self.counts, self.ok
        return data

    def summary_text(self) -> str:
        """The readable report: one block per check, the figures under it, the verdict last."""
        lines = [
            f"GPU acceptance on {self.gpu} ({self.device}, host {self.host}), {self.started_at}",
            f"budget {self.budget_s:.0f} s, took {self.total_s:.0f} s",
            "",
        ]
        for c in self.checks:
            took = f" ({c.duration_s:.0f} s)" if c.duration_s else ""
            lines.append(f"{c.status.upper():<8} {c.name:<18} {c.summary}{took}")
            for f in c.figures:
                lines.append(f"{'':<9}- {f.line()}")
        counts = ", ".join(f"{n} {s}" for s, n in self.counts.items())
        verdict = "no failures" if self.ok else "FAILURES: see the FAIL, ERROR and TIMEOUT lines"
        lines += ["", f"{len(self.checks)} checks: {counts}; {verdict}"]
        return "\n".join(lines) + "\n"
