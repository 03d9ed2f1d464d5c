"""Words the lesson player shows, made in the core so a test can read them without a window."""

from __future__ import annotations

from html import escape

from explorer import words
from explorer.bench.fmt import number_text, seconds_text
from explorer.bench.results import BenchPoint

from .model import BenchState, Lesson, Recorded, Step
from .narration import to_html as narration_html


def step_counter(index: int, count: int) -> str:
    """ "3 / 9": the step shown (0-based ``index``) of ``count``."""
    return f"{index + 1} / {count}"


def step_heading(lesson: Lesson, index: int) -> str:
    step = lesson.steps[index]
    return f"{lesson.title}: {step.title}" if step.title else lesson.title


#: the columns of a lesson's recorded results, as the player's table heads them
RECORDED_COLUMNS = ("series", "size", "median", "throughput", "verdict")


def recorded_html(recorded: Recorded) -> str:
    """The heading of the results a lesson carries: whose and when they are, so they are shown
    beside a run made here and never mistaken for one. Every value is escaped (a lesson file is
    text anyone may have written). The rows themselves are a table of their own
    (``recorded_row``): a lesson may carry 20,000 points, and rendering those as rows of the
    narration's document took 107 s and stalled the window."""
    count = len(recorded.points)
    parts = [
        f"<h4>Results {escape(recorded.label)}</h4>",
        "<p>Measured when the lesson was made, on that machine, not this one. Start the run for this "
        f"machine's own figures. {words.count(count, 'point')}, in the table below.</p>",
    ]
    if recorded.note:
        parts.append(f"<p>{escape(recorded.note)}</p>")
    return "".join(parts)


def recorded_row(p: BenchPoint) -> tuple[str, str, str, str, str]:
    """One recorded point as the table shows it, in ``RECORDED_COLUMNS``' order: its verdict as
    the Benchmarks table gives it, so a recorded timing faster than the hardware can go reads
    "invalid" beside its figure, not only on hover."""
    if p.error:
        return (p.variant, p.size_label, f"error: {p.error}", "", p.verdict)
    throughput = number_text(p.throughput, p.throughput_unit) if p.throughput is not None else "-"
    return (p.variant, p.size_label, seconds_text(p.median_s, "-"), throughput, p.verdict)


def step_recorded(step: Step) -> Recorded | None:
    """The results a step carries, if any."""
    return step.state.recorded if isinstance(step.state, BenchState) else None


def step_html(step: Step, code_colour: str = "") -> str:
    """What the narration pane shows for a step: its narration (``explorer.lessons.narration``:
    plain text and three marks, every character escaped), then the heading of any recorded
    results (whose rows the player shows in a table beneath it)."""
    recorded = step_recorded(step)
    parts = [
        narration_html(step.narration, code_colour),
        recorded_html(recorded) if recorded is not None else "",
    ]
    return "".join(p for p in parts if p)
