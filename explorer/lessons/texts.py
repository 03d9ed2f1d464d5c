"""Words the lesson player shows, made in the core so a test can read them without a window."""

from __future__ import annotations

from explorer.bench.fmt import number_text, seconds_text

from .model import BenchState, Lesson, Recorded, Step


def step_counter(index: int, count: int) -> str:
    """ "3 / 9": the step shown (0-based ``index``) of ``count``."""
    return f"{index + 1} / {count}"


def step_heading(lesson: Lesson, index: int) -> str:
    step = lesson.steps[index]
    return f"{lesson.title}: {step.title}" if step.title else lesson.title


def recorded_markdown(recorded: Recorded) -> str:
    """The results a lesson carries, as a Markdown table headed with whose and when they are:
    shown beside a run made here, never mistakable for one."""
    lines = [
        f"#### Results {recorded.label}",
        "",
        "Measured when the lesson was made, on that machine, not this one. Start the run for this "
        "machine's own figures.",
    ]
    if recorded.note:
        lines += ["", recorded.note]
    lines += ["", "| series | size | median | throughput |", "| --- | --- | --- | --- |"]
    for p in recorded.points:
        if p.error:
            lines.append(f"| {p.variant} | {p.size_label} | error: {p.error} | |")
            continue
        noisy = " (disturbed)" if p.noisy else ""
        lines.append(
            f"| {p.variant} | {p.size_label} | {seconds_text(p.median_s, '-')}{noisy} | "
            f"{number_text(p.throughput, p.throughput_unit) if p.throughput is not None else '-'} |"
        )
    return "\n".join(lines)


def step_markdown(step: Step) -> str:
    """What the narration pane shows for a step: its narration, then any recorded results."""

    parts = [step.narration.strip()]
    if isinstance(step.state, BenchState) and step.state.recorded is not None:
        parts.append(recorded_markdown(step.state.recorded))
    return "\n\n".join(p for p in parts if p)
