"""Give saved projects and exports the permissions the user's umask asks for.

Core writes atomically through ``tempfile.mkstemp``/``mkdtemp``, which create files 0600 and folders
0700 whatever the umask; a person sharing a project or an export folder expects what every other
program gives (typically 0644 / 0755). Until the store and export apply the umask themselves, the
app does it after a save or export completes. Executable bits (predict.py) are kept.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..core.project.captures import current_umask


def honour_umask(path: str | Path) -> None:
    """chmod ``path`` (a file, or a folder and everything in it) to the umask's permissions."""
    mask = current_umask()
    path = Path(path)
    try:
        items = [path] + (list(path.rglob("*")) if path.is_dir() else [])
        for p in items:
            if p.is_symlink():
                continue
            mode = p.stat().st_mode
            if p.is_dir() or mode & 0o100:
                os.chmod(p, 0o777 & ~mask)
            else:
                os.chmod(p, 0o666 & ~mask)
    except OSError:
        pass  # permissions are a courtesy; the save itself succeeded
