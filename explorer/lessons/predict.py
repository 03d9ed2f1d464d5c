"""A lesson step that asks first: ``"predict": {"topic": ..., "concept": ...}`` in a step makes the
player ask the topic's question before it shows the step's picture.

Without ``params`` the question is about "the value this step shows": its parameters are read off
the step's own launch or pattern, built as the page would build them, so the answer is the number
the picture then reveals. With ``params`` the question is about those. An ``answer`` the author
wrote down is checked against the generator's by ``lessons --check``. A variant step is simply the
next step asking the same concept of other numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from explorer.devices.model import Device
from explorer.errors import UserError
from explorer.lessons.model import PREDICT_KEY, MemoryState, Step, VisualizerState
from explorer.quiz.model import Question
from explorer.quiz.topics import TOPICS, fixed_question

__all__ = ["PREDICT_KEY", "PredictSpec", "check_predict", "predict_spec", "shown_params", "step_question"]


@dataclass(frozen=True)
class PredictSpec:
    topic: str
    concept: str
    params: dict[str, Any] | None = None
    answer: Any = None  # what the author expects, checked against the generator's


def predict_spec(step: Step) -> PredictSpec | None:
    """The step's question, checked for shape (one line naming the field when it is wrong)."""
    raw = step.extra.get(PREDICT_KEY)
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise UserError("predict must be an object with a topic and a concept")
    topic, concept = raw.get("topic"), raw.get("concept")
    if not isinstance(topic, str) or topic not in TOPICS:
        raise UserError(f"predict's topic is {str(topic)[:40]!r}, not one of {', '.join(TOPICS)}")
    if not isinstance(concept, str) or concept not in TOPICS[topic].concepts:
        raise UserError(
            f"predict's concept is {str(concept)[:40]!r}; {topic}'s are {', '.join(TOPICS[topic].concepts)}"
        )
    params = raw.get("params")
    if params is not None and not isinstance(params, dict):
        raise UserError("predict's params must be an object")
    unknown = set(raw) - {"topic", "concept", "params", "answer"}
    if unknown:
        raise UserError(f"predict has {', '.join(sorted(unknown))}, which it does not take")
    return PredictSpec(topic, concept, params, raw.get("answer"))


def step_question(step: Step, devices: Sequence[Device]) -> Question | None:
    """The question this step asks before its picture; None for a step that asks none."""
    spec = predict_spec(step)
    if spec is None:
        return None
    params = spec.params if spec.params is not None else shown_params(spec.topic, step, devices)
    return fixed_question(spec.topic, spec.concept, params)


def check_predict(step: Step, devices: Sequence[Device]) -> str:
    """What is wrong with the step's question ("" when nothing): it cannot be asked, or the answer
    its author wrote is not the generator's."""
    try:
        spec = predict_spec(step)
        question = step_question(step, devices)
    except UserError as exc:
        return f"predict: {exc}"
    if spec is None or question is None or spec.answer is None:
        return ""
    if isinstance(question.answer, str):
        right = spec.answer == question.answer
    else:
        right = (
            isinstance(spec.answer, (int, float)) and abs(spec.answer - question.answer) <= question.tolerance
        )
    return (
        ""
        if right
        else f"predict: the answer written is {spec.answer!r}; the model gives {question.answer_text()}"
    )


def shown_params(topic: str, step: Step, devices: Sequence[Device]) -> dict[str, Any]:
    """The question's parameters read off what the step shows (its launch, pattern or latency)."""
    state = step.state
    if isinstance(state, VisualizerState) and topic in ("occupancy", "waves", "latency"):
        return _launch_params(topic, state, devices)
    if isinstance(state, MemoryState) and topic in ("coalescing", "banks") and state.view == topic:
        return _pattern_params(topic, state)
    raise UserError(f"a {step.panel} step cannot show a {topic} question's value; give predict's params")


def _launch_params(topic: str, state: VisualizerState, devices: Sequence[Device]) -> dict[str, Any]:
    from explorer.lessons.time_steps import apply_time_views, headless_views
    from explorer.lessons.visualizer import apply_step

    views, gpus = headless_views(devices)
    apply_step(views.session, state, gpus)
    side = views.session.edited_side
    plan, limits = side.plan, side.limits
    if plan is None or limits is None:
        raise UserError("the step's launch cannot run, so it has no value to predict")
    c = plan.config
    if topic == "occupancy":
        return {
            "cc": limits.cc_string,
            "threads": c.block.count,
            "regs": c.regs_per_thread,
            "smem": c.shared_mem_bytes,
        }
    if topic == "waves":
        key = side.setup.device_key
        if not key.startswith("catalog:"):
            raise UserError("a waves question names a catalog GPU; this step shows a present one")
        return {
            "device": key.split(":", 1)[1],
            "grid": c.grid.count,
            "block": c.block.count,
            "smem": c.shared_mem_bytes,
            "regs": c.regs_per_thread,
        }
    apply_time_views(views, state)
    views.set_view("latency")
    run = views.latency
    if run is None or run.config.policy != "gto":
        raise UserError("the step's latency view has no greedy-then-oldest run to ask about")
    cfg = run.config
    return {"warps": cfg.warps, "mem_latency": cfg.mem_latency, "alu": cfg.alu, "schedulers": cfg.schedulers}


def _pattern_params(topic: str, state: MemoryState) -> dict[str, Any]:
    """The pattern as the Memory page builds it (``explorer.lessons.build``): the banks picture
    pads its stride by one when the step pads the tile."""
    if topic == "coalescing" and state.warp != 0:
        raise UserError("a coalescing question asks about warp 0; this step shows another warp")
    stride = state.stride + (1 if topic == "banks" and state.pad else 0)
    return {"elem_bytes": state.elem, "stride": stride, "offset": state.offset, "active_lanes": state.active}
