"""What every benchmark shares: the on-disk cache, option parsing and the machine's state.

The rule every bench follows: a hyper-parameter is chosen on a *validation* part carved from the
training data (:mod:`..core.splits`), by the one selection policy (:mod:`..core.selection`), whose
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


def with_app_hand_model(options: dict, module_options: dict, built) -> tuple[dict, dict | None]:
    """A bench's options with the hand model the app built, and a record of the model it uses.

    For a bench that tests a hand model (its ``OPTIONS`` has ``model_dir``: ``bench scan``, ``bench
    hand-network``): ``built`` is the app's model folder or None (the CLI passes
    :func:`classmap_gui.user_dirs.built_hand_model`, the one answer the app and ``classmap hand-model`` give).
    It becomes ``model_dir`` unless the person named a model (``model_dir``; ``none`` builds the bench's own)
    or asked for another build (a build or scan-choice setting of :mod:`..core.detect.pose_model`). The record
    (``{"folder", "source", "says"}``, None for a bench without a hand model) goes into the JSON as
    ``hand_model_used``; ``says`` is the line printed on stderr before the run."""
    if "model_dir" not in module_options:
        return options, None
    from ..core.detect.choice import CHOICE_OPTIONS
    from ..core.detect.pose_model import BUILD_OPTIONS

    given = options.get("model_dir", "")
    if given not in (None, "", "none"):
        return options, {"folder": str(given), "source": "--model-dir",
                         "says": f"hand model: {given} (--model-dir)"}
    own = sorted(k for k in options if k in BUILD_OPTIONS or k in CHOICE_OPTIONS)
    if "model_dir" not in options and not own and built is not None:
        return {**options, "model_dir": str(built)}, {
            "folder": str(built), "source": "the app's",
            "says": f"hand model: {built} (the app's, built by File > Get the hand-pose model or `classmap "
                    f"hand-model`; --model-dir none builds the bench's own)"}
    why = ("--model-dir none" if "model_dir" in options else f"settings of another build ({', '.join(own)})" if own
           else "the app has none: `classmap hand-model` builds it once for the app and every bench")
    cache = options.get("cache_dir")
    options = {**options, "model_dir": None}
    return options, {"folder": None, "source": "built by the bench",
                     "says": f"hand model: built by the bench ({why})"
                             + (f", cached in {cache}" if cache not in (None, "", "none") else "")}
