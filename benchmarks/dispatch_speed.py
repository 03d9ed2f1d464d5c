"""Time the dispatch-in-time simulation of 1,000,000 blocks, and the timeline view's frame while playing.

The issue's targets: 1,000,000 blocks simulated in at most 200 ms; the timeline at 60 frames per
second while it plays (a frame within 16.7 ms). Printed per duration kind: the simulation (durations
drawn, blocks dispatched, the timeline built; numba's compile is done once before timing), the
figures (makespan, tail, per-SM busy time), both as wall time and this thread's CPU time (the
machine may be shared), median and worst of the repeats. Then the view as the visualizer mounts it:
the chart rasterised once (on a new result or a resize), and frames while the session plays: each
frame is one ``LaunchSession.advance`` of 1/60 s (the timeline's moment is the session's clock, at
its fastest speed) and the Timeline tab's view rendered into a 1280x800 image. Run:

    QT_QPA_PLATFORM=offscreen python benchmarks/dispatch_speed.py [--blocks 1000000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def timed(fn, repeats: int):
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        c0, t0 = time.thread_time(), time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.thread_time() - c0)
    return out, walls, cpus


def line(label: str, walls: list[float], cpus: list[float]) -> str:
    return (
        f"{label}: median {statistics.median(walls) * 1e3:.1f} ms, max {max(walls) * 1e3:.1f} ms "
        f"(CPU: median {statistics.median(cpus) * 1e3:.1f} ms)"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--blocks", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--frames", type=int, default=240)
    args = parser.parse_args()

    from explorer.devices.catalog import load_catalog
    from explorer.launch.config import parse_launch
    from explorer.launch.dispatch import simulate_dispatch
    from explorer.launch.durations import parse_durations
    from explorer.launch.schedule import plan_launch

    gpus = {d.name: d for d in load_catalog()}
    cases = [
        ("NVIDIA H100 SXM5 80GB", "256"),  # 132 SMs x 8 slots
        ("NVIDIA GeForce GTX 1650 Laptop GPU", "1024"),  # 16 SMs x 1 slot: the longest chain of events
    ]
    kinds = ["uniform", "jitter:0.2", "heavy:1.5", "rows:1,4,1", "rows:mandelbrot"]
    print(f"machine load (1-minute average on {os.cpu_count()} cores, shared): {os.getloadavg()[0]:.2f}")
    # numba compiles the event loop once per process (or loads it from its cache): not the simulation
    c0 = time.perf_counter()
    simulate_dispatch(
        plan_launch(parse_launch("64", "256"), gpus[cases[0][0]]), parse_durations("jitter:0.1")
    )
    print(
        f"first varied simulation of the process (numba compiles or loads the loop): {time.perf_counter() - c0:.2f} s"
    )
    keep = None
    for name, block in cases:
        plan = plan_launch(parse_launch(str(args.blocks), block), gpus[name])
        print(
            f"\n{name}: {plan.total_blocks:,} blocks of {block} threads, {plan.concurrent_blocks:,} slots, {plan.waves:,} waves"
        )
        for kind in kinds:
            spec = parse_durations(kind)
            for policy in ("free", "round-robin"):
                result, walls, cpus = timed(
                    lambda p=policy, s=spec, pl=plan: simulate_dispatch(pl, s, p), args.repeats
                )
                _, fw, fc = timed(lambda r=result: type(r.timeline)(**_fields(r.timeline)).figures, 3)
                print(
                    line(f"  {kind:<16} {policy:<12} simulate", walls, cpus)
                    + f"; makespan {result.figures.makespan:.2f}"
                )
                print(line(f"  {'':<16} {'':<12} figures ", fw, fc))
                if name == cases[0][0] and kind == "jitter:0.2" and policy == "free":
                    keep = result
    assert keep is not None
    frame_times(keep, args.frames)
    return 0


def _fields(t):
    return {k: getattr(t, k) for k in ("sm_count", "slots_per_sm", "sm", "slot", "start", "end", "unit")}


def frame_times(result, frames: int) -> None:
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QApplication

    from explorer.devices.catalog import load_catalog
    from explorer.launch.animation import SPEEDS_WAVES_PER_S
    from explorer.launch.session import DeviceChoice, LaunchSession, LaunchSetup
    from explorer.launch.time_views import DispatchSettings, TimeViews
    from explorer.ui.visualizer.timeline_page import TimelinePage
    from explorer.ui.visualizer.timeline_view import rasterise

    app = QApplication.instance() or QApplication([])
    devices = [DeviceChoice(d) for d in load_catalog()]
    device = next(c for c in devices if c.device.name == result.plan.device_name)
    session = LaunchSession(devices)
    session.load([LaunchSetup(device.key, result.plan.config)])
    model = TimeViews(session)
    model.load(
        "timeline",
        DispatchSettings(result.durations.text, result.policy, result.seed),
        model.latency_settings,
    )
    page = TimelinePage(model, lambda: "")
    page.resize(1280, 800)
    page.show()
    app.processEvents()
    view = page.view
    lay = view.layout_now()
    _, walls, cpus = timed(
        lambda: rasterise(model.dispatch.timeline, int(lay.plot.width()), lay.rows, lay.slot_rows), 3
    )
    print(f"\ntimeline tab, {model.dispatch.timeline.blocks:,} blocks, {view.width()}x{view.height()} view:")
    print(line("  chart rasterised (once per result or resize)", walls, cpus))
    image = QImage(view.width(), view.height(), QImage.Format.Format_ARGB32_Premultiplied)
    view.render(image)  # the first frame builds the raster
    session.set_speed(len(SPEEDS_WAVES_PER_S) - 1)  # the fastest: the cursor moves most per frame
    session.play()
    walls, cpus = [], []
    for _ in range(frames):
        c0, t0 = time.thread_time(), time.perf_counter()
        if not session.advance(1 / 60):  # the frame clock's tick: the timeline's moment moves
            session.restart()
            session.play()
        view.render(image)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.thread_time() - c0)
    assert view.time == session.moment or view.time == model.dispatch.figures.makespan
    walls.sort()
    print(
        line(f"  frame while playing ({frames} frames: session.advance + paint)", walls, cpus)
        + f", p90 {walls[int(0.9 * len(walls))] * 1e3:.1f} ms; 60 frames/s needs 16.7 ms"
    )
    page.close()
    app.processEvents()


if __name__ == "__main__":
    raise SystemExit(main())
