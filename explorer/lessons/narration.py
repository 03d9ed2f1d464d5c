"""What a lesson step says, and how it is written: plain text with three small marks.

Lesson narration used to be Markdown, and Markdown eats stars: ``x = 10*32+5 = 325`` showed on a
projector as an italic "x = 1032+5 = 325", a wrong number in front of a class. So narration is
plain text, shown exactly as typed, with only these marks (docs/lesson-format.md):

* a blank line starts a new paragraph; the lines of a paragraph are joined with a space, so a long
  one can be written over several lines (or several strings of the step's list);
* a line that starts with ``- `` is an item of a bulleted list (the lines under it, up to a blank
  line or the next ``- ``, continue it);
* ``**words**`` is bold, and a pair of backticks shows what is between them as code, in a fixed
  font and exactly as typed (``i = blockIdx.x * blockDim.x + threadIdx.x``);
* a web address (``https://...``) becomes a link.

Nothing else is markup: a single ``*`` (``10*32``), ``_``, ``#``, ``<``, ``&``, ``[`` and a ``\\``
are characters like any other. A ``**`` or a backtick left open is shown as typed, and
``device-explorer lessons --check FILE`` names it, as it names ``*word*`` written for Markdown's
italics (shown here as typed). Qt-free: the check runs without a window.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape

#: the format's name, as the docs and ``lessons --check`` call it
FORMAT = "plain text with **bold**, `code`, - lists and links"

_URL = re.compile(r"https?://[^\s<>\"'`]+[^\s<>\"'`.,;:!?)\]]")
#: Markdown's single-star emphasis, as a lesson written for Markdown has it: a star against a
#: word's first letter and another against its last, with no letter or digit outside either
_MARKDOWN_ITALIC = re.compile(r"(?<![\w*])\*(?=[A-Za-z])[^*\n]*?[A-Za-z.!?)]\*(?![\w*])")


@dataclass(frozen=True)
class Run:
    """A stretch of a paragraph: plain words, bold words, code, or a link."""

    kind: str  # "text", "bold", "code" or "link"
    text: str


@dataclass(frozen=True)
class Block:
    """A paragraph, or one item of a bulleted list."""

    kind: str  # "paragraph" or "item"
    runs: tuple[Run, ...]
    line: int  # the 1-based line of the narration it starts on

    @property
    def plain(self) -> str:
        return "".join(r.text for r in self.runs)


@dataclass(frozen=True)
class Problem:
    line: int  # 1-based line of the narration
    text: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.text}"


def blocks(narration: str) -> list[Block]:
    """The narration's paragraphs and list items, each as runs of plain, bold, code and link."""
    return [Block(kind, tuple(_runs(text)), line) for kind, text, line in _blocks(narration)]


def _blocks(narration: str) -> list[tuple[str, str, int]]:
    """(kind, text, first line) of each paragraph and list item, its lines joined with spaces."""
    return [
        (kind, " ".join(text for text, _n in lines), lines[0][1]) for kind, lines in _block_lines(narration)
    ]


def _block_lines(narration: str) -> list[tuple[str, list[tuple[str, int]]]]:
    """Each block's kind and its lines as (text, 1-based line number)."""
    out: list[tuple[str, list[tuple[str, int]]]] = []
    current: list[tuple[str, int]] | None = None
    for number, raw in enumerate(narration.splitlines(), start=1):
        line = raw.strip()
        if not line:
            current = None
            continue
        if line.startswith("- "):
            current = [(line[2:].strip(), number)]
            out.append(("item", current))
        elif current is None:
            current = [(line, number)]
            out.append(("paragraph", current))
        else:
            current.append((line, number))
    return out


def _opens_bold(text: str, at: int) -> bool:
    """A ``**`` at ``at`` can open bold: not glued to a letter or digit before it (``x**2`` is a
    power, not bold) and followed by a word, not a space."""
    before = text[at - 1] if at > 0 else " "
    after = text[at + 2] if at + 2 < len(text) else " "
    return not before.isalnum() and not after.isspace() and after != "*"


def _closes_bold(text: str, at: int) -> bool:
    """A ``**`` at ``at`` can close bold: after a word, and not glued to a letter or digit."""
    before = text[at - 1] if at > 0 else " "
    after = text[at + 2] if at + 2 < len(text) else " "
    return not before.isspace() and before != "*" and not after.isalnum()


