"""One text line per benchmark point: what ``device-explorer bench`` prints as each point
finishes, and what the acceptance run logs.

Above ``results`` (the records) and ``compare`` (the peak share), which it reads; the panel's
table shows the same fields from the same helpers (``results.roof_words``, ``results.model_cell``).
"""

from __future__ import annotations

from explorer.bench.compare import l2_state, peak_share_text, warm_above_dram_note
from explorer.bench.fmt import number_text, seconds_text
from explorer.bench.results import CEILINGS_NOTE, BenchPoint, model_cell, roof_words
from explorer.words import count


def format_point(p: BenchPoint) -> str:
    """The CLI's text line for one point (the panel's table shows the same fields)."""
    head = f"{p.workload:<13} {p.variant:<28} {p.size_label:<12}"
    if p.error:
        return f"{head} ERROR: {p.error}"
    if p.median_s is None:  # a check-only point (a kernel under the simulator): no time to show
        return f"{head} checked, not timed: {p.model}"
    text = (
        f"{head} median {seconds_text(p.median_s, '-')} (min {seconds_text(p.min_s, '-')}, "
        f"IQR {seconds_text(p.spread_s, '-')}, {p.repeats} repeats)"
    )
    if p.throughput is not None:
        text += f"  {number_text(p.throughput, p.throughput_unit)}"
        share = peak_share_text(p)
        if share:
            text += f" ({share})"
    roof = roof_words(p)
    if roof:
        text += f"  [{roof}]"
    if p.model:
        text += f"  [model: {model_cell(p)}]"
    if p.threads is not None and p.device == "cpu":
        text += f"  threads={p.threads}"
    if l2_state(p):
        text += f"  {l2_state(p)}"
    for key, value in p.extra.items():
        if isinstance(value, float):
            text += f"  {key}={value:.3g}"
    if warm_above_dram_note(p):
        text += f"  WHY ABOVE DRAM: {warm_above_dram_note(p)}"
    if isinstance(p.extra.get(CEILINGS_NOTE), str):
        text += f"  NOTE: {p.extra[CEILINGS_NOTE]}"
    if p.invalid:
        text += f"  INVALID: {p.invalid_reason}"
    if p.noisy:
        text += f"  NOISY: {p.noise_reason}" + (
            f" (still so after {count(p.remeasured, 're-measurement')})" if p.remeasured else ""
        )
    return text
