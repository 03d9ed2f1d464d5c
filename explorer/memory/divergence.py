"""Warp divergence: which lanes of each warp take a branch, and what the warp pays for it.

A warp issues one instruction for all its lanes. At an ``if`` whose condition differs between
lanes, the warp runs the taken path with the other lanes masked off, then the other path with
the first lanes masked off: both paths cost the whole warp's time. So the cost is per *warp*,
not per thread: a branch on ``threadIdx.x % 2`` halves the work done per instruction in every
warp, while a branch on ``(threadIdx.x / 32) % 2`` sends whole warps one way and costs nothing.

SIMT efficiency here is the share of lane slots doing work while the branch runs, assuming the
two paths are equally long: (lanes on path 1 + lanes on path 2) / (paths x 32). A partial last
warp is below 1 even without divergence, since its missing lanes are idle slots too.

Independent thread scheduling (compute capability 7.0 and newer) gives each thread its own
program counter, so diverged lanes may interleave and wait on each other without deadlock; the
paths of one warp are still issued one at a time, so the cost counted here is unchanged.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from explorer.errors import UserError
from explorer.memory.coalescing import WARP_SIZE

MAX_BLOCK_THREADS = 1024
MAX_K = 1 << 20
#: the model's one assumption, said wherever its efficiency is shown (the page and the CLI)
EQUAL_COST_NOTE = (
    "SIMT efficiency here assumes an if and an else of equal cost: a diverged warp spends the same "
    "time on each path. Where one path is longer, it weighs more; an if with no else costs the "
    "diverged warp only the taken path's time."
)
ITS_NOTE = (
    "From compute capability 7.0 each thread has its own program counter (independent thread "
    "scheduling): diverged lanes can wait on each other safely, but a warp still issues one path at "
    "a time, so divergence costs what it did."
)


@dataclass(frozen=True)
class Branch:
    """``if (condition)`` over ``threadIdx.x``. ``kind``: ``mod`` (t % K == 0), ``lt`` (t < K),
    ``warp`` ((t / 32) % K == 0) or ``random`` (each thread takes it with probability ``p``)."""

    kind: str
    k: int = 0
    p: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.kind in ("mod", "warp"):
            if not 1 <= self.k <= MAX_K:
                raise UserError(f"K = {self.k} is outside 1..{MAX_K} for a '{self.kind}:K' branch")
        elif self.kind == "lt":
            if not 0 <= self.k <= MAX_K:
                raise UserError(f"K = {self.k} is outside 0..{MAX_K} for an 'lt:K' branch")
        elif self.kind == "random":
            if not 0.0 <= self.p <= 1.0:
                raise UserError(f"P = {self.p} is outside 0..1 for a 'random:P' branch")
        else:
            raise UserError(f"unknown branch '{self.kind}'; use mod:K, lt:K, warp:K or random:P")

    @property
    def condition(self) -> str:
        return {
            "mod": f"threadIdx.x % {self.k} == 0",
            "lt": f"threadIdx.x < {self.k}",
            "warp": f"(threadIdx.x / 32) % {self.k} == 0",
            "random": f"data[threadIdx.x] is true (each with probability {self.p:g})",
        }[self.kind]

    def takes(self, thread: int) -> bool:
        """The brute-force rule for one thread (the random branch needs the whole block: see
        ``taken_in_block``)."""
        if self.kind == "mod":
            return thread % self.k == 0
        if self.kind == "lt":
            return thread < self.k
        if self.kind == "warp":
            return (thread // WARP_SIZE) % self.k == 0
        raise ValueError("a random branch is drawn per block; use taken_in_block")

    def taken_in_block(self, threads: int) -> list[bool]:
        if self.kind == "random":
            rng = random.Random(self.seed)
            return [rng.random() < self.p for _ in range(threads)]
        return [self.takes(t) for t in range(threads)]


def parse_branch(text: str, seed: int = 0) -> Branch:
    """``mod:K``, ``lt:K``, ``warp:K`` or ``random:P`` as the CLI spells it."""
    kind, sep, value = (text or "").strip().partition(":")
    if not sep or kind not in ("mod", "lt", "warp", "random"):
        raise UserError(f"branch '{text[:40]}' is not one of mod:K, lt:K, warp:K, random:P")
    from explorer.inputs import parse_fraction, parse_whole

    if kind == "random":
        return Branch("random", p=parse_fraction(value, f"P of {kind}:P"), seed=seed)
    return Branch(
        kind, k=parse_whole(value, f"K of {kind}:K", minimum=0 if kind == "lt" else 1, maximum=MAX_K)
    )


@dataclass(frozen=True)
class WarpBranch:
    warp: int
    lanes: int  # threads of the block in this warp (32 but for a partial last warp)
    taken: tuple[int, ...]  # lanes that take the branch
    not_taken: tuple[int, ...]

    @property
    def active_lanes(self) -> tuple[int, ...]:
        """Lanes at work on each path the warp runs, taken path first; one entry if it does not diverge."""
        return tuple(len(p) for p in (self.taken, self.not_taken) if p)

    @property
    def paths(self) -> int:
        return len(self.active_lanes)

    @property
    def diverges(self) -> bool:
        return self.paths > 1

    @property
    def simt_efficiency(self) -> float:
        return sum(self.active_lanes) / (self.paths * WARP_SIZE)


@dataclass(frozen=True)
class Divergence:
    block_threads: int
    branch: Branch
    warps: tuple[WarpBranch, ...]

    @property
    def diverged_warps(self) -> int:
        return sum(1 for w in self.warps if w.diverges)

    @property
    def simt_efficiency(self) -> float:
        """Over the block: lane slots at work / lane slots issued, both paths counted."""
        return sum(sum(w.active_lanes) for w in self.warps) / sum(w.paths * WARP_SIZE for w in self.warps)

    def to_dict(self) -> dict[str, object]:
        return {
            "block": self.block_threads,
            "branch": self.branch.condition,
            "warps": [
                {
                    "warp": w.warp,
                    "lanes": w.lanes,
                    "paths": w.paths,
                    "active_lanes": list(w.active_lanes),
                    "simt_efficiency": w.simt_efficiency,
                }
                for w in self.warps
            ],
            "diverged_warps": self.diverged_warps,
            "simt_efficiency": self.simt_efficiency,
            "assumption": EQUAL_COST_NOTE,
            "note": ITS_NOTE,
        }


def divergence(block_threads: int, branch: Branch) -> Divergence:
    if not 1 <= block_threads <= MAX_BLOCK_THREADS:
        raise UserError(f"block of {block_threads} threads is outside 1..{MAX_BLOCK_THREADS}")
    taken = branch.taken_in_block(block_threads)
    warps = []
    for w in range(-(-block_threads // WARP_SIZE)):
        first = w * WARP_SIZE
        lanes = min(WARP_SIZE, block_threads - first)
        yes = tuple(lane for lane in range(lanes) if taken[first + lane])
        no = tuple(lane for lane in range(lanes) if not taken[first + lane])
        warps.append(WarpBranch(w, lanes, yes, no))
    return Divergence(block_threads, branch, tuple(warps))
