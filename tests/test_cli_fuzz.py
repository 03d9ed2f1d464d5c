"""Property: whatever argument list a user (or an attacker) types, every sub-command's parsing and
validation ends in exit status 0 or 2, never a traceback, and an error is exactly one line.

Arguments are built from each sub-command's real options with hostile values (unicode digits,
5000-digit numbers, 1e400, NaN, empty strings, negative numbers, control characters, overlong
paths, unknown ~users), in any order, some missing or repeated, some unknown. ``cli.main`` runs
with ``check_only=True``: parsing and validation to the last step before the work, so no
benchmark runs and no window opens. ``occupancy``, ``launch``, ``memory``, ``divergence``, ``tiling``,
``dispatch`` and ``latency`` are pure maths, so they also run whole.
"""

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer import cli

HOSTILE = [
    "",
    " ",
    "0",
    "-1",
    "1",
    "32",
    "256",
    "1024",
    "-0",
    "²",
    "٣",
    "８",
    "8.²",
    "1e400",
    "1e6",
    "1e-3",
    "4K",
    "48K",
    "1.5",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "0x10",
    "_1_",
    "1_000",
    "9" * 5000,
    "-" + "9" * 5000,
    "9" * 5000 + "x800",
    "9007199254740993",
    "18446744073709551617",
    "\x00",
    "\n",
    "\x1b[31m",
    "a\nb",
    "\udcff",  # an undecodable byte in argv (surrogateescape)
    "cpu",
    "cuda",
    "cuda:0",
    "cuda:99",
    "cuda:²",
    "cuda:",
    "gtx1650",
    "GTX-1650",
    "gtx1605",
    "h100",
    "catalog:t4",
    "7.5",
    "8.6",
    "99.9",
    "1280x800",
    "640x480",
    "100000x1",
    "64,2,2",
    "1,2,3,4",
    "(8,8)",
    "1920,1080",
    "~nosuchuser/x.png",
    "~/x.png",
    "a" * 300 + ".png",
    "/nonexistent/dir/x.png",
    "/",
    "x.png",
    "r.csv",
    "matmul",
    "vector_add",
    "devices",
    "--",
    "0:0",
    ":",
    "1,1,1:1,1,1",
    "4:0",
    "0:256",
    "-1:0",
    "1e400:0",
    "shared",
    "mod:2",
    "mod:0",
    "lt:99999999999",
    "warp:-1",
    "random:1.5",
    "random:nan",
    "random:0.5",
    "01",
    "01-blocks-and-threads",
    "0",
    "99",
    "lesson.json",
    "/etc/passwd",
    "/dev/zero",
    "-oProxyCommand=touch /tmp/dx-fuzz",
    "alice@gpu.example.edu",
    "host:99999",
    "[::1]:22",
    "srun -N1 -n1 --time=2",
    "srun 'unclosed",
    "uniform",
    "jitter:0.5",
    "jitter:1",
    "heavy:1.5",
    "heavy:0.5",
    "rows:1,4,1",
    "rows:mandelbrot",
    "rows:",
    "file:/etc/passwd",
    "file:/dev/zero",
    "file:",
    "free",
    "round-robin",
    "gto",
    "lrr",
]

values = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12))

