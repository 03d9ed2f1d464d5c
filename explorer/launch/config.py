"""A kernel launch as the student writes it, and every way it can break a device's limits.

Students type launches into a text box or a command line, so everything here starts from
text and ends in either a ``LaunchConfig`` or one line per broken limit that names the limit,
the value given and what the device allows. A launch CUDA itself would refuse ("too many
resources requested for launch") is refused here too, with the reason spelled out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from explorer.devices.limits import ArchLimits
from explorer.inputs import InputError, parse_dims, parse_whole, shown

_SEPARATORS = re.compile(r"[,x×*]")


class LaunchValidationError(InputError):
    """One or more broken limits; ``str()`` joins them with '; ' so the CLI prints one line."""


def parse_int(text: Any, what: str) -> int:
    """A whole number from user text, in the forms every field takes (``explorer.inputs``: ``1024``,
    ``1e6``, ``48K``); the sign is allowed here so the limit checks can say what is wrong with it."""
    try:
        return parse_whole(text, what)
    except InputError as exc:
        raise LaunchValidationError(exc.problems) from None


@dataclass(frozen=True)
class Dim3:
    """CUDA's dim3: x varies fastest when blocks or threads are numbered."""

    x: int = 1
    y: int = 1
    z: int = 1

    @property
    def count(self) -> int:
        return self.x * self.y * self.z

    @property
    def dims_used(self) -> int:
        """1, 2 or 3: the highest axis longer than one (a (64, 1, 1) block is one-dimensional)."""
        if self.z != 1:
            return 3
        if self.y != 1:
            return 2
        return 1

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.x, self.y, self.z)

    def contains(self, idx: Dim3) -> bool:
        """Whether ``idx`` is a valid index (blockIdx or threadIdx) inside these dims."""
        return 0 <= idx.x < self.x and 0 <= idx.y < self.y and 0 <= idx.z < self.z

    def unflatten(self, linear: int) -> Dim3:
        """The index with this linear number, counting x fastest, then y, then z (as CUDA does)."""
        rest, x = divmod(linear, self.x)
        z, y = divmod(rest, self.y)
        return Dim3(x, y, z)

    def flatten(self, idx: Dim3) -> int:
        """The inverse of ``unflatten``: ``x + X * (y + Y * z)``."""
        return idx.x + self.x * (idx.y + self.y * idx.z)

    def __str__(self) -> str:
        return f"({self.x}, {self.y}, {self.z})"

    @classmethod
    def parse(cls, text: Any, what: str = "size", missing: int = 1) -> Dim3:
        """'64', '64,2', '64x2x1', '(64, 2, 1)', an int or a tuple; missing axes are ``missing``
        (1 for a size, 0 for an index such as blockIdx)."""
        if isinstance(text, Dim3):
            return text
        if isinstance(text, (int, float)) and not isinstance(text, bool):
            return cls(parse_int(text, f"{what} x"), missing, missing)
        if isinstance(text, (tuple, list)):
            if not 1 <= len(text) <= 3:
                raise LaunchValidationError([f"{what} has {len(text)} numbers; give X, X,Y or X,Y,Z"])
            problems: list[str] = []
            values: list[int] = []
            for axis, part in zip("xyz", text, strict=False):
                try:
                    values.append(parse_int(part, f"{what} {axis}"))
                except LaunchValidationError as exc:
                    problems.extend(exc.problems)
            if problems:
                raise LaunchValidationError(problems)
            return cls(*values, *[missing] * (3 - len(values)))
        try:
            values = list(parse_dims(text, what))
            return cls(*values, *[missing] * (3 - len(values)))
        except InputError as exc:
            raise LaunchValidationError(exc.problems) from None


@dataclass(frozen=True)
class LaunchConfig:
    """``kernel<<<grid, block, shared_mem_bytes>>>`` plus what the compiler chose (registers) and N."""

    grid: Dim3
    block: Dim3
    shared_mem_bytes: int = 0
    regs_per_thread: int = 32
    n: int | None = None  # 1-D problem size: threads with a global linear index >= n do no work
    # 2-D/3-D problem size (an image, a volume): a thread whose global position
    # blockIdx * blockDim + threadIdx is outside it on any axis does no work. At most one of n, extent.
    extent: Dim3 | None = None

    @property
    def problem_elements(self) -> int | None:
        """How many elements the problem has (n, or the extent's volume); None when not given."""
        if self.extent is not None:
            return self.extent.count
        return self.n

    def to_dict(self) -> dict[str, Any]:
        return {
            "grid": list(self.grid.as_tuple()),
            "block": list(self.block.as_tuple()),
            "shared_mem_bytes": self.shared_mem_bytes,
            "regs_per_thread": self.regs_per_thread,
            "n": self.problem_elements,  # element count, as before; "extent" says its shape
            "extent": list(self.extent.as_tuple()) if self.extent is not None else None,
        }


