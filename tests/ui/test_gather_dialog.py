"""The gather dialog shows what the students' files hold, and names the files it left out."""

from __future__ import annotations

import os
import random
from collections import Counter

import pytest

from explorer.quiz import answers
from explorer.quiz.answers import CONFIDENCES
from explorer.quiz.topics import questions
from explorer.ui.quiz.gather_dialog import GatherDialog
from tests.answer_files import answers_file

QUESTIONS = questions("all", 8, seed=5)


def _cell_counts(text: str) -> Counter[str]:
    out: Counter[str] = Counter()
    for part in filter(None, text.split(", ")):
        name, n = part.rsplit(" (", 1)
        out[name] = int(n.rstrip(")"))
    return out


def test_eighty_students_are_shown_as_their_files_hold_them(qtbot, tmp_path):
    rng = random.Random(9)
    folder = tmp_path / "class"
    folder.mkdir()
    want = {q.id: (Counter(), Counter(), 0) for q in QUESTIONS}
    for s in range(80):
        rows = []
        for q in QUESTIONS:
            options = list(q.choices) if q.choices else ["1", "2", "4", str(q.answer)]
            given, sure = rng.choice(options), rng.choice(CONFIDENCES)
            ok = given == str(q.answer)
            rows.append([f"s{s}", "practice", "", q.id, given, sure, "1" if ok else "0", "t"])
            a, c, r = want[q.id]
            a[answers._number_key(given)] += 1
            c[sure] += 1
            want[q.id] = (a, c, r + ok)
        (folder / f"student{s:02}.csv").write_text(answers_file(rows), encoding="utf-8")
    (folder / "zz-binary.csv").write_bytes(b"\xff\xfe" + os.urandom(64))
    (folder / "zz-huge.csv").write_bytes(b"a" * (answers.MAX_FILE_BYTES + 1))
    (folder / "zz-header.csv").write_text("name,score\nbob,10\n")
    (folder / "zz-planted-id.csv").write_text(
        answers_file([["x", "", "", "../../etc", "1", "sure", "1", "t"]])
    )

    d = GatherDialog()
    qtbot.addWidget(d)
    d.load(str(folder))

    assert d.status.text().startswith("80 students' files read, 4 left out")
    shown = [d.skipped.item(i).text() for i in range(d.skipped.count())]
    assert len(shown) == 4 and all(line.startswith("zz-") and "\n" not in line for line in shown)
    assert d.table.rowCount() == len(QUESTIONS)
    for row in range(d.table.rowCount()):
        qid = d.table.item(row, 0).text()
        a, c, r = want[qid]
        assert d.table.item(row, 1).text() == "80"
        assert d.table.item(row, 2).text() == str(r)
        assert d.table.item(row, 3).text() == f"{100 * r / 80:.0f}%"
        assert _cell_counts(d.table.item(row, 4).text()) == a
        assert _cell_counts(d.table.item(row, 5).text()) == c
        d.table.selectRow(row)  # the picked question's answers, drawn as bars
        assert Counter(dict(d.bars())) == a and sum(n for _a, n in d.bars()) == 80


def test_a_folder_that_is_not_there_is_one_line(qtbot, tmp_path):
    d = GatherDialog()
    qtbot.addWidget(d)
    d.load(str(tmp_path / "nope"))
    assert "no folder" in d.status.text() and "\n" not in d.status.text()
    assert d.table.rowCount() == 0


@pytest.mark.parametrize(("size", "scale"), [((1024, 768), 100), ((1280, 800), 200)])
def test_both_dialogs_fit_a_projector_and_large_text(qtbot, tmp_path, monkeypatch, size, scale):
    from PySide6.QtWidgets import QApplication

    from explorer.ui.quiz.practice_dialog import PracticeDialog
    from explorer.ui.theme import set_text_scale, text_scale_pct
    from tests.ui.layout_check import clipped

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    folder = tmp_path / "class"
    folder.mkdir()
    rows = [["s", "", "", q.id, str(q.answer), "think so", "1", "t"] for q in QUESTIONS]
    for s in range(5):
        (folder / f"s{s}.csv").write_text(answers_file(rows), encoding="utf-8")
    (folder / "zz-header.csv").write_text("name,score\nbob,10\n")
    before = text_scale_pct()
    try:
        set_text_scale(QApplication.instance(), scale)
        practice, gathered = PracticeDialog(seed=4), GatherDialog()
        for d in (practice, gathered):
            qtbot.addWidget(d)
            d.resize(*size)
            d.show()
            qtbot.waitExposed(d)
        practice.ask.answer.setText("3")
        practice.ask.commit()
        gathered.load(str(folder))
        for d in (practice, gathered):
            qtbot.waitUntil(lambda d=d: not clipped(d), timeout=10_000)
    finally:  # the text size is the application's: the tests after this one run at their own
        set_text_scale(QApplication.instance(), before)
