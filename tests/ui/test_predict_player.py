"""Predict mode in the lesson player: a step with a question asks it before its picture, nothing
of the answer is on screen until the student commits, and the commit reveals the step, grades the
prediction and keeps it in the student's answers file."""

from __future__ import annotations

import csv

import pytest
from PySide6.QtWidgets import QLabel, QWidget

from explorer.lessons.builtin import builtin_paths
from explorer.quiz.answers import answers_path
from explorer.ui.settle import settle


@pytest.fixture
def window(catalog_window):
    return catalog_window


def _settle() -> None:
    settle()


def _visible_texts(root: QWidget) -> str:
    labels = [lb.text() for lb in root.findChildren(QLabel) if lb.isVisible()]
    return "\n".join(labels)


def test_a_predict_step_asks_first_and_reveals_on_commit(window):
    player = window.lessons
    waves = next(p for p in builtin_paths() if p.stem.startswith("02"))
    player.open_path(waves, step=0)
    _settle()
    assert not player.ask_box.isVisible()  # Predict mode off: the step shows at once
    player.close_lesson()
    window.show_panel("devices")

    player.toggle_ask_first()
    assert player.ask_action.isChecked()
    player.open_path(waves, step=1)  # the H100 step: 98 blocks in 1 wave
    _settle()
    assert player.ask_box.isVisible() and not player.narration.isVisible()
    assert "H100" in player.ask_box.prompt.text() and "waves" in player.ask_box.prompt.text()
    assert window.current_panel_key() == "devices"  # the step's page is not shown yet
    assert "1 wave" not in _visible_texts(window)

    player.ask_box.answer.setText("2")
    player.ask_box.confidence.setCurrentText("guess")
    player.ask_box.commit()
    _settle()
    assert not player.ask_box.isVisible() and player.narration.isVisible()
    assert "Not right (guess): off by +1: the answer is 1 waves" in player.note
    vis = window.show_panel("visualizer")
    assert vis.session.edited_side.plan is not None and vis.session.edited_side.plan.waves == 1

    with open(answers_path(), newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    assert (row["lesson"], row["step"], row["answer"], row["confidence"], row["right"]) == (
        "02-waves-and-tail",
        "2",
        "2",
        "guess",
        "0",
    )

    player.previous()
    _settle()
    assert player.ask_box.isVisible()  # step 1 asks its own question
    player.next()
    _settle()
    assert not player.ask_box.isVisible()  # step 2 was answered: it shows at once, with the grade
    assert "Not right" in player.note


def test_closing_a_lesson_takes_its_recorded_curves_away(window):
    player = window.lessons
    player.open_path(next(p for p in builtin_paths() if p.stem.startswith("05")), step=1)
    _settle()
    bench = window.show_panel("benchmarks")
    assert bench.plot.recorded_items()  # the step's recorded H100 run, drawn
    player.close_lesson()
    _settle()
    assert not bench.plot.recorded_items()
