"""Every value a user types, read by one set of parsers: the CLI's options and the window's fields.

Why one module: the same number typed into ``--smem`` and into the visualizer must mean the same
thing and fail with the same sentence. Each parser accepts ASCII forms only (``str.isdigit`` says
yes to "²" and "٣", which ``int`` then refuses or misreads), bounds the text's length and the
value's magnitude before doing any arithmetic (a 5000-digit number or ``1e400`` is one line, not
an OverflowError or a second of CPU), never goes through ``float`` (sizes above 2**53 stay exact),
and answers bad input with one ``UserError`` line that names the value, shortened when long, and
the limit it broke. Qt-free and import-light: the CLI imports it before anything else.

Forms a whole number may take, everywhere (threads, registers, shared memory, grid and block
dimensions, problem and benchmark sizes):

- digits ``0``-``9``, optionally after a ``-`` (so a negative value gets a message about its sign
  rather than about its spelling): ``1024``, ``-1``;
- a power of ten: ``1e6``, ``2.5e3`` (the result must be whole: ``1.5`` and ``1e-3`` are refused);
- a binary suffix, K, M or G (x1024, x1024**2, x1024**3; case-insensitive; ``KB``, ``KiB`` and
  ``K`` all mean 1024 bytes, the convention GPU documents use for shared memory's "48 KB"):
  ``48K`` = 49152, ``1.5K`` = 1536; a bare ``B`` (bytes) is allowed: ``64B``.

Refused on purpose: hexadecimal (``0x10``), underscores (``1_000``: Python reads it, people do
not expect ``_1_`` to mean 1), unicode digits and anything around the number.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from explorer.errors import UserError

if TYPE_CHECKING:
    from pathlib import Path

#: the longest text read as one number; a longer one is refused before any arithmetic
MAX_NUMBER_CHARS = 30
#: the largest magnitude of any whole number (a signed 64-bit integer, what CUDA sizes fit in)
MAX_WHOLE = 2**63 - 1
#: the most sizes one list (``--sizes``, the Benchmarks sizes field) may hold
MAX_SIZES = 64
#: how many characters of a bad value an error message repeats
SHOWN_CHARS = 24
#: a compute capability's major and minor numbers have at most this many digits
_CC_RE = re.compile(r"([0-9]{1,2})\.([0-9]{1,2})", re.ASCII)
_NUMBER_RE = re.compile(
    r"(?P<sign>-)?(?P<int>[0-9]+)(?:\.(?P<frac>[0-9]+))?(?:[eE](?P<exp>[+-]?[0-9]+))?"
    r"(?:(?P<suffix>[kKmMgG])(?:[iI]?[bB])?|[bB])?",
    re.ASCII,
)
_SCALE = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
_HEX_RE = re.compile(r"(?<![0-9])0[xXbBoO][0-9a-fA-F]", re.ASCII)
_LIST_SEPARATORS = re.compile(r"[,;\s]+")
_DIM_SEPARATORS = re.compile(r"\s*[,xX×*]\s*|\s+")
_WINDOW_RE = re.compile(r"([0-9]+)\s*[xX×]\s*([0-9]+)", re.ASCII)
#: the window sizes ``screenshot --size`` renders (a 4K projector at most)
MIN_WINDOW = (640, 480)
MAX_WINDOW = (7680, 4320)
#: the longest cuda:N ordinal read (no machine has more GPUs than this)
MAX_CUDA_INDEX = 1023


class InputError(UserError):
    """One or more problems with what was typed; ``str()`` joins them with '; ' into one line."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))


def shown(text: object, limit: int = SHOWN_CHARS) -> str:
    """``text`` quoted for a message: control characters escaped, cut to ``limit`` characters
    with its length named, so a 5000-character value costs one short line."""
    s = str(text)
    if len(s) <= limit:
        return repr(s)
    return f"{s[:limit]!r}... ({len(s)} characters)"


def one_line(message: str, limit: int = 600) -> str:
    """``message`` as one printable line: newlines and other control characters escaped, and
    cut at ``limit`` characters (the bad values inside are already shortened by ``shown``)."""
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in message)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _not_whole(text: str, what: str) -> InputError:
    raw = text.strip()
    if not raw:
        return InputError(f"{what} is empty; it must be a whole number")
    if len(raw) > MAX_NUMBER_CHARS:
        return InputError(f"{what} is {shown(raw)}; a number has at most {MAX_NUMBER_CHARS} characters")
    if not raw.isascii():
        return InputError(f"{what} is {shown(raw)}; it must be a whole number written with the digits 0-9")
    if _HEX_RE.match(raw):
        return InputError(
            f"{what} is {shown(raw)}; it must be a whole number in decimal (hexadecimal is not read)"
        )
    return InputError(f"{what} is {shown(raw)}; it must be a whole number")


