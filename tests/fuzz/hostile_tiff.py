"""TIFF files whose header a careless reader misreads: small on disk, gigapixels when libtiff decodes
them (issue 26 item 1). Built here byte by byte: one deflated strip of zeros."""
from __future__ import annotations

import struct
import zlib


def _zeros_deflated(nbytes: int) -> bytes:
    comp = zlib.compressobj(9)
    block = bytes(1 << 20)
    parts = [comp.compress(block) for _ in range(nbytes >> 20)]
    parts.append(comp.compress(bytes(nbytes & ((1 << 20) - 1))))
    parts.append(comp.flush())
    return b"".join(parts)


def tiff(width: int, height: int, *, trick: str | None = None, big: bool = False, dtype: str = "u8") -> bytes:
    """A grey TIFF of ``width x height`` zeros (uint8, or float32 with ``dtype="f4"``), deflated.

    ``trick``: ``"duplicate"`` lists width and height twice, the real size first (libtiff decodes at
    the first) and 16 second; ``"long8"`` stores them as LONG8, the value behind an offset.
    ``big``: a BigTIFF.
    """
    bps, fmt = (32, 3) if dtype == "f4" else (8, 1)
    strip = _zeros_deflated(width * height * bps // 8)
    e = "<"
    long8 = 16
    entries: list[tuple[int, int, int]] = []  # (tag, type, value)
    size_type = long8 if trick == "long8" else 4
    entries += [(256, size_type, width)]
    if trick == "duplicate":
        entries += [(256, 4, 16)]
    entries += [(257, size_type, height)]
    if trick == "duplicate":
        entries += [(257, 4, 16)]
    entries += [(258, 3, bps), (259, 3, 8), (262, 3, 1), (273, 4, 0), (277, 3, 1), (278, 4, height),
                (279, 4, len(strip)), (284, 3, 1), (339, 3, fmt)]
    entry_size, head = (20, 16) if big else (12, 8)
    count_size = 8 if big else 2
    ifd = head
    extra_at = ifd + count_size + entry_size * len(entries) + (8 if big else 4)
    extra = b""
    body = []
    strip_at = extra_at + 8 * len(entries)
    for tag, typ, value in entries:
        if tag == 273:
            value = strip_at
        if typ == long8 and not big:  # 8 bytes do not fit a classic entry: stored behind an offset
            field = struct.pack(e + "I", extra_at + len(extra))
            extra += struct.pack(e + "Q", value)
        else:
            size = {3: 2, 4: 4, long8: 8}[typ]
            field = struct.pack(e + {2: "H", 4: "I", 8: "Q"}[size], value).ljust(8 if big else 4, b"\0")
        if big:
            body.append(struct.pack(e + "HHQ", tag, typ, 1) + field)
        else:
            body.append(struct.pack(e + "HHI", tag, typ, 1) + field)
    extra = extra.ljust(8 * len(entries), b"\0")
    if big:
        header = b"II+\x00" + struct.pack(e + "HHQ", 8, 0, ifd)
        directory = struct.pack(e + "Q", len(entries)) + b"".join(body) + struct.pack(e + "Q", 0)
    else:
        header = b"II*\x00" + struct.pack(e + "I", ifd)
        directory = struct.pack(e + "H", len(entries)) + b"".join(body) + struct.pack(e + "I", 0)
    out = header + directory
    assert len(out) == extra_at, (len(out), extra_at)
    return out + extra + strip
