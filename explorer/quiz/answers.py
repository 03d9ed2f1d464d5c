"""A class's answers, kept without any server: each student's app appends to a CSV in its own data
folder, and a teacher gathers many students' files from one folder (a shared drive, a USB stick, an
LMS download) into one histogram per question: what goes on the projector between the vote and the
discussion.

Every file in the gathered folder is someone else's: it is read no further than ``MAX_FILE_BYTES``,
never through a link, and a file that is not exactly what the app writes is skipped with one line
saying which and why, never half-counted.
"""

from __future__ import annotations

import csv
import getpass
import io
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from explorer.atomicwrite import write_atomic
from explorer.cleantext import clean_text
from explorer.errors import UserError
from explorer.outputs import output_lock, write_output
from explorer.quiz.model import Question, parse_id, parse_number
from explorer.statefile import Damaged, read_bounded
from explorer.userdirs import data_dir

ANSWERS_FILE = "quiz-answers.csv"
COLUMNS = ("student", "lesson", "step", "question_id", "answer", "confidence", "right", "time")
CONFIDENCES = ("sure", "think so", "guess", "not said")
MAX_FILE_BYTES = 1 << 20  # a term of answers is a few tens of KB
MAX_ROWS = 20_000
MAX_FILES = 5_000
MAX_FIELD = 200


@dataclass(frozen=True)
class AnswerRecord:
    """One answer a student gave: to which question, where, how sure, and whether it was right."""

    question_id: str
    answer: str
    confidence: str
    right: bool
    lesson: str = ""
    step: str = ""
    student: str = ""
    time: str = ""

    def row(self) -> list[str]:
        return [
            self.student,
            self.lesson,
            self.step,
            self.question_id,
            self.answer,
            self.confidence,
            "1" if self.right else "0",
            self.time,
        ]


def answers_path() -> Path:
    return data_dir() / ANSWERS_FILE


def _student() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name (a container): the file still says whose by its place
        return ""


def record(
    question: Question, answer: str, confidence: str, right: bool, lesson: str = "", step: str = ""
) -> Path:
    """Append one answer to this user's answers file (read, add, replace whole, under its lock)."""
    rec = AnswerRecord(
        question_id=question.id,
        answer=_clean(answer),
        confidence=confidence if confidence in CONFIDENCES else "not said",
        right=right,
        lesson=_clean(lesson),
        step=_clean(step),
        student=_clean(_student()),
        time=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    path = answers_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with output_lock(path):
        try:
            old = read_bounded(path, MAX_FILE_BYTES) or b""
        except Damaged:
            old = b""  # a file that is not ours any more: start again rather than lose this answer
        text = old.decode("utf-8", "replace")
        if not text.startswith(",".join(COLUMNS)):
            text = ""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        if not text:
            writer.writerow(COLUMNS)
        writer.writerow(rec.row())
        if len(text) + len(buf.getvalue()) > MAX_FILE_BYTES:  # keep the newest answers within the bound
            lines = text.splitlines(keepends=True)
            text = lines[0] + "".join(lines[len(lines) // 2 :]) if lines else ""
        write_atomic(path, (text + buf.getvalue()).encode("utf-8"))
    return path


def export(out: str) -> Path:
    """This user's answers file copied to ``out`` (what a student hands in)."""
    try:
        data = read_bounded(answers_path(), MAX_FILE_BYTES)
    except (Damaged, OSError) as exc:
        raise UserError(f"cannot read your answers at {answers_path()}: {exc}") from None
    if data is None:
        raise UserError(f"no answers yet: {answers_path()} does not exist (answer a quiz first)")
    return write_output(out, data, "the answers")


def _clean(text: str) -> str:
    """A field as kept: the app's one cleaning of outside text, one line, at most ``MAX_FIELD``."""
    return clean_text(str(text))[:MAX_FIELD]


# --- gathering -----------------------------------------------------------------------------------


@dataclass
class QuestionTally:
    """Every student's last answer to one question."""

    question_id: str
    answers: Counter[str] = field(default_factory=Counter)
    confidence: Counter[str] = field(default_factory=Counter)
    right: int = 0

    @property
    def total(self) -> int:
        return sum(self.answers.values())

    @property
    def share_right(self) -> float:
        return self.right / self.total if self.total else 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "question_id": self.question_id,
            "total": self.total,
            "right": self.right,
            "share_right": self.share_right,
            "answers": dict(self.answers.most_common()),
            "confidence": {c: self.confidence[c] for c in CONFIDENCES if self.confidence[c]},
        }


@dataclass
class Gathered:
    files: int = 0  # files counted
    skipped: list[str] = field(default_factory=list)  # one line per file left out
    questions: dict[str, QuestionTally] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "files": self.files,
            "skipped": list(self.skipped),
            "questions": [t.to_dict() for t in self.questions.values()],
        }


class _BadFile(Exception):
    pass


def _number_key(text: str) -> str:
    """Answers that mean the same number count together ("50", "50.0", "50%"), read as grading
    reads them."""
    value = parse_number(text)
    return text.strip().lower() if value is None else f"{value:g}"


def _rows(path: Path) -> list[dict[str, str]]:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        raise _BadFile("it is a link; only the files themselves are read")
    if not stat.S_ISREG(info.st_mode):
        raise _BadFile("it is not a regular file")
    try:
        data = read_bounded(path, MAX_FILE_BYTES)
    except Damaged as exc:
        raise _BadFile(str(exc)) from None
    except OSError as exc:
        raise _BadFile(f"it cannot be read: {exc.strerror or exc}") from None
    if data is None:
        raise _BadFile("it went away while it was read")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _BadFile("it is not UTF-8 text") from None
    if "\x00" in text:
        raise _BadFile("it holds NUL bytes: not a CSV file")
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader, None)
        if header is None or tuple(header) != COLUMNS:
            raise _BadFile(f"its first line is not the answers header ({','.join(COLUMNS)})")
        rows: list[dict[str, str]] = []
        for n, raw in enumerate(reader, 2):
            if len(rows) >= MAX_ROWS:
                raise _BadFile(f"it has more than {MAX_ROWS:,} answers")
            if len(raw) != len(COLUMNS) or any(len(v) > MAX_FIELD for v in raw):
                raise _BadFile(f"line {n} is not one answer of {len(COLUMNS)} short fields")
            row = dict(zip(COLUMNS, raw, strict=True))
            if row["right"] not in ("0", "1") or row["confidence"] not in CONFIDENCES:
                raise _BadFile(f"line {n} has a right/confidence field the app never writes")
            try:
                parse_id(row["question_id"])
            except UserError:
                raise _BadFile(f"line {n} has no question id the app makes") from None
            rows.append(row)
    except csv.Error as exc:
        raise _BadFile(f"it is not a CSV file ({exc})") from None
    return rows


