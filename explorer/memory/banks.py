"""Shared-memory bank conflicts of one warp's access, for compute capability 5.0 and newer.

The rules, from NVIDIA's CUDA C++ Programming Guide (sections "Compute Capability 5.x" and later,
"Shared Memory"): shared memory has 32 banks; successive 32-bit words map to successive banks,
so word ``w`` lives in bank ``w % 32``; each bank serves one 32-bit word per cycle; lanes that
read the *same* word are served together (a broadcast), lanes that need *different* words of one
bank are serialised. So a request takes as many passes ("wavefronts", in Nsight Compute's words)
as the largest number of distinct words asked of any one bank: its conflict degree.

Wider accesses are split before banks are looked at: a warp's 64-bit (8-byte) access is served
as two half-warp requests (lanes 0-15, then 16-31) and a 128-bit (16-byte) one as four
quarter-warp requests (lanes 0-7, 8-15, ...), each of which can move the full 128 bytes the 32
banks give per cycle. Conflicts are counted within each part and the parts' passes add up: a
conflict-free 8-byte access takes 2 wavefronts and a 16-byte one 4, the fewest that their 256
and 512 bytes need. This is how NVIDIA describes 64- and 128-bit shared-memory accesses (the
Programming Guide's note that such accesses are split, and Nsight Compute's shared-memory
wavefront counters that expose it); 1- and 2-byte elements share words, so neighbours that fall
in one word are a broadcast.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.errors import UserError
from explorer.memory.coalescing import ELEMENT_SIZES, MAX_ELEMENTS, WARP_SIZE

BANKS = 32
WORD_BYTES = 4
SOURCE = (
    "NVIDIA CUDA C++ Programming Guide, Compute Capability 5.x+ 'Shared Memory': 32 banks of 32-bit "
    "words, bank = word % 32, same-word reads broadcast; 64-bit accesses served per half-warp and "
    "128-bit per quarter-warp"
)


def _check_elem(elem_bytes: int) -> None:
    if elem_bytes not in ELEMENT_SIZES:
        raise UserError(
            f"element size {elem_bytes} bytes is not one a GPU loads in one instruction; "
            f"use {', '.join(map(str, ELEMENT_SIZES))}"
        )


class _WarpAccess:
    """What every shape of a warp's shared-memory access shares: the words an element covers, and
    how the warp is split into requests by element size. A subclass says where each lane reads."""

    elem_bytes: int

    def lane_address(self, lane: int) -> int:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def lane_words(self, lane: int) -> range:
        """The 32-bit words ``lane``'s element covers (one for elements of 4 bytes or less)."""
        first = self.lane_address(lane) // WORD_BYTES
        return range(first, first + max(1, self.elem_bytes // WORD_BYTES))

    @property
    def lanes_per_phase(self) -> int:
        """32 lanes at a time up to 4-byte elements, 16 for 8-byte, 8 for 16-byte."""
        return WARP_SIZE // max(1, self.elem_bytes // WORD_BYTES)

    def lane_number(self, index: int) -> int:
        """The warp lane of the ``index``-th active lane: lanes 0, 1, 2, ... unless a subclass says."""
        return index


@dataclass(frozen=True)
class SharedAccess(_WarpAccess):
    """One warp-wide shared-memory access: lane ``i`` touches element ``offset + i * stride``.

    A stride of 0 is allowed here (every lane reads one element: the broadcast case a course
    shows beside the conflicts).
    """

    elem_bytes: int = 4
    stride: int = 1
    offset: int = 0
    active_lanes: int = WARP_SIZE

    def __post_init__(self) -> None:
        _check_elem(self.elem_bytes)
        if not 0 <= self.stride <= MAX_ELEMENTS:
            raise UserError(f"stride {self.stride} is outside 0..{MAX_ELEMENTS} elements")
        if not 0 <= self.offset <= MAX_ELEMENTS:
            raise UserError(f"offset {self.offset} is outside 0..{MAX_ELEMENTS} elements")
        if not 1 <= self.active_lanes <= WARP_SIZE:
            raise UserError(
                f"active lanes {self.active_lanes} is outside 1..{WARP_SIZE} (a warp has 32 lanes)"
            )

    def lane_address(self, lane: int) -> int:
        return (self.offset + lane * self.stride) * self.elem_bytes


@dataclass(frozen=True)
class SharedGather(_WarpAccess):
    """One warp-wide shared-memory access where each lane names its own element: lane ``i`` reads
    ``elements[i]`` (``len(elements)`` lanes take part, from lane 0). The shape a 2-D tile's reads
    take once a warp spans several of its rows, as ``As[ty][k]`` and ``Bs[k][tx]`` of a tiled
    matmul do with a T x T block: no single stride describes them when T is not 32."""

    elements: tuple[int, ...]
    elem_bytes: int = 4
    #: the warp lane of each element, ascending, where the active lanes are not 0, 1, 2, ... (a traced
    #: kernel behind an ``if``); empty: lanes 0 to len(elements) - 1
    lanes: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        _check_elem(self.elem_bytes)
        if not 1 <= len(self.elements) <= WARP_SIZE:
            raise UserError(f"a warp has 1 to {WARP_SIZE} lanes; {len(self.elements)} elements given")
        if any(not 0 <= e <= MAX_ELEMENTS for e in self.elements):
            raise UserError(f"an element index is outside 0..{MAX_ELEMENTS}")
        if self.lanes and (
            len(self.lanes) != len(self.elements)
            or any(not 0 <= n < WARP_SIZE for n in self.lanes)
            or list(self.lanes) != sorted(set(self.lanes))
        ):
            raise UserError(
                f"lanes {list(self.lanes)[:40]} are not one distinct lane 0..31 per element, ascending"
            )

    def lane_number(self, index: int) -> int:
        return self.lanes[index] if self.lanes else index

    @property
    def active_lanes(self) -> int:
        return len(self.elements)

    def lane_address(self, lane: int) -> int:
        return self.elements[lane] * self.elem_bytes


def tile_column(width: int, column: int = 0, elem_bytes: int = 4) -> SharedAccess:
    """Lane i reads ``tile[i][column]`` of a row-major ``tile[32][width]``: the transpose's read.
    ``width = 32`` puts every lane in one bank; the padded ``width = 33`` spreads them over all 32."""
    if not 1 <= width <= 4096:
        raise UserError(f"tile width {width} is outside 1..4096 elements")
    if not 0 <= column < width:
        raise UserError(f"column {column} is outside the tile's 0..{width - 1}")
    return SharedAccess(elem_bytes=elem_bytes, stride=width, offset=column)


@dataclass(frozen=True)
class LaneBank:
    lane: int
    address: int
    word: int  # first 32-bit word
    bank: int  # bank of that word
    banks: tuple[int, ...]  # every bank the element covers (two for 8 bytes, four for 16)
    phase: int  # which half- or quarter-warp request serves it


@dataclass(frozen=True)
class Phase:
    lanes: range
    #: bank -> distinct words asked of it in this phase
    words_per_bank: dict[int, tuple[int, ...]]

    @property
    def degree(self) -> int:
        return max((len(w) for w in self.words_per_bank.values()), default=0)


@dataclass(frozen=True)
class BankConflicts:
    access: SharedAccess | SharedGather
    lanes: tuple[LaneBank, ...]
    phases: tuple[Phase, ...]  # only phases with an active lane

    @property
    def conflict_degree(self) -> int:
        """The most distinct words any one bank is asked for in one pass (1 = conflict-free)."""
        return max(p.degree for p in self.phases)

    @property
    def wavefronts(self) -> int:
        """Passes the access takes: each phase's degree, added up."""
        return sum(p.degree for p in self.phases)

    @property
    def ideal_wavefronts(self) -> int:
        return len(self.phases)

    def to_dict(self) -> dict[str, object]:
        a = self.access
        pattern: dict[str, object] = (
            {"stride": a.stride, "offset": a.offset}
            if isinstance(a, SharedAccess)
            else {"elements": list(a.elements)}
        )
        return {
            "space": "shared",
            "elem_bytes": a.elem_bytes,
            **pattern,
            "active_lanes": a.active_lanes,
            "conflict_degree": self.conflict_degree,
            "wavefronts": self.wavefronts,
            "ideal_wavefronts": self.ideal_wavefronts,
            "lanes_per_phase": a.lanes_per_phase,
            "lanes": [
                {
                    "lane": lb.lane,
                    "address": lb.address,
                    "word": lb.word,
                    "bank": lb.bank,
                    "banks": list(lb.banks),
                }
                for lb in self.lanes
            ],
            "source": SOURCE,
        }


def bank_conflicts(access: SharedAccess | SharedGather) -> BankConflicts:
    """Which bank each lane hits, the conflict degree and the wavefronts (see the module docstring)."""
    per = access.lanes_per_phase
    by_phase: dict[int, list[int]] = {}  # phase -> the indices of its active lanes
    for index in range(access.active_lanes):
        by_phase.setdefault(access.lane_number(index) // per, []).append(index)
    lanes = []
    phases = []
    for phase, indices in sorted(by_phase.items()):
        words: dict[int, set[int]] = {}
        for index in indices:
            covered = access.lane_words(index)
            for w in covered:
                words.setdefault(w % BANKS, set()).add(w)
            lanes.append(
                LaneBank(
                    lane=access.lane_number(index),
                    address=access.lane_address(index),
                    word=covered[0],
                    bank=covered[0] % BANKS,
                    banks=tuple(w % BANKS for w in covered),
                    phase=phase,
                )
            )
        span = range(access.lane_number(indices[0]), access.lane_number(indices[-1]) + 1)
        phases.append(Phase(span, {b: tuple(sorted(ws)) for b, ws in sorted(words.items())}))
    return BankConflicts(access=access, lanes=tuple(lanes), phases=tuple(phases))
