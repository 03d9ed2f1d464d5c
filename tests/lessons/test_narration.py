"""Lesson narration: plain text with **bold**, `code`, ``- `` lists and links, and
nothing else is markup: arithmetic keeps its stars on the projector."""

from __future__ import annotations

from html import unescape

from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.lessons import narration
from explorer.lessons.model import BenchState, Recorded, Step
from explorer.lessons.texts import recorded_row, step_html


def _visible(html: str) -> str:
    """The characters a reader sees in the pane's rich text (tags off, entities decoded)."""
    import re

    return unescape(re.sub(r"<[^>]+>", "", html))


def test_arithmetic_keeps_its_stars():
    """``x = 10*32+5 = 325`` showed as an italic "x = 1032+5 = 325" under Markdown."""
    for text in ("x = 10*32+5 = 325", "i = 5 * 1024 + 400 = 5,520", "x**2 + y**2", "2**10 = 1024", "a*b*c"):
        assert narration.shown_text(text) == text
        assert _visible(narration.to_html(text)) == text
        assert narration.check(text) == []


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="ab19 *+=-()_#<>&[]\\/.:", min_size=1, max_size=60))
def test_a_line_without_its_marks_shows_exactly_as_typed(text):
    """Any line with no backtick and no pair of stars opening bold reads as typed, in the plain
    text and in the pane's escaped HTML: no character is a mark but the three documented."""
    line = text.strip()
    if not line or "`" in line or line.startswith("- "):
        return
    blocks = narration.blocks(line)
    if any(r.kind == "bold" for b in blocks for r in b.runs):
        return  # "**a b**" is bold by design: the property is about everything else
    assert narration.shown_text(line) == line
    assert _visible(narration.to_html(line)) == line


def test_the_three_marks():
    text = "\n".join(
        [
            "A kernel runs as a **grid of blocks**,",
            "written over two lines.",
            "",
            "- each thread: `i = blockIdx.x * blockDim.x + threadIdx.x`",
            "- see https://docs.nvidia.com/cuda/.",
            "",
            "**Look for:** <the> & idle lanes",
        ]
    )
    blocks = narration.blocks(text)
    assert [b.kind for b in blocks] == ["paragraph", "item", "item", "paragraph"]
    assert blocks[0].plain == "A kernel runs as a grid of blocks, written over two lines."
    assert [(r.kind, r.text) for r in blocks[0].runs][1] == ("bold", "grid of blocks")
    assert ("code", "i = blockIdx.x * blockDim.x + threadIdx.x") in [(r.kind, r.text) for r in blocks[1].runs]
    assert ("link", "https://docs.nvidia.com/cuda/") in [(r.kind, r.text) for r in blocks[2].runs]
    html = narration.to_html(text)
    assert "<b>Look for:</b> &lt;the&gt; &amp; idle lanes" in html and "<ul><li>" in html
    assert narration.check(text) == []


def test_recorded_results_are_escaped_and_never_rows_of_the_narration():
    """A lesson file is text anyone may write: the heading of its recorded results is escaped, and
    its 20,000 points are never rows of the narration's document (laying those out stalled the
    window; the player's table draws only the rows on screen)."""
    from explorer.bench.results import BenchPoint

    points = tuple(
        BenchPoint(
            workload="matmul", variant="<b>cpu</b>", device="cpu", size=n, size_label=f"n={n}", median_s=1e-3
        )
        for n in range(1, 20_001)
    )
    step = Step("benchmarks", BenchState(recorded=Recorded("a <i>laptop</i>", "2026-11-23", points)))
    html = step_html(step)
    assert "a &lt;i&gt;laptop&lt;/i&gt;" in html and "20,000 points" in html
    assert "<tr>" not in html and "cpu</b>" not in html
    assert recorded_row(points[0])[:2] == ("<b>cpu</b>", "n=1")  # the table shows it as text
