"""Small widgets the panels share: a warning banner and a group of "label: value" rows.

A value the core could not read is shown as "n/a" with the core's reason on hover, so one
missing sensor never hides the rest of a device and the student can find out why.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.ui.formatting import NA

#: tooltip for a missing value whose probe gave no reason
NO_REASON = "No probe reported this value for this device."


def set_role(widget: QWidget, role: str) -> None:
    """Give a widget a stylesheet role (see theme.py) and make Qt re-read the style."""
    widget.setProperty("role", role)
    widget.style().unpolish(widget)
    widget.style().polish(widget)


#: the folded banner's button, and the same button while the details show
SHOW_DETAILS = "Details ▾"
HIDE_DETAILS = "Hide details ▴"


class Banner(QFrame):
    """A framed notice in the warm banner colour: a bold title and a paragraph.

    A banner that stays up while the user works (the Devices page's "Why no GPU is listed")
    folds to one line: ``make_foldable`` puts the title, a short summary and a "Details" button
    on one row and hides the paragraph until asked, so at a projector's text size it does not
    take half the page.
    """

    def __init__(self, title: str = "", body: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 10, 14, 10)
        layout.setSpacing(4)
        self.title_label = QLabel(title)
        self.title_label.setObjectName("bannerTitle")  # bold, a notch larger: the theme's stylesheet
        self.body_label = QLabel(body)
        self.body_label.setWordWrap(True)
        self.body_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.title_label)
        layout.addWidget(self.body_label)

    def set_text(self, title: str, body: str) -> None:
        self.title_label.setText(title)
        self.body_label.setText(body)

    def make_foldable(self, summary: str = "") -> None:
        """One row: title, ``summary`` (wraps if it must) and a Details button; the paragraph
        shows only while the button is down."""
        column = self.layout()
        column.removeWidget(self.title_label)
        self.summary_label = QLabel(summary)
        self.summary_label.setWordWrap(True)
        self.details_button = QToolButton(text=SHOW_DETAILS, checkable=True)
        self.details_button.setToolTip("Show or hide the probes' own explanation")
        self.details_button.toggled.connect(self.show_details)
        row = QHBoxLayout()
        row.setSpacing(12)
        row.addWidget(self.title_label, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.summary_label, 1, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignTop)
        column.insertLayout(0, row)
        self.body_label.hide()

    def show_details(self, shown: bool) -> None:
        """Unfold (``True``) or fold the paragraph of a foldable banner."""
        self.body_label.setVisible(shown)
        if self.details_button.isChecked() != shown:
            self.details_button.setChecked(shown)
        self.details_button.setText(HIDE_DETAILS if shown else SHOW_DETAILS)


class FieldGroup(QGroupBox):
    """A titled group of rows; ``add`` shows "n/a" plus the reason when the value is missing."""

    def __init__(self, title: str, parent: QWidget | None = None, *, plain: bool = False) -> None:
        super().__init__(title, parent)
        if plain:  # rows only, no frame: for a group nested in another
            self.setObjectName("plainGroup")
        self.form = QFormLayout(self)
        self.form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.form.setHorizontalSpacing(18)
        self.form.setVerticalSpacing(6)
        self.values: dict[str, QLabel] = {}

    def add(
        self, label: str, value: str | None, reason: str | None = None, *, key: str | None = None
    ) -> QLabel:
        """Add one row. ``value`` is already formatted; ``None`` or "n/a" means the core has no value."""
        name = QLabel(label)
        shown = QLabel()
        shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        set_value(shown, value, reason)
        self.form.addRow(name, shown)
        self.values[key or label] = shown
        return shown

    def clear(self) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.values.clear()


#: values longer than this wrap; shorter ones stay on one line so columns stay readable
WRAP_AFTER_CHARS = 24


def set_value(label: QLabel, value: str | None, reason: str | None = None) -> None:
    label.setWordWrap(value is not None and len(value) > WRAP_AFTER_CHARS)
    if value is None or value == NA:
        label.setText(NA)
        label.setToolTip(reason or NO_REASON)
        set_role(label, "na")
    else:
        label.setText(value)
        label.setToolTip(reason or "")
        set_role(label, "")