def parse_launch(grid: Any, block: Any, smem: Any = 0, regs: Any = 32, n: Any = None) -> LaunchConfig:
    """Text from the CLI or the UI -> LaunchConfig; every unparsable field is reported at once."""
    problems: list[str] = []
    parsed: dict[str, Any] = {}
    for key, value, what in (("grid", grid, "grid"), ("block", block, "block")):
        try:
            parsed[key] = Dim3.parse(value, what)
        except LaunchValidationError as exc:
            problems.extend(exc.problems)
    scalars = (("smem", smem, "shared memory per block"), ("regs", regs, "registers per thread"))
    for key, value, what in scalars:
        try:
            parsed[key] = parse_int(0 if value is None else value, what)
        except LaunchValidationError as exc:
            problems.extend(exc.problems)
    try:
        parsed["n"], parsed["extent"] = parse_problem_size(n)
    except LaunchValidationError as exc:
        problems.extend(exc.problems)
    if problems:
        raise LaunchValidationError(problems)
    return LaunchConfig(
        parsed["grid"], parsed["block"], parsed["smem"], parsed["regs"], parsed["n"], parsed["extent"]
    )


def parse_problem_size(n: Any) -> tuple[int | None, Dim3 | None]:
    """The problem size as typed (the Size N field, ``--n``, a lesson's ``n``) -> (n, extent):
    "100000" is a 1-D n, "1920,1080" a size per axis, empty or None no size at all."""
    if isinstance(n, Dim3):
        return None, n
    if n is None or (isinstance(n, str) and not n.strip()):
        return None, None
    if isinstance(n, (tuple, list)) or (isinstance(n, str) and _SEPARATORS.search(n.strip().strip("()[]"))):
        # "1920,1080": a problem with a size per axis; a single number stays a 1-D n
        return None, Dim3.parse(n, "problem size")
    return parse_int(n, "problem size n"), None


def problem_size_text(config: LaunchConfig) -> str:
    """``parse_problem_size``'s inverse, as the Size N field shows it: "100000", "1920,1080" or ""
    (an extent keeps at least two numbers, so it never reads back as a 1-D n)."""
    if config.extent is not None:
        e = config.extent
        return ",".join(map(str, e.as_tuple()[: max(e.dims_used, 2)]))
    return "" if config.n is None else str(config.n)


def dims_text(dim: Dim3) -> str:
    """A grid or block as the launch fields and the settings file write it: "98,1,1"."""
    return ",".join(map(str, dim.as_tuple()))


def parse_thread_ref(text: Any, what: str = "--thread") -> tuple[Dim3, Dim3]:
    """``BX,BY,BZ:TX,TY,TZ`` (missing axes 0) -> (blockIdx, threadIdx): one thread named the way
    ``launch --thread`` and a lesson step's selected thread name it; a bad one is one line."""
    block_text, sep, thread_text = str(text).partition(":")
    if not sep:
        raise LaunchValidationError([f"{what} is {shown(text)}; give blockIdx:threadIdx, e.g. 48,2,0:4,5,0"])
    return Dim3.parse(block_text, f"{what} blockIdx", missing=0), Dim3.parse(
        thread_text, f"{what} threadIdx", missing=0
    )


#: The most the window's launch fields hold, per axis: past every device's limit, so a launch too
#: big for the GPU can be typed and shown refused. A lesson step's value outside what a field holds
#: (or a size below 1) is no launch at all: the step names it, rather than the field clamping it
#: silently and the refusal then quoting a number the lesson never held.
FIELD_MAX_GRID = (2**31 - 1, 65535 * 4, 65535 * 4)
FIELD_MAX_BLOCK = (65536, 4096, 4096)
FIELD_MAX_SMEM_BYTES = 1 << 24
FIELD_MAX_REGS = 1024


def field_problems(config: LaunchConfig) -> list[str]:
    """What of ``config`` the launch fields cannot hold, one line each (empty: they can)."""
    problems: list[str] = []
    for kind, dim, maxima in (
        ("grid", config.grid, FIELD_MAX_GRID),
        ("block", config.block, FIELD_MAX_BLOCK),
    ):
        for axis, value, most in zip("xyz", dim.as_tuple(), maxima, strict=True):
            if _positive(value, f"{kind} {axis}", problems) and value > most:
                problems.append(f"{kind} {axis} is {value:,}; the launch fields hold at most {most:,}")
    if not 0 <= config.shared_mem_bytes <= FIELD_MAX_SMEM_BYTES:
        problems.append(
            f"shared memory is {config.shared_mem_bytes:,} bytes; the launch fields hold 0 to "
            f"{FIELD_MAX_SMEM_BYTES:,}"
        )
    if not 1 <= config.regs_per_thread <= FIELD_MAX_REGS:
        problems.append(
            f"registers per thread is {config.regs_per_thread:,}; the launch fields hold 1 to {FIELD_MAX_REGS:,}"
        )
    return problems


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _positive(value: Any, what: str, problems: list[str]) -> bool:
    if not _is_int(value):
        problems.append(f"{what} is {value!r}; it must be a whole number")
        return False
    if value < 1:
        problems.append(f"{what} is {value}; it must be at least 1")
        return False
    return True


