"""Captured frames on disk: a folder per class, one PNG per frame, written atomically the moment it is taken."""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from ..data.capture_names import capture_name
from ..errors import DataError


def safe_folder_name(name: str) -> str:
    """A folder name for a class: letters, digits, ``-_. `` kept, anything else ``_``."""
    keep = "".join(ch if ch.isalnum() or ch in "-_. " else "_" for ch in name).strip(" .")
    return keep or "class"


def write_capture(folder: Path, img: np.ndarray, burst: str | None = None) -> Path:
    """Write one captured frame into ``folder`` under a new name (time, counter, ``burst`` token); returns it."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    n = len(list(folder.glob("*.png"))) if folder.exists() else 0
    path = folder / capture_name(stamp, n, burst)
    while path.exists():
        n += 1
        path = folder / capture_name(stamp, n, burst)
    write_png_atomic(path, img)
    return path


def write_png_atomic(path: Path, img: np.ndarray) -> None:
    """Write ``img`` (uint8 grey or RGB) as PNG through a temporary file and a rename.

    The file gets the permissions the user's umask gives new files (``mkstemp`` alone would make it
    private to the user, which surprises a person sharing a project folder).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    bgr = img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_RGB2BGR)
    ok, buf = cv2.imencode(".png", bgr)
    if not ok:
        raise DataError(f"could not encode the image for {path}")
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(buf.tobytes())
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def current_umask() -> int:
    """The process's file-creation mask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
