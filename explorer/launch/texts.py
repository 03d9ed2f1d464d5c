"""The words about a launch that both the CLI and the window show, made once.

A class reads the same sentence on the projector and in the terminal only if one function writes
it: the launch summary, the occupancy headline, how much of the GPU a launch fills, the tail wave,
the readings, and the description of one thread are all made here. A text is a tuple of
``Phrase`` s, plain words with a few marked spans (strong, warning); the CLI prints ``plain(text)``
and the window shows ``html(text, warning_colour)``, so the two can differ in emphasis only.

Qt-free, and it imports the launch records for type checking only, so ``occupancy`` can import
it without an import cycle. Shares and counts are written by ``explorer.words`` (``percent``,
``count``), as everywhere else in the app.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from explorer.words import count, percent

if TYPE_CHECKING:  # pragma: no cover
    from explorer.launch.config import Dim3, LaunchConfig
    from explorer.launch.occupancy import Occupancy
    from explorer.launch.plan_records import ThreadInfo
    from explorer.launch.schedule import LaunchPlan

STRONG = "strong"
WARNING = "warning"


@dataclass(frozen=True)
class Phrase:
    """A run of words; ``mark`` is "" (plain), ``STRONG`` or ``WARNING``."""

    text: str
    mark: str = ""


Text = tuple[Phrase, ...]


def plain(text: Text) -> str:
    """The words alone, as the CLI prints them."""
    return "".join(p.text for p in text)


def html(text: Text, warning_colour: str) -> str:
    """Rich text for a Qt label: strong phrases bold, warnings bold in ``warning_colour``."""
    from html import escape  # the window's alone: the CLI's plain text does not import html

    out = []
    for p in text:
        words = escape(p.text)
        if p.mark == STRONG:
            out.append(f"<b>{words}</b>")
        elif p.mark == WARNING:
            out.append(f"<b style='color:{warning_colour}'>{words}</b>")
        else:
            out.append(words)
    return "".join(out)


def _t(*parts: str | Phrase) -> Text:
    return tuple(p if isinstance(p, Phrase) else Phrase(p) for p in parts)


def shape(d: Dim3) -> str:
    """ "1,920 x 1,080", or "100 x 100 x 100" for a volume."""
    return f"{d.x:,} x {d.y:,}" + (f" x {d.z:,}" if d.z != 1 else "")


def problem_text(c: LaunchConfig) -> str:
    """``, n = 1,000,000`` or ``, problem 1,920 x 1,080 = 2,073,600 elements``: the size a launch covers
    (empty without one), as a terminal's launch line ends."""
    if c.extent is not None:
        return f", problem {shape(c.extent)} = {c.extent.count:,} elements"
    return f", n = {c.n:,}" if c.n is not None else ""


# ---------------------------------------------------------------- a whole launch


def launch_summary(plan: LaunchPlan) -> Text:
    """The paragraph above the SMs and the first lines of ``device-explorer launch``."""
    c = plan.config
    parts: list[str | Phrase] = [
        Phrase(count(plan.total_blocks, "block"), STRONG),
        f" of {count(plan.threads_per_block, 'thread')} = {count(plan.total_threads, 'thread')}",
    ]
    if c.extent is not None or c.n is not None:
        problem = f"a {shape(c.extent)} problem" if c.extent is not None else f"N = {c.n:,}"
        parts += [f" for {problem}: ", Phrase(count(plan.idle_threads, "idle thread"), STRONG)]
        if plan.uncovered_elements:
            parts += [", ", Phrase(f"{count(plan.uncovered_elements, 'element')} never touched", WARNING)]
    parts.append(f". {count(plan.warps_per_block, 'warp')} per block")
    if plan.last_warp_active_lanes != plan.warp_size:
        parts.append(f" (last warp partial: {plan.last_warp_active_lanes} of {plan.warp_size} lanes)")
    parts += [
        f". {plan.device_name}: {plan.sm_count} SMs x {count(plan.resident_blocks_per_sm, 'resident block')} "
        f"= {plan.concurrent_blocks:,} at once, so ",
        Phrase(count(plan.waves, "wave"), STRONG),
        ".",
    ]
    return _t(*parts)


def gpu_fill(plan: LaunchPlan) -> Text:
    """How much of the whole GPU the launch fills at its fullest: theoretical occupancy is per SM and
    reads 100% for one small block on an otherwise idle GPU."""
    share = percent(plan.gpu_fill)
    parts: list[str | Phrase] = [
        "At its fullest the launch fills ",
        Phrase(f"{plan.peak_resident_warps:,} of the GPU's {plan.warp_slots:,} warp slots ({share})", STRONG),
    ]
    if plan.busy_sms < plan.sm_count:
        parts.append(
            f"; only {plan.busy_sms} of {plan.sm_count} SMs {'gets' if plan.busy_sms == 1 else 'get'} a block, "
            "the other "
            f"{plan.sm_count - plan.busy_sms} idle the whole time"
        )
    return _t(*parts, ".")


def tail_text(plan: LaunchPlan) -> str:
    """The wave bar's line during a last wave that leaves block slots empty ("" when it fills them)."""
    if plan.last_wave_fill >= 1.0:
        return ""
    return (
        f"tail wave: {plan.last_wave_blocks:,} of {plan.concurrent_blocks:,} block slots busy "
        f"({percent(plan.last_wave_fill)}), the rest of the GPU idles"
    )


