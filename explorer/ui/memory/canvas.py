"""The three pictures of the Memory page, painted from what explorer.memory computed.

Each canvas takes a finished result (Coalescing, BankConflicts, Divergence) and only draws it:
lanes on top and 32-byte sectors below with a line from each lane to its bytes; 32 bank columns
with each lane's word stacked in its bank; one row of 32 lane cells per warp coloured by path.
Colours come from the theme, so both themes and the projector read the same meanings.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from PySide6.QtCore import QLineF, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPaintEvent, QPen, QStaticText
from PySide6.QtWidgets import QSizePolicy, QWidget

from explorer.memory.banks import BANKS, BankConflicts
from explorer.memory.coalescing import SECTOR_BYTES, WARP_SIZE, Coalescing
from explorer.memory.divergence import Divergence
from explorer.ui.guard import qt_guard
from explorer.ui.theme import Theme, current_theme, px
from explorer.words import count, percent

R = TypeVar("R")

#: drawn sectors beyond this are summarised: a stride of 1000 would otherwise need thousands
MAX_DRAWN_SECTORS = 48


def idle_colour(theme: Theme) -> QColor:
    """Lanes with no thread, or masked off: a pale step from the background in either theme."""
    return _mix(theme.panel, theme.muted, 0.15)


def wasted_colour(theme: Theme) -> QColor:
    """Bytes fetched that no lane asked for."""
    return _mix(theme.panel, theme.error, 0.35)


def _mix(a: str, b: str, t: float) -> QColor:
    ca, cb = QColor(a), QColor(b)
    return QColor(
        round(ca.red() * (1 - t) + cb.red() * t),
        round(ca.green() * (1 - t) + cb.green() * t),
        round(ca.blue() * (1 - t) + cb.blue() * t),
    )


class _Canvas(QWidget, Generic[R]):
    """A picture of one finished result; ``set_result`` replaces it and repaints."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: R | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(320, 200)

    @qt_guard
    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        # no taller than the minimum: the page's scrolled column asks its preferred height, and a
        # taller hint would scroll the words below the picture off a projector's screen; the
        # picture still takes every spare pixel (it stretches)
        return QSize(720, 200)

    def set_result(self, result: R) -> None:
        self.result = result
        self.update()

    def _small_font(self, px: float) -> QFont:
        font = QFont(self.font())
        font.setPixelSize(max(7, int(px)))
        return font

    def _texts(self, font: QFont) -> dict[str, QStaticText]:
        """Laid-out texts for ``font``, kept between frames: the lane and bank numbers are the
        same every frame, and laying out text is most of a frame's cost."""
        caches: dict[str, dict[str, QStaticText]] = self.__dict__.setdefault("_text_caches", {})
        key = font.key()
        if key not in caches and len(caches) > 16:  # fonts change with the size: keep a few
            caches.clear()
        return caches.setdefault(key, {})

    @staticmethod
    def _centred(p: QPainter, r: QRectF, text: str, texts: dict[str, QStaticText]) -> None:
        """``text`` centred in ``r`` with the painter's font, whose ``_texts`` cache is ``texts``."""
        st = texts.get(text)
        if st is None:
            st = texts[text] = QStaticText(text)
            st.prepare(font=p.font())
        size = st.size()
        p.drawStaticText(QPointF(r.center().x() - size.width() / 2, r.center().y() - size.height() / 2), st)


