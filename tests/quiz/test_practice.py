"""The practice session, without Qt: the score is what was recorded, a miss brings the variant."""

from __future__ import annotations

import csv
import random
from collections import Counter

import pytest

from explorer.errors import UserError
from explorer.quiz import answers
from explorer.quiz.model import parse_id
from explorer.quiz.practice import LESSON, Practice
from explorer.quiz.topics import TOPICS


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _right_answer(p: Practice) -> str:
    q = p.current
    assert q is not None
    return q.answer if isinstance(q.answer, str) else f"{q.answer:g}"


def test_a_right_answer_scores_and_a_miss_brings_the_variant(home):
    p = Practice(("occupancy",), seed=3)
    q = p.current
    assert q is not None and q.topic == "occupancy"
    g = p.commit(_right_answer(p), "sure")
    assert g.right
    key = f"{q.topic}.{q.concept}"
    assert (p.scores[key].asked, p.scores[key].right, p.scores[key].right_by["sure"]) == (1, 1, 1)
    with pytest.raises(UserError):
        p.commit("1", "sure")  # once per question
    missed = p.next()
    g = p.commit("not an answer", "guess")
    assert not g.right
    follow = p.next()
    assert parse_id(follow.id)[:2] == parse_id(missed.id)[:2]
    assert follow.params != missed.params  # the same idea, other numbers


def test_bad_topics_are_one_line(home):
    with pytest.raises(UserError, match="no quiz topic"):
        Practice(("nope",), seed=0)
    with pytest.raises(UserError, match="at least one topic"):
        Practice((), seed=0)


def test_the_score_is_a_recount_of_the_recorded_answers(home):
    rng = random.Random(7)
    names = list(TOPICS)
    for _session in range(40):
        chosen = tuple(rng.sample(names, rng.randint(1, 3)))
        p = Practice(chosen, seed=rng.randint(0, 10**6))
        for _ in range(rng.randint(1, 6)):
            assert p.current is not None and p.current.topic in chosen
            conf = rng.choice(answers.CONFIDENCES[:3] + ("whatever",))
            given = _right_answer(p) if rng.random() < 0.5 else rng.choice(["", "0", "x", "-1"])
            p.commit(given, conf)
            p.next()
        with (home / answers.ANSWERS_FILE).open(newline="", encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(f) if r["lesson"] == LESSON]
        # this session's rows are the last ones
        total = sum(s.asked for s in p.scores.values())
        mine = rows[-total:]
        asked: Counter[tuple[str, str]] = Counter()
        right: Counter[tuple[str, str]] = Counter()
        for r in mine:
            topic, concept, _ = parse_id(r["question_id"])
            asked[(f"{topic}.{concept}", r["confidence"])] += 1
            right[(f"{topic}.{concept}", r["confidence"])] += r["right"] == "1"
        for key, s in p.scores.items():
            for conf in answers.CONFIDENCES:
                assert s.asked_by[conf] == asked[(key, conf)]
                assert s.right_by[conf] == right[(key, conf)]
            assert s.asked == sum(asked[(key, c)] for c in answers.CONFIDENCES)
            assert s.right == sum(right[(key, c)] for c in answers.CONFIDENCES)
        assert p.totals() == (len(mine), sum(r["right"] == "1" for r in mine))