def readings(plan: LaunchPlan) -> list[Text]:
    """The launch's numbers one per line: what ``device-explorer launch`` prints below the summary
    and the summary's tooltip in the window."""
    c, occ = plan.config, plan.occupancy
    lines: list[Text] = [
        _t(
            f"blocks: {plan.total_blocks:,}   threads: {plan.total_threads:,}   warps: {plan.total_warps:,} "
            f"({plan.warps_per_block} per block)"
        )
    ]
    if plan.last_warp_active_lanes < plan.warp_size:
        idle_lanes = plan.warp_size - plan.last_warp_active_lanes
        lines.append(
            _t(
                f"last warp of each block: {plan.last_warp_active_lanes} of {plan.warp_size} lanes hold a thread "
                f"({idle_lanes} lanes idle in every block: make the block a multiple of {plan.warp_size})"
            )
        )
    else:
        lines.append(_t(f"every warp is full ({plan.warp_size} lanes)"))
    if c.n is not None:
        lines.append(_t(f"idle threads (global index >= n): {plan.idle_threads:,}"))
    elif c.extent is not None:
        lines.append(_t(f"idle threads (outside the problem on some axis): {plan.idle_threads:,}"))
    lines += [
        _t(
            f"resident blocks per SM: {plan.resident_blocks_per_sm} (limited by {occ.limiter_text}; "
            f"theoretical occupancy {percent(occ.occupancy)})"
        ),
        _t(
            f"concurrent blocks: {plan.concurrent_blocks:,} = {plan.sm_count} SMs x {plan.resident_blocks_per_sm}"
        ),
        _t(
            f"waves: {plan.waves:,}; the last runs {count(plan.last_wave_blocks, 'block')} "
            f"({percent(plan.last_wave_fill)} of the GPU's block slots)"
        ),
        gpu_fill(plan),
    ]
    return lines


def cannot_launch(message: str) -> Text:
    """What the summary says instead of describing a launch that cannot run."""
    return _t(
        Phrase("This launch cannot run: ", WARNING), message, ". Nothing is animated until it is fixed."
    )


# ---------------------------------------------------------------- occupancy


def occupancy_headline(occ: Occupancy) -> Text:
    """ "1 active block per SM, 32 of 32 warps: 100% theoretical occupancy, limited by warps"."""
    return _t(
        Phrase(count(occ.active_blocks_per_sm, "active block"), STRONG),
        " per SM, ",
        Phrase(f"{occ.active_warps_per_sm}", STRONG),
        f" of {occ.max_warps_per_sm} warps: ",
        Phrase(f"{percent(occ.occupancy)} theoretical occupancy", STRONG),
        ", limited by ",
        Phrase(occ.limiter_text, STRONG),
    )


THEORETICAL_NOTE = (
    "Theoretical occupancy is per SM: how many warps one SM could hold with this block. It says nothing "
    "about how many blocks the launch has, so read it beside how much of the GPU the launch fills."
)
CANNOT_LAUNCH_ON_GRAPHS = "On the graphs, 0% means a block with that value cannot launch at all."


# ---------------------------------------------------------------- one thread


def thread_rows(info: ThreadInfo) -> list[tuple[str, str]]:
    """(label, value) rows the inspector tabulates and ``launch --thread`` prints, in that order."""
    rows = [
        ("blockIdx", str(info.block_idx)),
        ("threadIdx", str(info.thread_idx)),
        ("blockDim", str(info.block_dim)),
        ("gridDim", str(info.grid_dim)),
    ]
    if info.dims == 1:
        rows.append(("index", info.formula()))
    else:
        rows += [("position" if i == 0 else "", f) for i, f in enumerate(info.axis_formulas())]
        if info.extent is not None:
            index = info.extent_index_formula()
            rows.append(
                (
                    f"index in {shape(info.extent)}",
                    index if index is not None else "none: the thread is outside the problem",
                )
            )
        rows.append(("linear thread number", info.formula()))
    rows += [
        ("warp, lane", f"warp {info.warp} of its block, lane {info.lane}"),
        ("runs on", f"SM {info.sm}, wave {info.wave + 1}"),
    ]
    return rows


def thread_state(info: ThreadInfo) -> Text:
    """Whether the thread works, and on which element, or why its bounds check skips it."""
    if info.extent is not None:
        pos, e = info.global_position, info.extent
        where = f"({pos.x}, {pos.y})" if e.z == 1 else f"({pos.x}, {pos.y}, {pos.z})"
        size = f"{e.x} x {e.y}" if e.z == 1 else f"{e.x} x {e.y} x {e.z}"
        if info.idle:
            return _t(
                Phrase("idle", WARNING),
                f": position {where} is outside the {size} problem, the bounds check skips it",
            )
        return _t(Phrase("works", STRONG), f" on element {where} of {size}, index {info.extent_index}")
    if info.idle:
        return _t(Phrase("idle", WARNING), ": its index is past N, the if (i < n) skips it")
    if info.dims > 1:
        return _t(
            Phrase("works", STRONG),
            f" on element {info.global_linear} (a 1-D problem: the kernel indexes it by the linear number)",
        )
    return _t(Phrase("works", STRONG), f" on element {info.global_linear}")


def thread_lines(info: ThreadInfo) -> list[str]:
    """``device-explorer launch --thread``: the rows as "label: value" lines, then the verdict."""
    width = max(len(k) for k, _ in thread_rows(info)) + 2
    lines = [f"{(k + ':') if k else '':<{width}}{v}" for k, v in thread_rows(info)]
    lines.append(f"{'thread:':<{width}}{plain(thread_state(info))}")
    return lines
