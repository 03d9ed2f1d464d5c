"""Which visible text of a window does not show in full: the layout test's eyes.

Walks every visible label, button, line edit (spin boxes included: they hold one), combo box and
tab of a widget tree and asks Qt how much room its text needs against the room it got, and checks
that the widgets a layout places neither overlap their siblings nor stick out of their parent.
A label a page elides on purpose carries the ``elideAllowed`` property and is not reported (one
drawn cut on one line, an ``ElidedLine``, only when its whole text is not on hover); a
caption that gives way on a short screen (``FoldingCaption``) is reported only if, cut short, it
does not carry its whole text on hover.

A widget inside a scroll area may be as wide as its texts need and still be cut off by the
area's viewport (the Benchmarks settings column was, on its right edge): every scroll area whose
content is wider than its viewport, or is scrolled sideways, is reported too. Vertical scrolling
is allowed (a tall column scrolls); an area meant to scroll sideways (a wide table) carries the
``scrollAllowed`` property.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRect
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QCheckBox,
    QComboBox,
    QLabel,
    QLayout,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QStyle,
    QStyleOptionButton,
    QStyleOptionComboBox,
    QStyleOptionFrame,
    QTabBar,
    QWidget,
)

ELIDE_ALLOWED = "elideAllowed"
SCROLL_ALLOWED = "scrollAllowed"
MUST_FIT = "mustFit"
#: a pixel of rounding either way is not clipping
SLACK = 1


@dataclass(frozen=True)
class Problem:
    where: str  # the widget's class and object names up to the window
    text: str
    why: str

    def __str__(self) -> str:
        return f"{self.where}: {self.text[:60]!r}: {self.why}"


def _name(w: QWidget) -> str:
    parts = []
    while w is not None:
        parts.append(w.objectName() or type(w).__name__)
        w = w.parentWidget()
    return "/".join(reversed(parts[:4]))


def _plain(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def _label_problem(label: QLabel) -> str | None:
    if not label.text() or label.pixmap() is not None and not label.pixmap().isNull():
        return None
    if hasattr(label, "is_cut"):  # a FoldingCaption: gives way on a short screen, whole on hover
        if label.is_cut() and not label.toolTip().startswith(label.text()):
            return "cut short, and its whole text is not on hover"
        return None
    if label.property(ELIDE_ALLOWED) and label.sizeHint().width() > label.width() + SLACK:
        # a line that ends in "…" where it is short, by design: its whole text must be on hover
        return (
            None
            if label.toolTip().startswith(_plain(label.text()))
            else "elided, and its whole text is not on hover"
        )
    if label.text().rstrip().endswith("…") and not label.property(ELIDE_ALLOWED):
        return "elided"
    if label.property(ELIDE_ALLOWED) and not label.wordWrap():
        # one line cut with "…" on purpose (``ElidedLine``): fine when the whole text is on hover
        return (
            None
            if label.toolTip().startswith(label.text())
            else "cut short, and its whole text is not on hover"
        )
    if label.wordWrap():
        need = label.heightForWidth(label.width())
        if need > label.height() + SLACK:
            return f"wrapped text needs {need} px of height, has {label.height()}"
        return None
    hint = label.sizeHint()
    if hint.width() > label.width() + SLACK:
        return f"needs {hint.width()} px of width, has {label.width()}"
    if hint.height() > label.height() + SLACK:
        return f"needs {hint.height()} px of height, has {label.height()}"
    return None


def _button_problem(button: QAbstractButton) -> str | None:
    text = _plain(button.text())
    if not text:
        return None
    fm = button.fontMetrics()
    need = fm.horizontalAdvance(text)
    if not button.icon().isNull():
        need += button.iconSize().width() + 4
    elements = (
        (QCheckBox, QStyle.SubElement.SE_CheckBoxContents),
        (QRadioButton, QStyle.SubElement.SE_RadioButtonContents),
        (QPushButton, QStyle.SubElement.SE_PushButtonContents),
    )
    element = next((el for cls, el in elements if isinstance(button, cls)), None)
    if element is None:  # a tool button: its text sits inside a 3 px frame
        room = button.width() - 6
    else:
        opt = QStyleOptionButton()
        button.initStyleOption(opt)  # type: ignore[attr-defined]
        room = button.style().subElementRect(element, opt, button).width()
    if need > room + SLACK:
        return f"text needs {need} px, the button shows {room}"
    if fm.height() > button.height() + SLACK:
        return f"text needs {fm.height()} px of height, the button has {button.height()}"
    return None


def _line_edit_problem(edit: QLineEdit) -> str | None:
    text = edit.displayText() or edit.placeholderText()
    if not text or edit.property(ELIDE_ALLOWED):
        return None
    opt = QStyleOptionFrame()
    edit.initStyleOption(opt)  # type: ignore[attr-defined]
    room = edit.style().subElementRect(QStyle.SubElement.SE_LineEditContents, opt, edit)
    margins = edit.textMargins()
    width = room.width() - margins.left() - margins.right() - 4  # QLineEdit's own 2 px each side
    need = edit.fontMetrics().horizontalAdvance(text)
    if need > width + SLACK:
        return f"text needs {need} px, the field shows {width}"
    if edit.fontMetrics().height() > room.height() + SLACK:
        return f"text needs {edit.fontMetrics().height()} px of height, the field has {room.height()}"
    return None


def _combo_problem(combo: QComboBox) -> str | None:
    text = combo.currentText()
    if not text or combo.isEditable():
        return None  # an editable combo's text is its line edit's, checked as one
    if combo.property(ELIDE_ALLOWED):  # a narrow menu ends its entry in "…": whole on hover
        shown = combo.shown_text() if hasattr(combo, "shown_text") else text
        if shown != text and not combo.toolTip().startswith(text):
            return "cut short, and its whole text is not on hover"
        if shown == text or shown.endswith("…"):
            return None
    opt = QStyleOptionComboBox()
    combo.initStyleOption(opt)  # type: ignore[attr-defined]
    field = combo.style().subControlRect(
        QStyle.ComplexControl.CC_ComboBox, opt, QStyle.SubControl.SC_ComboBoxEditField, combo
    )
    need = combo.fontMetrics().horizontalAdvance(text)
    if not combo.itemIcon(combo.currentIndex()).isNull():
        need += combo.iconSize().width() + 4
    if need > field.width() - 2 + SLACK:
        return f"text needs {need} px, the box shows {field.width() - 2}"
    return None


def _tab_problems(bar: QTabBar) -> list[tuple[str, str]]:
    found = []
    for i in range(bar.count()):
        if not bar.isTabVisible(i):
            continue
        rect, hint = bar.tabRect(i), bar.tabSizeHint(i)
        if rect.width() + SLACK < hint.width():
            found.append((bar.tabText(i), f"tab needs {hint.width()} px, has {rect.width()}"))
        elif not bar.rect().contains(rect):
            found.append((bar.tabText(i), "tab is scrolled out of the bar"))
    return found


def _scroll_problem(area: QAbstractScrollArea) -> str | None:
    """Content cut off sideways by the area's viewport: wider than it, or scrolled. An area meant
    to scroll sideways may, where its scroll bar shows (what it hides can be reached). A page's
    area (``mustFit``) is a safety net: a page that scrolls there did not fit the window."""
    if area.property(MUST_FIT) and area.verticalScrollBar().maximum() > 0:
        page = area.widget()
        return (
            f"the page needs {page.minimumSizeHint().height()} px of height, the window gives it "
            f"{area.viewport().height()}: it scrolls"
        )
    if area.property(SCROLL_ALLOWED):
        bar = area.horizontalScrollBar()
        if bar.maximum() > 0 and not bar.isVisible():
            return (
                f"its content is {bar.maximum()} px wider than the viewport, with no scroll bar to reach it"
            )
        return None
    bar = area.horizontalScrollBar()
    if bar.value() > 0:
        return f"its content is scrolled {bar.value()} px sideways"  # (or items, in an item view)
    view = area.viewport().width()
    content = area.widget() if isinstance(area, QScrollArea) else None
    if content is not None and content.isVisibleTo(area) and content.width() > view + SLACK:
        return f"its content is {content.width()} px wide, the viewport shows {view}"
    if bar.maximum() > 0:  # pixels, or whole columns where an item view scrolls per item
        return f"its content is wider than the viewport ({view} px): it scrolls sideways by {bar.maximum()}"
    return None


def _managed(layout: QLayout) -> list[QWidget]:
    """The widgets a layout places, through its nested layouts."""
    out = []
    for i in range(layout.count()):
        item = layout.itemAt(i)
        sub = item.layout()
        if item.widget() is not None:
            out.append(item.widget())
        elif isinstance(sub, QLayout):
            out.extend(_managed(sub))
    return out


def _layout_problems(parent: QWidget, window: QWidget) -> list[Problem]:
    layout = parent.layout()
    if layout is None:
        return []
    children = [w for w in _managed(layout) if w.isVisibleTo(window) and not w.isWindow()]
    found = []
    bounds = parent.rect()
    for i, a in enumerate(children):
        ga = a.geometry()
        if not bounds.contains(ga) and not ga.intersected(bounds).isEmpty():
            found.append(Problem(_name(a), "", f"sticks out of its parent ({_rect(ga)} in {_rect(bounds)})"))
        for b in children[i + 1 :]:
            overlap = ga.intersected(b.geometry())
            if overlap.width() > SLACK and overlap.height() > SLACK:
                found.append(Problem(_name(a), "", f"overlaps {_name(b)} by {_rect(overlap)}"))
    return found


def _rect(r: QRect) -> str:
    return f"{r.width()}x{r.height()}+{r.x()}+{r.y()}"


def clipped(window: QWidget) -> list[Problem]:
    """Every visible text that does not fit, and every placed widget that overlaps or sticks out."""
    found: list[Problem] = []
    for w in [window, *window.findChildren(QWidget)]:
        if not w.isVisibleTo(window) and w is not window:
            continue
        found.extend(_layout_problems(w, window))
        why: str | None = None
        text = ""
        if isinstance(w, QLabel):
            why, text = _label_problem(w), w.text()
        elif isinstance(w, QAbstractButton):
            why, text = _button_problem(w), w.text()
        elif isinstance(w, QLineEdit):
            why, text = _line_edit_problem(w), w.displayText() or w.placeholderText()
        elif isinstance(w, QComboBox):
            why, text = _combo_problem(w), w.currentText()
        elif isinstance(w, QTabBar):
            found.extend(Problem(_name(w), t, reason) for t, reason in _tab_problems(w))
        elif isinstance(w, QAbstractScrollArea):
            why = _scroll_problem(w)
        if why:
            found.append(Problem(_name(w), text, why))
    return found
