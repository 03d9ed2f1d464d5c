"""The access patterns and branches a course shows, by name: the Memory page's preset menus and
the names a lesson step's ``pattern`` takes. Qt-free, so a lesson file is checked against the
same list the page offers."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pattern:
    """A preset a course uses: its name and the numbers it sets."""

    name: str
    elem_bytes: int
    stride: int
    offset: int = 0
    active: int = 32

    @property
    def numbers(self) -> tuple[int, int, int, int]:
        return (self.elem_bytes, self.stride, self.offset, self.active)


GLOBAL_PATTERNS = (
    Pattern("Unit stride: a[i]", 4, 1),
    Pattern("Stride 2: a[2*i]", 4, 2),
    Pattern("Stride 32: a[32*i]", 4, 32),
    Pattern("Misaligned start: a[i+1]", 4, 1, offset=1),
    Pattern("Matrix row: m[r][i], width 1000", 4, 1, offset=1000),
    Pattern("Matrix column: m[i][c], width 1000", 4, 1000),
    Pattern("Array of structs: p[i].x of {x,y,z}", 4, 3),
    Pattern("Struct of arrays: x[i]", 4, 1),
    Pattern("Half a warp: if (lane < 16)", 4, 1, active=16),
    Pattern("double, unit stride", 8, 1),
    Pattern("float4, unit stride", 16, 1),
)

SHARED_PATTERNS = (
    Pattern("Stride 1: s[i]", 4, 1),
    Pattern("Stride 2: s[2*i]", 4, 2),
    Pattern("Column of tile[32][32]", 4, 32),
    Pattern("Column of tile[32][33] (padded)", 4, 33),
    Pattern("Broadcast: all read s[0]", 4, 0),
    Pattern("double, stride 1", 8, 1),
    Pattern("double, stride 2", 8, 2),
    Pattern("float4, stride 1", 16, 1),
)


@dataclass(frozen=True)
class BranchPreset:
    name: str
    kind: str
    k: int = 0
    p: float = 0.0


#: decimals of a data-dependent branch's probability p the page's field holds (and a step may give)
P_DECIMALS = 3

BRANCH_PRESETS = (
    BranchPreset("Even threads (t % 2 == 0)", "mod", k=2),
    BranchPreset("First 100 threads (t < 100)", "lt", k=100),
    BranchPreset("Whole warps ((t / 32) % 2 == 0)", "warp", k=2),
    BranchPreset("Data: half the lanes at random", "random", p=0.5),
)

#: the presets of each view of the Memory page, as its menus list them
VIEW_PATTERNS: dict[str, tuple[Pattern, ...]] = {"coalescing": GLOBAL_PATTERNS, "banks": SHARED_PATTERNS}
