"""The remembered window state: read forgivingly, written atomically, never an error for the user."""

import json

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
    assert not list(home.glob("*.tmp"))


@pytest.mark.parametrize("text", ["", "{", "null", "[1, 2]", '"dark"'])
def test_a_broken_file_gives_the_defaults(home, text):
    (home / "settings.json").write_text(text)
    assert prefs.load() == Prefs()


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
