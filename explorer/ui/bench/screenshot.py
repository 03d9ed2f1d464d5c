"""The Benchmarks page's screenshot: a real run, caught mid-way.

Start the matmul through the engine and return once a share of its points have been measured,
with the rest still running: on the CPU, and on the first present GPU where there is one (so the
speedup curve shows). Everything on screen is then what a user would see at that moment: measured
points under their levels' roofs, the bar part-filled, the engine's time-left estimate, Stop
enabled because a run is behind it. Closing the window (``shutdown``) ends the run; should the run
end first (an error), the panel shows it ended, as it would for a user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEventLoop, QTimer

from explorer.ui.bench.controls import DEFAULT_BUDGET_S

if TYPE_CHECKING:
    from explorer.ui.bench_panel import BenchPanel


def leave_mid_run(panel: BenchPanel, sizes: tuple[int, ...], share: float, wait_s: float) -> None:
    """Start the screenshot's run on ``panel`` (a ``BenchPanel``) and wait for ``share`` of it."""
    controls = panel.controls
    controls.set_workload("matmul")
    gpus = [d.key for d in panel.context.devices if d.kind == "cuda" and d.usable][:1]
    for key, box in controls.device_boxes().items():
        box.setChecked(key == "cpu" or key in gpus)
    controls.sizes_edit.setText(", ".join(str(n) for n in sizes))
    controls.sizes_edit.setCursorPosition(0)
    controls.repeats_spin.setValue(0)
    # the form's own default: the README's picture shows what a user sees (it showed 1.0 s)
    controls.budget_spin.setValue(DEFAULT_BUDGET_S)
    if not panel.start():
        return
    loop = QEventLoop()

    def check() -> None:
        total = panel.total_points  # the engine's, from its first progress record
        if not panel.running or (total and len(panel.points) >= max(1, int(total * share))):
            loop.quit()

    poll = QTimer(panel)
    poll.setInterval(100)
    poll.timeout.connect(check)
    deadline = QTimer(panel)
    deadline.setSingleShot(True)
    deadline.timeout.connect(loop.quit)
    poll.start()
    deadline.start(int(wait_s * 1000))
    loop.exec()
    poll.stop()
    deadline.stop()
    poll.deleteLater()
    deadline.deleteLater()
