"""The picture: every SM of the device, its block slots, and each resident block drawn as its warps.

A custom-painted widget rather than a QGraphicsScene: an H100 holds up to 132 x 32 blocks at once
and a frame must stay under a few milliseconds, so nothing here is an item per block or per thread.
What is drawn is only the current wave's resident blocks, each one a cached picture ("tile") of its
warps: all full blocks look alike, so a frame is one background pixmap plus one ``drawPixmap`` per
resident block. Level of detail is per tile size: lanes when a lane is at least a few pixels wide,
warp strips when a warp is at least 2 pixels tall, else the block's lanes and warps shrunk to its
pixels; either way an idle lane is drawn where it sits in its warp.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPoint, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetrics,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import QSizePolicy, QWidget

from explorer.launch.animation import Animation
from explorer.launch.plan_records import WaveFill
from explorer.launch.session import Hit
from explorer.ui.guard import qt_guard
from explorer.ui.theme import figure_font, figure_px, line_px, px, readable_px
from explorer.ui.visualizer import palette

CELL_GAP = 6


BUSY, IDLE, NO_THREAD = 0, 1, 2


def lane_states(active: list[int], masks: list[int], lanes: int) -> np.ndarray:
    """(warps, lanes) array of BUSY, IDLE (a thread the bounds check skips) or NO_THREAD (past a
    partial warp's last thread), from each warp's thread count and busy-lane bit mask."""
    lane = np.arange(lanes)
    out = np.full((len(active), lanes), NO_THREAD, dtype=np.int8)
    for warp, (a, mask) in enumerate(zip(active, masks, strict=True)):
        busy = ((mask >> lane) & 1).astype(bool)
        out[warp, lane < a] = IDLE
        out[warp, busy & (lane < a)] = BUSY
    return out


def downsample(states: np.ndarray, width: int, height: int | None = None) -> np.ndarray:
    """``states`` (warps x lanes) shrunk to ``height`` x ``width`` pixels (``None``: one row per
    warp, kept). A pixel is NO_THREAD where most of it lies past a partial warp's end; among the
    others the idle share is spread by error diffusion, so each region shows its true share of
    idle pixels (a 3D block whose every other warp idles reads as half idle throughout, not as
    a slab, and one whose lanes 4-7, 12-15, ... idle shows stripes, not a solid right half)."""
    warps, lanes = states.shape

    def overlap(n_px: int, n_cells: int) -> np.ndarray:
        edges = np.arange(n_cells + 1) * n_px / n_cells
        lo, hi = np.arange(n_px)[:, None], np.arange(n_px)[:, None] + 1
        return np.clip(np.minimum(hi, edges[1:]) - np.maximum(lo, edges[:-1]), 0, None)

    wx = overlap(width, lanes)  # (width, lanes)
    wy = np.eye(warps) if height is None else overlap(height, warps)  # (rows, warps)
    busy, idle, none = (wy @ (states == s).astype(float) @ wx.T for s in (BUSY, IDLE, NO_THREAD))
    threads = busy + idle
    out = np.where(none > threads, NO_THREAD, BUSY).astype(np.int8)
    share = np.divide(idle, threads, out=np.zeros_like(idle), where=threads > 0)
    rows, cols = share.shape
    down = height is not None  # a row per warp keeps its error to itself: it is that warp's share
    for y in range(rows):  # Floyd-Steinberg over the thread pixels
        for x in range(cols):
            if out[y, x] == NO_THREAD:
                continue
            chosen = 1.0 if share[y, x] >= 0.5 else 0.0
            if chosen:
                out[y, x] = IDLE
            err = share[y, x] - chosen
            if x + 1 < cols:
                share[y, x + 1] += err * (7 / 16 if down else 1.0)
            if down and y + 1 < rows:
                if x > 0:
                    share[y + 1, x - 1] += err * 3 / 16
                share[y + 1, x] += err * 5 / 16
                if x + 1 < cols:
                    share[y + 1, x + 1] += err / 16
    return out


def runs(row: np.ndarray) -> list[tuple[int, int, int]]:
    """(start, stop, state) of each stretch of equal pixels in a row: one fillRect each."""
    cuts = [0, *(np.flatnonzero(np.diff(row)) + 1).tolist(), len(row)]
    return [(a, b, int(row[a])) for a, b in zip(cuts, cuts[1:], strict=False)]


Busy = tuple[
    tuple[int, ...], tuple[int, ...]
]  # a block with idle lanes: busy lanes and busy-lane masks per warp
TILE_GAP = 3
MIN_LANE_PX_FOR_LANES = 4.0
MIN_WARP_PX_FOR_WARPS = 2.0
#: the least side of a block's tile, in pixels, that a picture asks its view for (it scrolls
#: rather than draw a block as a line)
MIN_TILE_PX = 5


@dataclass(frozen=True)
class GridLayout:
    """Where each SM, slot and tile goes for one widget size and one launch shape (pixels)."""

    sm_count: int
    slots: int  # resident blocks per SM
    warps: int  # warps per block
    lanes: int  # warp size
    cols: int
    rows: int
    cell_w: float
    cell_h: float
    label_h: float
    bar_h: float
    slot_cols: int
    slot_rows: int
    tile_w: int
    tile_h: int
    pad: float

    @property
    def lod(self) -> str:
        """ "lanes", "warps" or "blocks": how much of a block the tile can show."""
        lane_w = self.tile_w / self.lanes
        warp_h = self.tile_h / self.warps
        if lane_w >= MIN_LANE_PX_FOR_LANES and warp_h >= MIN_LANE_PX_FOR_LANES:
            return "lanes"
        if warp_h >= MIN_WARP_PX_FOR_WARPS:
            return "warps"
        return "blocks"

    def cell_origin(self, sm: int) -> tuple[int, int]:
        """Whole pixels, so every SM's cell is the same picture and can be blitted from one pixmap."""
        col, row = sm % self.cols, sm // self.cols
        return (
            int(CELL_GAP + col * (self.cell_w + CELL_GAP)),
            int(CELL_GAP + row * (self.cell_h + CELL_GAP)),
        )

    def slot_offset(self, slot: int) -> tuple[int, int]:
        """Top-left of a slot's tile inside its SM's cell."""
        sc, sr = slot % self.slot_cols, slot // self.slot_cols
        x = self.pad + sc * (self.tile_w + TILE_GAP)
        y = self.label_h + self.bar_h + sr * (self.tile_h + TILE_GAP)
        return (int(x), int(y))

    def slot_origin(self, sm: int, slot: int) -> tuple[int, int]:
        x0, y0 = self.cell_origin(sm)
        dx, dy = self.slot_offset(slot)
        return (x0 + dx, y0 + dy)

    def slot_rects(self, first: int, stop: int) -> list[QRect]:
        """Rectangles (relative to the cell) covering slots ``first .. stop - 1``: at most three."""
        if stop <= first:
            return []
        sc = self.slot_cols
        r0, r1 = first // sc, (stop - 1) // sc
        spans = [(r0, first % sc, (stop - 1) % sc if r0 == r1 else sc - 1, r0)]
        if r1 > r0:
            if r1 - r0 > 1:
                spans.append((r0 + 1, 0, sc - 1, r1 - 1))
            spans.append((r1, 0, (stop - 1) % sc, r1))
        rects = []
        for row_a, c0, c1, row_b in spans:
            x0, y0 = self.slot_offset(row_a * sc + c0)
            x1, y1 = self.slot_offset(row_b * sc + c1)
            rects.append(QRect(x0, y0, x1 - x0 + self.tile_w, y1 - y0 + self.tile_h))
        return rects

    def hit(self, x: float, y: float) -> Hit | None:
        col = int((x - CELL_GAP) // (self.cell_w + CELL_GAP))
        row = int((y - CELL_GAP) // (self.cell_h + CELL_GAP))
        if col < 0 or row < 0 or col >= self.cols:
            return None
        sm = row * self.cols + col
        if sm >= self.sm_count:
            return None
        x0, y0 = self.cell_origin(sm)
        if x > x0 + self.cell_w or y > y0 + self.cell_h:
            return None
        for slot in range(self.slots):
            sx, sy = self.slot_origin(sm, slot)
            if sx <= x < sx + self.tile_w and sy <= y < sy + self.tile_h:
                warp = min(int((y - sy) * self.warps / self.tile_h), self.warps - 1)
                lane = min(int((x - sx) * self.lanes / self.tile_w), self.lanes - 1)
                return Hit(sm, slot, warp, lane)
        return Hit(sm)


NOWHERE = Hit(-1)


def compute_layout(
    width: int,
    height: int,
    sm_count: int,
    slots: int,
    warps: int,
    lanes: int,
    label_range: tuple[float, float] = (9.0, 22.0),
    min_cell_w: float = 8.0,
) -> GridLayout:
    """Choose SM columns and slot columns that give each lane the most pixels.

    ``label_range`` bounds the height of each SM's number strip (pixels): the picture keeps the
    numbers readable (an H100's 132 SMs) before it gives the blocks more room, and so does
    ``min_cell_w``, the width the widest SM number needs: fewer, wider columns rather than a
    number shrunk to a smudge. (Only where no column count allows it does a cell get narrower.)"""
    best = _best_layout(width, height, sm_count, slots, warps, lanes, label_range, min_cell_w)
    if best is None and min_cell_w > 8.0:
        # cells too narrow for their numbers (``sm_labels`` leaves them out): no number strip,
        # the blocks take its height (an H100's blocks under F11 were 5 px tall under 26 px of
        # empty strip, and its running SMs looked empty)
        best = _best_layout(width, height, sm_count, slots, warps, lanes, (2.0, 2.0), 8.0)
    if best is None:  # absurdly small widget: one pixel per thing, still no crash
        best = GridLayout(sm_count, slots, warps, lanes, 1, sm_count, 8, 8, 9, 2, 1, slots, 1, 1, 0)
    return best


def _best_layout(
    width: int,
    height: int,
    sm_count: int,
    slots: int,
    warps: int,
    lanes: int,
    label_range: tuple[float, float],
    min_cell_w: float,
) -> GridLayout | None:
    best: GridLayout | None = None
    best_score = -1.0
    for cols in range(1, sm_count + 1):
        rows = math.ceil(sm_count / cols)
        cell_w = (width - (cols + 1) * CELL_GAP) / cols
        cell_h = (height - (rows + 1) * CELL_GAP) / rows
        if cell_w < min_cell_w or cell_h < 8:
            continue
        label_h = max(label_range[0], min(label_range[1], cell_h * 0.16))
        bar_h = max(2.0, min(6.0, cell_h * 0.04))
        pad = 3.0
        area_w = cell_w - 2 * pad
        area_h = cell_h - label_h - bar_h - pad
        if area_w < 2 or area_h < 2:
            continue
        for slot_cols in range(1, slots + 1):
            slot_rows = math.ceil(slots / slot_cols)
            tile_w = (area_w - (slot_cols - 1) * TILE_GAP) / slot_cols
            tile_h = (area_h - (slot_rows - 1) * TILE_GAP) / slot_rows
            if tile_w < 1 or tile_h < 1:
                continue
            # the lane's smaller side, with a bonus for square-ish lanes (easier to read)
            score = min(tile_w / lanes, tile_h / warps) * 4 + tile_w * tile_h / (lanes * warps) * 0.01
            if score > best_score:
                best_score = score
                best = GridLayout(
                    sm_count, slots, warps, lanes, cols, rows, cell_w, cell_h, label_h, bar_h,
                    slot_cols, slot_rows, int(tile_w), int(tile_h), pad,
                )  # fmt: skip
    return best


class SmGrid(QWidget):
    """Paints the SMs of the animation's plan and the blocks resident on them at this moment."""

    # Hit(sm=-1) means "over nothing", so receivers always get a Hit and never have to test for None
    hovered = Signal(object)  # Hit
    clicked = Signal(object)  # Hit

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(160, 120)  # the scroll area fits it to the view until zoomed
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self._anim: Animation | None = None
        self.empty_text = "Choose a device and a launch configuration"  # shown with no animation
        self._layout: GridLayout | None = None
        self._background: QPixmap | None = None
        self._tiles: dict[tuple, QPixmap] = {}
        # the current wave drawn so far: background plus the blocks already landed; a frame only
        # adds the blocks that landed since the last one, then blits this picture
        self._wave_pm: QPixmap | None = None
        self._wave_key: tuple | None = None
        self._wave_drawn = 0
        self._warp_active: list[int] = []
        self.selected: tuple[int, int, int] | None = None  # (block, warp, lane) shown in the inspector
        self._last_hover: Hit | None = None

    @qt_guard
    def sizeHint(self) -> QSize:
        return QSize(800, 560)

    # --- state --------------------------------------------------------------------------
    def set_animation(self, anim: Animation | None) -> None:
        self._anim = anim
        self.invalidate()

    @property
    def animation(self) -> Animation | None:
        """The launch animation drawn (None: ``empty_text`` is shown instead)."""
        return self._anim

    @property
    def cached_pictures(self) -> int:
        """How many block and SM pictures are cached: a wave is drawn from a few of them, however
        many blocks it has (an H100 holds 1,056 at once)."""
        return len(self._tiles)

    def invalidate(self) -> None:
        """Forget the layout and cached pictures (new plan or new size)."""
        self._layout = None
        self._background = None
        self._tiles.clear()
        self._wave_pm = None
        self._wave_key = None
        self.update()

    def layout_now(self) -> GridLayout | None:
        if self._anim is None:
            return None
        if self._layout is None:
            plan = self._anim.plan
            self._layout = self._layout_for(self.width(), self.height())
            self._warp_active = [plan.warp_active_lanes(0, w) for w in range(plan.warps_per_block)]
        return self._layout

    def _layout_for(self, width: int, height: int) -> GridLayout:
        assert self._anim is not None
        plan = self._anim.plan
        text_h = float(QFontMetrics(self.sm_label_font()).height())
        return compute_layout(
            width, height, plan.sm_count, max(plan.resident_blocks_per_sm, 1),
            plan.warps_per_block, plan.warp_size, (text_h + 2, text_h * 1.5),
            self.sm_label_width(plan.sm_count),
        )  # fmt: skip

    def height_for_width(self, width: int, up_to: int = 4000) -> int:
        """The least height (pixels) at which every SM of the launch gets a cell with its number
        and room for its blocks at ``width``; 0 with no launch, ``up_to`` when none does. A
        view short of it (compare mode's two pictures on a small screen) scrolls instead of
        squeezing 132 SMs into a strip."""
        if self._anim is None:
            return 0

        def fits(h: int) -> bool:
            lay = self._layout_for(width, h)
            # the fallback layout is smaller; a block thinner than MIN_TILE_PX was a 1 px line,
            # and an H100's running SMs under F11 looked empty
            room = lay.cell_h >= lay.label_h + lay.bar_h + lay.pad + 2
            return room and min(lay.tile_w, lay.tile_h) >= MIN_TILE_PX

        lo, hi = 8, up_to
        if not fits(hi):
            return up_to
        while hi - lo > 4:  # a few pixels are not worth more passes
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if fits(mid) else (mid, hi)
        return hi

    @qt_guard
    def sm_label_font(self) -> QFont:
        """The SM numbers' font: bold, nine tenths of the label text (the theme's figure rule)."""
        return figure_font(0.9, bold=True, base=self.font())

    def sm_label_width(self, sm_count: int) -> float:
        """The cell width the widest SM number needs, with the padding: the layout prefers fewer,
        wider columns to numbers that do not fit."""
        return QFontMetrics(self.sm_label_font()).horizontalAdvance(str(sm_count - 1)) + 10.0

    def sm_labels(self, lay: GridLayout) -> str:
        """How the SMs are named in their strips: "SM 12" where that fits the cell, "12" where
        only the number does, "" (left out: the inspector names the SM under the pointer) where
        not even the number fits at a readable size or the strip is too short for it."""
        fm = QFontMetrics(self.sm_label_font())
        room = lay.cell_w - 2 * lay.pad
        if fm.height() > lay.label_h + 1:
            return ""
        if fm.horizontalAdvance(f"SM {lay.sm_count - 1}") < room:
            return "long"
        return "short" if fm.horizontalAdvance(str(lay.sm_count - 1)) <= room else ""

    @qt_guard
    def resizeEvent(self, event) -> None:
        self.invalidate()
        super().resizeEvent(event)

    def apply_text_scale(self) -> None:
        """SM numbers and block numbers follow the text size; the theme's canvas too (a repaint)."""
        self.invalidate()

    # --- pictures --------------------------------------------------------------------------
    def _cell_size(self, lay: GridLayout) -> QSize:
        return QSize(int(lay.cell_w) + 1, int(lay.cell_h) + 1)

    def _empty_cell(self, lay: GridLayout) -> QPixmap:
        """One SM with every slot empty; every SM of the background is a copy of it."""
        c = palette.canvas()
        pm = QPixmap(self._cell_size(lay))
        pm.fill(c.ground)
        p = QPainter(pm)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        border = line_px(1.5)
        p.setPen(QPen(c.sm_border, border))
        p.setBrush(c.sm_face)
        p.drawRoundedRect(
            QRectF(border / 2, border / 2, lay.cell_w - border, lay.cell_h - border), px(4), px(4)
        )
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        hatch = QBrush(c.hatch, Qt.BrushStyle.BDiagPattern)
        for slot in range(lay.slots):
            x, y = lay.slot_offset(slot)
            r = QRect(x, y, lay.tile_w, lay.tile_h)
            p.fillRect(r, c.empty_slot)
            p.fillRect(r, hatch)
        p.end()
        return pm

    def _full_cell(self, lay: GridLayout, running: bool, busy: Busy | None = None) -> QPixmap:
        """One SM with the same block in every slot: the source landed blocks are blitted from."""
        key = ("cell", running, busy)
        pm = self._tiles.get(key)
        if pm is None:
            pm = self._empty_cell(lay)
            p = QPainter(pm)
            tile = self.block_tile(lay, running, busy)
            for slot in range(lay.slots):
                p.drawPixmap(*lay.slot_offset(slot), tile)
            p.end()
            self._tiles[key] = pm
        return pm

    def _render_background(self, lay: GridLayout) -> QPixmap:
        c = palette.canvas()
        pm = QPixmap(self.size())
        pm.fill(c.ground)
        p = QPainter(pm)
        p.setFont(self.sm_label_font())
        p.setPen(c.text)
        cell = self._empty_cell(lay)
        naming = self.sm_labels(lay)
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        for sm in range(lay.sm_count):
            x0, y0 = lay.cell_origin(sm)
            p.drawPixmap(x0, y0, cell)
            if naming:
                label = f"SM {sm}" if naming == "long" else str(sm)
                p.drawText(QRectF(x0 + lay.pad, y0, lay.cell_w - 2 * lay.pad, lay.label_h), align, label)
        p.end()
        return pm

    def block_tile(self, lay: GridLayout, running: bool, busy: Busy | None) -> QPixmap:
        """One block's picture; ``busy`` is (busy lanes per warp, busy-lane masks per warp), None when all work."""
        key = (running, busy)
        tile = self._tiles.get(key)
        if tile is not None:
            return tile
        w, h = max(lay.tile_w, 1), max(lay.tile_h, 1)
        tile = QPixmap(w, h)
        base = palette.RUNNING if running else palette.DONE
        tile.fill(palette.RUNNING_DARK if running else QColor("#6b7280"))
        p = QPainter(tile)
        lanes, warps = lay.lanes, lay.warps
        lod = lay.lod
        no_thread = palette.canvas().no_thread
        if lod == "lanes":
            gap = 1 if h / warps >= 3 else 0
            for warp in range(warps):
                y0 = int(warp * h / warps)
                y1 = int((warp + 1) * h / warps) - gap
                active = self._warp_active[warp]
                mask = (1 << active) - 1 if busy is None else busy[1][warp]
                for lane in range(lanes):
                    x0 = int(lane * w / lanes)
                    x1 = int((lane + 1) * w / lanes) - 1
                    colour = base if (mask >> lane) & 1 else palette.IDLE_LANE if lane < active else no_thread
                    p.fillRect(x0, y0, x1 - x0, y1 - y0, colour)
        else:
            # too small for a cell per lane: each pixel takes the state most of its lanes (and, for
            # a whole block, its warps) are in, so idle lanes stay where they are in the warp (a 3D
            # block's x-edge idles lanes 4-7, 12-15, ... of every warp: stripes, not one slab)
            masks = [(1 << a) - 1 for a in self._warp_active] if busy is None else list(busy[1])
            states = lane_states(self._warp_active, masks, lanes)
            colours = (base, palette.IDLE_LANE, no_thread)
            if lod == "warps":
                gap = 1 if h / warps >= 3 else 0
                rows = downsample(states, w)
                for warp in range(warps):
                    y0 = int(warp * h / warps)
                    y1 = int((warp + 1) * h / warps) - gap
                    for x0, x1, state in runs(rows[warp]):
                        p.fillRect(x0, y0, x1 - x0, y1 - y0, colours[state])
            else:
                picture = downsample(states, w, h)
                for y in range(h):
                    for x0, x1, state in runs(picture[y]):
                        p.fillRect(x0, y, x1 - x0, 1, colours[state])
        p.end()
        self._tiles[key] = tile
        return tile

    def _wave_picture(self, lay: GridLayout, fill: WaveFill, running: bool) -> QPixmap:
        """The current wave as drawn so far, brought up to ``fill``: only SMs that gained blocks are touched."""
        assert self._background is not None and self._anim is not None
        key = (id(self._anim.plan), fill.wave, running)
        if self._wave_pm is None or key != self._wave_key or fill.dispatched < self._wave_drawn:
            self._wave_pm = self._background.copy()
            self._wave_key = key
            self._wave_drawn = 0
        if fill.dispatched > self._wave_drawn:
            wp = QPainter(self._wave_pm)
            rects: dict[tuple[int, int], list[QRect]] = {}  # most SMs gain the same slots

            def blit(cell: QPixmap, start: int, stop: int) -> None:
                for sm, first, end in fill.spans(start, stop):
                    x0, y0 = lay.cell_origin(sm)
                    span = rects.get((first, end))
                    if span is None:
                        span = rects[(first, end)] = lay.slot_rects(first, end)
                    for r in span:
                        wp.drawPixmap(r.translated(x0, y0), cell, r)

            blit(self._full_cell(lay, running), self._wave_drawn, fill.dispatched)
            for run in self._anim.idle_blocks().runs:  # blocks with idle lanes, drawn over
                if run.stop > self._wave_drawn and run.start < fill.dispatched:
                    cell = self._full_cell(lay, running, (run.busy_lanes, run.busy_masks))
                    blit(cell, max(run.start, self._wave_drawn), min(run.stop, fill.dispatched))
            wp.end()
            self._wave_drawn = fill.dispatched
        return self._wave_pm

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        lay = self.layout_now()
        if lay is None or self._anim is None:
            p.fillRect(self.rect(), palette.canvas().ground)
            p.setPen(palette.canvas().muted)
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self.empty_text)
            return
        if self._background is None or self._background.size() != self.size():
            self._background = self._render_background(lay)
        clip = event.rect()
        frame = self._anim.frame()
        fill = self._anim.fill()
        if fill is None:
            p.drawPixmap(clip, self._background, clip)
            p.end()
            return
        running = frame.phase in ("dispatch", "run")
        p.drawPixmap(clip, self._wave_picture(lay, fill, running), clip)
        tw, th = lay.tile_w, lay.tile_h
        if frame.phase in ("run", "retire") and fill.busy_sms:
            bar_w = lay.cell_w - 2 * lay.pad
            filled = bar_w * frame.run_progress
            bars = []
            for sm in range(fill.busy_sms):
                x0, y0 = lay.cell_origin(sm)
                bars.append(QRectF(x0 + lay.pad, y0 + lay.label_h, filled, lay.bar_h - 1))
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(palette.PROGRESS)
            p.drawRects(bars)
        self._draw_block_numbers(p, lay, fill)
        where = fill.position(self.selected[0]) if self.selected is not None else None
        if where is not None and self.selected is not None:
            x, y = lay.slot_origin(*where)
            sel_rect = QRect(x, y, tw, th)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(palette.SELECTION, line_px(3)))
            grow = px(2)
            p.drawRect(sel_rect.adjusted(-grow, -grow, grow, grow))
            _, warp, lane = self.selected
            if lay.lod != "blocks":
                y0 = sel_rect.top() + int(warp * th / lay.warps)
                y1 = sel_rect.top() + int((warp + 1) * th / lay.warps)
                p.setPen(QPen(QColor("#000000"), line_px(2)))
                if lay.lod == "lanes":
                    x0 = sel_rect.left() + int(lane * tw / lay.lanes)
                    x1 = sel_rect.left() + int((lane + 1) * tw / lay.lanes)
                    p.drawRect(QRect(QPoint(x0 - 1, y0 - 1), QPoint(x1, y1)))
                else:
                    p.drawRect(QRect(QPoint(sel_rect.left(), y0), QPoint(sel_rect.right(), y1)))
        p.end()

    #: more blocks than this in one wave and their tiles are too small for a number anyway
    MAX_NUMBERED_BLOCKS = 1024

    def block_numbers(self, lay: GridLayout, fill: WaveFill) -> tuple[QFont, list[tuple[QRectF, str]]] | None:
        """Each landed block's number and the corner of its tile it goes in (blockIdx for a 2D or
        3D grid), when every number of the wave fits its tile at a readable size (the theme's
        ``readable_px`` or more); ``None`` otherwise: numbers on some blocks and not others would
        mislead, and a zoom or the inspector (hover) gives them."""
        assert self._anim is not None
        plan = self._anim.plan
        if fill.dispatched == 0 or fill.dispatched > self.MAX_NUMBERED_BLOCKS:
            return None
        grid = plan.config.grid
        flat = grid.y == 1 and grid.z == 1

        def text(block: int) -> str:
            if flat:
                return f"{block:,}"
            idx = plan.block_index(block)
            return f"{idx.x},{idx.y}" if grid.z == 1 else f"{idx.x},{idx.y},{idx.z}"

        texts = [text(b) for b in range(fill.first_block, fill.first_block + fill.dispatched)]
        font = figure_font(bold=True, base=self.font())
        room_w, room_h = lay.tile_w - 4, lay.tile_h - 2
        widest = max(texts, key=len)
        for size in range(min(figure_px(1.1), int(room_h)), readable_px() - 1, -1):
            font.setPixelSize(size)
            fm = QFontMetrics(font)
            if fm.horizontalAdvance(widest) + 6 <= room_w and fm.height() <= room_h:
                break
        else:
            return None
        placed = []
        for i, words in enumerate(texts):
            slot, sm = divmod(i, fill.sm_count)
            x, y = lay.slot_origin(sm, slot)
            placed.append((QRectF(x + 1, y + 1, fm.horizontalAdvance(words) + 6, fm.height()), words))
        return font, placed

    def _draw_block_numbers(self, p: QPainter, lay: GridLayout, fill: WaveFill) -> None:
        numbers = self.block_numbers(lay, fill)
        if numbers is None:
            return
        font, placed = numbers
        p.setFont(font)
        pill = QColor(0, 0, 0, 150)  # white on a dark pill reads on blue, grey and red tiles alike
        for rect, words in placed:
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(pill)
            p.drawRoundedRect(rect, 3, 3)
            p.setPen(QColor("#ffffff"))
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, words)

    # --- pointer ---------------------------------------------------------------------------
    def hit_at(self, x: float, y: float) -> Hit | None:
        lay = self.layout_now()
        return None if lay is None else lay.hit(x, y)

    def slot_center(self, sm: int, slot: int, warp: int = 0, lane: int = 0) -> QPoint:
        """Pixel centre of a lane of a slot (tests click there)."""
        lay = self.layout_now()
        assert lay is not None
        x, y = lay.slot_origin(sm, slot)
        return QPoint(
            int(x + (lane + 0.5) * lay.tile_w / lay.lanes), int(y + (warp + 0.5) * lay.tile_h / lay.warps)
        )

    @qt_guard
    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        hit = self.hit_at(event.position().x(), event.position().y())
        if hit != self._last_hover:
            self._last_hover = hit
            self.hovered.emit(hit if hit is not None else NOWHERE)

    @qt_guard
    def leaveEvent(self, event) -> None:
        """The pointer left the SMs: nothing is under it any more (the inspector falls back)."""
        if self._last_hover is not None:
            self._last_hover = None
            self.hovered.emit(NOWHERE)
        super().leaveEvent(event)

    @qt_guard
    def mousePressEvent(self, event: QMouseEvent) -> None:
        hit = self.hit_at(event.position().x(), event.position().y())
        if hit is not None:
            self.clicked.emit(hit)
