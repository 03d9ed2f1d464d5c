"""The SM view and the Timeline name their placement the same way, and the name is true: the SM
view's waves are the Timeline's placement "free" with blocks of equal length, block for block."""

from __future__ import annotations

import pytest

from explorer.devices.catalog import load_catalog
from explorer.devices.names import best_match
from explorer.launch.config import parse_launch
from explorer.launch.dispatch import (
    POLICIES,
    POLICY_WORDS,
    SM_VIEW_POLICY,
    placement_words,
    simulate_dispatch,
    sm_view_placement,
)
from explorer.launch.durations import parse_durations
from explorer.launch.schedule import SCHEDULER_NOTE, plan_launch


@pytest.mark.parametrize(
    ("device", "grid", "block"),
    [("GTX 1650", "98", "1024"), ("GTX 1650", "50", "256"), ("A100", "1000", "96"), ("H100", "7", "32")],
)
def test_the_sm_view_places_blocks_as_the_timelines_free_placement(device, grid, block):
    (gpu,) = best_match(device, load_catalog())
    plan = plan_launch(parse_launch(grid, block, "0", "32"), gpu)
    timeline = simulate_dispatch(plan, parse_durations("uniform"), SM_VIEW_POLICY).timeline
    for b in range(plan.total_blocks):
        placed = plan.placement(b)
        assert (int(timeline.sm[b]), int(timeline.start[b])) == (placed.sm, placed.wave), b


def test_one_wording_for_the_placement():
    for policy in POLICIES:
        assert placement_words(policy) == f"placement {policy}: {POLICY_WORDS[policy]}"
    caption = sm_view_placement()
    assert f"placement {SM_VIEW_POLICY} with blocks of equal length" in caption
    assert "round-robin model" not in caption  # the Timeline's round-robin is another placement
    assert f"placement {SM_VIEW_POLICY} with blocks of equal length" in SCHEDULER_NOTE
