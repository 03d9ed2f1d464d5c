"""Practice questions in a dialog: a thin view over ``explorer.quiz.practice.Practice``, reusing the
lesson player's AskBox for the answer and the confidence."""

from __future__ import annotations

import random
import shlex

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from explorer.errors import UserError
from explorer.quiz.answers import CONFIDENCES
from explorer.quiz.practice import Practice
from explorer.quiz.topics import TOPICS
from explorer.ui.lessons.ask import AskBox

SHOWN_CONFIDENCES = tuple(c for c in CONFIDENCES if c != "not said")


class PracticeDialog(QDialog):
    """Topic, question, answer with confidence, the reveal, next; the score per concept below."""

    def __init__(self, parent: QWidget | None = None, seed: int | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Practice")
        self._seed = random.randrange(10**6) if seed is None else seed
        self.topic = QComboBox()
        self.topic.addItem("all topics", "all")
        for name, t in TOPICS.items():
            self.topic.addItem(t.title, name)
        self.topic.currentIndexChanged.connect(self._start)
        self.ask = AskBox(self._commit)
        self.reveal = QLabel()
        self.reveal.setWordWrap(True)
        self.next_button = QPushButton("Next question")
        self.next_button.clicked.connect(self.next_question)
        self.score = QTableWidget(0, 3 + len(SHOWN_CONFIDENCES))
        self.score.setHorizontalHeaderLabels(["concept", "asked", "right", *SHOWN_CONFIDENCES])
        self.score.verticalHeader().hide()
        top = QHBoxLayout()
        top.addWidget(QLabel("Topic:"))
        top.addWidget(self.topic, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.ask)
        layout.addWidget(self.reveal)
        layout.addWidget(self.next_button)
        note = QLabel("Score per concept; under each confidence: right/asked when you said so.")
        note.setWordWrap(True)
        layout.addWidget(note)
        layout.addWidget(self.score, 1)
        self.practice: Practice
        self._start()

    def _start(self) -> None:
        name = self.topic.currentData()
        topics = tuple(TOPICS) if name == "all" else (name,)
        self.practice = Practice(topics, self._seed)
        self._show_question()
        self._show_score()

    def _show_question(self) -> None:
        q = self.practice.current
        assert q is not None
        self.ask.ask(q)
        self.ask.prompt.setText(q.prompt)
        self.ask.reveal.setEnabled(True)
        self.reveal.setText("")
        self.next_button.setEnabled(False)

    def _commit(self, given: str, confidence: str) -> None:
        try:
            g = self.practice.commit(given, confidence)
        except UserError as exc:
            self.reveal.setText(str(exc))
            return
        q = self.practice.current
        assert q is not None
        head = "Right." if g.right else f"Not quite ({g.said})."
        self.reveal.setText(f"{head} {q.explanation}\nCheck it: {shlex.join(q.command)} (key {q.answer_key})")
        self.ask.reveal.setEnabled(False)
        self.next_button.setEnabled(True)
        self._show_score()

    def next_question(self) -> None:
        self.practice.next()
        self._show_question()

    def _show_score(self) -> None:
        scores = sorted(self.practice.scores.items())
        self.score.setRowCount(len(scores))
        for row, (key, s) in enumerate(scores):
            cells = [key, str(s.asked), str(s.right)]
            cells += [f"{s.right_by[c]}/{s.asked_by[c]}" for c in SHOWN_CONFIDENCES]
            for col, text in enumerate(cells):
                self.score.setItem(row, col, QTableWidgetItem(text))
        self.score.resizeColumnsToContents()
