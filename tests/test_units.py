"""Sizes read the same in the CLI, the window and a run's CSV (explorer.units)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.bench.workloads import get_workload
from explorer.commands.devices import _row
from explorer.devices.model import CpuDevice
from explorer.ui import formatting
from explorer.units import binary_bytes
from explorer.words import percent


@pytest.mark.parametrize(
    "n,digits,text",
    [
        (80 * 2**30, 1, "80 GiB"),
        (int(15.5 * 2**30), 1, "15.5 GiB"),
        (48 * 1024, 1, "48 KiB"),
        (3 * 2**19, 2, "1.5 MiB"),
        (1000, 1, "1000 B"),
        (2**40 * 1536, 1, "1,536 TiB"),
        (None, 1, "n/a"),
    ],
)
def test_sizes_in_binary_units_without_trailing_zeros(n, digits, text):
    assert binary_bytes(n, digits) == text


def test_the_cli_the_window_and_a_benchmark_label_say_one_size_one_way():
    total = 16 * 2**30
    cpu = CpuDevice(name="Test CPU", key="cpu", memory_total_bytes=total, physical_cores=2, logical_cores=4)
    assert "16 GiB" in _row(cpu)  # the devices table (it said "16.0 GiB" while the window said 16 GiB)
    assert formatting.binary_bytes(total) == "16 GiB"
    assert get_workload("copies").size_label(3 * 2**19) == "1.5 MiB"  # the CSV said "1.50 MiB"


# --- percentages: halves round up (6.25% once showed "6.2%"), through the one helper --------------
# explorer.words.percent takes a share (0..1); what it shows is the share *as written* (its
# shortest repr) times 100, rounded to the decimals asked for with a tie going up, trailing zeros
# dropped. Its two rules beyond rounding (words.py): a share that is not zero never reads "0%"
# (two significant digits instead), one short of the whole never reads "100%" (">99.9%").


def _reference_half_up(exact: Fraction, digits: int) -> Fraction:
    """``exact`` rounded to ``digits`` decimals, a tie going away from zero: brute force."""
    scaled = exact * 10**digits
    whole = math.floor(abs(scaled) + Fraction(1, 2))
    return Fraction(whole if scaled >= 0 else -whole, 10**digits)


def _as_written(fraction: float) -> Fraction:
    """The share as a percentage, exactly, from the share as written."""
    return Fraction(repr(float(fraction))) * 100


def _two_significant_digits(exact: Fraction) -> int:
    """Decimals that give ``exact`` (not zero) two significant digits, found exactly."""
    digits = 0
    while abs(exact) >= Fraction(10) ** (2 - digits):
        digits -= 1
    while abs(exact) < Fraction(10) ** (1 - digits):
        digits += 1
    return max(0, digits)


@settings(max_examples=3000, deadline=None)
@given(
    st.one_of(
        st.floats(min_value=-1e4, max_value=1e4, allow_nan=False),
        # the ties themselves: a share whose percentage is k + 5 / 10^(d+1), written with few digits
        st.builds(
            lambda k, d: round((k / 10**d + 5 / 10 ** (d + 1)) / 100, d + 3),
            st.integers(-(10**5), 10**5),
            st.integers(0, 3),
        ),
    ),
    st.integers(0, 3),
)
def test_percent_rounds_the_share_as_written_halves_up(fraction, digits):
    shown = percent(fraction, decimals=digits)
    assert shown.endswith("%")
    exact = _as_written(fraction)
    rounded = _reference_half_up(exact, digits)
    if shown.startswith(">"):  # one short of the whole
        assert exact < 100 and rounded == 100 and shown == f">{100 - 10**-digits:.{digits}f}%"
    elif exact != 0 and rounded == 0:  # too small for the decimals asked: two significant digits
        assert Fraction(shown[:-1]) == _reference_half_up(exact, _two_significant_digits(exact))
    else:
        assert Fraction(shown[:-1]) == rounded
        assert not shown[:-1].endswith(".") and not ("." in shown and shown[:-1].endswith("0"))


@pytest.mark.parametrize(
    ("fraction", "digits", "text"),
    [
        (0.0625, 1, "6.3%"),  # 6.25 %: halves up, where Python's formatting printed 6.2%
        (0.125, 0, "13%"),
        (0.125, 1, "12.5%"),  # 12.5% occupancy no longer reads 12%
        (0.09, 1, "9%"),  # one rule everywhere: no trailing zeros, not "9.0%"
        (1.0, 1, "100%"),
        (0.5, 1, "50%"),
        (-0.0001, 1, "-0.01%"),  # not zero, so never "0%"
    ],
)
def test_percent_examples(fraction, digits, text):
    assert percent(fraction, decimals=digits) == text


@settings(max_examples=2000, deadline=None)
@given(st.floats(min_value=0, max_value=10, allow_nan=False))
def test_a_fine_share_keeps_two_significant_digits_below_ten_percent_and_rounds_halves_up(fraction):
    shown = percent(fraction, decimals=0, fine=True, spaced=True)
    assert shown.endswith(" %")
    exact = _as_written(fraction)
    if shown.startswith(">"):
        assert 99 < exact < 100 and shown == ">99 %"
        return
    number = Fraction(shown[:-2])
    if 0 < exact < 10:
        assert number == _reference_half_up(exact, _two_significant_digits(exact))
    else:
        assert number == _reference_half_up(exact, 0)
