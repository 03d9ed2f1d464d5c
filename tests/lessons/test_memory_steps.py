"""Memory-page lesson steps: every control read and checked, a bad value named in one line with
its limit while the other steps load, unknown fields kept, and a save that reads back the same."""

from __future__ import annotations

import pytest

from explorer.lessons import FORMAT_NAME, MemoryState, dump_lesson, load_lesson, parse_lesson, save_lesson
from explorer.memory.presets import BRANCH_PRESETS, GLOBAL_PATTERNS, SHARED_PATTERNS


def _lesson(*steps):
    return {"format": FORMAT_NAME, "version": 1, "title": "T", "steps": list(steps)}


def _mem(**state):
    return {"panel": "memory", "narration": "n", "state": state}


def test_every_control_is_read():
    lesson = parse_lesson(
        _lesson(
            _mem(view="coalescing", elem=8, stride=3, offset=5, active=20, warp=7),
            _mem(view="banks", elem=16, stride=0, offset=2, active=12, pad=True),
            _mem(view="divergence", block=100, branch="random", p=0.125, seed=9),
            _mem(view="divergence", block=64, branch="lt", k=0),
        )
    )
    assert not lesson.problems
    s = [step.state for step in lesson.steps]
    assert s[0] == MemoryState(view="coalescing", elem=8, stride=3, offset=5, active=20, warp=7)
    assert s[1] == MemoryState(view="banks", elem=16, stride=0, offset=2, active=12, pad=True)
    assert s[2] == MemoryState(view="divergence", block=100, branch="random", p=0.125, seed=9)
    assert (s[3].branch, s[3].k) == ("lt", 0)


def test_a_pattern_sets_its_numbers_and_a_clash_is_named():
    column = next(p for p in SHARED_PATTERNS if p.name == "Column of tile[32][32]")
    lesson = parse_lesson(
        _lesson(
            _mem(view="banks", pattern=column.name, pad=True),
            _mem(view="coalescing", pattern=GLOBAL_PATTERNS[2].name, stride=2),
            _mem(view="divergence", pattern=BRANCH_PRESETS[2].name),
        )
    )
    state = lesson.steps[0].state
    assert (state.elem, state.stride, state.offset, state.active, state.pad) == (*column.numbers, True)
    assert lesson.problems == [
        f"step 2: stride is 2, but pattern {GLOBAL_PATTERNS[2].name!r} sets it to 32; "
        "leave the pattern out to give other numbers"
    ]
    assert (lesson.steps[2].state.branch, lesson.steps[2].state.k) == ("warp", 2)


@pytest.mark.parametrize(
    ("state", "words"),
    [
        ({"view": "caches"}, 'step 2: view is "caches", not one of coalescing, banks, divergence'),
        ({"elem": 3}, "step 2: elem is 3 bytes; it must be one of 1, 2, 4, 8, 16"),
        ({"stride": 0}, "step 2: stride (elements) is 0"),
        ({"stride": 5000}, "step 2: stride (elements) is 5000"),
        ({"view": "banks", "stride": -1}, "step 2: stride (elements) is -1"),
        ({"active": 33}, "step 2: active (lanes) is 33"),
        ({"warp": 32}, "step 2: warp (warp of the block) is 32"),
        ({"pad": "yes"}, 'step 2: pad is "yes", not true or false'),
        ({"view": "divergence", "block": 2048}, "step 2: block (threads) is 2048"),
        (
            {"view": "divergence", "branch": "odd"},
            'step 2: branch is "odd", not one of mod, lt, warp, random',
        ),
        ({"view": "divergence", "branch": "mod", "k": 0}, "step 2: k (K of the mod branch) is 0"),
        ({"view": "divergence", "p": 1.5}, "step 2: p is 1.5; it must be 0 to 1"),
        ({"view": "divergence", "p": 0.12345}, "step 2: p is 0.12345; the page takes at most 3 decimals"),
        ({"pattern": "Stride 7"}, 'step 2: pattern is "Stride 7", not one of the coalescing presets'),
        # a lesson names a shipped example, never a path: it runs no script of anyone's choosing
        ({"view": "kernel"}, 'step 2: a "kernel" step names its script'),
        (
            {"view": "kernel", "example": "../../../home/x/evil.py"},
            "step 2: example is '../../../home/x/evil.py', not one",
        ),
        (
            {"view": "kernel", "example": "/tmp/evil.py"},
            "step 2: example is '/tmp/evil.py', not one of the shipped",
        ),
        ({"view": "kernel", "example": 7}, "step 2: example is 7, not"),
    ],
)
def test_a_bad_value_is_one_line_naming_it_and_the_rest_plays(tmp_path, state, words):
    damaged = _mem(**state)
    lesson = parse_lesson(_lesson(_mem(), damaged, _mem(view="banks")))
    assert [s.ok for s in lesson.steps] == [True, False, True]
    (problem,) = lesson.problems
    assert problem.startswith(words), problem
    assert "\n" not in problem
    out = dump_lesson(load_lesson(save_lesson(lesson, tmp_path / "again.json")))
    assert out["steps"][1] == damaged


