"""Which shared libraries an ELF file needs, and which of them this system cannot find, found the
way the dynamic loader looks for them (what ``ldd`` prints), without loading anything.

Why: Qt loads its platform plugin (``libqxcb.so``) only when the window is made, and when one of
the plugin's libraries is missing it prints a hint that names the wrong package and aborts the
process (exit 134, "Could not load the Qt platform plugin"). A new user on a minimal Linux saw
exactly that; ``ldd`` showed that ``libxcb-icccm.so.4`` and ``libxcb-keysyms.so.1`` were
missing. ``explorer.qtcheck`` asks this module first and says so in one line.

How the loader looks (``man ld.so``), for each library a file needs, by its name:

1. the ``DT_RPATH`` of the file that needs it, when that file has no ``DT_RUNPATH``;
2. ``LD_LIBRARY_PATH``;
3. the ``DT_RUNPATH`` of the file that needs it;
4. the folders ``ldconfig`` caches (``/etc/ld.so.conf`` and the files it includes);
5. the trusted folders (``/lib``, ``/usr/lib``, and their 64-bit and multiarch forms).

``$ORIGIN`` in a path is the folder of the file that holds it. A library already found for one
file serves every other that needs the same name, and a file of another word size or machine is
passed over, as the loader does. A file the loader would open and refuse (not ELF, too short, a
damaged header) ends its search there, as it ends the load: it is reported as broken, not passed
over, and so is a library without a symbol version a file that needs it was linked against (its
``DT_VERNEED`` against the library's ``DT_VERDEF``: "version `Qt_6' not found"). Linux ELF only;
elsewhere nothing is reported missing.
"""

from __future__ import annotations

import glob
import mmap
import os
import stat
import struct
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

_DT_NULL, _DT_NEEDED, _DT_STRTAB, _DT_RPATH, _DT_RUNPATH = 0, 1, 5, 15, 29
_DT_VERDEF, _DT_VERDEFNUM, _DT_VERNEED, _DT_VERNEEDNUM = 0x6FFFFFFC, 0x6FFFFFFD, 0x6FFFFFFE, 0x6FFFFFFF
_VER_FLG_WEAK = 0x2
_PT_LOAD, _PT_DYNAMIC = 1, 2
_ET_EXEC, _ET_DYN = 2, 3
#: the size of a program header, which the loader insists on (it refuses any other)
_PHENTSIZE = {64: 56, 32: 32}
#: the most headers, entries and files read: a damaged or hostile file cannot make this loop for ever
_MAX_ENTRIES = 100_000
_MAX_FILES = 2_000


class NotElf(ValueError):
    """The file is not an ELF shared object this module can read. ``fatal``: a regular file the
    loader would open and then refuse, ending the whole load (``invalid ELF header``, ``file too
    short``, a damaged header), rather than pass over for the next folder, as it passes over a
    folder, a pipe or a library of another word size or machine."""

    def __init__(
        self, message: str, *, fatal: bool = False, word_size: int | None = None, machine: int | None = None
    ) -> None:
        super().__init__(message)
        self.fatal = fatal
        #: the kind its header claims, where it got that far: the loader passes over another kind
        #: before it looks any further into the file
        self.word_size = word_size
        self.machine = machine


@dataclass(frozen=True)
class ElfInfo:
    """What the loader reads from one file: its kind (word size, byte order, machine), the
    libraries it needs by name, and the folders it names for them."""

    word_size: int  # 32 or 64
    little_endian: bool
    machine: int  # e_machine: 62 x86-64, 183 aarch64, ...
    needed: tuple[str, ...]
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()
    #: the symbol versions it needs, per library: (library name, ((version, weak), ...)), from its
    #: DT_VERNEED records (what ``readelf -V`` lists under "Version needs")
    version_needs: tuple[tuple[str, tuple[tuple[str, bool], ...]], ...] = ()
    #: the symbol versions it defines (DT_VERDEF); empty for a library without versioning
    version_defs: frozenset[str] = frozenset()

    def same_kind(self, other: ElfInfo) -> bool:
        return (self.word_size, self.little_endian, self.machine) == (
            other.word_size,
            other.little_endian,
            other.machine,
        )


