"""Every quiz question's answer is what its own command prints: the property a teacher relies on
when the app grades a class, checked over thousands of seeds by running the command (in this
process, through the CLI's own parser and handler) and reading its ``answer_key``."""

from __future__ import annotations

import io
import json

import pytest

from explorer.cli import main
from explorer.quiz.model import grade, parse_id, read_key
from explorer.quiz.topics import TOPICS, make_question, questions, variant_of
from tests.cli_json import run_json

CASES = [(t.name, c) for t in TOPICS.values() for c in t.concepts if t.name != "dispatch"]


@pytest.mark.parametrize(("topic", "concept"), CASES)
def test_each_answer_is_what_its_command_prints(topic, concept):
    for seed in range(400):  # 400 seeds x 14 concepts: thousands of questions
        q = make_question(topic, concept, seed)
        assert read_key(run_json(q.command), q.answer_key) == q.answer, q.id
        if q.choices:
            assert q.answer in q.choices, q.id  # every answer reachable
        else:
            assert isinstance(q.answer, int | float) and q.tolerance >= 0
        assert grade(q, str(q.answer) if q.choices else repr(q.answer)).right


@pytest.mark.slow  # the dispatch loop is compiled by numba the first time (seconds)
def test_each_dispatch_answer_is_what_its_command_prints():
    for seed in range(120):
        q = make_question("dispatch", "makespan", seed)
        assert read_key(run_json(q.command), q.answer_key) == q.answer, q.id


def test_a_seed_always_gives_the_same_question_and_the_id_names_it():
    for topic, concept in CASES:
        a, b = make_question(topic, concept, 7), make_question(topic, concept, 7)
        assert a == b and parse_id(a.id) == (topic, concept, 7)


def test_a_variant_keeps_the_topic_and_concept_and_changes_the_numbers():
    for topic, concept in CASES:
        for seed in range(30):
            q = make_question(topic, concept, seed)
            v = variant_of(q.id)
            assert (v.topic, v.concept) == (q.topic, q.concept) and v.params != q.params and v.id != q.id


def test_the_smallest_cases_are_asked_and_right():
    """One warp, one active lane, a single block: the generators reach the edges of each model."""
    seen = {"one_lane": False, "one_block_grid": False, "one_warp_block": False}
    for seed in range(3000):
        c = make_question("coalescing", "sectors", seed)
        seen["one_lane"] |= c.params["active_lanes"] == 1
        w = make_question("waves", "waves", seed)
        seen["one_block_grid"] |= w.params["grid"] == 1 or w.answer == 1
        d = make_question("divergence", "simt_efficiency", seed)
        seen["one_warp_block"] |= d.params["block"] <= 32
    assert all(seen.values()), seen


def test_an_occupancy_limiter_question_never_has_two_right_answers():
    for seed in range(500):
        q = make_question("occupancy", "limiter", seed)
        data = run_json(q.command)
        assert data["limiters"] == [q.answer]


def test_grading_takes_a_number_within_the_tolerance_and_a_choice_by_number_or_name():
    q = make_question("occupancy", "occupancy", 3)
    assert isinstance(q.answer, float)
    assert grade(q, f"{q.answer + 0.4:.2f}%").right
    assert not grade(q, f"{q.answer + 0.6:.2f}").right
    wrong = grade(q, "1e400")
    assert not wrong.right and "not a number" in wrong.said
    limiter = make_question("occupancy", "limiter", 3)
    index = limiter.choices.index(str(limiter.answer)) + 1
    assert grade(limiter, str(index)).right and grade(limiter, str(limiter.answer).upper()).right
    assert "not one of the choices" in grade(limiter, "9" * 400).said


def test_questions_take_every_topic_in_turn_and_their_concepts():
    qs = questions("all", 16, seed=5)
    assert [q.topic for q in qs[:8]] == list(TOPICS)
    assert {q.concept for q in qs if q.topic == "occupancy"} == {"occupancy", "limiter"}


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["quiz", "--topic", "warp-magic"], "no quiz topic 'warp-magic'"),
        (["quiz", "--count", "0"], "--count"),
        (["quiz", "--count", "1" + "0" * 400], "--count"),
        (["quiz", "--variant-of", "occupancy; rm -rf /"], "is not a question id"),
        (["quiz", "--variant-of", "occupancy.nothing.3"], "has no concept 'nothing'"),
    ],
)
def test_bad_quiz_input_is_one_line(capsys, argv, said):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0]


def test_the_json_lists_each_question_with_its_check(capsys):
    assert main(["quiz", "--topic", "banks", "--count", "3", "--seed", "9", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    keys = {"id", "topic", "concept", "prompt", "params", "answer", "unit", "tolerance", "choices"}
    keys |= {"explanation", "command", "answer_key"}
    assert [set(q) for q in data["questions"]] == [keys] * 3


def test_the_terminal_quiz_asks_reads_and_reveals(monkeypatch, capsys):
    q = make_question("tiling", "global_loads", 0)
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{q.answer}\n1\n0\n3\n"))
    assert main(["quiz", "--topic", "tiling", "--count", "2", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "Right (sure): right." in out and "Check it: device-explorer tiling" in out
    assert out.rstrip().endswith("of 2 right.")


def test_a_fixed_launch_time_question_is_what_dispatch_prints_for_that_launch():
    """The Timeline's own launch asked about (its catalog GPU, blocks, threads, registers, shared
    memory, durations): the answer is the makespan ``dispatch --json`` prints for it, over random
    launches, the smallest included; random durations are refused in one line."""
    import random

    from explorer.errors import UserError
    from explorer.quiz.topics import fixed_question

    rng = random.Random(11)
    cases = [("t4", 1, 32, 32, 0, "uniform")]
    for _ in range(40):
        cases.append(
            (
                rng.choice(("gtx-1650-laptop", "t4", "l4", "h100-sxm5", "a100-sxm4-40gb")),
                rng.randint(1, 400),
                rng.choice((32, 64, 128, 256, 1024)),
                rng.choice((16, 32, 64, 128)),
                rng.choice((0, 0, 1024, 16384, 40000)),
                rng.choice(("uniform", "rows:1,8", "rows:1,1,2")),
            )
        )
    for slug, grid, block, regs, smem, durations in cases:
        params = {
            "device": slug,
            "grid": grid,
            "block": block,
            "durations": durations,
            "regs": regs,
            "smem": smem,
        }
        try:
            q = fixed_question("dispatch", "makespan", params)
        except UserError as exc:  # a block the GPU cannot hold: named, never a traceback
            assert "\n" not in str(exc)
            continue
        assert read_key(run_json(q.command), q.answer_key) == pytest.approx(q.answer), (params, q.command)
    with pytest.raises(UserError, match="random"):
        fixed_question("dispatch", "makespan", {**params, "durations": "jitter:0.2"})
