"""The remembered window state: read forgivingly, written atomically, never an error for the user."""

import json
import os
import threading

import pytest

from explorer import prefs
from explorer.prefs import Prefs


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    return tmp_path


def test_no_file_gives_the_defaults():
    assert prefs.load() == Prefs()


def test_saved_prefs_come_back(home):
    wanted = Prefs(theme="dark", panel="benchmarks", width=1600, height=900)
    assert prefs.save(wanted)
    assert prefs.load() == wanted
    assert json.loads((home / "settings.json").read_text())["panel"] == "benchmarks"
    assert sorted(p.name for p in home.iterdir()) == ["settings.json"]  # no .tmp left behind


def _aside(home):
    return sorted(home.glob("settings.json.damaged-*"))


def _load_within(seconds: float = 10.0):
    """``load_with_notice`` in a thread, so a hang fails the test instead of stopping the run."""
    out = []
    worker = threading.Thread(target=lambda: out.append(prefs.load_with_notice()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert out, f"reading the settings did not return within {seconds} s"
    return out[0]


DAMAGED = {
    "empty": (b"", "it is empty"),
    "half written": (b"{", "not valid JSON"),
    "null": (b"null", "not an object of named settings"),
    "a list": (b"[1, 2]", "not an object of named settings"),
    "a string": (b'"dark"', "not an object of named settings"),
    "random bytes": (bytes(range(256)) * 4, "not UTF-8"),
    "a Latin-1 byte": (
        '{"theme": "dark", "panel": "caf\u00e9"}'.encode("latin-1"),
        "not UTF-8 text (byte 0xe9",
    ),
    "nested 200,000 deep": (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
    "NaN": (b'{"width": NaN}', "NaN"),
}


@pytest.mark.parametrize("name", list(DAMAGED))
def test_a_damaged_file_gives_the_defaults_is_moved_aside_and_named_once(home, name):
    data, words = DAMAGED[name]
    (home / "settings.json").write_bytes(data)
    loaded, notice = _load_within()
    assert loaded == Prefs()
    (aside,) = _aside(home)
    assert aside.read_bytes() == data  # kept, byte for byte
    assert words in notice and str(home / "settings.json") in notice and str(aside) in notice
    assert "default settings" in notice
    assert _load_within() == (Prefs(), "")  # said once
    assert prefs.save(Prefs(theme="dark")) and prefs.load() == Prefs(theme="dark")


def test_a_named_pipe_does_not_hang_start_up(home):
    if not hasattr(os, "mkfifo"):
        pytest.skip("named pipes are POSIX")
    os.mkfifo(home / "settings.json")
    loaded, notice = _load_within()
    assert loaded == Prefs() and "named pipe" in notice
    assert len(_aside(home)) == 1
    assert prefs.save(Prefs(theme="dark")) and prefs.load().theme == "dark"


def test_a_folder_in_its_place_is_moved_aside(home):
    (home / "settings.json").mkdir()
    loaded, notice = _load_within()
    assert loaded == Prefs() and "folder" in notice
    assert _aside(home)[0].is_dir()
    assert prefs.save(Prefs(width=1600, height=900))


def test_keys_this_version_does_not_know_survive_a_save(home):
    newer = {"theme": "dark", "laser_pointer": 1.5, "launch": {"grid": [64, 1, 1]}, "panel": "visualizer"}
    (home / "settings.json").write_text(json.dumps(newer))
    loaded, notice = prefs.load_with_notice()
    assert notice == "" and loaded.theme == "dark" and loaded.panel == "visualizer"
    assert prefs.save(Prefs(theme="light", panel="benchmarks"))
    saved = json.loads((home / "settings.json").read_text())
    assert saved["laser_pointer"] == 1.5 and saved["launch"] == {"grid": [64, 1, 1]}
    assert saved["theme"] == "light" and saved["panel"] == "benchmarks"


def test_a_full_disk_keeps_the_old_settings(home, monkeypatch):
    import errno

    from explorer import atomicwrite

    assert prefs.save(Prefs(theme="dark"))
    before = (home / "settings.json").read_bytes()

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomicwrite.os, "write", full)
    assert prefs.save(Prefs(theme="light")) is False
    assert (home / "settings.json").read_bytes() == before
    assert sorted(p.name for p in home.iterdir()) == ["settings.json"]


def test_each_bad_field_falls_back_alone(home):
    (home / "settings.json").write_text(
        json.dumps({"theme": "neon", "panel": "visualizer", "width": 100, "height": 900, "future_key": 1})
    )
    loaded = prefs.load()
    assert loaded.theme == "light"  # not a theme the app has
    assert loaded.panel == "visualizer"  # good, kept
    assert (loaded.width, loaded.height) == (1280, 800)  # 100 px wide is not a usable window


@pytest.mark.parametrize("size", [(True, 800), ("1280", 800), (1280.0, 800), (20_000, 800)])
def test_sizes_must_be_plausible_integers(home, size):
    (home / "settings.json").write_text(json.dumps({"width": size[0], "height": size[1]}))
    assert (prefs.load().width, prefs.load().height) == (1280, 800)


def test_a_folder_that_cannot_be_made_is_reported_as_false_not_raised(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(blocker / "home"))  # works as root too
    assert prefs.save(Prefs(theme="dark")) is False
    assert prefs.load() == Prefs()
