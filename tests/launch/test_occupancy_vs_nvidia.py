"""The Python occupancy port against NVIDIA's own cuda_occupancy.h, case by case.

The test compiles ``occ_driver.cpp`` (which includes the header) with g++, fills NVIDIA's
``cudaOccDeviceProp`` from *our* limits table, and compares the header's answer with
``explorer.launch.occupancy`` on thousands of seeded random launches for every compute
capability in the table. The header keeps its own per-architecture facts (blocks per SM,
allocation units, carveout sizes, sub-partitions), so a wrong table entry fails here too.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from explorer.devices.limits import ArchLimits, known_ccs, limits_for_cc
from explorer.launch.config import LaunchValidationError
from explorer.launch.occupancy import UNLIMITED, occupancy

pytestmark = pytest.mark.slow  # every test here starts a process

HEADER_DIR = Path("/usr/local/cuda/include")
DRIVER_SRC = Path(__file__).with_name("occ_driver.cpp")

# cudaOccLimitingFactor bits
WARPS, REGISTERS, SHARED_MEMORY, BLOCKS = 0x01, 0x02, 0x04, 0x08
BIT_OF = {"warps": WARPS, "registers": REGISTERS, "shared_memory": SHARED_MEMORY, "blocks": BLOCKS}
# The header also flags barriers (0x10, CC >= 9: equal to the block limit on some chips, never
# lower) and virtual resources (0x20, unused by an ordinary kernel); our port does not model them.
COMPARED_BITS = WARPS | REGISTERS | SHARED_MEMORY | BLOCKS

# cudaOccCacheConfig -> the carveout preference the header derives from it (CC >= 7).
CACHE_TO_PERCENT = {0: -1, 1: 100, 2: 0, 3: 50}


@pytest.fixture(scope="module")
def nvidia_driver(tmp_path_factory) -> Path:
    header = HEADER_DIR / "cuda_occupancy.h"
    if not header.is_file():
        pytest.skip(f"NVIDIA's {header} is not installed (CUDA toolkit headers missing)")
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not installed, so cuda_occupancy.h cannot be compiled")
    exe = tmp_path_factory.mktemp("occ") / "occ_driver"
    proc = subprocess.run(
        [gxx, "-O1", "-std=c++11", f"-I{HEADER_DIR}", "-o", str(exe), str(DRIVER_SRC)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return exe


def _prop_fields(lim: ArchLimits) -> list[int]:
    return [
        lim.cc[0],
        lim.cc[1],
        lim.max_threads_per_block,
        lim.max_threads_per_sm,
        lim.max_regs_per_block,
        lim.regs_per_sm,
        lim.warp_size,
        lim.max_smem_per_block_bytes,
        lim.smem_per_sm_bytes,
        lim.max_smem_per_block_optin_bytes,
        lim.reserved_smem_per_block_bytes,
    ]


def _run_header(exe: Path, cases: list[tuple[ArchLimits, int, int, int, int, int]]) -> list[list[int]]:
    lines = [
        " ".join(str(v) for v in _prop_fields(lim) + [threads, regs, smem, carveout, cache])
        for lim, threads, regs, smem, carveout, cache in cases
    ]
    out = subprocess.run(
        [str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    rows = [list(map(int, line.split())) for line in out.stdout.splitlines()]
    assert len(rows) == len(cases)
    return rows


def _random_cases(seed: int, per_cc: int) -> list[tuple[ArchLimits, int, int, int, int, int]]:
    rng = random.Random(seed)
    cases = []
    for cc in known_ccs():
        lim = limits_for_cc(cc)
        for _ in range(per_cc):
            shape = rng.random()
            if shape < 0.6:
                threads = rng.randrange(1, 33) * 32  # whole warps, the usual choice
            elif shape < 0.95:
                threads = rng.randint(1, lim.max_threads_per_block)
            else:
                threads = rng.randint(lim.max_threads_per_block + 1, 2048)  # refused: zero blocks
            regs = rng.choice(
                [rng.randint(0, 255), rng.choice([16, 24, 32, 40, 48, 64, 72, 96, 128, 168, 255])]
            )
            pick = rng.random()
            if pick < 0.25:
                smem = 0
            elif pick < 0.85:
                smem = rng.randint(0, lim.max_smem_per_block_optin_bytes)
            elif pick < 0.95:
                smem = rng.choice([1024, 4096, 8192, 16384, 32768, 49152, lim.max_smem_per_block_optin_bytes])
            else:
                smem = rng.randint(lim.max_smem_per_block_optin_bytes + 1, lim.smem_per_sm_bytes + 4096)
            if rng.random() < 0.5:
                carveout, cache = -1, 0
            elif rng.random() < 0.5:
                carveout, cache = -1, rng.choice([1, 2, 3])
            else:
                carveout, cache = rng.choice([0, 25, 50, 75, 100, rng.randint(0, 100)]), 0
            cases.append((lim, threads, regs, smem, carveout, cache))
    return cases


def _python(lim: ArchLimits, threads: int, regs: int, smem: int, carveout: int, cache: int):
    percent = carveout if carveout != -1 else CACHE_TO_PERCENT[cache]
    return occupancy(lim, threads, regs, smem, carveout_percent=None if percent == -1 else percent)


def _compare(exe: Path, cases) -> list[str]:
    mismatches = []
    for case, row in zip(cases, _run_header(exe, cases), strict=True):
        lim, threads, regs, smem, carveout, cache = case
        status, active, factors, lim_regs, lim_smem, lim_warps, lim_blocks, alloc_regs, alloc_smem = row
        label = (
            f"cc {lim.cc_string} threads={threads} regs={regs} smem={smem} carveout={carveout} cache={cache}"
        )
        try:
            occ = _python(*case)
        except LaunchValidationError as exc:
            if status == 0:
                mismatches.append(f"{label}: Python refused ({exc}) but the header answered {row}")
            continue
        if status != 0:
            mismatches.append(
                f"{label}: header error {status} but Python answered {occ.active_blocks_per_sm}"
            )
            continue
        ours_bits = 0
        for name in occ.limiters:
            ours_bits |= BIT_OF[name]
        got = (
            occ.active_blocks_per_sm,
            ours_bits,
            occ.blocks_limit_regs,
            occ.blocks_limit_smem,
            occ.blocks_limit_warps,
            occ.blocks_limit_blocks,
            occ.regs_per_block_allocated,
            occ.smem_per_block_allocated_bytes,
        )
        want = (
            active,
            factors & COMPARED_BITS,
            lim_regs,
            lim_smem,
            lim_warps,
            lim_blocks,
            alloc_regs,
            alloc_smem,
        )
        if got != want:
            mismatches.append(f"{label}: python {got} != header {want}")
    return mismatches


def test_header_knows_every_cc_in_the_table(nvidia_driver):
    """cuda_occupancy.h answers (status 0) for every CC we list, so each one is really compared."""
    cases = [(limits_for_cc(cc), 256, 32, 0, -1, 0) for cc in known_ccs()]
    for (lim, *_), row in zip(cases, _run_header(nvidia_driver, cases), strict=True):
        assert row[0] == 0, f"cuda_occupancy.h does not know compute capability {lim.cc_string}"


def test_random_launches_match_nvidia_for_every_cc(nvidia_driver):
    cases = _random_cases(seed=20261123, per_cc=600)
    assert len(cases) >= 10_000
    mismatches = _compare(nvidia_driver, cases)
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ, e.g.:\n" + "\n".join(mismatches[:15])


def test_exhaustive_block_sizes_and_registers_on_a_few_ccs(nvidia_driver):
    """Every block size 1..1024 x a spread of register counts, where the breakpoints lie."""
    cases = []
    for cc in [(6, 0), (7, 5), (8, 6), (9, 0), (12, 0)]:
        lim = limits_for_cc(cc)
        for threads in range(1, lim.max_threads_per_block + 1, 7):
            for regs in (0, 1, 32, 33, 63, 64, 65, 128, 200, 255):
                cases.append((lim, threads, regs, 0, -1, 0))
    mismatches = _compare(nvidia_driver, cases)
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ, e.g.:\n" + "\n".join(mismatches[:15])


def test_header_agrees_a_block_without_shared_memory_is_unlimited_by_it(nvidia_driver):
    """Before 8.x a block with no shared memory is not limited by it (INT_MAX); from 8.x the 1 KB
    reserve makes it a real limit. Both sides must say so."""
    for cc, unlimited in [((7, 5), True), ((8, 6), False)]:
        lim = limits_for_cc(cc)
        row = _run_header(nvidia_driver, [(lim, 128, 32, 0, -1, 0)])[0]
        occ = occupancy(lim, 128, 32, 0)
        assert (row[4] == UNLIMITED) is unlimited
        assert occ.blocks_limit_smem == row[4]


def test_worked_examples_agree_with_nvidia(nvidia_driver):
    """The hand-derived examples in examples.py are what NVIDIA's header says too."""
    from tests.launch.examples import EXAMPLES

    cases = [(limits_for_cc(cc), threads, regs, smem, -1, 0) for cc, threads, regs, smem, *_ in EXAMPLES]
    rows = _run_header(nvidia_driver, cases)
    for example, row in zip(EXAMPLES, rows, strict=True):
        cc, threads, regs, smem, blocks, _occ, limiters, source = example
        assert row[0] == 0 and row[1] == blocks, f"{example}: header says {row}"
        bits = 0
        for name in limiters:
            bits |= BIT_OF[name]
        assert row[2] & COMPARED_BITS == bits, f"{example}: header limiting factors {row[2]:#x}"
    assert not _compare(nvidia_driver, cases)
