"""A class's answers in a dialog: pick the folder of the students' files, see per question the
answers' and the confidences' histograms and the share right, and which files were left out and
why. A damaged or hostile file is one line in the skipped list, never an error box."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from explorer.errors import UserError
from explorer.quiz.answers import CONFIDENCES, Gathered, gather

COLUMNS = ("question", "students", "right", "share right", "answers", "confidence")  # each "x (count)"


class GatherDialog(QDialog):
    """The gathered answers as a table, one row per question; the skipped files listed below."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Gather class answers")
        self.folder = QLineEdit()
        self.folder.setPlaceholderText("a folder of students' quiz-answers .csv files")
        self.folder.returnPressed.connect(lambda: self.load(self.folder.text()))
        choose = QPushButton("Choose folder…")
        choose.clicked.connect(self.choose)
        self.status = QLabel("No folder read yet.")
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setWordWrap(True)
        for col in (4, 5):  # the histograms take what room is left and wrap within it
            self.table.horizontalHeader().setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch)
        # the rows' heights follow the wrapped histograms once the columns have their widths
        self.table.horizontalHeader().sectionResized.connect(lambda *_: self.table.resizeRowsToContents())
        self.skipped = QListWidget()
        self.skipped.setWordWrap(True)  # a reason is read whole, not scrolled to
        self.skipped.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.gathered: Gathered | None = None
        top = QHBoxLayout()
        top.addWidget(self.folder, 1)
        top.addWidget(choose)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 3)
        layout.addWidget(QLabel("Files left out:"))
        layout.addWidget(self.skipped, 1)

    def choose(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Folder of students' answers files")
        if path:
            self.load(path)

    def load(self, path: str) -> None:
        """Read ``path`` and show it; a folder that cannot be read is one line in the status."""
        self.folder.setText(path)
        try:
            g = gather(path)
        except UserError as exc:
            self._show(None, str(exc))
            return
        except OSError as exc:  # a folder we may not list: one line, the app goes on
            self._show(None, f"cannot read {path[:200]!r}: {exc.strerror or exc}")
            return
        self._show(
            g, f"{g.files} students' files read, {len(g.skipped)} left out, {len(g.questions)} questions."
        )

    def _show(self, g: Gathered | None, status: str) -> None:
        self.gathered = g
        self.status.setText(status)
        tallies = list(g.questions.values()) if g is not None else []
        self.table.setRowCount(len(tallies))
        for row, t in enumerate(tallies):
            cells = [
                t.question_id,
                str(t.total),
                str(t.right),
                f"{100 * t.share_right:.0f}%",
                ", ".join(f"{a} ({n})" for a, n in t.answers.most_common()),
                ", ".join(f"{c} ({t.confidence[c]})" for c in CONFIDENCES if t.confidence[c]),
            ]
            for col, text in enumerate(cells):
                self.table.setItem(row, col, QTableWidgetItem(text))
        for col in range(4):
            self.table.resizeColumnToContents(col)
        self.table.resizeRowsToContents()
        self.skipped.clear()
        self.skipped.addItems(g.skipped if g is not None else [])