def read_elf(path: str | os.PathLike[str]) -> ElfInfo:
    """The dynamic section of ``path``; ``NotElf`` when it is not an ELF file the loader would load
    (a pipe or a folder named like a library included: it is never opened for a blocking read;
    ``fatal`` set where the loader would stop at it, as glibc's ``open_verify`` does), ``OSError``
    when it cannot be read. Only the pages read are loaded (Qt's ICU data library alone is 30 MB)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotElf(f"{path} is not a file")
        if info.st_size < 64:
            raise NotElf(f"{path} is too short for an ELF file", fatal=True)
        with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as data:
            if data[:4] != b"\x7fELF":
                raise NotElf(f"{path} has no ELF header (invalid ELF header)", fatal=True)
            word_size = {1: 32, 2: 64}.get(data[4])
            order = {1: "<", 2: ">"}.get(data[5])
            if word_size is None or order is None or data[6] != 1:
                raise NotElf(f"{path} is an ELF file of an unknown kind", fatal=True)
            e_type, machine = struct.unpack_from(order + "HH", data, 16)
            phentsize = struct.unpack_from(order + "H", data, 54 if word_size == 64 else 42)[0]

            def refused(why: str) -> NotElf:
                return NotElf(f"{path} {why}", fatal=True, word_size=word_size, machine=machine)

            if e_type not in (_ET_DYN, _ET_EXEC):
                raise refused(f"is an ELF file that cannot be loaded (type {e_type})")
            if phentsize != _PHENTSIZE[word_size]:
                raise refused("is a damaged ELF file (its header is wrong)")
            try:
                return _parse(data, word_size, order)
            except (struct.error, ValueError, IndexError):
                raise refused("is a damaged ELF file") from None
    finally:
        os.close(fd)


def _parse(data: mmap.mmap, word_size: int, order: str) -> ElfInfo:
    if word_size == 64:
        (machine,) = struct.unpack_from(order + "H", data, 18)
        (phoff,) = struct.unpack_from(order + "Q", data, 32)
        phentsize, phnum = struct.unpack_from(order + "HH", data, 54)
        ph_format, dyn_format = order + "IIQQQQQQ", order + "qQ"
    else:
        (machine,) = struct.unpack_from(order + "H", data, 18)
        (phoff,) = struct.unpack_from(order + "I", data, 28)
        phentsize, phnum = struct.unpack_from(order + "HH", data, 42)
        ph_format, dyn_format = order + "IIIIIIII", order + "iI"
    loads: list[tuple[int, int, int]] = []  # (vaddr, offset, filesz)
    dynamic: tuple[int, int] | None = None
    for i in range(min(phnum, _MAX_ENTRIES)):
        fields = struct.unpack_from(ph_format, data, phoff + i * phentsize)
        if word_size == 64:
            p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = fields[:6]
        else:
            p_type, p_offset, p_vaddr, _paddr, p_filesz = fields[:5]
        if p_type == _PT_LOAD:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == _PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    if dynamic is None:  # a static file needs no library
        return ElfInfo(word_size, order == "<", machine, ())
    entries: list[tuple[int, int]] = []
    size = struct.calcsize(dyn_format)
    offset, length = dynamic
    for i in range(min(length // size, _MAX_ENTRIES)):
        tag, value = struct.unpack_from(dyn_format, data, offset + i * size)
        if tag == _DT_NULL:
            break
        entries.append((tag, value))
    strtab_vaddr = next((v for t, v in entries if t == _DT_STRTAB), None)
    if strtab_vaddr is None:
        raise NotElf("no string table")
    strtab = _file_offset(strtab_vaddr, loads)

    def text(index: int) -> str:
        start = strtab + index
        end = data.find(b"\0", start, start + 4096)
        if end < 0:
            raise NotElf("a name in the string table has no end")
        return data[start:end].decode("utf-8", errors="replace")

    needed = tuple(text(v) for t, v in entries if t == _DT_NEEDED)
    rpath = tuple(p for t, v in entries if t == _DT_RPATH for p in text(v).split(":") if p)
    runpath = tuple(p for t, v in entries if t == _DT_RUNPATH for p in text(v).split(":") if p)
    tags = dict(entries)
    needs: list[tuple[str, tuple[tuple[str, bool], ...]]] = []
    if _DT_VERNEED in tags:
        at = _file_offset(tags[_DT_VERNEED], loads)
        for _ in range(min(tags.get(_DT_VERNEEDNUM, 0), _MAX_ENTRIES)):
            _version, cnt, file_name, aux, next_need = struct.unpack_from(order + "HHIII", data, at)
            versions: list[tuple[str, bool]] = []
            at_aux = at + aux
            for _ in range(min(cnt, _MAX_ENTRIES)):
                _hash, flags, _other, name, next_aux = struct.unpack_from(order + "IHHII", data, at_aux)
                versions.append((text(name), bool(flags & _VER_FLG_WEAK)))
                if not next_aux:
                    break
                at_aux += next_aux
            needs.append((text(file_name), tuple(versions)))
            if not next_need:
                break
            at += next_need
    defs: set[str] = set()
    if _DT_VERDEF in tags:
        at = _file_offset(tags[_DT_VERDEF], loads)
        for _ in range(min(tags.get(_DT_VERDEFNUM, 0), _MAX_ENTRIES)):
            _version, _flags, _ndx, cnt, _hash, aux, next_def = struct.unpack_from(
                order + "HHHHIII", data, at
            )
            if cnt:  # the version's own name is its first auxiliary entry (the rest are parents)
                defs.add(text(struct.unpack_from(order + "I", data, at + aux)[0]))
            if not next_def:
                break
            at += next_def
    return ElfInfo(word_size, order == "<", machine, needed, rpath, runpath, tuple(needs), frozenset(defs))


def _file_offset(vaddr: int, loads: Sequence[tuple[int, int, int]]) -> int:
    for start, offset, size in loads:
        if start <= vaddr < start + size:
            return vaddr - start + offset
    raise NotElf("the string table lies outside the file")


# --- where the loader looks ----------------------------------------------------------------------


def ld_so_conf_dirs(conf: str | os.PathLike[str] = "/etc/ld.so.conf") -> list[str]:
    """The folders ``/etc/ld.so.conf`` lists, its ``include`` files followed (what ``ldconfig``
    caches), in order, each once."""
    out: list[str] = []
    seen_files: set[str] = set()

    def read(path: str) -> None:
        if path in seen_files or len(seen_files) > _MAX_FILES:
            return
        seen_files.add(path)
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                lines = fh.read(1 << 20).splitlines()
        except OSError:
            return
        for line in lines:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("include"):
                pattern = line[len("include") :].strip()
                if not os.path.isabs(pattern):
                    pattern = os.path.join(os.path.dirname(path), pattern)
                for included in sorted(glob.glob(pattern)):
                    read(included)
            elif line.startswith("hwcap"):
                continue
            else:
                if line not in out:
                    out.append(line)

    read(os.fspath(conf))
    return out


def trusted_dirs(info: ElfInfo | None = None) -> list[str]:
    """The loader's built-in folders, 64-bit and multiarch forms first where they apply."""
    arch = {62: "x86_64-linux-gnu", 183: "aarch64-linux-gnu", 40: "arm-linux-gnueabihf"}.get(
        info.machine if info is not None else 62, ""
    )
    dirs: list[str] = []
    if arch:
        dirs += [f"/lib/{arch}", f"/usr/lib/{arch}"]
    if info is None or info.word_size == 64:
        dirs += ["/lib64", "/usr/lib64"]
    return dirs + ["/lib", "/usr/lib"]


