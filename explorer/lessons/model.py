"""The lesson records, and the file format they are written in.

A lesson file is one JSON object (UTF-8, made to be edited by hand as well as by the window's
"Save lesson…")::

    {
      "format": "device-explorer-lesson",     # what this file is
      "version": 1,                           # FORMAT_VERSION of the app that wrote it
      "title": "Blocks, threads and idle lanes",
      "summary": "one line for the Lessons menu",          # optional
      "steps": [
        {
          "panel": "visualizer",              # devices | visualizer | benchmarks | memory
          "title": "N = 5466",                # optional: the step's heading
          "narration": ["plain text, one string", "or a list of lines"],
          "state": { ...that panel's teaching state, below... }
        }
      ]
    }

``narration`` is plain text, shown exactly as typed but for three small marks: a blank line
between paragraphs, ``- `` starting a list item, ``**bold**`` and code between backticks
(``explorer.lessons.narration``; docs/lesson-format.md). Markdown's other marks are characters
like any other, so ``10*32`` stays ``10*32``.

``state`` per panel (every key optional; what is left out takes the default shown):

* ``visualizer``: ``device`` ("GTX 1650": a name or part of one, as ``launch --device`` takes it),
  ``device_kind`` ("catalog": a spec sheet; "present": the GPU was in the lesson maker's machine,
  and a machine without it shows the catalog sheet of the same GPU and says so), ``grid`` and
  ``block`` ("98", "120,68", or a list), ``smem`` (bytes, "48K" allowed) and ``regs`` (per
  thread), ``n`` (the problem size, "1920,1080" for an extent; "" for none), the animation's
  position ``wave`` (0: before the first; K: wave K with every block placed; past the last:
  finished) and ``blocks_placed`` (with a wave: only this many of its blocks placed) or the exact
  ``clock`` (in waves, as the window saves it), ``speed`` (waves per second), ``zoom`` (1, 1.5, 2
  or 3), ``thread`` (the selected thread, "BX,BY,BZ:TX,TY,TZ" as ``launch --thread`` takes it) and
  ``side_tab`` ("occupancy" or "real run": that tab is shown and its column opened, even where
  the page had folded it; left out, the column stays as the page has it); ``view``, the picture in
  the middle: "sms" (the wave picture, the default), "timeline" (the launch in time) or "latency"
  (latency hiding); ``dispatch``, the timeline's ``{"durations": "jitter:0.2", "policy": "free",
  "seed": 0, "time": 3.5}`` (durations as ``dispatch --durations`` takes them, the placement
  policy, the seed of random durations, and the moment shown in mean blocks; absent, the launch's
  end) and ``latency``, the latency view's ``{"preset": "v100-l1", "alu": 9, "policy": "gto",
  "cycle": 600}`` (a published latency by its key as ``latency --preset`` lists them, K arithmetic
  instructions per load, the schedulers' policy, and the last cycle the chart shows; absent, the
  first). A step sets the whole state it describes: what it leaves out takes the default, never
  what was shown before; a ``thread`` opens the inspector's column, and a ``zoom`` is placed on
  the selected thread's block.
* ``benchmarks``: ``workload`` (a ``device-explorer bench`` name), ``devices`` (["cpu",
  "cuda:0"]), ``sizes`` (a list; absent: the workload's defaults), ``repeats`` (absent: until the
  spread settles), ``budget_s`` (seconds per point) and ``recorded``: results measured when the
  lesson was made, ``{"device": "words", "date": "2026-11-23", "note": "", "points": [...]}``,
  each point as ``bench --json`` prints it. They are shown as "recorded on <device>, <date>"
  beside a run made here, never as this machine's.
* ``devices``: ``device``, the device selected in the list ("cpu", "cuda:0" or a GPU's name).
* ``memory``: ``view`` ("coalescing", "banks" or "divergence": the tab shown) and that tab's
  controls. Coalescing and banks: ``pattern`` (a preset's name as the page's menu lists it, or
  "" for the numbers alone), ``elem`` (element size in bytes: 1, 2, 4, 8 or 16), ``stride`` and
  ``offset`` (in elements, 0..4096; a stride of 0, every lane on one element, only in shared
  memory) and ``active`` (lanes 1..32); coalescing also ``warp`` (which warp of the block,
  0..31), banks also ``pad`` (true: one element added to each row, ``tile[32][33]``).
  Divergence: ``pattern`` (a branch preset's name, or ""), ``block`` (threads, 1..1024),
  ``branch`` ("mod", "lt", "warp" or "random"), ``k`` (K of the first three) or ``p`` (0..1, at
  most 3 decimals, of "random") and ``seed`` (the random data's). A ``pattern`` sets its numbers;
  giving another value for one of them is an error naming both. Tiling (the tiled matmul
  stepper): ``rows``, ``cols`` and ``inner`` (M, N and K of C = A (M x K) . B (K x N), 1..1024),
  ``tile`` (T, 2..32), ``block_x`` and ``block_y`` (the block shown, inside the grid), ``tick``
  (the stepper's position: 0 before the first step, up to the block's last), ``gpu`` (the GPU whose
  occupancy and roofline the costs are read on, a name or part of one as ``launch --device``
  takes it; absent here, its catalog sheet) and ``regs`` (registers per thread, 1..255). Only
  the shown tab is changed; the others stay as they were.

Keys this version does not know, at any level, are kept and written back unchanged on save, so a
lesson made with a newer version survives an edit in this one. The values are checked by the
parsers the CLI and the window use (``explorer.inputs``, ``explorer.launch.config``,
``explorer.schema``); a step that fails is reported in one line naming the step and the field,
kept as it was in the file, and the rest of the lesson works.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from explorer.bench.results import BenchPoint
from explorer.errors import UserError
from explorer.panels import PANELS

FORMAT_NAME = "device-explorer-lesson"
FORMAT_VERSION = 1
#: the pages a step can show, as the CLI names them
STEP_PANELS = PANELS
#: the visualizer's right-hand tabs a step can show
SideTab = Literal["occupancy", "real run"]
SIDE_TABS: tuple[SideTab, ...] = ("occupancy", "real run")
DEVICE_KINDS = ("catalog", "present")


class LessonError(UserError):
    """The file cannot be used as a lesson at all; the message is one line naming the file."""


@dataclass
class DispatchStep:
    """The timeline view's state in a step (``explorer.launch.time_views.DispatchSettings`` and
    the moment shown, in mean blocks; None: the launch's end)."""

    durations: str = "uniform"
    policy: str = "free"
    seed: int = 0
    time: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class LatencyStep:
    """The latency view's state in a step (``explorer.launch.time_views.LatencySettings`` and the
    last cycle the chart shows; None: its first window)."""

    preset: str = "v100-l1"
    alu: int = 9
    policy: str = "gto"
    cycle: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


