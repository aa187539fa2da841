"""Opening files a stranger may have arranged: only regular files, never a FIFO, device or
socket (opening a FIFO blocks forever), and nothing reached through a link out of its folder.

Every reader of user or project files goes through :func:`read_regular` / :func:`open_regular`,
so a hostile folder cannot hang a load or make it read ``/etc/passwd``.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import ClassMapError
from .regular_files import regular_bytes, regular_fd


class NotRegularFile(ClassMapError, OSError):
    """A path that is a FIFO, device, socket or folder where a regular file was expected."""


def open_regular(path: str | Path, *, follow_links: bool = True) -> int:
    """An fd open for reading on the regular file ``path``; NotRegularFile for anything else (a FIFO cannot
    block the open; ``follow_links=False`` refuses a symbolic link): :func:`.regular_files.regular_fd`."""
    return regular_fd(path, follow_links, NotRegularFile)


def read_regular(path: str | Path, *, max_bytes: int | None = None, follow_links: bool = True,
                 too_big: str = "is too large") -> bytes:
    """The bytes of the regular file ``path``; NotRegularFile for a FIFO/device/socket/folder, and
    (``max_bytes``) for a larger file, refused before it is read (with ``too_big``)."""
    return regular_bytes(path, max_bytes, follow_links, too_big, NotRegularFile)


def inside(path: str | Path, root: str | Path) -> bool:
    """True when ``path`` resolves (all links followed) to ``root`` or somewhere below it."""
    try:
        real = os.path.realpath(path)
        base = os.path.realpath(root)
    except (OSError, ValueError):
        return False
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)
