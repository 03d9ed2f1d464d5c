"""Predict mode on a page: the answer of the picture now shown stays hidden until the student
commits a number or a choice and how sure they are; then the page reveals it, says right or how
far off, and gives the rule.

One ``PagePredict`` per picture (a Memory tab, the visualizer's occupancy). The page hands it its
current parameters (``show``) every time it redraws; the model asks the topic's question about
exactly those (``fixed_question``), so the answer is the number the picture then reveals. New
parameters while Predict is on ask again; the same ones (a redraw for the theme) change nothing.
Parameters no question can be asked about (a random branch) leave the picture shown, with why.

Views subscribe to ``asked`` (a new question is up: cover the answer) and ``revealed`` (show it
again: committed, Predict turned off, or nothing to ask) and read the state back from the model.

The ``*_params`` helpers turn what a page shows into a question's parameters, one line naming
what cannot be asked about.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from explorer.devices.limits import ArchLimits, limits_for_cc, parse_cc
from explorer.errors import UserError
from explorer.events import Event
from explorer.launch.occupancy import occupancy
from explorer.memory.session import BankModel, CoalescingModel, DivergenceModel
from explorer.quiz.answers import CONFIDENCES, record
from explorer.quiz.model import Grade, Question, grade
from explorer.quiz.topics import TOPICS, fixed_question

#: how an answer is kept: ``answers.record``'s signature (a test passes its own)
Recorder = Callable[..., object]

WARP_SIZE = 32

#: a concept as a page's "Ask about" menu names it
CONCEPT_WORDS = {
    "sectors": "sectors fetched",
    "efficiency": "bytes used",
    "occupancy": "occupancy",
    "limiter": "limiting resource",
    "conflict": "conflict ways",
    "simt_efficiency": "SIMT efficiency",
    "utilization": "share of issue slots used",
    "warps_needed": "warps needed",
    "global_loads": "global loads",
    "intensity": "FLOP per byte",
    "barriers": "barriers passed",
    "makespan": "launch time",
}


class PagePredict:
    """The Predict state of one picture: off, or on with its question hidden or answered."""

    def __init__(
        self,
        topic: str,
        concept: str,
        page: str,
        recorder: Recorder = record,
        concepts: tuple[str, ...] = (),
    ) -> None:
        """``concepts``: the ones the page lets the student choose among (``concept`` first asked)."""
        self.concepts = concepts or (concept,)
        if topic not in TOPICS or any(c not in TOPICS[topic].concepts for c in (concept, *self.concepts)):
            raise ValueError(f"no quiz concept {topic}.{concept} (or {', '.join(self.concepts)})")
        self.topic = topic
        self.concept = concept
        self.page = page  # kept with each answer, where a lesson's answers keep the lesson's name
        self._recorder = recorder
        self.on = False
        self.params: dict[str, Any] | None = None  # the picture's parameters, as last shown
        self._shown: tuple[dict[str, Any] | None, str] = (None, "")  # what the page last said
        self.why_not = ""  # why the picture shown has no question ("" when it has one)
        self.question: Question | None = None
        self.grade: Grade | None = None
        self.confidence = ""
        self.not_kept = ""  # why the answer could not be written to the answers file
        self.asked = Event("asked")
        self.revealed = Event("revealed")

    # --- what a view reads -----------------------------------------------------------------------
    @property
    def hidden(self) -> bool:
        """Whether the picture's answer must be covered now: a question is up, not answered."""
        return self.on and self.question is not None and self.grade is None

    @property
    def answered(self) -> bool:
        return self.on and self.grade is not None

    def verdict(self) -> str:
        """After the commit: right or how far off and the answer, with how sure the student was;
        "" before it."""
        if self.grade is None or self.question is None:
            return ""
        if self.grade.right:
            return f"Right ({self.confidence}): the answer is {self.question.answer_text()}."
        return f"Not right ({self.confidence}): {self.grade.said}."

    def explanation(self) -> str:
        """After the commit: the rule, named, that gives the answer; "" before it."""
        return self.question.explanation if self.grade is not None and self.question is not None else ""

    def note(self) -> str:
        """While on: why this picture asks nothing, or that the answer was not kept ("" else)."""
        if not self.on:
            return ""
        if self.why_not:
            return f"Nothing to predict here: {self.why_not}"
        return f"Your answer was not kept: {self.not_kept}" if self.not_kept else ""

    # --- what a view tells it --------------------------------------------------------------------
    def set_on(self, on: bool) -> None:
        """Predict mode on (ask about the picture shown) or off (show everything)."""
        if on == self.on:
            return
        self.on = on
        self.question, self.grade, self.not_kept = None, None, ""
        if on and self.params is not None:
            self._ask()
        else:
            self.revealed.emit()

    def set_concept(self, concept: str) -> None:
        """Ask about another of the page's concepts: the picture is asked about afresh."""
        if concept not in self.concepts:
            raise ValueError(f"{concept!r} is not one of {', '.join(self.concepts)}")
        if concept == self.concept:
            return
        self.concept = concept
        if not self.on or self.params is None:
            return
        self.question, self.grade, self.not_kept = None, None, ""
        self._ask()

    def show(self, params: dict[str, Any] | None, why_not: str = "") -> None:
        """The picture now shows ``params`` (``None`` with ``why_not``: nothing a question can be
        asked about). New parameters while on ask again; the same ones change nothing."""
        if (params, why_not) == self._shown:
            return
        self._shown = (dict(params) if params is not None else None, why_not)
        self.params, self.why_not = (dict(params) if params is not None else None), why_not
        if not self.on:
            return
        was_hidden = self.hidden
        self.question, self.grade, self.not_kept = None, None, ""
        if params is not None:
            self._ask()
        elif was_hidden or why_not:
            self.revealed.emit()

    def commit(self, given: str, confidence: str) -> Grade | None:
        """Grade the prediction, keep it in the answers file and reveal; ``None`` (nothing
        changes) when no question is up or nothing was given."""
        if not self.hidden or self.question is None or not given.strip():
            return None
        g = grade(self.question, given)
        self.confidence = confidence if confidence in CONFIDENCES else "not said"
        try:
            self._recorder(self.question, g.given, self.confidence, g.right, lesson=self.page)
        except (OSError, UserError) as exc:  # the answer is still revealed; only its keeping failed
            self.not_kept = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        self.grade = g
        self.revealed.emit()
        return g

    def _ask(self) -> None:
        assert self.params is not None
        try:
            self.question = fixed_question(self.topic, self.concept, self.params)
        except UserError as exc:
            self.question, self.why_not = None, str(exc)
            self.revealed.emit()
            return
        self.why_not = ""
        self.asked.emit()


