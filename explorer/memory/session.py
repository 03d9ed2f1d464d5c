"""The Memory page's Coalescing, Bank conflicts and Divergence tabs, Qt-free: what each tab is set
to and what the core computed from it. The tabs under ``explorer/ui/memory`` only show it.

A ``MemorySession`` is to those three tabs what ``LaunchSession`` is to the visualizer: it owns
every input a tab offers (the pattern preset, element size, stride, offset, active lanes, the
warp of the block, the banks' padding; the branch preset, block size, condition, K, p and seed),
runs the exact models (``coalescing.coalesce`` and ``stride_sweep``, ``banks.bank_conflicts``,
``divergence.divergence``) and keeps their answers, with the words the CLI prints too
(``explorer.memory.texts``), as one typed result record per tab.

Its parts: ``session.coalescing`` (a ``CoalescingModel``), ``session.banks`` (a ``BankModel``) and
``session.divergence`` (a ``DivergenceModel``); each has typed setters, and ``result``, the record
the tab draws. A setter refuses a value outside what the tab's field takes with one ``UserError``
line naming the value and the limit (``explorer.inputs``), and leaves the state as it was. A
divergence condition the field allows but the branch does not (``t % 0``) is kept: its result
carries the problem in one line instead of a picture.

Events (``session.events``, each an ``explorer.events.Event`` whose callbacks take no argument):
``coalescing``, ``banks`` and ``divergence``, each emitted exactly when that tab's result changed
(a setter that leaves the result as it was emits nothing). A view connects to its tab's event and
reads ``result`` there. Predict mode asks about the same results
(``explorer.quiz.page_predict.follow_memory``). Nothing here imports Qt.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Generic, TypeVar

from explorer.errors import UserError
from explorer.events import Event
from explorer.inputs import InputError, parse_whole
from explorer.memory import texts
from explorer.memory.banks import BankConflicts, SharedAccess, bank_conflicts
from explorer.memory.coalescing import (
    ELEMENT_SIZES,
    WARP_SIZE,
    Coalescing,
    GlobalAccess,
    SweepPoint,
    coalesce,
    stride_sweep,
)
from explorer.memory.divergence import MAX_BLOCK_THREADS, MAX_K, Branch, Divergence, divergence
from explorer.memory.presets import (
    BRANCH_PRESETS,
    GLOBAL_PATTERNS,
    P_DECIMALS,
    SHARED_PATTERNS,
    BranchPreset,
    Pattern,
)

#: the largest stride and offset (elements) the page's fields take: past this a pattern only moves
#: further apart (a lesson step is held to the same limit)
MAX_ELEMENTS = 4096
#: the warps of a block of at most 1024 threads
MAX_WARP = MAX_BLOCK_THREADS // WARP_SIZE - 1
#: the largest seed of a random branch's data
MAX_SEED = 1 << 30
#: the conditions a divergence tab offers, in its menu's order
BRANCH_KINDS = ("mod", "lt", "warp", "random")


def _whole(value: object, what: str, lo: int, hi: int, unit: str = "") -> int:
    """``value``, a whole number (an ``int``: text is the field's to read) within ``lo``..``hi``,
    else one line naming it and the limit."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InputError(f"{what} is {value!r}; it must be a whole number")
    return parse_whole(value, what, minimum=lo, maximum=hi, unit=unit)


def _elem(value: object) -> int:
    n = _whole(value, "element size", 1, 16, " bytes")
    if n not in ELEMENT_SIZES:
        raise InputError(f"element size is {n} bytes; it must be one of {', '.join(map(str, ELEMENT_SIZES))}")
    return n


# --- the inputs and results ---------------------------------------------------------------------


@dataclass(frozen=True)
class PatternInputs:
    """One warp's access as a pattern tab's fields hold it: lane i touches element
    ``offset + i * stride`` of ``elem_bytes`` bytes, lanes 0 .. ``active_lanes`` - 1 taking part."""

    elem_bytes: int = 4
    stride: int = 1
    offset: int = 0
    active_lanes: int = WARP_SIZE

    @property
    def numbers(self) -> tuple[int, int, int, int]:
        """As a preset's ``numbers`` (and a lesson step's ``elem``, ``stride``, ``offset``, ``active``)."""
        return (self.elem_bytes, self.stride, self.offset, self.active_lanes)


@dataclass(frozen=True)
class CoalescingResult:
    """What the Coalescing tab shows: its inputs, the preset its menu names (None: "Custom"), the
    model's answer and its words, and the efficiency-vs-stride curve for this element size."""

    inputs: PatternInputs
    warp: int
    preset: int | None
    coalescing: Coalescing
    headline: str
    lines: tuple[str, ...]
    sweep: tuple[SweepPoint, ...]

    @property
    def sweep_point(self) -> SweepPoint | None:
        """This stride's point on the curve (None when it is off it: a stride of 0 or past 32)."""
        s = self.inputs.stride
        return self.sweep[s - 1] if 1 <= s <= len(self.sweep) else None


@dataclass(frozen=True)
class BankResult:
    """What the Bank conflicts tab shows: its inputs, whether rows are padded by one element, the
    access modelled (the stride with the padding added), the preset its menu names (None: "Custom"),
    the model's answer and its words."""

    inputs: PatternInputs
    pad: bool
    preset: int | None
    conflicts: BankConflicts
    headline: str
    lines: tuple[str, ...]

    @property
    def modelled(self) -> PatternInputs:
        return replace(self.inputs, stride=self.inputs.stride + (1 if self.pad else 0))


@dataclass(frozen=True)
class BranchInputs:
    """The Divergence tab's fields: ``if (condition)`` in a 1-D block of ``block`` threads."""

    block: int = 256
    kind: str = "mod"
    k: int = 2
    p: float = 0.5
    seed: int = 0

    def fits(self, preset: BranchPreset) -> bool:
        """Whether the condition is ``preset``'s (its K, or its p for a random branch)."""
        return preset.kind == self.kind and (
            preset.p == self.p if self.kind == "random" else preset.k == self.k
        )


@dataclass(frozen=True)
class DivergenceResult:
    """What the Divergence tab shows: its inputs, the preset its menu names (None: "Custom") and
    the model's answer and headline, or (``divergence`` None) the one line why there is none."""

    inputs: BranchInputs
    preset: int | None
    divergence: Divergence | None
    headline: str
    problem: str = ""


# --- the tabs' models ----------------------------------------------------------------------------


R = TypeVar("R", CoalescingResult, BankResult)


class _PatternModel(Generic[R]):
    """What the Coalescing and Bank conflicts tabs share: a preset menu over an access's numbers.
    The preset named is the one shown while it still fits the access modelled, else the first that
    does, else none ("Custom"): the menu never names numbers the teacher changed."""

    def __init__(self, patterns: tuple[Pattern, ...], changed: Event) -> None:
        self.patterns = patterns
        self.changed = changed
        self._inputs = PatternInputs(*patterns[0].numbers)
        self._preset: int | None = 0
        self.result: R = self._compute()

    @property
    def inputs(self) -> PatternInputs:
        return self._inputs

    # --- what a subclass says ------------------------------------------------------------------
    def _modelled(self) -> PatternInputs:
        return self._inputs

    def _compute(self) -> R:  # pragma: no cover - overridden
        raise NotImplementedError

    # --- state changes ----------------------------------------------------------------------------
    def _update(self) -> None:
        """Compute the result again; emit when it differs from the one shown."""
        new = self._compute()
        if new != self.result:
            self.result = new
            self.changed.emit()

    def _rename(self) -> None:
        now = self._modelled().numbers
        if self._preset is not None and self.patterns[self._preset].numbers == now:
            return
        self._preset = next((i for i, q in enumerate(self.patterns) if q.numbers == now), None)

    def _edit(self, **numbers: int) -> None:
        self._inputs = replace(self._inputs, **numbers)
        self._rename()
        self._update()

    def choose_preset(self, index: int) -> None:
        """Take preset ``index``'s numbers (the menu's choice)."""
        i = _whole(index, "preset", 0, len(self.patterns) - 1)
        self._inputs = PatternInputs(*self.patterns[i].numbers)
        self._preset = i
        self._preset_taken()
        self._update()

    def _preset_taken(self) -> None:
        """A preset is the whole access: a subclass drops what it adds (the banks' padding)."""

    def set_elem_bytes(self, elem_bytes: int) -> None:
        self._edit(elem_bytes=_elem(elem_bytes))

    def set_stride(self, stride: int) -> None:
        self._edit(stride=_whole(stride, "stride", 0, MAX_ELEMENTS, " elements"))

    def set_offset(self, offset: int) -> None:
        self._edit(offset=_whole(offset, "offset", 0, MAX_ELEMENTS, " elements"))

    def set_active_lanes(self, active: int) -> None:
        self._edit(active_lanes=_whole(active, "active lanes", 1, WARP_SIZE))

    def _checked(self, numbers: tuple[int, int, int, int]) -> PatternInputs:
        elem, stride, offset, active = numbers
        return PatternInputs(
            _elem(elem),
            _whole(stride, "stride", 0, MAX_ELEMENTS, " elements"),
            _whole(offset, "offset", 0, MAX_ELEMENTS, " elements"),
            _whole(active, "active lanes", 1, WARP_SIZE),
        )

    def _load(self, pattern: str, inputs: PatternInputs) -> None:
        """Every number at once; ``pattern`` names the preset when it is one with these numbers
        (two presets may share numbers: the named one shows)."""
        self._inputs = inputs
        named = next(
            (i for i, q in enumerate(self.patterns) if q.name == pattern and q.numbers == inputs.numbers),
            None,
        )
        self._preset = named
        self._rename()

    # --- what the view reads ----------------------------------------------------------------------
    @property
    def preset_name(self) -> str:
        """The preset the menu names, "" for "Custom"."""
        return self.patterns[self._preset].name if self._preset is not None else ""

    @property
    def pattern_name(self) -> str:
        """The preset whose numbers the fields hold ("" for none), as a lesson step names it: the
        one shown, or with the banks' padding on, the unpadded preset beside ``pad``."""
        raw = self._inputs.numbers
        if self._preset is not None and self.patterns[self._preset].numbers == raw:
            return self.patterns[self._preset].name
        return next((q.name for q in self.patterns if q.numbers == raw), "")


@lru_cache(maxsize=len(ELEMENT_SIZES))
def _sweep(elem_bytes: int) -> tuple[SweepPoint, ...]:
    return tuple(stride_sweep(elem_bytes))


class CoalescingModel(_PatternModel[CoalescingResult]):
    """The Coalescing tab: one warp's global load, and the efficiency over strides."""

    def __init__(self, changed: Event) -> None:
        self._warp = 0
        super().__init__(GLOBAL_PATTERNS, changed)

    @property
    def warp(self) -> int:
        return self._warp

    def set_warp(self, warp: int) -> None:
        """Which warp of the block: its lanes are threads 32 w .. 32 w + 31."""
        self._warp = _whole(warp, "warp of the block", 0, MAX_WARP)
        self._update()

    def load(self, pattern: str, numbers: tuple[int, int, int, int], warp: int = 0) -> None:
        """A lesson step's whole state at once (one event): the numbers, the warp, the preset named."""
        inputs, w = self._checked(numbers), _whole(warp, "warp of the block", 0, MAX_WARP)
        self._warp = w
        self._load(pattern, inputs)
        self._update()

    def _compute(self) -> CoalescingResult:
        i = self._inputs
        c = coalesce(GlobalAccess(i.elem_bytes, i.stride, i.offset, i.active_lanes, self._warp))
        # both levels, as the CLI says them: what L1/L2 fetch, and what DRAM moves for it
        lines = (*texts.coalescing_lines(c), *texts.dram_lines(c))
        return CoalescingResult(
            i, self._warp, self._preset, c, texts.coalescing_headline(c), lines, _sweep(i.elem_bytes)
        )


class BankModel(_PatternModel[BankResult]):
    """The Bank conflicts tab: one warp's shared-memory read, rows optionally padded by one."""

    def __init__(self, changed: Event) -> None:
        self._pad = False
        super().__init__(SHARED_PATTERNS, changed)

    @property
    def pad(self) -> bool:
        return self._pad

    def _modelled(self) -> PatternInputs:
        return replace(self._inputs, stride=self._inputs.stride + (1 if self._pad else 0))

    def _preset_taken(self) -> None:
        self._pad = False

    def set_pad(self, pad: bool) -> None:
        """Add one element to the stride, as padding ``tile[32][32]`` to ``tile[32][33]`` does."""
        if not isinstance(pad, bool):
            raise InputError(f"pad is {pad!r}; it must be true or false")
        self._pad = pad
        self._rename()
        self._update()

    def load(self, pattern: str, numbers: tuple[int, int, int, int], pad: bool = False) -> None:
        """A lesson step's whole state at once (one event): the numbers, the padding, the preset."""
        inputs = self._checked(numbers)
        if not isinstance(pad, bool):
            raise InputError(f"pad is {pad!r}; it must be true or false")
        self._pad = pad
        self._load(pattern, inputs)
        self._update()

    def _compute(self) -> BankResult:
        m = self._modelled()
        b = bank_conflicts(SharedAccess(m.elem_bytes, m.stride, m.offset, m.active_lanes))
        return BankResult(
            self._inputs, self._pad, self._preset, b, texts.bank_headline(b), tuple(texts.bank_lines(b))
        )


def _fraction(p: object) -> float:
    """A random branch's probability: a number 0..1 with at most ``P_DECIMALS`` decimals."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) or not 0 <= p <= 1:
        raise InputError(f"probability p is {p!r}; it must be a number from 0 to 1")
    if round(p, P_DECIMALS) != p:
        raise InputError(f"probability p is {p!r}; it takes at most {P_DECIMALS} decimals")
    return float(p)


class DivergenceModel:
    """The Divergence tab: a branch over ``threadIdx.x`` in one block, warp by warp."""

    def __init__(self, changed: Event) -> None:
        self.changed = changed
        self.presets = BRANCH_PRESETS
        b = BRANCH_PRESETS[0]
        self._inputs = BranchInputs(kind=b.kind, k=b.k)
        self._preset: int | None = 0
        self.result = self._compute()

    @property
    def inputs(self) -> BranchInputs:
        return self._inputs

    @property
    def preset_name(self) -> str:
        return self.presets[self._preset].name if self._preset is not None else ""

    def _compute(self) -> DivergenceResult:
        i = self._inputs
        try:
            d = divergence(i.block, Branch(i.kind, k=i.k, p=i.p, seed=i.seed))
        except UserError as exc:
            return DivergenceResult(i, self._preset, None, "", str(exc))
        return DivergenceResult(i, self._preset, d, texts.divergence_headline(d))

    def _update(self) -> None:
        new = self._compute()
        if new != self.result:
            self.result = new
            self.changed.emit()

    def _rename(self) -> None:
        if self._preset is not None and self._inputs.fits(self.presets[self._preset]):
            return
        self._preset = next((i for i, b in enumerate(self.presets) if self._inputs.fits(b)), None)

    def _edit(self, **fields: object) -> None:
        self._inputs = replace(self._inputs, **fields)  # type: ignore[arg-type]  # checked by each setter
        self._rename()
        self._update()

    def choose_preset(self, index: int) -> None:
        """Take preset ``index``'s condition (its K, or its p); the block and seed stay."""
        b = self.presets[_whole(index, "branch preset", 0, len(self.presets) - 1)]
        self._inputs = replace(
            self._inputs, kind=b.kind, **({"p": b.p} if b.kind == "random" else {"k": b.k})
        )
        self._preset = self.presets.index(b)
        self._update()

    def set_block(self, block: int) -> None:
        self._edit(block=_whole(block, "threads per block", 1, MAX_BLOCK_THREADS))

    def set_kind(self, kind: str) -> None:
        if kind not in BRANCH_KINDS:
            raise InputError(f"condition is {kind!r}; it must be one of {', '.join(BRANCH_KINDS)}")
        self._edit(kind=kind)

    def set_k(self, k: int) -> None:
        """K of the condition (0 is allowed here, for ``t < 0``; ``t % 0`` is a result's problem)."""
        self._edit(k=_whole(k, "K", 0, MAX_K))

    def set_p(self, p: float) -> None:
        self._edit(p=_fraction(p))

    def set_seed(self, seed: int) -> None:
        self._edit(seed=_whole(seed, "seed", 0, MAX_SEED))

    def load(self, pattern: str, inputs: BranchInputs) -> None:
        """A lesson step's whole state at once (one event); ``pattern`` names the preset when it
        is one with this condition."""
        checked = BranchInputs(
            _whole(inputs.block, "threads per block", 1, MAX_BLOCK_THREADS),
            inputs.kind,
            _whole(inputs.k, "K", 0, MAX_K),
            _fraction(inputs.p),
            _whole(inputs.seed, "seed", 0, MAX_SEED),
        )
        if checked.kind not in BRANCH_KINDS:
            raise InputError(f"condition is {checked.kind!r}; it must be one of {', '.join(BRANCH_KINDS)}")
        self._inputs = checked
        names = [b.name for b in self.presets]
        self._preset = (
            names.index(pattern)
            if pattern in names and checked.fits(self.presets[names.index(pattern)])
            else None
        )
        self._rename()
        self._update()


class MemoryEvents:
    """The session's events; see the module's docstring for when each is emitted."""

    def __init__(self) -> None:
        self.coalescing = Event("coalescing")
        self.banks = Event("banks")
        self.divergence = Event("divergence")


class MemorySession:
    """The Coalescing, Bank conflicts and Divergence tabs' model (no Qt)."""

    def __init__(self) -> None:
        self.events = MemoryEvents()
        self.coalescing = CoalescingModel(self.events.coalescing)
        self.banks = BankModel(self.events.banks)
        self.divergence = DivergenceModel(self.events.divergence)