def _code_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each pair of backticks, left to right; a last one left open is none."""
    spans = []
    i = 0
    while (start := text.find("`", i)) >= 0 and (end := text.find("`", start + 1)) >= 0:
        spans.append((start, end + 1))
        i = end + 1
    return spans


def _pairs(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each closed mark: code first (nothing inside it is a mark), then
    bold in what is left, left to right; an opener with no partner stays a character."""
    code = _code_spans(text)

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in code)

    bold: list[tuple[int, int, str]] = []
    i = 0
    while (start := text.find("**", i)) >= 0:
        if not (free(start, start + 2) and _opens_bold(text, start)):
            i = start + 1
            continue
        end = text.find("**", start + 2)
        while end >= 0 and not (free(start, end + 2) and _closes_bold(text, end)):
            end = text.find("**", end + 1)
        if end < 0:
            i = start + 2
            continue
        bold.append((start, end + 2, "bold"))
        i = end + 2
    return sorted([(s, e, "code") for s, e in code] + bold)


def _unclosed(text: str) -> list[tuple[int, str]]:
    """(where, what) of the marks of one paragraph left open: shown as typed, which is seldom
    what was meant."""
    found = []
    pairs = _pairs(text)
    taken = {i for s, e, _k in pairs for i in range(s, e)}
    tick = next((i for i, ch in enumerate(text) if ch == "`" and i not in taken), -1)
    if tick >= 0:
        found.append((tick, "a backtick (`) opens code that is never closed: it shows as typed"))
    i = 0
    while (at := text.find("**", i)) >= 0:
        if at not in taken and (_opens_bold(text, at) or _closes_bold(text, at)):
            words = (
                "a ** is never paired, so it shows as typed: bold needs one before the words and one after"
            )
            found.append((at, words))
            break
        i = at + 2
    return found


def _runs(text: str) -> list[Run]:
    out: list[Run] = []
    at = 0
    for start, end, kind in _pairs(text):
        if start > at:
            out += _links(text[at:start])
        inner = text[start + 1 : end - 1] if kind == "code" else text[start + 2 : end - 2]
        if kind == "bold":
            out += [Run("bold", r.text) if r.kind == "text" else r for r in _links(inner)]
        else:
            out.append(Run("code", inner))
        at = end
    if at < len(text):
        out += _links(text[at:])
    return out


def _links(text: str) -> list[Run]:
    out: list[Run] = []
    at = 0
    for m in _URL.finditer(text):
        if m.start() > at:
            out.append(Run("text", text[at : m.start()]))
        out.append(Run("link", m.group(0)))
        at = m.end()
    if at < len(text):
        out.append(Run("text", text[at:]))
    return out


def shown_text(narration: str) -> str:
    """The narration as a reader sees it, marks taken off: paragraphs on lines of their own,
    list items after a "• "."""
    return "\n".join(("• " if b.kind == "item" else "") + b.plain for b in blocks(narration))


def check(narration: str) -> list[Problem]:
    """What in a narration will not show as its writer meant, with the line it is on: a ``**``
    or a backtick left open (shown as typed), and Markdown's ``*italics*`` (shown with their
    stars)."""
    problems = []
    for _kind, lines in _block_lines(narration):
        text = " ".join(t for t, _n in lines)
        starts, at = [], 0
        for t, number in lines:
            starts.append((at, number))
            at += len(t) + 1

        def line_of(pos: int, starts: list[tuple[int, int]] = starts) -> int:
            return next(number for offset, number in reversed(starts) if offset <= pos)

        found = list(_unclosed(text))
        outside_code = text
        for s, e in reversed(_code_spans(text)):
            outside_code = outside_code[:s] + " " * (e - s) + outside_code[e:]
        for m in _MARKDOWN_ITALIC.finditer(outside_code.replace("**", "\0\0")):
            found.append(
                (
                    m.start(),
                    f"{m.group(0)!r} is Markdown's italics, which this format shows as typed "
                    "(stars and all): write **words** for bold, or leave the stars out",
                )
            )
        problems += [Problem(line_of(pos), words) for pos, words in sorted(found)]
    return problems


def to_html(narration: str, code_colour: str = "") -> str:
    """The narration as Qt rich text, every character escaped: what the lesson pane shows."""
    parts: list[str] = []
    in_list = False
    for block in blocks(narration):
        if block.kind == "item" and not in_list:
            parts.append("<ul>")
            in_list = True
        elif block.kind != "item" and in_list:
            parts.append("</ul>")
            in_list = False
        inner = "".join(_run_html(r, code_colour) for r in block.runs)
        parts.append(f"<li>{inner}</li>" if block.kind == "item" else f"<p>{inner}</p>")
    if in_list:
        parts.append("</ul>")
    return "".join(parts)


def _run_html(run: Run, code_colour: str) -> str:
    text = escape(run.text, quote=False)
    if run.kind == "bold":
        return f"<b>{text}</b>"
    if run.kind == "code":
        colour = f" color:{code_colour};" if code_colour else ""
        return f"<code style='white-space:pre-wrap;{colour}'>{text}</code>"
    if run.kind == "link":
        return f"<a href='{escape(run.text, quote=True)}'>{text}</a>"
    return text
