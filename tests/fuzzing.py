"""Hostile input for the fuzz test (tests/test_cli_fuzz.py) and the fuzz benchmark
(benchmarks/fuzz_cli.py): argument lists for every sub-command, and damaged or planted contents for
every file the app reads, made from a seeded ``random.Random`` so a failure can be replayed.

Argument lists are built from each sub-command's real options with hostile values (unicode digits,
5000-digit numbers, 1e400, NaN, empty strings, negative numbers, control characters, overlong
paths, unknown ~users), in any order, some missing or repeated, some unknown. Files are either a
good file the app itself wrote with a few values replaced by hostile ones (400-digit integers,
1e308, NaN, wrong types, escape sequences, deep nesting), or raw hostile bytes (not UTF-8, not
JSON, truncated, empty, a field of 200,000 characters), or something planted in the file's place
(a named pipe, a folder, a link to /dev/zero, a file over the size limit).

``call`` runs ``cli.main`` in this process and classifies the outcome: its exit status, whether a
traceback escaped, and what it printed.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import random
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    "\x1b]0;title\x07",
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
    "~nosuchuser/x.csv",
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
    "roofline",
    "banks",
]

#: each sub-command's options with a value that passes, so that a hostile value in one field
#: reaches that field's check (a bad --cc ends the checks before --threads is read):
#: name -> (positionals, options with a passing value, flags)
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
        {
            "--device": "cpu",
            "--repeats": "1",
            "--csv": "r.csv",
            "--host": "gpu-lab",
            "--via": "srun -N1",
            "--resume": "resume.csv",
            "--l2": "warm",
        },
        ["--json", "--remeasure-ceilings"],
    ),
    "screenshot": (
        [],
        {
            "--panel": "devices",
            "--out": "x.png",
            "--size": "1280x800",
            "--scale": "150",
            "--lesson": "01",
            "--step": "2",
            "--view": "roofline",
        },
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
            "--dram-granularity": "64",
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
    "kernel": (["student.py"], {"--max-threads": "64", "--timeout": "30"}, ["--json"]),
    "quiz": (
        [],
        {"--topic": "banks", "--count": "2", "--seed": "3", "--variant-of": "tiling.barriers.4"},
        ["--json"],
    ),
    "self-test": ([], {"--host": "gpu-lab", "--remote-python": "~/dx/bin/python"}, ["--json"]),
    "lessons": ([], {}, ["--json"]),
    "admin": (["queue"], {"--dir": "/tmp"}, ["--json", "--clean"]),
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
    "quiz",
)
OTHER_OPTIONS = ["--device", "--cc", "--sizes", "--bogus", "--help", "-h", "--json", "--", "-1"]
ALL_COMMANDS = [*COMMANDS, *VARIANTS]


def value(rng: random.Random) -> str:
    """A hostile value, or a short random text (any code point, control characters included)."""
    if rng.random() < 0.8:
        return rng.choice(HOSTILE)
    return "".join(
        chr(rng.choice((rng.randrange(0, 128), rng.randrange(0, 0x3000)))) for _ in range(rng.randrange(13))
    )


def argv_for(rng: random.Random, command: str) -> list[str]:
    """One argument list for ``command``: each option good, hostile, missing or without a value,
    flags on or off, sometimes an unknown or stray option, all in a random order."""
    if command in VARIANTS:
        sub_command, positionals, options, flags = VARIANTS[command]
    else:
        sub_command, (positionals, options, flags) = command, COMMANDS[command]
    argv = [sub_command] + [p if rng.random() < 0.5 else value(rng) for p in positionals]
    pieces: list[list[str]] = []
    for option, good in options.items():
        how = rng.choice(["good", "good", "hostile", "hostile", "missing", "novalue"])
        if how == "good":
            pieces.append([option, good])
        elif how == "hostile":
            pieces.append([option, value(rng)])
        elif how == "novalue":
            pieces.append([option])
    if command == "bench" and rng.random() < 0.5:
        pieces.append(
            ["--sizes", *[value(rng) if rng.random() < 0.6 else "64" for _ in range(rng.randrange(5))]]
        )
    if command == "occupancy" and rng.random() < 0.5:
        pieces.append(["--device", value(rng)])  # with or instead of --cc
    pieces += [[f] for f in flags if rng.random() < 0.5]
    if rng.randrange(5) == 0:
        pieces.append([rng.choice(OTHER_OPTIONS) if rng.random() < 0.5 else value(rng)])
    rng.shuffle(pieces)
    for piece in pieces:
        argv.extend(piece)
    return argv


# --- files ------------------------------------------------------------------------------------------

#: values put in place of good ones inside a file the app wrote
HOSTILE_JSON: list[Any] = [
    10**400,
    -(10**400),
    2**63,
    -(2**63) - 1,
    1e308,
    -1e308,
    float("nan"),
    float("inf"),
    float("-inf"),
    5e-324,
    -1,
    0,
    "",
    "\x1b]0;pwned\x07\x1b[2J",
    '=HYPERLINK("http://evil.example")',
    "a" * 200_000,
    "9" * 400,
    "\ud800",  # a lone surrogate: JSON can hold it, UTF-8 cannot
    None,
    True,
    [],
    {},
    [[[[[[[[[[]]]]]]]]]],
    {"a": {"b": {"c": [1, "x", None]}}},
    "cuda:99",
    "matmul",
]


def _raw_hostile(rng: random.Random) -> bytes:
    """A file that is not what the app writes at all."""
    choice = rng.randrange(10)
    if choice == 0:
        return b"[" * 200_000 + b"]" * 200_000
    if choice == 1:
        return b'{"a": ' * 100_000 + b"1" + b"}" * 100_000
    if choice == 2:
        return os.urandom(rng.randrange(1, 4096))
    if choice == 3:
        return b""
    if choice == 4:
        return b"1" + b"0" * 400
    if choice == 5:
        return b"NaN"
    if choice == 6:
        return '{"x": "caf\u00e9"}'.encode("latin-1")
    if choice == 7:
        return b"\xef\xbb\xbf" + b"   \n\t "
    if choice == 8:
        return b'"' + b"x" * 200_000 + b'"'
    return b"\x00" * rng.randrange(1, 100)


def _mutate(rng: random.Random, document: Any, changes: int) -> Any:
    """``document`` (parsed JSON) with ``changes`` random values or keys replaced by hostile ones."""
    document = json.loads(json.dumps(document))
    for _ in range(changes):
        holder, key = _random_slot(rng, document)
        if holder is None:
            return rng.choice(HOSTILE_JSON)
        if rng.random() < 0.1 and isinstance(holder, dict):
            holder.pop(key, None)  # a value missing
        else:
            holder[key] = rng.choice(HOSTILE_JSON)
    return document


def _random_slot(rng: random.Random, node: Any) -> tuple[Any, Any]:
    holder: Any = None
    key: Any = None
    for _ in range(12):
        if isinstance(node, dict) and node:
            holder, key = node, rng.choice(list(node))
        elif isinstance(node, list) and node:
            holder, key = node, rng.randrange(len(node))
        else:
            break
        node = holder[key]
        if rng.random() < 0.35:
            break
    return holder, key


def _dumps(value: Any) -> bytes:
    try:
        return json.dumps(value, indent=1).encode("utf-8", errors="surrogatepass")
    except (ValueError, RecursionError):
        return b"[]"


def good_documents() -> dict[str, Any]:
    """A good file of each kind, as the app writes it."""
    from explorer.bench.results import points_to_dict
    from explorer.lessons.builtin import builtin_paths
    from explorer.prefs import Prefs
    from explorer.roofs.model import Ceiling
    from explorer.roofs.store import STORE_FORMAT, MeasuredRoof
    from tests.points import cpu_matmul_point

    points = [
        cpu_matmul_point(
            n,
            10.0,
            median_s=1e-4 * n,
            min_s=1e-4 * n,
            spread_s=1e-6,
            repeats=3,
            threads=2,
            versions={"torch": "2.13.0"},
            extra={"timing_method": "Timer"},
        )
        for n in (16, 32)
    ]
    roof = MeasuredRoof(
        "cpu",
        "fingerprint",
        1.7e9,
        3.0,
        2,
        "a loop",
        [Ceiling("compute", 100.0, "measured", "sgemm", "x", 1.7e9)],
    )
    lesson = next(p for p in builtin_paths() if p.stem.startswith("05"))
    return {
        "settings": Prefs().to_dict(),
        "results": points_to_dict(points),
        "ceilings": {"format_version": STORE_FORMAT, "roofs": {"cpu": roof.to_dict()}},
        "remotes": {"version": 1, "remotes": [{"destination": "gpu-lab", "prefix": "", "python": "python3"}]},
        "lesson": json.loads(lesson.read_text(encoding="utf-8")),
        "resume": points_to_dict(points),
    }


FILE_KINDS = (
    "settings",
    "results",
    "ceilings",
    "remotes",
    "lesson",
    "resume-json",
    "resume-csv",
    "resume-lines",
)


def file_content(rng: random.Random, kind: str, good: dict[str, Any]) -> bytes | str:
    """Hostile content for a file of ``kind``: bytes to write, or one of "fifo", "folder",
    "devzero", "huge" for something planted in its place."""
    roll = rng.random()
    if roll < 0.06:
        return rng.choice(["fifo", "folder", "devzero", "huge"])
    if roll < 0.3:
        return _raw_hostile(rng)
    base = good["resume" if kind.startswith("resume") else kind]
    document = _mutate(rng, base, rng.randrange(1, 4))
    if kind == "resume-csv":
        return _csv_of(rng, document)
    if kind == "resume-lines":
        rows = document.get("points") if isinstance(document, dict) else document
        rows = rows if isinstance(rows, list) else [rows]
        return b"\n".join(_dumps(r).replace(b"\n", b"") for r in rows) + b"\n"
    return _dumps(document)


def _csv_of(rng: random.Random, document: Any) -> bytes:
    """A results CSV as the app writes it, then spoiled: a cell 200,000 long, a formula, a NUL, a
    short or long row."""
    from explorer.bench.results import CSV_COLUMNS

    rows = document.get("points") if isinstance(document, dict) else None
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for row in rows if isinstance(rows, list) else [{}]:
        cells = [
            _dumps(row.get(c)).decode("utf-8", "replace").replace("\n", "")
            if isinstance(row, dict) and isinstance(row.get(c), dict)
            else ""
            if not isinstance(row, dict) or row.get(c) is None
            else str(row.get(c))
            for c in CSV_COLUMNS
        ]
        writer.writerow(cells)
    text = buffer.getvalue()
    spoil = rng.randrange(6)
    if spoil == 0:
        text = text.replace("n=16", "x" * 200_000, 1)
    elif spoil == 1:
        text = text.replace("cpu", '=HYPERLINK("x")', 1)
    elif spoil == 2:
        text = text.replace("matmul", "mat\x00mul", 1)
    elif spoil == 3:
        text += "a,b\n"
    elif spoil == 4:
        text = text.rstrip("\n") + ",extra\n"
    return text.encode("utf-8", errors="surrogatepass")


#: the limit each file is read with (a planted "huge" file is one byte over)
def size_limits() -> dict[str, int]:
    from explorer.bench.results import MAX_RESULTS_BYTES
    from explorer.lessons.files import MAX_LESSON_BYTES
    from explorer.prefs import MAX_SETTINGS_BYTES
    from explorer.remote.saved import MAX_REMOTES_BYTES
    from explorer.roofs.store import MAX_STORE_BYTES

    return {
        "settings": MAX_SETTINGS_BYTES,
        "results": MAX_RESULTS_BYTES,
        "ceilings": MAX_STORE_BYTES,
        "remotes": MAX_REMOTES_BYTES,
        "lesson": MAX_LESSON_BYTES,
        "resume-json": MAX_RESULTS_BYTES,
        "resume-csv": MAX_RESULTS_BYTES,
        "resume-lines": MAX_RESULTS_BYTES,
    }


def plant(path: Path, content: bytes | str, limit: int) -> None:
    """Put ``content`` (or the planted thing it names) at ``path``, whatever was there before."""
    clear(path)
    if content == "fifo":
        os.mkfifo(path)
    elif content == "folder":
        path.mkdir()
    elif content == "devzero":
        path.symlink_to("/dev/zero")
    elif content == "huge":
        with open(path, "wb") as fh:
            fh.truncate(limit + 1)  # sparse: over the limit without writing it
    else:
        assert isinstance(content, bytes)
        path.write_bytes(content)


def clear(path: Path) -> None:
    """Remove ``path`` and anything moved aside beside it."""
    for old in [path, *path.parent.glob(path.name + ".damaged-*")]:
        if old.is_dir() and not old.is_symlink():
            for inner in old.iterdir():
                inner.unlink()
            old.rmdir()
        elif os.path.lexists(old):
            old.unlink()


# --- running ----------------------------------------------------------------------------------------


@dataclass
class Outcome:
    code: int | None  # None: an exception escaped cli.main
    out: str
    err: str
    escaped: str = ""  # the traceback of an exception that escaped, if one did

    @property
    def problem(self) -> str:
        return printable(self._problem())

    def _problem(self) -> str:
        """'' when the call ended as a user may see it end: no traceback, an exit status of 0, 1 or
        2, and a refusal (status 2) in one line of at most 700 characters; else what was wrong."""
        if self.escaped:
            return "an exception escaped: " + self.escaped
        if self.code not in (0, 1, 2):
            return f"exit status {self.code}"
        if "Traceback" in self.out + self.err:
            return "a traceback was printed: " + (self.out + self.err)[-2000:]
        if self.code == 2:
            # beside the refusal, a damaged file the command read may have been named (once, in
            # one line of its own: statefile's notice); the refusal itself is one line
            said = [ln for ln in self.err.splitlines() if not _is_file_notice(ln)]
            if len(said) != 1 or not said[0].startswith("device-explorer: error: "):
                return f"a refusal not in one line: {self.err[:2000]!r}"
            if len(said[0]) > 700:
                return f"a refusal of {len(said[0])} characters"
        return ""


def _is_file_notice(line: str) -> bool:
    """A damaged file's one-line notice (explorer.statefile.load_json's words)."""
    return line.startswith("The ") and (" could not be used (" in line or " could not be read (" in line)


def call(argv: list[str], check_only: bool) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(argv, check_only=check_only)
    except BaseException:  # what escaped is the finding
        return Outcome(None, out.getvalue(), err.getvalue(), traceback.format_exc())
    return Outcome(code, out.getvalue(), err.getvalue())


def printable(text: str) -> str:
    """``text`` as a test report can carry it (xdist refuses a lone surrogate)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def never_raises(load: Callable[[], Any]) -> str:
    """Run a loader; '' when it returned (or raised its documented one-line error), else the traceback."""
    from explorer.errors import UserError

    try:
        load()
    except UserError as exc:
        return "" if "\n" not in str(exc) else printable(f"a UserError of more than one line: {exc!r}")
    except BaseException:  # what escaped is the finding
        return printable(traceback.format_exc())
    return ""
