"""A lesson as a printable handout: a PDF with a page (or more) per step, each with the step's
page as the lesson player shows it, painted at print resolution, and under it the step's title,
narration and the numbers its page computes (``explorer.lessons.handout``).

The pictures come from the player itself: each step is shown as Page Down would show it, and the
page is painted into an image at ``FIGURE_DPR`` times its pixels, so the handout's figure is the
one ``screenshot --lesson L --step N`` gives, only sharper. The window is the one the teacher
has (File > Export handout…), or one made offscreen for ``lessons --handout``
(``explorer.ui.offscreen``); it is given back as it was: the lesson and step it showed, the page,
the narration folded or not and the theme (the figures are painted in the light theme, for paper).

The PDF is made in memory with Qt's ``QPdfWriter`` and written in one step by
``explorer.outputs`` (never half a file where a good one was).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QBuffer,
    QByteArray,
    QIODevice,
    QLocale,
    QMarginsF,
    QPointF,
    QRectF,
    QSizeF,
    Qt,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QFont,
    QImage,
    QPageLayout,
    QPageSize,
    QPainter,
    QPalette,
    QPdfWriter,
    QTextDocument,
)
from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog, QMessageBox

from explorer.errors import UserError
from explorer.inputs import one_line, parse_output_path
from explorer.lessons.builtin import builtin_lessons
from explorer.lessons.files import LessonError, load_lesson
from explorer.lessons.handout import PAGE_SIZES, Handout, HandoutStep, lesson_handout
from explorer.lessons.model import Lesson
from explorer.lessons.narration import to_html as narration_html
from explorer.outputs import write_output
from explorer.ui.settle import settle
from explorer.ui.theme import current_theme

if TYPE_CHECKING:  # pragma: no cover
    from explorer.ui.main_window import MainWindow

#: the page is painted at this many times its pixels: a 1280 px page is 2560 px across the
#: printed width, about 360 dots per inch on A4
FIGURE_DPR = 2
#: the PDF's own resolution (the painter's units), and its margins
PDF_DPI = 300
MARGIN_MM = 15.0
#: the most of a page's printable height the figure takes; the words take the rest
FIGURE_SHARE = 0.55
#: the size the handout's window is given when it is made offscreen (``lessons --handout``)
HANDOUT_WINDOW = (1280, 800)
PAGE_IDS = {"A4": QPageSize.PageSizeId.A4, "Letter": QPageSize.PageSizeId.Letter}
TEXT_PT = 10.0


def default_page_size() -> str:
    """The save dialog's first paper: Letter where the locale measures in US units, else A4."""
    system = QLocale().measurementSystem()
    return "Letter" if system == QLocale.MeasurementSystem.ImperialUSSystem else "A4"


# --- the figures ----------------------------------------------------------------------------------
@contextmanager
def _printing(window: MainWindow) -> Iterator[None]:
    """The window as a handout paints it (light theme, narration folded, so the page has the
    height), given back as it was afterwards: each page's state as a lesson step records it
    (a teacher's own launch is not lost to the handout's steps), the lesson and step it played,
    the page shown, the theme and the narration."""
    player = window.lessons
    lesson, index = player.lesson, player.index
    expanded = not player.body.isHidden()
    page = window.current_panel_key()
    saved = {key: panel.lesson_state() for key, panel in window.panels.items()}
    theme = current_theme().name
    if theme != "light":
        window.set_theme("light")
    try:
        yield
    finally:
        for key, state in saved.items():
            if state is not None:
                try:
                    window.panels[key].show_lesson_state(state)
                except UserError:
                    pass  # (a page that refuses its own state now keeps the handout's last step)
        if lesson is not None:
            player.open(lesson, index)
        else:
            player.close_lesson()
        player.set_expanded(expanded)
        window.show_panel(page)
        if theme != "light":
            window.set_theme(theme)


def step_figures(window: MainWindow, lesson: Lesson) -> Iterator[tuple[QImage, str]]:
    """For each step: the page the player shows for it, painted at ``FIGURE_DPR`` times its
    pixels, and the note the player gave (a catalog sheet standing in, why a step cannot show)."""
    player = window.lessons
    player.open(lesson, 0)
    player.set_expanded(False)
    for index in range(len(lesson.steps)):
        player.show_step(index)
        window.current_panel().finish_pending()
        settle(hold_input=True)  # as a screenshot waits; a key meanwhile waits too
        yield page_image(window), player.note