#: the pictures a visualizer step can show in the middle of the page
CentreView = Literal["sms", "timeline", "latency"]


@dataclass
class VisualizerState:
    """The launch visualizer as a step shows it. Launch fields are text, as typed (and as the
    window and ``launch`` parse them); ``extra`` holds keys of the panel's state this version does
    not know (a newer version's), passed back to the panel and written back unchanged."""

    device: str = "GTX 1650"
    device_kind: Literal["catalog", "present"] = "catalog"
    grid: str = "1"
    block: str = "1"
    smem: str = "0"
    regs: str = "32"
    n: str = ""
    wave: int = 0
    blocks_placed: int | None = None
    clock: float | None = None
    speed: float = 0.5
    zoom: float = 1.0
    thread: str = ""
    #: the right-hand tab the narration points at: its column is opened; None leaves the column
    #: as the page has it (folded where the SMs need the room)
    side_tab: SideTab | None = None
    view: CentreView = "sms"
    dispatch: DispatchStep = field(default_factory=DispatchStep)
    latency: LatencyStep = field(default_factory=LatencyStep)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Recorded:
    """Benchmark results measured when the lesson was made, on the lesson maker's machine."""

    device: str  # in words: "NVIDIA GeForce GTX 1650 (laptop)", "Intel Xeon ..., 2 threads"
    date: str  # ISO date, "2026-11-23"
    points: tuple[BenchPoint, ...]
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """How the player heads them: never mistakable for a run on this machine."""
        return f"recorded on {self.device}, {self.date}"


