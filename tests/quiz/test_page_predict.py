"""Predict mode on a page, without Qt: the answer of the picture shown is hidden until the student
commits, the commit grades and keeps the answer, new parameters ask again, and a picture no
question fits is shown with why; the question asked is about exactly what the page draws."""

from __future__ import annotations

import csv
import random

import pytest

from explorer.devices.limits import limits_for_cc, parse_cc
from explorer.errors import UserError
from explorer.launch.occupancy import occupancy
from explorer.memory.banks import SharedAccess, bank_conflicts
from explorer.memory.coalescing import GlobalAccess, coalesce
from explorer.memory.divergence import Branch, divergence
from explorer.quiz.answers import answers_path
from explorer.quiz.page_predict import (
    PagePredict,
    banks_params,
    coalescing_params,
    divergence_params,
    occupancy_params,
)


class Recorder:
    def __init__(self, fail: Exception | None = None) -> None:
        self.calls: list[tuple] = []
        self.fail = fail

    def __call__(self, question, answer, confidence, right, lesson="", step=""):
        self.calls.append((question.id, answer, confidence, right, lesson))
        if self.fail is not None:
            raise self.fail


def _watched(model: PagePredict) -> list[str]:
    seen: list[str] = []
    model.asked.connect(lambda: seen.append("asked"))
    model.revealed.connect(lambda: seen.append("revealed"))
    return seen


STRIDED = coalescing_params(4, 2, 0, 32)  # 32 lanes, 4-byte elements 2 apart: 8 sectors


def test_off_nothing_is_hidden_and_on_the_picture_shown_is_asked_about():
    rec = Recorder()
    model = PagePredict("coalescing", "sectors", "memory", rec)
    seen = _watched(model)
    model.show(STRIDED)
    assert not model.hidden and model.question is None and seen == []

    model.set_on(True)
    assert seen == ["asked"] and model.hidden and not model.answered
    assert model.question is not None and model.question.params == STRIDED
    assert model.question.answer == 8 and model.verdict() == "" and model.explanation() == ""

    model.show(dict(STRIDED))  # a redraw of the same picture (the theme changed): nothing new
    assert seen == ["asked"] and model.hidden


def test_a_commit_grades_keeps_and_reveals_and_new_parameters_ask_again():
    rec = Recorder()
    model = PagePredict("coalescing", "sectors", "memory", rec)
    model.show(STRIDED)
    model.set_on(True)
    seen = _watched(model)
    assert model.commit("   ", "sure") is None and model.hidden  # nothing typed: still asking

    g = model.commit("6", "guess")
    assert g is not None and not g.right and g.off_by == -2
    assert seen == ["revealed"] and not model.hidden and model.answered
    assert model.verdict() == "Not right (guess): off by -2: the answer is 8 sectors."
    assert "32-byte sectors" in model.explanation()
    assert rec.calls == [(model.question.id, "6", "guess", False, "memory")]
    assert model.commit("8", "sure") is None and len(rec.calls) == 1  # one answer per picture

    model.show(coalescing_params(4, 1, 0, 32))  # the student moves a field: a new picture, asked
    assert seen == ["revealed", "asked"] and model.hidden and model.verdict() == ""
    model.commit("4", "sure")
    assert model.verdict() == "Right (sure): the answer is 4 sectors."
    assert rec.calls[-1][2:] == ("sure", True, "memory")


def test_turning_predict_off_reveals_and_on_again_asks_afresh():
    model = PagePredict("banks", "conflict", "memory", Recorder())
    seen = _watched(model)
    model.set_on(True)  # no picture yet: nothing to ask, nothing covered
    assert seen == ["revealed"] and not model.hidden
    model.show(banks_params(4, 32, 0, 32))
    assert seen == ["revealed", "asked"] and model.question is not None and model.question.answer == 32
    model.set_on(False)
    assert seen[-1] == "revealed" and not model.hidden and model.question is None
    model.set_on(True)
    assert seen[-1] == "asked" and model.hidden


