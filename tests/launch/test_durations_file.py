"""A durations file is read no further than the grid's block count needs (+1 number to say it
holds too many), streamed a chunk at a time, with the same entries and messages as reading it
whole; a name that cannot even be expanded is one line."""

from __future__ import annotations

import math
import random
import re

import pytest

from explorer import cli
from explorer.inputs import InputError, shown
from explorer.launch import durations
from explorer.launch.config import Dim3
from explorer.launch.durations import (
    MAX_FILE_BYTES,
    block_durations,
    parse_duration_numbers,
    parse_durations,
    read_file_values,
)


def whole_file_reference(data: bytes, where: str) -> list[float]:
    """The file read whole: comments out, split on separators, every entry checked in order."""
    body = re.sub(rb"#[^\n]*", b" ", data)
    tokens = [t for t in re.split(rb"[\s,;]+", body) if t]
    if not tokens:
        raise InputError(f"{where} holds no numbers; give one positive number per block")
    values = []
    for i, token in enumerate(tokens):
        if len(token) > 40 or not re.fullmatch(
            rb"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]{1,3})?|\.[0-9]+(?:[eE][+-]?[0-9]{1,3})?", token
        ):
            text = token[:40].decode("ascii", "backslashreplace")
            raise InputError(
                f"{where}: entry {i + 1} is {shown(text)}; each must be a positive decimal number"
            )
        value = float(token)
        if not (value > 0 and math.isfinite(value)):
            raise InputError(
                f"{where}: entry {i + 1} is {token.decode()}; each must be above 0 and below 1e300"
            )
        values.append(value)
    return values


def _outcome(read, *args):
    try:
        return read(*args)
    except InputError as exc:
        return str(exc)


def test_streamed_reading_matches_reading_whole_over_random_files(monkeypatch):
    """Thousands of random files, read in chunks of 1 to 9 bytes so entries and comments straddle
    chunk ends: the same numbers, or the same first bad entry named."""
    rng = random.Random(35)
    alphabet = [b"1", b"2", b"7", b"0", b".", b"5", b"e", b"-", b" ", b",", b"\n", b"#", b"x", b";", b"\t"]
    pieces = [b"12", b"3.5", b"1e3", b"# note\n", b"  ", b",", b"\n", b"4.25e-1"]
    for case in range(3000):
        monkeypatch.setattr(durations, "READ_CHUNK", rng.randint(1, 9))
        parts = [rng.choice(pieces if rng.random() < 0.6 else alphabet) for _ in range(rng.randint(0, 40))]
        if case % 7 == 0:
            parts.append(b"9" * rng.randint(35, 60))  # an entry too long to be a number
        data = b"".join(parts)
        assert _outcome(parse_duration_numbers, data, "f") == _outcome(whole_file_reference, data, "f"), data


def test_a_file_is_read_no_further_than_the_grid_needs(tmp_path):
    """Seven numbers and then a gigabyte (sparse: no disk used): a grid of 7 blocks takes them and
    one of 6 is told the file holds more, with nothing past the first chunk read; reading it
    whole, as before, refused it for its size."""
    path = tmp_path / "big.txt"
    with path.open("wb") as fh:
        fh.write(b"1 2 3 4 5 6 7\n")
        fh.truncate(1 << 30)
    spec = parse_durations(f"file:{path}")
    with pytest.raises(
        InputError, match=r"has more than 6 numbers; the grid has 6 blocks and needs one per block"
    ):
        read_file_values(spec, 6)
    with pytest.raises(InputError, match=r"entry 8 is '\\x00"):  # a NUL is no separator: a bad 8th entry
        read_file_values(spec, 7)


def test_the_grid_count_reads_the_file_at_simulation_when_not_read_before(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("# measured\n1, 2.5\n3e-1 4\n", encoding="ascii")
    spec = parse_durations(f"file:{path}")
    assert spec.file_values == ()  # nothing read before the block count is known
    raw, unit = block_durations(spec, Dim3(4))
    assert raw.tolist() == [1.0, 2.5, 0.3, 4.0] and unit == pytest.approx(1.95)
    with pytest.raises(InputError, match="has 4 numbers; the grid has 5 blocks"):
        block_durations(spec, Dim3(5))
    with pytest.raises(InputError, match="has more than 3 numbers; the grid has 3 blocks"):
        block_durations(spec, Dim3(3))


def test_blank_space_after_the_numbers_is_read_up_to_the_byte_limit(tmp_path, monkeypatch):
    """To know no number follows the last one the rest is read, and never more than the limit."""
    monkeypatch.setattr(durations, "MAX_FILE_BYTES", 4096)
    path = tmp_path / "padded.txt"
    path.write_bytes(b"1 2\n" + b" " * 4000)
    assert read_file_values(parse_durations(f"file:{path}"), 2).file_values == (1.0, 2.0)
    path.write_bytes(b"1 2\n" + b" " * 5000)
    with pytest.raises(InputError, match="goes on past 4,096 bytes"):
        read_file_values(parse_durations(f"file:{path}"), 2)
    assert MAX_FILE_BYTES == 64 * 1024 * 1024


def _dispatch(capsys, durations_text, grid="6"):
    argv = ["dispatch", "--device", "1650", "--grid", grid, "--block", "64", "--durations", durations_text]
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.usefixtures("fake_devices")
def test_dispatch_with_a_file_far_longer_than_its_grid(tmp_path, capsys):
    path = tmp_path / "ones.txt"
    path.write_bytes(b"1\n" * (4 * 1024 * 1024))  # 8 MiB for a 6-block grid
    code, out, err = _dispatch(capsys, f"file:{path}")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "has more than 6 numbers; the grid has 6 blocks" in err, err
    path.write_bytes(b"1\n2\n1\n2\n1\n2\n")
    code, out, err = _dispatch(capsys, f"file:{path}")
    assert code == 0 and err == "" and "the mean block is 1.5 in the file's units" in out


@pytest.mark.usefixtures("fake_devices")
@pytest.mark.parametrize("text", ["file:~nosuchuser-of-this-machine/x", "file:~nosuchuser/durations.txt"])
def test_a_home_folder_that_does_not_exist_is_one_line(capsys, text):
    code, out, err = _dispatch(capsys, text)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "cannot read the durations file '~nosuchuser" in err, err
