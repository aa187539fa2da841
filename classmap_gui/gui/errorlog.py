"""Where internal errors go: a log file a person can find and send, never a traceback on screen.

``setup()`` (called once by the app) writes the log under the platform's log folder and catches
exceptions raised in Qt slots on the UI thread (which would otherwise print a traceback and, in
PySide6, may abort): they are logged and shown as a short message saying where the log is.
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path

log = logging.getLogger("classmap_gui")
_log_file: Path | None = None
_show: list = []  # the window's error display, set by the main window


def where() -> str:
    """A sentence naming the log file, for internal-error messages."""
    return f"Details were written to {_log_file}." if _log_file is not None else \
        "Run classmap-gui from a terminal to see the details."


def setup(folder: str | Path | None = None) -> Path | None:
    """Log to ``folder``/classmap-studio.log (default: the platform's user log folder)."""
    global _log_file
    if folder is None:
        from platformdirs import user_log_dir
        folder = user_log_dir("classmap-studio", appauthor=False)
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        path = Path(folder) / "classmap-studio.log"
        handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    _log_file = path
    sys.excepthook = _excepthook
    return path


def on_error(show) -> None:
    """``show(message, details)`` displays an internal error; the newest window registers itself."""
    _show[:] = [show]


def _excepthook(kind, value, tb) -> None:
    import traceback

    details = "".join(traceback.format_exception(kind, value, tb))
    log.error("unexpected error on the UI thread\n%s", details)
    if _show:
        try:
            _show[0]("Something went wrong inside ClassMap Studio; the app is still usable. " + where(), details)
            return
        except Exception:  # noqa: BLE001 - never recurse into the hook
            pass
    sys.__excepthook__(kind, value, tb)