def page_image(window: MainWindow) -> QImage:
    """The page shown (without the tabs above it or the lesson pane below), painted offscreen."""
    page = window.tabs.currentWidget()
    image = QImage(page.size() * FIGURE_DPR, QImage.Format.Format_RGB32)
    image.setDevicePixelRatio(FIGURE_DPR)
    image.fill(page.palette().color(QPalette.ColorRole.Window))
    page.render(image)
    return image


# --- the PDF --------------------------------------------------------------------------------------
def step_html(step: HandoutStep, note: str) -> str:
    """The words under a step's figure: the player's note, the narration, the numbers."""
    theme = current_theme()
    parts = []
    said = note or step.note
    if step.problem:
        parts.append(
            f"<p style='color:{theme.error}'><b>This step cannot be shown:</b> {escape(step.problem)}</p>"
        )
    elif said:
        parts.append(f"<p><i>{escape(said)}</i></p>")
    parts.append(narration_html(step.narration))
    if step.numbers:
        parts.append("<h4>What the page shows</h4>")
        parts.append(
            f"<pre style='white-space:pre-wrap; font-size:{TEXT_PT * 0.85:g}pt'>{escape(chr(10).join(step.numbers))}</pre>"
        )
    return "".join(parts)


def _document(html: str, width: float, writer: QPdfWriter) -> QTextDocument:
    doc = QTextDocument()
    doc.documentLayout().setPaintDevice(writer)  # fonts measured at the PDF's resolution
    font = QFont()
    font.setPointSizeF(TEXT_PT)
    doc.setDefaultFont(font)
    doc.setDocumentMargin(0)
    doc.setHtml(html)
    doc.setTextWidth(width)
    return doc


def _line_breaks(doc: QTextDocument) -> list[float]:
    """The bottoms of the document's lines, top to bottom: where a page may end without cutting
    a line of text in two."""
    layout = doc.documentLayout()
    bottoms: list[float] = []
    block = doc.begin()
    while block.isValid():
        top = layout.blockBoundingRect(block).top()
        lines = block.layout()
        for i in range(lines.lineCount()):
            line = lines.lineAt(i)
            bottoms.append(top + line.y() + line.height())
        block = block.next()
    bottoms.append(doc.size().height())
    return sorted(bottoms)


def _draw_flow(
    painter: QPainter,
    doc: QTextDocument,
    top: float,
    page: QRectF,
    writer: QPdfWriter,
    continued: QTextDocument | None = None,
) -> None:
    """Draw ``doc`` from ``top`` on the current page, going on to new pages as it needs, each
    cut at a line's bottom and headed by ``continued`` (which step's words go on there)."""
    breaks = _line_breaks(doc)
    shown = 0.0  # of the document, what is on earlier pages
    total = doc.size().height()
    while True:
        room = page.bottom() - top
        fits = [b for b in breaks if shown < b <= shown + room]
        end = fits[-1] if fits else min(total, shown + room)  # a line taller than a page is cut
        painter.save()
        painter.translate(page.left(), top - shown)
        context = QAbstractTextDocumentLayout.PaintContext()
        context.clip = QRectF(0, shown, page.width(), end - shown)
        painter.setClipRect(context.clip)
        doc.documentLayout().draw(painter, context)
        painter.restore()
        shown = end
        if shown >= total - 0.5:
            return
        writer.newPage()
        top = page.top()
        if continued is not None:
            _draw_flow(painter, continued, top, page, writer)
            top += continued.size().height()


def _running_head(handout: Handout, step: HandoutStep, more: str = "") -> str:
    """The grey line atop each page: the lesson, and which step the page is of."""
    return (
        f"<p style='color:#666666'>{escape(handout.title)} &middot; step {step.number} of {step.of}{more}</p>"
    )


