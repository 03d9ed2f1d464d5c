"""The Memory page's model without Qt: every setter, the results equal the core functions' over
thousands of random edits, an event fires exactly when a tab's result changes, bad input is one
line naming the value and the limit (and changes nothing), and Predict asks about the model's
picture."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from explorer.errors import UserError
from explorer.memory import texts
from explorer.memory.banks import SharedAccess, bank_conflicts
from explorer.memory.coalescing import ELEMENT_SIZES, GlobalAccess, coalesce, stride_sweep
from explorer.memory.divergence import MAX_BLOCK_THREADS, MAX_K, Branch, divergence
from explorer.memory.presets import BRANCH_PRESETS, GLOBAL_PATTERNS, SHARED_PATTERNS
from explorer.memory.session import (
    BRANCH_KINDS,
    MAX_ELEMENTS,
    MAX_SEED,
    MAX_WARP,
    BranchInputs,
    MemorySession,
    PatternInputs,
)
from explorer.quiz.page_predict import (
    PagePredict,
    banks_params,
    coalescing_params,
    divergence_params,
    follow_memory,
    memory_params,
)


def _counted(session: MemorySession) -> dict[str, int]:
    counts = {"coalescing": 0, "banks": 0, "divergence": 0}
    for name in counts:

        def bump(name: str = name) -> None:
            counts[name] += 1

        getattr(session.events, name).connect(bump)
    return counts


def _preset_of(patterns, numbers, shown):
    """The menu's rule, written out: the preset shown while it fits, else the first that does."""
    if shown is not None and patterns[shown].numbers == numbers:
        return shown
    return next((i for i, p in enumerate(patterns) if p.numbers == numbers), None)


# --- results equal the core's -------------------------------------------------------------------


_SWEEPS: dict[int, list] = {}


def _check_coalescing(session: MemorySession, expected: PatternInputs, warp: int) -> None:
    r = session.coalescing.result
    assert r.inputs == expected and r.warp == warp == session.coalescing.warp
    c = coalesce(
        GlobalAccess(expected.elem_bytes, expected.stride, expected.offset, expected.active_lanes, warp)
    )
    assert r.coalescing == c
    assert r.headline == texts.coalescing_headline(c)
    assert list(r.lines) == texts.coalescing_lines(c) + texts.dram_lines(c)
    assert any(f"DRAM moves {c.dram_bytes_fetched} bytes" in line for line in r.lines)
    if expected.elem_bytes not in _SWEEPS:
        _SWEEPS[expected.elem_bytes] = stride_sweep(expected.elem_bytes)
    assert list(r.sweep) == _SWEEPS[expected.elem_bytes]
    point = r.sweep_point
    if 1 <= expected.stride <= 32:
        assert point is not None and point.stride == expected.stride
        assert (
            point.sectors_per_request
            == coalesce(GlobalAccess(expected.elem_bytes, expected.stride)).sectors_per_request
        )
    else:
        assert point is None


def _check_banks(session: MemorySession, expected: PatternInputs, pad: bool) -> None:
    r = session.banks.result
    assert r.inputs == expected and r.pad == pad == session.banks.pad
    stride = expected.stride + (1 if pad else 0)
    b = bank_conflicts(SharedAccess(expected.elem_bytes, stride, expected.offset, expected.active_lanes))
    assert r.conflicts == b and r.modelled.stride == stride
    assert r.headline == texts.bank_headline(b) and list(r.lines) == texts.bank_lines(b)


def _check_divergence(session: MemorySession, expected: BranchInputs) -> None:
    r = session.divergence.result
    assert r.inputs == expected
    try:
        d = divergence(expected.block, Branch(expected.kind, k=expected.k, p=expected.p, seed=expected.seed))
    except UserError as exc:
        assert r.divergence is None and r.problem == str(exc) and "\n" not in r.problem
        return
    assert r.divergence == d and r.problem == ""
    assert r.headline == texts.divergence_headline(d)


def _random_value(rng: random.Random, lo: int, hi: int) -> object:
    """Mostly a value in range, sometimes the edges, sometimes out of range or the wrong type."""
    roll = rng.random()
    if roll < 0.6:
        return rng.randint(lo, min(hi, lo + 40))
    if roll < 0.8:
        return rng.choice([lo, hi])
    if roll < 0.9:
        return rng.choice([lo - 1, hi + 1, hi * 3 + 7])
    return rng.choice([True, 1.5, "4", None])


