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
from explorer.units import binary_bytes, half_up, pct_text, percent_text, share_pct


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


# --- percentages: halves round up (issue 27: 6.25% showed "6.2%") ----------------------------------


def _reference_half_up(value: float, digits: int) -> Fraction:
    """The number as written (its shortest repr) rounded to ``digits`` decimals, a tie going away
    from zero: brute force with exact fractions."""
    exact = Fraction(repr(float(value))) * 10**digits
    whole = math.floor(abs(exact) + Fraction(1, 2))
    return Fraction(whole if exact >= 0 else -whole, 10**digits)


@settings(max_examples=3000, deadline=None)
@given(
    st.one_of(
        st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
        # the ties themselves: k + 5 / 10^(d+1), written with few digits
        st.builds(
            lambda k, d: round(k / 10**d + 5 / 10 ** (d + 1), d + 1),
            st.integers(-(10**5), 10**5),
            st.integers(0, 3),
        ),
    ),
    st.integers(0, 3),
)
def test_half_up_rounds_the_number_as_written(value, digits):
    text = half_up(value, digits)
    assert Fraction(text) == _reference_half_up(value, digits)
    shown = pct_text(value, digits, trim=False)
    assert shown.endswith("%") and Fraction(shown[:-1]) == abs(_reference_half_up(value, digits)) * (
        1 if _reference_half_up(value, digits) >= 0 else -1
    )
    assert Fraction(pct_text(value, digits)[:-1]) == Fraction(shown[:-1])  # trimming drops zeros only


@pytest.mark.parametrize(
    ("fraction", "digits", "trim", "text"),
    [
        (0.0625, 1, True, "6.3%"),
        (0.125, 0, True, "13%"),
        (0.09, 1, False, "9.0%"),
        (0.5, 1, True, "50%"),
        (-0.0001, 1, True, "0%"),
    ],
)
def test_percent_text_examples(fraction, digits, trim, text):
    assert percent_text(fraction, digits, trim) == text


@settings(max_examples=2000, deadline=None)
@given(st.floats(min_value=0, max_value=1000, allow_nan=False))
def test_share_pct_keeps_two_significant_digits_below_ten_and_rounds_halves_up(value):
    shown = share_pct(value)
    assert shown.endswith(" %")
    number = Fraction(shown[:-2])
    if 0 < value < 10:
        exact = Fraction(repr(value))
        digits = 1 - math.floor(math.log10(exact)) if exact >= Fraction(1, 10**300) else 0
        # the log of a power of ten may come out a hair under: the reference recomputes it exactly
        while exact >= Fraction(10) ** (1 - digits + 1):
            digits -= 1
        while exact < Fraction(10) ** (1 - digits):
            digits += 1
        assert number == _reference_half_up(value, digits)
    else:
        assert number == _reference_half_up(value, 0)
