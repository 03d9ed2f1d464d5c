"""The Tiled matmul tab's model without Qt: its events (``explorer.events.Event``, as the launch
visualizer's) fire exactly when what they announce changed, every setter reaches the derived
state, and a refused value is one line that changes nothing."""

from __future__ import annotations

import random

import pytest

from explorer.devices.catalog import catalog_device
from explorer.devices.limits import limits_for_device
from explorer.devices.roofs import record_roof
from explorer.errors import UserError
from explorer.memory.tiling import MatmulShape, tile_cost, tiling_model
from explorer.memory.tiling_session import TILE_MAX, TILE_MIN, TilingSession
from explorer.memory.tiling_steps import BlockTicks


def _counted(session: TilingSession) -> dict[str, int]:
    counts = {"shape": 0, "position": 0, "device": 0}
    for name in counts:

        def bump(name: str = name) -> None:
            counts[name] += 1

        getattr(session.events, name).connect(bump)
    return counts


def _snapshot(s: TilingSession) -> dict[str, object]:
    """What each event announces: the shape's derived state, the position, the device's costs."""
    return {
        "shape": (s.shape, s.block, s.model, s.steps),
        "position": s.position,
        "device": (s.device, s.regs, s.costs),
    }


def test_random_changes_fire_each_event_exactly_when_its_state_changed():
    rng = random.Random(11)
    gpus = [catalog_device("h100-sxm5"), catalog_device("a100-sxm4-40gb"), None]
    session = TilingSession(MatmulShape(8, 8, 8, 4), gpus[0])
    counts = _counted(session)
    for _ in range(600):
        before, seen = _snapshot(session), dict(counts)
        what = rng.choice(("sizes", "tile", "block", "seek", "step", "device", "regs", "barrier"))
        try:
            if what == "sizes":
                session.set_sizes(*(rng.choice([8, 8, 12, 20]) for _ in range(3)))
            elif what == "tile":
                session.set_tile(rng.choice([4, 4, 8, TILE_MAX + 1]))
            elif what == "block":
                gx, gy = session.shape.grid
                session.set_block(rng.randrange(gx), rng.randrange(gy))
            elif what == "seek":
                session.seek(rng.randint(-2, session.steps + 2))
            elif what == "step":
                session.step(rng.choice([1, -1]))
            elif what == "device":
                session.set_device(rng.choice(gpus))
            elif what == "regs":
                session.set_regs(rng.choice([32, 32, 64, 0]))
            else:
                session.next_barrier()
        except UserError as exc:
            assert "\n" not in str(exc)
            assert _snapshot(session) == before and counts == seen
            continue
        after = _snapshot(session)
        # the stepper restarts when the shape or block changes: that is the shape event's news
        shape_changed = after["shape"] != before["shape"] or (
            what in ("sizes", "tile", "block") and after["position"] != before["position"]
        )
        assert counts["shape"] - seen["shape"] == (1 if shape_changed else 0), what
        moved = not shape_changed and after["position"] != before["position"]
        assert counts["position"] - seen["position"] == (1 if moved else 0), what
        assert counts["device"] - seen["device"] == (1 if after["device"] != before["device"] else 0), what
        # what the session derived is the core's
        s = session
        assert s.model == tiling_model(s.shape)
        assert s.timeline.ticks == BlockTicks(s.shape, *s.block).ticks
        if s.device is None:
            assert s.costs == () and s.roof_missing == "no GPU chosen"
        else:
            limits = limits_for_device(s.device)
            assert s.costs == tuple(
                tile_cost(t, limits, s.regs, s.device.name) for t in range(TILE_MIN, TILE_MAX + 1)
            )


def test_each_setter_announces_its_event_once_and_a_repeat_announces_nothing():
    h100 = catalog_device("h100-sxm5")
    session = TilingSession(MatmulShape(16, 16, 16, 4), h100)
    counts = _counted(session)
    session.set_sizes(20, 16, 16)
    assert counts == {"shape": 1, "position": 0, "device": 0}
    session.set_sizes(20, 16, 16)
    session.set_tile(4)
    assert counts["shape"] == 1
    session.set_block(*session.last_block())
    assert counts["shape"] == 2 and session.block == (3, 4)
    session.step(3)
    assert counts["position"] == 1 and session.position == 3
    session.set_block(3, 4)  # the same block from step 3: back to its start
    assert counts["shape"] == 3 and session.position == 0
    session.to_start()
    assert counts["position"] == 1
    session.to_end()
    assert counts["position"] == 2 and session.finished
    session.set_regs(64)
    session.set_regs(64)
    session.set_device(h100)
    assert counts["device"] == 1
    session.roofs_changed()  # the ceilings were measured again: always read anew
    assert counts["device"] == 2


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (lambda s: s.set_tile(1), f"tile T is 1; the stepper takes {TILE_MIN} to {TILE_MAX}"),
        (lambda s: s.set_regs(256), "registers per thread is 256; it must be 1 to 255"),
    ],
)
def test_a_refused_value_is_one_line_and_nothing_is_announced(change, line):
    session = TilingSession(device=catalog_device("h100-sxm5"))
    counts = _counted(session)
    before = _snapshot(session)
    with pytest.raises(UserError) as caught:
        change(session)
    assert str(caught.value) == line
    assert _snapshot(session) == before and counts == {"shape": 0, "position": 0, "device": 0}


def test_the_roof_is_the_one_roof_of_gives():
    asked = []

    def roof_of(device):
        asked.append(device.key)
        return record_roof(device)

    session = TilingSession(device=catalog_device("h100-sxm5"), roof_of=roof_of)
    assert asked == ["catalog:h100-sxm5"] and session.roof is not None
    session.roofs_changed()
    assert asked == ["catalog:h100-sxm5"] * 2


def test_the_gpus_offered_and_the_one_chosen_live_in_the_session():
    from explorer.devices.catalog import load_catalog

    sheets = load_catalog()
    session = TilingSession()
    counts = _counted(session)
    session.offer(sheets)  # no GPU here: the lessons' laptop GPU
    assert session.gpus == tuple(sheets) and session.device is not None
    assert "1650" in session.device.name and counts["device"] == 1
    assert session.costs and session.costs[0].tile == TILE_MIN
    session.offer(sheets)  # the same offer again: nothing changed, nothing announced
    assert counts["device"] == 1
    session.choose_gpu("h100")
    assert session.device.key == "catalog:h100-sxm5" and counts["device"] == 2
    session.offer(list(reversed(sheets)))  # discovery again: the choice stays, the menu changed
    assert session.device.key == "catalog:h100-sxm5" and counts["device"] == 3
    session.offer(sheets, choose="catalog:t4")
    assert session.device.key == "catalog:t4"
    for query, line in (
        ("rtx", "gpu 'rtx' is more than one GPU; give more of its name"),
        ("a gpu nobody sells", "gpu 'a gpu nobody sells' is not among this machine's GPUs or the catalog"),
    ):
        seen = dict(counts)
        with pytest.raises(UserError) as caught:
            session.choose_gpu(query)
        assert str(caught.value) == line and counts == seen and session.device.key == "catalog:t4"
    session.offer([])
    assert session.device is None and session.costs == () and session.roof_missing == "no GPU chosen"