def gather(folder: str | os.PathLike[str]) -> Gathered:
    """Tally the answers files in ``folder`` (``*.csv``, not in sub-folders): each file is one
    student, whose last answer to a question counts; a damaged or hostile file is skipped and named."""
    root = Path(folder).expanduser()
    try:
        entries = sorted(
            (e for e in os.scandir(root) if e.name.lower().endswith(".csv")), key=lambda e: e.name
        )
    except FileNotFoundError:
        raise UserError(f"no folder {str(root)[:200]!r} to gather answers from") from None
    except NotADirectoryError:
        raise UserError(
            f"{str(root)[:200]!r} is a file; give the folder that holds the students' answers"
        ) from None
    except OSError as exc:
        raise UserError(f"cannot list {str(root)[:200]!r}: {exc.strerror or exc}") from None
    out = Gathered()
    if len(entries) > MAX_FILES:
        out.skipped.append(f"{len(entries) - MAX_FILES:,} files past the first {MAX_FILES:,} were not read")
        entries = entries[:MAX_FILES]
    for entry in entries:
        shown = _clean(entry.name)[:80]
        try:
            rows = _rows(Path(entry.path))
        except _BadFile as exc:
            out.skipped.append(f"{shown}: skipped: {exc}")
            continue
        except OSError as exc:
            out.skipped.append(f"{shown}: skipped: {exc.strerror or exc}")
            continue
        out.files += 1
        last: dict[str, dict[str, str]] = {}
        for row in rows:  # in the order written: a later answer to the same question replaces an earlier
            last[row["question_id"]] = row
        for qid, row in last.items():
            tally = out.questions.setdefault(qid, QuestionTally(qid))
            tally.answers[_number_key(row["answer"])] += 1
            tally.confidence[row["confidence"]] += 1
            tally.right += row["right"] == "1"
    return out


def tally_lines(g: Gathered, width: int = 30) -> list[str]:
    """The gathered answers as text: per question, each answer's bar and count, then confidence."""
    lines = [
        f"{g.files} answer file{'s' if g.files != 1 else ''} read"
        + (f", {len(g.skipped)} skipped" if g.skipped else "")
    ]
    lines += [f"  {s}" for s in g.skipped]
    for t in g.questions.values():
        lines.append("")
        lines.append(
            f"{t.question_id}: {t.total} answer{'s' if t.total != 1 else ''}, {t.right} right ({t.share_right:.0%})"
        )
        most = max(t.answers.values(), default=1)
        for answer, n in t.answers.most_common():
            bar = "#" * max(1, round(width * n / most))
            lines.append(f"  {answer[:24]:>24} {bar} {n}")
        sure = ", ".join(f"{c} {t.confidence[c]}" for c in CONFIDENCES if t.confidence[c])
        lines.append(f"  confidence: {sure}")
    return lines
