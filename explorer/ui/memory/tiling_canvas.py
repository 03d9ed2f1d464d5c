"""The tiled matmul stepper's picture, painted from what ``explorer.memory.tiling_steps`` computed.

Three panels side by side: global memory (A, B and C to scale, the block's strip of A and of B and
the tiles of the current phase marked), shared memory (As and Bs, cell by cell: loaded, a padded
zero, left from the last phase, or empty) and the block's partial sums (each thread's share of K
added so far). Below, the block's warps with what each is doing and which wait at a barrier.
Colours come from the theme; painted text and lines take their size from the theme's figure rule.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QFontMetricsF, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QWidget

from explorer.memory.tiling import MatmulShape
from explorer.memory.tiling_steps import BlockState, CellState, WarpState
from explorer.ui.guard import qt_guard
from explorer.ui.memory.canvas import ResultCanvas, idle_colour, mix_colours
from explorer.ui.theme import Theme, current_theme, line_px, px
from explorer.words import count

#: what a warp box says for each state (a word that fits under "w31")
WARP_WORDS: dict[WarpState, str] = {
    "to load": "",
    "loading": "loads",
    "at barrier 1": "waits",
    "to compute": "",
    "computing": "adds",
    "at barrier 2": "waits",
    "storing": "stores",
    "done": "done",
}


def cell_colour(theme: Theme, state: CellState) -> QColor:
    return {
        "loaded": QColor(theme.accent),
        "zero": mix_colours(theme.panel, theme.catalog, 0.45),
        "stale": mix_colours(theme.panel, theme.muted, 0.35),
        "empty": idle_colour(theme),
    }[state]


def waiting_colour(theme: Theme) -> QColor:
    return QColor(theme.catalog)


class TilingCanvas(ResultCanvas[BlockState]):
    """Draws a block's state handed to it; computes nothing. Its words take the theme's figure
    rule (``figure_font``): a title wraps rather than shrinks, and a number or a label with no
    room at a readable size is left out and said on hover (the pointer over a cell, a matrix or
    a warp says what it is)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self.shape: MatmulShape | None = None
        self.block = (0, 0)
        self.state: BlockState | None = None
        super().__init__(parent)

    def least_height(self) -> int:
        """A title line, the matrices and tiles, and one row of warps under their heading."""
        fm = QFontMetrics(self._font(1.0, bold=True))
        rows = 1 + (self.shape.warps_per_block - 1) // 16 if self.shape is not None else 1
        return 2 * fm.height() + px(150) + rows * self._warp_box_h() + px(24)

    def _warp_box_h(self) -> int:
        return QFontMetrics(self._font()).height() + px(8)

    def show_state(self, shape: MatmulShape, block: tuple[int, int], state: BlockState) -> None:
        rows_before = self.shape.warps_per_block if self.shape is not None else 0
        self.shape, self.block, self.state = shape, block, state
        if shape.warps_per_block != rows_before:
            self.apply_text_scale()  # the warps' rows decide the least height
        self.update()

    @staticmethod
    def _wrapped_height(font: QFont, text: str, width: float) -> float:
        """The height ``text`` takes wrapped to ``width`` (a title wraps rather than shrinks)."""
        flags = int(Qt.TextFlag.TextWordWrap.value)
        return QFontMetricsF(font).boundingRect(QRectF(0, 0, max(1.0, width), 1e6), flags, text).height()

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:
        theme = current_theme()
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(theme.panel))
        self.hits = []
        if self.shape is None or self.state is None:
            p.end()
            return
        w, h = float(self.width()), float(self.height())
        margin = 8.0
        col_w = (w - 2 * margin) / 3
        titles = ("Global memory", "Shared memory", "Partial sums")
        title_font = self._font(1.0, bold=True)
        title_h = max(self._wrapped_height(title_font, t, col_w - margin) for t in titles) + 2
        head, head_h = self._warps_head(w - 2 * margin)
        rows = 1 + (len(self.state.warps) - 1) // 16
        warps_h = head_h + rows * self._warp_box_h() + px(6)
        top_h = h - warps_h - 2 * margin
        panels = [QRectF(margin + i * col_w, margin, col_w - margin, top_h) for i in range(3)]
        p.setFont(title_font)
        p.setPen(QColor(theme.text))
        wrap = Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap
        for r, text in zip(panels, titles, strict=True):
            p.drawText(QRectF(r.left(), r.top(), r.width(), title_h), wrap, text)
        body = [QRectF(r.left(), r.top() + title_h + 4, r.width(), r.height() - title_h - 4) for r in panels]
        self._paint_global(p, theme, body[0])
        self._paint_shared(p, theme, body[1])
        self._paint_sums(p, theme, body[2])
        self._paint_warps(
            p, theme, QRectF(margin, h - warps_h - margin / 2, w - 2 * margin, warps_h), head, head_h
        )
        p.end()

    # --- global memory: A (M x K) bottom left, B (K x N) top right, C (M x N) bottom right --------
    def _paint_global(self, p: QPainter, theme: Theme, r: QRectF) -> None:
        s, state = self.shape, self.state
        assert s is not None and state is not None
        label_h = float(QFontMetrics(self._font()).height())
        gap = float(px(10))
        scale = min((r.width() - gap) / (s.k + s.n), (r.height() - gap - label_h) / (s.k + s.m))
        x0, y0 = r.left(), r.top()
        a = QRectF(x0, y0 + s.k * scale + gap, s.k * scale, s.m * scale)
        b = QRectF(x0 + s.k * scale + gap, y0, s.n * scale, s.k * scale)
        c = QRectF(b.left(), a.top(), s.n * scale, s.m * scale)
        t, (bx, by) = s.tile, self.block
        phase = state.phase
        light = mix_colours(theme.panel, theme.accent, 0.18)
        middle = mix_colours(theme.panel, theme.accent, 0.45)
        strong = QColor(theme.accent)
        p.setPen(QPen(QColor(theme.border), line_px(1)))
        for rect in (a, b, c):
            p.fillRect(rect, idle_colour(theme))
        # the block's strip of A (its rows) and of B (its columns), and its tile of C
        rows = (by * t, min(s.m, by * t + t))
        cols = (bx * t, min(s.n, bx * t + t))
        p.fillRect(QRectF(a.left(), a.top() + rows[0] * scale, a.width(), (rows[1] - rows[0]) * scale), light)
        p.fillRect(
            QRectF(b.left() + cols[0] * scale, b.top(), (cols[1] - cols[0]) * scale, b.height()), light
        )
        done = any(any(row) for row in state.stored)
        c_tile = QRectF(
            c.left() + cols[0] * scale,
            c.top() + rows[0] * scale,
            (cols[1] - cols[0]) * scale,
            (rows[1] - rows[0]) * scale,
        )
        p.fillRect(c_tile, strong if done else middle)
        if phase >= 0:
            ks = (phase * t, min(s.k, phase * t + t))
            p.fillRect(
                QRectF(
                    a.left() + ks[0] * scale,
                    a.top() + rows[0] * scale,
                    (ks[1] - ks[0]) * scale,
                    (rows[1] - rows[0]) * scale,
                ),
                strong,
            )
            p.fillRect(
                QRectF(
                    b.left() + cols[0] * scale,
                    b.top() + ks[0] * scale,
                    (cols[1] - cols[0]) * scale,
                    (ks[1] - ks[0]) * scale,
                ),
                strong,
            )
        # tile boundaries where they are far enough apart to see
        if t * scale >= 5:
            p.setPen(QPen(mix_colours(theme.panel, theme.border, 0.9), 1))
            for rect, across, down in ((a, s.k, s.m), (b, s.n, s.k), (c, s.n, s.m)):
                for i in range(t, across, t):
                    p.drawLine(
                        int(rect.left() + i * scale),
                        int(rect.top()),
                        int(rect.left() + i * scale),
                        int(rect.bottom()),
                    )
                for i in range(t, down, t):
                    p.drawLine(
                        int(rect.left()),
                        int(rect.top() + i * scale),
                        int(rect.right()),
                        int(rect.top() + i * scale),
                    )
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(QColor(theme.border), 1))
        p.drawRects([a, b, c])
        p.setFont(self._font())
        p.setPen(QColor(theme.text))
        metrics = p.fontMetrics()
        whose = {
            "A": "rows of the block's strip",
            "B": "columns of the block's strip",
            "C": "the block's tile",
        }
        # each name within its own column (A's up to C's, C's to the edge, B's left of it, over
        # A): a narrow A (K = 5) ran "A 100x5" into "C 100x70"; the sizes go first, then the name
        room = {"A": c.left() - a.left() - 2, "B": b.left() - r.left() - 2, "C": r.right() - c.left()}
        for rect, name in ((a, f"A {s.m}x{s.k}"), (b, f"B {s.k}x{s.n}"), (c, f"C {s.m}x{s.n}")):
            self.hits.append((rect, f"{name} in global memory (shaded: {whose[name[0]]})"))
            shown = next(
                (n for n in (name, name[0]) if metrics.horizontalAdvance(n) + 4 <= room[name[0]]), None
            )
            if shown is None:
                continue  # no room: said on hover instead
            width = metrics.horizontalAdvance(shown) + 4
            below = QRectF(rect.left(), rect.bottom() + 2, width, label_h)
            if rect is b:  # B's label goes beside it: below it is C
                below = QRectF(rect.left() - width - 2, rect.top(), width, label_h)
            if r.adjusted(-1, -1, 1, 1 + label_h).contains(below):  # no room: said on hover instead
                p.drawText(below, Qt.AlignmentFlag.AlignLeft, shown)

    # --- shared memory: As and Bs cell by cell --------------------------------------------------
    def _paint_shared(self, p: QPainter, theme: Theme, r: QRectF) -> None:
        s, state = self.shape, self.state
        assert s is not None and state is not None
        font = self._font()
        p.setFont(font)
        fm = p.fontMetrics()
        label_h = float(fm.height() + 2)
        gap = float(px(10))
        side = max(8.0, min((r.width() - gap) / 2, r.height() - label_h))
        cell = side / s.tile
        loading = state.tick.warp if state.tick is not None and state.tick.kind == "load" else -1
        what_words = {
            "loaded": "loaded this phase",
            "zero": "a zero (outside the matrix)",
            "stale": "left from the last phase",
            "empty": "empty",
        }
        for i, (tile, name) in enumerate(((state.a_tile, "As[ty][tx]"), (state.b_tile, "Bs[ty][tx]"))):
            x0, y0 = r.left() + i * (side + gap), r.top() + label_h
            p.setPen(QColor(theme.text))
            if fm.horizontalAdvance(name) <= side + gap:  # else said on hover
                p.drawText(QRectF(x0, r.top(), side + gap, label_h), Qt.AlignmentFlag.AlignLeft, name)
            groups: dict[CellState, list[QRectF]] = {}
            outlined = []
            for ty, row in enumerate(tile):
                for tx, what in enumerate(row):
                    box = QRectF(x0 + tx * cell, y0 + ty * cell, cell, cell)
                    groups.setdefault(what, []).append(box)
                    self.hits.append((box, f"{name[:2]}[{ty}][{tx}]: {what_words.get(what, what)}"))
                    if (tx + ty * s.tile) // 32 == loading:
                        outlined.append(box)
            p.setPen(QPen(QColor(theme.panel), line_px(1)) if cell >= 6 else Qt.PenStyle.NoPen)
            for what, boxes in groups.items():
                p.setBrush(cell_colour(theme, what))
                p.drawRects(boxes)
            if outlined:
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.setPen(QPen(QColor(theme.text), line_px(2)))
                top = min(b.top() for b in outlined)
                bottom = max(b.bottom() for b in outlined)
                left = min(b.left() for b in outlined)
                right = max(b.right() for b in outlined)
                p.drawRect(QRectF(left, top, right - left, bottom - top))
            if cell >= fm.height() and fm.horizontalAdvance("0") + 2 <= cell and "zero" in groups:
                p.setPen(QColor(theme.text))
                for box in groups["zero"]:
                    p.drawText(box, Qt.AlignmentFlag.AlignCenter, "0")
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(QColor(theme.border), line_px(1)))
            p.drawRect(QRectF(x0, y0, side, side))

    # --- each thread's partial sum: the share of K it has added --------------------------------
    def _paint_sums(self, p: QPainter, theme: Theme, r: QRectF) -> None:
        s, state = self.shape, self.state
        assert s is not None and state is not None
        font = self._font()
        caption = f"products added, of K = {s.k}"
        label_h = self._wrapped_height(font, caption, r.width()) + 2
        side = max(8.0, min(r.width(), r.height() - label_h))
        cell = side / s.tile
        x0, y0 = r.left(), r.top() + label_h
        p.setPen(QColor(theme.text))
        p.setFont(font)
        wrap = Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap
        p.drawText(QRectF(x0, r.top(), r.width(), label_h), wrap, caption)
        empty, accent = QColor(theme.panel), QColor(theme.accent)
        idle = idle_colour(theme)
        fm = p.fontMetrics()
        # each thread's count where it fits at the figure size; else none (each cell says it on hover)
        show_numbers = fm.horizontalAdvance(str(s.k)) + 2 <= cell and fm.height() <= cell
        stored_boxes = []
        for ty in range(s.tile):
            for tx in range(s.tile):
                box = QRectF(x0 + tx * cell, y0 + ty * cell, cell, cell)
                terms = state.terms[ty][tx]
                inside = self.shape is not None and self._inside(tx, ty)
                fill = (
                    mix_colours(empty.name(), accent.name(), 0.15 + 0.85 * terms / s.k)
                    if inside and terms
                    else (empty if inside else idle)
                )
                p.fillRect(box.adjusted(0.5, 0.5, -0.5, -0.5), fill)
                if state.stored[ty][tx]:
                    stored_boxes.append(box)
                self.hits.append(
                    (
                        box,
                        f"thread ({tx}, {ty}): {terms} of {s.k} products added"
                        + (", its sum written to C" if state.stored[ty][tx] else "")
                        if inside
                        else f"thread ({tx}, {ty}): outside C, computes nothing",
                    )
                )
                if show_numbers and inside and terms:
                    p.setPen(QColor(theme.accent_text if terms > s.k / 2 else theme.text))
                    p.drawText(box, Qt.AlignmentFlag.AlignCenter, str(terms))
        if stored_boxes:
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(QColor(theme.present), line_px(2)))
            p.drawRects([b.adjusted(1, 1, -1, -1) for b in stored_boxes])
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(QColor(theme.border), line_px(1)))
        p.drawRect(QRectF(x0, y0, side, side))

    def _inside(self, tx: int, ty: int) -> bool:
        s = self.shape
        assert s is not None
        bx, by = self.block
        return by * s.tile + ty < s.m and bx * s.tile + tx < s.n

    # --- the warps and the barrier they wait at ---------------------------------------------------
    def _warps_head(self, width: float) -> tuple[str, float]:
        """The warps' heading (the barrier they wait at) and the height it takes wrapped."""
        state = self.state
        assert state is not None
        warps = state.warps
        waiting = sum(1 for ws in warps if ws.startswith("at barrier"))
        barrier = 1 if "at barrier 1" in warps else 2 if "at barrier 2" in warps else 0
        tick = state.tick
        if barrier:
            head = f"__syncthreads() #{barrier}: {waiting} of {len(warps)} warps wait; it opens when all have arrived"
        elif tick is not None and tick.kind == "barrier":
            head = f"__syncthreads() #{tick.barrier} opened: all {len(warps)} warps arrived"
        else:
            head = f"the block's {count(len(warps), 'warp')}"
        return head, self._wrapped_height(self._font(1.0, bold=True), head, width) + 2

    def _paint_warps(self, p: QPainter, theme: Theme, r: QRectF, head: str, head_h: float) -> None:
        state = self.state
        assert state is not None
        warps = state.warps
        per_row = min(16, len(warps))
        box_w = min(px(64), (r.width() - 4) / per_row)
        box_h = float(self._warp_box_h())
        p.setFont(self._font(1.0, bold=True))
        p.setPen(QColor(theme.text))
        wrap = Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap
        p.drawText(QRectF(r.left(), r.top(), r.width(), head_h), wrap, head)
        p.setFont(self._font())
        fm = p.fontMetrics()
        active = QColor(theme.accent)
        for i, ws in enumerate(warps):
            box = QRectF(
                r.left() + (i % per_row) * box_w + 1,
                r.top() + head_h + (i // per_row) * box_h + 1,
                box_w - 2,
                box_h - 2,
            )
            if ws.startswith("at barrier"):
                fill, ink = waiting_colour(theme), QColor(theme.accent_text)
            elif ws in ("loading", "computing", "storing"):
                fill, ink = active, QColor(theme.accent_text)
            elif ws == "done":
                fill, ink = mix_colours(theme.panel, theme.present, 0.35), QColor(theme.text)
            else:
                fill, ink = idle_colour(theme), QColor(theme.muted)
            p.fillRect(box, fill)
            self.hits.append((box, f"warp {i} (threads {32 * i} to {32 * i + 31}): {ws}"))
            p.setPen(ink)
            word = WARP_WORDS[ws]
            # the longest words that fit the box at the figure size; none (said on hover) if none fits
            for text in (f"w{i} {word}" if word else f"w{i}", f"w{i}"):
                if fm.horizontalAdvance(text) + 4 <= box.width():
                    p.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
                    break
