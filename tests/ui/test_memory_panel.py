"""The Memory page shows what explorer.memory computes, and its words are the CLI's."""

from __future__ import annotations

import pytest

from explorer.memory import texts
from explorer.memory.banks import SharedAccess, bank_conflicts
from explorer.memory.coalescing import GlobalAccess, coalesce
from explorer.memory.presets import BRANCH_PRESETS, GLOBAL_PATTERNS, SHARED_PATTERNS
from explorer.ui.memory.panel import MemoryPanel


@pytest.fixture
def panel(qtbot):
    p = MemoryPanel(None)
    qtbot.addWidget(p)
    p.resize(1280, 740)
    p.show()
    return p


def test_every_coalescing_preset_draws_the_models_answer(panel):
    tab = panel.coalescing
    for i, pattern in enumerate(GLOBAL_PATTERNS):
        tab.preset.setCurrentIndex(i)
        expected = coalesce(
            GlobalAccess(
                elem_bytes=pattern.elem_bytes,
                stride=pattern.stride,
                offset=pattern.offset,
                active_lanes=pattern.active,
            )
        )
        assert tab.canvas.result == expected
        assert tab.headline.text() == texts.coalescing_headline(expected)
        tab.canvas.grab()  # paints without raising
    tab.preset.setCurrentIndex(2)  # stride 32: 32 sectors 128 bytes apart, the gaps between left out
    drawn = tab.canvas.drawn_sectors()
    c = tab.canvas.result
    assert list(c.sectors) == list(range(0, 128, 4)) and c.dram.bytes == 64
    # each lone sector with the other half of its 64-byte DRAM granule, drawn paler
    assert tab.canvas.dram_only_sectors() == set(range(1, 128, 4))
    assert [s for s in drawn if s is not None] == sorted([*range(0, 128, 4), *range(1, 128, 4)])
    assert drawn.count(None) == 31
    tab.canvas.grab()
    said = [words for _rect, words in tab.canvas.hits]
    assert "sector 5: bytes 160 to 191, not fetched, but DRAM moves it with its 64-byte granule" in said
    assert sum(words.startswith("DRAM granule ") for words in said) == 32
    assert "64\u2011byte granules" in tab.legend.text()
    tab.preset.setCurrentIndex(0)  # unit stride: four sectors, two whole granules, nothing paler
    assert tab.canvas.dram_only_sectors() == set()
    assert [s for s in tab.canvas.drawn_sectors() if s is not None] == [0, 1, 2, 3]
    assert "granules" not in tab.legend.text()  # no paler sector: no row for them in the key


