"""One colour per memory level, shared by the roofline, the bandwidth view and their legends: a
point is drawn in the colour of the level its data lives in, on the line of that level's roof.

Okabe-Ito, colour-blind safe and readable on a projector; from the cores outwards green, sky blue,
orange, vermillion (warm = slow). Each also carries its level's name in words ("fits in L2") in
the legend, the hover text and the table, so a washed-out projector loses nothing.
"""

from __future__ import annotations

from explorer.ui.theme import Theme

LEVEL_COLOURS = {"L1": "#009E73", "L2": "#56B4E9", "L3": "#E69F00", "DRAM": "#D55E00"}
#: a memory ceiling that names no level, and a point whose level is not known
NO_LEVEL_COLOUR = "#999999"


def level_colour(level: str, theme: Theme | None = None) -> str:
    """The colour of a memory level ("L2"); grey for none."""
    return LEVEL_COLOURS.get(level, NO_LEVEL_COLOUR)


def compute_colour(theme: Theme) -> str:
    """The compute roofs' colour: the plot's own text colour (they belong to no memory level)."""
    return theme.plot_foreground
