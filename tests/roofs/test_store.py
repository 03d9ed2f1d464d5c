"""The per-machine store of measured ceilings: kept per device and machine, a quiet measurement
never replaced by a busy one, and a damaged file moved aside with one notice, never fatal."""

from __future__ import annotations

import json
import os

import pytest

from explorer.roofs import store
from explorer.roofs.model import Ceiling
from explorer.roofs.store import MeasuredRoof

FP = "cpu|Test CPU|2c/2t"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    store.take_notice()  # nothing left over from another test
    return tmp_path / "home"


def measured(gbps: float = 40.0, *, busy: str = "", at: float = 1000.0, fp: str = FP) -> MeasuredRoof:
    return MeasuredRoof(
        "cpu",
        fp,
        at,
        clock_ghz=3.5,
        clock_threads=2,
        ceilings=[
            Ceiling(
                "memory",
                gbps,
                "measured",
                "DRAM",
                "sweep",
                at,
                level="DRAM",
                ws_lo_bytes=1 << 27,
                ws_hi_bytes=1 << 28,
            )
        ],
        busy_reason=busy,
    )


def test_stored_other_machine_and_absent():
    assert store.load("cpu", FP) == ("absent", None)
    store.save(measured())
    status, back = store.load("cpu", FP)
    assert status == "stored" and back == measured() and back.quiet
    assert store.load("cpu", "cpu|another|8c/16t")[0] == "other machine"
    assert store.load("cuda:0", FP) == ("absent", None)


def test_a_busy_measurement_never_replaces_a_quiet_one():
    store.save(measured(40.0, at=1000.0))
    kept = store.save(measured(21.0, busy="other programs used 80% of the CPU", at=2000.0))
    assert not kept.replaced and kept.stored.ceilings[0].value == 40.0
    assert kept.message.startswith(
        "cpu: this measurement was disturbed by other programs (other programs used 80% of the CPU), "
        "so the quiet one measured "
    )
    assert store.load("cpu", FP)[1].ceilings[0].value == 40.0
    # a new quiet one replaces it
    assert store.save(measured(42.0, at=3000.0)).replaced
    assert store.load("cpu", FP)[1].ceilings[0].value == 42.0


def test_a_busy_measurement_is_kept_only_until_a_quiet_one_exists():
    first = store.save(measured(20.0, busy="other programs used 60% of the CPU"))
    assert first.replaced and first.message == (
        "cpu: measured while other programs were busy (other programs used 60% of the CPU); stored "
        "until a quiet measurement replaces it"
    )
    back = store.load("cpu", FP)[1]
    assert not back.quiet and all(c.disturbed for c in back.usable_ceilings())
    assert store.save(measured(22.0, busy="busy again", at=2000.0)).replaced  # busy over busy: newer
    assert store.save(measured(40.0, at=3000.0)).replaced
    assert store.load("cpu", FP)[1].quiet
    # another machine's quiet roof is no reason to keep this machine's busy one out
    store.save(measured(40.0, fp="cpu|other"))
    assert store.save(measured(30.0, busy="busy")).replaced


def test_an_earlier_versions_file_is_measured_again_not_called_damaged():
    path = store.store_path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"format_version": 1, "roofs": {"cpu": {"device": "cpu"}}}))
    assert store.load("cpu", FP) == ("absent", None)
    assert store.take_notice() == "" and path.exists()


def test_a_damaged_file_that_cannot_be_moved_aside_is_said_once_not_at_every_read(monkeypatch):
    from explorer import statefile

    def refused(path, now=None):  # a folder this user may read but not write (root writes any)
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(statefile, "move_aside", refused)
    path = store.store_path()
    path.parent.mkdir(parents=True)
    path.write_text("{ damaged")
    for _ in range(5):  # the app reads the store once per device, per roof, per refresh
        assert store.load("cpu", FP) == ("absent", None)
    notice = store.take_notice()
    assert notice.count("could not be used") == 1 and "could not be moved aside" in notice
    assert path.exists()  # never deleted
    assert store.load("cpu", FP) == ("absent", None) and store.take_notice() == ""  # said once


def _good_file() -> dict:
    return {"format_version": store.STORE_FORMAT, "roofs": {"cpu": measured().to_dict()}}


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


DAMAGE = {
    "deep nesting": lambda: _nested(200_000),
    "NaN measured_at": lambda: json.dumps(_good_file()).replace(
        '"measured_at": 1000.0', '"measured_at": NaN', 1
    ),
    "1e300 GB/s": lambda: json.dumps(_good_file()).replace('"value": 40.0', '"value": 1e300'),
    "400-digit value": lambda: json.dumps(_good_file()).replace('"value": 40.0', '"value": ' + "9" * 400),
    "clock_ghz 1e308": lambda: json.dumps(_good_file()).replace('"clock_ghz": 3.5', '"clock_ghz": 1e308'),
    "empty": lambda: "",
    "not UTF-8": lambda: b"\xff\xfe{".decode("latin-1"),
    "a list": lambda: "[1, 2, 3]",
    "a wrong type": lambda: json.dumps(_good_file()).replace('"clock_threads": 2', '"clock_threads": "two"'),
    "a negative working set": lambda: json.dumps(_good_file()).replace(
        '"ws_lo_bytes": 134217728', '"ws_lo_bytes": -1'
    ),
    "an unknown level": lambda: json.dumps(_good_file()).replace('"level": "DRAM"', '"level": "L7"'),
    "another device's entry": lambda: json.dumps(_good_file()).replace(
        '"device": "cpu"', '"device": "cuda:0"'
    ),
}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_a_damaged_file_is_moved_aside_with_one_notice_and_measured_again(case):
    path = store.store_path()
    path.parent.mkdir(parents=True)
    text = DAMAGE[case]()
    path.write_bytes(text.encode("latin-1") if case == "not UTF-8" else text.encode())
    assert store.load("cpu", FP) == ("absent", None)
    notice = store.take_notice()
    assert notice.startswith(f"The measured ceilings in {path} could not be used (")
    assert "they are measured again when next needed" in notice and "\n" not in notice
    [aside] = [p for p in path.parent.iterdir() if p.name.startswith(path.name + ".damaged-")]
    assert str(aside) in notice and not path.exists()
    assert store.take_notice() == ""  # said once
    assert store.save(measured()).replaced and store.load("cpu", FP)[0] == "stored"


def test_a_huge_file_is_moved_aside_unread():
    path = store.store_path()
    path.parent.mkdir(parents=True)
    with path.open("wb") as fh:
        fh.truncate(store.MAX_STORE_BYTES + 1)
    assert store.read_all() == {}
    assert "more than the" in store.take_notice() and not path.exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
def test_a_named_pipe_in_its_place_never_hangs():
    path = store.store_path()
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    assert store.load("cpu", FP) == ("absent", None)  # a plain open() would wait for a writer forever
    assert "named pipe" in store.take_notice()
    assert store.save(measured()).replaced


def test_a_full_disk_while_storing_raises_for_the_caller_to_say(monkeypatch):
    def full(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store, "save_json", full)
    with pytest.raises(OSError):
        store.save(measured())
