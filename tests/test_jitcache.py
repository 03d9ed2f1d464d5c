"""numba's first compile is said, never a silent wait; its cache goes to a folder the user can write."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from explorer import jitcache

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ["dispatch", "--device", "1650", "--grid", "98", "--block", "1024", "--durations", "rows:1,1,1,8"]


def test_an_unwritable_cache_folder_falls_back_with_one_line(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    env = {jitcache.CACHE_ENV: str(blocker / "numba")}
    monkeypatch.setattr(jitcache, "_setup", None)
    monkeypatch.setattr(jitcache.tempfile, "gettempdir", lambda: str(tmp_path))
    setup = jitcache.configure(env)
    assert setup.folder.parent == tmp_path and setup.folder.is_dir()
    assert env[jitcache.CACHE_ENV] == str(setup.folder)
    assert str(blocker / "numba") in setup.note and "cannot be written" in setup.note
    assert "\n" not in setup.note


def test_the_default_folder_is_the_users_cache_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))  # the cache stays shared
    monkeypatch.setattr(jitcache, "_setup", None)
    env: dict[str, str] = {}
    setup = jitcache.configure(env)
    assert setup.folder == tmp_path / "device-explorer" / "numba" and setup.note == ""
    assert env[jitcache.CACHE_ENV] == str(setup.folder)


class _Cold:
    """A stand-in dispatcher whose cache has no index: what a first run sees."""

    overloads: dict = {}

    class _cache:
        class _cache_file:
            @staticmethod
            def _load_index() -> dict:
                return {}


def test_a_cold_compile_is_announced_then_ticks_then_done(capsys):
    heard: list[jitcache.CompileNotice] = []
    with jitcache.first_compile(_Cold(), "the test loop", 10, say=heard.append, tick_s=0.01) as cold:
        assert cold
        import time

        deadline = time.monotonic() + 30
        while not any(n.kind == "tick" for n in heard) and time.monotonic() < deadline:
            time.sleep(0.01)
    kinds = [n.kind for n in heard]
    assert kinds[0] == "start" and "tick" in kinds and kinds[-1] == "done"
    assert heard[0].text == "compiling the test loop once, about 10 s; later runs are instant"
    err = capsys.readouterr().err
    assert err.startswith(heard[0].text) and "compiled the test loop in" in err


def test_a_warm_or_unknown_cache_says_nothing(capsys):
    class Warm(_Cold):
        class _cache:
            class _cache_file:
                @staticmethod
                def _load_index() -> dict:
                    return {"a signature": "a file"}

    heard: list[jitcache.CompileNotice] = []
    for dispatcher in (Warm(), object()):
        with jitcache.first_compile(dispatcher, "the test loop", 10, say=heard.append) as cold:
            assert not cold
    assert heard == [] and capsys.readouterr().err == ""


def _dispatch(cache: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    return subprocess.run(
        [sys.executable, "-m", "explorer", *EXAMPLE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_the_readme_dispatch_example_says_its_first_compile_and_only_the_first(tmp_path):
    cache = tmp_path / "numba-cache"
    first = _dispatch(cache)
    assert first.returncode == 0, first.stderr
    assert "compiling the dispatch loop once, about 10 s; later runs are instant" in first.stderr
    assert f"kept in {cache} for later runs" in first.stderr
    assert any(cache.rglob("*.nbi")), "numba wrote no cache index into NUMBA_CACHE_DIR"
    second = _dispatch(cache)
    assert second.returncode == 0, second.stderr
    assert "compiling" not in second.stderr
    assert second.stdout == first.stdout
