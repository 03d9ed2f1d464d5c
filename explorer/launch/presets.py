"""Launch configurations from the lessons, ready to pick: each one shows one idea.

Qt-free data (the visualizer's preset menu and its session's first launch). Grid sizes come from
the core's ``blocks_for`` (ceil(n / threads per block)), the same sum a student writes in the
kernel launch.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.launch.config import Dim3, LaunchConfig
from explorer.launch.schedule import blocks_for


@dataclass(frozen=True)
class Preset:
    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    n: int | tuple[int, ...] | None  # a tuple: the problem's size per axis (an image, a volume)
    lesson: str  # one sentence: what to look at
    short_name: str = ""  # what the preset menu shows in the narrow controls column

    def __post_init__(self) -> None:
        if not self.short_name:
            object.__setattr__(self, "short_name", self.name)

    smem_bytes: int = 0
    regs_per_thread: int = 32

    @property
    def config(self) -> LaunchConfig:
        """The launch itself: a form holds this preset exactly while it holds this config."""
        n, extent = (None, Dim3(*self.n)) if isinstance(self.n, tuple) else (self.n, None)
        return LaunchConfig(
            Dim3(*self.grid), Dim3(*self.block), self.smem_bytes, self.regs_per_thread, n, extent
        )


PRESETS: tuple[Preset, ...] = (
    Preset(
        "Vector add, N = 100000, 1024-thread blocks",
        (blocks_for(100_000, 1024), 1, 1),
        (1024, 1, 1),
        100_000,
        "ceil(100000 / 1024) = 98 blocks queue up for the SMs and run wave after wave.",
        short_name="Vector add, N = 100000",
    ),
    Preset(
        "Vector add, N = 5466 (idle threads)",
        (blocks_for(5466, 1024), 1, 1),
        (1024, 1, 1),
        5466,
        "6 blocks of 1024 threads cover 6144 elements: the threads past N sit idle behind the if.",
        short_name="Vector add, N = 5466",
    ),
    Preset(
        "2D image 1920x1080 in 16x16 tiles",
        (blocks_for(1920, 16), blocks_for(1080, 16), 1),
        (16, 16, 1),
        (1920, 1080),
        "120 x 68 tiles cover 1920 x 1088 pixels: the bottom row of tiles has 8 rows of threads below the image.",
        short_name="2D image 1920x1080",
    ),
    Preset(
        "3D volume 100^3 in 8x8x8 blocks",
        (blocks_for(100, 8), blocks_for(100, 8), blocks_for(100, 8)),
        (8, 8, 8),
        (100, 100, 100),
        "13^3 blocks of 8x8x8 cover 104^3 voxels: blocks on the far faces have lanes outside the volume.",
        short_name="3D volume 100^3",
    ),
    Preset(
        "Too big: a 2048-thread block",
        (blocks_for(100_000, 2048), 1, 1),
        (2048, 1, 1),
        100_000,
        "Blocks have a hard size limit: this launch fails before it starts.",
        short_name="Too big: 2048 threads",
    ),
)


def preset_named(short_name: str) -> Preset | None:
    """The preset a settings file names (by the short name the menu shows), None for any other."""
    return next((p for p in PRESETS if p.short_name == short_name), None)
