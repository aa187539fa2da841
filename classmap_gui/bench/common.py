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
import threading
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


#: the 1-minute load average a machine counts as quiet at (``--quiet-machine`` waits for less before a run)
QUIET_LOAD = 1.0
#: seconds between the sampler's readings: the kernel recomputes the load average every 5 s
SAMPLE_EVERY_S = 5.0


class LoadDuring:
    """The 1-minute load average *during* a bench's timed rounds (a reading before them says nothing about
    them: ``scan.json`` once said quiet while its rounds ran at load 1.56-1.89).

    Call it as::

        from .common import LoadDuring
        with LoadDuring() as load:          # reads at entry, every SAMPLE_EVERY_S on a daemon thread, at exit
            for r in range(rounds):
                ...one timed round...
                load.sample()               # each round's reading (rounds deep inside a helper: the thread's)
        result["load_during"] = load.record()

    :meth:`record` is ``{"samples", "min", "max", "median", "threshold", "quiet"}``; ``quiet`` is true only if
    the largest reading stayed <= ``threshold``. The load counts the bench's own running threads too: a bench
    that keeps k cores busy passes ``threshold=QUIET_LOAD + k``. Reading ``/proc/loadavg`` takes microseconds
    and happens between timed calls or on the sampler thread, never inside a timed call.
    """

    def __init__(self, threshold: float = QUIET_LOAD, every_s: float = SAMPLE_EVERY_S):
        self.threshold, self.every_s = float(threshold), float(every_s)
        self.samples: list[float] = []
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def sample(self) -> float:
        """Read the 1-minute load average now (after a round) and keep it; returns it."""
        value = round(os.getloadavg()[0], 2)
        with self._lock:
            self.samples.append(value)
        return value

    def _run(self) -> None:
        while not self._done.wait(self.every_s):
            self.sample()

    def __enter__(self) -> LoadDuring:
        self.sample()
        self._thread = threading.Thread(target=self._run, name="load-during", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        self.sample()

    def record(self) -> dict:
        """The readings' summary (see the class doc); ``quiet`` False when nothing was read."""
        with self._lock:
            v = list(self.samples)
        if not v:
            return {"samples": 0, "threshold": self.threshold, "quiet": False}
        return {"samples": len(v), "min": min(v), "max": max(v), "median": float(np.median(v)),
                "threshold": self.threshold, "quiet": bool(max(v) <= self.threshold)}


def quiet_machine(before: dict, during: dict | None) -> dict:
    """``--quiet-machine``'s record: the wait before the run (``before``, from ``core.timing.wait_for_quiet``)
    and the load during its timed rounds (``during``, a :meth:`LoadDuring.record`). ``quiet`` is true only when
    the machine was quiet before and stayed so through the rounds; a bench that recorded no load during its
    rounds is not called quiet (``during`` None)."""
    return {**before, "quiet_before": bool(before.get("quiet")), "during": during,
            "quiet": bool(before.get("quiet")) and bool(during and during.get("quiet"))}


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
