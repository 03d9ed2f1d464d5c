"""The lesson pane's question, asked before a predict step's picture: the prompt, the student's
answer (a number, or one of the choices) and how sure they are; committing reveals the step.

The question and its grading are the core's (``explorer.quiz``); this box only collects the
answer. Nothing of the answer is on screen before the commit: the step's page is not shown yet
and its narration is hidden.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from explorer.quiz.answers import CONFIDENCES
from explorer.quiz.model import Question


class AskBox(QWidget):
    """One question at a time; ``on_commit(answer, confidence)`` when the student commits."""

    def __init__(
        self, on_commit: Callable[[str, str], None], parent: QWidget | None = None, *, two_rows: bool = False
    ) -> None:
        """``two_rows``: how sure and the Reveal button under the answer, for a page's narrower
        column (in one row at 200% text the answer field cut its own placeholder)."""
        super().__init__(parent)
        self._on_commit = on_commit
        self.prompt = QLabel()
        self.prompt.setWordWrap(True)
        self.answer = QLineEdit()
        self.answer.setPlaceholderText("your prediction")
        self.answer.returnPressed.connect(self.commit)
        self.choices = QComboBox()
        self.unit = QLabel()
        self.confidence = QComboBox()
        self.confidence.addItems([c for c in CONFIDENCES if c != "not said"])
        self.confidence.setToolTip("How sure are you? (kept with your answer)")
        self.reveal = QPushButton("Reveal")
        self.reveal.setToolTip("Commit your prediction and show the step (Enter)")
        self.reveal.clicked.connect(self.commit)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Predict:"))
        row.addWidget(self.answer, 1)
        row.addWidget(self.choices, 1)
        row.addWidget(self.unit)
        second = QHBoxLayout() if two_rows else row
        if two_rows:
            second.addWidget(QLabel("How sure:"))
        second.addWidget(self.confidence)
        second.addWidget(self.reveal)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.prompt)
        layout.addLayout(row)
        if two_rows:
            second.setContentsMargins(0, 0, 0, 0)
            second.addStretch(1)
            layout.addLayout(second)

    def ask(self, question: Question) -> None:
        self.prompt.setText(f"Before the picture: {question.prompt}")
        self.answer.clear()
        self.choices.clear()
        self.choices.addItems([c.replace("_", " ") for c in question.choices])
        self.answer.setVisible(not question.is_choice)
        self.choices.setVisible(question.is_choice)
        self.unit.setText("" if question.is_choice or question.unit.startswith("-") else question.unit)
        self._choices = question.choices
        self.show()

    def commit(self) -> None:
        if self.choices.isVisible():
            index = self.choices.currentIndex()
            given = self._choices[index] if 0 <= index < len(self._choices) else ""
        else:
            given = self.answer.text()
        if not given.strip():
            self.prompt.setFocus()
            self.answer.setPlaceholderText("type a number first")
            return
        self._on_commit(given, self.confidence.currentText())
