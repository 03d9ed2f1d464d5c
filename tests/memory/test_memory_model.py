"""The memory and divergence models against brute-force references that enumerate every byte,
every word and every thread, over thousands of random patterns (hypothesis), plus the worked
examples a course quotes."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.errors import UserError
from explorer.memory.banks import SharedAccess, bank_conflicts, tile_column
from explorer.memory.coalescing import (
    GlobalAccess,
    coalesce,
    matrix_column,
    matrix_row,
    stride_sweep,
    struct_field,
)
from explorer.memory.divergence import Branch, divergence, parse_branch

ELEMS = st.sampled_from([1, 2, 4, 8, 16])


# --- references: written from the rules, byte by byte, sharing no code with the models ---------


def ref_global(elem, stride, offset, active, warp=0, base=256 * 7):
    """Every byte each active lane touches, from a 256-byte-aligned base."""
    touched = set()
    for lane in range(active):
        start = base + (offset + (warp * 32 + lane) * stride) * elem
        touched.update(range(start, start + elem))
    sectors = {b // 32 for b in touched}
    lines = {b // 128 for b in touched}
    return len(sectors), len(lines), len(touched), len(sectors) * 32


def ref_shared(elem, stride, offset, active):
    """Split the warp as the hardware does, then in each part count distinct words per bank."""
    per_phase = {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}[elem]
    degrees = []
    for start in range(0, active, per_phase):
        words_in_bank = {}
        for lane in range(start, min(start + per_phase, active)):
            first_byte = (offset + lane * stride) * elem
            for byte in range(first_byte, first_byte + elem):
                word = byte // 4
                words_in_bank.setdefault(word % 32, set()).add(word)
        degrees.append(max(len(ws) for ws in words_in_bank.values()))
    return max(degrees), sum(degrees)


def ref_divergence(block, predicate):
    out = []
    for w in range(0, block, 32):
        lanes = range(w, min(w + 32, block))
        yes = sum(1 for t in lanes if predicate(t))
        no = len(lanes) - yes
        paths = [n for n in (yes, no) if n]
        out.append((len(paths), paths, sum(paths) / (len(paths) * 32)))
    return out


# --- coalescing ------------------------------------------------------------------------------


@settings(max_examples=2000, deadline=None)
@given(
    elem=ELEMS,
    stride=st.integers(0, 300),  # 0: a uniform load, every lane on one element
    offset=st.integers(0, 5000),
    active=st.integers(1, 32),
    warp=st.integers(0, 31),
)
def test_coalescing_matches_the_byte_by_byte_reference(elem, stride, offset, active, warp):
    c = coalesce(GlobalAccess(elem_bytes=elem, stride=stride, offset=offset, active_lanes=active, warp=warp))
    sectors, lines, requested, fetched = ref_global(elem, stride, offset, active, warp)
    assert c.sectors_per_request == sectors
    assert c.lines_per_request == lines
    assert c.bytes_requested == requested
    assert c.bytes_fetched == fetched
    assert c.efficiency == pytest.approx(requested / fetched)
    assert sum(c.used_bytes_per_sector) == requested
    assert 0 < c.efficiency <= 1.0


def test_the_numbers_a_course_quotes():
    unit = coalesce(GlobalAccess(elem_bytes=4, stride=1))
    assert (unit.sectors_per_request, unit.lines_per_request, unit.efficiency) == (4, 1, 1.0)
    strided = coalesce(GlobalAccess(elem_bytes=4, stride=32))
    assert (strided.sectors_per_request, strided.lines_per_request) == (32, 32)
    assert strided.efficiency == pytest.approx(4 / 32)  # 12.5 %: each 32-byte sector serves 4 bytes
    two = coalesce(GlobalAccess(elem_bytes=4, stride=2))
    assert two.sectors_per_request == 8 and two.efficiency == 0.5
    misaligned = coalesce(GlobalAccess(elem_bytes=4, stride=1, offset=1))
    assert misaligned.sectors_per_request == 5 and misaligned.lines_per_request == 2
    assert misaligned.efficiency == pytest.approx(128 / 160)
    doubles = coalesce(GlobalAccess(elem_bytes=8, stride=1))
    assert doubles.sectors_per_request == 8 and doubles.efficiency == 1.0
    half = coalesce(GlobalAccess(elem_bytes=4, stride=1, active_lanes=16))
    assert half.sectors_per_request == 2 and half.bytes_requested == 64
    # a warp's lanes are threads 32w .. 32w+31: warp 1 of a unit-stride block starts at byte 128
    assert coalesce(GlobalAccess(elem_bytes=4, stride=1, warp=1)).lanes[0].address == 128


def test_matrix_and_struct_patterns():
    assert coalesce(matrix_row(width=1000)).efficiency == 1.0
    column = coalesce(matrix_column(width=1000))
    assert column.sectors_per_request == 32 and column.efficiency == pytest.approx(0.125)
    # float3-like AoS of 12 bytes, reading .x: 32 lanes x 4 bytes spread over 384 bytes -> 12 sectors
    aos = coalesce(struct_field(struct_bytes=12, field_offset_bytes=0))
    assert aos.sectors_per_request == 12 and aos.efficiency == pytest.approx(128 / 384)
    soa = coalesce(GlobalAccess(elem_bytes=4, stride=1))
    assert soa.efficiency == 1.0
    with pytest.raises(UserError, match="4-byte boundaries"):
        struct_field(struct_bytes=10, field_offset_bytes=2)


def test_stride_sweep_is_the_curve_and_fast_enough_to_redraw():
    sweep = stride_sweep(4)
    assert [p.stride for p in sweep] == list(range(1, 33))
    assert sweep[0].efficiency == 1.0 and sweep[-1].efficiency == pytest.approx(0.125)
    assert [p.efficiency for p in sweep[:8]] == pytest.approx(
        [1, 1 / 2, 1 / 3, 1 / 4, 1 / 5, 1 / 6, 1 / 7, 1 / 8]
    )
    assert all(
        a.efficiency >= b.efficiency for a, b in zip(sweep, sweep[1:], strict=False)
    )  # never better when sparser


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"elem_bytes": 3}, "element size 3"),
        ({"stride": -2}, "stride -2"),
        ({"active_lanes": 33}, "active lanes 33"),
        ({"active_lanes": 0}, "active lanes 0"),
        ({"offset": -1}, "offset -1"),
    ],
)
def test_bad_global_patterns_are_one_line_naming_value_and_limit(kwargs, named):
    with pytest.raises(UserError, match=named) as err:
        GlobalAccess(**kwargs)
    assert "\n" not in str(err.value)


# --- banks -----------------------------------------------------------------------------------


@settings(max_examples=2000, deadline=None)
@given(elem=ELEMS, stride=st.integers(0, 200), offset=st.integers(0, 3000), active=st.integers(1, 32))
def test_bank_conflicts_match_the_word_by_word_reference(elem, stride, offset, active):
    b = bank_conflicts(SharedAccess(elem_bytes=elem, stride=stride, offset=offset, active_lanes=active))
    degree, wavefronts = ref_shared(elem, stride, offset, active)
    assert b.conflict_degree == degree
    assert b.wavefronts == wavefronts
    assert 1 <= b.conflict_degree <= 32
    for lane in b.lanes:
        assert lane.bank == lane.word % 32 == (lane.address // 4) % 32


def test_the_transpose_tile_and_its_padding():
    naive = bank_conflicts(tile_column(width=32))
    assert naive.conflict_degree == 32 and naive.wavefronts == 32
    assert {lane.bank for lane in naive.lanes} == {0}
    padded = bank_conflicts(tile_column(width=33))
    assert padded.conflict_degree == 1 and padded.wavefronts == 1
    assert sorted(lane.bank for lane in padded.lanes) == list(range(32))


def test_strides_broadcast_and_wide_elements():
    assert bank_conflicts(SharedAccess(stride=1)).conflict_degree == 1
    assert bank_conflicts(SharedAccess(stride=2)).conflict_degree == 2
    assert bank_conflicts(SharedAccess(stride=3)).conflict_degree == 1  # odd strides are conflict-free
    assert bank_conflicts(SharedAccess(stride=0)).conflict_degree == 1  # one word for all: a broadcast
    assert bank_conflicts(SharedAccess(elem_bytes=1, stride=1)).wavefronts == 1  # 4 lanes per word
    eight = bank_conflicts(SharedAccess(elem_bytes=8, stride=1))
    assert (eight.conflict_degree, eight.wavefronts, eight.ideal_wavefronts) == (1, 2, 2)
    sixteen = bank_conflicts(SharedAccess(elem_bytes=16, stride=1))
    assert (sixteen.conflict_degree, sixteen.wavefronts) == (1, 4)
    assert bank_conflicts(SharedAccess(elem_bytes=8, stride=2)).conflict_degree == 2


# --- divergence ------------------------------------------------------------------------------


@settings(max_examples=1000, deadline=None)
@given(
    block=st.integers(1, 1024),
    kind=st.sampled_from(["mod", "lt", "warp"]),
    k=st.integers(1, 2000),
)
def test_divergence_matches_the_thread_by_thread_reference(block, kind, k):
    rules = {
        "mod": lambda t: t % k == 0,
        "lt": lambda t: t < k,
        "warp": lambda t: (t // 32) % k == 0,
    }
    d = divergence(block, Branch(kind, k=k))
    ref = ref_divergence(block, rules[kind])
    assert [(w.paths, list(w.active_lanes)) for w in d.warps] == [(p, a) for p, a, _ in ref]
    assert [w.simt_efficiency for w in d.warps] == pytest.approx([e for _, _, e in ref])


@settings(max_examples=200, deadline=None)
@given(block=st.integers(1, 1024), p=st.floats(0, 1), seed=st.integers(0, 2**32))
def test_random_branches_are_reproducible_and_counted_exactly(block, p, seed):
    d = divergence(block, Branch("random", p=p, seed=seed))
    rng = random.Random(seed)
    draws = [rng.random() < p for _ in range(block)]
    assert [w.active_lanes for w in d.warps] == [
        tuple(n for n in (sum(draws[w : w + 32]), len(draws[w : w + 32]) - sum(draws[w : w + 32])) if n)
        for w in range(0, block, 32)
    ]
    assert d == divergence(block, Branch("random", p=p, seed=seed))


def test_the_warp_aligned_branch_is_the_lesson():
    odd_even = divergence(256, Branch("mod", k=2))
    assert odd_even.diverged_warps == 8 and odd_even.simt_efficiency == 0.5
    aligned = divergence(256, Branch("warp", k=2))
    assert aligned.diverged_warps == 0 and aligned.simt_efficiency == 1.0
    edge = divergence(256, Branch("lt", k=100))  # only the warp holding thread 100 diverges
    assert [w.diverges for w in edge.warps] == [False, False, False, True, False, False, False, False]
    partial = divergence(40, Branch("lt", k=1000))  # no divergence, but a warp of 8 lanes
    assert partial.warps[1].active_lanes == (8,) and partial.warps[1].simt_efficiency == 0.25


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("mod:0", "K of mod:K is 0"),
        ("bogus:3", "bogus:3"),
        ("random:1.5", "1.5"),
        ("mod", "mod"),
        ("lt:²", "lt:K"),
    ],
)
def test_bad_branches_are_one_line(text, named):
    with pytest.raises(UserError, match=named) as err:
        parse_branch(text)
    assert "\n" not in str(err.value)