def parse_whole(
    text: object, what: str, *, minimum: int = -MAX_WHOLE, maximum: int = MAX_WHOLE, unit: str = ""
) -> int:
    """A whole number from what the user typed, in the forms the module docstring lists.

    ``what`` names the field in the message ("threads per block"); ``minimum`` and ``maximum``
    bound the value (each parser's caller knows its own limits; device limits are checked later,
    by the code that knows the device). ``unit`` follows the value in a range message (" bytes").
    Python ints pass through (bounds still apply); bools and floats are refused.
    """
    if isinstance(text, bool) or isinstance(text, float):
        raise InputError(f"{what} is {text!r}; it must be a whole number")
    if isinstance(text, int):
        value = text
        typed = str(text)
    else:
        typed = str(text).strip()
        m = _NUMBER_RE.fullmatch(typed) if len(typed) <= MAX_NUMBER_CHARS else None
        if m is None:
            raise _not_whole(str(text), what)
        value = _exact_value(m, typed, what, maximum)
    if value < minimum:
        raise InputError(f"{what} is {_value_text(typed, value)}{unit}; it must be at least {minimum}{unit}")
    if value > maximum:
        raise InputError(f"{what} is {_value_text(typed, value)}{unit}; it must be at most {maximum}{unit}")
    return value


def _value_text(typed: str, value: int) -> str:
    return str(value) if typed == str(value) else f"{typed} (= {value})"


