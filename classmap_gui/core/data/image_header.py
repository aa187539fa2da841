"""An image file's width and height from its header, without decoding it.

A hostile or mistaken file can declare 30000x30000 pixels in under a megabyte; reading the
header first lets the loader refuse it before OpenCV allocates gigabytes. Formats: PNG, JPEG,
BMP, GIF, WebP, TIFF — the ones the folder loader reads. OpenCV has no header-only call in
Python, hence this small parser.
"""
from __future__ import annotations

import struct
import zlib

PNG_SIG = b"\x89PNG\r\n\x1a\n"


def image_dimensions(data: bytes) -> tuple[str, int, int] | None:
    """``(format, width, height)`` read from the header of ``data``, or None when it is not an image
    of a known format or its header is cut short or damaged."""
    try:
        if data.startswith(PNG_SIG):
            return _png(data)
        if data.startswith(b"\xff\xd8"):
            return _jpeg(data)
        if data.startswith(b"BM") and len(data) >= 26:
            return _bmp(data)
        if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
            w, h = struct.unpack_from("<HH", data, 6)
            return "gif", w, h
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            return _webp(data)
        if data[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):
            return _tiff(data)
    except (struct.error, IndexError, ValueError):
        return None
    return None


def _png(data: bytes) -> tuple[str, int, int] | None:
    if len(data) < 33 or data[12:16] != b"IHDR":
        return None
    # A damaged IHDR makes libpng print to stderr by itself; checking its CRC here keeps that quiet.
    if zlib.crc32(data[12:29]) != int.from_bytes(data[29:33], "big"):
        return None
    w, h = struct.unpack_from(">II", data, 16)
    return "png", w, h


def _jpeg(data: bytes) -> tuple[str, int, int] | None:
    pos, n = 2, len(data)
    while pos + 4 <= n:
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0x01,) or 0xD0 <= marker <= 0xD9:
            pos += 2
            continue
        length = struct.unpack_from(">H", data, pos + 2)[0]
        if length < 2:
            return None
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack_from(">HH", data, pos + 5)
            return "jpeg", w, h
        pos += 2 + length
    return None


def _bmp(data: bytes) -> tuple[str, int, int] | None:
    dib = struct.unpack_from("<I", data, 14)[0]
    if dib == 12:
        w, h = struct.unpack_from("<HH", data, 18)
    elif dib >= 40:
        w, h = struct.unpack_from("<ii", data, 18)
    else:
        return None
    return "bmp", abs(w), abs(h)


def _webp(data: bytes) -> tuple[str, int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        w, h = struct.unpack_from("<HH", data, 26)
        return "webp", w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        b0, b1, b2, b3 = data[21:25]
        return "webp", 1 + (((b1 & 0x3F) << 8) | b0), 1 + (((b3 & 0xF) << 10) | (b2 << 2) | ((b1 & 0xC0) >> 6))
    if chunk == b"VP8X" and len(data) >= 30:
        return "webp", 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
    return None


#: TIFF field types libtiff accepts for ImageWidth/ImageLength (TIFFReadDirEntryLong), with their sizes:
#: BYTE, SHORT, LONG, SBYTE, SSHORT, SLONG, LONG8, SLONG8, IFD8
_TIFF_INT_TYPES = {1: "B", 3: "H", 4: "I", 6: "b", 8: "h", 9: "i", 16: "Q", 17: "q", 18: "Q"}


def _tiff(data: bytes) -> tuple[str, int, int] | None:
    """Width and height of the first image of a TIFF or BigTIFF, read as libtiff (OpenCV's decoder)
    reads them: the first of duplicated tags wins (libtiff ignores the later ones), any integer type
    of count 1, a value that does not fit the entry read from its offset, a negative or over-32-bit
    value refused. A header libtiff would decode differently must not pass the pixel limit."""
    end = "<" if data[:2] == b"II" else ">"
    big = data[2:4] in (b"+\x00", b"\x00+")
    if big:
        if struct.unpack_from(end + "HH", data, 4) != (8, 0):
            return None
        ifd = struct.unpack_from(end + "Q", data, 8)[0]
        count = struct.unpack_from(end + "Q", data, ifd)[0]
        entry, first, inline, count_fmt = 20, ifd + 8, 8, "Q"
    else:
        ifd = struct.unpack_from(end + "I", data, 4)[0]
        count = struct.unpack_from(end + "H", data, ifd)[0]
        entry, first, inline, count_fmt = 12, ifd + 2, 4, "I"
    dims: dict[int, int | None] = {}
    for k in range(min(count, 4096)):
        pos = first + entry * k
        tag, typ = struct.unpack_from(end + "HH", data, pos)
        if tag not in (256, 257) or tag in dims:  # libtiff ignores every later duplicate of a tag
            continue
        n = struct.unpack_from(end + count_fmt, data, pos + 4)[0]
        fmt = _TIFF_INT_TYPES.get(typ)
        if fmt is None or n != 1:
            dims[tag] = None  # libtiff refuses the directory
            continue
        size = struct.calcsize(fmt)
        where = pos + 4 + struct.calcsize(count_fmt)
        if size > inline:  # too large for the entry: the entry holds the value's offset
            where = struct.unpack_from(end + count_fmt, data, where)[0]
        value = struct.unpack_from(end + fmt, data, where)[0]
        dims[tag] = value if 0 <= value <= 0xFFFFFFFF else None
    w, h = dims.get(256), dims.get(257)
    if w is None or h is None:
        return None
    return "tiff", w, h
