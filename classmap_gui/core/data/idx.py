"""IDX files (the MNIST / Fashion-MNIST format), raw or gzip-compressed."""
from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np

from ..errors import DataError

_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: str | Path) -> np.ndarray:
    """Read an IDX file (``.gz`` or raw) into an array of its declared dtype and shape."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as fh:
            data = fh.read()
    except (OSError, EOFError) as exc:
        raise DataError(f"cannot read IDX file {path}: {exc}") from exc
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _DTYPES:
        raise DataError(f"{path} is not an IDX file (bad magic number)")
    ndim = data[3]
    header = 4 + 4 * ndim
    if len(data) < header:
        raise DataError(f"{path} is truncated: its header declares {ndim} dimensions but the file ends first")
    shape = tuple(int(v) for v in np.frombuffer(data[4:header], dtype=">u4"))
    dtype = np.dtype(_DTYPES[data[2]])
    expected = math.prod(shape) * dtype.itemsize  # Python ints: a hostile header cannot overflow
    if len(data) - header != expected:
        raise DataError(f"{path}: header says shape {shape} ({expected} bytes) but the file holds {len(data) - header}")
    return np.frombuffer(data, dtype=dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))
