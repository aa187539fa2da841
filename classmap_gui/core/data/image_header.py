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
        if data[:4] in (b"II*\x00", b"MM\x00*"):
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


def _tiff(data: bytes) -> tuple[str, int, int] | None:
    end = "<" if data[:2] == b"II" else ">"
    ifd = struct.unpack_from(end + "I", data, 4)[0]
    count = struct.unpack_from(end + "H", data, ifd)[0]
    dims: dict[int, int] = {}
    for k in range(min(count, 4096)):
        tag, typ, _, value = struct.unpack_from(end + "HHI4s", data, ifd + 2 + 12 * k)
        if tag in (256, 257):
            dims[tag] = struct.unpack_from(end + ("H" if typ == 3 else "I"), value)[0]
    if 256 in dims and 257 in dims:
        return "tiff", dims[256], dims[257]
    return None