# each sub-command's options with a value that passes, so that a hostile value in one field
# reaches that field's check (a bad --cc ends the checks before --threads is read)
COMMANDS: dict[str, tuple[list[str], dict[str, str], list[str]]] = {
    "gui": ([], {"--panel": "devices", "--lesson": "01", "--step": "2"}, []),
    # with --host the check step parses the remote (no ssh runs: check_only stops before the work)
    "devices": (
        [],
        {"--host": "gpu-lab", "--via": "srun -N1", "--remote-python": "python3"},
        ["--json", "--catalog"],
    ),  # not --measure: it measures (seconds)
    "occupancy": ([], {"--cc": "7.5", "--threads": "256", "--regs": "32", "--smem": "0"}, ["--json"]),
    "launch": (
        [],
        {
            "--device": "1650",
            "--grid": "4",
            "--block": "256",
            "--smem": "0",
            "--regs": "32",
            "--n": "1000",
            "--thread": "3,0,0:255",
        },
        ["--json"],
    ),
    "bench": (
        ["matmul"],
        {"--device": "cpu", "--repeats": "1", "--csv": "r.csv", "--host": "gpu-lab", "--via": "srun -N1"},
        ["--json", "--remeasure-ceilings"],
    ),
    "screenshot": (
        [],
        {"--panel": "devices", "--out": "x.png", "--size": "1280x800", "--lesson": "01", "--step": "2"},
        [],
    ),
    "memory": (
        [],
        {
            "--space": "global",
            "--elem": "4",
            "--stride": "1",
            "--offset": "0",
            "--active": "32",
            "--warp": "0",
        },
        ["--json"],
    ),
    "divergence": ([], {"--block": "128", "--branch": "mod:2", "--seed": "0"}, ["--json"]),
    "tiling": (
        [],
        {"--m": "64", "--n": "50", "--k": "70", "--tile": "16", "--cc": "8.6", "--regs": "32"},
        ["--json"],
    ),
    # not --measure: it runs on a GPU (or says in one line why it cannot)
    "dispatch": (
        [],
        {
            "--device": "1650",
            "--grid": "98",
            "--block": "1024",
            "--smem": "0",
            "--regs": "32",
            "--durations": "jitter:0.2",
            "--policy": "round-robin",
            "--seed": "7",
        },
        ["--json"],
    ),
    "latency": (
        [],
        {
            "--warps": "16",
            "--mem-latency": "436",
            "--alu": "9",
            "--schedulers": "4",
            "--policy": "lrr",
            "--cycles": "5000",
        },
        ["--json"],
    ),
    "self-test": ([], {"--host": "gpu-lab", "--remote-python": "~/dx/bin/python"}, ["--json"]),
    "lessons": ([], {}, ["--json"]),
}
#: a sub-command's second form, fuzzed on its own so its options are not drowned by the first's:
#: name -> (sub-command, positionals, options with a passing value, flags)
VARIANTS: dict[str, tuple[str, list[str], dict[str, str], list[str]]] = {
    "launch --compare": (
        "launch",
        ["--compare"],
        {
            "--device": "1650",
            "--grid": "98",
            "--block": "1024",
            "--n": "100000",
            "--b-device": "h100",
            "--b-grid": "8",
            "--b-block": "128",
            "--b-smem": "1024",
            "--b-regs": "64",
            "--b-n": "1000",
        },
        ["--json"],
    ),
}
#: pure maths, cheap: these also run whole when their arguments pass
PURE = (
    "occupancy",
    "launch",
    "memory",
    "divergence",
    "tiling",
    "launch --compare",
    "lessons",
    "dispatch",
    "latency",
)
OTHER_OPTIONS = ["--device", "--cc", "--sizes", "--bogus", "--help", "-h", "--json", "--", "-1"]


@st.composite
def argument_lists(draw, command: str) -> list[str]:
    if command in VARIANTS:
        sub_command, positionals, options, flags = VARIANTS[command]
    else:
        sub_command, (positionals, options, flags) = command, COMMANDS[command]
    argv = [sub_command]
    argv += [draw(st.just(p) | values) for p in positionals]
    pieces: list[list[str]] = []
    for option, good in options.items():
        how = draw(st.sampled_from(["good", "good", "hostile", "hostile", "missing", "novalue"]))
        if how == "good":
            pieces.append([option, good])
        elif how == "hostile":
            pieces.append([option, draw(values)])
        elif how == "novalue":
            pieces.append([option])
    if command == "bench" and draw(st.booleans()):
        pieces.append(["--sizes", *draw(st.lists(values | st.just("64"), min_size=0, max_size=4))])
    if command == "occupancy" and draw(st.booleans()):
        pieces.append(["--device", draw(values)])  # with or instead of --cc
    pieces += [[f] for f in flags if draw(st.booleans())]
    if draw(st.integers(0, 4)) == 0:
        pieces.append([draw(st.sampled_from(OTHER_OPTIONS) | values)])
    for piece in draw(st.permutations(pieces)):
        argv.extend(piece)
    return argv


def _call(argv: list[str], check_only: bool) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv, check_only=check_only)
    return code, out.getvalue(), err.getvalue()


def _assert_clean(argv: list[str], code: int, out: str, err: str) -> None:
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in out + err, argv
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("device-explorer: error: "), (argv, err)
        assert len(err) <= 700, (argv, len(err))


@pytest.mark.parametrize("command", [*COMMANDS, *VARIANTS])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_sub_command_parses_hostile_arguments_to_0_or_2(command, data):
    argv = data.draw(argument_lists(command))
    code, out, err = _call(argv, check_only=True)
    _assert_clean(argv, code, out, err)
    if command in PURE and code == 0 and "-h" not in argv and "--help" not in argv:
        code, out, err = _call(argv, check_only=False)  # pure maths: run it whole too
        _assert_clean(argv, code, out, err)
        assert code == 0


@settings(max_examples=100, deadline=None)
@given(argv=st.lists(values, max_size=6))
def test_any_argument_list_at_all(argv):
    code, out, err = _call(argv, check_only=True)
    _assert_clean(argv, code, out, err)


def test_every_sub_command_declares_its_check_step():
    """A new sub-command without its own ``check`` would inherit the window's; make that loud."""
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    names = set(sub.choices)  # type: ignore[union-attr]
    assert set(COMMANDS) | {"agent", "launcher-guard"} == names  # the hidden two: the child ends
    for name, subparser in sub.choices.items():  # type: ignore[union-attr]
        assert "check" in subparser._defaults, name