@dataclass
class Libraries:
    """The libraries an ELF file needs, directly and through the libraries it loads: where each was
    found, and the names of those that were not (in the order they were first needed)."""

    found: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    #: libraries the loader would find but refuse, ending the load: name -> why, one clause that
    #: names the file (a damaged file earlier on LD_LIBRARY_PATH, a library without the symbol
    #: versions a file that needs it was linked against)
    broken: dict[str, str] = field(default_factory=dict)


def _expand(entries: Iterable[str], origin: str) -> list[str]:
    return [e.replace("${ORIGIN}", origin).replace("$ORIGIN", origin) for e in entries]


def needed_libraries(
    path: str | os.PathLike[str],
    *,
    system_dirs: Sequence[str] | None = None,
    library_path: str | None = None,
) -> Libraries:
    """Every library ``path`` needs, resolved as the loader would (see the module's docstring).

    ``system_dirs`` stands for steps 4 and 5 (default: ``ld_so_conf_dirs()`` then
    ``trusted_dirs()``); ``library_path`` for ``LD_LIBRARY_PATH`` (default: the environment's).
    ``NotElf``/``OSError`` when ``path`` itself cannot be read."""
    root = read_elf(path)
    if system_dirs is None:
        system_dirs = ld_so_conf_dirs() + trusted_dirs(root)
    if library_path is None:
        library_path = os.environ.get("LD_LIBRARY_PATH", "")
    env_dirs = [d for d in library_path.replace(";", ":").split(":") if d]
    result = Libraries()
    loaded: dict[str, ElfInfo] = {}  # found path -> what it holds
    holders: list[tuple[str, ElfInfo]] = []
    queue: list[tuple[str, ElfInfo]] = [(os.fspath(path), root)]
    while queue and len(result.found) < _MAX_FILES:
        holder, info = queue.pop(0)
        holders.append((holder, info))
        origin = os.path.dirname(holder) or "."
        rpath = _expand(info.rpath, origin) if not info.runpath else []
        runpath = _expand(info.runpath, origin)
        for name in info.needed:
            if name in result.found or name in result.missing or name in result.broken:
                continue
            hit = _find(name, [*rpath, *env_dirs, *runpath, *system_dirs], root)
            if hit is None:
                result.missing.append(name)
            elif isinstance(hit, str):
                result.broken[name] = hit
            else:
                where, lib = hit
                result.found[name] = where
                loaded[where] = lib
                queue.append((where, lib))
    for holder, info in holders:
        for name, versions in info.version_needs:
            path_found = result.found.get(name, "")
            defs = loaded[path_found].version_defs if path_found in loaded else frozenset()
            if not defs or name in result.broken:  # not found, or unversioned: the loader only warns
                continue
            lacking = [v for v, weak in versions if not weak and v not in defs]
            if lacking:
                result.broken[name] = (
                    f"{path_found} lacks the symbol version{'s' if len(lacking) > 1 else ''} "
                    f"{', '.join(lacking)} that {os.path.basename(holder)} needs (a different build "
                    "of the library)"
                )
    return result


