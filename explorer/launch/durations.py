"""How long each block of a launch runs, for the dispatch-in-time model (``explorer.launch.dispatch``).

The wave picture assumes every block takes the same time. Real kernels rarely do: a Mandelbrot
row near the set's edge iterates far longer than one outside it, a sparse row may be empty, a
clock or a cache miss stretches one block and not its neighbour. A ``DurationSpec`` names how the
durations are chosen, as the CLI spells it (``--durations``):

* ``uniform``: every block takes 1 (the wave picture, exactly);
* ``jitter:P``: each block takes 1 +- P, uniformly at random (``jitter:0.2`` or ``jitter:20%``);
* ``heavy:ALPHA``: Pareto-distributed with shape ALPHA > 1, scaled to mean 1: most blocks are a
  little shorter than average and a few are many times longer (the smaller ALPHA, the heavier);
* ``rows:W1,W2,...``: work that varies by block row (``blockIdx.y``; a one-row grid by ``blockIdx.x``),
  the weights stretched over the rows in order; ``rows:mandelbrot`` takes the weights from the
  escape-time iterations of a Mandelbrot image's rows, computed here;
* ``file:PATH``: one positive number per block, in block order (x fastest), separated by spaces,
  commas or new lines; ``#`` starts a comment.

Durations are returned in their own units (``raw``) and a ``unit``, the mean block: the dispatch
runs on the raw numbers (whole numbers stay whole, so blocks of equal length end at exactly the
same moment) and reports in units of the mean block (for ``jitter`` and ``heavy`` the distribution's mean, 1), so
``uniform`` gives makespan = waves and every other kind does, on average, the same work.

Qt-free; numpy only.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from explorer.inputs import InputError, parse_decimal, shown
from explorer.launch.config import Dim3

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

DURATION_KINDS = ("uniform", "jitter", "heavy", "rows", "file")
DURATION_FORMS = "uniform, jitter:P, heavy:ALPHA, rows:W1,W2,... (or rows:mandelbrot) or file:PATH"
#: the most weights ``rows:`` takes (more than any grid's rows needs to be told apart on screen)
MAX_ROW_WEIGHTS = 4096
#: the largest weight relative to the smallest one: beyond this one row is all the work there is
MAX_WEIGHT = 1e6
#: Pareto shapes ``heavy:`` takes: at 1 or below the mean is infinite; past 100 it is uniform in all but name
HEAVY_ALPHA_RANGE = (1.0, 100.0)
#: the most of a durations file read (about ten numbers of 6 characters per block at the block
#: limit); reading stops sooner, once the grid's blocks have their numbers and one more is seen
MAX_FILE_BYTES = 64 * 1024 * 1024
#: the Mandelbrot image ``rows:mandelbrot`` measures: the usual view, iterations per pixel at most this
MANDELBROT_VIEW = (-2.5, 1.0, -1.25, 1.25)
MANDELBROT_MAX_ITER = 256
MANDELBROT_COLUMNS = 256
MANDELBROT_MAX_ROWS = 256  # rows sampled; a taller grid takes each of its rows from the nearest sample

_NUMBER_FILE_RE = re.compile(rb"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]{1,3})?|\.[0-9]+(?:[eE][+-]?[0-9]{1,3})?")
_FILE_SEPARATORS = re.compile(rb"[\s,;]+")


@dataclass(frozen=True)
class DurationSpec:
    """How block durations are chosen; ``text`` is how the user wrote it (for reports)."""

    kind: str
    text: str
    value: float = 0.0  # P of jitter, ALPHA of heavy
    weights: tuple[float, ...] = ()  # rows
    path: str = ""  # file
    preset: str = ""  # rows: "mandelbrot" when the weights were computed here
    file_values: tuple[float, ...] = field(default=(), repr=False, compare=False)

    @property
    def describe(self) -> str:
        """In words, for the text report and the view's heading."""
        if self.kind == "uniform":
            return "every block takes the same time"
        if self.kind == "jitter":
            return f"each block takes 1 +- {self.value:g} (uniform at random)"
        if self.kind == "heavy":
            return f"heavy-tailed: Pareto with shape {self.value:g}, mean 1"
        if self.kind == "rows":
            if self.preset:
                return f"by block row, from a {self.preset} image's work per row"
            return f"by block row: weights {', '.join(f'{w:g}' for w in self.weights[:8])}" + (
                ", ..." if len(self.weights) > 8 else ""
            )
        return f"read from {self.path}"

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "text": self.text, "describe": self.describe}


