"""The benchmark registry: every workload the app can run, with its sizes, counts and lesson.

Pure data, no torch or numba: the window lists workloads before anything heavy loads. What a
workload is (``Workload``) and the constants its variants share live one level down, in
``explorer.bench.workload``. Each workload's variants (``explorer.bench.variants.Variant``: key,
label, run function) are declared in the ``wl_*`` module that implements them; a workload reaches
them through a small loader here that imports that module on first use. The ``wl_*`` modules
import torch and numba only inside their run functions, which execute in the worker process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from explorer.bench.workload import (
    BRANCH_STEPS,
    FLOAT32_BYTES,
    KIB,
    LESSON_MATMULS,
    MATVEC_COLS,
    SMALL_MATRIX,
    STRIDED_COPY_ELEMENTS_GPU,
    TILED_MATMUL_SIM_MAX,
    Workload,
    cnn_forward_flops_per_image,
    cnn_param_count,
    powers_of_two,
)
from explorer.errors import UserError
from explorer.inputs import shown

if TYPE_CHECKING:
    from explorer.bench.variants import Variant


# --- where each workload's variants are declared (spelled out so PyInstaller sees every module) ---


def _matmul_code() -> tuple[Variant, ...]:
    from explorer.bench.wl_torch import MATMUL

    return MATMUL


def _timing_lesson_code() -> tuple[Variant, ...]:
    from explorer.bench.wl_torch import TIMING_LESSON

    return TIMING_LESSON


def _small_vs_big_code() -> tuple[Variant, ...]:
    from explorer.bench.wl_torch import SMALL_VS_BIG

    return SMALL_VS_BIG


def _two_gpus_code() -> tuple[Variant, ...]:
    from explorer.bench.wl_torch import TWO_GPUS

    return TWO_GPUS


def _vector_add_code() -> tuple[Variant, ...]:
    from explorer.bench.wl_numba import VECTOR_ADD

    return VECTOR_ADD


def _matvec_code() -> tuple[Variant, ...]:
    from explorer.bench.wl_numba import MATVEC

    return MATVEC


def _copies_code() -> tuple[Variant, ...]:
    from explorer.bench.wl_copies import COPIES

    return COPIES


def _cnn_step_code() -> tuple[Variant, ...]:
    from explorer.bench.wl_cnn import CNN_STEP

    return CNN_STEP


def _strided_copy_code() -> tuple[Variant, ...]:
    from explorer.bench.wl_memory import STRIDED_COPY

    return STRIDED_COPY


def _shared_transpose_code() -> tuple[Variant, ...]:
    from explorer.bench.wl_memory import SHARED_TRANSPOSE

    return SHARED_TRANSPOSE


def _branch_code() -> tuple[Variant, ...]:
    from explorer.bench.wl_memory import BRANCH

    return BRANCH


def _utilization_trap_code() -> tuple[Variant, ...]:
    from explorer.bench.wl_memory import UTILIZATION_TRAP

    return UTILIZATION_TRAP


def _tiled_matmul_code() -> tuple[Variant, ...]:
    from explorer.bench.wl_tiling import TILED_MATMUL

    return TILED_MATMUL


def _crash_test_code() -> tuple[Variant, ...]:
    from explorer.bench.wl_selftest import CRASH

    return CRASH


def _hang_test_code() -> tuple[Variant, ...]:
    from explorer.bench.wl_selftest import HANG

    return HANG


def _oom_test_code() -> tuple[Variant, ...]:
    from explorer.bench.wl_selftest import OUT_OF_MEMORY

    return OUT_OF_MEMORY


# --- the workloads -----------------------------------------------------------------------------

WORKLOADS: dict[str, Workload] = {}


def _register(w: Workload) -> Workload:
    WORKLOADS[w.name] = w
    return w


_register(
    Workload(
        name="matmul",
        title="Matrix multiply (float32)",
        description="C = A @ B for square float32 matrices with torch; GFLOP/s = 2 n^3 / time.",
        lesson=(
            "A matmul does 2n^3 operations on 3n^2 numbers, so the bigger n gets the more work each byte "
            "feeds. Small matrices are dominated by fixed costs: a GPU launch, the copy of arguments, a "
            "synchronize, microseconds each, that a CPU call does not pay. As n grows those costs are "
            "amortised and the GPU climbs towards its FP32 peak (the dashed line), far above what the "
            "CPU's cores can reach. Where the two curves cross is the size below which sending work to "
            "the GPU is not worth it; the crossing moves with the GPU, the number of CPU cores and the "
            "launch overhead, which is why it is measured here rather than quoted."
        ),
        size_name="matrix size n",
        default_sizes_cpu=powers_of_two(64, 2048),  # a 4096 CPU matmul takes seconds per repeat on a laptop
        default_sizes_gpu=powers_of_two(64, 8192),
        unit="GFLOP/s",
        flops=lambda n: 2.0 * n**3,
        bytes_moved=lambda n: 3.0 * FLOAT32_BYTES * n * n,
        code=_matmul_code,
    )
)

_register(
    Workload(
        name="vector_add",
        title="Vector add (numba kernel vs numpy)",
        description=(
            "u = a + b on float32 vectors: a numba @cuda.jit kernel (1024-thread blocks filling every SM, "
            "four elements in flight per thread) vs numpy. On a GPU the L2 is flushed before each sample "
            "unless a warm L2 is chosen."
        ),
        lesson=(
            "Adding two vectors does one addition per 12 bytes moved: nothing to compute, everything to "
            "move. The kernel alone is limited by the GPU's memory bandwidth (the peak line) and, for "
            "small vectors, by the launch and the synchronize, so numpy on one core can win until the "
            "vectors are large. With the copies to and from the GPU included, every element crosses "
            "the PCIe bus three times, and the bus is slower than either memory: data that crosses the "
            "bus for one cheap operation rarely pays. Keep data on the device and do more work per byte. "
            "Each sample starts with a cold L2 (flushed), as data a program touches for the first time "
            "does: with a warm L2 a vector that fits in it is read from the L2, so a 16 MB vector add warm "
            "can exceed the DRAM roof; cold it cannot."
        ),
        size_name="elements N",
        default_sizes_cpu=(1_000, 10_000, 100_000, 1_000_000, 10_000_000, 30_000_000),
        default_sizes_gpu=(1_000, 10_000, 100_000, 1_000_000, 10_000_000, 30_000_000, 100_000_000),
        unit="GB/s",
        flops=lambda n: float(n),
        bytes_moved=lambda n: 3.0 * FLOAT32_BYTES * n,
        size_format="N={size:,}",
        code=_vector_add_code,
        l2_switch=True,
        preload=("numpy", "numba", "torch"),
    )
)

_register(
    Workload(
        name="matvec",
        title="Matrix-vector product (N x 100)",
        description=(
            "u = A v for an N x 100 float32 matrix: numba kernel (one thread per row) vs numpy vs torch; "
            "GB/s, as it is memory-bound."
        ),
        lesson=(
            "Each row's dot product is independent, so a GPU can give every row its own thread. With 100 "
            "columns each thread does 200 operations, enough to hide the launch once N reaches about "
            "10^5 rows. It is still a memory-bound operation (2 operations per 4-byte matrix element, "
            "half a FLOP per byte), so it is measured in GB/s against the memory roof: on the roofline "
            "it sits under the slanted roof, far below the matmul, because each number is used once. On a GPU the one-thread-per-row kernel makes neighbouring "
            "threads read addresses 100 floats apart (uncoalesced), while torch.mv calls a library "
            "kernel that reads rows together: compare the two GPU curves to see what that costs."
        ),
        size_name="rows N",
        default_sizes_cpu=(1_000, 10_000, 100_000, 1_000_000),
        default_sizes_gpu=(1_000, 10_000, 100_000, 1_000_000, 10_000_000),
        unit="GB/s",  # memory-bound: bytes are its limit
        flops=lambda n: 2.0 * n * MATVEC_COLS,
        bytes_moved=lambda n: FLOAT32_BYTES * (n * MATVEC_COLS + MATVEC_COLS + n),
        size_format="N={size:,}x100",
        code=_matvec_code,
        preload=("numpy", "numba", "torch"),
    )
)

_register(
    Workload(
        name="copies",
        title="Host <-> device copies (pageable vs pinned)",
        description=(
            "Copy a buffer host to device and device to host from pageable and from pinned (page-locked) "
            "memory; GB/s against the PCIe link's peak. On the CPU: a host memcpy, for scale."
        ),
        lesson=(
            "Every copy pays a fixed cost (tens of microseconds) before the first byte moves, so small "
            "copies reach a tiny fraction of the bus's bandwidth: batch your transfers. From pageable "
            "memory the driver first copies into a pinned staging buffer, then over the bus; from pinned "
            "memory the GPU's copy engine reads it directly, which is faster and can overlap with "
            "compute (non_blocking=True). The peak line is the PCIe link's: generation x lanes, "
            "e.g. gen3 x16 = 15.75 GB/s per direction after 128b/130b encoding; packet headers and "
            "flow control keep real copies below it. The CPU row is a one-core host memcpy, shown for "
            "scale: it is not a bus transfer."
        ),
        size_name="bytes",
        default_sizes_cpu=tuple(4 * KIB * 4**i for i in range(9)),  # 4 KiB .. 256 MiB
        default_sizes_gpu=tuple(4 * KIB * 4**i for i in range(10)),  # 4 KiB .. 1 GiB
        unit="GB/s",
        bytes_moved=lambda n: float(n),
        working_set=lambda n: 2.0 * n,  # source and destination
        size_format="bytes",
        dtype="uint8",
        code=_copies_code,
    )
)

_register(
    Workload(
        name="small_vs_big",
        title="Many small syncs vs one big copy",
        description=(
            "Multiply 100x100 matrices N times (N = the size), logging the Frobenius norm of each product: "
            "with .item() each step (a synchronizing copy each time) vs kept on the device and copied once."
        ),
        lesson=(
            "A 100x100 matmul is a few microseconds of GPU work. Calling .item() after each one forces "
            "the CPU to wait for the GPU and copies 4 bytes over the bus: the GPU idles while the CPU "
            "waits, and the CPU idles while the GPU works. Keeping the log on the device lets the CPU "
            "queue all the launches ahead and copy the whole log once at the end. On a CPU both versions "
            "cost the same, because .item() on a CPU tensor copies nothing and there is no queue."
        ),
        size_name="steps",
        default_sizes_cpu=(100, 300, 1000),
        default_sizes_gpu=(100, 300, 1000, 3000),
        unit="GFLOP/s",
        flops=lambda steps: steps * (2.0 * SMALL_MATRIX**3 + 2.0 * SMALL_MATRIX**2),
        bytes_moved=lambda steps: steps * 3.0 * FLOAT32_BYTES * SMALL_MATRIX**2,
        working_set=lambda _steps: 3.0 * FLOAT32_BYTES * SMALL_MATRIX**2,  # the same three matrices
        size_format="steps={size:,}",
        code=_small_vs_big_code,
    )
)

_register(
    Workload(
        name="cnn_step",
        title="CNN training step (CIFAR-10 shapes)",
        description=(
            "One training step (copy batch, forward, loss, backward, SGD update) of a small CNN on synthetic "
            f"3x32x32 batches; images/s and the share of the step spent copying the batch. "
            f"{cnn_param_count():,} parameters."
        ),
        lesson=(
            "Small batches leave a GPU mostly idle: each layer is a launch of a few microseconds of work "
            "and the step is dominated by launch and Python overhead, so images/s grows almost linearly "
            "with the batch until the GPU is full. Copying the batch from host memory is a fixed share "
            "of each step (extra copy_share): 12 KiB per image over PCIe. Feed from pinned memory and "
            "overlap copies with compute (DataLoader(pin_memory=True), .to(device, non_blocking=True)) "
            "when it grows. On the CPU there is nothing to copy, and cores are few, so images/s flattens "
            "early. The FLOP count is forward x 3, the usual estimate for forward + backward."
        ),
        size_name="batch size",
        default_sizes_cpu=powers_of_two(16, 1024),
        default_sizes_gpu=powers_of_two(16, 1024),
        unit="images/s",
        flops=lambda b: 3.0 * b * cnn_forward_flops_per_image(),
        bytes_moved=lambda b: b * 3.0 * 32 * 32 * FLOAT32_BYTES,
        size_format="batch={size:,}",
        code=_cnn_step_code,
    )
)

_register(
    Workload(
        name="timing_lesson",
        title="Timing lesson: naive vs synchronized",
        description=(
            "Ten n x n matmuls timed twice: naively (clock read right after the launches return) and "
            "synchronized (clock read after the device has finished)."
        ),
        lesson=(
            "CUDA launches are asynchronous: a matmul call on a GPU tensor queues the work and returns "
            "in microseconds. Reading the clock then measures how fast Python can queue launches, not "
            "how fast the GPU computes; the work finishes later, whenever something synchronizes "
            "(.item(), .cpu(), printing, torch.cuda.synchronize()). That is how a notebook reports ten "
            "10000x10000 matmuls in 1 ms (that would be 20,000 TFLOP/s). Honest timing synchronizes "
            "before reading the clock, or uses CUDA events. On the CPU both numbers agree: CPU work is "
            "done when the call returns."
        ),
        size_name="matrix size n",
        default_sizes_cpu=(256, 512, 1024, 2048),
        default_sizes_gpu=(1024, 2048, 4096, 8192),
        unit="GFLOP/s",
        flops=lambda n: LESSON_MATMULS * 2.0 * n**3,
        bytes_moved=lambda n: LESSON_MATMULS * 3.0 * FLOAT32_BYTES * n * n,
        working_set=lambda n: 3.0 * FLOAT32_BYTES * n * n,  # ten matmuls of the same matrices
        code=_timing_lesson_code,
    )
)

_register(
    Workload(
        name="two_gpus",
        title="Two GPUs",
        description=(
            "Copy an n x n float32 matrix from one GPU to the other; two matmuls on two GPUs at once vs both "
            "in sequence on one. Needs two GPUs."
        ),
        lesson=(
            "Two GPUs double the compute only if the work is independent and each GPU has its own data: "
            "launches are asynchronous, so the CPU can queue a matmul on cuda:0 and one on cuda:1 and "
            "both run at once. The copy between them goes over NVLink where there is one, else over "
            "PCIe (often through the CPU's root complex), which is why splitting a job that needs "
            "frequent exchanges rarely pays."
        ),
        size_name="matrix size n",
        default_sizes_cpu=(1024,),
        default_sizes_gpu=(1024, 2048, 4096, 8192),
        unit="GFLOP/s",
        needs_gpu_count=2,
        needs_gpu_why="it runs on two GPUs at once and copies between them",
        flops=lambda n: 2 * 2.0 * n**3,
        bytes_moved=lambda n: FLOAT32_BYTES * float(n) * n,
        code=_two_gpus_code,
    )
)


_register(
    Workload(
        name="strided_copy",
        title="Strided copy (coalescing)",
        description=(
            "dst[i] = src[i * stride] for float32 arrays, stride 1 to 32: GB/s of the bytes the copy "
            "asks for, beside the coalescing model's estimate (its sector efficiency x the memory "
            "bandwidth). GPU: a numba kernel over 16M elements (more where 4x the L2 is more); CPU: a numpy "
            "strided copy over 2M."
        ),
        lesson=(
            "A warp's 32 lanes read together, and memory moves in 32-byte sectors: at stride 1 the 32 "
            "floats fill 4 sectors and every fetched byte is used; at stride 2 half of each sector is "
            "thrown away, and from stride 8 on each lane's 4 bytes cost a whole sector, 12.5% efficiency. "
            "The model column multiplies that efficiency (writes stay unit-stride) by the memory's "
            "bandwidth: a model, not a measurement, and the measured/model ratio shows what it leaves "
            "out (L2 hits, DRAM pages, how many requests are in flight). On a CPU the same happens in "
            "64-byte cache lines, later (stride 16) and blurred by prefetchers. The Memory page draws one "
            "warp's sectors for any stride."
        ),
        size_name="stride (elements)",
        default_sizes_cpu=(1, 2, 4, 8, 16, 32),
        default_sizes_gpu=(1, 2, 3, 4, 6, 8, 12, 16, 24, 32),
        unit="GB/s",
        bytes_moved=lambda _stride: (
            2.0 * FLOAT32_BYTES * STRIDED_COPY_ELEMENTS_GPU
        ),  # CPU points carry theirs
        # the whole source (every stride-th element is read) and the destination
        working_set=lambda stride: FLOAT32_BYTES * STRIDED_COPY_ELEMENTS_GPU * (stride + 1.0),
        size_format="stride={size}",
        code=_strided_copy_code,
        l2_switch=True,
        preload=("numpy", "numba"),
    )
)

_register(
    Workload(
        name="shared_transpose",
        title="Shared-memory transpose (bank conflicts)",
        description=(
            "An n x n float32 transpose through a 32 x 32 shared-memory tile, tile[32][32] vs the padded "
            "tile[32][33], beside the modelled bank-conflict degree of the tile's column read (32 vs 1). "
            "Needs a GPU."
        ),
        lesson=(
            "The tiled transpose reads rows of the matrix and writes rows of the result, so both global "
            "accesses are coalesced; the turn happens in shared memory, where the tile is written by rows "
            "and read by columns. In tile[32][32] a column's 32 words are 32 words apart, all in one of "
            "the 32 banks: the read is served one lane at a time, a 32-way conflict. One extra column, "
            "tile[32][33], shifts each row by one bank and the column read takes one pass. The global "
            "traffic is the same, so the difference in GB/s is the conflict's cost; the Memory page's "
            "bank view draws both tiles."
        ),
        size_name="matrix size n",
        default_sizes_cpu=(),
        default_sizes_gpu=(1024, 2048, 4096, 8192),
        unit="GB/s",
        needs_gpu_count=1,
        needs_gpu_why="its kernels use a GPU's shared memory",
        bytes_moved=lambda n: 2.0 * FLOAT32_BYTES * n * n,
        code=_shared_transpose_code,
        l2_switch=True,
        preload=("numpy", "numba"),
    )
)

_register(
    Workload(
        name="branch",
        title="Divergent vs warp-aligned branch",
        description=(
            f"Each element takes one of two paths of {BRANCH_STEPS} multiply-adds: chosen lane by lane "
            "(i % 2, every warp diverges) or warp by warp ((i / 32) % 2, none does), beside the modelled "
            "SIMT efficiency (50% vs 100%). Needs a GPU."
        ),
        lesson=(
            "A warp issues one instruction for its 32 lanes. When the lanes of a warp disagree at an if, "
            "the warp runs the taken path with the other lanes masked off, then the other path: both "
            "paths cost the whole warp, and the lanes do half the work per instruction (SIMT efficiency "
            "50%). The same two paths chosen per warp cost nothing extra, because each warp takes only "
            "one. Both variants do the same arithmetic, so the divergent one should take about twice "
            "as long; independent thread scheduling (CC 7.0+) does not change that. The Memory page's "
            "divergence view draws each warp's paths."
        ),
        size_name="elements N",
        default_sizes_cpu=(),
        default_sizes_gpu=(1 << 20, 1 << 22, 1 << 24),
        unit="GFLOP/s",
        needs_gpu_count=1,
        needs_gpu_why="warps and their divergence are a GPU's",
        flops=lambda n: 2.0 * BRANCH_STEPS * n,
        bytes_moved=lambda n: 2.0 * FLOAT32_BYTES * n,
        size_format="N={size:,}",
        code=_branch_code,
        preload=("numpy", "numba"),
    )
)

_register(
    Workload(
        name="utilization_trap",
        title="Utilization trap (100% busy, one SM)",
        description=(
            "A few blocks of one warp each spin for three seconds while NVML's 'GPU utilization' is "
            "sampled: it reads 100% with one block on one SM as with every SM busy. Size: blocks; "
            "steps/s: how much work was really done. Needs a GPU and NVML."
        ),
        lesson=(
            "Watch the model column: NVML reads 100% 'GPU utilization' for one block of one warp, "
            "which keeps one SM of dozens busy with 32 of its thousands of lane slots, and 100% again "
            "for hundreds of blocks doing a hundred times the work (the steps/s curve). NVML's figure "
            "is the share of time at least one kernel was running, not the share of the GPU at work, "
            "so 100% says the GPU was never idle, not that it was full. nvidia-smi and the Devices "
            "panel show the same number; occupancy and the SMs with blocks (the Launch visualizer) "
            "say how full it is."
        ),
        size_name="blocks (one warp each)",
        default_sizes_cpu=(),
        default_sizes_gpu=(1, 8, 64, 512),
        unit="steps/s",
        needs_gpu_count=1,
        needs_gpu_why="it reads NVML's utilization while a kernel runs",
        size_format="blocks={size:,}",
        code=_utilization_trap_code,
        preload=("numpy", "numba"),
    )
)

_register(
    Workload(
        name="tiled_matmul",
        title="Tiled matmul (shared memory, __syncthreads)",
        description=(
            "C = A @ B for n x n float32 matrices: a numba kernel reading every operand from global memory "
            "vs the tiled kernel of PMPP chapter 5 (T x T tiles in shared memory, two barriers per phase) "
            "at T = 8, 16, 32, and torch's matmul for reference; each checked against numpy, beside the "
            "count model's global traffic. Without a GPU the kernels are checked under numba's CUDA "
            f"simulator (n up to {TILED_MATMUL_SIM_MAX}), not timed."
        ),
        lesson=(
            "The naive kernel reads a row of A and a column of B from global memory for every output: "
            "2 n^3 loads, a quarter of a FLOP per byte, so it waits on memory. The tiled kernel has a "
            "block copy a T x T tile of A and one of B into shared memory, wait at __syncthreads() until "
            "both are whole, run T multiply-adds per thread from shared memory, and wait again before the "
            "next tiles overwrite them. Each element is then loaded from global memory n / T times instead "
            "of n: T times less traffic, T/4 FLOP per byte, for 2 T^2 floats of shared memory per block. "
            "The model column gives the count model's traffic; the Memory page's Tiled matmul tab steps "
            "through one block. cuBLAS (torch) tiles in registers as well and is the ceiling to compare with."
        ),
        size_name="matrix size n",
        default_sizes_cpu=(20, 36),
        default_sizes_gpu=(256, 512, 1000, 2048, 4096),
        unit="GFLOP/s",
        flops=lambda n: 2.0 * n**3,
        # the fewest bytes any matmul moves (A and B read, C written once); each kernel's point
        # carries its own count model's traffic instead
        bytes_moved=lambda n: 3.0 * FLOAT32_BYTES * n * n,
        code=_tiled_matmul_code,
        preload=("numpy", "numba", "torch"),
    )
)


# --- test-only workloads: crash or hang on purpose, so the runner's recovery can be tested ------

TEST_WORKLOADS: dict[str, Workload] = {}
for _name, _what, _code in (
    ("_crash_test", "kills its worker process (segfault)", _crash_test_code),
    ("_hang_test", "never returns", _hang_test_code),
    ("_oom_test", "asks for more memory than any machine has", _oom_test_code),
):
    TEST_WORKLOADS[_name] = Workload(
        name=_name,
        title=f"test: {_name}",
        description=f"Test only: size 2 {_what}; other sizes time a short Python sum.",
        lesson="Test only.",
        size_name="size",
        default_sizes_cpu=(1, 2, 3),
        default_sizes_gpu=(1, 2, 3),
        unit="elements/s",
        flops=float,
        size_format="size={size:,}",
        code=_code,
        preload=(),
        hidden=True,
    )


def get_workload(name: str) -> Workload:
    """The workload called ``name``; a one-line UserError listing the known ones otherwise."""
    key = (name or "").strip()
    key = key if key in TEST_WORKLOADS else key.replace("-", "_")  # utilization-trap is utilization_trap
    w = WORKLOADS.get(key) or TEST_WORKLOADS.get(key)
    if w is None:
        raise UserError(f"unknown workload {shown(name)}; known workloads: {', '.join(WORKLOADS)}")
    return w


def visible_workloads() -> list[Workload]:
    return [w for w in WORKLOADS.values() if not w.hidden]
