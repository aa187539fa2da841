"""Autosave and the recent-projects list: small session state kept in folders the caller names.

Core never decides where settings live: the GUI passes the platform's folders
(``platformdirs.user_data_dir`` / ``user_config_dir``) in.

:class:`Autosaver` keeps at most ``interval`` seconds of work at risk: the GUI asks
:meth:`Autosaver.due` on a timer (every few seconds) and, when true, calls :meth:`Autosaver.save`
in the background. Autosaves are ``.cmproj`` archives in their own folder, never the user's
file, so an autosave cannot overwrite what the user chose to save; after a crash
:meth:`Autosaver.pending` lists what can be recovered.
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from ..errors import ModelFormatError
from ..guards.files import read_regular
from ..progress import ProgressFn, StopFn
from ..store.format import write_file_atomic
from .format import ARCHIVE_SUFFIX, project_info, save_project
from .model import Project

RECENT_FILE = "recent-projects.json"


class Autosaver:
    """Periodic safety copies of the open project.

    folder: where autosaves go (created on demand); interval: seconds of work allowed at risk.
    """

    def __init__(self, folder: str | Path, interval: float = 60.0):
        self.folder = Path(folder)
        self.interval = float(interval)
        self._last = time.monotonic()

    @staticmethod
    def key_for(path: str | Path | None) -> str:
        """A stable file stem for the project saved at ``path`` (``untitled`` when never saved)."""
        if path is None:
            return "untitled"
        p = Path(path).expanduser().absolute()
        return f"{p.stem[:40]}-{hashlib.sha1(str(p).encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"

    def autosave_path(self, path: str | Path | None) -> Path:
        """The autosave file of the project saved at ``path`` (None: a never-saved project)."""
        return self.folder / f"{self.key_for(path)}{ARCHIVE_SUFFIX}"

    def due(self, dirty: bool, now: float | None = None) -> bool:
        """True when the project has unsaved changes and the last autosave/save is ``interval`` old."""
        now = time.monotonic() if now is None else now
        return bool(dirty) and now - self._last >= self.interval

    def mark_saved(self, now: float | None = None) -> None:
        """Restart the clock (after a save by the user or an autosave)."""
        self._last = time.monotonic() if now is None else now

    def save(self, project: Project, path: str | Path | None = None, *, progress: ProgressFn = None,
             should_stop: StopFn = None) -> Path:
        """Write the autosave of the project whose user file is ``path``; returns where it went."""
        out = save_project(project, self.autosave_path(path), progress=progress, should_stop=should_stop)
        self.mark_saved()
        return out

    def discard(self, path: str | Path | None = None) -> None:
        """Delete the autosave of ``path`` (call after the user saved or chose to drop changes)."""
        self.autosave_path(path).unlink(missing_ok=True)

    def pending(self) -> list[dict]:
        """Autosaves left behind (newest first): ``{"autosave": Path, "name", "saved", "n_images"}``.

        Unreadable autosaves are listed with ``"error"`` instead of being deleted silently.
        """
        out = []
        if not self.folder.is_dir():
            return out
        for p in sorted(self.folder.glob(f"*{ARCHIVE_SUFFIX}"), key=lambda p: p.stat().st_mtime, reverse=True):
            try:
                info = project_info(p)
                out.append({"autosave": p, "name": info["name"], "saved": info["saved"], "n_images": info["n_images"]})
            except ModelFormatError as exc:
                out.append({"autosave": p, "error": str(exc)})
        return out


class RecentProjects:
    """The most recently opened projects, newest first, kept in ``<config_dir>/recent-projects.json``."""

    def __init__(self, config_dir: str | Path, limit: int = 10):
        self.file = Path(config_dir) / RECENT_FILE
        self.limit = int(limit)

    def _read(self) -> list[str]:
        try:
            doc = json.loads(read_regular(self.file, max_bytes=1 << 20).decode("utf-8"))
        except (OSError, ValueError, RecursionError):  # missing or damaged: an empty list, never an error at start-up
            return []
        items = doc.get("recent") if isinstance(doc, dict) else None
        return [s for s in items if isinstance(s, str)][: self.limit] if isinstance(items, list) else []

    def list(self, existing_only: bool = True) -> list[Path]:
        """Recent project paths; those that no longer exist are left out unless ``existing_only`` is False."""
        paths = [Path(s) for s in self._read()]
        return [p for p in paths if p.exists()] if existing_only else paths

    def add(self, path: str | Path) -> None:
        """Put ``path`` first in the recent-projects list (once), keeping at most ``limit`` entries."""
        p = str(Path(path).expanduser().absolute())
        items = [p] + [s for s in self._read() if s != p]
        self._write(items[: self.limit])

    def remove(self, path: str | Path) -> None:
        """Drop ``path`` from the recent-projects list (it was moved or could not be opened)."""
        p = str(Path(path).expanduser().absolute())
        self._write([s for s in self._read() if s != p])

    def _write(self, items: list[str]) -> None:
        write_file_atomic(self.file, json.dumps({"recent": items}, indent=1).encode("utf-8"))
