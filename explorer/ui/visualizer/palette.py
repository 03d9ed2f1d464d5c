"""The visualizer's colours, chosen to stay apart on a washed-out classroom projector.

One place for them so the legend can never disagree with the picture.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor

from explorer.ui.theme import current_theme

RUNNING = QColor("#2563eb")  # blue: a lane whose thread runs
RUNNING_DARK = QColor("#1e40af")  # warp outline / gaps
QUEUED = QColor("#f59e0b")  # amber: blocks waiting for a slot
DONE = QColor("#9ca3af")  # grey: retired blocks
IDLE_LANE = QColor("#ef4444")  # red: a thread outside the problem, launched but doing nothing
NO_THREAD = QColor("#f3f4f6")  # near white: a lane with no thread (the partial last warp)
EMPTY_SLOT = QColor("#e5e7eb")  # a block slot with nothing in it
EMPTY_SLOT_HATCH = QColor("#cbd5e1")
SM_BACKGROUND = QColor("#ffffff")
SM_BORDER = QColor("#475569")
TEXT = QColor("#111827")
MUTED_TEXT = QColor("#4b5563")
SELECTION = QColor("#10b981")  # green: what the inspector shows
PROGRESS = QColor("#22c55e")


@dataclass(frozen=True)
class Canvas:
    """What the SM picture, the wave bar and the occupancy graphs are painted on, per theme.

    The block colours above mean the same in both themes; the ground, the SM faces, the empty
    slots, the no-thread lanes and the text follow the theme, so a dark room gets a dark picture.
    """

    ground: QColor  # around the SMs, behind the wave bar and the graphs
    sm_face: QColor
    sm_border: QColor
    empty_slot: QColor
    hatch: QColor
    no_thread: QColor
    text: QColor
    muted: QColor
    grid_line: QColor


LIGHT_CANVAS = Canvas(
    ground=QColor("#f8fafc"),
    sm_face=SM_BACKGROUND,
    sm_border=SM_BORDER,
    empty_slot=EMPTY_SLOT,
    hatch=EMPTY_SLOT_HATCH,
    no_thread=NO_THREAD,
    text=TEXT,
    muted=MUTED_TEXT,
    grid_line=EMPTY_SLOT,
)
DARK_CANVAS = Canvas(
    ground=QColor("#1b1d21"),
    sm_face=QColor("#25282d"),
    sm_border=QColor("#8a94a6"),
    empty_slot=QColor("#353a42"),
    hatch=QColor("#4a515c"),
    no_thread=QColor("#6b7280"),
    text=QColor("#f2f4f7"),
    muted=QColor("#c3c8d0"),
    grid_line=QColor("#3a3f47"),
)


def canvas() -> Canvas:
    """The canvas of the theme in use (looked up at paint time, so a theme switch is a repaint)."""
    return DARK_CANVAS if current_theme().name == "dark" else LIGHT_CANVAS


def legend() -> tuple[tuple[str, QColor, str], ...]:
    """(name, colour, what it means) in the order the legend shows them, in the theme's colours."""
    c = canvas()
    return (
        ("running", RUNNING, "thread running"),
        ("queued", QUEUED, "block waiting"),
        ("done", DONE, "block finished"),
        ("idle", IDLE_LANE, "idle lane (outside N)"),
        ("partial", c.no_thread, "no thread (partial warp)"),
        ("empty", c.empty_slot, "empty block slot"),
    )


#: colours cycled by block index in the real-run strip: none of them is a legend colour (running
#: blue, waiting amber, finished grey, idle red, selection green), so a strip never seems to say
#: "waiting" or "idle" (one colour scheme per meaning)
BLOCK_CYCLE = tuple(QColor(c) for c in ("#7c3aed", "#db2777", "#0891b2", "#65a30d", "#a16207", "#4f46e5"))
UNTOUCHED = QColor("#111827")
