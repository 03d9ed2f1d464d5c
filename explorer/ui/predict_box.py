"""Predict mode's strip on a page: the question about the picture shown while its answer is
covered, then right or how far off and the rule beside the picture.

A thin view of ``explorer.quiz.page_predict.PagePredict``: the lesson player's ``AskBox`` collects
the answer and how sure the student is, the model grades and keeps it, and this strip shows what
the model says. ``cover(hidden)`` is the page's own: it hides the widgets that give the answer away
while ``hidden`` is true (and is called again with false on the reveal).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from explorer.quiz.page_predict import CONCEPT_WORDS, PagePredict
from explorer.ui.lessons.ask import AskBox

#: what the covered picture says in its place
COVER_TEXT = "Predict first: the picture and its numbers show once you commit your answer."


class PredictBox(QWidget):
    """The ask box while the answer is hidden; the verdict and the rule once it is revealed."""

    def __init__(
        self,
        model: PagePredict,
        cover: Callable[[bool], None],
        parent: QWidget | None = None,
        *,
        show_rule: bool = True,
    ) -> None:
        """``show_rule`` false: the page's own words, once revealed, already give the rule."""
        super().__init__(parent)
        self.model = model
        self._cover = cover
        self._show_rule = show_rule
        # which of the page's questions to ask, where it has more than one
        self.concept = QComboBox()
        self.concept.addItems([CONCEPT_WORDS.get(c, c.replace("_", " ")) for c in model.concepts])
        self.concept.setToolTip("Which number of the picture to predict")
        self.concept.currentIndexChanged.connect(
            lambda i: model.set_concept(model.concepts[i]) if 0 <= i < len(model.concepts) else None
        )
        self.concept_row = QWidget()
        row = QHBoxLayout(self.concept_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Predict the"))
        row.addWidget(self.concept)
        row.addStretch(1)
        self.ask = AskBox(self._commit, two_rows=True)
        self.ask.reveal.setToolTip("Commit your prediction and show the picture (Enter)")
        self.verdict = QLabel()
        self.verdict.setWordWrap(True)
        self.verdict.setStyleSheet("font-weight: 600;")
        self.rule = QLabel()
        self.rule.setWordWrap(True)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setProperty("role", "muted")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 4)
        for w in (self.concept_row, self.ask, self.verdict, self.rule, self.note):
            layout.addWidget(w)
        # only once it is in this box: shown while it had no parent, it was a window of its own
        # and took the focus and the keys from the real one
        self.concept_row.setVisible(len(model.concepts) > 1)
        self._asked_id = ""
        model.asked.connect(self.follow)
        model.revealed.connect(self.follow)
        # the page's widgets may not be in a window yet: covering or uncovering them now would
        # show each as a window of its own (and take the focus from the real one); the page covers
        # them itself once it has drawn its picture
        self.follow(cover=False)

    def _commit(self, given: str, confidence: str) -> None:
        self.model.commit(given, confidence)

    def follow(self, cover: bool = True) -> None:
        """Show what the model says now, and cover or uncover the page's answer."""
        m = self.model
        hidden = m.hidden
        if hidden and m.question is not None and m.question.id != self._asked_id:
            self.ask.ask(m.question)  # a new picture: a fresh box (the same one keeps what is typed)
        self._asked_id = m.question.id if hidden and m.question is not None else ""
        self.ask.setVisible(hidden)
        self.verdict.setText(m.verdict())
        self.verdict.setProperty("role", "present" if m.grade is None or m.grade.right else "error")
        self.verdict.style().polish(self.verdict)
        self.verdict.setVisible(m.answered)
        self.rule.setText(m.explanation())
        self.rule.setVisible(m.answered and self._show_rule)
        self.note.setText(m.note())
        self.note.setVisible(bool(m.note()))
        self.setVisible(m.on)
        if cover:
            self._cover(hidden)


def cover_label(text: str = COVER_TEXT) -> QLabel:
    """What stands where the picture was while its answer is hidden: as much room, saying why."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setProperty("role", "warning")
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
    label.hide()
    return label


def predict_button(tip: str) -> QToolButton:
    """The page's Predict toggle; its words say whether it is on (a pressed tool button looks
    much like a raised one in the app's style)."""
    button = QToolButton()
    button.setCheckable(True)
    button.setToolTip(tip)
    button.toggled.connect(lambda on: button.setText("Predict: on" if on else "Predict: off"))
    button.setText("Predict: off")
    return button