def handout_pdf(handout: Handout, figures: Iterable[tuple[QImage, str]], page_size: str) -> bytes:
    """The PDF: per step a header, the figure, then the words (over more pages where they need).
    ``figures`` is drawn as it comes, one step's picture in memory at a time."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setResolution(PDF_DPI)
    writer.setTitle(handout.title)
    writer.setCreator("Device Explorer")
    writer.setPageLayout(
        QPageLayout(
            QPageSize(PAGE_IDS[page_size]),
            QPageLayout.Orientation.Portrait,
            QMarginsF(MARGIN_MM, MARGIN_MM, MARGIN_MM, MARGIN_MM),
            QPageLayout.Unit.Millimeter,
        )
    )
    page = QRectF(writer.pageLayout().paintRectPixels(PDF_DPI))
    page.moveTo(0, 0)
    painter = QPainter(writer)
    try:
        for number, (step, (image, note)) in enumerate(zip(handout.steps, figures, strict=True)):
            if number:
                writer.newPage()
            head = _document(
                _running_head(handout, step) + f"<h2>{escape(step.title or handout.title)}</h2>",
                page.width(),
                writer,
            )
            _draw_flow(painter, head, page.top(), page, writer)
            top = page.top() + head.size().height()
            size = QSizeF(image.width(), image.height())
            size.scale(QSizeF(page.width(), page.height() * FIGURE_SHARE), Qt.AspectRatioMode.KeepAspectRatio)
            target = QRectF(QPointF(page.left() + (page.width() - size.width()) / 2, top), size)
            painter.drawImage(target, image)
            painter.setPen(Qt.GlobalColor.gray)
            painter.drawRect(target)
            top = target.bottom() + PDF_DPI * 0.12
            words = _document(step_html(step, note), page.width(), writer)
            continued = _document(_running_head(handout, step, " (continued)"), page.width(), writer)
            _draw_flow(painter, words, top, page, writer, continued)
    finally:
        painter.end()
    buffer.close()
    return bytes(data.data())


def write_handout(window: MainWindow, lesson: Lesson, out: str | Path, page_size: str = "A4") -> Path:
    """Render every step of ``lesson`` in ``window``'s player and write the handout to ``out``
    (atomically); UserError (one line) when it cannot be written. The window is given back as
    it was."""
    if page_size not in PAGE_SIZES:
        raise UserError(f"page size {page_size!r} is not one of {', '.join(PAGE_SIZES)}")
    if window.context.discovery is None:
        raise UserError("the devices are still being looked for; export the handout once they are listed")
    handout = lesson_handout(lesson, window.context.devices)
    with _printing(window):
        data = handout_pdf(handout, step_figures(window, lesson), page_size)
    return write_output(out, data, "the handout")


# --- File > Export handout… -----------------------------------------------------------------------
def export_handout_dialog(window: MainWindow) -> Path | None:
    """Choose the lesson (the one being played first, then the built-in ones, or a file), then
    where to write it; the status bar says where it went, a failure is a message box."""
    played = window.lessons.lesson
    choices: list[tuple[str, Lesson | Path | None]] = []
    if played is not None:
        choices.append((f"The lesson being played: {played.title}", played))
    choices += [(f"{info.title} ({info.steps} steps)", info.path) for info in builtin_lessons()]
    choices.append(("A lesson file…", None))
    text, ok = QInputDialog.getItem(
        window, "Export handout", "Print a handout of:", [c[0] for c in choices], 0, False
    )
    if not ok:
        return None
    chosen = dict(choices).get(text)
    if chosen is None:
        name, _filter = QFileDialog.getOpenFileName(
            window, "Lesson for the handout", str(Path.home()), "Lesson (*.json);;All files (*)"
        )
        if not name:
            return None
        chosen = Path(name)
    try:
        lesson = chosen if isinstance(chosen, Lesson) else load_lesson(chosen)
    except LessonError as exc:
        QMessageBox.warning(window, "Export handout", one_line(str(exc)))
        return None
    page_size = default_page_size()
    stem = Path(lesson.path).stem if lesson.path is not None else "lesson"
    filters = [f"PDF, {name} (*.pdf)" for name in (page_size, *(p for p in PAGE_SIZES if p != page_size))]
    name, chosen_filter = QFileDialog.getSaveFileName(
        window, "Export handout", str(Path.home() / f"{stem}-handout.pdf"), ";;".join(filters)
    )
    if not name:
        return None
    for size in PAGE_SIZES:
        if chosen_filter.startswith(f"PDF, {size} "):
            page_size = size
    return export_handout_to(
        window, lesson, name if name.lower().endswith(".pdf") else name + ".pdf", page_size
    )


def export_handout_to(window: MainWindow, lesson: Lesson, out: str | Path, page_size: str) -> Path | None:
    """Write the handout and say where in the status bar; a failure is a message box, and the
    window carries on."""
    try:
        path = parse_output_path(str(out), "the handout's file", (".pdf",))
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)  # each step is painted in turn
        try:
            written = write_handout(window, lesson, path, page_size)
        finally:
            QApplication.restoreOverrideCursor()
    except (UserError, OSError) as exc:
        QMessageBox.warning(window, "Export handout failed", one_line(str(exc)))
        return None
    window.statusBar().showMessage(
        f"Handout of {len(lesson.steps)} steps ({page_size}) written to {written}", 10000
    )
    return written
