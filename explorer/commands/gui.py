"""``device-explorer`` (the window) and ``device-explorer screenshot`` (the window, to a PNG).

This module is part of the Qt-free command layer only in that it imports Qt *inside* the two
functions: the CLI imports it lazily, and only for these two sub-commands.
"""

from __future__ import annotations

import os
import sys
from argparse import Namespace
from dataclasses import dataclass
from pathlib import Path

from explorer.commands.lesson_choice import LessonChoice, parse_lesson_choice
from explorer.errors import UserError
from explorer.inputs import parse_output_path, parse_window_size, shown


def parse_size(text: str) -> tuple[int, int]:
    """'1280x800' -> (1280, 800); anything else is a one-line UserError naming the limits."""
    return parse_window_size(text, "--size")


def parse_scale(text: str | int) -> int:
    """'150' or '150%' -> 150, the text size in percent; outside 100..250 is a one-line UserError."""
    from explorer.prefs import TEXT_SCALE_RANGE  # Qt-free: this runs before Qt loads

    TEXT_SCALE_MIN, TEXT_SCALE_MAX = TEXT_SCALE_RANGE  # the range's ends

    raw = str(text).strip().rstrip("%").strip()
    if not raw.isdigit():
        raise UserError(f"--scale must be a whole percentage such as 150, got {text!r}")
    value = int(raw)
    if not TEXT_SCALE_MIN <= value <= TEXT_SCALE_MAX:
        raise UserError(
            f"--scale {value} is outside the supported range {TEXT_SCALE_MIN} to {TEXT_SCALE_MAX}"
        )
    return value


def check_output_path(text: str) -> Path:
    """The PNG path to write, after checking its folder exists and is writable (one-line errors)."""
    return parse_output_path(text, "--out", (".png",))


def open_main_window(panel: str | None = None, remember: bool = False):
    """Create the application (if needed) and show the main window; returns (app, window).

    With ``remember`` the window comes back as the user left it (theme, panel, size; a
    ``panel`` asked for on the command line wins) and is saved again when the app quits.
    """
    from explorer import prefs
    from explorer.ui.app import create_application
    from explorer.ui.main_window import MainWindow

    app = create_application()
    window = MainWindow(panel=panel)
    if remember:
        saved, notice = prefs.load_with_notice()
        window.show_notice(notice)
        if panel:
            saved.panel = panel
        window.apply_prefs(saved)
        app.aboutToQuit.connect(lambda: prefs.save(window.current_prefs()))
    window.fit_screen()  # the first window fits its screen, title bar and status bar included
    window.show()
    return app, window


def x_display_answers(display: str, timeout_s: float = 3.0) -> bool | None:
    """Whether an X server accepts a connection at ``display`` (as Qt's xcb plugin will try),
    asked through libxcb in a few milliseconds; ``None`` when that cannot be known (no libxcb,
    or no answer within ``timeout_s``, e.g. a remote display over a slow link): Qt then tries."""
    import ctypes
    import threading

    try:
        xcb = ctypes.CDLL("libxcb.so.1")
    except OSError:
        return None
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.restype = ctypes.c_int
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    answer: list[bool] = []

    def ask() -> None:
        conn = xcb.xcb_connect(os.fsencode(display), None)
        try:
            answer.append(xcb.xcb_connection_has_error(conn) == 0)
        finally:
            xcb.xcb_disconnect(conn)

    worker = threading.Thread(target=ask, daemon=True)
    worker.start()
    worker.join(timeout_s)
    return answer[0] if answer else None


def check_display() -> None:
    """On Linux without a usable X11 or Wayland display, Qt would abort with a core dump ("This
    application failed to start ... Reinstalling the application may fix this problem"); say
    it in one line instead, before Qt is loaded."""
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith("xcb"):
        return  # chosen explicitly (offscreen in tests and CI, or a specific plugin)
    if not sys.platform.startswith("linux") or os.environ.get("WAYLAND_DISPLAY"):
        return
    display = os.environ.get("DISPLAY")
    if not display:
        raise UserError(
            "no display to open the window on (DISPLAY and WAYLAND_DISPLAY are unset); run it in a "
            "desktop session, or render it with 'device-explorer screenshot --out FILE.png'"
        )
    if x_display_answers(display) is False:
        raise UserError(
            f"cannot open display {shown(display)}: no X server answers there, or it refused this user; "
            "start one or correct DISPLAY, or render the window without a display with "
            "'device-explorer screenshot --out FILE.png'"
        )


