"""A small reader of a PDF's page tree, enough to check a handout without poppler: the pages in
order, each page's size in points and the image XObjects it draws.

It reads the object dictionaries as text (Qt's QPdfWriter writes PDF 1.4: no object streams, no
cross-reference streams), following ``/Pages`` ``/Kids`` from the catalog, so a page is counted
once and in order, and ``/Resources`` and ``/XObject`` whether inline or by reference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_OBJECT = re.compile(rb"(\d+)\s+0\s+obj\s*(.*?)\s*(?:stream\r?\n|endobj)", re.S)
_REF = re.compile(rb"(\d+)\s+0\s+R")


@dataclass(frozen=True)
class Page:
    width_pt: float
    height_pt: float
    images: tuple[tuple[int, int], ...]  # (width, height) in pixels of each image drawn


def _objects(data: bytes) -> dict[int, bytes]:
    return {int(m.group(1)): m.group(2) for m in _OBJECT.finditer(data)}


def _value(body: bytes, key: bytes) -> bytes | None:
    """The value of ``/key`` in a dictionary: a reference, an array or a nested dictionary."""
    m = re.search(rb"/" + key + rb"\b\s*", body)
    if m is None:
        return None
    rest = body[m.end() :]
    if rest.startswith(b"<<"):
        depth, i = 0, 0
        while i < len(rest):
            if rest.startswith(b"<<", i):
                depth, i = depth + 1, i + 2
            elif rest.startswith(b">>", i):
                depth, i = depth - 1, i + 2
                if depth == 0:
                    return rest[:i]
            else:
                i += 1
        raise ValueError(f"unclosed dictionary after /{key.decode()}")
    if rest.startswith(b"["):
        return rest[: rest.index(b"]") + 1]
    ref = _REF.match(rest)
    if ref is not None:
        return ref.group(0)
    return re.match(rb"[^/\s>]+", rest).group(0)  # type: ignore[union-attr]


def _resolve(objects: dict[int, bytes], value: bytes | None) -> bytes | None:
    ref = _REF.fullmatch(value.strip()) if value is not None else None
    return objects[int(ref.group(1))] if ref is not None else value


def pages(path: str | Path) -> list[Page]:
    data = Path(path).read_bytes()
    assert data.startswith(b"%PDF-"), "not a PDF"
    objects = _objects(data)
    catalog = next(body for body in objects.values() if re.search(rb"/Type\s*/Catalog\b", body))
    out: list[Page] = []

    def walk(node: bytes, box: bytes | None) -> None:
        box = _value(node, b"MediaBox") or box
        if re.search(rb"/Type\s*/Pages\b", node):
            kids = _value(node, b"Kids") or b"[]"
            for ref in _REF.finditer(kids):
                walk(objects[int(ref.group(1))], box)
            return
        assert box is not None, "a page without a MediaBox"
        x0, y0, x1, y1 = (float(v) for v in box.strip(b"[]").split())
        resources = _resolve(objects, _value(node, b"Resources")) or b""
        xobjects = _resolve(objects, _value(resources, b"XObject")) or b""
        images = []
        for ref in _REF.finditer(xobjects):
            body = objects[int(ref.group(1))]
            if re.search(rb"/Subtype\s*/Image\b", body):
                width = int(_value(body, b"Width") or b"0")
                height = int(_value(body, b"Height") or b"0")
                images.append((width, height))
        out.append(Page(x1 - x0, y1 - y0, tuple(images)))

    root = _resolve(objects, _value(catalog, b"Pages"))
    assert root is not None, "a catalog without pages"
    walk(root, None)
    return out
