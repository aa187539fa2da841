"""The app's own few settings, kept between runs in ``<config_dir>/app-settings.json`` (JSON, written
atomically): the window's size, and the hand-pose model folder last opened with *File > Open model…* (so
*File > Get the hand-pose model* finds a model built with ``classmap hand-model --out X`` once X was opened).

A missing or damaged file reads as no settings, never an error at start-up.
"""
from __future__ import annotations

import json
from pathlib import Path

from .. import user_dirs

FILE = "app-settings.json"


def _path() -> Path:
    return user_dirs.config_dir() / FILE


def load() -> dict:
    """The saved settings (``{}`` when there are none or the file is damaged)."""
    try:
        doc = json.loads(_path().read_bytes()[: 1 << 20].decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


def get(key: str, default=None):
    """One saved setting, or ``default``."""
    return load().get(key, default)


def put(key: str, value) -> bool:
    """Save one setting (JSON-able ``value``); False when the folder cannot be written (the app goes on)."""
    from ..core.store.atomic import write_file_atomic

    doc = load()
    doc[key] = value
    try:
        _path().parent.mkdir(parents=True, exist_ok=True)
        write_file_atomic(_path(), json.dumps(doc, indent=1).encode("utf-8"))
    except OSError:
        return False
    return True


__all__ = ["FILE", "get", "load", "put"]
