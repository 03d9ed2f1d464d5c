"""Before Qt makes the window: can its platform plugin load here? If not, one line that names the
missing libraries and the command that installs them.

Why: on a minimal Linux with none of the app's own libraries, ``pip install . && device-explorer``
ended in Qt's ``Could not load the Qt platform plugin "xcb"`` and ``Aborted`` (exit 134). Qt's own
hint named ``libxcb-cursor0``, which was installed; the missing ones, found with ``ldd``, were
``libxcb-icccm4`` and ``libxcb-keysyms1``. This module finds the plugin Qt will load (PySide6's
``plugins/platforms/libq<name>.so``, or the bundle's), lists the shared libraries it needs that
the loader cannot find (``explorer.sharedlibs``, which looks where ``ld.so`` looks), and turns
their names into the distribution's packages and install command. It reads what the loader would
load, not only whether a file of that name is there: a damaged file of the library's name earlier
on ``LD_LIBRARY_PATH``, or a present but different build that lacks the symbol versions Qt was
linked against, ends the load in Qt's abort just the same, so it gets the same one line.

Qt-free (Qt must not be loaded before the answer), Linux only: elsewhere the check passes.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from explorer.sharedlibs import NotElf, is_supported, needed_libraries

#: Debian and Ubuntu package of each library Qt's platform plugins need (the package names do not
#: all follow the soname: libglib-2.0.so.0 is in libglib2.0-0)
APT_PACKAGES: dict[str, str] = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-xinput.so.0": "libxcb-xinput0",
    "libxcb-glx.so.0": "libxcb-glx0",
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libX11.so.6": "libx11-6",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libOpenGL.so.0": "libopengl0",
    "libGLX.so.0": "libglx0",
    "libGLdispatch.so.0": "libglvnd0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libdbus-1.so.3": "libdbus-1-3",
    "libSM.so.6": "libsm6",
    "libICE.so.6": "libice6",
    "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0",
    "libwayland-egl.so.1": "libwayland-egl1",
    # the C and C++ runtimes (always there on a working system, named for completeness)
    "libc.so.6": "libc6",
    "libm.so.6": "libc6",
    "libpthread.so.0": "libc6",
    "libdl.so.2": "libc6",
    "librt.so.1": "libc6",
    "ld-linux-x86-64.so.2": "libc6",
    "libgcc_s.so.1": "libgcc-s1",
    "libz.so.1": "zlib1g",
}
#: Fedora, RHEL and their kin (dnf)
DNF_PACKAGES: dict[str, str] = {
    "libxcb-cursor.so.0": "xcb-util-cursor",
    "libxcb-icccm.so.4": "xcb-util-wm",
    "libxcb-keysyms.so.1": "xcb-util-keysyms",
    "libxcb-image.so.0": "xcb-util-image",
    "libxcb-render-util.so.0": "xcb-util-renderutil",
    "libxcb-util.so.1": "xcb-util",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11",
    "libxkbcommon.so.0": "libxkbcommon",
    "libEGL.so.1": "libglvnd-egl",
    "libGL.so.1": "libglvnd-glx",
    "libOpenGL.so.0": "libglvnd-opengl",
    "libfontconfig.so.1": "fontconfig",
    "libdbus-1.so.3": "dbus-libs",
}
#: Arch Linux (pacman)
PACMAN_PACKAGES: dict[str, str] = {
    "libxcb-cursor.so.0": "xcb-util-cursor",
    "libxcb-icccm.so.4": "xcb-util-wm",
    "libxcb-keysyms.so.1": "xcb-util-keysyms",
    "libxcb-image.so.0": "xcb-util-image",
    "libxcb-render-util.so.0": "xcb-util-renderutil",
    "libxcb-util.so.1": "xcb-util",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11",
    "libEGL.so.1": "libglvnd",
    "libGL.so.1": "libglvnd",
    "libOpenGL.so.0": "libglvnd",
    "libfontconfig.so.1": "fontconfig",
}


@dataclass(frozen=True)
class Installer:
    """How one family of distributions installs packages."""

    command: str  # "apt-get install", "dnf install", ...
    packages: Mapping[str, str]
    debian_names: bool = False  # unlisted libraries are named by Debian's rule (libfoo.so.1 -> libfoo1)


INSTALLERS: dict[str, Installer] = {
    "debian": Installer("apt-get install", APT_PACKAGES, debian_names=True),
    "fedora": Installer("dnf install", DNF_PACKAGES),
    "arch": Installer("pacman -S", PACMAN_PACKAGES),
}
#: os-release IDs (ID and ID_LIKE) to the installer above
_FAMILIES = {
    "debian": "debian",
    "ubuntu": "debian",
    "linuxmint": "debian",
    "pop": "debian",
    "raspbian": "debian",
    "fedora": "fedora",
    "rhel": "fedora",
    "centos": "fedora",
    "rocky": "fedora",
    "almalinux": "fedora",
    "arch": "arch",
    "manjaro": "arch",
    "endeavouros": "arch",
}


def distribution_family(os_release: str | os.PathLike[str] = "/etc/os-release") -> str | None:
    """'debian', 'fedora' or 'arch' from ``/etc/os-release`` (its ID, then ID_LIKE); ``None``
    when unknown."""
    try:
        text = Path(os_release).read_text(encoding="utf-8", errors="replace")[:65536]
    except OSError:
        return None
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip().strip("\"'")
    for candidate in [values.get("ID", ""), *values.get("ID_LIKE", "").split()]:
        if candidate.lower() in _FAMILIES:
            return _FAMILIES[candidate.lower()]
    return None


_SONAME = re.compile(r"(lib[A-Za-z0-9_.+-]+?)\.so\.([0-9]+)")


def debian_package_name(library: str) -> str | None:
    """Debian's rule for a library package's name: the soname's base and its major version,
    with a dash between them where the base ends in a digit (libxcb-icccm.so.4 -> libxcb-icccm4,
    libxkbcommon-x11.so.0 -> libxkbcommon-x11-0); ``None`` for a name that is not a soname."""
    m = _SONAME.fullmatch(library)
    if m is None:
        return None
    base, version = m[1].lower(), m[2]
    return f"{base}-{version}" if base[-1].isdigit() else f"{base}{version}"


def install_line(missing: Sequence[str], family: str | None, as_root: bool) -> str:
    """How to install ``missing`` here: "install them with: sudo apt-get install libxcb-icccm4 ...",
    or, where the distribution or a library's package is not known, which libraries to install."""
    installer = INSTALLERS.get(family or "")
    if installer is None:
        return f"install the packages that provide {_and(missing)} with your distribution's package manager"
    packages: list[str] = []
    unknown: list[str] = []
    for lib in missing:
        name = installer.packages.get(lib) or (debian_package_name(lib) if installer.debian_names else None)
        if name is None:
            unknown.append(lib)
        elif name not in packages:
            packages.append(name)
    rest = f"the packages that provide {_and(unknown)}"
    if not packages:
        return f"install {rest} with your distribution's package manager"
    command = ("" if as_root else "sudo ") + f"{installer.command} {' '.join(packages)}"
    return f"install them with: {command}" + (f" (and {rest})" if unknown else "")


