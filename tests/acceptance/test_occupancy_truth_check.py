"""The GPM occupancy check's judgement, with cases as fixtures: each launch's GPM SM occupancy
within 10 points of the occupancy the app predicts; a launch GPM could not read keeps its reason
and no verdict. The launches themselves run on the GPU machine."""

from __future__ import annotations

from explorer.acceptance.checks_launch import OCCUPANCY_TRUTH_LAUNCHES, OCCUPANCY_TRUTH_POINTS
from explorer.acceptance.judge import GpmOccupancyCase, occupancy_truth_figures, status_of
from explorer.acceptance.registry import CHECKS


def test_three_launches_within_ten_points_pass_and_one_beyond_is_a_miss():
    cases = [
        GpmOccupancyCase("a", 100.0, 93.5),
        GpmOccupancyCase("b", 50.0, 59.9),
        GpmOccupancyCase("c", 26.6, 18.0),
    ]
    figures = occupancy_truth_figures(cases, OCCUPANCY_TRUTH_POINTS)
    assert [f.met for f in figures] == [True, True, True]
    assert status_of(True, figures) == "pass"
    assert figures[1].note == "+9.9 points" and figures[2].reference == 26.6
    figures = occupancy_truth_figures([*cases[:2], GpmOccupancyCase("c", 26.6, 37.0)], OCCUPANCY_TRUTH_POINTS)
    assert [f.met for f in figures] == [True, True, False] and status_of(True, figures) == "miss"


def test_a_launch_gpm_could_not_read_has_no_verdict_and_says_why():
    why = "NVML's GPM metrics are not available for this GPU"
    (figure,) = occupancy_truth_figures([GpmOccupancyCase("a", 50.0, None, why)], 10)
    assert figure.value is None and figure.met is None and figure.note == why


def test_three_launches_are_registered():
    assert len(OCCUPANCY_TRUTH_LAUNCHES) == 3
    assert "occupancy_truth" in [c.name for c in CHECKS]
