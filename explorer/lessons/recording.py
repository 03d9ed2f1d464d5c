"""A GPU's measured curves recorded into the built-in lessons, for students without a GPU.

The lessons that set a CPU beside a GPU (04 to 07) carry results measured when they were made,
which the player shows as "recorded on <device>, <date>" beside any run made here. The lesson
maker's machine had no GPU, so their GPU steps held nothing. ``benchmarks/gpu_acceptance.py``,
run on a GPU, measures each such step's workload there and records it into the step through
this module; a student without a GPU then reads a real GPU's figures, labelled with that GPU
and the date.

Which steps (``recording_targets``): every benchmarks step that names a GPU (``cuda:N``) and
holds no recording, or holds one this module wrote (recording again replaces it). A step
holding another recording (a CPU's, made by hand) is never touched.

The edit is made on the file's own JSON, not through the lesson model, so every other byte of
the file stays as it was (the model writes defaults back), and the result is checked by the
lesson parser before it replaces the file (atomically). Recordings travel from the GPU machine
as one JSON file (``recordings_bundle``), checked again where they are applied
(``apply_bundle``): a damaged or planted file changes no lesson and says why in one line.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.bench.results import BenchPoint
from explorer.errors import UserError
from explorer.inputs import shown
from explorer.statefile import read_json, save_json

from .builtin import builtin_paths
from .files import MAX_LESSON_BYTES, LessonError, StepError, load_lesson, parse_recorded, parse_step
from .model import BenchState

#: the mark a recording made here carries (a key of ``recorded`` the player does not show)
RECORDED_BY = "gpu_acceptance"
BUNDLE_FORMAT = "device-explorer-lesson-recordings"
BUNDLE_VERSION = 1
#: a recordings file bigger than this is not one (four lessons' points are tens of KiB)
MAX_BUNDLE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class RecordingTarget:
    """One lesson step a GPU's results can be recorded into, and what to measure for it."""

    lesson: str  # the file's stem, "05-matmul-crossover"
    path: Path
    step: int  # 0-based
    title: str
    workload: str
    devices: tuple[str, ...]
    sizes: tuple[int, ...] | None  # None: each device's default sizes
    budget_s: float

    @property
    def name(self) -> str:
        return f"{self.lesson} step {self.step + 1}"


def _recorded_here(raw_step: dict[str, Any]) -> bool | None:
    """Whether the step's recording was made by this module (None: it holds none)."""
    recorded = raw_step.get("state", {}).get("recorded")
    if recorded is None:
        return None
    return isinstance(recorded, dict) and recorded.get("recorded_by") == RECORDED_BY


def recording_targets(paths: Iterable[Path] | None = None) -> list[RecordingTarget]:
    """The steps of ``paths`` (the built-in lessons by default) a GPU recording belongs in."""
    out = []
    for path in builtin_paths() if paths is None else paths:
        lesson = load_lesson(path)
        raw = _read_raw(path)
        for i, step in enumerate(lesson.steps):
            state = step.state
            if not step.ok or not isinstance(state, BenchState) or not state.gpu_devices:
                continue
            if _recorded_here(raw["steps"][i]) is False:
                continue  # someone else's recording (a CPU's): never replaced
            out.append(
                RecordingTarget(
                    lesson=path.stem,
                    path=path,
                    step=i,
                    title=step.title,
                    workload=state.workload,
                    devices=state.devices,
                    sizes=state.sizes,
                    budget_s=state.budget_s,
                )
            )
    return out


def make_recorded(points: Sequence[BenchPoint], device: str, date: str, note: str) -> dict[str, Any]:
    """The ``recorded`` object a step holds: whose results, when, and the points as ``bench --json``
    prints them, marked as made here."""
    return {
        "device": device,
        "date": date,
        "note": note,
        "points": [p.to_dict() for p in points],
        "recorded_by": RECORDED_BY,
    }


def _read_raw(path: Path) -> dict[str, Any]:
    try:
        data = read_json(path, MAX_LESSON_BYTES)
    except (OSError, ValueError) as exc:
        raise LessonError(f"{path} cannot be read as a lesson: {exc}") from None
    if data is None:
        raise LessonError(f"{path} does not exist")
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        raise LessonError(f"{path} is not a lesson file (no steps)")
    return data