def test_a_picture_no_question_fits_is_shown_with_why():
    model = PagePredict("divergence", "simt_efficiency", "memory", Recorder())
    model.set_on(True)
    seen = _watched(model)
    model.show(divergence_params(64, "mod", 2))
    assert seen == ["asked"] and model.hidden and model.question is not None
    with pytest.raises(UserError, match="random branch"):
        divergence_params(64, "random", 0)
    model.show(None, "a random branch has no exact answer to predict")
    assert seen == ["asked", "revealed"] and not model.hidden
    assert model.note() == "Nothing to predict here: a random branch has no exact answer to predict"
    assert model.commit("0.5", "sure") is None

    # parameters past what a question takes: the picture shows, and the line names the limit
    coal = PagePredict("coalescing", "sectors", "memory", Recorder())
    coal.set_on(True)
    coal.show(coalescing_params(4, 40_000, 0, 32, warp=31))
    assert not coal.hidden and "offset" in coal.note() and "\n" not in coal.note()


def test_an_answer_not_kept_is_still_revealed_and_said():
    model = PagePredict("banks", "conflict", "memory", Recorder(fail=OSError("disk full")))
    model.show(banks_params(4, 1, 0, 32))
    model.set_on(True)
    assert model.commit("1", "think so") is not None
    assert model.answered and model.verdict().startswith("Right (think so)")
    assert model.note() == "Your answer was not kept: disk full"


