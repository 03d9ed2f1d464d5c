"""Before the window loads: a Qt platform plugin whose libraries are missing is one line naming them
and the exact install command, exit 2, instead of Qt's abort (exit 134) with a hint naming the wrong
package. The libraries are found as ``ldd`` finds them: compared with ``ldd``
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


# --- what the loader would load, not only what is there -----------------------------------------


def _real(name: str) -> Path:
    """Where the check finds ``name`` for the xcb plugin on this machine (the file to copy and damage)."""
    found = sharedlibs.needed_libraries(_plugin("xcb")).found
    if name not in found:
        pytest.skip(f"{name} is not among the xcb plugin's libraries here")
    return Path(found[name])


def _damaged(kind: str, original: Path) -> bytes:
    data = original.read_bytes()
    if kind == "text":
        return b"this is not a library\n" * 4
    if kind == "empty":
        return b""
    if kind == "truncated":  # a header, then nothing: an interrupted copy
        return data[:4096]
    if kind == "bad-type":  # an ELF object file (ET_REL) where a shared library should be
        return data[:16] + (1).to_bytes(2, "little") + data[18:]
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["text", "empty", "truncated", "bad-type"])
def test_a_damaged_library_earlier_on_ld_library_path_gets_the_one_line(tmp_path, kind):
    original = _real("libxcb-icccm.so.4")
    planted = tmp_path / "libxcb-icccm.so.4"
    planted.write_bytes(_damaged(kind, original))
    problem = qtcheck.platform_problem({"DISPLAY": ":0", "LD_LIBRARY_PATH": str(tmp_path)})
    assert problem is not None and problem.platform == "xcb" and problem.missing == ()
    assert [name for name, _why in problem.broken] == ["libxcb-icccm.so.4"]
    line = problem.message("debian", as_root=False)
    assert "\n" not in line and line.startswith('the window cannot open: Qt\'s "xcb" platform plugin needs ')
    assert str(planted) in line and "move that file out of the way" in line
    assert line.endswith("sudo apt-get install libxcb-icccm4")


def _other_kind(original: Path, *, word_size: int | None = None, machine: int | None = None) -> bytes:
    data = bytearray(original.read_bytes())
    if word_size == 32:
        data[4] = 1
    if machine is not None:
        data[18:20] = machine.to_bytes(2, "little")
    return bytes(data)


@pytest.mark.parametrize("change", [{"machine": 183}, {"word_size": 32}])
def test_a_library_of_another_machine_or_word_size_is_passed_over_as_the_loader_does(tmp_path, change):
    original = _real("libxcb-icccm.so.4")
    (tmp_path / "libxcb-icccm.so.4").write_bytes(_other_kind(original, **change))
    libs = sharedlibs.needed_libraries(_plugin("xcb"), library_path=str(tmp_path))
    assert libs.broken == {} and libs.missing == []
    assert os.path.realpath(libs.found["libxcb-icccm.so.4"]) == os.path.realpath(original)
    assert qtcheck.platform_problem({"DISPLAY": ":0", "LD_LIBRARY_PATH": str(tmp_path)}) is None


def test_a_present_but_different_library_without_the_versions_qt_needs_gets_the_one_line(tmp_path):
    """libz, named as Qt's core library: an ELF the loader opens, whose version definitions lack
    the ``Qt_6`` versions the plugin was linked against (the loader: "version `Qt_6' not found")."""
    _real("libQt6Core.so.6")
    zlib = next((p for p in map(Path, sharedlibs.trusted_dirs()) if (p / "libz.so.1").is_file()), None)
    if zlib is None:
        pytest.skip("no libz.so.1 in the loader's folders")
    planted = tmp_path / "libQt6Core.so.6"
    shutil.copyfile(zlib / "libz.so.1", planted)
    problem = qtcheck.platform_problem({"DISPLAY": ":0", "LD_LIBRARY_PATH": str(tmp_path)})
    assert problem is not None and problem.missing == ()
    [(name, why)] = [b for b in problem.broken if b[0] == "libQt6Core.so.6"]
    assert str(planted) in why and "Qt_6" in why and "libqxcb.so needs" in why
    line = problem.message("debian", as_root=True)
    assert "\n" not in line and "lacks the symbol version" in line and "move that file" not in line


@pytest.mark.slow
@pytest.mark.parametrize("plant", ["text", "truncated", "machine", "wrong-build"])
def test_the_check_agrees_with_the_loader_itself(tmp_path, plant):
    """The reference: ``dlopen`` of the plugin in a fresh process with the same LD_LIBRARY_PATH
    fails exactly when the check refuses the window."""
    if plant == "wrong-build":
        name = "libQt6Core.so.6"
        zlib = next(p for p in map(Path, sharedlibs.trusted_dirs()) if (p / "libz.so.1").is_file())
        data = (zlib / "libz.so.1").read_bytes()
    else:
        name = "libxcb-icccm.so.4"
        original = _real(name)
        data = _other_kind(original, machine=183) if plant == "machine" else _damaged(plant, original)
    (tmp_path / name).write_bytes(data)
    env = {**os.environ, "LD_LIBRARY_PATH": str(tmp_path)}
    loads = subprocess.run(
        [sys.executable, "-c", f"import ctypes; ctypes.CDLL({str(_plugin('xcb'))!r})"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    refused = qtcheck.platform_problem({"DISPLAY": ":0", "LD_LIBRARY_PATH": str(tmp_path)}) is not None
    assert refused == (loads.returncode != 0), loads.stderr


def _readelf_versions(path: Path) -> tuple[set[tuple[str, str]], set[str]]:
    out = subprocess.run(
        ["readelf", "-V", "-W", str(path)], capture_output=True, text=True, timeout=60
    ).stdout
    needs: set[tuple[str, str]] = set()
    defs: set[str] = set()
    section = ""
    current = ""
    for line in out.splitlines():
        if "Version needs section" in line:
            section = "needs"
        elif "Version definition section" in line:
            section = "defs"
        elif "Version symbols section" in line:
            section = ""
        elif section == "needs" and (m := re.search(r"File: (\S+)", line)):
            current = m[1]
        elif section == "needs" and (m := re.search(r"Name: (\S+)", line)):
            needs.add((current, m[1]))
        elif section == "defs" and (m := re.search(r"Cnt: \d+\s+Name: (\S+)", line)):
            defs.add(m[1])
    return needs, defs


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf is not installed (binutils)")
def test_the_symbol_versions_read_are_those_readelf_lists():
    libs = sharedlibs.needed_libraries(_plugin("xcb"))
    paths = [_plugin("xcb"), *map(Path, libs.found.values())]
    for path in paths:
        info = sharedlibs.read_elf(path)
        needs, defs = _readelf_versions(path)
        assert {(f, v) for f, versions in info.version_needs for v, _weak in versions} == needs, path
        assert set(info.version_defs) == defs, path