def check_recording(target: RecordingTarget, recorded: dict[str, Any]) -> None:
    """``UserError`` in one line unless ``recorded`` fits ``target``: a valid recording (the lesson
    parser's own check), made here, of the step's workload on the step's devices, a GPU among them,
    every point of it measured (no error row: a partial recording is never written)."""
    try:
        parsed = parse_recorded(recorded)
    except (StepError, ValueError) as exc:
        raise UserError(f"the recording for {target.name} is not valid: {exc}") from None
    if parsed.extra.get("recorded_by") != RECORDED_BY:
        raise UserError(f"the recording for {target.name} was not made by the GPU acceptance run")
    for p in parsed.points:
        if p.workload != target.workload:
            raise UserError(
                f"the recording for {target.name} holds {shown(p.workload)} points; the step runs "
                f"{target.workload}"
            )
        if p.device not in target.devices:
            raise UserError(
                f"the recording for {target.name} holds points on {shown(p.device)}; the step runs on "
                f"{', '.join(target.devices)}"
            )
    if not any(p.device != "cpu" and p.error is None for p in parsed.points):
        raise UserError(f"the recording for {target.name} holds no GPU point that was measured")
    failed = [p for p in parsed.points if p.error is not None]
    if failed:  # a lesson shows a whole curve (or the one it had), never a part of one
        raise UserError(
            f"the recording for {target.name} is partial ({len(parsed.points) - len(failed)} of "
            f"{len(parsed.points)} points measured; {failed[0].size_label} on {failed[0].device}: "
            f"{failed[0].error}); not written"
        )


def write_recording(target: RecordingTarget, recorded: dict[str, Any]) -> Path:
    """Put ``recorded`` into the target step of its lesson file, atomically; every other byte of the
    file stays. ``UserError`` (one line) when the recording does not fit or the file changed so that
    the step is no longer a target."""
    check_recording(target, recorded)
    raw = _read_raw(target.path)
    steps = raw["steps"]
    if target.step >= len(steps) or _recorded_here(steps[target.step]) is False:
        raise UserError(f"{target.name} no longer takes a GPU recording (the lesson file changed)")
    step = copy.deepcopy(steps[target.step])
    step.setdefault("state", {})["recorded"] = recorded
    checked = parse_step(step, target.step + 1)
    if checked.problem:
        raise UserError(f"{target.name} would be damaged by the recording: {checked.problem}")
    steps[target.step] = step
    try:
        return save_json(target.path, raw, create_folder=False)
    except (OSError, ValueError) as exc:
        raise UserError(f"{target.path} could not be written: {exc}") from None


def recordings_bundle(recordings: Sequence[tuple[RecordingTarget, dict[str, Any]]]) -> dict[str, Any]:
    """The recordings as one JSON object, to carry from the GPU machine to a checkout."""
    return {
        "format": BUNDLE_FORMAT,
        "version": BUNDLE_VERSION,
        "recordings": [
            {"lesson": t.lesson, "step": t.step, "workload": t.workload, "recorded": r} for t, r in recordings
        ],
    }


def apply_bundle(path: str | Path, lessons: Iterable[Path] | None = None) -> list[str]:
    """Write every recording of the bundle file at ``path`` into its lesson (the built-in lessons by
    default); one line per lesson step written. ``UserError`` in one line, before any file is
    written, when the bundle is damaged or any recording does not fit its step."""
    p = Path(path)
    try:
        data = read_json(p, MAX_BUNDLE_BYTES)
    except (OSError, ValueError) as exc:
        raise UserError(f"{p} cannot be read as lesson recordings: {exc}") from None
    if data is None:
        raise UserError(f"{p} cannot be read as lesson recordings: there is no such file")
    if not isinstance(data, dict) or data.get("format") != BUNDLE_FORMAT:
        raise UserError(f"{p} is not a lesson recordings file (format {BUNDLE_FORMAT})")
    if data.get("version") != BUNDLE_VERSION:
        raise UserError(f"{p} is version {shown(data.get('version'))}; this version reads {BUNDLE_VERSION}")
    rows = data.get("recordings")
    if not isinstance(rows, list) or not rows:
        raise UserError(f"{p} holds no recordings")
    targets: dict[tuple[Any, Any], RecordingTarget] = {
        (t.lesson, t.step): t for t in recording_targets(lessons)
    }
    planned = []
    for row in rows:
        key = (row.get("lesson"), row.get("step")) if isinstance(row, dict) else (None, None)
        target = targets.get(key)
        if target is None:
            raise UserError(
                f"{p} records into {shown(key[0])} step {shown(key[1])}, which takes no GPU recording"
            )
        recorded = row.get("recorded")
        if not isinstance(recorded, dict):
            raise UserError(f"the recording for {target.name} is not an object")
        check_recording(target, recorded)
        planned.append((target, recorded))
    written = []
    for target, recorded in planned:
        write_recording(target, recorded)
        written.append(f"{target.name} ({target.title}): {len(recorded['points'])} points {_label(recorded)}")
    return written


def _label(recorded: dict[str, Any]) -> str:
    return f"recorded on {recorded['device']}, {recorded['date']}"
