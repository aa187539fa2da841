"""Hostile files of issue 26, built byte by byte: TIFFs whose header a careless reader misreads (small on
disk, gigapixels when libtiff decodes them) and model arrays that inflate from megabytes to gigabytes."""
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


def grow_manifest(folder, nbytes: int) -> tuple[str, tuple[int, int]]:
    """Make the largest float32 2-D array in ``model.json`` of ``folder`` declare ``nbytes``; returns
    its key and new shape (the caller writes a member to match)."""
    import json
    from pathlib import Path

    folder = Path(folder)
    doc = json.loads((folder / "model.json").read_text())
    key = max((k for k, v in doc["arrays"].items() if len(v["shape"]) == 2 and v["dtype"] == "<f4"),
              key=lambda k: doc["arrays"][k]["shape"][0])
    rows = doc["arrays"][key]["shape"][0]
    shape = (rows, nbytes // 4 // rows)
    doc["arrays"][key]["shape"] = list(shape)
    (folder / "model.json").write_text(json.dumps(doc))
    return key, shape


def bomb_arrays(folder, nbytes: int = 1 << 30) -> str:
    """Make the largest float32 2-D array of the model in ``folder`` (``model.json`` + ``arrays.npz``,
    the app's or an export's) declare ``nbytes`` (manifest and member agree), deflated: a ~1 MB file.
    Returns the member's key."""
    import zipfile
    from pathlib import Path

    key, shape = grow_manifest(folder, nbytes)
    npz = Path(folder) / "arrays.npz"
    with zipfile.ZipFile(npz) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    with zipfile.ZipFile(npz, "w", zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            if name != f"{key}.npy":
                zf.writestr(name, data)
    _append_raw_deflated(npz, f"{key}.npy", "<f4", shape)
    return key


def _append_raw_deflated(npz, name: str, dtype: str, shape) -> None:
    """Add a deflated member of zeros to the zip ``npz`` without holding its inflated bytes anywhere."""
    import zipfile

    import numpy as np
    from numpy.lib import format as npy_format
    import io

    head = io.BytesIO()
    npy_format.write_array_header_1_0(head, {"descr": np.dtype(dtype).str, "fortran_order": False,
                                             "shape": tuple(shape)})
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.file_size = len(head.getvalue()) + n
    with zipfile.ZipFile(npz, "a") as zf, zf.open(info, "w", force_zip64=True) as out:
        out.write(head.getvalue())
        block = bytes(1 << 22)
        for _ in range(n // len(block)):
            out.write(block)
        out.write(bytes(n % len(block)))


def sparse_arrays(folder, nbytes: int = 1 << 30) -> str:
    """Like :func:`bomb_arrays`, but the grown member is stored, its data a hole in a sparse file: a
    1 GiB ``arrays.npz`` that takes no disk. Written by hand (zipfile would write the zeros)."""
    import io
    import zipfile
    from pathlib import Path

    import numpy as np
    from numpy.lib import format as npy_format

    key, shape = grow_manifest(folder, nbytes)
    npz = Path(folder) / "arrays.npz"
    with zipfile.ZipFile(npz) as zf:
        members = [(i.filename, zf.read(i)) for i in zf.infolist() if i.filename != f"{key}.npy"]
    head = io.BytesIO()
    npy_format.write_array_header_1_0(head, {"descr": "<f4", "fortran_order": False, "shape": shape})
    head = head.getvalue()
    n = int(np.prod(shape)) * 4
    crc = zlib.crc32(head)
    block = bytes(1 << 20)
    for _ in range(n >> 20):
        crc = zlib.crc32(block, crc)
    central = bytearray()
    with open(npz, "wb") as out:
        for name, data, hole in [*[(m, d, 0) for m, d in members], (f"{key}.npy", head, n)]:
            name_b = name.encode()
            c = crc if hole else zlib.crc32(data)
            size = len(data) + hole
            offset = out.tell()
            out.write(struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 0, 0, 0, c, size, size, len(name_b), 0)
                      + name_b + data)
            if hole:
                out.seek(hole, 1)  # the array's bytes: a hole
            central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, c, size, size,
                                   len(name_b), 0, 0, 0, 0, 0, offset) + name_b
        start = out.tell()
        out.write(bytes(central))
        k = len(members) + 1
        out.write(struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, k, k, len(central), start, 0))
    return key
