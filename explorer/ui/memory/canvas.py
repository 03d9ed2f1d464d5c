"""The three pictures of the Memory page, painted from what explorer.memory computed.

Each canvas takes a finished result (Coalescing, BankConflicts, Divergence) and only draws it:
lanes on top and 32-byte sectors below with a line from each lane to its bytes (those DRAM moves
with them paler, each DRAM granule bracketed under its sectors); 32 bank columns
with each lane's word stacked in its bank; one row of 32 lane cells per warp coloured by path.
Colours come from the theme, so both themes and the projector read the same meanings, and
fonts and lines from the theme's figure rule (``figure_font``, ``line_px``), so the pictures grow
with the window's text. A number that cannot be drawn at a readable size is left out (every
other lane's, or all of them in a narrow window) and said on hover instead: the pointer over a
lane, a sector, a word or a warp shows what it is.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from PySide6.QtCore import QEvent, QLineF, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QHelpEvent, QPainter, QPaintEvent, QPen, QStaticText
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from explorer.memory.banks import BANKS, BankConflicts
from explorer.memory.coalescing import SECTOR_BYTES, WARP_SIZE, Coalescing, GlobalAccess
from explorer.memory.divergence import Divergence
from explorer.memory.texts import warp_line
from explorer.ui.guard import qt_guard
from explorer.ui.theme import Theme, current_theme, figure_font, line_px, px
from explorer.words import count, percent

R = TypeVar("R")

#: drawn sectors beyond this are summarised: a stride of 1000 would otherwise need thousands
#: (64: 32 lanes' lone sectors with the other halves of their 64-byte DRAM granules)
MAX_DRAWN_SECTORS = 64


def idle_colour(theme: Theme) -> QColor:
    """Lanes with no thread, or masked off: a pale step from the background in either theme."""
    return mix_colours(theme.panel, theme.muted, 0.15)


def wasted_colour(theme: Theme) -> QColor:
    """Bytes fetched that no lane asked for."""
    return mix_colours(theme.panel, theme.error, 0.35)


def dram_only_colour(theme: Theme) -> QColor:
    """Bytes DRAM moves with a fetched sector's granule that no cache level asked for."""
    return mix_colours(wasted_colour(theme).name(), theme.panel, 0.5)


def mix_colours(a: str, b: str, t: float) -> QColor:
    ca, cb = QColor(a), QColor(b)
    return QColor(
        round(ca.red() * (1 - t) + cb.red() * t),
        round(ca.green() * (1 - t) + cb.green() * t),
        round(ca.blue() * (1 - t) + cb.blue() * t),
    )


