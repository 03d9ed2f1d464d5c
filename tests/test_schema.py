"""One schema for every record read from a file or another machine:
whole numbers stay within 64 bits, a number too large for a float is refused by name (never an
OverflowError), NaN and infinities are refused, wrong types are named, ranges are declared once
per record, and nested records are checked the same way."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.schema import MAX_INT, Ranges, SchemaError, build, check_value, loads, show


@dataclass
class Inner:
    kind: Literal["compute", "memory"]
    value: float
    RANGES: ClassVar[Ranges] = {"value": (0, 1e9)}


@dataclass
class Outer:
    name: str
    count: int = 0
    clock: float | None = None
    inners: list[Inner] = field(default_factory=list)
    RANGES: ClassVar[Ranges] = {"count": (0, 100), "clock": (0, 100)}


@pytest.mark.parametrize(
    "value,tp,words",
    [
        (10**400, int, "x is a 401-digit number, beyond the largest whole number kept"),
        (-(10**400), int, "a 401-digit number"),
        (2**63, int, "beyond the largest whole number kept, 9,223,372,036,854,775,807"),
        (10**400, float, "x is a 401-digit number, not a finite number"),
        (float("nan"), float, "x is NaN, not a finite number"),
        (float("inf"), float | None, "x is Infinity, not a finite number"),
        ("fast", float, 'x is "fast", not a number'),
        (True, int, "x is true, not a whole number"),
        (1.5, int | None, "x is 1.5, not a whole number"),
        ([1], str, "x is [1], not text"),
    ],
)
def test_a_value_that_does_not_fit_is_named_in_words(value, tp, words):
    with pytest.raises(SchemaError) as caught:
        check_value(value, tp, "x")
    assert words in str(caught.value)


def test_the_largest_values_that_fit_are_kept_exactly():
    assert check_value(MAX_INT, int, "x") == MAX_INT and check_value(-MAX_INT, int, "x") == -MAX_INT
    assert check_value(1e308, float, "x") == 1e308  # finite: a range names it, not the type
    assert check_value(2**1023, float, "x") == float(2**1023)
    assert check_value(None, float | None, "x") is None


def test_records_nest_and_ranges_are_declared_once_per_record():
    data = {"name": "cpu", "count": 3, "clock": 3.5, "inners": [{"kind": "compute", "value": 2}]}
    assert build(Outer, data) == Outer("cpu", 3, 3.5, [Inner("compute", 2.0)])
    for bad, words in [
        ({**data, "count": 101}, "count is 101, more than 100"),
        ({**data, "clock": 1e308}, "clock is 1e+308, more than 100"),
        (
            {**data, "inners": [{"kind": "compute", "value": 10**400}]},
            "inners[0]'s value is a 401-digit number",
        ),
        (
            {**data, "inners": [{"kind": "compute", "value": 2e9}]},
            "value is 2000000000.0, more than 1,000,000,000",
        ),
        (
            {**data, "inners": [{"kind": "disk", "value": 1}]},
            "kind is \"disk\", not one of 'compute', 'memory'",
        ),
        ({**data, "inners": [7]}, "inners[0] is 7, not an object of named values"),
    ]:
        with pytest.raises(SchemaError) as caught:
            build(Outer, bad, "the roof")
        assert words in str(caught.value), caught.value


def test_show_never_spells_out_a_huge_number():
    assert show(10**5000 - 1) == "a 5,000-digit number"
    assert len(show("x" * 10_000)) == 40


@given(st.integers())
def test_every_whole_number_is_kept_or_refused_never_raised_otherwise(n):
    try:
        assert check_value(n, int, "n") == n and abs(n) <= MAX_INT
    except SchemaError:
        assert abs(n) > MAX_INT
    try:
        assert math.isfinite(check_value(n, float, "n"))
    except SchemaError:
        assert abs(n) > 2**1023


@settings(max_examples=2000)
@given(st.integers(min_value=1, max_value=10**4000) | st.integers(min_value=1, max_value=10**20))
def test_the_digit_count_of_a_huge_number_is_exact(n):
    """Against the brute force (its text), up to Python's own limit for making that text."""
    from explorer.schema import _digits

    assert _digits(n) == len(str(n))


# --- the one decoder every JSON the app reads goes through ------------------------------------


@pytest.mark.parametrize(
    "data,words",
    [
        (b"", "it is empty"),
        (b"  \n", "it is empty"),
        (b"\xff{}", "it is not UTF-8 text (byte 0xff at offset 0)"),
        (b'{"a": NaN}', "NaN is not a number JSON allows"),
        (b'{"a": -Infinity}', "-Infinity is not a number JSON allows"),
        (b'{"a": ' + b"9" * 5000 + b"}", "a whole number of more than 4,300 digits"),
        (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
        (b"[" * 65 + b"]" * 65, "nested too deeply (more than 64 levels)"),
        (b'{"a": 1', "it is not valid JSON (Expecting ',' delimiter: line 1 column 8 (char 7))"),
        (b"x" * 20_000_001, "it is 20,000,001 bytes, more than the 20,000,000 it may hold"),
    ],
)
def test_the_one_decoder_refuses_each_hostile_input_in_words(data, words):
    with pytest.raises(SchemaError) as info:
        loads(data, max_bytes=20_000_000)
    assert words in str(info.value)
    assert "\n" not in str(info.value)


def test_the_one_decoder_keeps_what_the_app_writes():
    assert loads('\ufeff{"a": [1, 2.5, "x", null, true]}', max_bytes=None) == {"a": [1, 2.5, "x", None, True]}
    assert loads(b"[" * 64 + b"]" * 64, max_bytes=None) is not None  # 64 levels: the limit itself
    assert math.isnan(loads(b"[NaN]", max_bytes=None, allow_nan=True)[0])  # the agent protocol's timings
    # a literal beyond a float is infinity here, and the record refuses it by name
    assert loads(b"[1e400]", max_bytes=None) == [math.inf]
    with pytest.raises(SchemaError, match="clock is Infinity, not a finite number"):
        build(Outer, loads(b'{"name": "x", "clock": 1e400}', max_bytes=None))


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(), lambda c: st.lists(c, max_size=3)))
@settings(max_examples=300, deadline=None)
def test_the_one_decoder_reads_back_any_json_it_is_given(value):
    import json

    assert loads(json.dumps(value), max_bytes=None) == value
