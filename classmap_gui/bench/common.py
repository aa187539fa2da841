"""What every benchmark shares: the on-disk cache, option parsing and the machine's state.

The rule every bench follows: a hyper-parameter is chosen on a *validation* part carved from the
training data (:mod:`..core.selection.splits`), by the one selection policy (:mod:`..core.selection.policy`), whose
``record`` writes down each choice (what, from which candidates, their validation scores) so a reader
of the JSON can check that no figure was picked on the test part; the model is then refitted on all
the training data and tested once.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import ConfigError


def floats(value, name: str = "option") -> list[float]:
    """The comma-separated numbers of an option (``"10,30,100"``); anything else is a ConfigError naming it."""
    try:
        return [float(v) for v in str(value).split(",") if v.strip()]
    except ValueError:
        raise ConfigError(f"{name} expects comma-separated numbers like 10,30,100, got {value!r}") from None


def package_version() -> str:
    """The package version (part of every cache key: new code, new cache)."""
    from .. import __version__

    return str(__version__)


def cache_key(*settings: Any) -> str:
    """A short hash of the package version and ``settings`` (JSON-able: every cached stage's settings)."""
    blob = json.dumps([package_version(), *settings], sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


def load_cached(path: Path) -> dict | None:
    """Arrays saved by :func:`save_cached` (``allow_pickle=False``), or None if missing or unreadable."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError):
        return None


def save_cached(path: Path, arrays: dict) -> None:
    """Save plain arrays atomically (write to a temporary name, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


def machine() -> dict:
    """Load average and core count: timings on a shared machine mean little without them."""
    return {"load_average": list(os.getloadavg()), "cpu_count": os.cpu_count()}
