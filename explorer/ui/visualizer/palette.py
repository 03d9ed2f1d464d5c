"""The visualizer's colours, chosen to stay apart on a washed-out classroom projector.

One place for them so the legend can never disagree with the picture.
"""

from __future__ import annotations

from PySide6.QtGui import QColor

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

#: (name, colour, what it means) in the order the legend shows them
LEGEND = (
    ("running", RUNNING, "thread running"),
    ("queued", QUEUED, "block waiting"),
    ("done", DONE, "block finished"),
    ("idle", IDLE_LANE, "idle lane (outside N)"),
    ("partial", NO_THREAD, "no thread (partial warp)"),
    ("empty", EMPTY_SLOT, "empty block slot"),
)

#: colours cycled by block index in the real-run strip: none of them is a legend colour (running
#: blue, waiting amber, finished grey, idle red, selection green), so a strip never seems to say
#: "waiting" or "idle" (one colour scheme per meaning)
BLOCK_CYCLE = tuple(QColor(c) for c in ("#7c3aed", "#db2777", "#0891b2", "#65a30d", "#a16207", "#4f46e5"))
UNTOUCHED = QColor("#111827")