def _ok(value: object, lo: int, hi: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi


def test_random_edits_on_every_tab_give_the_core_s_answers_and_one_event_per_change():
    rng = random.Random(20261129)
    session = MemorySession()
    counts = _counted(session)
    coal = PatternInputs(*GLOBAL_PATTERNS[0].numbers)
    coal_preset: int | None = 0
    warp = 0
    bank = PatternInputs(*SHARED_PATTERNS[0].numbers)
    bank_preset: int | None = 0
    pad = False
    branch = BranchInputs(kind=BRANCH_PRESETS[0].kind, k=BRANCH_PRESETS[0].k)
    ranges = {"stride": (0, MAX_ELEMENTS), "offset": (0, MAX_ELEMENTS), "active_lanes": (1, 32)}
    for _ in range(4000):
        tab = rng.choice(("coalescing", "banks", "divergence"))
        before = {name: getattr(session, name).result for name in counts}
        seen = dict(counts)
        refused = False
        if tab in ("coalescing", "banks"):
            model = session.coalescing if tab == "coalescing" else session.banks
            patterns = model.patterns
            inputs, shown = (coal, coal_preset) if tab == "coalescing" else (bank, bank_preset)
            extra_pad = pad if tab == "banks" else False
            what = rng.choice(("preset", "elem", "stride", "offset", "active_lanes", "extra"))
            try:
                if what == "preset":
                    index = _random_value(rng, 0, len(patterns) - 1)
                    model.choose_preset(index)
                    assert _ok(index, 0, len(patterns) - 1)
                    inputs, shown = PatternInputs(*patterns[index].numbers), index
                    extra_pad = False
                elif what == "elem":
                    value = rng.choice([*ELEMENT_SIZES, *ELEMENT_SIZES, 3, 0, 32])
                    model.set_elem_bytes(value)
                    assert value in ELEMENT_SIZES
                    inputs = replace(inputs, elem_bytes=value)
                elif what == "extra" and tab == "coalescing":
                    value = _random_value(rng, 0, MAX_WARP)
                    session.coalescing.set_warp(value)
                    assert _ok(value, 0, MAX_WARP)
                    warp = value
                elif what == "extra":
                    flag = rng.choice([True, False, True, 1])
                    session.banks.set_pad(flag)
                    assert isinstance(flag, bool)
                    extra_pad = flag
                else:
                    lo, hi = ranges[what]
                    value = _random_value(rng, lo, hi)
                    getattr(model, f"set_{what}")(value)
                    assert _ok(value, lo, hi)
                    inputs = replace(inputs, **{what: value})
            except UserError as exc:
                refused = True
                assert "\n" not in str(exc) and str(exc)
            if not refused and what != "preset":
                modelled = replace(inputs, stride=inputs.stride + (1 if extra_pad else 0))
                shown = _preset_of(patterns, modelled.numbers, shown)
            if tab == "coalescing":
                coal, coal_preset = inputs, shown
                assert session.coalescing.result.preset == coal_preset
            else:
                bank, bank_preset, pad = inputs, shown, extra_pad
                assert session.banks.result.preset == bank_preset
        else:
            model_d = session.divergence
            what = rng.choice(("preset", "block", "kind", "k", "p", "seed"))
            try:
                if what == "preset":
                    index = _random_value(rng, 0, len(BRANCH_PRESETS) - 1)
                    model_d.choose_preset(index)
                    b = BRANCH_PRESETS[index]
                    branch = replace(
                        branch, kind=b.kind, **({"p": b.p} if b.kind == "random" else {"k": b.k})
                    )
                elif what == "block":
                    value = _random_value(rng, 1, MAX_BLOCK_THREADS)
                    model_d.set_block(value)
                    assert _ok(value, 1, MAX_BLOCK_THREADS)
                    branch = replace(branch, block=value)
                elif what == "kind":
                    kind = rng.choice([*BRANCH_KINDS, "odd"])
                    model_d.set_kind(kind)
                    assert kind in BRANCH_KINDS
                    branch = replace(branch, kind=kind)
                elif what == "k":
                    value = _random_value(rng, 0, MAX_K)
                    model_d.set_k(value)
                    assert _ok(value, 0, MAX_K)
                    branch = replace(branch, k=value)
                elif what == "p":
                    p = rng.choice([rng.randint(0, 1000) / 1000, 0.0, 1.0, 1.5, -0.1, 0.12345, float("nan")])
                    model_d.set_p(p)
                    assert 0 <= p <= 1 and round(p, 3) == p
                    branch = replace(branch, p=p)
                else:
                    value = _random_value(rng, 0, MAX_SEED)
                    model_d.set_seed(value)
                    assert _ok(value, 0, MAX_SEED)
                    branch = replace(branch, seed=value)
            except UserError as exc:
                refused = True
                assert "\n" not in str(exc) and str(exc)
        # the tab edited against the core; the others' results are the very records they held
        if tab == "coalescing":
            _check_coalescing(session, coal, warp)
        elif tab == "banks":
            _check_banks(session, bank, pad)
        else:
            _check_divergence(session, branch)
        for name in counts:
            if name != tab:
                assert getattr(session, name).result is before[name]
        for name in counts:
            changed = getattr(session, name).result != before[name]
            assert counts[name] - seen[name] == (1 if changed else 0), (tab, name)
            if refused:
                assert not changed


# --- presets and the menu's name ------------------------------------------------------------------


def test_a_preset_s_name_never_stays_on_numbers_the_teacher_changed():
    c = MemorySession().coalescing
    c.choose_preset(0)
    c.set_stride(7)
    assert c.result.preset is None and c.preset_name == "" and "7 apart" in c.result.headline
    c.set_stride(32)  # the numbers of "Stride 32" again: its name comes back
    assert c.preset_name == GLOBAL_PATTERNS[2].name
    # "Unit stride" and "Struct of arrays" share their numbers: the one chosen stays named
    c.choose_preset(7)
    c.set_warp(3)
    assert c.preset_name == GLOBAL_PATTERNS[7].name


def test_padding_names_the_padded_tile_and_a_lesson_still_names_the_unpadded_one():
    b = MemorySession().banks
    b.choose_preset([p.name for p in SHARED_PATTERNS].index("Column of tile[32][32]"))
    assert b.result.conflicts.conflict_degree == 32
    b.set_pad(True)
    assert b.result.conflicts == bank_conflicts(SharedAccess(stride=33))
    assert b.preset_name == "Column of tile[32][33] (padded)"
    assert b.pattern_name == "Column of tile[32][32]"
    b.choose_preset(0)  # a preset is the whole access: the padding goes
    assert not b.pad and b.result.modelled.stride == 1


def test_the_divergence_menu_follows_the_condition():
    d = MemorySession().divergence
    names = [b.name for b in BRANCH_PRESETS]
    d.choose_preset(names.index("Whole warps ((t / 32) % 2 == 0)"))
    assert d.result.divergence is not None and d.result.divergence.diverged_warps == 0
    d.set_k(4)
    assert d.preset_name == ""
    d.set_kind("mod")
    d.set_k(2)
    assert d.preset_name == "Even threads (t % 2 == 0)"


def test_a_condition_the_branch_refuses_is_kept_with_its_line_and_no_picture():
    d = MemorySession().divergence
    d.set_k(0)  # the field takes 0 (for t < 0); t % 0 has no meaning
    assert d.inputs.k == 0 and d.result.divergence is None
    assert d.result.problem == f"K = 0 is outside 1..{MAX_K} for a 'mod:K' branch"
    d.set_kind("lt")  # t < 0: nobody takes it, a picture again
    assert d.result.problem == "" and d.result.divergence is not None


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "line"),
    [
        (
            lambda s: s.coalescing.set_stride(5000),
            "stride is 5000 elements; it must be at most 4096 elements",
        ),
        (lambda s: s.coalescing.set_stride(-1), "stride is -1 elements; it must be at least 0 elements"),
        (lambda s: s.banks.set_offset(4097), "offset is 4097 elements; it must be at most 4096 elements"),
        (
            lambda s: s.coalescing.set_elem_bytes(3),
            "element size is 3 bytes; it must be one of 1, 2, 4, 8, 16",
        ),
        (lambda s: s.banks.set_active_lanes(33), "active lanes is 33; it must be at most 32"),
        (lambda s: s.coalescing.set_active_lanes(0), "active lanes is 0; it must be at least 1"),
        (lambda s: s.coalescing.set_warp(32), f"warp of the block is 32; it must be at most {MAX_WARP}"),
        (lambda s: s.coalescing.set_stride(True), "stride is True; it must be a whole number"),
        (
            lambda s: s.coalescing.choose_preset(99),
            f"preset is 99; it must be at most {len(GLOBAL_PATTERNS) - 1}",
        ),
        (lambda s: s.banks.set_pad("yes"), "pad is 'yes'; it must be true or false"),
        (lambda s: s.divergence.set_block(1025), "threads per block is 1025; it must be at most 1024"),
        (
            lambda s: s.divergence.set_kind("odd"),
            "condition is 'odd'; it must be one of mod, lt, warp, random",
        ),
        (lambda s: s.divergence.set_k(MAX_K + 1), f"K is {MAX_K + 1}; it must be at most {MAX_K}"),
        (lambda s: s.divergence.set_p(1.5), "probability p is 1.5; it must be a number from 0 to 1"),
        (lambda s: s.divergence.set_p(0.1234), "probability p is 0.1234; it takes at most 3 decimals"),
        (lambda s: s.divergence.set_seed(-1), "seed is -1; it must be at least 0"),
    ],
)
def test_bad_input_is_one_line_naming_the_value_and_the_limit_and_changes_nothing(call, line):
    session = MemorySession()
    counts = _counted(session)
    before = (session.coalescing.result, session.banks.result, session.divergence.result)
    with pytest.raises(UserError) as caught:
        call(session)
    assert str(caught.value) == line
    assert (session.coalescing.result, session.banks.result, session.divergence.result) == before
    assert counts == {"coalescing": 0, "banks": 0, "divergence": 0}