def _and(names: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c" """
    return (
        names[0] if len(names) <= 1 and names else f"{', '.join(names[:-1])} and {names[-1]}" if names else ""
    )


# --- which plugin, where ---------------------------------------------------------------------------


def wanted_platforms(env: Mapping[str, str]) -> list[str]:
    """The platform plugins Qt will try, in order: ``QT_QPA_PLATFORM`` (``xcb``, or a list such
    as ``wayland;xcb``, each name before its ``:options``), else Qt's default on Linux: ``xcb``,
    or Wayland first in a Wayland session."""
    chosen = env.get("QT_QPA_PLATFORM", "").strip()
    if chosen:
        return [part.split(":", 1)[0].strip() for part in chosen.split(";") if part.strip()]
    if env.get("WAYLAND_DISPLAY") and env.get("XDG_SESSION_TYPE", "").lower() == "wayland":
        return ["wayland", "xcb"]
    return ["xcb"]


def plugin_folders(env: Mapping[str, str]) -> list[Path]:
    """Where Qt looks for platform plugins: ``QT_QPA_PLATFORM_PLUGIN_PATH``, then PySide6's own
    folder (inside the bundle: beside the executable's PySide6)."""
    folders = [Path(p) for p in env.get("QT_QPA_PLATFORM_PLUGIN_PATH", "").split(os.pathsep) if p]
    roots: list[Path] = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        roots.append(Path(bundle) / "PySide6")
    try:
        spec = importlib.util.find_spec("PySide6")  # finds the package without importing Qt
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        roots += [Path(p) for p in spec.submodule_search_locations]
    for root in roots:
        folders += [root / "Qt" / "plugins" / "platforms", root / "plugins" / "platforms"]
    return folders


def plugin_file(name: str, env: Mapping[str, str]) -> Path | None:
    for folder in plugin_folders(env):
        candidate = folder / f"libq{name}.so"
        if candidate.is_file():
            return candidate
    return None


#: the most missing libraries a message names (the install command names every package)
SHOWN_LIBRARIES = 4


@dataclass(frozen=True)
class PluginProblem:
    """A platform plugin that cannot load: which, the libraries it lacks, and those the loader
    would find but refuse (name, why: a damaged file, a build without the symbol versions needed)."""

    platform: str
    plugin: Path
    missing: tuple[str, ...]
    broken: tuple[tuple[str, str], ...] = ()

    def message(self, family: str | None, as_root: bool) -> str:
        """One line: what is missing or unusable, and the exact command that installs it (every
        package is in the command; a long list of libraries is shortened, so the line stays one)."""
        names = [*self.missing, *(name for name, _why in self.broken)]
        shown = list(self.missing[:SHOWN_LIBRARIES])
        if len(self.missing) > SHOWN_LIBRARIES:
            shown.append(f"{len(self.missing) - SHOWN_LIBRARIES} more")
        verb = "is" if len(self.missing) == 1 else "are"
        parts = [f"{_and(shown)}, which {verb} not installed on this system"] if self.missing else []
        if self.broken:
            name, why = self.broken[0]
            more = f" (and {len(self.broken) - 1} more unusable)" if len(self.broken) > 1 else ""
            parts.append(f"{name}, but the loader would take {why}{more}")
            fix = "move that file out of the way or " if "lacks the symbol version" not in why else ""
            install = install_line(names, family, as_root)
            tail = f"{fix}{install[0].lower()}{install[1:]}" if fix else install
        else:
            tail = install_line(names, family, as_root)
        return f'the window cannot open: Qt\'s "{self.platform}" platform plugin needs {"; and ".join(parts)}; {tail}'


def platform_problem(
    env: Mapping[str, str] | None = None,
    *,
    system_dirs: Sequence[str] | None = None,
    platforms: Sequence[str] | None = None,
) -> PluginProblem | None:
    """``None`` when a platform plugin Qt will try can load (or this cannot be known here: not
    Linux, no such plugin file); else the first plugin's problem. ``system_dirs`` stands for the
    loader's own folders (tests point it at a folder without some libraries); without it, what the
    search did not find is asked of the loader itself (``loader_finds``) before it is called missing."""
    if not is_supported():
        return None
    env = os.environ if env is None else env
    problems: list[PluginProblem] = []
    for name in platforms or wanted_platforms(env):
        plugin = plugin_file(name, env)
        if plugin is None:
            return None  # a plugin this check does not know where to find: Qt says what it finds
        try:
            libs = needed_libraries(
                plugin, system_dirs=system_dirs, library_path=env.get("LD_LIBRARY_PATH", "")
            )
        except (OSError, NotElf):
            return None
        missing = (
            libs.missing if system_dirs is not None else [m for m in libs.missing if not loader_finds(m)]
        )
        if not missing and not libs.broken:
            return None  # Qt loads this one (the first of a list that can)
        problems.append(PluginProblem(name, plugin, tuple(missing), tuple(libs.broken.items())))
    return problems[0] if problems else None


def loader_finds(library: str) -> bool:
    """Whether the system's loader itself finds and loads ``library`` (``dlopen``): the last word
    before the window is refused, so a library this module's search missed (a folder only
    ``ldconfig``'s cache knows) never stops a window that would open. Asked only for names the
    search did not find; Qt would load them into this process anyway."""
    import ctypes

    try:
        ctypes.CDLL(library, mode=getattr(os, "RTLD_LAZY", 1) | getattr(os, "RTLD_LOCAL", 0))
    except OSError:
        return False
    return True


def as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


__all__ = [
    "INSTALLERS",
    "PluginProblem",
    "debian_package_name",
    "distribution_family",
    "install_line",
    "loader_finds",
    "platform_problem",
    "plugin_file",
    "wanted_platforms",
]
