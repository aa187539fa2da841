"""Reading a stranger's zip (an ``arrays.npz``, a ``.cmproj``) with memory bounded before anything grows.

Standard library and numpy only: an exported ``predict.py`` inlines this module, so the app and
the exported predictor refuse the same files. Three bounds, each checked before the memory it
protects is spent:

* :func:`entry_count` reads the entry count from the end-of-central-directory record, before
  ``zipfile`` builds one ``ZipInfo`` (~1 KB) per entry: 500 000 entries in 31 MB cost 0.5 GB.
* :func:`check_npz_sizes` holds every member of an ``.npz`` to the size its manifest declares
  (``dtype`` x ``shape``) before any member is inflated: a stored member must be in the file, a
  deflated one may not inflate more than :data:`MAX_INFLATE_RATIO` times (real weights compress
  less than 2x; the app never compresses, so only a zip bomb needs more).
* :func:`read_npy_member` inflates exactly the declared bytes into the array, one chunk at a time;
  one byte more is a refusal. A ``.npy`` header holding Python objects is refused unread.

Every refusal is a :class:`ZipLimitError` (a ValueError) saying what was wrong.
"""
from __future__ import annotations

import math
import struct
import zipfile

import numpy as np
from numpy.lib import format as npy_format

#: dtype kinds an array in a bundle may have: bool, signed/unsigned int, float.
ALLOWED_KINDS = "biuf"
#: A deflated member may inflate to at most this many times its compressed size (plus a little).
MAX_INFLATE_RATIO = 64
#: room for the ``.npy`` header in front of an array's bytes
NPY_HEADER_MAX = 65536 + 128
_CHUNK = 1 << 20
_EOCD = b"PK\x05\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"


class ZipLimitError(ValueError):
    """A zip or ``.npy`` member that is malformed or declares more than it may hold."""


def entry_count(fh) -> int | None:
    """The number of entries the central directory of the zip open in ``fh`` declares (Zip64 too);
    None when no end-of-central-directory record is found (``zipfile`` then refuses the file)."""
    fh.seek(0, 2)
    size = fh.tell()
    start = max(0, size - (65535 + 22))
    fh.seek(start)
    tail = fh.read(size - start)
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) - at < 22:
        return None
    count = struct.unpack_from("<H", tail, at + 10)[0]
    loc = at - 20
    if loc >= 0 and tail[loc:loc + 4] == _EOCD64_LOCATOR:
        offset = struct.unpack_from("<Q", tail, loc + 8)[0]
        fh.seek(offset)
        rec = fh.read(56)
        if len(rec) == 56 and rec[:4] == b"PK\x06\x06":
            count = max(count, struct.unpack_from("<Q", rec, 32)[0])
    return count


def parse_specs(manifest: dict, max_members: int) -> dict[str, tuple[np.dtype, tuple[int, ...]]]:
    """``{key: (dtype, shape)}`` from a model's JSON manifest (``{key: {"dtype", "shape"}}``); ZipLimitError
    for too many entries, a malformed one, or a dtype no model holds (objects: a pickle)."""
    if not isinstance(manifest, dict):
        raise ZipLimitError("the array manifest is not an object")
    if len(manifest) > max_members:
        raise ZipLimitError(f"the manifest declares {len(manifest)} arrays; refused")
    out = {}
    for key, spec in manifest.items():
        try:
            dtype = np.dtype(str(spec["dtype"]))
            shape = tuple(spec["shape"])
            if len(shape) > 32 or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2 ** 62
                                          for s in shape):
                raise ValueError
        except (KeyError, TypeError, ValueError):
            raise ZipLimitError(f"bad manifest entry for {str(key)[:80]!r}") from None
        if dtype.kind not in ALLOWED_KINDS or dtype.hasobject:
            raise ZipLimitError(f"array {key!r} declares dtype {dtype}, which a model never holds (possible "
                                f"pickle); refused")
        out[key] = (dtype, shape)
    return out


