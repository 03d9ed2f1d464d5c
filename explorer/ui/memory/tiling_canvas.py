"""The tiled matmul stepper's picture, painted from what ``explorer.memory.tiling_steps`` computed.

Three panels side by side: global memory (A, B and C to scale, the block's strip of A and of B and
the tiles of the current phase marked), shared memory (As and Bs, cell by cell: loaded, a padded
zero, left from the last phase, or empty) and the block's partial sums (each thread's share of K
added so far). Below, the block's warps with what each is doing and which wait at a barrier.
Colours come from the theme; painted text takes its size from the app's text scale (``px``).
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from explorer.memory.tiling import MatmulShape
from explorer.memory.tiling_steps import BlockState, CellState, WarpState
from explorer.ui.guard import qt_guard
from explorer.ui.memory.canvas import _mix, idle_colour
from explorer.ui.theme import Theme, current_theme, px

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
        "zero": _mix(theme.panel, theme.catalog, 0.45),
        "stale": _mix(theme.panel, theme.muted, 0.35),
        "empty": idle_colour(theme),
    }[state]


def waiting_colour(theme: Theme) -> QColor:
    return QColor(theme.catalog)


class TilingCanvas(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.shape: MatmulShape | None = None
        self.block = (0, 0)
        self.state: BlockState | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(360, 240)

    @qt_guard
    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(760, px(300))

    def show_state(self, shape: MatmulShape, block: tuple[int, int], state: BlockState) -> None:
        self.shape, self.block, self.state = shape, block, state
        self.update()

    def _font(self, size: float, bold: bool = False) -> QFont:
        font = QFont(self.font())
        font.setPixelSize(max(7, int(size)))
        font.setBold(bold)
        return font

    def _fitting(self, text: str, size: float, width: float, bold: bool = False) -> QFont:
        """The font of ``size`` pixels (the text scale's), smaller only as far as ``text`` must
        shrink to fit ``width``."""
        font = self._font(size, bold)
        advance = QFontMetricsF(font).horizontalAdvance(text)
        return self._font(size * min(1.0, width / advance), bold) if advance > 0 else font

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        theme = current_theme()
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(theme.panel))
        if self.shape is None or self.state is None:
            p.end()
            return
        w, h = float(self.width()), float(self.height())
        margin = 8.0
        title_h = float(px(18))
        warps_h = min(h * 0.3, px(26) * (1 + (self.shape.warps_per_block - 1) // 16) + title_h + px(8))
        top_h = h - warps_h - 2 * margin
        col_w = (w - 2 * margin) / 3
        panels = [QRectF(margin + i * col_w, margin, col_w - margin, top_h) for i in range(3)]
        titles = ("Global memory", "Shared memory", "Partial sums")
        widest = max(titles, key=lambda t: QFontMetricsF(self._font(px(13), True)).horizontalAdvance(t))
        p.setFont(self._fitting(widest, px(13), col_w - 2 * margin, bold=True))
        p.setPen(QColor(theme.text))
        for r, text in zip(panels, titles, strict=True):
            p.drawText(QRectF(r.left(), r.top(), r.width(), title_h), Qt.AlignmentFlag.AlignLeft, text)
        body = [QRectF(r.left(), r.top() + title_h + 4, r.width(), r.height() - title_h - 4) for r in panels]
        self._paint_global(p, theme, body[0])
        self._paint_shared(p, theme, body[1])
        self._paint_sums(p, theme, body[2])
        self._paint_warps(p, theme, QRectF(margin, h - warps_h - margin / 2, w - 2 * margin, warps_h))
        p.end()

    # --- global memory: A (M x K) bottom left, B (K x N) top right, C (M x N) bottom right --------
    def _paint_global(self, p: QPainter, theme: Theme, r: QRectF) -> None:
        s, state = self.shape, self.state
        assert s is not None and state is not None
        label_h = float(px(14))
        gap = float(px(10))
        scale = min((r.width() - gap) / (s.k + s.n), (r.height() - gap - label_h) / (s.k + s.m))
        x0, y0 = r.left(), r.top()
        a = QRectF(x0, y0 + s.k * scale + gap, s.k * scale, s.m * scale)
        b = QRectF(x0 + s.k * scale + gap, y0, s.n * scale, s.k * scale)
        c = QRectF(b.left(), a.top(), s.n * scale, s.m * scale)
        t, (bx, by) = s.tile, self.block
        phase = state.phase
        light = _mix(theme.panel, theme.accent, 0.18)
        middle = _mix(theme.panel, theme.accent, 0.45)
        strong = QColor(theme.accent)
        p.setPen(QPen(QColor(theme.border), 1))
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
            p.setPen(QPen(_mix(theme.panel, theme.border, 0.9), 1))
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
        p.setFont(self._fitting("B 1024x1024", px(12), r.width() / 2))
        p.setPen(QColor(theme.text))
        metrics = p.fontMetrics()
        for rect, name in ((a, f"A {s.m}x{s.k}"), (b, f"B {s.k}x{s.n}"), (c, f"C {s.m}x{s.n}")):
            width = metrics.horizontalAdvance(name) + 4
            below = QRectF(rect.left(), rect.bottom() + 2, max(rect.width(), width), label_h)
            if rect is b:  # B's label goes beside it: below it is C
                below = QRectF(rect.left() - width - 2, rect.top(), width, label_h)
            p.drawText(below, Qt.AlignmentFlag.AlignLeft, name)

    # --- shared memory: As and Bs cell by cell --------------------------------------------------
    def _paint_shared(self, p: QPainter, theme: Theme, r: QRectF) -> None:
        s, state = self.shape, self.state
        assert s is not None and state is not None
        label_h = float(px(16))
        gap = float(px(10))
        side = max(8.0, min((r.width() - gap) / 2, r.height() - label_h))
        cell = side / s.tile
        loading = state.tick.warp if state.tick is not None and state.tick.kind == "load" else -1
        p.setFont(self._fitting("As[ty][tx]", px(12), side))
        for i, (tile, name) in enumerate(((state.a_tile, "As[ty][tx]"), (state.b_tile, "Bs[ty][tx]"))):
            x0, y0 = r.left() + i * (side + gap), r.top() + label_h
            p.setPen(QColor(theme.text))
            p.drawText(QRectF(x0, r.top(), side + gap, label_h), Qt.AlignmentFlag.AlignLeft, name)
            groups: dict[CellState, list[QRectF]] = {}
            outlined = []
            for ty, row in enumerate(tile):
                for tx, what in enumerate(row):
                    box = QRectF(x0 + tx * cell, y0 + ty * cell, cell, cell)
                    groups.setdefault(what, []).append(box)
                    if (tx + ty * s.tile) // 32 == loading:
                        outlined.append(box)
            p.setPen(QPen(QColor(theme.panel), 1) if cell >= 6 else Qt.PenStyle.NoPen)
            for what, boxes in groups.items():
                p.setBrush(cell_colour(theme, what))
                p.drawRects(boxes)
            if outlined:
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.setPen(QPen(QColor(theme.text), 2))
                top = min(b.top() for b in outlined)
                bottom = max(b.bottom() for b in outlined)
                left = min(b.left() for b in outlined)
                right = max(b.right() for b in outlined)
                p.drawRect(QRectF(left, top, right - left, bottom - top))
            if cell >= px(11) and "zero" in groups:
                p.setPen(QColor(theme.text))
                for box in groups["zero"]:
                    p.drawText(box, Qt.AlignmentFlag.AlignCenter, "0")
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(QColor(theme.border), 1))
            p.drawRect(QRectF(x0, y0, side, side))

    # --- each thread's partial sum: the share of K it has added --------------------------------
    def _paint_sums(self, p: QPainter, theme: Theme, r: QRectF) -> None:
        s, state = self.shape, self.state
        assert s is not None and state is not None
        label_h = float(px(16))
        side = max(8.0, min(r.width(), r.height() - label_h))
        cell = side / s.tile
        x0, y0 = r.left(), r.top() + label_h
        p.setPen(QColor(theme.text))
        caption = f"products added, of K = {s.k}"
        p.setFont(self._fitting(caption, px(12), r.width()))
        p.drawText(QRectF(x0, r.top(), r.width(), label_h), Qt.AlignmentFlag.AlignLeft, caption)
        empty, accent = QColor(theme.panel), QColor(theme.accent)
        idle = idle_colour(theme)
        font = self._font(min(cell * 0.42, px(12)))
        p.setFont(font)
        show_numbers = p.fontMetrics().horizontalAdvance(str(s.k)) + 2 <= cell and cell >= px(12)
        stored_boxes = []
        for ty in range(s.tile):
            for tx in range(s.tile):
                box = QRectF(x0 + tx * cell, y0 + ty * cell, cell, cell)
                terms = state.terms[ty][tx]
                inside = self.shape is not None and self._inside(tx, ty)
                fill = (
                    _mix(empty.name(), accent.name(), 0.15 + 0.85 * terms / s.k)
                    if inside and terms
                    else (empty if inside else idle)
                )
                p.fillRect(box.adjusted(0.5, 0.5, -0.5, -0.5), fill)
                if state.stored[ty][tx]:
                    stored_boxes.append(box)
                if show_numbers and inside and terms:
                    p.setPen(QColor(theme.accent_text if terms > s.k / 2 else theme.text))
                    p.drawText(box, Qt.AlignmentFlag.AlignCenter, str(terms))
        if stored_boxes:
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(QColor(theme.present), 2))
            p.drawRects([b.adjusted(1, 1, -1, -1) for b in stored_boxes])
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(QColor(theme.border), 1))
        p.drawRect(QRectF(x0, y0, side, side))

    def _inside(self, tx: int, ty: int) -> bool:
        s = self.shape
        assert s is not None
        bx, by = self.block
        return by * s.tile + ty < s.m and bx * s.tile + tx < s.n

    # --- the warps and the barrier they wait at ---------------------------------------------------
    def _paint_warps(self, p: QPainter, theme: Theme, r: QRectF) -> None:
        state = self.state
        assert state is not None
        warps = state.warps
        per_row = min(16, len(warps))
        title_h = float(px(18))
        box_w = min(px(64), (r.width() - 4) / per_row)
        rows = 1 + (len(warps) - 1) // per_row
        box_h = min(float(px(26)), (r.height() - title_h - 4) / rows)
        waiting = sum(1 for ws in warps if ws.startswith("at barrier"))
        barrier = 1 if "at barrier 1" in warps else 2 if "at barrier 2" in warps else 0
        tick = state.tick
        if barrier:
            head = f"__syncthreads() #{barrier}: {waiting} of {len(warps)} warps wait; it opens when all have arrived"
        elif tick is not None and tick.kind == "barrier":
            head = f"__syncthreads() #{tick.barrier} opened: all {len(warps)} warps arrived"
        else:
            head = f"the block's {len(warps)} warp{'s' if len(warps) != 1 else ''}"
        p.setFont(self._fitting(head, px(13), r.width(), bold=True))
        p.setPen(QColor(theme.text))
        p.drawText(QRectF(r.left(), r.top(), r.width(), title_h), Qt.AlignmentFlag.AlignLeft, head)
        p.setFont(self._font(min(box_h * 0.4, box_w / 4.5, px(12))))
        active = QColor(theme.accent)
        for i, ws in enumerate(warps):
            box = QRectF(
                r.left() + (i % per_row) * box_w + 1,
                r.top() + title_h + (i // per_row) * box_h + 1,
                box_w - 2,
                box_h - 2,
            )
            if ws.startswith("at barrier"):
                fill, ink = waiting_colour(theme), QColor(theme.accent_text)
            elif ws in ("loading", "computing", "storing"):
                fill, ink = active, QColor(theme.accent_text)
            elif ws == "done":
                fill, ink = _mix(theme.panel, theme.present, 0.35), QColor(theme.text)
            else:
                fill, ink = idle_colour(theme), QColor(theme.muted)
            p.fillRect(box, fill)
            p.setPen(ink)
            word = WARP_WORDS[ws]
            p.drawText(
                box, Qt.AlignmentFlag.AlignCenter, f"w{i} {word}" if word and box_w > px(44) else f"w{i}"
            )