def test_the_paler_sectors_are_exactly_what_dram_moves_beyond_the_fetched_ones(panel):
    """Over random patterns and granule sizes, the smallest (one lane) included: the paler sectors
    and the fetched ones are disjoint and together fill the DRAM granules, counted byte by byte."""
    import random

    from explorer.memory.coalescing import SECTOR_BYTES, coalesce, dram_granularity

    canvas = panel.coalescing.canvas
    rng = random.Random(7)
    for case in range(2000):
        granule = rng.choice((32, 64, 128))
        access = GlobalAccess(
            elem_bytes=rng.choice((1, 2, 4, 8, 16)),
            stride=rng.randrange(0, 70),
            offset=rng.randrange(0, 40),
            active_lanes=1 if case < 50 else rng.randrange(1, 33),
        )
        c = coalesce(access, dram=dram_granularity(granule))
        canvas.result = c
        moved = set()
        for lane in c.lanes:
            for byte in range(lane.address, lane.address + access.elem_bytes):
                first = byte // granule * granule
                moved |= {b // SECTOR_BYTES for b in range(first, first + granule)}
        paler = canvas.dram_only_sectors()
        assert not paler & set(c.sectors)
        assert paler | set(c.sectors) == moved


def test_editing_a_preset_never_leaves_its_name_on_other_numbers(panel):
    tab = panel.coalescing
    tab.preset.setCurrentIndex(0)  # unit stride
    tab.stride.setValue(7)
    assert tab.preset.currentText() == "Custom"
    assert "7 apart" in tab.headline.text()
    tab.stride.setValue(32)  # the numbers of a preset again: its name comes back
    assert tab.preset.currentText() == GLOBAL_PATTERNS[2].name


def test_the_padding_toggle_fixes_the_transpose_conflict_live(panel):
    tab = panel.banks
    tab.preset.setCurrentIndex([p.name for p in SHARED_PATTERNS].index("Column of tile[32][32]"))
    assert tab.canvas.result.conflict_degree == 32
    assert "32-way bank conflict" in tab.headline.text()
    tab.pad.setChecked(True)
    assert tab.canvas.result == bank_conflicts(SharedAccess(stride=33))
    assert "conflict-free" in tab.headline.text()
    stacks = tab.canvas.stacks()
    assert max(len(words) for words in stacks[0].values()) == 1


def test_divergence_presets_and_the_warp_aligned_lesson(panel):
    tab = panel.divergence
    names = [b.name for b in BRANCH_PRESETS]
    tab.preset.setCurrentIndex(names.index("Even threads (t % 2 == 0)"))
    assert tab.canvas.result.diverged_warps == 8
    tab.preset.setCurrentIndex(names.index("Whole warps ((t / 32) % 2 == 0)"))
    assert tab.canvas.result.diverged_warps == 0
    assert "SIMT efficiency 100%" in tab.headline.text()
    tab.block.setValue(100)
    assert len(tab.canvas.result.warps) == 4 and tab.canvas.result.warps[3].lanes == 4


def test_both_themes_paint(panel, qapp):
    from explorer.ui.theme import apply_theme

    for name in ("dark", "light"):
        theme = apply_theme(qapp, name)
        panel.apply_theme(theme)
        for tab in (panel.coalescing, panel.banks, panel.divergence):
            panel.tabs.setCurrentWidget(tab)
            assert not tab.canvas.grab().isNull()


def test_a_changed_condition_never_keeps_its_branch_presets_name(panel):
    tab = panel.divergence
    names = [b.name for b in BRANCH_PRESETS]
    tab.preset.setCurrentIndex(names.index("Whole warps ((t / 32) % 2 == 0)"))
    tab.k.setValue(4)
    assert tab.preset.currentText() == "Custom"
    assert "(threadIdx.x / 32) % 4 == 0" in tab.headline.text()
    tab.kind.setCurrentIndex(0)  # t % K with K = 4: still no preset
    assert tab.preset.currentText() == "Custom"
    tab.k.setValue(2)  # t % 2 == 0: the even-threads preset's condition, so its name comes back
    assert tab.preset.currentText() == "Even threads (t % 2 == 0)"


def test_screenshot_views_are_the_three_tabs(panel):
    from explorer.errors import UserError

    for view in ("banks", "divergence", "coalescing"):
        panel.show_screenshot_view(view)
        assert panel.lesson_state().view == view
    with pytest.raises(UserError, match="coalescing, banks, divergence"):
        panel.show_screenshot_view("caches")


def test_the_tabs_show_what_the_session_holds_and_hand_it_every_edit(panel):
    """The fields are views of ``panel.session``: a change made on the model (a lesson step, a
    preset) shows in the fields, and an edit in a field reaches the model."""
    session = panel.session
    session.coalescing.load("", (8, 3, 5, 20), warp=2)
    tab = panel.coalescing
    assert (tab.elem.currentText(), tab.stride.value(), tab.offset.value(), tab.active.value()) == (
        "8 bytes",
        3,
        5,
        20,
    )
    assert tab.warp.value() == 2 and tab.preset.currentText() == "Custom"
    assert tab.headline.text() == session.coalescing.result.headline
    assert tab.canvas.result == session.coalescing.result.coalescing
    tab.offset.setValue(9)
    assert session.coalescing.inputs.offset == 9
    panel.banks.pad.setChecked(True)
    assert session.banks.pad and panel.banks.result == session.banks.result.conflicts
    session.divergence.set_kind("random")
    div = panel.divergence
    assert div.kind.currentText() == "random" and div.p.isEnabled() and not div.k.isEnabled()
    div.k.setEnabled(True)
    session.divergence.set_kind("mod")
    div.k.setValue(0)  # t % 0: the model keeps it and says why; the field's line shows it
    assert session.divergence.inputs.k == 0
    assert div.error.text() == session.divergence.result.problem != ""
