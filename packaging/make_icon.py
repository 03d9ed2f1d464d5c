"""Draw the application icon and write it in every size the platforms ask for.

The icon is a GPU die seen from above: a grid of streaming multiprocessors, some lit (the blocks
resident on them), with pins on the sides. It is drawn with QPainter at each size (not scaled down
from one bitmap) so the 16-pixel version stays crisp. Run from the repository root:

    QT_QPA_PLATFORM=offscreen python packaging/make_icon.py

It writes resources/icons/device-explorer-{16..512}.png, device-explorer.png (256) and a
multi-size device-explorer.ico (PNG-compressed entries, read by Windows Vista and later) and
device-explorer.icns for macOS bundles.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter, QPainterPath, QPen

PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)  # ICO entries stop at 256

BACKGROUND = QColor("#1f2937")
DIE = QColor("#374151")
PIN = QColor("#9ca3af")
SM_IDLE = QColor("#4b5563")
SM_LIT = QColor("#76b900")  # the green NVIDIA uses; reads as "busy" on a dark die
# Which SMs of the 4x4 grid are lit: the first wave of a launch that does not fill the device.
LIT = {(0, 0), (1, 0), (2, 0), (3, 0), (0, 1), (1, 1), (2, 1), (3, 1), (0, 2), (1, 2)}


def draw_icon(size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    s = float(size)

    # Rounded tile behind everything, so the icon reads on light and dark desktops.
    tile = QPainterPath()
    tile.addRoundedRect(QRectF(0.0, 0.0, s, s), s * 0.18, s * 0.18)
    p.fillPath(tile, BACKGROUND)

    # Pins: fewer at small sizes, where many would blur into a grey band.
    die = QRectF(s * 0.22, s * 0.22, s * 0.56, s * 0.56)
    pins = 3 if size < 48 else 5
    pin_len, pin_w = s * 0.10, max(1.0, s * 0.045)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(PIN)
    for i in range(pins):
        t = die.left() + die.width() * (i + 1) / (pins + 1) - pin_w / 2
        p.drawRect(QRectF(t, die.top() - pin_len, pin_w, pin_len))
        p.drawRect(QRectF(t, die.bottom(), pin_w, pin_len))
        p.drawRect(QRectF(die.left() - pin_len, t, pin_len, pin_w))
        p.drawRect(QRectF(die.right(), t, pin_len, pin_w))

    p.setBrush(DIE)
    p.drawRoundedRect(die, s * 0.04, s * 0.04)

    # 4x4 grid of SMs on the die.
    n = 4
    margin = die.width() * 0.10
    gap = die.width() * 0.05
    cell = (die.width() - 2 * margin - (n - 1) * gap) / n
    for row in range(n):
        for col in range(n):
            x = die.left() + margin + col * (cell + gap)
            y = die.top() + margin + row * (cell + gap)
            p.setBrush(SM_LIT if (col, row) in LIT else SM_IDLE)
            p.drawRoundedRect(QRectF(x, y, cell, cell), cell * 0.15, cell * 0.15)

    if size >= 64:  # a thin outline on the tile keeps the edge visible on dark panels
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(QColor(255, 255, 255, 40), s / 128))
        p.drawPath(tile)
    p.end()
    return image


def png_bytes(image: QImage) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise RuntimeError("Qt could not encode a PNG")
    buffer.close()
    return bytes(data.data())


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """An ICO file whose entries are PNG images (the ICONDIR / ICONDIRENTRY layout)."""
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = 6 + 16 * len(sizes)
    entries, blobs = b"", b""
    for size in sizes:
        blob = pngs[size]
        dim = 0 if size >= 256 else size  # 0 means 256 in an ICO directory entry
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(blob), offset)
        blobs += blob
        offset += len(blob)
    return header + entries + blobs


# ICNS element types that hold PNG data, by pixel size (Apple's icns format, macOS 10.7 and later).
ICNS_TYPES = {16: b"icp4", 32: b"icp5", 64: b"icp6", 128: b"ic07", 256: b"ic08", 512: b"ic09"}


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """An ICNS file: the 'icns' magic and total length, then (type, length, PNG) elements."""
    body = b"".join(
        ICNS_TYPES[size] + struct.pack(">I", 8 + len(pngs[size])) + pngs[size] for size in sorted(ICNS_TYPES)
    )
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main(out_dir: Path) -> int:
    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # fonts/paint need it
    out_dir.mkdir(parents=True, exist_ok=True)
    pngs = {size: png_bytes(draw_icon(size)) for size in PNG_SIZES}
    for size, blob in pngs.items():
        (out_dir / f"device-explorer-{size}.png").write_bytes(blob)
    (out_dir / "device-explorer.png").write_bytes(pngs[256])
    (out_dir / "device-explorer.ico").write_bytes(ico_bytes({s: pngs[s] for s in ICO_SIZES}))
    (out_dir / "device-explorer.icns").write_bytes(icns_bytes(pngs))
    print(f"wrote {len(pngs) + 3} icon files to {out_dir}")
    return 0


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    sys.exit(main(root / "resources" / "icons"))