def member_bytes(dtype: np.dtype, shape: tuple[int, ...]) -> int:
    """Bytes of an array of ``dtype`` and ``shape``."""
    return math.prod(shape) * dtype.itemsize


def check_npz_sizes(infos: dict[str, zipfile.ZipInfo], specs: dict, file_size: int) -> None:
    """Refuse (ZipLimitError) any member whose zip entry does not fit its declared ``(dtype, shape)``:
    uncompressed size beyond that of its header and data, stored data not really in the file, or
    deflated members inflating more than :data:`MAX_INFLATE_RATIO` times. Reads nothing."""
    deflated_in = deflated_out = 0
    for key, (dtype, shape) in specs.items():
        info = infos[key]
        nbytes = member_bytes(dtype, shape)
        if info.file_size > nbytes + NPY_HEADER_MAX:  # fewer bytes: refused as truncated (or a pickle) on reading
            raise ZipLimitError(f"member {key!r} holds {info.file_size} bytes, more than its declared "
                                f"{dtype}{list(shape)} needs ({nbytes} and a header); refused before reading it")
        if info.compress_type == zipfile.ZIP_STORED:
            if info.compress_size != info.file_size or info.file_size > file_size:
                raise ZipLimitError(f"member {key!r} claims {info.file_size} bytes the file does not hold; refused")
        else:
            deflated_in += info.compress_size
            deflated_out += info.file_size
    if deflated_out > MAX_INFLATE_RATIO * deflated_in + (1 << 20):
        raise ZipLimitError(f"its compressed members would inflate {deflated_out // max(1, deflated_in)}-fold "
                            f"to {deflated_out} bytes (a zip bomb?); refused before inflating them")


def npy_header(src) -> tuple[tuple[int, ...], bool, np.dtype]:
    """``(shape, fortran_order, dtype)`` from the ``.npy`` header at ``src``'s position (never unpickles)."""
    version = npy_format.read_magic(src)
    if version == (1, 0):
        return npy_format.read_array_header_1_0(src)
    if version in ((2, 0), (3, 0)):
        return npy_format.read_array_header_2_0(src)
    raise ZipLimitError(f"unknown .npy version {version}")


def check_npy_header(key: str, h_shape, h_dtype, dtype: np.dtype, shape: tuple[int, ...]) -> None:
    """The member's own header must declare exactly the manifest's dtype and shape, and no objects."""
    if h_dtype.hasobject:
        raise ZipLimitError(f"member {key!r} holds Python objects (a pickle); model files never do, so it was "
                            f"refused without loading it")
    if h_dtype != dtype or tuple(h_shape) != shape:
        raise ZipLimitError(f"array {key!r} is {h_dtype}{list(h_shape)}, the model declares {dtype}{list(shape)}")


def read_npy_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, key: str, dtype: np.dtype,
                    shape: tuple[int, ...]) -> np.ndarray:
    """The array of the ``.npy`` member ``info``, inflated chunk by chunk straight into an array of the
    declared ``dtype`` and ``shape`` (checked against its header first); never more than that."""
    nbytes = member_bytes(dtype, shape)
    with zf.open(info) as src:
        h_shape, fortran, h_dtype = npy_header(src)
        check_npy_header(key, h_shape, h_dtype, dtype, shape)
        arr = np.empty(shape, dtype, order="F" if fortran else "C")
        view = memoryview(arr.reshape(-1, order="A").view(np.uint8)) if arr.size else memoryview(b"")
        got = 0
        while got < nbytes:
            n = src.readinto(view[got:got + _CHUNK])
            if not n:
                raise ZipLimitError(f"array {key!r} is truncated ({got} of {nbytes} bytes)")
            got += n
        if src.read(1):
            raise ZipLimitError(f"member {key!r} holds more data than its declared {dtype}{list(shape)}; refused")
    return arr