def _exact_value(m: re.Match[str], typed: str, what: str, maximum: int) -> int:
    """The number ``m`` spells, in integer arithmetic only; exponents are bounded before use."""
    digits = m["int"] + (m["frac"] or "")
    mantissa = int(digits)
    shift = int(m["exp"] or 0) - len(m["frac"] or "")
    scale = _SCALE[(m["suffix"] or "").lower()]
    sign = -1 if m["sign"] else 1
    if mantissa == 0:
        return 0
    if shift > 40:  # at least 10**(41 - 30): beyond any bound we use; never compute 10**400
        limit = maximum if sign > 0 else MAX_WHOLE
        raise InputError(f"{what} is {shown(typed)}; it must be at most {limit}")
    if shift < -40:
        raise InputError(f"{what} is {shown(typed)}; it must be a whole number")
    if shift >= 0:
        return sign * mantissa * scale * 10**shift
    numerator, denominator = mantissa * scale, 10**-shift
    if numerator % denominator:
        raise InputError(f"{what} is {shown(typed)}; it must be a whole number")
    return sign * (numerator // denominator)


_FRACTION_RE = re.compile(r"(?:0|1)?(?:\.[0-9]{1,12})?|[01]", re.ASCII)


def parse_fraction(text: object, what: str) -> float:
    """A probability from 0 to 1 written as ``0.25``, ``.5``, ``1`` or ``0`` (ASCII, no exponent:
    a share typed by a person, not a computed value)."""
    typed = str(text).strip()
    if not typed or len(typed) > MAX_NUMBER_CHARS or not _FRACTION_RE.fullmatch(typed):
        raise InputError(
            f"{what} is {shown(typed) if typed else 'empty'}; it must be a number from 0 to 1 (e.g. 0.25)"
        )
    return float(typed)


_DECIMAL_RE = re.compile(r"(?P<num>[0-9]{1,15}(?:\.[0-9]{1,15})?|\.[0-9]{1,15})(?P<pct>%)?", re.ASCII)


def parse_decimal(
    text: object,
    what: str,
    *,
    minimum: float,
    maximum: float,
    above_minimum: bool = False,
    below_maximum: bool = False,
    percent: bool = False,
) -> float:
    """A decimal number a person types (``0.2``, ``1.5``, ``.5``; with ``percent``, also ``20%``
    for 0.2), ASCII digits only, no sign and no exponent, within ``minimum``..``maximum``
    (``above_minimum`` / ``below_maximum`` leave the bound itself out). Anything else is one
    ``InputError`` line naming the value and the range, never ``inf``, ``nan`` or a long number."""
    typed = str(text).strip()
    low = f"above {_plain(minimum)}" if above_minimum else f"at least {_plain(minimum)}"
    high = f"below {_plain(maximum)}" if below_maximum else f"at most {_plain(maximum)}"
    m = _DECIMAL_RE.fullmatch(typed) if len(typed) <= MAX_NUMBER_CHARS else None
    if m is None or (m["pct"] and not percent):
        example = "0.2 or 20%" if percent else "0.2 or 1.5"
        shown_text = shown(typed) if typed else "empty"
        raise InputError(
            f"{what} is {shown_text}; it must be a decimal number such as {example}, {low}, {high}"
        )
    value = float(m["num"]) / (100 if m["pct"] else 1)
    too_low = value <= minimum if above_minimum else value < minimum
    too_high = value >= maximum if below_maximum else value > maximum
    if too_low or too_high:
        raise InputError(f"{what} is {typed}; it must be {low} and {high}")
    return value


def _plain(x: float) -> str:
    """A bound as people write it: 1,000,000 rather than 1e+06, 0.5 rather than 0.500000."""
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def parse_sizes(text: str, size_name: str = "size", *, maximum: int = MAX_WHOLE) -> list[int]:
    """Sizes separated by commas, spaces or semicolons, in the order typed, repeats dropped.

    Each is a whole number of at least 1 in the shared forms (``64``, ``1e6``, ``4K``). The first
    bad entry is the one the message names, so the user knows which to fix.
    """
    entries = [e for e in _LIST_SEPARATORS.split(str(text).strip()) if e]
    if not entries:
        raise InputError(
            f"no sizes given; type at least one {size_name}, a whole number above 0, e.g. 64, 128, 256"
        )
    if len(entries) > MAX_SIZES:
        raise InputError(f"{len(entries)} sizes given; a run takes at most {MAX_SIZES}")
    return list(dict.fromkeys(parse_whole(e, size_name, minimum=1, maximum=maximum) for e in entries))


def parse_dims(text: str, what: str, *, maximum: int = MAX_WHOLE) -> tuple[int, ...]:
    """``X``, ``X,Y`` or ``X,Y,Z`` (also ``64x2``, ``(8, 8)``, ``16 16``): one to three whole numbers.

    Every bad axis is reported at once (``InputError.problems``); a bound-free lower limit lets
    the launch checks say "grid x is 0; it must be at least 1" with the device's words.
    """
    raw = str(text).strip()
    if len(raw) > 3 * MAX_NUMBER_CHARS + 10:
        raise InputError(
            f"{what} is {shown(raw)}; give X, X,Y or X,Y,Z (at most {MAX_NUMBER_CHARS} digits each)"
        )
    if _HEX_RE.search(raw):
        raise InputError(f"{what} is {shown(raw)}; write numbers in decimal (hexadecimal is not read)")
    inner = raw.strip("()[]").strip()
    if not inner:
        raise InputError(f"{what} is empty; give X, X,Y or X,Y,Z")
    parts = _DIM_SEPARATORS.split(inner)
    if not 1 <= len(parts) <= 3:
        raise InputError(f"{what} has {len(parts)} parts ({shown(raw)}); give X, X,Y or X,Y,Z")
    problems: list[str] = []
    values: list[int] = []
    for axis, part in zip("xyz", parts, strict=False):
        try:
            values.append(parse_whole(part, f"{what} {axis}", maximum=maximum))
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    return tuple(values)


def parse_cc(text: str) -> tuple[int, int]:
    """A compute capability ``X.Y`` (``7.5``, ``8.6``, ``12.0``) in ASCII digits; else one line."""
    raw = str(text).strip()
    if not raw:
        raise InputError("compute capability is empty; give it as X.Y (e.g. 7.5, 8.6, 12.0)")
    m = _CC_RE.fullmatch(raw)
    if m is None:
        raise InputError(f"compute capability {shown(raw)} is not of the form X.Y (e.g. 7.5, 8.6, 12.0)")
    return int(m[1]), int(m[2])


def parse_device_key(text: str) -> str:
    """``cpu`` or ``cuda:N`` normalised (``CUDA`` -> ``cuda:0``, ``cuda:01`` -> ``cuda:1``).

    Empty text is an error, not a quiet default: ``--device ''`` more likely lost a variable's
    value than meant the CPU. Whether cuda:N exists is checked where CUDA is loaded.
    """
    raw = str(text).strip()
    t = raw.lower()
    if not t:
        raise InputError("device is empty; give 'cpu', 'cuda:N' or a GPU's name")
    if t == "cpu":
        return "cpu"
    if t == "cuda":
        return "cuda:0"
    if t.startswith("cuda:"):
        index = parse_whole(t[5:], f"the GPU number in {shown(raw)}", minimum=0, maximum=MAX_CUDA_INDEX)
        return f"cuda:{index}"
    raise InputError(f"device {shown(raw)} is not 'cpu' or 'cuda:N'")


def is_device_key(text: str) -> bool:
    """Whether ``text`` is meant as a device key (``cpu``, ``cuda``, ``cuda:...``) rather than a name."""
    t = str(text).strip().lower()
    return t in ("cpu", "cuda") or t.startswith("cuda:")


def parse_window_size(text: str, what: str = "--size") -> tuple[int, int]:
    """``1280x800`` -> (1280, 800), within MIN_WINDOW..MAX_WINDOW; else one line naming the range."""
    raw = str(text).strip()
    limits = f"{MIN_WINDOW[0]}x{MIN_WINDOW[1]} to {MAX_WINDOW[0]}x{MAX_WINDOW[1]}"
    m = _WINDOW_RE.fullmatch(raw) if len(raw) <= 2 * MAX_NUMBER_CHARS else None
    if m is None:
        raise InputError(
            f"{what} is {shown(raw)}; it must look like 1280x800 (width x height in pixels, {limits})"
        )
    if len(m[1]) > 5 or len(m[2]) > 5:
        raise InputError(f"{what} {shown(raw)} is outside the supported range {limits}")
    width, height = int(m[1]), int(m[2])
    if not (MIN_WINDOW[0] <= width <= MAX_WINDOW[0] and MIN_WINDOW[1] <= height <= MAX_WINDOW[1]):
        raise InputError(f"{what} {width}x{height} is outside the supported range {limits}")
    return width, height


def parse_output_path(text: str, what: str = "--out", suffixes: tuple[str, ...] = ()) -> Path:
    """The file to write, checked before any work starts: ``~`` expanded, the folder present
    and writable (never created: a typo must not make folders), the name within the file
    system's limit, the suffix one of ``suffixes`` when given. One line for each failure."""
    from pathlib import Path  # here, not above: the CLI imports this module for every command

    from explorer.atomicwrite import UnsafeTarget, writable_target

    raw = str(text)
    if not raw.strip():
        raise InputError(f"{what} is empty; name the file to write")
    if "\0" in raw:
        raise InputError(f"{what} {shown(raw)} contains a NUL character, which no file name may hold")
    expanded = os.path.expanduser(raw)
    if expanded.startswith("~"):
        user = raw[1:].split("/", 1)[0]
        raise InputError(f"{what} {shown(raw)}: there is no user {shown(user)} whose home '~' could mean")
    path = Path(expanded)
    if suffixes and path.suffix.lower() not in suffixes:
        raise InputError(f"{what} must name a {' or '.join(suffixes)} file; got {shown(raw)}")
    folder = path.parent if str(path.parent) else Path(".")
    name_max = _name_max(folder)
    for part in path.parts:
        size = len(os.fsencode(part))
        if size > name_max:
            raise InputError(
                f"{what}: the name {shown(part)} is {size} bytes long; this file system allows at most {name_max}"
            )
    if len(os.fsencode(expanded)) > 4095:
        raise InputError(
            f"{what} {shown(raw)} is {len(os.fsencode(expanded))} bytes long; paths are at most 4095"
        )
    try:
        if not folder.is_dir():
            raise InputError(
                f"cannot write {shown(raw, 80)}: the folder {shown(str(folder), 80)} does not exist"
            )
        if path.is_dir():
            raise InputError(f"cannot write {shown(raw, 80)}: it is a folder")
        if path.exists() and not path.is_file():  # replacing /dev/null or a pipe is never meant
            raise InputError(f"cannot write {shown(raw, 80)}: it is a device or a pipe, not a file")
    except OSError as exc:  # a path component that is a file, a loop of links ...
        raise InputError(f"cannot write {shown(raw, 80)}: {exc.strerror or exc}") from None
    if not os.access(folder, os.W_OK):
        raise InputError(
            f"cannot write {shown(raw, 80)}: the folder {shown(str(folder), 80)} is not writable"
        )
    try:  # another user's link or file: refused now, before any work (and again when writing)
        writable_target(path)
    except UnsafeTarget as exc:
        raise InputError(f"cannot write {shown(raw, 80)}: {exc.strerror}") from None
    return path


def _name_max(folder: Path) -> int:
    """The longest file name (in bytes) the file system holding ``folder`` allows; 255 if unknown."""
    try:
        return int(os.pathconf(folder if folder.is_dir() else ".", "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return 255
