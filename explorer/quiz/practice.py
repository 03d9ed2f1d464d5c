"""A practice session: questions of chosen topics drawn from a seed, each answer graded, scored per
concept and kept in the answers file; a missed question is followed by its variant (the same concept
with other numbers), so a student tries the idea again rather than the same numbers."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from explorer.errors import UserError
from explorer.quiz import answers
from explorer.quiz.model import Grade, Question, grade
from explorer.quiz.topics import TOPICS, make_question, variant_of

LESSON = "practice"  # the answers file's lesson column for answers given here


@dataclass
class ConceptScore:
    """How a student did on one concept: asked, right, and both by how sure they said they were."""

    asked: int = 0
    right: int = 0
    asked_by: Counter[str] = field(default_factory=Counter)
    right_by: Counter[str] = field(default_factory=Counter)


@dataclass
class Practice:
    """The session's state: which question is shown, whether it was answered, the score so far."""

    topics: tuple[str, ...]
    seed: int
    current: Question | None = None
    last: Grade | None = None  # the grade of the current question once committed
    scores: dict[str, ConceptScore] = field(default_factory=dict)
    drawn: int = 0  # fresh questions drawn so far (the seed's offset)

    def __post_init__(self) -> None:
        if not self.topics:
            raise UserError(f"pick at least one topic; the topics: {', '.join(TOPICS)}")
        for t in self.topics:
            if t not in TOPICS:
                raise UserError(f"no quiz topic {t[:40]!r}; the topics: {', '.join(TOPICS)}")
        self.topics = tuple(self.topics)
        self.current = self._fresh()

    def _fresh(self) -> Question:
        i = self.drawn
        self.drawn += 1
        t = TOPICS[self.topics[i % len(self.topics)]]
        concept = t.concepts[(i // len(self.topics)) % len(t.concepts)]
        return make_question(t.name, concept, self.seed + i)

    @property
    def answered(self) -> bool:
        return self.last is not None

    def commit(self, given: str, confidence: str) -> Grade:
        """Grade ``given`` for the current question, score it and record it; once per question."""
        q = self.current
        assert q is not None
        if self.last is not None:
            raise UserError("this question is answered already; go to the next one")
        g = grade(q, given)
        conf = confidence if confidence in answers.CONFIDENCES else "not said"
        s = self.scores.setdefault(f"{q.topic}.{q.concept}", ConceptScore())
        s.asked += 1
        s.asked_by[conf] += 1
        if g.right:
            s.right += 1
            s.right_by[conf] += 1
        answers.record(q, given, conf, g.right, lesson=LESSON, step=q.topic)
        self.last = g
        return g

    def next(self) -> Question:
        """The next question: the variant of the current one when it was missed, else a fresh one."""
        missed = self.current is not None and self.last is not None and not self.last.right
        self.current = variant_of(self.current.id) if missed and self.current else self._fresh()
        self.last = None
        return self.current

    def totals(self) -> tuple[int, int]:
        return sum(s.asked for s in self.scores.values()), sum(s.right for s in self.scores.values())
