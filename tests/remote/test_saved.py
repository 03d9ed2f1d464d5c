"""The remembered remote machines: kept as typed, checked on the way in and out, and a damaged
file costs one sentence, never a remote the user had, never a crash."""

from __future__ import annotations

import json
import os

import pytest

from explorer.errors import UserError
from explorer.remote import saved
from explorer.remote.saved import SavedRemote, add_remote, load_remotes, make_saved, remove_remote


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    return tmp_path


def test_added_remotes_come_back_as_typed(home):
    lab = make_saved(" gpu-lab ", "", "")
    cluster = make_saved(
        "alice@hpc.example.edu:2222", "srun --gres=gpu:1 --time=10 --partition=teach", "~/dx/bin/python"
    )
    add_remote(lab)
    add_remote(cluster)
    again = load_remotes()
    assert again.notice == ""
    assert again.remotes == [
        SavedRemote("gpu-lab", "", "python3"),
        SavedRemote(
            "alice@hpc.example.edu:2222", "srun --gres=gpu:1 --time=10 --partition=teach", "~/dx/bin/python"
        ),
    ]
    remote = again.remotes[1].remote()
    assert remote.prefix == ("srun", "--gres=gpu:1", "--time=10", "--partition=teach")
    assert remote.python == "~/dx/bin/python"
    assert (home / saved.REMOTES_FILE).is_file()


def test_the_same_machine_twice_is_refused_but_another_launcher_is_another_way_in(home):
    add_remote(make_saved("gpu-lab"))
    with pytest.raises(UserError, match="gpu-lab is already in the list"):
        add_remote(make_saved("gpu-lab", "", "~/other/python"))
    add_remote(make_saved("gpu-lab", "srun --time=2"))
    with pytest.raises(UserError, match="already in the list"):
        add_remote(make_saved("gpu-lab", "  srun   --time=2 "))
    assert len(load_remotes().remotes) == 2


@pytest.mark.parametrize(
    ("destination", "prefix", "python", "named"),
    [
        ("-oProxyCommand=touch /tmp/x", "", "", "-oProxyCommand"),
        ("gpu lab", "", "", "gpu lab"),
        ("gpu-lab:99999", "", "", "99999"),
        ("gpu-lab", "--gres=gpu:1", "", "--gres"),
        ("gpu-lab", "srun 'unclosed", "", "unclosed"),
        ("gpu-lab", "", "-c import os", "-c import os"),
    ],
)
def test_bad_input_is_one_line_naming_the_value(home, destination, prefix, python, named):
    with pytest.raises(UserError) as caught:
        make_saved(destination, prefix, python)
    line = str(caught.value)
    assert "\n" not in line and named in line
    assert not (home / saved.REMOTES_FILE).exists()


def test_removing_keeps_the_others_and_a_second_remove_is_harmless(home):
    a, b = make_saved("gpu-lab"), make_saved("hpc", "srun --time=2")
    add_remote(a)
    add_remote(b)
    assert remove_remote(a) == [b]
    assert remove_remote(a) == [b]
    assert load_remotes().remotes == [b]


def test_two_windows_adding_at_once_keep_both(home):
    """Each change re-reads the file: a window's stale list does not overwrite another's add."""
    add_remote(make_saved("gpu-lab"))
    add_remote(make_saved("hpc"))  # as if from the other window
    assert [r.destination for r in load_remotes().remotes] == ["gpu-lab", "hpc"]


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe not json", b"[1, 2, 3]", b'{"remotes": "gpu-lab"}', b"", b"[" * 100_000],
)
def test_a_damaged_file_is_moved_aside_with_one_sentence(home, content):
    path = home / saved.REMOTES_FILE
    path.write_bytes(content)
    loaded = load_remotes()
    assert loaded.remotes == []
    assert "\n" not in loaded.notice and str(path) in loaded.notice
    aside = [p for p in home.iterdir() if p.name.startswith(saved.REMOTES_FILE + ".damaged-")]
    assert len(aside) == 1 and aside[0].read_bytes() == content  # nothing the user had is lost
    assert str(aside[0]) in loaded.notice
    # the next start says nothing again, and adding works
    assert load_remotes().notice == ""
    add_remote(make_saved("gpu-lab"))
    assert [r.destination for r in load_remotes().remotes] == ["gpu-lab"]


def test_one_bad_entry_costs_only_itself(home):
    """An entry edited by hand into an ssh option is refused by the same check as the dialog's;
    the good entries stay, and the file as it was is kept beside the rewritten list."""
    path = home / saved.REMOTES_FILE
    original = json.dumps(
        {
            "version": 1,
            "remotes": [
                {"destination": "gpu-lab", "prefix": "", "python": "python3"},
                {"destination": "-oProxyCommand=touch /tmp/pwned", "prefix": "", "python": "python3"},
                {"destination": "hpc", "prefix": "srun --time=2", "python": 3},
                {"destination": "cluster", "prefix": "srun -N1", "python": "~/dx/bin/python", "new": 1},
            ],
        }
    )
    path.write_text(original)
    loaded = load_remotes()
    assert [r.destination for r in loaded.remotes] == ["gpu-lab", "cluster"]
    assert loaded.notice.startswith("2 remote machines in ")
    assert "remote 2" in loaded.notice and "-oProxyCommand" in loaded.notice and "\n" not in loaded.notice
    aside = [p for p in home.iterdir() if ".damaged-" in p.name]
    assert len(aside) == 1 and aside[0].read_text() == original
    again = load_remotes()
    assert again.notice == "" and again.remotes == loaded.remotes


def test_a_list_that_cannot_be_written_is_an_oserror(tmp_path, monkeypatch):
    """(Root writes into read-only folders, so the data folder is put under a plain file.)"""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(blocker / "home"))
    with pytest.raises(OSError):
        add_remote(make_saved("gpu-lab"))
    assert load_remotes().remotes == []


def test_a_named_pipe_in_its_place_does_not_hang(home):
    path = home / saved.REMOTES_FILE
    os.mkfifo(path)
    loaded = load_remotes()
    assert loaded.remotes == [] and "named pipe" in loaded.notice