def test_the_answer_goes_to_the_students_answers_file(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    model = PagePredict("divergence", "simt_efficiency", "memory")
    model.show(divergence_params(32, "lt", 16))
    model.set_on(True)
    model.commit("0.5", "sure")
    with open(answers_path(), newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    assert (row["question_id"], row["lesson"], row["answer"], row["confidence"], row["right"]) == (
        model.question.id,
        "memory",
        "0.5",
        "sure",
        "1",
    )


def _random_access(rng: random.Random) -> tuple[int, int, int, int, int]:
    return (
        rng.choice((1, 2, 4, 8, 16)),
        rng.choice((0, 1, 2, 3, 4, 8, 16, 17, 32, 33, rng.randint(0, 200))),
        rng.choice((0, 1, 3, 7, rng.randint(0, 500))),
        rng.choice((1, 2, 31, 32, rng.randint(1, 32))),
        rng.choice((0, 0, 1, 31, rng.randint(0, 31))),
    )


def test_the_question_asked_is_about_exactly_what_each_picture_draws():
    """Over thousands of random pictures (the smallest included), the answer revealed is the
    number the page's own model computes for the picture: coalescing for any warp of the block,
    banks with the stride the page pads, divergence for every condition a question takes."""
    rng = random.Random(11)
    cases = [(1, 0, 0, 1, 0), (1, 1, 0, 1, 0), (16, 0, 0, 32, 31)] + [
        _random_access(rng) for _ in range(3000)
    ]
    sectors = PagePredict("coalescing", "sectors", "memory", Recorder())
    efficiency = PagePredict("coalescing", "efficiency", "memory", Recorder())
    banks = PagePredict("banks", "conflict", "memory", Recorder())
    for model in (sectors, efficiency, banks):
        model.set_on(True)
    for elem, stride, offset, active, warp in cases:
        drawn = coalesce(GlobalAccess(elem, stride, offset, active, warp))
        sectors.show(coalescing_params(elem, stride, offset, active, warp))
        efficiency.show(coalescing_params(elem, stride, offset, active, warp))
        assert sectors.question is not None and sectors.question.answer == drawn.sectors_per_request
        assert efficiency.question is not None and efficiency.question.answer == drawn.efficiency
        banks.show(banks_params(elem, stride, offset, active))
        assert banks.question is not None
        assert (
            banks.question.answer
            == bank_conflicts(SharedAccess(elem, stride, offset, active)).conflict_degree
        )
    simt = PagePredict("divergence", "simt_efficiency", "memory", Recorder())
    simt.set_on(True)
    for block, kind, k in [(1, "mod", 1), (1, "lt", 0), (1, "warp", 1)] + [
        (rng.randint(1, 1024), rng.choice(("mod", "lt", "warp")), rng.randint(0, 70)) for _ in range(2000)
    ]:
        if kind != "lt" and k == 0:
            k = 1  # "% 0" is no condition (the page's field says so too)
        simt.show(divergence_params(block, kind, k))
        assert simt.question is not None
        assert simt.question.answer == divergence(block, Branch(kind, k=k)).simt_efficiency


def test_the_occupancy_asked_is_what_the_visualizer_shows_on_each_catalog_gpu():
    """Each catalog GPU with thousands of blocks (the smallest included): the answer is the
    occupancy the visualizer computes on that GPU's own limits, or the picture says why not."""
    from explorer.devices.catalog import load_catalog
    from explorer.devices.limits import limits_for_device
    from explorer.launch.config import Dim3, LaunchConfig, LaunchValidationError, check

    rng = random.Random(5)
    gpus = [d for d in load_catalog() if d.compute_capability is not None]
    occ = PagePredict("occupancy", "occupancy", "launch page", Recorder())
    limiter = PagePredict("occupancy", "limiter", "launch page", Recorder())
    occ.set_on(True)
    limiter.set_on(True)
    asked = refused = 0
    for gpu in gpus:
        limits = limits_for_device(gpu)
        blocks = [(1, 1, 0), (1024, 255, 0), (32, 16, 0)] + [
            (
                rng.randint(1, 1024),
                rng.randint(1, 255),
                rng.choice((0, 1024, 4096, 16384, 49152, rng.randint(0, 99_000))),
            )
            for _ in range(300)
        ]
        for threads, regs, smem in blocks:
            try:
                check(LaunchConfig(Dim3(1), Dim3(threads), smem, regs), limits, limits.label)
            except (LaunchValidationError, UserError):
                continue  # the visualizer shows no occupancy for a launch that cannot run
            shown = occupancy(limits, threads, regs, smem)
            try:
                params = occupancy_params(limits, threads, regs, smem)
            except UserError as exc:
                assert "\n" not in str(exc) and limits != limits_for_cc(parse_cc(limits.cc_string))
                refused += 1
                continue
            occ.show(params)
            if occ.question is None:  # its table cannot run it: said in one line
                assert occ.why_not and "\n" not in occ.why_not
                continue
            asked += 1
            assert occ.question.answer == shown.to_dict()["occupancy_pct"], (gpu.name, threads, regs, smem)
            limiter.show(params)
            if "+" in shown.limiter:  # two resources at once: no single right choice to ask for
                assert limiter.question is None and limiter.why_not
            else:
                assert limiter.question is not None and limiter.question.answer == shown.limiter
    assert asked > 10 * refused  # nearly every GPU's picture can be asked about


def test_a_gpu_whose_own_limits_change_the_occupancy_is_not_asked_about():
    """A present GPU's driver may report a limit the compute capability's table has otherwise (a
    smaller register file, say): a question names only the compute capability, so it is not
    asked where that changes the answer, and is where it does not."""
    from dataclasses import replace

    table = limits_for_cc(parse_cc("8.6"))
    smaller = replace(table, regs_per_sm=table.regs_per_sm // 2)
    with pytest.raises(UserError, match="limits of its own") as info:
        occupancy_params(smaller, 256, 64, 0)  # registers bind: half the file, half the blocks
    assert "\n" not in str(info.value)
    assert occupancy(smaller, 256, 64, 0).occupancy != occupancy(table, 256, 64, 0).occupancy
    # the same GPU with a block the register file does not limit: the table's answer holds
    assert occupancy_params(smaller, 32, 16, 0) == {"cc": "8.6", "threads": 32, "regs": 16, "smem": 0}


def test_the_student_may_ask_the_other_concept_of_the_same_picture():
    rec = Recorder()
    model = PagePredict("coalescing", "sectors", "memory", rec, concepts=("sectors", "efficiency"))
    seen = _watched(model)
    model.set_concept("efficiency")  # off: nothing asked, nothing covered
    assert seen == [] and model.question is None
    model.show(STRIDED)
    model.set_on(True)
    assert model.question is not None and model.question.concept == "efficiency"
    assert model.question.answer == 0.5
    model.commit("0.5", "sure")
    model.set_concept("sectors")  # the other question about the same picture: covered again
    assert seen[-1] == "asked" and model.hidden and model.question.answer == 8
    with pytest.raises(ValueError, match="not one of"):
        model.set_concept("conflict")

    limiter = PagePredict("occupancy", "occupancy", "launch", rec, concepts=("occupancy", "limiter"))
    limiter.set_on(True)
    limiter.show(occupancy_params(limits_for_cc(parse_cc("8.0")), 1024, 64, 0))
    assert limiter.hidden
    limiter.set_concept("limiter")
    assert limiter.question is not None and limiter.question.answer == "registers"
    limiter.show(
        occupancy_params(limits_for_cc(parse_cc("8.0")), 1024, 32, 0)
    )  # warps and registers bind at once
    assert not limiter.hidden and limiter.note().startswith("Nothing to predict here: ")
