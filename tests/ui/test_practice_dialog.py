"""The practice dialog: committing an answer changes the score shown, a miss brings the variant."""

from __future__ import annotations

import pytest

from explorer.quiz.model import parse_id
from explorer.ui.quiz.practice_dialog import PracticeDialog


@pytest.fixture
def dialog(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    d = PracticeDialog(seed=11)
    qtbot.addWidget(d)
    d.show()
    qtbot.waitExposed(d)
    return d


def _answer(d: PracticeDialog, text: str) -> None:
    q = d.practice.current
    assert q is not None
    if q.is_choice:
        d.ask.choices.setCurrentIndex(q.choices.index(text) if text in q.choices else 0)
    else:
        d.ask.answer.setText(text)
    d.ask.commit()


def test_a_commit_shows_the_reveal_and_the_score(dialog):
    d = dialog
    d.topic.setCurrentIndex(d.topic.findData("occupancy"))
    q = d.practice.current
    assert q is not None and q.topic == "occupancy"
    _answer(d, q.answer if isinstance(q.answer, str) else f"{q.answer:g}")
    assert d.reveal.text().startswith("Right.")
    assert " ".join(q.command) in d.reveal.text()
    assert d.score.rowCount() == 1
    assert (d.score.item(0, 1).text(), d.score.item(0, 2).text()) == ("1", "1")
    assert d.next_button.isEnabled() and not d.ask.reveal.isEnabled()
    d.next_question()
    missed = d.practice.current
    assert missed is not None
    wrong = "-12345" if not missed.is_choice else next(c for c in missed.choices if c != missed.answer)
    _answer(d, wrong)
    assert d.reveal.text().startswith("Not quite")
    asked = sum(int(d.score.item(r, 1).text()) for r in range(d.score.rowCount()))
    right = sum(int(d.score.item(r, 2).text()) for r in range(d.score.rowCount()))
    assert (asked, right) == (2, 1)
    d.next_question()
    follow = d.practice.current
    assert follow is not None and parse_id(follow.id)[:2] == parse_id(missed.id)[:2]


def test_the_lessons_menu_opens_practice(qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMenuBar

    from explorer.ui.menus import add_quiz_items

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    bar = QMenuBar()
    qtbot.addWidget(bar)
    menu = bar.addMenu("&Lessons")
    add_quiz_items(bar, menu)  # any widget parents the actions
    (practice,) = [a for a in menu.actions() if a.text() == "&Practice…"]
    assert [a.text() for a in menu.actions() if a.text() == "&Gather class answers…"]
    practice.trigger()
    qtbot.waitUntil(lambda: bar.findChild(PracticeDialog) is not None, timeout=10_000)
    dialog = bar.findChild(PracticeDialog)
    assert dialog.practice.current is not None
    dialog.close()
