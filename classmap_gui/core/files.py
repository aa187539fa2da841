"""Opening files a stranger may have arranged: only regular files, never a FIFO, device or
socket (opening a FIFO blocks forever), and nothing reached through a link out of its folder.

Every reader of user or project files goes through :func:`read_regular` / :func:`open_regular`,
so a hostile folder cannot hang a load or make it read ``/etc/passwd``.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import ClassMapError


class NotRegularFile(ClassMapError, OSError):
    """A path that is a FIFO, device, socket or folder where a regular file was expected."""


def open_regular(path: str | Path, *, follow_links: bool = True) -> int:
    """An fd open for reading on the regular file ``path``; NotRegularFile for anything else.

    Opened with ``O_NONBLOCK`` so a FIFO cannot block the open, then checked with ``fstat``
    (no race between checking and opening). ``follow_links=False`` refuses a symbolic link.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(str(path), flags)
    except OSError as exc:
        if not follow_links and os.path.islink(path):
            raise NotRegularFile(f"{path} is a symbolic link; refused") from None
        raise exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else \
                "a socket" if stat.S_ISSOCK(st.st_mode) else "a device" if \
                (stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)) else "not a regular file"
            raise NotRegularFile(f"{path} is {kind}, not a regular file; refused")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: str | Path, *, max_bytes: int | None = None, follow_links: bool = True,
                 too_big: str = "is too large") -> bytes:
    """The bytes of the regular file ``path``; NotRegularFile for a FIFO/device/socket/folder.

    ``max_bytes``: refuse a larger file before reading it (NotRegularFile with ``too_big``).
    """
    fd = open_regular(path, follow_links=follow_links)
    with os.fdopen(fd, "rb") as fh:
        if max_bytes is not None:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                raise NotRegularFile(f"{path} {too_big} ({size} bytes, at most {max_bytes})")
            data = fh.read(size + 1)  # read(n) allocates n bytes up front: ask for what the file holds
            if len(data) > max_bytes:  # grew while being read
                raise NotRegularFile(f"{path} {too_big}")
            return data
        return fh.read()


def inside(path: str | Path, root: str | Path) -> bool:
    """True when ``path`` resolves (all links followed) to ``root`` or somewhere below it."""
    try:
        real = os.path.realpath(path)
        base = os.path.realpath(root)
    except (OSError, ValueError):
        return False
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)
