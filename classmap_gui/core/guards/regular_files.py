"""Opening only regular files (standard library only): the one implementation behind :mod:`.files` and the
exported ``predict.py``, which inlines this module.

A FIFO, device, socket or folder where a file was expected is refused, never opened for a blocking read
(``O_NONBLOCK`` on the open, then ``fstat`` on the descriptor: no race between checking and opening), and with
``follow_links=False`` a symbolic link is refused too. The refusal is the caller's exception class ``error``
(an ``OSError`` subclass), so the app raises its own and ``predict.py`` a plain ``OSError``.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path


def regular_fd(path: str | Path, follow_links: bool = True, error: type = OSError) -> int:
    """A blocking fd open for reading on the regular file ``path``; ``error`` for anything else."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(str(path), flags | (0 if follow_links else getattr(os, "O_NOFOLLOW", 0)))
    except OSError:
        if not follow_links and os.path.islink(path):
            raise error(f"{path} is a symbolic link; refused") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else \
                "a socket" if stat.S_ISSOCK(mode) else "a device" if \
                (stat.S_ISCHR(mode) or stat.S_ISBLK(mode)) else "not a regular file"
            raise error(f"{path} is {kind}, not a regular file; refused")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def regular_bytes(path: str | Path, max_bytes: int | None = None, follow_links: bool = True,
                  too_big: str = "is too large", error: type = OSError) -> bytes:
    """The bytes of the regular file ``path``; ``error`` for anything else, and (``max_bytes``) for a larger file,
    refused before it is read (``f"{path} {too_big} (... bytes, at most ...)"``) or when it grows while read."""
    with os.fdopen(regular_fd(path, follow_links, error), "rb") as fh:
        if max_bytes is None:
            return fh.read()
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise error(f"{path} {too_big} ({size} bytes, at most {max_bytes})")
        data = fh.read(size + 1)  # read(n) allocates n bytes up front: ask for what the file holds
        if len(data) > max_bytes:
            raise error(f"{path} {too_big}")
        return data
