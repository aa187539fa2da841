"""IDX files (the MNIST / Fashion-MNIST format), raw or gzip-compressed."""
from __future__ import annotations

import gzip
import math
import zlib
from pathlib import Path

import numpy as np

from ..errors import DataError
from ..guards.files import NotRegularFile, open_regular

_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: str | Path, *, max_bytes: int = 1 << 32) -> np.ndarray:
    """Read an IDX file (``.gz`` or raw) into an array of its declared dtype and shape.

    The header is read first and at most the declared payload (+1 byte, to notice excess) after
    it, so a gzip bomb or a header declaring more than ``max_bytes`` is refused without inflating it.
    """
    path = Path(path)
    try:
        raw = open(open_regular(path), "rb")  # a FIFO named like a data file must not block
    except NotRegularFile as exc:
        raise DataError(str(exc)) from None
    except OSError as exc:
        raise DataError(f"cannot read IDX file {path}: {exc.strerror or exc}") from None
    try:
        with (gzip.GzipFile(fileobj=raw, mode="rb") if path.suffix == ".gz" else raw) as fh:
            head = fh.read(4)
            if len(head) < 4 or head[0] != 0 or head[1] != 0 or head[2] not in _DTYPES:
                raise DataError(f"{path} is not an IDX file (bad magic number)")
            ndim = head[3]
            dims = fh.read(4 * ndim)
            if len(dims) < 4 * ndim:
                raise DataError(f"{path} is truncated: its header declares {ndim} dimensions but the file ends first")
            shape = tuple(int(v) for v in np.frombuffer(dims, dtype=">u4"))
            dtype = np.dtype(_DTYPES[head[2]])
            expected = math.prod(shape) * dtype.itemsize  # Python ints: a hostile header cannot overflow
            if expected > max_bytes:
                raise DataError(f"{path}: header declares shape {shape} ({expected} bytes), more than the "
                                f"{max_bytes} bytes allowed")
            data = fh.read(expected + 1)
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise DataError(f"cannot read IDX file {path}: {exc}") from exc
    finally:
        raw.close()
    if len(data) != expected:
        held = f"{len(data)}" if len(data) <= expected else "more"
        raise DataError(f"{path}: header says shape {shape} ({expected} bytes) but the file holds {held}")
    return np.frombuffer(data, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))