def parse_durations(text: object) -> DurationSpec:
    """``--durations`` text -> DurationSpec; bad text is one InputError line naming it and the forms."""
    raw = str(text if text is not None else "").strip()
    if not raw:
        raise InputError(f"--durations is empty; give {DURATION_FORMS}")
    kind, sep, value = raw.partition(":")
    kind = kind.strip().lower()
    if kind not in DURATION_KINDS:
        raise InputError(f"--durations {shown(raw)} is not one of {DURATION_FORMS}")
    if kind == "uniform":
        if sep:
            raise InputError(f"--durations {shown(raw)}: uniform takes no value; give just 'uniform'")
        return DurationSpec("uniform", raw)
    if not sep or not value.strip():
        form = {"jitter": "jitter:P", "heavy": "heavy:ALPHA", "rows": "rows:W1,W2,...", "file": "file:PATH"}
        raise InputError(f"--durations {shown(raw)} needs a value: {form[kind]}")
    if kind == "jitter":
        p = parse_decimal(
            value,
            "P of jitter:P (each block takes 1 +- P)",
            minimum=0,
            maximum=1,
            below_maximum=True,
            percent=True,
        )
        return DurationSpec("jitter", raw, value=p)
    if kind == "heavy":
        alpha = parse_decimal(
            value,
            "ALPHA of heavy:ALPHA (the Pareto shape; at 1 or below the mean is infinite)",
            minimum=HEAVY_ALPHA_RANGE[0],
            maximum=HEAVY_ALPHA_RANGE[1],
            above_minimum=True,
        )
        return DurationSpec("heavy", raw, value=alpha)
    if kind == "rows":
        return _parse_rows(value.strip(), raw)
    return _read_file(value.strip(), raw)


def _parse_rows(value: str, raw: str) -> DurationSpec:
    if value.lower() == "mandelbrot":
        return DurationSpec("rows", raw, preset="mandelbrot")
    parts = [p for p in re.split(r"[,;\s]+", value) if p]
    if len(parts) > MAX_ROW_WEIGHTS:
        raise InputError(f"rows: has {len(parts)} weights; it takes at most {MAX_ROW_WEIGHTS}")
    weights = tuple(
        parse_decimal(p, f"weight {i + 1} of rows:", minimum=0, maximum=MAX_WEIGHT, above_minimum=True)
        for i, p in enumerate(parts)
    )
    if not weights:
        raise InputError("rows: has no weights; give one or more, e.g. rows:1,4,1 or rows:mandelbrot")
    return DurationSpec("rows", raw, weights=weights)


def _read_file(path_text: str, raw: str) -> DurationSpec:
    """A file the user can read; its numbers are read later, when the grid's block count is known
    (``read_file_values``), and no further than that count needs."""
    where = shown(path_text, 80)
    try:
        path = Path(path_text).expanduser()  # "~nosuchuser/x": RuntimeError
        if not path.is_file():
            path.stat()  # a missing file or folder: its own reason
            raise InputError(f"durations file {where} is not a file")
        with path.open("rb"):
            pass
    except InputError:
        raise
    except (OSError, ValueError, RuntimeError) as exc:  # ValueError: a NUL in the name
        reason = getattr(exc, "strerror", None) or str(exc)
        raise InputError(f"cannot read the durations file {where}: {reason}") from None
    return DurationSpec("file", raw, path=str(path))


def read_file_values(spec: DurationSpec, blocks: int) -> DurationSpec:
    """``spec`` with its file's numbers: one per block of a ``blocks``-block grid, checked. The
    file is streamed and read no further than ``blocks`` + 1 numbers (the one more says the file
    holds too many), so a huge file for a small grid costs one chunk."""
    if spec.kind != "file":
        return spec
    where = f"durations file {shown(spec.path, 80)}"
    try:
        with Path(spec.path).open("rb") as fh:
            values = _stream_numbers(fh, where, blocks + 1)
    except InputError:
        raise
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise InputError(f"cannot read the {where}: {reason}") from None
    if len(values) != blocks:
        held = f"more than {blocks:,}" if len(values) > blocks else f"{len(values):,}"
        raise InputError(
            f"{where} has {held} numbers; the grid has {blocks:,} blocks and needs one per block"
        )
    return replace(spec, file_values=tuple(values))


def parse_duration_numbers(data: bytes, where: str) -> list[float]:
    """Positive finite decimals separated by spaces, commas, semicolons or new lines; ``#`` comments.

    The first bad entry is named with its position, so the user can find it."""
    return _stream_numbers(io.BytesIO(data), where, None)


#: bytes read at a time from a durations file
READ_CHUNK = 64 * 1024
_CLOSED_COMMENT = re.compile(rb"#[^\n]*\n")


def _tokens(fh: BinaryIO, where: str) -> Iterator[bytes]:
    """The file's entries in order, read a chunk at a time; MAX_FILE_BYTES read is the end of what
    is read (an InputError when more entries are still wanted)."""
    carry, in_comment, read = b"", False, 0
    while True:
        chunk = fh.read(READ_CHUNK)
        read += len(chunk)
        if read > MAX_FILE_BYTES:
            raise InputError(
                f"{where} goes on past {MAX_FILE_BYTES:,} bytes before the numbers the grid needs end"
            )
        if not chunk:
            if carry:
                yield carry
            return
        if in_comment:  # a comment from the last chunk runs to the first new line
            newline = chunk.find(b"\n")
            if newline < 0:
                continue
            chunk, in_comment = chunk[newline:], False
        body = _CLOSED_COMMENT.sub(b"\n", carry + chunk)
        hash_at = body.find(b"#")  # a comment this chunk does not close
        if hash_at >= 0:
            body, in_comment = body[:hash_at] + b" ", True
        parts = _FILE_SEPARATORS.split(body)
        carry = parts.pop()  # "" after a separator, else an entry the next chunk may go on with
        yield from (t for t in parts if t)
        if len(carry) > MAX_NUMBER_TOKEN:  # too long to be a number whatever follows: named now
            yield carry
            carry = b""