class CoalescingCanvas(_Canvas[Coalescing]):
    """32 lanes on top, the sectors the request touches below, a line from each lane to its bytes."""

    def drawn_sectors(self) -> list[int | None]:
        """Sectors in address order; ``None`` marks a gap of untouched sectors left out."""
        c = self.result
        if c is None:
            return []
        touched = list(c.sectors)
        first, last = touched[0], touched[-1]
        if last - first + 1 <= MAX_DRAWN_SECTORS:
            return list(range(first, last + 1))
        out: list[int | None] = []
        for s in touched[:MAX_DRAWN_SECTORS]:
            if out and out[-1] is not None and s != out[-1] + 1:
                out.append(None)
            out.append(s)
        return out

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        theme = current_theme()
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(theme.panel))
        c = self.result
        if c is None:
            return
        w, h = self.width(), self.height()
        margin = 8.0
        lane_w = (w - 2 * margin) / WARP_SIZE
        lane_h = min(px(34), h * 0.14)
        label_font = self._small_font(min(lane_h * 0.45, lane_w * 0.55))
        p.setFont(label_font)
        active = {la.lane: la for la in c.lanes}
        lane_centre = {}
        on_fill, off_fill, border = QColor(theme.accent), idle_colour(theme), QPen(QColor(theme.border), 1)
        boxes = [QRectF(margin + lane * lane_w + 1, margin, lane_w - 2, lane_h) for lane in range(WARP_SIZE)]
        p.setPen(border)
        for on, fill in ((True, on_fill), (False, off_fill)):
            p.setBrush(fill)
            p.drawRects([r for lane, r in enumerate(boxes) if (lane in active) == on])
        texts = self._texts(label_font)
        for on, colour in ((True, QColor(theme.accent_text)), (False, QColor(theme.muted))):
            p.setPen(colour)
            for lane, r in enumerate(boxes):
                if (lane in active) == on:
                    self._centred(p, r, str(lane), texts)
        for lane, r in enumerate(boxes):
            lane_centre[lane] = (r.center().x(), r.bottom())

        sectors = self.drawn_sectors()
        top = margin + lane_h + h * 0.30
        sec_h = min(72.0, h * 0.25)
        gap_share = 0.35  # a left-out run of sectors takes a third of a sector's width
        units = sum(gap_share if s is None else 1.0 for s in sectors)
        slot_w = (w - 2 * margin) / max(1.0, units)
        used_fill = QColor(theme.accent)
        unused_fill = wasted_colour(theme)
        x_of_sector: dict[int, QRectF] = {}
        touched = set(c.sectors)
        gaps = []
        x = margin
        for s in sectors:
            width = slot_w * (gap_share if s is None else 1.0)
            r = QRectF(x + 1, top, width - 2, sec_h)
            x += width
            if s is None:
                gaps.append(r)
            else:
                x_of_sector[s] = r
        p.setPen(QColor(theme.muted))
        for r in gaps:
            self._centred(p, r, "…", texts)
        # fetched sectors shaded (the used bytes go on top); sectors between them left plain
        p.setPen(Qt.PenStyle.NoPen)
        for fetched, fill in ((True, unused_fill), (False, QColor(theme.panel))):
            p.setBrush(fill)
            p.drawRects([r for s, r in x_of_sector.items() if (s in touched) == fetched])
        byte_w = {s: r.width() / SECTOR_BYTES for s, r in x_of_sector.items()}
        # each lane's bytes, and its line
        used, links = [], []
        for la in c.lanes:
            sector_r = x_of_sector.get(la.sector)
            if sector_r is None:
                continue
            start = la.address % SECTOR_BYTES
            bytes_r = QRectF(
                sector_r.left() + start * byte_w[la.sector],
                sector_r.top(),
                c.access.elem_bytes * byte_w[la.sector],
                sector_r.height(),
            )
            used.append(bytes_r)
            x0, y0 = lane_centre[la.lane]
            links.append(QLineF(int(x0), int(y0), int(bytes_r.center().x()), int(sector_r.top())))
        p.setBrush(used_fill)
        p.drawRects(used)
        p.setPen(QPen(_mix(theme.accent, theme.text, 0.3), 1))
        p.drawLines(links)
        # thin sector outlines over the fills; a 128-byte line's first sector gets a tick and its address
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(QColor(theme.border), 1))
        p.drawRects(list(x_of_sector.values()))
        line_starts = [(s, r) for s, r in x_of_sector.items() if s % 4 == 0]
        p.setPen(QPen(QColor(theme.text), 3))
        p.drawLines(
            [QLineF(int(r.left()), int(r.top() - 9), int(r.left()), int(r.top() - 2)) for _, r in line_starts]
        )
        p.setFont(self._small_font(min(sec_h * 0.3, px(13))))
        p.setPen(QColor(theme.muted))
        metrics = p.fontMetrics()
        label_end = -1.0
        for s, r in line_starts:
            text = f"{s * SECTOR_BYTES} B"
            if r.left() > label_end:
                p.drawText(QRectF(r.left(), r.bottom() + 2, 200, 18), Qt.AlignmentFlag.AlignLeft, text)
                label_end = r.left() + metrics.horizontalAdvance(text) + 8
        p.end()


