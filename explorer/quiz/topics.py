"""The question generators: for each topic, questions with exact answers from the models the
pictures draw, each with the CLI command and the JSON key that print the same answer.

A generator takes a ``random.Random`` and a concept and returns a ``Draft`` (everything of a
question but its id); one it cannot ask for the drawn parameters (a launch over a device's limit,
an occupancy limited by two resources at once, a warp that takes no branch) raises ``Redraw``
and ``make_question`` draws again from the same seeded stream, so a seed always gives one question.
The answers come from the same core functions the CLI runs; the tests check each against the
command's output over thousands of seeds.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from explorer.devices.catalog import catalog_device
from explorer.devices.limits import limits_for_cc, parse_cc
from explorer.errors import UserError
from explorer.launch.config import Dim3, LaunchConfig, LaunchValidationError, check
from explorer.launch.occupancy import RESOURCE_NAMES, occupancy
from explorer.launch.schedule import plan_launch
from explorer.memory.banks import SharedAccess, bank_conflicts
from explorer.memory.coalescing import GlobalAccess, coalesce
from explorer.memory.divergence import Branch, divergence
from explorer.memory.tiling import MatmulShape, tiling_model
from explorer.quiz.model import Answer, Question, parse_id

CLI = "device-explorer"
MAX_DRAWS = 200  # a generator's redraws before the seed is given up (none needs more than a few)


class Redraw(Exception):
    """The drawn parameters do not make a question of this concept: draw again."""


@dataclass(frozen=True)
class Draft:
    prompt: str
    params: dict[str, Any]
    answer: Answer
    unit: str
    tolerance: float
    explanation: str
    command: tuple[str, ...]
    answer_key: str
    choices: tuple[str, ...] = field(default=())


class Pick:
    """The parameters of one question: drawn from the seeded stream, or fixed (a lesson step's own
    launch: "the value this step shows"). A generator asks for each by name, with how to draw it."""

    def __init__(self, rng: random.Random, fixed: dict[str, Any] | None = None) -> None:
        self.rng = rng
        self.fixed = fixed

    def __call__(self, name: str, draw: Callable[[], Any]) -> Any:
        if self.fixed is None:
            return draw()
        if name not in self.fixed:
            raise UserError(f"the question's parameters lack {name!r}")
        return self.fixed[name]

    def whole(self, name: str, draw: Callable[[], int], low: int, high: int) -> int:
        value = self(name, draw)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise UserError(
                f"the question's {name} is {str(value)[:40]!r}; it must be a whole number {low}..{high}"
            )
        return value

    def redraw(self, why: str) -> Redraw:
        """Draw again, or (for fixed parameters, which cannot be drawn again) say why in one line."""
        if self.fixed is not None:
            raise UserError(f"no question of this kind for these parameters: {why}")
        return Redraw(why)


Generator = Callable[[Pick, str], Draft]


@dataclass(frozen=True)
class Topic:
    name: str
    title: str
    concepts: tuple[str, ...]
    make: Generator


# --- occupancy -----------------------------------------------------------------------------------

CCS = ("6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0")
THREADS = (32, 64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024)
REGS = (16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 128, 168, 255)
SMEM = (0, 0, 0, 1024, 2048, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 40960, 49152)
LIMITERS = ("warps", "blocks", "registers", "shared_memory")


def _occupancy(pick: Pick, concept: str) -> Draft:
    rng = pick.rng
    cc = str(pick("cc", lambda: rng.choice(CCS)))
    threads = pick.whole("threads", lambda: rng.choice(THREADS), 1, 1024)
    regs = pick.whole("regs", lambda: rng.choice(REGS), 1, 255)
    smem = pick.whole("smem", lambda: rng.choice(SMEM), 0, 1 << 20)
    limits = limits_for_cc(parse_cc(cc))
    try:
        check(LaunchConfig(Dim3(1), Dim3(threads), smem, regs), limits, limits.label)
    except (LaunchValidationError, UserError) as exc:
        raise pick.redraw(str(exc)) from None
    occ = occupancy(limits, threads, regs, smem)
    block = (
        f"blocks of {threads} threads using {regs} registers per thread and {smem:,} bytes of shared memory"
    )
    command = (
        CLI,
        "occupancy",
        "--cc",
        cc,
        "--threads",
        str(threads),
        "--regs",
        str(regs),
        "--smem",
        str(smem),
        "--json",
    )
    params = {"cc": cc, "threads": threads, "regs": regs, "smem": smem}
    if concept == "limiter":
        if "+" in occ.limiter:  # two resources bind at once: no single right choice
            raise pick.redraw(f"two resources limit it at once ({occ.limiter_text})")
        return Draft(
            prompt=f"On a GPU of compute capability {cc} ({limits.arch_name}), {block}: which resource limits "
            "how many blocks an SM holds?",
            params=params,
            answer=occ.limiter,
            unit="",
            tolerance=0.0,
            explanation=occ.explain(),
            command=command,
            answer_key="limiter",
            choices=LIMITERS,
        )
    return Draft(
        prompt=f"On a GPU of compute capability {cc} ({limits.arch_name}), {block}: what is the theoretical "
        "occupancy (resident warps over the SM's warp slots), in percent?",
        params=params,
        answer=float(occ.to_dict()["occupancy_pct"]),
        unit="%",
        tolerance=0.5,
        explanation=occ.explain(),
        command=command,
        answer_key="occupancy_pct",
    )


# --- waves ---------------------------------------------------------------------------------------

GPUS = ("gtx-1650-laptop", "t4", "a100-sxm4-40gb", "rtx-3090", "l4", "h100-sxm5", "rtx-4090")


def _waves(pick: Pick, concept: str) -> Draft:
    rng = pick.rng
    slug = str(pick("device", lambda: rng.choice(GPUS)))
    try:
        gpu = catalog_device(slug)
    except KeyError:
        raise UserError(f"no catalog GPU {slug[:40]!r} for a question") from None
    block = pick.whole("block", lambda: rng.choice((64, 128, 256, 512, 1024)), 1, 1024)
    smem = pick.whole("smem", lambda: rng.choice((0, 0, 0, 8192, 16384, 32768)), 0, 1 << 20)
    grid = pick.whole("grid", lambda: rng.randint(1, 12 * (gpu.sm_count or 1)), 1, 1 << 31)
    regs = pick.whole("regs", lambda: 32, 1, 255)
    config = LaunchConfig(Dim3(grid), Dim3(block), smem, regs)
    try:
        plan = plan_launch(config, gpu)
    except (LaunchValidationError, UserError) as exc:
        raise pick.redraw(str(exc)) from None
    data = plan.to_dict()
    params = {"device": slug, "grid": grid, "block": block, "smem": smem, "regs": regs}
    command = (
        CLI,
        "launch",
        "--device",
        slug,
        "--grid",
        str(grid),
        "--block",
        str(block),
        "--smem",
        str(smem),
        "--regs",
        str(regs),
        "--json",
    )
    setup = (
        f"An {gpu.name} ({gpu.sm_count} SMs) runs a launch of {grid:,} blocks of {block} threads, "
        f"{smem:,} bytes of shared memory and {regs} registers per thread each."
    )
    per_sm = data["resident_blocks_per_sm"]
    rule = (
        f"Each SM holds {per_sm} such blocks at once (occupancy), so a wave is {gpu.sm_count} x {per_sm} = "
        f"{data['concurrent_blocks']} blocks; waves = ceil({grid} / {data['concurrent_blocks']}) = {data['waves']}"
    )
    if concept == "tail":
        return Draft(
            prompt=setup + " How many blocks run in the last wave (the tail)?",
            params=params,
            answer=int(data["last_wave_blocks"]),
            unit="blocks",
            tolerance=0.0,
            explanation=rule + f"; the last wave runs what is left: {data['last_wave_blocks']} blocks.",
            command=command,
            answer_key="last_wave_blocks",
        )
    return Draft(
        prompt=setup + " In how many waves does it run (all blocks started in lock-step waves)?",
        params=params,
        answer=int(data["waves"]),
        unit="waves",
        tolerance=0.0,
        explanation=rule + ".",
        command=command,
        answer_key="waves",
    )


# --- coalescing and banks ------------------------------------------------------------------------


def _access(pick: Pick) -> dict[str, int]:
    rng = pick.rng
    return {
        "elem_bytes": pick.whole("elem_bytes", lambda: rng.choice((1, 2, 4, 4, 4, 8, 16)), 1, 16),
        "stride": pick.whole(
            "stride",
            lambda: rng.choice((0, 1, 1, 2, 3, 4, 5, 8, 16, 17, 32, 33, rng.randint(0, 64))),
            0,
            1 << 20,
        ),
        "offset": pick.whole(
            "offset", lambda: rng.choice((0, 0, 1, 2, 3, 7, 8, rng.randint(0, 40))), 0, 1 << 20
        ),
        "active_lanes": pick.whole(
            "active_lanes", lambda: rng.choice((32, 32, 32, 16, 8, 1, rng.randint(1, 32))), 1, 32
        ),
    }


def _memory_command(space: str, a: dict[str, int]) -> tuple[str, ...]:
    return (
        CLI, "memory", "--space", space, "--elem", str(a["elem_bytes"]), "--stride", str(a["stride"]),
        "--offset", str(a["offset"]), "--active", str(a["active_lanes"]), "--json",
    )  # fmt: skip


def _pattern(a: dict[str, int], array: str) -> str:
    n = a["active_lanes"]
    lanes = "all 32 lanes" if n == 32 else "lane 0 alone" if n == 1 else f"lanes 0 to {n - 1}"
    return (
        f"{lanes} of a warp each read one {a['elem_bytes']}-byte element of {array}: lane i reads element "
        f"{a['offset']} + {a['stride']} x i"
    )


def _coalescing(pick: Pick, concept: str) -> Draft:
    a = _access(pick)
    c = coalesce(GlobalAccess(**a))
    explanation = (
        f"The lanes' {c.bytes_requested} distinct bytes fall in {c.sectors_per_request} of the 32-byte sectors "
        f"a load fetches, {c.bytes_fetched} bytes in all; packed they would need {c.ideal_sectors}. "
        f"Efficiency = bytes used / bytes fetched = {c.bytes_requested} / {c.bytes_fetched}."
    )
    prompt = "In global memory (a 256-byte-aligned array), " + _pattern(a, "the array")
    if concept == "efficiency":
        return Draft(
            prompt=prompt + ". What fraction of the fetched bytes do the lanes use (0 to 1)?",
            params=a,
            answer=c.efficiency,
            unit="",
            tolerance=0.005,
            explanation=explanation,
            command=_memory_command("global", a),
            answer_key="efficiency",
        )
    return Draft(
        prompt=prompt + ". How many 32-byte sectors does this one request fetch?",
        params=a,
        answer=c.sectors_per_request,
        unit="sectors",
        tolerance=0.0,
        explanation=explanation,
        command=_memory_command("global", a),
        answer_key="sectors_per_request",
    )


def _banks(pick: Pick, concept: str) -> Draft:
    a = _access(pick)
    b = bank_conflicts(SharedAccess(**a))
    return Draft(
        prompt="In shared memory (32 banks of 4-byte words), "
        + _pattern(a, "a shared array")
        + ". How many ways is the worst bank conflict (1 = none: the request takes one wavefront per phase)?",
        params=a,
        answer=b.conflict_degree,
        unit="-way",
        tolerance=0.0,
        explanation=(
            "A bank is word % 32; lanes reading the same word share it (broadcast), different words in one "
            f"bank are served one after another. The busiest bank holds {b.conflict_degree} different words, "
            f"so the request takes {b.wavefronts} wavefronts (ideal {b.ideal_wavefronts})."
        ),
        command=_memory_command("shared", a),
        answer_key="conflict_degree",
    )


# --- divergence ----------------------------------------------------------------------------------


def _divergence(pick: Pick, concept: str) -> Draft:
    rng = pick.rng
    block = pick.whole("block", lambda: rng.choice((32, 64, 96, 128, 256, rng.randint(1, 256))), 1, 1024)
    kind = str(pick("kind", lambda: rng.choice(("mod", "lt", "warp"))))
    k = pick.whole("k", lambda: rng.randint(1, 8) if kind != "lt" else rng.randint(0, block), 0, 1 << 20)
    branch = Branch(kind, k=k)
    d = divergence(block, branch)
    params = {"block": block, "kind": kind, "k": k}
    command = (CLI, "divergence", "--block", str(block), "--branch", f"{kind}:{k}", "--json")
    setup = f"A block of {block} threads runs `if ({branch.condition}) {{ A }} else {{ B }}`."
    if concept == "active_lanes":
        warp = pick.whole("warp", lambda: rng.randrange(len(d.warps)), 0, len(d.warps) - 1)
        w = d.warps[warp]
        if not w.taken:  # active_lanes[0] is the taken path's lanes only when some lane takes it
            raise pick.redraw(f"no lane of warp {warp} takes the branch")
        return Draft(
            prompt=setup + f" How many lanes of warp {warp} are active while it runs A?",
            params={**params, "warp": warp},
            answer=len(w.taken),
            unit="lanes",
            tolerance=0.0,
            explanation=(
                f"Warp {warp} holds threads {32 * warp} to {32 * warp + w.lanes - 1}; {len(w.taken)} of them "
                "satisfy the condition, and only those lanes are active on the taken path."
            ),
            command=command,
            answer_key=f"warps.{warp}.active_lanes.0",
        )
    return Draft(
        prompt=setup + " What is the block's SIMT efficiency (lane slots at work over lane slots issued, "
        "both paths of a diverged warp counted, 0 to 1)?",
        params=params,
        answer=d.simt_efficiency,
        unit="",
        tolerance=0.005,
        explanation=(
            f"{d.diverged_warps} of {len(d.warps)} warps diverge and run both paths with part of their lanes; "
            "efficiency = sum of active lanes over all paths / (32 x paths issued)."
        ),
        command=command,
        answer_key="simt_efficiency",
    )


# --- dispatch in time ----------------------------------------------------------------------------


def _dispatch(pick: Pick, concept: str) -> Draft:
    """Seeded: a catalog GPU, a 1-D launch, uniform or row-pattern durations. Fixed (the Timeline
    shown): its catalog GPU, blocks, threads per block, registers and shared memory, and durations
    that are not random (the answer of a random one depends on its seed, which no student sees)."""
    rng = pick.rng
    from explorer.launch.dispatch import check_blocks, simulate_dispatch
    from explorer.launch.durations import parse_durations

    slug = pick("device", lambda: rng.choice(("gtx-1650-laptop", "t4", "l4")))
    try:
        gpu = catalog_device(str(slug))
    except KeyError:
        raise UserError(f"the question's device is {str(slug)[:40]!r}, not a catalog GPU") from None
    slug = gpu.key.removeprefix("catalog:")
    block = pick.whole("block", lambda: rng.choice((256, 512, 1024)), 1, 1024)
    grid = pick.whole("grid", lambda: rng.randint(1, 6 * (gpu.sm_count or 1)), 1, 2**31 - 1)

    def draw_durations() -> str:
        rows = ",".join(str(rng.choice((1, 1, 2, 4, 8))) for _ in range(rng.randint(1, 4)))
        return f"rows:{rows}" if concept == "makespan" and rng.random() < 0.5 else "uniform"

    durations = pick("durations", draw_durations)
    if not isinstance(durations, str) or durations.strip().lower().split(":")[0] in ("jitter", "heavy"):
        raise pick.redraw(f"durations {str(durations)[:40]!r} are random: the answer depends on their seed")
    extra = pick.fixed or {}
    regs = pick.whole("regs", lambda: 32, 1, 255) if "regs" in extra else 32
    smem = pick.whole("smem", lambda: 0, 0, 1 << 20) if "smem" in extra else 0
    config = LaunchConfig(Dim3(grid), Dim3(block), smem, regs)
    try:
        plan = plan_launch(config, gpu)
        check_blocks(plan)
    except (LaunchValidationError, UserError) as exc:
        raise pick.redraw(str(exc)) from None
    result = simulate_dispatch(plan, parse_durations(durations), "free", 0)
    data = result.to_dict()
    resources: tuple[str, ...] = ("--regs", str(regs)) if regs != 32 else ()
    resources += ("--smem", str(smem)) if smem else ()
    command = (
        CLI, "dispatch", "--device", slug, "--grid", str(grid), "--block", str(block), *resources,
        "--durations", durations, "--json",
    )  # fmt: skip
    what = "every block takes the same time" if durations == "uniform" else f"block durations {durations}"
    uses = f", {regs} registers per thread" if regs != 32 else ""
    uses += f", {smem:,} B of shared memory per block" if smem else ""
    params: dict[str, Any] = {"device": slug, "grid": grid, "block": block, "durations": durations}
    if "regs" in extra or "smem" in extra:
        params |= {"regs": regs, "smem": smem}
    return Draft(
        prompt=(
            f"An {gpu.name} ({gpu.sm_count} SMs) runs {grid:,} blocks of {block} threads{uses} ({what}); a block "
            "starts as soon as an SM has room. How long does the launch take, in units of the mean block?"
        ),
        params=params,
        answer=float(data["makespan"]),
        unit="mean blocks",
        tolerance=0.01,
        explanation=(
            f"{data['slots']} blocks run at once ({data['slots_per_sm']} per SM); the launch ends when the last "
            f"block does. It can be no shorter than {data['lower_bound']:g} (the work spread evenly, or the "
            f"longest block) and no longer than {data['upper_bound']:g} (Graham's bound for greedy dispatch)."
        ),
        command=command,
        answer_key="makespan",
    )


# --- latency hiding ------------------------------------------------------------------------------


def _latency(pick: Pick, concept: str) -> Draft:
    from explorer.launch.latency import LatencyConfig, model_utilization, warps_needed_per_scheduler

    rng = pick.rng
    schedulers = pick.whole("schedulers", lambda: 4, 1, 8)
    # fewer warps than schedulers included: idle schedulers count as 0
    warps = pick.whole("warps", lambda: rng.randint(1, 48), 1, 1024)
    mem_latency = pick.whole("mem_latency", lambda: rng.choice((20, 50, 100, 200, 300, 400, 600)), 0, 10_000)
    alu = pick.whole("alu", lambda: rng.choice((0, 1, 2, 4, 8, 16, 32)), 0, 1000)
    config = LatencyConfig(warps, mem_latency, alu, schedulers)
    params = {"warps": warps, "mem_latency": mem_latency, "alu": alu, "schedulers": schedulers}
    command = (
        CLI, "latency", "--warps", str(warps), "--mem-latency", str(mem_latency), "--alu", str(alu),
        "--schedulers", str(schedulers), "--json",
    )  # fmt: skip
    setup = (
        f"Each warp loops: one load that waits {mem_latency} cycles, then {alu} independent arithmetic "
        f"instructions that use it; an SM has {schedulers} schedulers, each issuing one instruction a cycle."
    )
    need = warps_needed_per_scheduler(mem_latency, alu)
    rule = f"N* = ceil((L + K + 1) / (K + 1)) = ceil({mem_latency + alu + 1} / {alu + 1}) = {need} warps per scheduler"
    if concept == "warps_needed":
        return Draft(
            prompt=setup + " How many resident warps per SM keep every scheduler issuing every cycle?",
            params=params,
            answer=schedulers * need,
            unit="warps",
            tolerance=0.0,
            explanation=rule + f", x {schedulers} schedulers = {schedulers * need} (Little's law).",
            command=command,
            answer_key="warps_needed",
        )
    u = model_utilization(config)
    return Draft(
        prompt=setup + f" With {warps} resident warps, what share of issue slots is used (0 to 1)?",
        params=params,
        answer=u,
        unit="",
        tolerance=0.005,
        explanation=(
            "Per scheduler U = min(1, N (K + 1) / (L + K + 1)) with N its warps (warp w goes to scheduler w mod "
            f"{schedulers}); the SM's U is the mean over its schedulers. {rule}."
        ),
        command=command,
        answer_key="model_utilization",
    )


# --- tiled matmul --------------------------------------------------------------------------------


def _tiling(pick: Pick, concept: str) -> Draft:
    rng = pick.rng
    tile = pick.whole("tile", lambda: rng.choice((4, 8, 16, 32)), 1, 32)
    m, n, k = (
        pick.whole(name, lambda: rng.choice((tile, 2 * tile, 64, 100, 128, rng.randint(1, 160))), 1, 1 << 16)
        for name in ("m", "n", "k")
    )
    model = tiling_model(MatmulShape(m, n, k, tile))
    data = model.to_dict()
    params = {"m": m, "n": n, "k": k, "tile": tile}
    command = (CLI, "tiling", "--m", str(m), "--n", str(n), "--k", str(k), "--tile", str(tile), "--json")
    setup = (
        f"C ({m} x {n}) = A ({m} x {k}) x B ({k} x {n}), float32, with the tiled kernel of PMPP chapter 5: "
        f"{tile} x {tile} tiles, one thread per output element."
    )
    phases = data["phases"]
    if concept == "barriers":
        return Draft(
            prompt=setup
            + " How many __syncthreads() barriers does the whole launch execute (per block, summed)?",
            params=params,
            answer=int(data["barriers"]),
            unit="barriers",
            tolerance=0.0,
            explanation=f"Each block runs ceil(k / T) = {phases} phases with two barriers each, over {data['blocks']} blocks.",
            command=command,
            answer_key="barriers",
        )
    if concept == "intensity":
        return Draft(
            prompt=setup + " What is its arithmetic intensity against global memory, in FLOP per byte?",
            params=params,
            answer=float(data["intensity_flop_per_byte"]),
            unit="FLOP/byte",
            tolerance=0.01,
            explanation=(
                f"FLOP = 2 m n k = {data['flops']:,}; global bytes = 4 x (loads + stores) = {data['global_bytes']:,}; "
                "each element of A is loaded once per block column of tiles, not once per thread."
            ),
            command=command,
            answer_key="intensity_flop_per_byte",
        )
    return Draft(
        prompt=setup + " How many global-memory element loads does the whole launch make (tiles with padding "
        "past the matrix edge not loaded)?",
        params=params,
        answer=int(data["global_loads"]),
        unit="loads",
        tolerance=0.0,
        explanation=(
            f"Each block loads one A tile and one B tile per phase ({phases} phases), one element per thread, "
            "skipping elements outside the matrices; the naive kernel loads 2k per output instead."
        ),
        command=command,
        answer_key="global_loads",
    )


TOPICS: dict[str, Topic] = {
    t.name: t
    for t in (
        Topic("occupancy", "Occupancy", ("occupancy", "limiter"), _occupancy),
        Topic("waves", "Waves and the tail", ("waves", "tail"), _waves),
        Topic("coalescing", "Coalescing", ("sectors", "efficiency"), _coalescing),
        Topic("banks", "Bank conflicts", ("conflict",), _banks),
        Topic("divergence", "Divergence", ("active_lanes", "simt_efficiency"), _divergence),
        Topic("dispatch", "Dispatch in time", ("makespan",), _dispatch),
        Topic("latency", "Latency hiding", ("utilization", "warps_needed"), _latency),
        Topic("tiling", "Tiled matmul", ("global_loads", "intensity", "barriers"), _tiling),
    )
}


def make_question(topic: str, concept: str, seed: int) -> Question:
    """The question of ``topic`` and ``concept`` that ``seed`` gives (always the same one)."""
    t = _topic(topic)
    if concept not in t.concepts:
        raise UserError(f"topic {topic} has no concept {concept!r}; its concepts: {', '.join(t.concepts)}")
    rng = random.Random(f"{topic}.{concept}.{seed}")
    for _ in range(MAX_DRAWS):
        try:
            d = t.make(Pick(rng), concept)
        except Redraw:
            continue
        return _question(f"{topic}.{concept}.{seed}", topic, concept, d)
    raise RuntimeError(f"no question of {topic}.{concept} from seed {seed} after {MAX_DRAWS} draws")


def fixed_question(topic: str, concept: str, params: dict[str, Any]) -> Question:
    """The question of ``topic`` and ``concept`` about these very parameters (a lesson step's own
    launch or pattern); one line naming what is wrong when it cannot be asked."""
    t = _topic(topic)
    if concept not in t.concepts:
        raise UserError(f"topic {topic} has no concept {concept!r}; its concepts: {', '.join(t.concepts)}")
    d = t.make(Pick(random.Random(0), dict(params)), concept)
    digest = hashlib.sha256(json.dumps(d.params, sort_keys=True).encode()).hexdigest()[:10]
    return _question(f"{topic}.{concept}.f{digest}", topic, concept, d)


def _question(qid: str, topic: str, concept: str, d: Draft) -> Question:
    return Question(
        id=qid,
        topic=topic,
        concept=concept,
        prompt=d.prompt,
        params=d.params,
        answer=d.answer,
        unit=d.unit,
        tolerance=d.tolerance,
        explanation=d.explanation,
        command=d.command,
        answer_key=d.answer_key,
        choices=d.choices,
    )


def _topic(name: str) -> Topic:
    t = TOPICS.get(name)
    if t is None:
        raise UserError(f"no quiz topic {name[:40]!r}; the topics: {', '.join(TOPICS)}")
    return t


def questions(topic: str, count: int, seed: int) -> list[Question]:
    """``count`` questions of ``topic`` (or of every topic in turn, for ``"all"``), from ``seed`` on,
    the concepts taken in turn."""
    names = list(TOPICS) if topic == "all" else [_topic(topic).name]
    out = []
    for i in range(count):
        t = TOPICS[names[i % len(names)]]
        concept = t.concepts[(i // len(names)) % len(t.concepts)]
        out.append(make_question(t.name, concept, seed + i))
    return out


def variant_of(question_id: str) -> Question:
    """The isomorphic follow-up: the same topic and concept with other numbers (the next seed whose
    parameters differ)."""
    topic, concept, seed = parse_id(question_id)
    first = make_question(topic, concept, seed)
    if question_id.rsplit(".", 1)[-1].startswith("f"):  # a fixed question: any other numbers will do
        return first
    for step in range(1, 1000):
        other = make_question(topic, concept, seed + step)
        if other.params != first.params:
            return other
    raise RuntimeError(f"no variant of {question_id}")  # pragma: no cover - the draws vary widely


def describe_resource(name: str) -> str:
    """A limiter's JSON name in words ("shared_memory" -> "shared memory")."""
    return RESOURCE_NAMES.get(name, name.replace("_", " "))
