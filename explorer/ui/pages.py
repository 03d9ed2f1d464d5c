"""The window's four pages: their keys (the CLI's panel names), titles and where each is built.

A page's module is imported the first time it is shown; the window tries each source in order.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageSpec:
    key: str  # the CLI's panel name
    title: str
    #: modules to try, in order, and the class each must define
    sources: tuple[tuple[str, str], ...]
    #: the tab's word when the full titles do not fit the window's width (large text, small screen)
    short: str = ""


PAGES = (
    PageSpec("devices", "Devices", (("explorer.ui.devices_panel", "DevicesPanel"),)),
    PageSpec(
        "visualizer",
        "Launch visualizer",
        (("explorer.ui.visualizer.panel", "VisualizerPanel"),),
        short="Launches",
    ),
    PageSpec(
        "benchmarks",
        "Benchmarks",
        (("explorer.ui.bench_panel", "BenchPanel"), ("explorer.ui.bench.panel", "BenchPanel")),
    ),
    PageSpec(
        "memory", "Memory and divergence", (("explorer.ui.memory.panel", "MemoryPanel"),), short="Memory"
    ),
)
PAGE_KEYS = tuple(p.key for p in PAGES)
