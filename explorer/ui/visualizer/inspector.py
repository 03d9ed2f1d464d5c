"""What the pointer is on: a thread's coordinates and the index sum it does, from ``ThreadInfo``."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QLabel, QVBoxLayout, QWidget

from explorer.launch.schedule import ThreadInfo
from explorer.ui.theme import current_theme

HINT = "Hover over or click a block, a warp or a lane to see which thread it is and how it finds its element."


class Inspector(QGroupBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Inspector", parent)
        lay = QVBoxLayout(self)
        self.label = QLabel(HINT)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.label.setStyleSheet("font-size: 14px;")
        lay.addWidget(self.label)
        self.info: ThreadInfo | None = None

    def show_hint(self) -> None:
        self.info = None
        self.label.setText(HINT)

    def show_slot(self, sm: int, slot: int | None, wave_label: str) -> None:
        self.info = None
        where = f"SM {sm}" + (f", block slot {slot}" if slot is not None else "")
        self.label.setText(f"<b>{escape(where)}</b>: empty now ({escape(wave_label)}).")

    def show_no_thread(self, block_text: str, warp: int, lane: int) -> None:
        self.info = None
        self.label.setText(
            f"<b>{escape(block_text)}</b>, warp {warp}, lane {lane}: <b>no thread</b>. The block's size is not a "
            "multiple of 32, so its last warp is partial: this lane does nothing but still occupies a warp slot."
        )

    def show_thread(self, info: ThreadInfo, pinned: bool) -> None:
        self.info = info
        t = current_theme()
        if info.extent is not None:
            pos, e = info.global_position, info.extent
            where = f"({pos.x}, {pos.y})" if e.z == 1 else f"({pos.x}, {pos.y}, {pos.z})"
            size = f"{e.x} x {e.y}" if e.z == 1 else f"{e.x} x {e.y} x {e.z}"
            state = (
                f"<span style='color:{t.error}'><b>idle</b>: position {where} is outside the {size} problem, "
                "the bounds check skips it</span>"
                if info.idle
                else f"<span style='color:{t.accent}'><b>works</b> on element {where} of {size}</span>"
            )
        else:
            state = (
                f"<span style='color:{t.error}'><b>idle</b>: its index is past N, the <code>if (i &lt; n)</code> "
                "skips it</span>"
                if info.idle
                else f"<span style='color:{t.accent}'><b>works</b> on element {info.global_linear}</span>"
            )
        rows = [
            ("blockIdx", str(info.block_idx)),
            ("threadIdx", str(info.thread_idx)),
            ("blockDim", str(info.block_dim)),
            ("gridDim", str(info.grid_dim)),
            ("warp, lane", f"warp {info.warp} of its block, lane {info.lane}"),
            ("runs on", f"SM {info.sm}, wave {info.wave + 1}"),
        ]
        table = "".join(
            f"<tr><td style='padding-right:8px'><b>{escape(k)}</b></td><td>{escape(v)}</td></tr>"
            for k, v in rows
        )
        title = "Selected thread" if pinned else "Thread under the pointer"
        self.label.setText(
            # the verdict before the formula: a 3D formula is long and may run past the bottom
            f"<b>{title}</b><table>{table}</table><p>{state}</p>"
            f"<p><b>Global index</b><br><code style='font-size:15px'>{escape(info.formula())}</code></p>"
        )