def validate(config: LaunchConfig, limits: ArchLimits, device_name: str | None = None) -> list[str]:
    """Every limit ``config`` breaks on this device, one line each; an empty list means it launches."""
    dev = device_name or limits.label
    problems: list[str] = []
    dims_ok = True
    block_axis_problems: list[tuple[int, str]] = []
    for kind, dim, maxima, unit in (
        ("grid", config.grid, limits.max_grid_dim, "blocks"),
        ("block", config.block, limits.max_block_dim, "threads"),
    ):
        for axis, value, most in zip("xyz", dim.as_tuple(), maxima, strict=True):
            if not _positive(value, f"{kind} {axis}", problems):
                dims_ok = False
            elif value > most:
                text = f"{kind} {axis} is {value}; {dev} allows at most {most} {unit} in {axis}"
                if kind == "block":
                    block_axis_problems.append((most, text))
                else:
                    problems.append(text)
    threads = config.block.count if dims_ok else None
    too_many = threads is not None and threads > limits.max_threads_per_block
    if too_many:
        problems.append(
            f"block has {threads} threads; {dev} allows at most {limits.max_threads_per_block} per block"
        )
    # "block x is 2048" says nothing the thread count did not; block z over 64 still does.
    problems.extend(
        t for most, t in block_axis_problems if not (too_many and most >= limits.max_threads_per_block)
    )
    smem = config.shared_mem_bytes
    if not _is_int(smem):
        problems.append(f"shared memory per block is {smem!r}; it must be a whole number of bytes")
    elif smem < 0:
        problems.append(f"shared memory per block is {smem} bytes; it cannot be negative")
    elif smem > limits.max_smem_per_block_optin_bytes:
        if limits.max_smem_per_block_optin_bytes > limits.max_smem_per_block_bytes:
            problems.append(
                f"shared memory per block is {smem} bytes; {dev} allows at most "
                f"{limits.max_smem_per_block_optin_bytes} bytes per block even with the opt-in "
                f"(cudaFuncAttributeMaxDynamicSharedMemorySize), {limits.max_smem_per_block_bytes} without"
            )
        else:
            problems.append(
                f"shared memory per block is {smem} bytes; {dev} allows at most "
                f"{limits.max_smem_per_block_bytes} bytes per block"
            )
    regs = config.regs_per_thread
    regs_ok = _positive(regs, "registers per thread", problems)
    if regs_ok and regs > limits.max_regs_per_thread:
        problems.append(
            f"registers per thread is {regs}; {dev} allows at most {limits.max_regs_per_thread} per thread"
        )
        regs_ok = False
    if regs_ok and threads is not None and threads <= limits.max_threads_per_block:
        needed = registers_per_block(limits, threads, regs)
        if needed > limits.max_regs_per_block:
            problems.append(
                f"block needs {needed} registers ({threads} threads x {regs} per thread, allocated per warp "
                f"in units of {limits.reg_alloc_unit}); {dev} allows at most {limits.max_regs_per_block} per block"
            )
    if config.n is not None:
        _positive(config.n, "problem size n", problems)
    if config.extent is not None:
        if config.n is not None:
            problems.append("give the problem size either as n or per axis (x,y,z), not both")
        for axis, value in zip("xyz", config.extent.as_tuple(), strict=True):
            _positive(value, f"problem size {axis}", problems)
    return problems


def registers_per_block(limits: ArchLimits, threads: int, regs_per_thread: int) -> int:
    """Registers the hardware checks a block against: per-warp allocation, warps rounded up to the
    number of register-file sub-partitions (cuda_occupancy.h's 'hardware check')."""
    warps = -(-threads // limits.warp_size)
    per_warp = _round_up(regs_per_thread * limits.warp_size, limits.reg_alloc_unit)
    # GP100 (6.0) has 2 sub-partitions, but CUDA refuses there what the 4-partition Pascal
    # chips could not run, so the block is checked as on those (cuda_occupancy.h, "GP10x").
    sub_partitions = 4 if limits.cc == (6, 0) else limits.reg_sub_partitions
    return per_warp * _round_up(warps, sub_partitions)


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def notes(config: LaunchConfig, limits: ArchLimits) -> list[str]:
    """Things that are allowed but worth telling a student (opt-in shared memory)."""
    out: list[str] = []
    smem = config.shared_mem_bytes
    if _is_int(smem) and limits.max_smem_per_block_bytes < smem <= limits.max_smem_per_block_optin_bytes:
        out.append(
            f"{smem} bytes of shared memory per block is over the default {limits.max_smem_per_block_bytes}: "
            "the kernel must opt in with cudaFuncSetAttribute(kernel, "
            f"cudaFuncAttributeMaxDynamicSharedMemorySize, {smem})"
        )
    return out


def check(config: LaunchConfig, limits: ArchLimits, device_name: str | None = None) -> None:
    """Raise LaunchValidationError listing every broken limit; return quietly when it launches."""
    problems = validate(config, limits, device_name)
    if problems:
        raise LaunchValidationError(problems)