class ResultCanvas(QWidget, Generic[R]):
    """A picture of one finished result; ``set_result`` replaces it and repaints. Each paint
    records what lies where (``hits``) for the hover text."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: R | None = None
        self.hits: list[tuple[QRectF, str]] = []
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.apply_text_scale()

    def least_height(self) -> int:
        """The height the picture needs at the current text size (its words included)."""
        return px(200)

    def apply_text_scale(self) -> None:
        self.setMinimumSize(px(320), self.least_height())
        self.updateGeometry()
        self.update()

    @qt_guard
    def sizeHint(self) -> QSize:
        # no taller than the minimum: the page's scrolled column asks its preferred height, and a
        # taller hint would scroll the words below the picture off a projector's screen; the
        # picture still takes every spare pixel (it stretches)
        return QSize(px(720), self.least_height())

    def set_result(self, result: R) -> None:
        self.result = result
        self.update()

    def _font(self, share: float = 0.9, bold: bool = False) -> QFont:
        """The picture's text: the theme's figure rule (never below the readable least)."""
        return figure_font(share, bold=bold, base=self.font())

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

    @staticmethod
    def numbering_step(fm: QFontMetrics, widest: str, room: float) -> int:
        """Every how many columns a number fits: 1 where each column holds its own, else 2, 4, 8
        or 16 (the others are left out and said on hover); 0 when not even every 16th fits."""
        need = fm.horizontalAdvance(widest) + 4
        return next((step for step in (1, 2, 4, 8, 16) if need <= room * step), 0)

    def hover_text(self, x: float, y: float) -> str:
        """What is under the pointer, in words ("" over nothing)."""
        return next((words for rect, words in reversed(self.hits) if rect.contains(x, y)), "")

    @qt_guard
    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            help_event: QHelpEvent = event  # type: ignore[assignment]
            words = self.hover_text(help_event.pos().x(), help_event.pos().y())
            if words:
                QToolTip.showText(help_event.globalPos(), words, self)
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().event(event)


class CoalescingCanvas(ResultCanvas[Coalescing]):
    """32 lanes on top, the sectors the request touches below, a line from each lane to its bytes."""

    def least_height(self) -> int:
        fm = QFontMetrics(self._font())
        # lane numbers (above the lanes where they do not fit inside), the lanes, the links, the
        # sectors and their addresses
        return 2 * (fm.height() + px(8)) + px(48) + px(24) + fm.height() + px(16) + BRACKET_PX

    def dram_only_sectors(self) -> set[int]:
        """The sectors no lane touches that DRAM moves anyway, in the granules of those it does
        (a lone 32-byte sector costs DRAM its whole 64-byte granule)."""
        c = self.result
        if c is None:
            return set()
        per = max(1, c.dram.bytes // SECTOR_BYTES)
        return {s for g in c.dram_granules for s in range(g * per, (g + 1) * per)} - set(c.sectors)

    def drawn_sectors(self) -> list[int | None]:
        """Sectors in address order, those DRAM moves with them included where they all fit;
        ``None`` marks a gap of sectors neither fetches, left out."""
        c = self.result
        if c is None:
            return []
        touched = sorted(set(c.sectors) | self.dram_only_sectors())
        if len(touched) > MAX_DRAWN_SECTORS:  # the lanes' own sectors first
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
    def paintEvent(self, event: QPaintEvent) -> None:
        theme = current_theme()
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(theme.panel))
        self.hits = []
        c = self.result
        if c is None:
            return
        w, h = self.width(), self.height()
        margin = 8.0
        lane_w = (w - 2 * margin) / WARP_SIZE
        label_font = self._font()
        p.setFont(label_font)
        fm = p.fontMetrics()
        step = self.numbering_step(fm, str(WARP_SIZE - 1), lane_w)
        inside = step == 1  # every lane's number fits in its box; else a ruler above the boxes
        ruler_h = 0.0 if inside or step == 0 else fm.height() + 2.0
        lane_h = max(fm.height() + px(8), min(px(34), h * 0.14)) if inside else float(px(18))
        lane_top = margin + ruler_h
        active = {la.lane: la for la in c.lanes}
        lane_centre = {}
        on_fill, off_fill = QColor(theme.accent), idle_colour(theme)
        border = QPen(QColor(theme.border), line_px(1))
        boxes = [
            QRectF(margin + lane * lane_w + 1, lane_top, lane_w - 2, lane_h) for lane in range(WARP_SIZE)
        ]
        p.setPen(border)
        for on, fill in ((True, on_fill), (False, off_fill)):
            p.setBrush(fill)
            p.drawRects([r for lane, r in enumerate(boxes) if (lane in active) == on])
        texts = self._texts(label_font)
        if inside:
            for on, colour in ((True, QColor(theme.accent_text)), (False, QColor(theme.muted))):
                p.setPen(colour)
                for lane, r in enumerate(boxes):
                    if (lane in active) == on:
                        self._centred(p, r, str(lane), texts)
        elif step:
            p.setPen(QColor(theme.muted))
            for lane in range(0, WARP_SIZE, step):
                r = boxes[lane]
                self._centred(p, QRectF(r.center().x() - 40, margin, 80, ruler_h), str(lane), texts)
        warp = c.access.warp if isinstance(c.access, GlobalAccess) else 0  # a traced warp's lanes: its own
        for lane, r in enumerate(boxes):
            lane_centre[lane] = (r.center().x(), r.bottom())
            la = active.get(lane)
            self.hits.append(
                (
                    r,
                    f"lane {lane}: thread {la.lane + 32 * warp} reads byte {la.address:,} "
                    f"(sector {la.sector:,}, line {la.line:,})"
                    if la is not None
                    else f"lane {lane}: not taking part (masked off)",
                )
            )

        sectors = self.drawn_sectors()
        label_h = fm.height() + 4.0
        below = label_h + BRACKET_PX  # the granules' brackets, then the addresses
        sec_h = max(float(px(24)), min(float(px(72)), h * 0.25))
        sec_h = min(sec_h, max(8.0, h - margin - below - (lane_top + lane_h + px(24))))
        top = max(lane_top + lane_h + px(24), h - margin - below - sec_h - (h * 0.08))
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
            if fm.horizontalAdvance("…") <= r.width():
                self._centred(p, r, "…", texts)
            self.hits.append((r, "sectors no lane touches, left out of the picture"))
        # fetched sectors shaded (the used bytes go on top), those only DRAM moves paler;
        # sectors between them left plain
        dram_only = self.dram_only_sectors()
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(unused_fill)
        p.drawRects([r for s, r in x_of_sector.items() if s in touched])
        p.setBrush(dram_only_colour(theme))
        p.drawRects([r for s, r in x_of_sector.items() if s in dram_only])
        p.setBrush(QColor(theme.panel))
        p.drawRects([r for s, r in x_of_sector.items() if s not in touched and s not in dram_only])
        byte_w = {s: r.width() / SECTOR_BYTES for s, r in x_of_sector.items()}
        used_by: dict[int, list[int]] = {}
        # each lane's bytes, and its line
        used, links = [], []
        for la in c.lanes:
            used_by.setdefault(la.sector, []).append(la.lane)
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
        p.setPen(QPen(mix_colours(theme.accent, theme.text, 0.3), line_px(1)))
        p.drawLines(links)
        for s, r in x_of_sector.items():
            lanes = used_by.get(s, [])
            words = (
                f"sector {s:,}: bytes {s * SECTOR_BYTES:,} to {s * SECTOR_BYTES + SECTOR_BYTES - 1:,}, "
                + (
                    f"read by lane{'s' if len(lanes) > 1 else ''} {_lanes_text(lanes)}"
                    if lanes
                    else f"not fetched, but DRAM moves it with its {c.dram.bytes}-byte granule"
                    if s in dram_only
                    else "not fetched"
                )
            )
            self.hits.append((r, words))
        # thin sector outlines over the fills; a 128-byte line's first sector gets a tick and its address
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(QColor(theme.border), line_px(1)))
        p.drawRects(list(x_of_sector.values()))
        band_bottom = self._paint_granules(p, x_of_sector, top + sec_h)
        line_starts = [(s, r) for s, r in x_of_sector.items() if s % 4 == 0]
        p.setPen(QPen(QColor(theme.text), line_px(3)))
        tick = px(8)
        p.drawLines(
            [
                QLineF(int(r.left()), int(r.top() - tick), int(r.left()), int(r.top() - 2))
                for _, r in line_starts
            ]
        )
        p.setPen(QColor(theme.muted))
        label_end = -1.0
        for s, r in line_starts:
            text = f"{s * SECTOR_BYTES:,} B"
            text_w = fm.horizontalAdvance(text)
            # an address that would run into the one before, or out of the picture, is left out
            if r.left() > label_end and r.left() + text_w <= w - 2:
                p.drawText(
                    QRectF(r.left(), band_bottom + 2, text_w + 2, label_h), Qt.AlignmentFlag.AlignLeft, text
                )
                label_end = r.left() + text_w + fm.horizontalAdvance("  ")
        p.end()

    def _paint_granules(self, p: QPainter, x_of_sector: dict[int, QRectF], y: float) -> float:
        """Under the sectors, a bracket for each granule DRAM moves whole when they miss the L2
        (64 bytes on compute capability 8.0 and newer), under its drawn sectors; none where a
        granule is a sector. Returns the brackets' bottom."""
        c = self.result
        assert c is not None
        per = c.dram.bytes // SECTOR_BYTES
        if per <= 1:
            return y
        drop = float(px(6))
        lines = []
        for g in c.dram_granules:
            drawn = [x_of_sector[s] for s in range(g * per, (g + 1) * per) if s in x_of_sector]
            if not drawn:  # beyond the sectors drawn
                continue
            left, right = min(r.left() for r in drawn) + 1, max(r.right() for r in drawn) - 1
            bottom = y + drop
            lines += [QLineF(left, y + 2, left, bottom), QLineF(left, bottom, right, bottom)]
            lines.append(QLineF(right, bottom, right, y + 2))
            first = g * c.dram.bytes
            self.hits.append(
                (
                    QRectF(left, y, right - left, drop + 2),
                    f"DRAM granule {g:,}: bytes {first:,} to {first + c.dram.bytes - 1:,}, moved "
                    f"whole when its sectors miss the L2 ({c.dram.basis})",
                )
            )
        p.setPen(QPen(QColor(current_theme().text), line_px(1.5)))
        p.drawLines(lines)
        return y + drop + 2


