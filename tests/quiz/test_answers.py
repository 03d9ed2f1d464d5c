"""A class's answers gathered from a folder of students' files: the histograms a teacher projects
are right, and a damaged or hostile file is skipped with one line, never half-counted."""

from __future__ import annotations

import io
import json
import os
import random
from collections import Counter

import pytest

from explorer.cli import main
from explorer.quiz import answers
from explorer.quiz.answers import CONFIDENCES, gather
from explorer.quiz.topics import make_question
from tests.answer_files import answers_file


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


QUESTIONS = [make_question("occupancy", "limiter", 1), make_question("banks", "conflict", 2)]


def test_eighty_students_give_the_right_histograms_and_damaged_files_are_named(tmp_path):
    rng = random.Random(4)
    folder = tmp_path / "class"
    folder.mkdir()
    expected = {q.id: (Counter(), Counter(), 0) for q in QUESTIONS}
    for s in range(80):
        rows = []
        for q in QUESTIONS:
            options = list(q.choices) if q.choices else ["1", "2", "4", str(q.answer)]
            first, last = rng.choice(options), rng.choice(options)
            sure = rng.choice(CONFIDENCES)
            rows.append([f"s{s}", "03", "2", q.id, first, "guess", "0", "t"])  # the first vote
            rows.append([f"s{s}", "03", "2", q.id, last, sure, "1" if last == str(q.answer) else "0", "t"])
            a, c, r = expected[q.id]
            a[last] += 1
            c[sure] += 1
            expected[q.id] = (a, c, r + (last == str(q.answer)))
        (folder / f"student{s:02}.csv").write_text(answers_file(rows), encoding="utf-8")
    # the damaged and the hostile, each one line and never counted
    (folder / "zz-truncated.csv").write_text(
        answers_file([["x", "", "", QUESTIONS[0].id, "3"]]), encoding="utf-8"
    )
    (folder / "zz-binary.csv").write_bytes(b"\xff\xfe" + os.urandom(64))
    (folder / "zz-huge.csv").write_bytes(b"a" * (answers.MAX_FILE_BYTES + 1))
    (folder / "zz-planted-id.csv").write_text(
        answers_file([["x", "", "", "../../etc", "1", "sure", "1", "t"]])
    )
    (folder / "zz-header.csv").write_text("name,score\nbob,10\n")
    (folder / "zz-link.csv").symlink_to(folder / "student00.csv")
    os.mkfifo(folder / "zz-fifo.csv")
    (folder / "notes.txt").write_text("not an answers file; not read")

    g = gather(folder)

    assert g.files == 80
    assert len(g.skipped) == 7 and all(line.startswith("zz-") for line in g.skipped)
    assert all("\n" not in line and ": skipped: " in line for line in g.skipped)
    for q in QUESTIONS:
        a, c, r = expected[q.id]
        tally = g.questions[q.id]
        want = Counter({answers._number_key(k): v for k, v in a.items()})
        assert tally.answers == want and tally.confidence == c and tally.right == r and tally.total == 80


def test_an_answer_is_kept_and_exported_and_the_cli_gathers_it(home, tmp_path, monkeypatch, capsys):
    q = make_question("tiling", "global_loads", 0)
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{q.answer}\n2\n"))
    assert main(["quiz", "--topic", "tiling", "--count", "1", "--seed", "0"]) == 0
    class_folder = tmp_path / "class"
    assert main(["quiz", "--export", str(class_folder / "me.csv")]) == 2  # the folder must exist
    class_folder.mkdir()
    assert main(["quiz", "--export", str(class_folder / "me.csv")]) == 0
    capsys.readouterr()
    assert main(["quiz", "--gather", str(class_folder), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["files"] == 1 and data["skipped"] == []
    (tally,) = data["questions"]
    assert tally["question_id"] == q.id and tally["right"] == 1 and tally["confidence"] == {"think so": 1}


def test_gathering_a_folder_that_is_not_there_is_one_line(tmp_path, capsys):
    assert main(["quiz", "--gather", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no folder" in err[0]