# --- lesson steps ----------------------------------------------------------------------------------


def test_a_lesson_step_loads_a_whole_tab_with_one_event():
    session = MemorySession()
    counts = _counted(session)
    session.coalescing.load("", (4, 3, 2, 32), warp=3)
    assert counts["coalescing"] == 1 and session.coalescing.warp == 3
    assert session.coalescing.result.coalescing == coalesce(GlobalAccess(4, 3, 2, 32, 3))
    session.banks.load("Column of tile[32][32]", (4, 32, 0, 32), pad=True)
    assert counts["banks"] == 1 and session.banks.pattern_name == "Column of tile[32][32]"
    session.banks.load("Column of tile[32][32]", (4, 32, 0, 32), pad=True)  # the same again: no event
    assert counts["banks"] == 1
    session.divergence.load("Data: half the lanes at random", BranchInputs(200, "random", 2, 0.5, 11))
    assert counts["divergence"] == 1 and session.divergence.preset_name == "Data: half the lanes at random"
    with pytest.raises(UserError, match="element size is 3 bytes"):
        session.coalescing.load("", (3, 1, 0, 32))
    assert counts["coalescing"] == 1 and session.coalescing.inputs.numbers == (4, 3, 2, 32)


# --- Predict asks about the model's picture ----------------------------------------------------------


