"""The state of the Memory page's tiled-matmul stepper, Qt-free: the page only shows what this holds.

A ``TilingSession`` owns the sizes, the tile side T, the block shown, the stepper's position and
the GPU whose limits and roof the costs are read against; it derives the count model
(``tiling.tiling_model``), the block's ticks (``tiling_steps.BlockTicks``), the cost of every T from
2 to 32 on that GPU (``tiling.tile_cost``: shared memory and occupancy through
``explorer.launch.occupancy``) and where each T puts the kernel on that GPU's roofline.

Events (``session.events``, each an ``explorer.events.Event`` whose callbacks take no argument, as
``LaunchSession``'s): ``shape`` (the sizes, T or the block shown changed: everything is derived
again and the stepper is back at its start), ``position`` (the stepper moved) and ``device`` (the
GPUs offered, the GPU chosen, the registers or the GPU's measured roof changed: the menu, the costs
and the roofline). A view connects
to the ones it draws and reads the session there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from explorer.devices.limits import limits_for_device
from explorer.devices.model import Device, Gpu
from explorer.devices.names import best_match
from explorer.devices.roofs import record_roof
from explorer.errors import UserError
from explorer.events import Event
from explorer.memory.tiling import (
    MatmulShape,
    TileCost,
    TilingModel,
    naive_counts,
    tile_cost,
    tiled_counts,
    tiling_model,
)
from explorer.memory.tiling_steps import MAX_STEPPER_DIM, BlockState, BlockTicks
from explorer.roofs.model import Ceiling, Roof

#: the T slider's range: a 1 x 1 tile shares nothing, and 32 x 32 = 1024 threads is every GPU's most
TILE_MIN, TILE_MAX = 2, 32
Bound = Literal["memory", "compute", ""]
#: the GPU chosen first where none is present: the lab laptop the lessons use
DEFAULT_GPU = "GTX 1650"


@dataclass(frozen=True)
class RoofPoint:
    """Where one kernel sits: its global-traffic intensity (the count model's) and the most the
    roof lets it reach there. A bound, not a measurement."""

    tile: int | None  # None: the naive kernel
    intensity_flop_per_byte: float
    attainable_gflops: float | None
    bound: Bound


class TilingEvents:
    """The session's events; see the module's docstring for when each is emitted."""

    def __init__(self) -> None:
        self.shape = Event("shape")
        self.position = Event("position")
        self.device = Event("device")


class TilingSession:
    """The Tiled matmul tab's model: sizes, T, the block, the stepper and the GPU (no Qt)."""

    def __init__(
        self,
        shape: MatmulShape | None = None,
        device: Device | None = None,
        regs: int = 32,
        roof_of: Callable[[Device], Roof] = record_roof,
    ) -> None:
        #: a device's roof: the window's roof book (so this roofline and the Benchmarks one are the
        #: same roof, measured ceilings included), else built from the record and the store
        self._roof_of = roof_of
        self.events = TilingEvents()
        self._shape = shape or MatmulShape(64, 64, 64, 8)
        self._check_shape(self._shape)
        self._block = (0, 0)
        self._position = 0
        self._device: Device | None = None
        self._gpus: tuple[Gpu, ...] = ()
        self._regs = regs
        self._costs: tuple[TileCost, ...] = ()
        self._roof: Roof | None = None
        self._roof_missing = "no GPU chosen"
        self._derive_shape()
        self.set_device(device, announce=False)

    # --- what the page shows ---------------------------------------------------------------------
    @property
    def shape(self) -> MatmulShape:
        return self._shape

    @property
    def block(self) -> tuple[int, int]:
        return self._block

    @property
    def position(self) -> int:
        return self._position

    @property
    def device(self) -> Device | None:
        return self._device

    @property
    def gpus(self) -> tuple[Gpu, ...]:
        """The GPUs the costs may be read on (``offer``), in the menu's order."""
        return self._gpus

    @property
    def regs(self) -> int:
        return self._regs

    @property
    def model(self) -> TilingModel:
        return self._model

    @property
    def timeline(self) -> BlockTicks:
        return self._timeline

    @property
    def steps(self) -> int:
        return len(self._timeline)

    @property
    def state(self) -> BlockState:
        return self._timeline.state(self._position)

    @property
    def finished(self) -> bool:
        return self._position == len(self._timeline)

    @property
    def costs(self) -> tuple[TileCost, ...]:
        """Every T from 2 to 32 on the chosen GPU (empty without one)."""
        return self._costs

    @property
    def cost(self) -> TileCost | None:
        return next((c for c in self._costs if c.tile == self._shape.tile), None)

    @property
    def roof(self) -> Roof | None:
        return self._roof

    @property
    def roof_missing(self) -> str:
        """Why there is no roof ("" when there is one)."""
        return "" if self._roof else self._roof_missing

    def roof_points(self) -> list[RoofPoint]:
        """The naive kernel, then T = 2 .. 32, at this M, N, K: the slider moves along these."""
        s = self._shape
        out = [self._point(None, naive_counts(s).intensity_flop_per_byte)]
        for t in range(TILE_MIN, TILE_MAX + 1):
            out.append(self._point(t, tiled_counts(MatmulShape(s.m, s.n, s.k, t)).intensity_flop_per_byte))
        return out

    def roof_ceilings(self) -> tuple[Ceiling, Ceiling] | None:
        """The two ceilings of this roofline: the compute roof and main memory's (None: no roof)."""
        r = self._roof
        if r is None:
            return None
        compute, memory = r.compute_roof(), r.main_memory()
        if compute is None or memory is None:
            return None
        return compute, memory

    def _point(self, tile: int | None, intensity: float) -> RoofPoint:
        r, ceilings = self._roof, self.roof_ceilings()
        if r is None or ceilings is None:
            return RoofPoint(tile, intensity, None, "")
        ridge = ceilings[0].value / ceilings[1].value
        return RoofPoint(
            tile, intensity, r.attainable_gflops(intensity), "memory" if intensity < ridge else "compute"
        )

    # --- changes ---------------------------------------------------------------------------------
    def set_sizes(self, m: int, n: int, k: int) -> None:
        self._set_shape(MatmulShape(m, n, k, self._shape.tile))

    def set_tile(self, tile: int) -> None:
        self._set_shape(MatmulShape(self._shape.m, self._shape.n, self._shape.k, tile))

    def set_shape(self, shape: MatmulShape) -> None:
        self._set_shape(shape)

    def set_block(self, bx: int, by: int) -> None:
        """Show block (bx, by); the stepper starts again at its first tick."""
        self._shape.block_extent(bx, by)
        if (bx, by) == self._block and self._position == 0:
            return
        self._block = (bx, by)
        self._timeline = BlockTicks(self._shape, bx, by)
        self._position = 0
        self.events.shape.emit()

    def last_block(self) -> tuple[int, int]:
        """The bottom-right block: the raggedest one when T does not divide M or N."""
        gx, gy = self._shape.grid
        return gx - 1, gy - 1

    def seek(self, position: int) -> None:
        position = max(0, min(len(self._timeline), position))
        if position != self._position:
            self._position = position
            self.events.position.emit()

    def step(self, ticks: int = 1) -> None:
        self.seek(self._position + ticks)

    def to_start(self) -> None:
        self.seek(0)

    def to_end(self) -> None:
        self.seek(len(self._timeline))

    def next_barrier(self) -> None:
        """Run to the next barrier that opens (or to the end): one phase's half at a time."""
        for i in range(self._position, len(self._timeline)):
            if self._timeline.ticks[i].kind == "barrier":
                self.seek(i + 1)
                return
        self.to_end()

    def roofs_changed(self) -> None:
        """The device's ceilings were measured again: its roof is read anew."""
        self._derive_device()
        self.events.device.emit()

    def set_device(self, device: Device | None, *, announce: bool = True) -> None:
        """Read the costs and the roof against ``device`` (a GPU or a catalog GPU; None: none)."""
        if device == self._device and announce:
            return
        self._device = device
        self._derive_device()
        if announce:
            self.events.device.emit()

    def offer(self, gpus: Sequence[Gpu], choose: str = "") -> None:
        """The GPUs to offer (present ones first, then catalog sheets). Keeps the one chosen where
        it is still offered, else takes ``choose`` (a key), else the first present GPU, else the
        lessons' GTX 1650, else the first one."""
        offered = tuple(gpus)
        keys = [g.key for g in offered]
        want = choose or (self._device.key if self._device is not None else "")
        if want not in keys:
            present = [g.key for g in offered if g.present]
            fallback = best_match(DEFAULT_GPU, list(offered))
            want = present[0] if present else (fallback[0].key if fallback else (keys[0] if keys else ""))
        chosen = next((g for g in offered if g.key == want), None)
        if offered == self._gpus and chosen == self._device:
            return
        self._gpus = offered
        self._device = chosen
        self._derive_device()
        self.events.device.emit()

    def choose_gpu(self, query: str) -> None:
        """Read the costs on the offered GPU ``query`` names (a name or part of one, as
        ``launch --device`` takes it); one line when it names none or several."""
        found = best_match(query, list(self._gpus))
        if len(found) != 1:
            what = (
                "not among this machine's GPUs or the catalog"
                if not found
                else "more than one GPU; give more of its name"
            )
            raise UserError(f"gpu {query!r} is {what}")
        self.set_device(found[0])

    def set_regs(self, regs: int) -> None:
        if not 1 <= regs <= 255:
            raise UserError(f"registers per thread is {regs}; it must be 1 to 255")
        if regs == self._regs:
            return
        self._regs = regs
        self._derive_device()
        self.events.device.emit()

    # --- derived ---------------------------------------------------------------------------------
    @staticmethod
    def _check_shape(shape: MatmulShape) -> None:
        if not TILE_MIN <= shape.tile <= TILE_MAX:
            raise UserError(f"tile T is {shape.tile}; the stepper takes {TILE_MIN} to {TILE_MAX}")
        for name, value in (("M", shape.m), ("N", shape.n), ("K", shape.k)):
            if value > MAX_STEPPER_DIM:
                raise UserError(f"{name} is {value}; the stepper walks sizes up to {MAX_STEPPER_DIM}")

    def _set_shape(self, shape: MatmulShape) -> None:
        self._check_shape(shape)
        if shape == self._shape:
            return
        self._shape = shape
        self._derive_shape()
        self.events.shape.emit()

    def _derive_shape(self) -> None:
        s = self._shape
        gx, gy = s.grid
        bx, by = self._block
        self._block = (min(bx, gx - 1), min(by, gy - 1))
        self._model = tiling_model(s)
        self._timeline = BlockTicks(s, *self._block)
        self._position = 0

    def _derive_device(self) -> None:
        d = self._device
        self._costs, self._roof = (), None
        if d is None:
            self._roof_missing = "no GPU chosen"
            return
        limits = limits_for_device(d)
        self._costs = tuple(tile_cost(t, limits, self._regs, d.name) for t in range(TILE_MIN, TILE_MAX + 1))
        roof = self._roof_of(d)
        if roof.compute_roof() is not None and roof.main_memory() is not None:
            self._roof = roof
        else:
            missing = "FP32 peak" if roof.compute_roof() is None else "memory bandwidth"
            self._roof_missing = f"{d.display_name} has no {missing} on record, so there is no roofline"
