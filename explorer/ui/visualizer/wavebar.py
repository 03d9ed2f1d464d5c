"""Above the SMs: "wave k of n", the queue of waiting blocks and the count of finished ones; below: the legend.

The queue is drawn aggregated: a few block squares and the count, never one square per block of a
grid that may hold two billion of them. Both bars size their text with the window's text size
(``theme.px``) and lay it out for their width: on a narrow window the queue and the done pile move
under the wave label and the phase words wrap, instead of running into each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPaintEvent, QPen, QResizeEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from explorer.launch.animation import Frame
from explorer.ui.guard import qt_guard
from explorer.ui.theme import figure_font, figure_px, line_px, px
from explorer.ui.visualizer import palette
from explorer.words import count

MAX_QUEUE_SQUARES = 24
MAX_DONE_SQUARES = 8
#: the longest phase line the bar reserves room for (the tail-wave sentence of a large launch)
LONGEST_PHASE = "tail wave: 99,999 of 99,999 block slots busy (99.9%), the rest of the GPU idles"


@dataclass(frozen=True)
class Piece:
    """One thing the wave bar draws: ``kind`` is label, count, queued, done or phase."""

    kind: str
    rect: QRectF
    text: str = ""


@dataclass(frozen=True)
class _Fonts:
    big: QFont
    small: QFont

    @property
    def big_h(self) -> int:
        return QFontMetrics(self.big).height()

    @property
    def small_h(self) -> int:
        return QFontMetrics(self.small).height()


class _HeightForWidth(QWidget):
    """A bar as wide as its column whose height follows its width and the text size: it is fixed
    to ``height_for(width)`` whenever either changes, so what is drawn below never moves while a
    frame is painted."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def height_for(self, width: int) -> int:
        raise NotImplementedError

    def _fit_height(self) -> None:
        self.setFixedHeight(self.height_for(max(self.width(), 1)))

    def apply_text_scale(self) -> None:
        self._fit_height()
        self.update()

    @qt_guard
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self._fit_height()

    @qt_guard
    def sizeHint(self) -> QSize:
        return QSize(800, self.height_for(800))

    @qt_guard
    def minimumSizeHint(self) -> QSize:
        return QSize(0, self.height())


