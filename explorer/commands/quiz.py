"""``device-explorer quiz``: predict, then reveal, in a terminal.

``--json`` prints the questions (each with the command and JSON key that give its answer, so anyone
can check it); without it the quiz asks each question, reads the student's answer and confidence,
and reveals the answer, how far off the guess was and the rule behind it.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any, TextIO

from explorer.errors import UserError
from explorer.inputs import parse_whole
from explorer.outputs import check_output
from explorer.quiz import answers
from explorer.quiz.model import Question, grade
from explorer.quiz.topics import TOPICS, questions, variant_of

MAX_COUNT = 1000
MAX_SEED = 2**62
CONFIDENCE = {"1": "sure", "2": "think so", "3": "guess", "s": "sure", "t": "think so", "g": "guess"}


@dataclass(frozen=True)
class QuizRequest:
    questions: tuple[Question, ...]
    as_json: bool
    gather: str | None = None
    export: str | None = None


def parse_quiz(args: Any) -> QuizRequest:
    """Parse and validate ``quiz``'s arguments and make the questions (no output)."""
    if args.gather is not None or args.export is not None:
        if args.gather is not None and args.export is not None:
            raise UserError("--gather reads a class's answers and --export writes yours: give one of them")
        if args.export is not None:
            check_output(args.export, "the answers", (".csv",))
        return QuizRequest((), bool(args.json), gather=args.gather, export=args.export)
    if args.variant_of:
        return QuizRequest((variant_of(str(args.variant_of)),), bool(args.json))
    topic = str(args.topic or "all").strip().lower()
    if topic != "all" and topic not in TOPICS:
        raise UserError(f"no quiz topic {topic[:40]!r}; the topics: all, {', '.join(TOPICS)}")
    count = parse_whole(args.count, "--count", minimum=1, maximum=MAX_COUNT)
    seed = parse_whole(args.seed, "--seed", minimum=0, maximum=MAX_SEED)
    return QuizRequest(tuple(questions(topic, count, seed)), bool(args.json))


def run_quiz(args: Any) -> int:
    req = parse_quiz(args)
    if req.gather is not None:
        gathered = answers.gather(req.gather)
        if req.as_json:
            print(json.dumps(gathered.to_dict(), indent=2))
        else:
            print("\n".join(answers.tally_lines(gathered)))
        return 0
    if req.export is not None:
        print(f"wrote your answers to {answers.export(req.export)}")
        return 0
    if req.as_json:
        print(json.dumps({"questions": [q.to_dict() for q in req.questions]}, indent=2))
        return 0
    return ask(req.questions, sys.stdin, sys.stdout)


def ask(items: tuple[Question, ...], given: TextIO, out: TextIO, record: bool = True) -> int:
    """The interactive quiz: each question, the student's answer and confidence, the reveal; each
    answer is kept in the student's answers file (``quiz --export`` hands it in)."""
    right = 0
    for i, q in enumerate(items, 1):
        print(
            f"\nQuestion {i} of {len(items)} ({TOPICS[q.topic].title}, {q.concept.replace('_', ' ')})",
            file=out,
        )
        print(q.prompt, file=out)
        for n, choice in enumerate(q.choices, 1):
            print(f"  {n}. {choice.replace('_', ' ')}", file=out)
        print("Your answer" + (f" ({q.unit})" if q.unit and not q.is_choice else "") + ": ", end="", file=out)
        out.flush()
        line = _read(given)
        if not line:  # end of input (or none to read): stop, and say how it went so far
            print("", file=out)
            break
        print("How sure are you? 1 sure, 2 think so, 3 guess: ", end="", file=out)
        out.flush()
        sure = CONFIDENCE.get(_read(given).strip().lower()[:1], "not said")
        g = grade(q, line)
        right += g.right
        if record:
            answers.record(q, g.given, sure, g.right)
        print(f"{'Right' if g.right else 'Not right'} ({sure}): {g.said}.", file=out)
        print(f"Why: {q.explanation}", file=out)
        print(f"Check it: {' '.join(q.command)}  (key {q.answer_key})", file=out)
    print(f"\n{right} of {len(items)} right.", file=out)
    return 0


def _read(given: TextIO) -> str:
    """One line the student typed, or '' at the end of input or where there is no input to read."""
    try:
        return given.readline(1000)
    except (OSError, ValueError):
        return ""