# --- what a page shows, as a question's parameters ------------------------------------------------


def coalescing_params(elem: int, stride: int, offset: int, active: int, warp: int = 0) -> dict[str, Any]:
    """The Memory page's coalescing picture: lane i of warp w reads element offset + (32 w + i) x
    stride, which is warp 0's question with the offset moved on by 32 w x stride."""
    return {
        "elem_bytes": elem,
        "stride": stride,
        "offset": offset + WARP_SIZE * warp * stride,
        "active_lanes": active,
    }


def banks_params(elem: int, stride: int, offset: int, active: int) -> dict[str, Any]:
    """The banks picture (its stride with any padding already added)."""
    return {"elem_bytes": elem, "stride": stride, "offset": offset, "active_lanes": active}


def divergence_params(block: int, kind: str, k: int) -> dict[str, Any]:
    """The divergence picture; a random branch (its lanes drawn from a seed) has no question."""
    if kind == "random":
        raise UserError("a random branch has no exact answer to predict; choose another condition")
    return {"block": block, "kind": kind, "k": k}


def memory_params(model: CoalescingModel | BankModel | DivergenceModel) -> tuple[dict[str, Any] | None, str]:
    """A Memory tab's picture, as its model holds it, as a question's parameters; or None and the
    one line why no question can be asked about it (a branch the model refused, a random one)."""
    if isinstance(model, CoalescingModel):
        c = model.result
        return coalescing_params(*c.inputs.numbers, warp=c.warp), ""
    if isinstance(model, BankModel):
        return banks_params(*model.result.modelled.numbers), ""
    d = model.result
    if d.problem:
        return None, d.problem
    try:
        return divergence_params(d.inputs.block, d.inputs.kind, d.inputs.k), ""
    except UserError as exc:  # a random branch: the picture shows, and the strip says why
        return None, str(exc)


def follow_memory(predict: PagePredict, model: CoalescingModel | BankModel | DivergenceModel) -> None:
    """Keep ``predict`` asking about what ``model`` (a tab of ``explorer.memory.session``) shows:
    now, and every time its result changes."""

    def show() -> None:
        params, why_not = memory_params(model)
        predict.show(params, why_not)

    model.changed.connect(show)
    show()


def tiling_params(m: int, n: int, k: int, tile: int) -> dict[str, Any]:
    """The Tiled matmul tab's launch: C (m x n) = A (m x k) B (k x n) in T x T tiles."""
    return {"m": m, "n": n, "k": k, "tile": tile}


def dispatch_params(
    device_key: str, grid: tuple[int, int, int], threads: int, regs: int, smem: int, durations: str
) -> dict[str, Any]:
    """The Timeline's launch: a catalog GPU's, on a 1-D grid (a row pattern of durations reads a
    2-D grid's rows, which a question's 1-D launch has not), with durations typed, not a file's."""
    if not device_key.startswith("catalog:"):
        raise UserError(
            "the Timeline asks about a catalog GPU's launch (choose one in the launch controls): a GPU "
            "here has its own reported limits"
        )
    if grid[1] != 1 or grid[2] != 1:
        raise UserError(f"the Timeline asks about a 1-D grid; this one is {grid[0]} x {grid[1]} x {grid[2]}")
    if durations.strip().lower().startswith("file:"):
        raise UserError("durations read from a file are not asked about: type them instead")
    return {
        "device": device_key.removeprefix("catalog:"),
        "grid": grid[0],
        "block": threads,
        "durations": durations,
        "regs": regs,
        "smem": smem,
    }


def occupancy_params(limits: ArchLimits, threads: int, regs: int, smem: int) -> dict[str, Any]:
    """The visualizer's occupancy: its GPU's limits, which may put a reported value (shared
    memory per SM, say) before its compute capability's table. A question names only the compute
    capability, so a GPU whose own limits change this block's occupancy or limiter has none."""
    cc = limits.cc_string
    table = limits_for_cc(parse_cc(cc))
    if table != limits:
        shown, asked = occupancy(limits, threads, regs, smem), occupancy(table, threads, regs, smem)
        if (shown.occupancy, shown.limiter) != (asked.occupancy, asked.limiter):
            raise UserError(
                f"this GPU reports limits of its own that change the block's occupancy; a question "
                f"uses compute capability {cc}'s table"
            )
    return {"cc": cc, "threads": threads, "regs": regs, "smem": smem}
