"""The one size reader the CLI and the panel share, and the text it reads back."""

from __future__ import annotations

import pytest

from explorer.bench.sizes import parse_size, parse_sizes, sizes_range_text, sizes_text
from explorer.errors import UserError


@pytest.mark.parametrize(
    "text,value",
    [("1024", 1024), ("1e6", 1_000_000), ("4K", 4096), ("4KiB", 4096), ("1G", 2**30), ("16m", 16 * 2**20)],
)
def test_size_forms(text, value):
    assert parse_size(text) == value


def test_size_error_names_the_size():
    with pytest.raises(UserError, match="batch size is -1; it must be at least 1"):
        parse_size("-1", "batch size")


def test_a_list_keeps_the_typed_order_and_drops_repeats():
    assert parse_sizes("256, 64;128 64\t1K") == [256, 64, 128, 1024]


@pytest.mark.parametrize(
    ("text", "named"),
    [("64, 0, 128", " 0;"), ("64, -5", "-5"), ("64, abc", "'abc'"), ("1.5", "'1.5'"), ("  ", "no sizes")],
)
def test_the_first_bad_entry_is_named(text, named):
    with pytest.raises(UserError) as info:
        parse_sizes(text, "matrix size")
    assert named in str(info.value) and "\n" not in str(info.value)


def test_written_sizes_read_back_the_same():
    sizes = [4096, 1 << 20, 3 << 30, 1000]
    assert sizes_text(sizes, binary=True) == "4K, 1M, 3G, 1000"
    assert parse_sizes(sizes_text(sizes, binary=True)) == sizes
    assert sizes_range_text((64, 128, 256, 512, 1024)) == "64 … 1,024 (5 sizes)"
    # "N=10000000" without separators; a short list of big sizes stays two sizes
    assert sizes_range_text((1000, 10**7)) == "1,000; 10,000,000"
    assert sizes_range_text((64, 128)) == "64, 128"
    assert sizes_range_text((4096, 1 << 20), binary=True) == "4K, 1M"