#: the room under the sectors for the DRAM granules' brackets
BRACKET_PX = 10


def _lanes_text(lanes: list[int]) -> str:
    """ "3", "0 to 7", "0, 4, 8": the lanes reading one sector, as short as they go."""
    if len(lanes) > 2 and lanes == list(range(lanes[0], lanes[-1] + 1)):
        return f"{lanes[0]} to {lanes[-1]}"
    return ", ".join(map(str, lanes))


class BankCanvas(ResultCanvas[BankConflicts]):
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
    def paintEvent(self, event: QPaintEvent) -> None:
        theme = current_theme()
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(theme.panel))
        self.hits = []
        b = self.result
        if b is None:
            return
        w, h = self.width(), self.height()
        margin = 8.0
        col_w = (w - 2 * margin) / BANKS
        bank_font = self._font()
        p.setFont(bank_font)
        fm = p.fontMetrics()
        head = float(fm.height() + px(6))
        stacks = self.stacks()
        rows = sum(max((len(v) for v in per.values()), default=1) for per in stacks) + len(stacks) - 1
        box_h = max(6.0, min(float(px(30)), (h - head - 2 * margin) / max(1, rows)))
        p.setPen(QColor(theme.muted))
        texts = self._texts(bank_font)
        step = self.numbering_step(fm, str(BANKS - 1), col_w)
        for bank in range(0, BANKS, step or BANKS):
            if step:
                self._centred(p, QRectF(margin + bank * col_w, margin, col_w, head - 4), str(bank), texts)
        for bank in range(BANKS):
            self.hits.append((QRectF(margin + bank * col_w, margin, col_w, head), f"bank {bank}"))
        y = margin + head
        boxes: dict[bool, list[QRectF]] = {True: [], False: []}  # conflict -> boxes
        labels = []
        for phase_no, per in enumerate(stacks):
            depth = max((len(v) for v in per.values()), default=1)
            for bank, words in per.items():
                for level, (word, lanes) in enumerate(words):
                    r = QRectF(margin + bank * col_w + 1, y + level * box_h + 1, col_w - 2, box_h - 2)
                    boxes[len(words) > 1].append(r)
                    labels.append((r, str(lanes[0]) if len(lanes) == 1 else f"{lanes[0]}+{len(lanes) - 1}"))
                    shared = f" (a broadcast: lanes {_lanes_text(lanes)})" if len(lanes) > 1 else ""
                    queue = (
                        f", {level + 1} of {len(words)} in this bank: served one after another"
                        if len(words) > 1
                        else ""
                    )
                    phase = f"request {phase_no + 1}, " if len(stacks) > 1 else ""
                    self.hits.append(
                        (r, f"{phase}bank {bank}, word {word:,}: lane {lanes[0]}{shared}{queue}")
                    )
            y += (depth + 1) * box_h
        p.setPen(QPen(QColor(theme.border), line_px(1)))
        for conflict, colour in ((False, theme.accent), (True, theme.error)):
            p.setBrush(QColor(colour))
            p.drawRects(boxes[conflict])
        word_font = self._font(0.85)
        word_fm = QFontMetrics(word_font)
        widest = max((text for _r, text in labels), key=word_fm.horizontalAdvance, default="")
        # the lane numbers in the boxes only where every one of them fits at a readable size
        if labels and word_fm.height() <= box_h - 2 and word_fm.horizontalAdvance(widest) + 2 <= col_w - 2:
            p.setFont(word_font)
            p.setPen(QColor(theme.accent_text))
            texts = self._texts(word_font)
            for r, text in labels:
                self._centred(p, r, text, texts)
        p.end()