class WaveBar(_HeightForWidth):
    """Paints the wave label, the queue and the done pile for one animation frame."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.frame: Frame | None = None
        self.tail_text = ""
        #: the lines the phase paragraph may hold during this launch: the bar keeps room for the
        #: widest, so its height changes with the launch, never while it plays
        self.phase_texts: list[str] = [LONGEST_PHASE]
        #: the launch's block and wave counts, so the counts and the label reserve the room this
        #: launch needs (its largest numbers), not a worst case of 99,999 blocks: at 200% on a
        #: 1280x800 screen that worst case put "done" on a line of its own and the page scrolled
        self.blocks: int | None = None
        self.waves: int | None = None
        self._fit_height()

    def reserve(self, texts: list[str], *, blocks: int | None = None, waves: int | None = None) -> None:
        """The phase lines of a new launch (``LaunchSession.phase_texts``) and its block and wave
        counts (``None``: room for the largest the bar allows)."""
        texts = [t for t in texts if t] or [LONGEST_PHASE]
        if (texts, blocks, waves) != (self.phase_texts, self.blocks, self.waves):
            self.phase_texts, self.blocks, self.waves = texts, blocks, waves
            self._fit_height()

    def _fonts(self, width: int | None = None) -> _Fonts:
        """The label's bold font (1.6 times the label text, down to the label text's own size
        where the longest label would not fit the width) and the counts' font (the label text's)."""
        width = self.width() if width is None else width
        big = figure_font(1.6, bold=True, base=self.font())
        size, least = big.pixelSize(), figure_px(1.0)
        while size > least and QFontMetrics(big).horizontalAdvance(self._longest_label()) > width - 16:
            size -= 1
            big.setPixelSize(size)
        return _Fonts(big, figure_font(base=self.font()))

    def _longest_label(self) -> str:
        # the launch's worst case, so the bar's height never changes while it plays (the SM
        # picture below would move under the pointer)
        return f"finished: all {self.waves if self.waves is not None else 9_999:,} waves done"

    @property
    def _most_blocks(self) -> int:
        """The largest block count this launch shows (99,999 when not told)."""
        return self.blocks if self.blocks is not None else 99_999

    def _counts_w(self, fonts: _Fonts) -> int:
        """Width the queue and done counts need side by side (with a few squares each)."""
        fm = QFontMetrics(fonts.small)
        sq = px(14) + 3
        queue, done = self._count_texts(self._most_blocks, self._most_blocks, False)
        return (
            fm.horizontalAdvance(f"{queue}  + {self._most_blocks:,} more")
            + 4 * sq
            + fm.horizontalAdvance(done)
            + MAX_DONE_SQUARES * sq
            + px(24)
        )

    def _stacked(self, width: int, fonts: _Fonts) -> bool:
        """True when the counts go on their own line under the wave label."""
        label_w = QFontMetrics(fonts.big).horizontalAdvance(self._longest_label())
        return label_w + px(16) + self._counts_w(fonts) > width - 16

    @staticmethod
    def _count_texts(queued: int, done: int, terse: bool) -> tuple[str, str]:
        """The two counts' words; ``terse`` leaves out "blocks" (the label and the summary above
        say what is counted) where that keeps both on one line."""
        if terse:
            return f"queue: {queued:,}", f"done: {done:,}"
        return f"queue: {count(queued, 'block')}", f"done: {count(done, 'block')}"

    def _counts_fit(self, width: int, fonts: _Fonts, terse: bool) -> bool:
        """Whether the two counts alone, at this launch's largest, fit one line."""
        fm = QFontMetrics(fonts.small)
        queue, done = self._count_texts(self._most_blocks, self._most_blocks, terse)
        return fm.horizontalAdvance(queue) + px(24) + fm.horizontalAdvance(done) <= width - 16

    def _terse(self, width: int, fonts: _Fonts) -> bool:
        """True when the counts keep one line only without the word "blocks" (at 200% text on a
        1280x800 screen, a line that let the page fit)."""
        return not self._counts_fit(width, fonts, False) and self._counts_fit(width, fonts, True)

    def _split(self, width: int, fonts: _Fonts) -> bool:
        """True when even the two counts alone, terse, do not fit one line: done goes under queue."""
        return not self._counts_fit(width, fonts, False) and not self._counts_fit(width, fonts, True)

    def _phase_h(self, width: int, fonts: _Fonts) -> int:
        """Height of the phase paragraph: the longest sentence it may hold, wrapped to the width."""
        fm = QFontMetrics(fonts.small)
        box = QRect(0, 0, max(width - 16, 1), 100_000)
        return max(fm.boundingRect(box, int(Qt.TextFlag.TextWordWrap), t).height() for t in self.phase_texts)

    def height_for(self, width: int) -> int:
        fonts = self._fonts(width)
        lines = fonts.big_h
        if self._stacked(width, fonts):
            lines += fonts.small_h + 4
            if self._split(width, fonts):
                lines += fonts.small_h + 4
        return 4 + lines + 2 + self._phase_h(width, fonts) + 4

    def set_frame(self, frame: Frame | None, tail_text: str = "") -> None:
        self.frame = frame
        self.tail_text = tail_text
        self.update()

    def pieces(self) -> list[Piece]:
        """What the bar draws for the current frame and where: the wave label, the counts, the
        queue and done squares, the phase words (a wrapped paragraph). Painting and the tests
        that check nothing overlaps or runs out of the bar both read this."""
        f = self.frame
        if f is None:
            return []
        w = self.width()
        fonts = self._fonts(w)
        fm_big, fm = QFontMetrics(fonts.big), QFontMetrics(fonts.small)
        sq = px(14)
        step = sq + 3
        y = 4
        out = [Piece("label", QRectF(8, y, fm_big.horizontalAdvance(f.label) + 2, fonts.big_h), f.label)]
        # the counts: beside the label when there is room, else on a line of their own
        split = terse = False
        if self._stacked(w, fonts):
            x0, cy, ch = 8.0, float(y + fonts.big_h + 4), fonts.small_h
            split, terse = self._split(w, fonts), self._terse(w, fonts)
            phase_y = cy + (ch + 4 if split else 0) + ch + 2
        else:
            label_w = fm_big.horizontalAdvance(self._longest_label())
            x0, cy, ch = 8.0 + label_w + px(16), float(y), fonts.big_h
            phase_y = y + fonts.big_h + 2
        # "queue: n blocks" and its squares at the left, "done: n blocks" and its squares at the
        # right; the squares share what room the two counts leave, so neither runs into the other
        queue_text, done_text = self._count_texts(f.queued, f.done, terse)
        queue_w, done_w = fm.horizontalAdvance(queue_text) + 2, fm.horizontalAdvance(done_text) + 2
        more_w = fm.horizontalAdvance(f"+ {f.queued:,} more") + 6
        spare = w - 8 - x0 - queue_w - 6 - (0 if split else done_w + px(24))
        done_room = (w - 16 - done_w - 6) if split else spare // 2
        n_done = min(f.done, MAX_DONE_SQUARES, max(0, int(done_room // step)))
        if split:
            spare += n_done * step  # the done squares are on their own line
        n_queue = min(f.queued, MAX_QUEUE_SQUARES, max(0, int((spare - n_done * step - more_w) // step)))
        out.append(Piece("count", QRectF(x0, cy, queue_w, ch), queue_text))
        x = x0 + queue_w + 6
        out += [Piece("queued", QRectF(x + i * step, cy + (ch - sq) / 2, sq, sq)) for i in range(n_queue)]
        if 0 < n_queue < f.queued:
            more = f"+ {f.queued - n_queue:,} more"
            out.append(Piece("count", QRectF(x + n_queue * step + 3, cy, more_w - 3, ch), more))
        done_x = w - 8 - done_w - (6 + n_done * step if n_done else 0)
        dy = cy + ch + 4 if split else cy
        out.append(Piece("count", QRectF(done_x, dy, done_w, ch), done_text))
        out += [
            Piece("done", QRectF(w - 8 - (i + 1) * step + 3, dy + (ch - sq) / 2, sq, sq))
            for i in range(n_done)
        ]
        phase = self.tail_text or f.phase_words
        out.append(Piece("phase", QRectF(8, phase_y, w - 16, self._phase_h(w, fonts)), phase))
        return out

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        c = palette.canvas()
        p.fillRect(self.rect(), c.sm_face)
        fonts = self._fonts()
        left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        top = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop
        for piece in self.pieces():
            if piece.kind in ("queued", "done"):
                colour = palette.QUEUED if piece.kind == "queued" else palette.DONE
                p.setPen(QPen(colour.darker(140 if piece.kind == "queued" else 130), line_px(1)))
                p.setBrush(colour)
                p.drawRect(piece.rect)
                continue
            p.setFont(fonts.big if piece.kind == "label" else fonts.small)
            if piece.kind == "phase":
                # what happens now, or the tail wave's warning, wrapped to the width
                p.setPen(c.muted if not self.tail_text else palette.IDLE_LANE.darker(130))
                p.drawText(piece.rect, int(top | Qt.TextFlag.TextWordWrap), piece.text)
            else:
                p.setPen(c.text)
                p.drawText(piece.rect, left, piece.text)
        p.end()


class Legend(_HeightForWidth):
    """Colour key, large enough to read from the back of a classroom; wraps onto as many rows as
    its width needs (its height follows)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._fit_height()

    def _font(self) -> QFont:
        return figure_font(base=self.font())

    def row_h(self) -> int:
        return QFontMetrics(self._font()).height() + px(6)

    def _items(self, width: int) -> list[tuple[float, int, QColor, str]]:
        """(x, row, colour, words) for each entry, wrapped to ``width``."""
        fm = QFontMetrics(self._font())
        box = px(16)
        x, row, out = 6.0, 0, []
        for _name, colour, words in palette.legend():
            item_w = box + 6 + fm.horizontalAdvance(words) + px(18)
            if x + item_w - px(18) > width and x > 6:
                x, row = 6.0, row + 1
            out.append((x, row, colour, words))
            x += item_w
        return out

    def height_for(self, width: int) -> int:
        return (max(r for _x, r, _c, _w in self._items(width)) + 1) * self.row_h()

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setFont(self._font())
        c = palette.canvas()
        box, row_h = px(16), self.row_h()
        for x, row, colour, words in self._items(self.width()):
            y = row * row_h
            p.setPen(QPen(c.sm_border, line_px(1)))
            p.setBrush(colour)
            p.drawRect(QRectF(x, y + (row_h - box) / 2, box, box))
            p.setPen(self.palette().color(self.foregroundRole()))  # on the window: the theme's text
            p.drawText(
                QRectF(x + box + 6, y, self.width() - x - box - 6, row_h),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                words,
            )
        p.end()
