"""Time one frame of the launch visualizer, and the longest event-loop stall while it plays.

H100 SXM (132 SMs), 256-thread blocks -> 8 resident blocks = 64 warps per SM, a grid of many waves.
A frame is the SM picture rendered into a 1280x800 QImage offscreen, at a new moment of the
animation each time (so the cached tiles help, as they do in the app). Run:

    QT_QPA_PLATFORM=offscreen python benchmarks/visualizer_frame.py [--frames 300]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--play-s", type=float, default=3.0)
    args = parser.parse_args()

    from PySide6.QtCore import QElapsedTimer, QTimer
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QApplication

    from explorer.devices.catalog import load_catalog
    from explorer.devices.discovery import Discovery
    from explorer.launch.animation import DISPATCH, RUN
    from explorer.launch.config import Dim3, LaunchConfig
    from explorer.launch.session import LaunchSetup
    from explorer.ui.context import AppContext
    from explorer.ui.visualizer.panel import VisualizerPanel

    app = QApplication.instance() or QApplication([])
    panel = VisualizerPanel(AppContext(Discovery(devices=load_catalog(), reports=[])))
    session = panel.session
    assert session.select_device("h100-sxm5")
    session.edit(LaunchSetup(session.edited_setup.device_key, LaunchConfig(Dim3(132 * 8 * 20), Dim3(256))))
    plan, anim = session.sides[0].plan, session.animation(0)
    assert plan is not None and plan.sm_count == 132 and plan.occupancy.active_warps_per_sm == 64, plan
    assert anim is not None
    grid = panel.sm_view.grid
    grid.resize(1280, 800)
    image = QImage(1280, 800, QImage.Format.Format_ARGB32_Premultiplied)

    cpu: list[float] = []  # this thread's CPU time per frame: what the frame costs without other load

    def stats(label: str, times: list[float]) -> None:
        n = len(times)
        spent, times = sorted(cpu[-n:]), sorted(times)
        print(
            f"{label}: median {statistics.median(times) * 1e3:.2f} ms, p90 {times[int(0.9 * n)] * 1e3:.2f} ms, "
            f"max {times[-1] * 1e3:.2f} ms over {n} frames (CPU: median {statistics.median(spent) * 1e3:.2f}, "
            f"p90 {spent[int(0.9 * n)] * 1e3:.2f}, max {spent[-1] * 1e3:.2f} ms)"
        )

    def timed_render() -> float:
        c0, t0 = time.thread_time(), time.perf_counter()
        grid.render(image)
        t1 = time.perf_counter()
        cpu.append(time.thread_time() - c0)
        return t1 - t0

    anim.seek(2)
    first = timed_render()
    print(
        f"device: {plan.device_name}, {plan.sm_count} SMs x {plan.resident_blocks_per_sm} blocks "
        f"= {plan.occupancy.active_warps_per_sm} warps per SM, {plan.waves} waves, LOD {grid.layout_now().lod}"
    )
    print(f"first frame of the process (Qt loads fonts and enums once): {first * 1e3:.2f} ms")

    times = []
    for i in range(args.frames):
        anim.seek(2 + (i % 100) / 100 * (DISPATCH + RUN))  # wave 3, landing then running
        times.append(timed_render())
    stats("frame within a wave (render SM picture to a 1280x800 QImage)", times)

    # worst case: every frame a new wave, with all 1056 resident blocks on their SMs
    cold = []
    for i in range(60):
        anim.seek(i % plan.waves + DISPATCH + RUN / 2)
        cold.append(timed_render())
    stats("frame at a new wave each time (all blocks drawn)", cold)

    # a new plan or a resize: layout, background and tiles rebuilt, then the full wave drawn
    relayout = []
    for i in range(30):
        grid.invalidate()
        anim.seek(i % plan.waves + DISPATCH + RUN / 2)
        relayout.append(timed_render())
    stats("frame after a new plan or resize (everything rebuilt)", relayout)

    # event-loop stall while playing: a 1 ms probe timer records the longest gap between its ticks
    panel.resize(1280, 800)
    panel.show()
    session.set_speed(5)
    session.restart()
    gaps = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.nsecsElapsed()]

    def probe() -> None:
        now = clock.nsecsElapsed()
        gaps.append((now - last[0]) / 1e6)
        last[0] = now

    probe_timer = QTimer()
    probe_timer.setInterval(1)
    probe_timer.timeout.connect(probe)
    probe_timer.start()
    session.play()
    end = time.perf_counter() + args.play_s
    while time.perf_counter() < end:
        app.processEvents()
    probe_timer.stop()
    frames_drawn = anim.t
    panel.shutdown()
    gaps = gaps[5:]  # the first ticks include start-up
    print(f"machine load (1-minute load average on {os.cpu_count()} cores, shared): {os.getloadavg()[0]:.2f}")
    print(
        f"playing {args.play_s:.0f} s at {anim.speed_waves_per_s:g} waves/s (reached t = {frames_drawn:.2f} waves): "
        f"longest event-loop stall {max(gaps):.1f} ms, median gap {statistics.median(gaps):.2f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