class BankCanvas(_Canvas[BankConflicts]):
    """32 bank columns; each distinct word a lane asks for is a box in its bank, stacked when
    several words share a bank (a conflict); lanes sharing one word share its box (a broadcast)."""

    def stacks(self) -> list[dict[int, list[tuple[int, list[int]]]]]:
        """Per phase: bank -> [(word, lanes reading it)], in stacking order."""
        b = self.result
        if b is None:
            return []
        out = []
        for phase_no, phase in enumerate(b.phases):
            per_bank: dict[int, list[tuple[int, list[int]]]] = {}
            for bank, words in phase.words_per_bank.items():
                per_bank[bank] = [
                    (
                        word,
                        [lb.lane for lb in b.lanes if lb.phase == phase_no and word in _words_of(b, lb.lane)],
                    )
                    for word in words
                ]
            out.append(per_bank)
        return out

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        theme = current_theme()
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(theme.panel))
        b = self.result
        if b is None:
            return
        w, h = self.width(), self.height()
        margin, head = 8.0, float(px(22))
        col_w = (w - 2 * margin) / BANKS
        stacks = self.stacks()
        rows = sum(max((len(v) for v in per.values()), default=1) for per in stacks) + len(stacks) - 1
        box_h = max(6.0, min(px(30), (h - head - 2 * margin) / max(1, rows)))
        bank_font = self._small_font(min(col_w * 0.5, px(13)))
        p.setFont(bank_font)
        p.setPen(QColor(theme.muted))
        texts = self._texts(bank_font)
        for bank in range(BANKS):
            self._centred(p, QRectF(margin + bank * col_w, margin, col_w, head - 4), str(bank), texts)
        y = margin + head
        boxes: dict[bool, list[QRectF]] = {True: [], False: []}  # conflict -> boxes
        labels = []
        for per in stacks:
            depth = max((len(v) for v in per.values()), default=1)
            for bank, words in per.items():
                for level, (_word, lanes) in enumerate(words):
                    r = QRectF(margin + bank * col_w + 1, y + level * box_h + 1, col_w - 2, box_h - 2)
                    boxes[len(words) > 1].append(r)
                    labels.append((r, str(lanes[0]) if len(lanes) == 1 else f"{lanes[0]}+{len(lanes) - 1}"))
            y += (depth + 1) * box_h
        p.setPen(QPen(QColor(theme.border), 1))
        for conflict, colour in ((False, theme.accent), (True, theme.error)):
            p.setBrush(QColor(colour))
            p.drawRects(boxes[conflict])
        if box_h >= 10:
            word_font = self._small_font(min(box_h * 0.55, col_w * 0.42))
            p.setFont(word_font)
            p.setPen(QColor(theme.accent_text))
            texts = self._texts(word_font)
            for r, text in labels:
                self._centred(p, r, text, texts)
        p.end()


def _words_of(b: BankConflicts, lane: int) -> range:
    return b.access.lane_words(lane)


class DivergenceCanvas(_Canvas[Divergence]):
    """One row per warp, one cell per lane: taken path, other path, or no thread there."""

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        theme = current_theme()
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(theme.panel))
        d = self.result
        if d is None:
            return
        w, h = self.width(), self.height()
        margin = 8.0
        row_h = max(4.0, min(px(28), (h - 2 * margin) / max(1, len(d.warps))))
        p.setFont(self._small_font(min(row_h * 0.6, px(14))))
        # the words beside the rows get the room their widest text needs, the lanes the rest
        metrics = p.fontMetrics()
        label_w = min(metrics.horizontalAdvance("warp 31") + 8.0, w * 0.15)
        info_w = min(metrics.horizontalAdvance("2 paths, 100%") + 12.0, w * 0.25)
        cell_w = (w - 2 * margin - label_w - info_w) / WARP_SIZE
        taken_c, other_c, idle_c = QColor(theme.accent), QColor(theme.present), idle_colour(theme)
        for i, warp in enumerate(d.warps):
            y = margin + i * row_h
            p.setPen(QColor(theme.text if warp.diverges else theme.muted))
            if row_h >= 9:
                p.drawText(
                    QRectF(margin, y, label_w - 6, row_h), Qt.AlignmentFlag.AlignVCenter, f"warp {warp.warp}"
                )
            taken = set(warp.taken)
            for lane in range(WARP_SIZE):
                r = QRectF(margin + label_w + lane * cell_w + 0.5, y + 0.5, cell_w - 1, row_h - 1)
                fill = idle_c if lane >= warp.lanes else (taken_c if lane in taken else other_c)
                p.fillRect(r, fill)
            if row_h >= 9:
                info = f"{count(warp.paths, 'path')}, {percent(warp.simt_efficiency)}"
                x = margin + label_w + WARP_SIZE * cell_w + 8
                p.setPen(QColor(theme.text if warp.diverges else theme.muted))
                p.drawText(QRectF(x, y, info_w - 8, row_h), Qt.AlignmentFlag.AlignVCenter, info)
        p.end()
