"""A QImage to a PNG file the safe way: encoded in memory, then written by ``explorer.outputs``.

``QImage.save(path)`` writes straight into the target, so a full disk or a crash left a
truncated picture where the good one was; encoding first and replacing the file in one step
never does.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QImage

from explorer.errors import UserError
from explorer.outputs import write_output


def png_bytes(image: QImage) -> bytes:
    """The image encoded as PNG; ``UserError`` when Qt cannot encode it (a null image)."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    # PySide6 6.x takes the format as str here and refuses bytes, which its stubs ask for
    ok = image.save(buffer, "PNG")  # type: ignore[call-overload]
    buffer.close()
    if not ok or data.isEmpty():
        raise UserError("Qt could not encode the picture as PNG")
    return bytes(data.data())


def write_png(image: QImage, path: str | Path, what: str = "the PNG picture") -> Path:
    """Encode, then check the path, lock it and replace the file in one step."""
    return write_output(path, png_bytes(image), what)
