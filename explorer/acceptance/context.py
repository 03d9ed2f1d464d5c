"""What a check is given: the GPU to prove, where to write, and the sizes to measure at.

``Sizes`` holds every size the checks measure at. ``Sizes()`` is the GPU run's (an H100 or H200:
large enough for each figure to mean something, small enough for the whole run to fit about eight
minutes); ``Sizes.tiny()`` is the tests' (numba's simulator runs each CUDA thread in Python). A
child receives both as JSON from the parent.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: each workload's GPU variants at small sizes: the correctness pass (every GPU result is checked
#: against numpy inside the workload, so a wrong kernel is an error row)
SMALL_SIZES: dict[str, tuple[int, ...]] = {
    "matmul": (64, 1024),
    "vector_add": (1000, 1_000_000),
    "matvec": (100_000,),
    "copies": (4096, 1 << 20),
    "small_vs_big": (100,),
    "cnn_step": (16,),
    "timing_lesson": (1024,),
    "two_gpus": (1024,),
    "strided_copy": (1, 32),
    "shared_transpose": (1024,),
    "branch": (1 << 20,),
    "utilization_trap": (1,),
}


@dataclass(frozen=True)
class Sizes:
    small: dict[str, tuple[int, ...]] = field(default_factory=lambda: dict(SMALL_SIZES))
    small_budget_s: float = 0.1
    point_budget_s: float = 1.0  # seconds per point of the figures
    sgemm_n: int = 8192
    vector_n: int = 100_000_000
    copy_bytes: tuple[int, ...] = (1 << 28,)  # host <-> device
    strides: tuple[int, ...] = tuple(range(1, 33))
    stride_budget_s: float = 0.4
    transpose_n: int = 8192
    branch_n: int = 1 << 24
    trap_blocks: tuple[int, ...] = (1, 0)  # 0: as many blocks as the GPU has SMs
    occupancy_configs: int = 320
    occupancy_register_caps: tuple[int, ...] = (24, 32, 40, 48, 56, 64, 80, 96, 128, 0)
    occupancy_accumulators: int = 128  # the test kernel's live values: ~140 registers uncapped
    realrun_blocks_per_sm: int = 4
    realrun_threads: int = 256
    lesson_budget_s: float = 0.5
    pcie_watch_s: float = 2.0  # how long NVML's PCIe counter is read during a pinned copy

    @classmethod
    def tiny(cls) -> Sizes:
        """Sizes for numba's CUDA simulator (tests): every kernel a few hundred threads."""
        return cls(
            small={"branch": (96,), "vector_add": (100,)},
            small_budget_s=0.05,
            point_budget_s=0.05,
            sgemm_n=64,
            vector_n=256,
            copy_bytes=(4096,),
            strides=(1, 2, 8),
            stride_budget_s=0.05,
            transpose_n=40,
            branch_n=96,
            trap_blocks=(1,),
            occupancy_configs=20,
            occupancy_register_caps=(32, 0),
            occupancy_accumulators=8,
            realrun_blocks_per_sm=1,
            realrun_threads=32,
            lesson_budget_s=0.05,
            pcie_watch_s=0.1,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Sizes:
        values = dict(data)
        values["small"] = {k: tuple(v) for k, v in values.get("small", {}).items()}
        for name in ("copy_bytes", "strides", "trap_blocks", "occupancy_register_caps"):
            if name in values:
                values[name] = tuple(values[name])
        return cls(**values)


class CannotRun(Exception):
    """Raised by a check that cannot run on this machine; ``str()`` says why (its ``skip`` line)."""


@dataclass
class CheckContext:
    """A check's inputs. ``nvml``: the NVML module (None: pynvml); tests pass the stand-in."""

    device: str
    out_dir: Path
    repo: Path
    sizes: Sizes = field(default_factory=Sizes)
    deadline_s: float = 300.0
    nvml: Any = None
    started: float = field(default_factory=time.monotonic)
    #: a way to reach this machine over ssh (``destination``, ``ssh_config``, ``python``,
    #: ``prefix``): the runner's loopback sshd; None with ``remote_missing`` saying why there is none
    remote: dict[str, str] | None = None
    remote_missing: str = ""
    #: write the GPU recordings into the lesson files of ``repo`` (besides the output folder)
    write_lessons: bool = True

    @property
    def index(self) -> int:
        return int(self.device.split(":", 1)[1])

    def log(self, message: str) -> None:
        """A progress line on stderr: the parent keeps it, so a check that hangs says where."""
        print(f"[{time.monotonic() - self.started:6.1f} s] {message}", file=sys.stderr, flush=True)

    def to_json(self) -> str:
        return json.dumps(
            {
                "device": self.device,
                "out_dir": str(self.out_dir),
                "repo": str(self.repo),
                "sizes": self.sizes.to_dict(),
                "deadline_s": self.deadline_s,
                "remote": self.remote,
                "remote_missing": self.remote_missing,
                "write_lessons": self.write_lessons,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> CheckContext:
        data = json.loads(text)
        return cls(
            device=data["device"],
            out_dir=Path(data["out_dir"]),
            repo=Path(data["repo"]),
            sizes=Sizes.from_dict(data["sizes"]),
            deadline_s=float(data["deadline_s"]),
            remote=data.get("remote"),
            remote_missing=str(data.get("remote_missing", "")),
            write_lessons=bool(data.get("write_lessons", True)),
        )