def check_platform_plugin(platforms: tuple[str, ...] | None = None) -> None:
    """Before Qt is loaded: the platform plugin it will load finds its shared libraries, else one
    line naming the missing ones and the command that installs them (Qt itself would abort with
    exit 134 and a hint that names the wrong package)."""
    from explorer.qtcheck import as_root, distribution_family, platform_problem

    problem = platform_problem(platforms=platforms)
    if problem is not None:
        raise UserError(problem.message(distribution_family(), as_root()))


def run_gui(args: Namespace) -> int:
    # multiprocessing.freeze_support() has already run: it is the first call of cli.main.
    req = parse_gui(args)
    check_display()
    check_platform_plugin()
    app, window = open_main_window(req.panel, remember=True)
    if req.lesson is not None:
        window.lessons.open(req.lesson.lesson, req.lesson.step)
    return run_event_loop(app)


def run_event_loop(app) -> int:  # a QApplication; Qt is imported lazily here
    """Run the window until it is closed, by the user or by Ctrl-C, SIGTERM or SIGHUP (which close
    it the same way: explorer/ui/signals.py); 128 + the signal's number when a signal closed it.

    Nothing is waited for after it: the views' work runs in daemon threads (explorer/ui/workers.py),
    never in Qt's pool, and closing the window has already stopped each page's (a real run's child
    killed, its thread joined briefly), so a probe stuck in a hung driver cannot hold the exit."""
    from explorer.ui.signals import exec_with_signals

    return exec_with_signals(app)


@dataclass(frozen=True)
class ScreenshotRequest:
    """A checked ``screenshot`` request: a writable .png path and a supported window size."""

    panel: str | None
    out: Path
    size: tuple[int, int]
    scale: int = 100  # text size in percent
    lesson: LessonChoice | None = None  # a lesson step to show instead of the panel's screenshot state
    view: str = ""  # another view of the page (the page says which it has)


def parse_screenshot(args: Namespace) -> ScreenshotRequest:
    """Parse and validate ``screenshot``'s arguments before Qt is loaded (one-line errors)."""
    out = check_output_path(args.out)
    lesson = parse_lesson_choice(getattr(args, "lesson", None), getattr(args, "step", None))
    return ScreenshotRequest(
        args.panel,
        out,
        parse_size(args.size),
        parse_scale(getattr(args, "scale", 100)),
        lesson,
        str(getattr(args, "view", "") or ""),
    )


@dataclass(frozen=True)
class GuiRequest:
    """The window's arguments: the panel to show first, and a lesson to open at a step."""

    panel: str | None
    lesson: LessonChoice | None = None


def parse_gui(args: Namespace) -> GuiRequest:
    """The panel (argparse has checked its choices) and ``--lesson``/``--step``, checked before Qt loads."""
    return GuiRequest(
        args.panel, parse_lesson_choice(getattr(args, "lesson", None), getattr(args, "step", None))
    )


def run_screenshot(args: Namespace) -> int:
    req = parse_screenshot(args)
    # rendered offscreen unless QT_QPA_PLATFORM says otherwise (render_window): that plugin's libraries
    check_platform_plugin(None if os.environ.get("QT_QPA_PLATFORM") else ("offscreen",))
    out = req.out
    image = render_window(req.panel, req.size, req.scale, req.lesson, req.view)
    if req.lesson is not None:
        step = req.lesson.lesson.steps[req.lesson.step]
        if step.problem:
            print(f"note: {step.problem}", file=sys.stderr)
    width, height = req.size
    if (image.width(), image.height()) != (width, height):
        # never a silently different picture: the layouts could not shrink that far
        print(
            f"note: at {req.scale}% text the window needs at least {image.width()}x{image.height()}; "
            f"rendered at that size, not {width}x{height}",
            file=sys.stderr,
        )
    from explorer.ui.png import write_png

    write_png(image, out, "the screenshot")
    print(out)
    return 0


def render_window(
    panel: str | None,
    size: tuple[int, int],
    scale: int = 100,
    lesson: LessonChoice | None = None,
    view: str = "",
):
    """The main window showing ``panel`` at ``scale`` percent text, rendered offscreen into a
    QImage (screenshot, self-test). The window is ``size`` exactly wherever its pages fit it.
    With ``lesson`` it shows that lesson's step as the player would, not the panel's screenshot state."""
    from explorer.ui.offscreen import discard, offscreen_window
    from explorer.ui.settle import settle

    window = offscreen_window(panel, size, scale)
    try:
        if lesson is not None:
            window.lessons.open(lesson.lesson, lesson.step)
        else:
            window.prepare_screenshot()
            if view:
                window.current_panel().show_screenshot_view(view)
        window.current_panel().finish_pending()
    except BaseException:
        discard(window)  # a run prepare_screenshot started ends with the window
        raise
    settle()
    image = window.grab().toImage()
    discard(window)
    return image