def test_predict_asks_about_exactly_what_the_model_shows():
    session = MemorySession()
    asked = PagePredict("coalescing", "sectors", "memory page", recorder=lambda *a, **k: None)
    follow_memory(asked, session.coalescing)
    asked.set_on(True)
    rng = random.Random(7)
    for _ in range(200):
        session.coalescing.load(
            "",
            (rng.choice(ELEMENT_SIZES), rng.randint(0, 64), rng.randint(0, 64), rng.randint(1, 32)),
            warp=rng.randint(0, MAX_WARP),
        )
        r = session.coalescing.result
        assert asked.params == coalescing_params(*r.inputs.numbers, warp=r.warp)
        assert asked.hidden and asked.question is not None
    banks = PagePredict("banks", "conflict", "memory page", recorder=lambda *a, **k: None)
    follow_memory(banks, session.banks)
    session.banks.load("", (4, 32, 0, 32), pad=True)
    assert banks.params == banks_params(4, 33, 0, 32)


def test_a_random_or_refused_branch_is_shown_with_why_it_asks_nothing():
    d = MemorySession().divergence
    assert memory_params(d) == (divergence_params(256, "mod", 2), "")
    d.set_kind("random")
    params, why = memory_params(d)
    assert params is None and "random branch has no exact answer" in why
    d.set_kind("mod")
    d.set_k(0)
    assert memory_params(d) == (None, d.result.problem)