def _find(name: str, dirs: Sequence[str], kind: ElfInfo) -> tuple[str, ElfInfo] | str | None:
    """The first file named ``name`` in ``dirs`` that the loader would load: (its path, what it
    holds); or the one clause saying why the loader would stop at one (a string); or None."""
    if "/" in name:  # a path, not a name: used as it is
        candidates = [name]
    else:
        candidates = [os.path.join(d, name) for d in dirs]
    for candidate in candidates:
        try:
            info = read_elf(candidate)
        except NotElf as exc:
            if exc.word_size is not None and (exc.word_size, exc.machine) != (kind.word_size, kind.machine):
                continue  # another word size or machine: passed over before the rest is read
            if exc.fatal:
                return str(exc)
            continue
        except OSError:
            continue
        if info.word_size != kind.word_size or info.machine != kind.machine:
            continue  # another word size or machine: the loader passes it over
        if info.little_endian != kind.little_endian:
            return f"{os.path.normpath(candidate)} is an ELF file of the other byte order"
        return os.path.normpath(candidate), info
    return None


def is_supported() -> bool:
    """Whether this module can answer here: Linux, where the loader works as described."""
    return sys.platform.startswith("linux")


__all__ = [
    "ElfInfo",
    "Libraries",
    "NotElf",
    "is_supported",
    "ld_so_conf_dirs",
    "needed_libraries",
    "read_elf",
    "trusted_dirs",
]


if __name__ == "__main__":  # pragma: no cover - a quick look: python -m explorer.sharedlibs FILE
    for target in sys.argv[1:]:
        libs = needed_libraries(Path(target))
        for lib, where in libs.found.items():
            print(f"\t{lib} => {where}")
        for lib in libs.missing:
            print(f"\t{lib} => not found")
