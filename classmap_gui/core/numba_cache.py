"""Where numba keeps compiled kernels when the install and the home folder are read-only.

The kernels are compiled with ``cache=True``. Numba caches next to the source (``__pycache__``) or
in the user's cache folder (``~/.cache/numba``); when neither can be written (an install under
/opt, a service or sandbox without a writable home) it refuses to compile at all ("no locator
available"), and every ``predict`` would fail. :func:`ensure_writable_cache` runs before numba is
imported (from :mod:`classmap_gui.core`) and, only in that case, points ``NUMBA_CACHE_DIR`` at a
private folder of this user in the temporary folder, or at a fresh private folder when that one
is not safely ours (a link, another owner, writable by others): then kernels are compiled per run.
"""
from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path


def _can_write(folder: Path) -> bool:
    """Whether numba could create a file in ``folder``: a temporary file in it when it exists, else write
    access to its nearest existing parent (numba creates the rest). Nothing is created in passing: a
    ``__pycache__`` made here inside an installed package would outlive the package's removal."""
    try:
        if folder.is_dir():
            tempfile.TemporaryFile(dir=folder).close()
            return True
        parent = folder.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        return parent.is_dir() and os.access(parent, os.W_OK | os.X_OK)
    except OSError:
        return False


def _user_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "numba"


def _private_dir() -> str:
    """``<tmp>/classmap-numba-<uid>`` when it is a real folder only this user can write, else a new one."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    path = os.path.join(tempfile.gettempdir(), f"classmap-numba-{uid}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return tempfile.mkdtemp(prefix="classmap-numba-")
    try:
        st = os.lstat(path)
        ok = stat.S_ISDIR(st.st_mode) and st.st_uid == uid and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    except OSError:
        ok = False
    return path if ok and _can_write(Path(path)) else tempfile.mkdtemp(prefix="classmap-numba-")


def ensure_writable_cache() -> str | None:
    """Point numba's cache at a writable private folder when neither the install nor the user's
    cache folder can be written; returns the folder chosen, or None when nothing needed changing."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    if _can_write(Path(__file__).resolve().parent / "__pycache__") or _can_write(_user_cache()):
        return None
    folder = _private_dir()
    os.environ["NUMBA_CACHE_DIR"] = folder
    config = sys.modules.get("numba.core.config")
    if config is not None:  # numba already imported: it read the environment before we set it
        config.CACHE_DIR = folder
    return folder