@dataclass
class BenchState:
    workload: str = "matmul"
    devices: tuple[str, ...] = ("cpu",)
    sizes: tuple[int, ...] | None = None
    repeats: int | None = None
    budget_s: float = 2.0
    recorded: Recorded | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def gpu_devices(self) -> tuple[str, ...]:
        return tuple(d for d in self.devices if d != "cpu")


@dataclass
class DevicesState:
    device: str = "cpu"
    extra: dict[str, Any] = field(default_factory=dict)


MemoryView = Literal["coalescing", "banks", "divergence", "tiling", "kernel"]
MEMORY_VIEWS: tuple[MemoryView, ...] = ("coalescing", "banks", "divergence", "tiling", "kernel")


@dataclass
class MemoryState:
    """The Memory page as a step shows it: the tab and its controls (see the module docstring).
    The fields of the tabs not shown are kept (a hand-written step may set them) but not applied."""

    view: MemoryView = "coalescing"
    pattern: str = ""
    elem: int = 4
    stride: int = 1
    offset: int = 0
    active: int = 32
    warp: int = 0
    pad: bool = False
    block: int = 256
    branch: Literal["mod", "lt", "warp", "random"] = "mod"
    k: int = 2
    p: float = 0.5
    seed: int = 0
    rows: int = 64
    cols: int = 64
    inner: int = 64
    tile: int = 8
    block_x: int = 0
    block_y: int = 0
    tick: int = 0
    gpu: str = "GTX 1650"
    regs: int = 32
    #: the "Your kernel" tab: one of the shipped example scripts (``explorer.kernels.examples``),
    #: never a path: a lesson runs no script the student did not open
    example: str = ""
    #: the source line the kernel tab picks (its row in view, its picture drawn); 0 for none
    line: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    #: the fields each view uses (what a saved step writes for it)
    VIEW_FIELDS: ClassVar[dict[str, tuple[str, ...]]] = {
        "coalescing": ("pattern", "elem", "stride", "offset", "active", "warp"),
        "banks": ("pattern", "elem", "stride", "offset", "active", "pad"),
        "divergence": ("pattern", "block", "branch", "k", "p", "seed"),
        "tiling": ("rows", "cols", "inner", "tile", "block_x", "block_y", "tick", "gpu", "regs"),
        "kernel": ("example", "line"),
    }


PanelState = VisualizerState | BenchState | DevicesState | MemoryState


@dataclass
class Step:
    """One step: a page, its state, and what the teacher says. A step the file got wrong keeps
    its raw JSON (``raw``) so saving the lesson loses nothing, and ``problem`` says what is wrong
    in one line; the player shows that line instead of applying it."""

    panel: str
    state: PanelState | None
    narration: str = ""
    title: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    problem: str = ""
    raw: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return not self.problem and self.state is not None


#: a step's question asked before its picture (``explorer.lessons.predict``), kept in ``Step.extra``
PREDICT_KEY = "predict"


@dataclass
class Lesson:
    title: str
    steps: list[Step]
    summary: str = ""
    version: int = FORMAT_VERSION  # the version of the file it was read from
    extra: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None  # where it was read from or last saved

    @property
    def predict_steps(self) -> int:
        """Steps that ask the class to predict before they show."""
        return sum(1 for s in self.steps if PREDICT_KEY in s.extra)

    @property
    def problems(self) -> list[str]:
        """One line per damaged step, in step order."""
        return [s.problem for s in self.steps if s.problem]

    @property
    def newer_note(self) -> str:
        """What to say about a file from a newer version of the app ("" when it is not)."""
        if self.version <= FORMAT_VERSION:
            return ""
        return (
            f"This lesson was written by a newer Device Explorer (lesson format {self.version}; this one "
            f"reads {FORMAT_VERSION}): what this version does not know is kept but not shown."
        )
