"""The one set of parsers every typed value goes through (CLI options and window fields alike).

Each cause a fuzzer found is pinned here: unicode digits, 5000-digit numbers, 1e400, hex,
underscores, float rounding above 2**53, empty device, an unknown ~user, an overlong file name.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.errors import UserError
from explorer.inputs import (
    MAX_NUMBER_CHARS,
    MAX_WHOLE,
    InputError,
    one_line,
    parse_cc,
    parse_device_key,
    parse_dims,
    parse_output_path,
    parse_sizes,
    parse_whole,
    parse_window_size,
    shown,
)


@pytest.mark.parametrize(
    "text,value",
    [
        ("1024", 1024),
        (" 64 ", 64),
        ("-32", -32),
        ("1e6", 1_000_000),
        ("2.5e3", 2500),
        ("48K", 49152),
        ("48k", 49152),
        ("48KB", 49152),
        ("48KiB", 49152),
        ("1.5K", 1536),
        ("16M", 16 * 2**20),
        ("1G", 2**30),
        ("64B", 64),
        ("0e400", 0),
        ("9007199254740993", 2**53 + 1),  # above 2**53: exact, never rounded through float
        ("9.007199254740993e15", 2**53 + 1),
    ],
)
def test_whole_number_forms(text, value):
    assert parse_whole(text, "n") == value


@pytest.mark.parametrize(
    "text,needle",
    [
        ("8²", "digits 0-9"),
        ("٣", "digits 0-9"),
        ("１２", "digits 0-9"),
        ("0x10", "hexadecimal"),
        ("_1_", "whole number"),
        ("1_000", "whole number"),
        ("1.5", "whole number"),
        ("1e-3", "whole number"),
        ("12abc", "whole number"),
        ("abc12", "whole number"),
        ("", "empty"),
        ("   ", "empty"),
        ("nan", "whole number"),
        ("inf", "whole number"),
        ("1e400", "at most"),
        ("9" * 5000, f"at most {MAX_NUMBER_CHARS} characters"),
        ("1\n2", "whole number"),
    ],
)
def test_bad_whole_numbers_are_one_line_naming_the_value(text, needle):
    with pytest.raises(InputError) as info:
        parse_whole(text, "threads per block")
    message = str(info.value)
    assert isinstance(info.value, UserError)
    assert needle in message and message.startswith("threads per block")
    assert "\n" not in message and len(message) < 200


def test_bounds_name_the_limit():
    with pytest.raises(InputError, match=r"^repeats is 0; it must be at least 1$"):
        parse_whole("0", "repeats", minimum=1)
    with pytest.raises(InputError, match=r"^n is 2K \(= 2048\); it must be at most 1024$"):
        parse_whole("2K", "n", maximum=1024)
    with pytest.raises(InputError, match=f"at most {MAX_WHOLE}"):
        parse_whole("9" * 25, "n")
    with pytest.raises(InputError):
        parse_whole(True, "n")
    with pytest.raises(InputError):
        parse_whole(2.0, "n")


@given(st.integers(min_value=-MAX_WHOLE, max_value=MAX_WHOLE))
def test_every_int64_reads_back_exactly(n):
    assert parse_whole(str(n), "n") == n


@given(st.text(max_size=60))
def test_any_text_is_a_number_or_one_line(text):
    try:
        value = parse_whole(text, "n")
    except InputError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 200
    else:
        assert abs(value) <= MAX_WHOLE and text.strip().isascii()


def test_sizes_lists():
    assert parse_sizes("256, 64;128 64\t1K") == [256, 64, 128, 1024]
    assert parse_sizes("9007199254740993") == [2**53 + 1]
    with pytest.raises(InputError, match="^matrix size is '1e400'; it must be at most"):
        parse_sizes("1e400", "matrix size")
    with pytest.raises(InputError, match="at most 64"):
        parse_sizes(" ".join(["8"] * 65))


@pytest.mark.parametrize("prefix_of", ["1e400", "1e40000", "9" * 100])
def test_every_keystroke_of_a_hostile_size_is_a_size_or_one_line(prefix_of):
    """The Benchmarks sizes field parses on each keystroke: no prefix may raise anything else."""
    for end in range(1, len(prefix_of) + 1):
        try:
            parse_sizes(prefix_of[:end])
        except InputError as exc:
            assert "\n" not in str(exc)


def test_dims():
    assert parse_dims("64", "block") == (64,)
    assert parse_dims("16 x 16 x 4", "block") == (16, 16, 4)
    assert parse_dims("(8, 8)", "block") == (8, 8)
    assert parse_dims("1920x1080", "problem size") == (1920, 1080)
    assert parse_dims("4K,2", "grid") == (4096, 2)
    with pytest.raises(InputError, match="hexadecimal"):
        parse_dims("0x10", "problem size")
    with pytest.raises(InputError) as info:
        parse_dims("abc,²", "grid")
    assert len(info.value.problems) == 2
    with pytest.raises(InputError, match="characters"):
        parse_dims("9" * 5000, "grid")
    with pytest.raises(InputError, match="4 parts"):
        parse_dims("1,2,3,4", "grid")


def test_compute_capability():
    assert parse_cc(" 8.6 ") == (8, 6)
    assert parse_cc("12.0") == (12, 0)
    for bad in ("8.²", "٨.٦", "8", "8.6.1", "8.6x", "9" * 5000 + ".0"):
        with pytest.raises(InputError, match="not of the form X.Y") as info:
            parse_cc(bad)
        assert len(str(info.value)) < 150
    with pytest.raises(InputError, match="compute capability is empty; give it as X.Y"):
        parse_cc(" ")


def test_device_keys():
    assert parse_device_key("cpu") == "cpu"
    assert parse_device_key(" CUDA ") == "cuda:0"
    assert parse_device_key("cuda:01") == "cuda:1"
    with pytest.raises(InputError, match="empty"):
        parse_device_key("")  # not a quiet 'cpu'
    with pytest.raises(InputError, match="digits 0-9"):
        parse_device_key("cuda:²")
    with pytest.raises(InputError, match="at most 1023"):
        parse_device_key("cuda:" + "9" * 20)
    with pytest.raises(InputError, match="characters"):
        parse_device_key("cuda:" + "9" * 5000)


def test_window_sizes():
    assert parse_window_size("1280x800") == (1280, 800)
    assert parse_window_size(" 1024 X 768 ") == (1024, 768)
    with pytest.raises(InputError, match="640x480 to 7680x4320") as info:
        parse_window_size("9" * 5000 + "x800")
    assert len(str(info.value)) < 200
    with pytest.raises(InputError, match="outside the supported range"):
        parse_window_size("99999x800")
    with pytest.raises(InputError, match="outside the supported range"):
        parse_window_size("100x100")
    with pytest.raises(InputError, match="1280x800"):
        parse_window_size("１２８０x800")


def test_output_paths(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert parse_output_path("~/x.png", suffixes=(".png",)) == tmp_path / "x.png"
    with pytest.raises(InputError, match="no user 'nosuchuser'"):
        parse_output_path("~nosuchuser/x.png")
    with pytest.raises(InputError, match=r"is 300 bytes long; this file system allows at most 255") as info:
        parse_output_path(str(tmp_path / ("a" * 296 + ".png")))
    assert len(str(info.value)) < 200
    with pytest.raises(InputError, match="does not exist"):
        parse_output_path(str(tmp_path / "nope" / "x.png"))
    assert not (tmp_path / "nope").exists()  # never created
    with pytest.raises(InputError, match="it is a folder"):
        parse_output_path(str(tmp_path))
    with pytest.raises(InputError, match=r"\.png"):
        parse_output_path(str(tmp_path / "x.jpg"), suffixes=(".png",))
    with pytest.raises(InputError, match="empty"):
        parse_output_path("")
    with pytest.raises(InputError, match="NUL"):
        parse_output_path("a\0b.png")
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match="cannot write"):
        parse_output_path(str(tmp_path / "file" / "x.png"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_output_path_in_a_read_only_folder(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(InputError, match="not writable"):
            parse_output_path(str(locked / "x.png"))
    finally:
        locked.chmod(0o700)


def test_shown_and_one_line():
    assert shown("abc") == "'abc'"
    long = shown("9" * 5000)
    assert long.endswith("(5000 characters)") and len(long) < 60
    assert one_line("a\nb\x1b[31m") == "a\\nb\\x1b[31m"
    assert len(one_line("x" * 5000)) == 600


def test_relative_output_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert parse_output_path("x.png") == Path("x.png")
