"""A tiny deterministic PNG writer (zlib + struct): bar charts without matplotlib."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

BACKGROUND = (255, 255, 255)
BAR = (31, 119, 180)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def bar_chart_png(values: Sequence[float], *, width: int = 64, height: int = 48) -> bytes:
    """One bar per value, scaled to the largest; same values, same bytes."""
    peak = max((abs(v) for v in values), default=0.0) or 1.0
    slot = max(width // max(len(values), 1), 1)
    heights = [round(abs(v) / peak * (height - 2)) for v in values]
    rows = bytearray()
    for y in range(height):
        rows.append(0)  # filter type: none
        for x in range(width):
            bar = x // slot
            filled = bar < len(heights) and x % slot < slot - 1 and height - 1 - y < heights[bar]
            rows.extend(BAR if filled else BACKGROUND)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    pixels = zlib.compress(bytes(rows), 9)
    return PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", pixels) + _chunk(b"IEND", b"")


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