def _stream_numbers(fh: BinaryIO, where: str, want: int | None) -> list[float]:
    """At most ``want`` numbers (None: all) from ``fh``, each checked as it is read."""
    values: list[float] = []
    for i, token in enumerate(_tokens(fh, where)):
        if len(token) > MAX_NUMBER_TOKEN or not _NUMBER_FILE_RE.fullmatch(token):
            text = token[:40].decode("ascii", "backslashreplace")
            raise InputError(
                f"{where}: entry {i + 1} is {shown(text)}; each must be a positive decimal number"
            )
        value = float(token)
        if not (value > 0 and math.isfinite(value)):
            raise InputError(
                f"{where}: entry {i + 1} is {token.decode()}; each must be above 0 and below 1e300"
            )
        values.append(value)
        if want is not None and len(values) >= want:
            break
    if not values:
        raise InputError(f"{where} holds no numbers; give one positive number per block")
    return values


#: the longest number in a durations file, in characters
MAX_NUMBER_TOKEN = 40


def grid_rows(grid: Dim3) -> int:
    """The rows ``rows:`` weights are spread over: blockIdx.y (and z) rows, or a 1-D grid's blocks."""
    rows = grid.y * grid.z
    return rows if rows > 1 else grid.x


def block_durations(spec: DurationSpec, grid: Dim3, seed: int = 0) -> tuple[np.ndarray, float]:
    """(raw durations per block in block order, the unit they are reported in: their mean).

    ``seed`` makes jitter and heavy reproducible: the same seed gives the same launch."""
    import numpy as np

    blocks = grid.count
    if spec.kind == "uniform":
        return np.ones(blocks), 1.0
    if spec.kind == "jitter":
        rng = np.random.default_rng(seed)
        return 1.0 + spec.value * (2.0 * rng.random(blocks) - 1.0), 1.0
    if spec.kind == "heavy":
        rng = np.random.default_rng(seed)
        alpha = spec.value
        # numpy's pareto() is Lomax (Pareto II): 1 + it is Pareto with x_min 1 and mean alpha / (alpha - 1)
        return (1.0 + rng.pareto(alpha, blocks)) * ((alpha - 1.0) / alpha), 1.0
    if spec.kind == "rows":
        rows = grid_rows(grid)
        # at most MANDELBROT_MAX_ROWS samples of the image, stretched over the rows like typed weights
        weights = np.asarray(
            mandelbrot_row_work(min(rows, MANDELBROT_MAX_ROWS)) if spec.preset else spec.weights, float
        )
        row_of_block = (
            np.arange(blocks, dtype=np.int64) // grid.x if grid.y * grid.z > 1 else np.arange(blocks)
        )
        values = weights[(row_of_block * len(weights)) // rows]
        return values, float(values.mean())
    if len(spec.file_values) != blocks:  # not read yet, or read for another grid
        spec = read_file_values(spec, blocks)
    values = np.asarray(spec.file_values, float)
    return values, float(values.mean())


@lru_cache(maxsize=8)
def mandelbrot_row_work(rows: int) -> tuple[float, ...]:
    """Per image row, the mean escape-time iterations of its pixels (at most MANDELBROT_MAX_ITER):
    the work a Mandelbrot kernel does for the row (``block_durations`` asks for at most
    MANDELBROT_MAX_ROWS rows and stretches them over a taller grid)."""
    import numpy as np

    if not 1 <= rows <= MANDELBROT_MAX_ROWS:
        raise ValueError(f"rows must be from 1 to {MANDELBROT_MAX_ROWS}; got {rows}")
    x0, x1, y0, y1 = MANDELBROT_VIEW
    samples = rows
    ys = y0 + (np.arange(samples) + 0.5) * (y1 - y0) / samples
    xs = x0 + (np.arange(MANDELBROT_COLUMNS) + 0.5) * (x1 - x0) / MANDELBROT_COLUMNS
    c = xs[None, :] + 1j * ys[:, None]
    z = np.zeros_like(c)
    iters = np.zeros(c.shape, dtype=np.int32)
    alive = np.ones(c.shape, dtype=bool)
    for _ in range(MANDELBROT_MAX_ITER):
        z[alive] = z[alive] * z[alive] + c[alive]
        alive &= np.abs(z) <= 2.0
        iters += alive
    work = (iters + 1).mean(axis=1)  # every pixel costs at least one iteration
    return tuple(float(w) for w in work)