def test_limits_are_named_with_the_value():
    lesson = parse_lesson(_lesson(_mem(stride=5000), _mem(view="divergence", block=2048), _mem(active=33)))
    assert "4096" in lesson.problems[0]
    assert "1024" in lesson.problems[1]
    assert "32" in lesson.problems[2]


def test_unknown_fields_are_kept_and_a_save_reads_back_the_same(tmp_path):
    steps = [
        _mem(view="coalescing", pattern=GLOBAL_PATTERNS[6].name, warp=3, future_cache="L1"),
        _mem(view="banks", elem=8, stride=2, pad=True),
        _mem(view="divergence", pattern=BRANCH_PRESETS[3].name, block=96, seed=4),
    ]
    first = parse_lesson(_lesson(*steps))
    assert first.steps[0].state.extra == {"future_cache": "L1"}
    again = load_lesson(save_lesson(first, tmp_path / "m.json"))
    assert [s.state for s in again.steps] == [s.state for s in first.steps]
    out = dump_lesson(again)
    assert out["steps"][0]["state"]["future_cache"] == "L1"
    # the shown tab's controls are written, the other tabs' defaults are not
    assert set(out["steps"][1]["state"]) == {"view", "elem", "stride", "offset", "active", "pad"}
    assert set(out["steps"][2]["state"]) == {"view", "pattern", "block", "branch", "k", "p", "seed"}


def test_a_kernel_step_names_a_shipped_example_and_reads_back_the_same(tmp_path):
    lesson = parse_lesson(_lesson(_mem(view="kernel", example="vector_add.py")))
    assert not lesson.problems
    assert lesson.steps[0].state == MemoryState(view="kernel", example="vector_add.py")
    out = dump_lesson(load_lesson(save_lesson(lesson, tmp_path / "k.json")))
    assert out["steps"][0]["state"] == {"view": "kernel", "example": "vector_add.py", "line": 0}


def test_tiling_steps_are_read_checked_and_written_back(tmp_path):
    lesson = parse_lesson(
        _lesson(
            _mem(view="tiling", rows=40, cols=33, inner=50, tile=16, block_x=2, block_y=2, tick=17, gpu="T4"),
            _mem(view="tiling"),
        )
    )
    assert not lesson.problems
    first, default = (s.state for s in lesson.steps)
    assert (first.rows, first.cols, first.inner, first.tile) == (40, 33, 50, 16)
    assert (first.block_x, first.block_y, first.tick, first.gpu, first.regs) == (2, 2, 17, "T4", 32)
    assert (default.rows, default.tile, default.tick, default.gpu) == (64, 8, 0, "GTX 1650")
    again = load_lesson(save_lesson(lesson, tmp_path / "t.json"))
    assert [s.state for s in again.steps] == [first, default]
    assert set(dump_lesson(again)["steps"][0]["state"]) == {
        "view",
        "rows",
        "cols",
        "inner",
        "tile",
        "block_x",
        "block_y",
        "tick",
        "gpu",
        "regs",
    }


@pytest.mark.parametrize(
    ("state", "words"),
    [
        ({"tile": 33}, "step 2: tile (T, the tile side) is 33; it must be at most 32"),
        ({"tile": 1}, "step 2: tile (T, the tile side) is 1; it must be at least 2"),
        ({"rows": 2000}, "step 2: rows (M, rows of A and C) is 2000; it must be at most 1024"),
        ({"block_x": 8}, "step 2: block_x (the block's column in the grid) is 8; it must be at most 7"),
        ({"tick": 51}, "step 2: tick (the stepper's position) is 51; it must be at most 50"),
        ({"regs": 0}, "step 2: regs (registers per thread) is 0; it must be at least 1"),
        ({"gpu": 7}, "step 2: gpu is 7"),
    ],
)
def test_a_bad_tiling_value_is_one_line_naming_the_limit(state, words):
    lesson = parse_lesson(_lesson(_mem(view="tiling"), _mem(view="tiling", **state), _mem(view="tiling")))
    assert [s.ok for s in lesson.steps] == [True, False, True]
    (problem,) = lesson.problems
    assert problem.startswith(words), problem
