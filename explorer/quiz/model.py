"""A question with an exact answer, and how a student's answer is graded against it.

A question is made from a seed by its topic's generator (``explorer.quiz.topics``) and carries
everything needed to check it without the app's word for it: the CLI command that prints the
answer with ``--json`` and the dot path of the answer in that JSON (``answer_key``). Its id names
the topic, the concept and the seed, so the same id always gives the same question.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from explorer.errors import UserError

Answer = float | int | str

#: an id: topic.concept.seed, e.g. "occupancy.limiter.17", or topic.concept.f<digest> for a question
#: about fixed parameters (a lesson step's own launch)
ID_PATTERN = re.compile(r"^([a-z]+)\.([a-z_]+)\.(\d{1,18}|f[0-9a-f]{10})$")


@dataclass(frozen=True)
class Question:
    """One question: its prompt, its parameters and its exact answer, with the way to check it."""

    id: str
    topic: str
    concept: str
    prompt: str
    params: dict[str, Any]
    answer: Answer
    unit: str
    tolerance: float  # a number within this of ``answer`` is right (0 for a count)
    explanation: str  # the rule, named, that gives the answer
    command: tuple[str, ...]  # argv of the CLI that prints the answer with --json
    answer_key: str  # dot path into that command's JSON
    choices: tuple[str, ...] = field(default=())  # for a choice; empty for a number

    @property
    def is_choice(self) -> bool:
        return bool(self.choices)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "topic": self.topic,
            "concept": self.concept,
            "prompt": self.prompt,
            "params": dict(self.params),
            "answer": self.answer,
            "unit": self.unit,
            "tolerance": self.tolerance,
            "choices": list(self.choices) if self.choices else None,
            "explanation": self.explanation,
            "command": list(self.command),
            "answer_key": self.answer_key,
        }

    def answer_text(self) -> str:
        """The answer as a person reads it, with its unit."""
        if isinstance(self.answer, str):
            return self.answer
        text = f"{self.answer:g}" if isinstance(self.answer, float) else str(self.answer)
        if self.unit.startswith("-"):  # "2-way"
            return f"{text}{self.unit}"
        return f"{text} {self.unit}".strip()


@dataclass(frozen=True)
class Grade:
    """A student's answer judged: right or not, and by how much it was off for a number."""

    right: bool
    given: str
    off_by: float | None  # given - answer, for a number
    said: str  # one line: "right", or how far off and the answer


def parse_id(text: str) -> tuple[str, str, int]:
    """(topic, concept, seed) of a question id; one line naming the id when it is not one. A fixed
    question's seed is its digest read as a number: its variants are drawn from there."""
    m = ID_PATTERN.match(text.strip())
    if m is None:
        raise UserError(f"{text.strip()[:60]!r} is not a question id; ids look like 'occupancy.limiter.17'")
    seed = m.group(3)
    return m.group(1), m.group(2), int(seed[1:], 16) if seed.startswith("f") else int(seed)


def parse_number(text: str) -> float | None:
    """A number as a student types it ("50", "50%", "1,024"); None when it is none."""
    cleaned = text.strip().rstrip("%").replace(",", "").replace("_", "")
    if not cleaned or len(cleaned) > 40:
        return None
    try:
        value = float(cleaned)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def grade(question: Question, given: str) -> Grade:
    """Judge ``given`` (as typed) against the question's answer."""
    given = given.strip()[:80]
    if question.is_choice:
        picked = _pick(question.choices, given)
        if picked is None:
            return Grade(False, given, None, f"not one of the choices ({', '.join(question.choices)})")
        right = picked == question.answer
        said = "right" if right else f"not quite: the answer is {question.answer}"
        return Grade(right, picked, None, said)
    value = parse_number(given)
    if value is None:
        return Grade(False, given, None, f"not a number: the answer is {question.answer_text()}")
    assert not isinstance(question.answer, str)
    off = value - float(question.answer)
    right = abs(off) <= question.tolerance + 1e-9 * max(1.0, abs(float(question.answer)))
    if right:
        return Grade(True, given, off, "right")
    return Grade(False, given, off, f"off by {off:+.4g}: the answer is {question.answer_text()}")


def _pick(choices: tuple[str, ...], given: str) -> str | None:
    """The choice meant by ``given``: its number (1-based), its text, or a unique start of it."""
    low = given.lower()
    if low.isdigit() and 1 <= int(low) <= len(choices):
        return choices[int(low) - 1]
    exact = [c for c in choices if c.lower() == low]
    if exact:
        return exact[0]
    starts = [c for c in choices if low and c.lower().startswith(low)]
    return starts[0] if len(starts) == 1 else None


def read_key(data: Any, key: str) -> Any:
    """The value at a dot path (``warps.3.active_lanes.0``) of a command's JSON output."""
    for part in key.split("."):
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data
