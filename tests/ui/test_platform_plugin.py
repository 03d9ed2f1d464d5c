"""Before the window loads: a Qt platform plugin whose libraries are missing is one line naming them
and the exact install command, exit 2, instead of Qt's abort (exit 134) with a hint naming the wrong
package (issue 23, item 11). The libraries are found as ``ldd`` finds them: compared with ``ldd``
itself here, and a machine without some of them is made by pointing the check at a folder that
holds every system library but those."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from explorer import qtcheck, sharedlibs

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF and ld.so: Linux")

DRIVER = Path(__file__).with_name("plugin_check_driver.py")
ROOT = DRIVER.parents[2]


def _plugin(name: str) -> Path:
    path = qtcheck.plugin_file(name, {})
    if path is None:
        pytest.skip(f"PySide6 has no {name} platform plugin here")
    return path


def _ldd(path: Path) -> dict[str, str]:
    out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, timeout=60).stdout
    found: dict[str, str] = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (/\S+) \(", line) or re.match(r"\s*((/\S+)) \(", line)
        if m:
            found[os.path.basename(m[1])] = os.path.realpath(m[2])
    return found


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("ldd") is None, reason="ldd is not installed (libc-bin)")
@pytest.mark.parametrize("name", ["xcb", "offscreen"])
def test_the_libraries_found_are_those_ldd_finds(name):
    plugin = _plugin(name)
    ours = sharedlibs.needed_libraries(plugin)
    assert ours.missing == []
    assert {k: os.path.realpath(v) for k, v in ours.found.items()} == _ldd(plugin)


def test_on_this_machine_the_window_s_plugins_can_load():
    assert qtcheck.platform_problem({"DISPLAY": ":0"}) is None
    assert qtcheck.platform_problem({}, platforms=["offscreen"]) is None


def _system_without(tmp_path: Path, *prefixes: str) -> Path:
    """A folder with a link to every library the loader's folders hold, but those named ``prefixes``."""
    folder = tmp_path / "lib"
    folder.mkdir()
    for d in sharedlibs.ld_so_conf_dirs() + sharedlibs.trusted_dirs():
        if not os.path.isdir(d):
            continue
        for entry in os.listdir(d):
            if ".so" in entry and not entry.startswith(prefixes) and not (folder / entry).exists():
                (folder / entry).symlink_to(os.path.join(d, entry))
    return folder


def test_a_plugin_without_two_libraries_names_them_and_the_apt_get_command(tmp_path):
    folder = _system_without(tmp_path, "libxcb-icccm.so", "libxcb-keysyms.so")
    problem = qtcheck.platform_problem({"DISPLAY": ":0"}, system_dirs=[str(folder)])
    assert problem is not None and problem.platform == "xcb"
    assert problem.missing == ("libxcb-icccm.so.4", "libxcb-keysyms.so.1")
    line = problem.message("debian", as_root=False)
    assert line.endswith("install them with: sudo apt-get install libxcb-icccm4 libxcb-keysyms1")
    assert "libxcb-icccm.so.4 and libxcb-keysyms.so.1" in line and "\n" not in line
    assert problem.message("debian", as_root=True).endswith(": apt-get install libxcb-icccm4 libxcb-keysyms1")
    assert problem.message("fedora", as_root=True).endswith("dnf install xcb-util-wm xcb-util-keysyms")


def test_a_fallback_platform_that_can_load_is_enough(tmp_path):
    folder = _system_without(tmp_path, "libxcb-icccm.so")
    assert qtcheck.platform_problem({"QT_QPA_PLATFORM": "xcb;offscreen"}, system_dirs=[str(folder)]) is None
    problem = qtcheck.platform_problem({"QT_QPA_PLATFORM": "xcb"}, system_dirs=[str(folder)])
    assert problem is not None and problem.missing == ("libxcb-icccm.so.4",)


@pytest.mark.parametrize(
    "library,package",
    [
        ("libxcb-icccm.so.4", "libxcb-icccm4"),
        ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
        ("libX11-xcb.so.1", "libx11-xcb1"),
        ("libdbus-1.so.3", "libdbus-1-3"),
        ("libfoo.so.12", "libfoo12"),
        ("not-a-library", None),
    ],
)
def test_debian_s_naming_rule(library, package):
    assert qtcheck.debian_package_name(library) == package


def test_the_distribution_is_read_from_os_release(tmp_path):
    release = tmp_path / "os-release"
    for text, family in [
        ('ID=ubuntu\nID_LIKE="debian"\n', "debian"),
        ('ID="rocky"\nID_LIKE="rhel centos fedora"\n', "fedora"),
        ("ID=manjaro\nID_LIKE=arch\n", "arch"),
        ("ID=gentoo\n", None),
    ]:
        release.write_text(text)
        assert qtcheck.distribution_family(release) == family
    assert qtcheck.distribution_family(tmp_path / "none") is None
    assert "package manager" in qtcheck.install_line(["libxcb-icccm.so.4"], None, as_root=False)


def _run(folder: Path, display: str, home: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DISPLAY": display, "DEVICE_EXPLORER_HOME": str(home)}
    for name in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY", "LD_LIBRARY_PATH"):
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, str(DRIVER), str(folder), *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_window_does_not_load_and_says_what_to_install(tmp_path, display):
    folder = _system_without(tmp_path, "libxcb-icccm.so", "libxcb-keysyms.so")
    proc = _run(folder, display, tmp_path / "home")
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout.strip() == "qt-not-loaded"  # the answer came before Qt was loaded
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("device-explorer: error: the window cannot open: ")
    assert "libxcb-icccm.so.4 and libxcb-keysyms.so.1" in proc.stderr
    family = qtcheck.distribution_family()
    if family == "debian":
        assert "apt-get install libxcb-icccm4 libxcb-keysyms1" in proc.stderr


def test_a_screenshot_checks_the_offscreen_plugin_it_renders_with(tmp_path, display):
    folder = _system_without(tmp_path, "libfontconfig.so")
    out = tmp_path / "shot.png"
    proc = _run(folder, display, tmp_path / "home", "screenshot", "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    assert '"offscreen" platform plugin needs libfontconfig.so.1' in proc.stderr
    assert proc.stdout.strip() == "qt-not-loaded" and not out.exists()


def test_the_loader_has_the_last_word_before_a_window_is_refused(tmp_path, monkeypatch):
    """A library the search misses but the loader finds (a folder only ldconfig's cache knows)
    never stops the window: what the search did not find is asked of the loader itself."""
    real = sharedlibs.trusted_dirs
    folder = _system_without(tmp_path, "libxcb-icccm.so")
    monkeypatch.setattr(sharedlibs, "ld_so_conf_dirs", lambda conf="/etc/ld.so.conf": [str(folder)])
    monkeypatch.setattr(sharedlibs, "trusted_dirs", lambda info=None: [])
    assert qtcheck.platform_problem({"DISPLAY": ":0"}) is None  # dlopen finds it on this machine
    assert qtcheck.loader_finds("libxcb-icccm.so.4") and not qtcheck.loader_finds("libno-such-library.so.7")
    assert real(None)  # the real folders were only set aside for this test
