"""What one workload is: the ``Workload`` record, and the sizes and work counts its variants share.

Below both the registry (``workloads``, which lists every workload) and the ``wl_*`` modules that
implement the variants: those import the record and the constants from here, the registry imports
them (lazily) in turn, and nothing climbs back. Pure data and arithmetic, no torch or numba.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from explorer.devices.model import NO_GPU_FOUND
from explorer.errors import UserError
from explorer.units import binary_bytes

if TYPE_CHECKING:
    from explorer.bench.variants import Variant

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
FLOAT32_BYTES = 4
MATVEC_COLS = 100  # the teaching notebook's N x 100 matrices
SMALL_MATRIX = 100  # many-small-vs-one-big multiplies 100 x 100 matrices
LESSON_MATMULS = 10  # the timing lesson times ten matmuls, as the d2l notebook did
# The strided copy's output size: on a GPU 64 MiB out (and 64 MiB to 2 GiB in), beyond any L2 so
# stride 1 measures DRAM; on a CPU 8 MiB out (8 to 256 MiB in), kind to a laptop's memory.
STRIDED_COPY_ELEMENTS_GPU = 1 << 24
STRIDED_COPY_ELEMENTS_CPU = 1 << 21
#: a DRAM figure's working set is at least this many times the L2: a smaller one is partly
#: served from the L2 and reads above the DRAM roof
DRAM_FOOTPRINT_X_L2 = 4
BRANCH_STEPS = 256  # multiply-adds per element on each path of the branch workload
#: the largest n the tiled matmul's kernels are checked at under numba's CUDA simulator (no GPU):
#: one Python thread per CUDA thread, about 5 s per kernel at n = 48 on a busy 2-core machine
TILED_MATMUL_SIM_MAX = 64


def _zero(_size: int) -> float:
    return 0.0


def _no_variants() -> tuple[Variant, ...]:
    return ()


@dataclass(frozen=True)
class Workload:
    """One experiment. ``code`` returns its typed variants (declared in its ``wl_*`` module); a
    point's series name is ``"<device> <label>"`` (just ``"<device>"`` for an empty label), unique
    within a run, so the panel can use it as the series name."""

    name: str
    title: str
    description: str
    lesson: str
    size_name: str
    default_sizes_cpu: tuple[int, ...]
    default_sizes_gpu: tuple[int, ...]
    unit: str  # "GFLOP/s", "GB/s", "images/s", "elements/s"
    needs_gpu_count: int = 0
    flops: Callable[[int], float] = field(default=_zero, compare=False, repr=False)
    bytes_moved: Callable[[int], float] = field(default=_zero, compare=False, repr=False)
    size_format: str = "n={size:,}"
    dtype: str = "float32"
    # the workload's variants, declared in its wl_* module (imported on first call, not with the registry)
    code: Callable[[], tuple[Variant, ...]] = field(default=_no_variants, compare=False, repr=False)
    preload: tuple[str, ...] = ("torch",)  # heavy modules the worker imports before its first point
    hidden: bool = False  # test-only workloads, never listed in the UI
    # why it needs GPUs (``needs_gpu_count``), in a few words: "its kernels use shared memory"
    needs_gpu_why: str = ""
    # the bytes one step's data occupies, all arrays together, where that is not ``bytes_moved``
    # (a step that goes over the same data twice): the memory level a point lives in comes from it
    working_set: Callable[[int], float] | None = field(default=None, compare=False, repr=False)
    #: its GPU kernels stream memory: they flush the L2 before each sample (cold, the default) or
    #: leave it as the previous sample left it (warm, ``PointSpec.warm_l2``)
    l2_switch: bool = False

    def working_set_bytes(self, size: int) -> float:
        """The bytes a point of ``size`` keeps in play (its working set)."""
        return self.working_set(size) if self.working_set is not None else self.bytes_moved(size)

    def variants_on(self, device: str) -> list[Variant]:
        """The variants a point on ``device`` can be, in the order they run and are listed."""
        return [v for v in self.code() if v.runs_on(device)]

    def variants(self, device: str) -> list[str]:
        """The series names ``device`` produces: ``"cuda:0 H2D pinned"``."""
        return [v.series_name(device) for v in self.variants_on(device)]

    def variant(self, key: str) -> Variant:
        """The variant whose key is ``key``; a one-line UserError naming the known keys otherwise."""
        found = next((v for v in self.code() if v.key == key), None)
        if found is None:
            known = ", ".join(v.key for v in self.code())
            raise UserError(f"{self.name} has no variant '{key}'; its variants: {known}")
        return found

    def default_sizes(self, device: str) -> tuple[int, ...]:
        return self.default_sizes_cpu if device == "cpu" else self.default_sizes_gpu

    def default_sizes_for(self, devices: list[str]) -> list[int]:
        """The sizes a run on ``devices`` measures by default: every device's, merged, ascending
        (the CPU's when none is chosen yet, the GPU's for a workload that runs only on a GPU, so
        the form is never empty)."""
        sizes = set(self.default_sizes_cpu) if "cpu" in devices or not devices else set()
        if any(d != "cpu" for d in devices) or not self.default_sizes_cpu:  # a GPU-only one: its GPU's
            sizes |= set(self.default_sizes_gpu)
        return sorted(sizes)

    def gpu_shortfall(self, chosen_gpus: int, present_gpus: int, machine: str = "this machine") -> str | None:
        """Why a run cannot start with this many GPUs chosen, or ``None`` when it can (``machine``:
        where the GPUs are, "this machine" or a remote's name)."""
        if chosen_gpus >= self.needs_gpu_count:
            return None
        return (
            f"{self.title} needs {self._gpus_needed} chosen; {chosen_gpus} chosen "
            f"and {present_gpus} present on {machine}."
        )

    @property
    def _gpus_needed(self) -> str:
        return "a GPU" if self.needs_gpu_count == 1 else f"{self.needs_gpu_count} GPUs"

    def cannot_run_here(
        self, present_gpus: int, why_no_gpu: str = "", machine: str = "this machine"
    ) -> str | None:
        """Why this workload cannot run on a machine with ``present_gpus`` usable GPUs, in one
        line said before any run (``why_no_gpu``: discovery's reason when there are none;
        ``machine``: "this machine", or a remote's name), or ``None`` when it can."""
        if present_gpus >= self.needs_gpu_count:
            return None
        because = f" ({self.needs_gpu_why})" if self.needs_gpu_why else ""
        has = "none" if present_gpus == 0 else str(present_gpus)
        # the first reason discovery gives is the one that matters ("no NVIDIA driver is installed")
        why = " ".join(why_no_gpu.split()).removeprefix(NO_GPU_FOUND).strip().split(". ")[0].rstrip(".")
        reason = f" ({why})" if why and not present_gpus else ""
        return f"{self.name} needs {self._gpus_needed}{because}; {machine} has {has}{reason}"

    def l2_refusal(self, device: str) -> str | None:
        """Why the cold/warm L2 choice means nothing for this workload's points on ``device``, in
        one line, or None where it applies (a GPU, a workload with ``l2_switch``)."""
        if device == "cpu":
            return "the L2 choice is for GPUs; CPU points run with the CPU's caches as they find them"
        if not self.l2_switch:
            return f"{self.name} does not stream memory, so its points leave the L2 as it is"
        return None

    def size_label(self, size: int) -> str:
        if self.size_format == "bytes":
            return binary_bytes(size, 2)
        return self.size_format.format(size=size)


def strided_copy_elements(l2_bytes: int | None, base: int = STRIDED_COPY_ELEMENTS_GPU) -> int:
    """The strided copy's output elements on a GPU with an L2 of ``l2_bytes``: ``base``, or more
    where that leaves the stride-1 working set (source and copy, 8 bytes an element) under
    ``DRAM_FOOTPRINT_X_L2`` times the L2 (60 MB on an H200: 30 Mi elements, 240 MiB), in whole
    Mi elements. The L2's size unknown: ``base``."""
    if not l2_bytes or l2_bytes <= 0:
        return base
    need = -(-DRAM_FOOTPRINT_X_L2 * l2_bytes // (2 * FLOAT32_BYTES))
    return base if need <= base else -(-need // MIB) * MIB


def powers_of_two(lo: int, hi: int) -> tuple[int, ...]:
    out, v = [], lo
    while v <= hi:
        out.append(v)
        v *= 2
    return tuple(out)


# --- the CNN's work, counted from its layer shapes (kept here so the UI can show it) -----------

# (in_channels, out_channels, kernel, padding, pool_after) for 32x32 inputs; then the dense layers.
CNN_CONVS: tuple[tuple[int, int, int, int, bool], ...] = (
    (3, 32, 3, 1, True),
    (32, 64, 3, 1, True),
    (64, 64, 3, 1, True),
)
CNN_DENSE: tuple[tuple[int, int], ...] = ((64 * 4 * 4, 128), (128, 10))


def cnn_forward_flops_per_image() -> float:
    flops, side = 0.0, 32
    for cin, cout, k, pad, pool in CNN_CONVS:
        side = side + 2 * pad - k + 1
        flops += 2.0 * cin * cout * k * k * side * side
        if pool:
            side //= 2
    for fin, fout in CNN_DENSE:
        flops += 2.0 * fin * fout
    return flops


def cnn_param_count() -> int:
    n = sum(cin * cout * k * k + cout for cin, cout, k, _, _ in CNN_CONVS)
    return n + sum(fin * fout + fout for fin, fout in CNN_DENSE)
