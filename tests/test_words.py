"""One text helper each for shares, plurals and a device named on another machine:
every page, the CLI and the lessons write a share from a fraction (0..1) by one rule."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.words import count, from_percent, on_host, percent


@pytest.mark.parametrize(
    "fraction,kwargs,text",
    [
        (0.125, {}, "12.5%"),
        (0.5, {}, "50%"),
        (1.0, {}, "100%"),
        (0.0, {}, "0%"),
        (0.0039, {}, "0.4%"),  # 2 of 512 warp slots
        (0.0004, {}, "0.04%"),  # too small for one decimal: two significant digits, never 0%
        (0.9996, {}, ">99.9%"),  # never 100% when one short of the whole
        (0.483, {"decimals": 0}, "48%"),
        (0.9996, {"decimals": 0}, ">99%"),
        (0.0076, {"decimals": 0, "fine": True, "spaced": True}, "0.76 %"),  # one warp on one SM of 132
        (0.053, {"decimals": 0, "fine": True}, "5.3%"),
        (0.98, {"decimals": 0, "fine": True, "spaced": True}, "98 %"),
        (None, {}, "n/a"),
        (float("nan"), {"missing": "-"}, "-"),
    ],
)
def test_a_share_reads_one_way_everywhere(fraction, kwargs, text):
    assert percent(fraction, **kwargs) == text


@given(
    st.floats(min_value=0, max_value=1, exclude_min=True, exclude_max=True), st.integers(0, 2), st.booleans()
)
@settings(max_examples=2000, deadline=None)
def test_a_share_that_is_neither_none_nor_all_never_reads_as_either(fraction, decimals, fine):
    text = percent(fraction, decimals=decimals, fine=fine)
    assert text not in ("0%", "100%")
    assert "e" not in text  # never 1e-07%
    if not text.startswith(">"):
        # what is shown is the share, rounded to what is shown (half a unit of its last digit)
        shown = text.removesuffix("%")
        places = len(shown.split(".")[1]) if "." in shown else 0
        assert abs(float(shown) - 100 * fraction) <= 0.5 * 10**-places + 1e-9


def test_readings_in_percent_become_shares_and_nothing_stays_nothing():
    assert from_percent(42) == 0.42 and from_percent(None) is None
    assert percent(from_percent(42), decimals=0, spaced=True) == "42 %"


def test_plurals_and_hosts():
    assert count(1, "block") == "1 block" and count(0, "block") == "0 blocks"
    assert count(1024, "thread") == "1,024 threads"
    assert count(2, "process", "processes") == "2 processes"
    assert on_host("NVIDIA H100", "gpu-lab") == "NVIDIA H100 ON gpu-lab"
    assert on_host("CPU", "") == "CPU" and on_host("CPU", None) == "CPU"