def _words_of(b: BankConflicts, lane: int) -> range:
    return b.access.lane_words(lane)


class DivergenceCanvas(ResultCanvas[Divergence]):
    """One row per warp, one cell per lane: taken path, other path, or no thread there."""

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:
        theme = current_theme()
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(theme.panel))
        self.hits = []
        d = self.result
        if d is None:
            return
        w, h = self.width(), self.height()
        margin = 8.0
        p.setFont(self._font())
        metrics = p.fontMetrics()
        row_h = max(
            4.0, min(float(max(px(28), metrics.height() + 4)), (h - 2 * margin) / max(1, len(d.warps)))
        )
        infos = [f"{count(warp.paths, 'path')}, {percent(warp.simt_efficiency)}" for warp in d.warps]
        # the words beside the rows get the room their widest text needs, the lanes the rest; a
        # row too short for its words, or a window too narrow, leaves them out (said on hover)
        label_w = metrics.horizontalAdvance(f"warp {len(d.warps) - 1}") + 8.0
        info_w = max(metrics.horizontalAdvance(t) for t in infos) + 12.0
        words = row_h >= metrics.height() and label_w + info_w <= w * 0.45
        if not words:
            label_w = info_w = 0.0
        cell_w = (w - 2 * margin - label_w - info_w) / WARP_SIZE
        taken_c, other_c, idle_c = QColor(theme.accent), QColor(theme.present), idle_colour(theme)
        for i, warp in enumerate(d.warps):
            y = margin + i * row_h
            p.setPen(QColor(theme.text if warp.diverges else theme.muted))
            if words:
                p.drawText(
                    QRectF(margin, y, label_w - 6, row_h), Qt.AlignmentFlag.AlignVCenter, f"warp {warp.warp}"
                )
            taken = set(warp.taken)
            for lane in range(WARP_SIZE):
                r = QRectF(margin + label_w + lane * cell_w + 0.5, y + 0.5, cell_w - 1, row_h - 1)
                fill = idle_c if lane >= warp.lanes else (taken_c if lane in taken else other_c)
                p.fillRect(r, fill)
            if words:
                x = margin + label_w + WARP_SIZE * cell_w + 8
                p.setPen(QColor(theme.text if warp.diverges else theme.muted))
                p.drawText(QRectF(x, y, info_w - 8, row_h), Qt.AlignmentFlag.AlignVCenter, infos[i])
            self.hits.append((QRectF(0, y, w, row_h), warp_line(warp)))
        p.end()
