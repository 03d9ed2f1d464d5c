"""How fast the memory and divergence models and their pictures are.

Targets: any single pattern computes in under 1 ms, a full stride sweep in under
20 ms, and a frame of the coalescing or bank view paints in under 8 ms at 1280x800. The tiled
matmul stepper: a move of the T slider (the count model, the bank model's reads and the
block's timeline, all recomputed) in under 100 ms, a frame of its picture in under 16 ms. Prints the
median and the worst of many runs (wall clock), and the median CPU time of this thread: on a
machine other programs keep busy the wall clock includes the time this process waited for a
core, which the CPU time does not. The machine's load is printed first; run it on a quiet machine
for figures to quote.

    QT_QPA_PLATFORM=offscreen python benchmarks/memory_speed.py
"""

from __future__ import annotations

import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def timed(fn, runs: int = 200) -> tuple[float, float, float]:
    """Median and worst wall-clock ms, and median CPU ms of this thread."""
    times, cpu = [], []
    for _ in range(runs):
        c0 = time.thread_time()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
    return statistics.median(times) * 1e3, max(times) * 1e3, statistics.median(cpu) * 1e3


def show(name: str, med: float, worst: float, cpu: float) -> None:
    print(f"{name:50s} median {med:7.3f} ms   max {worst:7.3f} ms   cpu median {cpu:7.3f} ms")


def main() -> None:
    from explorer.memory.banks import SharedAccess, bank_conflicts, tile_column
    from explorer.memory.coalescing import GlobalAccess, coalesce, stride_sweep
    from explorer.memory.divergence import Branch, divergence

    cases = {
        "coalescing, 16-byte, stride 1000, warp 31": lambda: coalesce(
            GlobalAccess(elem_bytes=16, stride=1000, warp=31)
        ),
        "banks, tile[32][32] column": lambda: bank_conflicts(tile_column(32)),
        "banks, 16-byte stride 3": lambda: bank_conflicts(SharedAccess(elem_bytes=16, stride=3)),
        "divergence, 1024 threads, random 0.5": lambda: divergence(1024, Branch("random", p=0.5, seed=1)),
        "stride sweep 1..32, 4-byte (target < 20 ms)": lambda: stride_sweep(4),
    }
    from explorer.memory.tiling import MatmulShape, tile_reads
    from explorer.memory.tiling_session import TilingSession

    session = TilingSession(MatmulShape(1024, 1024, 1024, 8))
    tiles = iter(range(10**9))

    def slide() -> None:  # the bank model's reads are cached per T: start each move cold
        tile_reads.cache_clear()
        session.set_tile(31 + next(tiles) % 2)

    cases["tiled matmul: T slider move, 1024^3 (target < 100 ms)"] = slide
    cases["tiled matmul: one stepper state, T = 32"] = lambda: session.timeline.state(
        len(session.timeline) // 2
    )
    print(f"machine load (1-minute average on {os.cpu_count()} cores): {os.getloadavg()[0]:.2f}")
    for name, fn in cases.items():
        show(name, *timed(fn, runs=50 if name.startswith("tiled") else 200))

    from PySide6.QtWidgets import QApplication

    from explorer.ui.memory.panel import MemoryPanel
    from explorer.ui.theme import apply_theme

    app = QApplication([])
    apply_theme(app, "light")
    panel = MemoryPanel(None)
    panel.resize(1280, 740)
    panel.show()
    app.processEvents()
    for tab, preset in ((panel.coalescing, 2), (panel.banks, 2)):
        panel.tabs.setCurrentWidget(tab)
        tab.preset.setCurrentIndex(preset)
        app.processEvents()
        canvas = tab.canvas
        show(f"{type(canvas).__name__} frame at 1280x800 (target < 8 ms)", *timed(canvas.repaint, runs=200))
    panel.tabs.setCurrentWidget(panel.tiling)
    panel.tiling.session.set_shape(MatmulShape(64, 64, 64, 32))
    panel.tiling.session.seek(40)
    app.processEvents()
    show(
        "TilingCanvas frame, T = 32, at 1280x800 (target < 16 ms)",
        *timed(panel.tiling.canvas.repaint, runs=100),
    )


if __name__ == "__main__":
    main()
