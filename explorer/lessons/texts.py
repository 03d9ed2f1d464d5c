"""Words the lesson player shows, made in the core so a test can read them without a window."""

from __future__ import annotations

from html import escape

from explorer.bench.fmt import number_text, seconds_text

from .model import BenchState, Lesson, Recorded, Step
from .narration import to_html as narration_html


def step_counter(index: int, count: int) -> str:
    """ "3 / 9": the step shown (0-based ``index``) of ``count``."""
    return f"{index + 1} / {count}"


def step_heading(lesson: Lesson, index: int) -> str:
    step = lesson.steps[index]
    return f"{lesson.title}: {step.title}" if step.title else lesson.title


#: recorded points shown in the pane at most: a table of thousands would take the pane seconds
#: to lay out on every step (and no class reads past the first screens of it)
MAX_RECORDED_ROWS = 100


def recorded_html(recorded: Recorded) -> str:
    """The results a lesson carries, as a table headed with whose and when they are: shown beside
    a run made here, never mistakable for one. Every value is escaped (a lesson file is text
    anyone may have written)."""
    points = recorded.points
    parts = [
        f"<h4>Results {escape(recorded.label)}</h4>",
        "<p>Measured when the lesson was made, on that machine, not this one. Start the run for this "
        "machine's own figures.</p>",
    ]
    if recorded.note:
        parts.append(f"<p>{escape(recorded.note)}</p>")
    rows = ["<tr><th>series</th><th>size</th><th>median</th><th>throughput</th></tr>"]
    for p in points[:MAX_RECORDED_ROWS]:
        if p.error:
            cells = (p.variant, p.size_label, f"error: {p.error}", "")
        else:
            noisy = " (disturbed)" if p.noisy else ""
            cells = (
                p.variant,
                p.size_label,
                f"{seconds_text(p.median_s, '-')}{noisy}",
                number_text(p.throughput, p.throughput_unit) if p.throughput is not None else "-",
            )
        rows.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
    parts.append("<table cellspacing='0' cellpadding='3' border='1'>" + "".join(rows) + "</table>")
    if len(points) > MAX_RECORDED_ROWS:
        parts.append(
            f"<p>The first {MAX_RECORDED_ROWS} of {len(points):,} recorded points; the lesson file "
            "holds them all.</p>"
        )
    return "".join(parts)


def step_html(step: Step, code_colour: str = "") -> str:
    """What the narration pane shows for a step: its narration (``explorer.lessons.narration``:
    plain text and three marks, every character escaped), then any recorded results."""
    parts = [narration_html(step.narration, code_colour)]
    if isinstance(step.state, BenchState) and step.state.recorded is not None:
        parts.append(recorded_html(step.state.recorded))
    return "".join(p for p in parts if p)
