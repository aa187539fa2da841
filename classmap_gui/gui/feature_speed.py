"""How fast each feature map reads images on this computer: milliseconds per image in a batch (training,
testing) and live frames/s (one frame at a time, as the Run panel reads a camera). The Train panel shows it
before a person trains (:mod:`.panels.speed_column`), so a feature map too slow for a camera is not chosen
without a word.

Measured, never estimated: each feature map is built from the registry with the settings shown, fitted on a
few random images of the project's size (its fit-only work cut short: the speed of ``transform`` does not
depend on what was learned, only on the sizes), then timed. Results are cached per setting, image size,
core count and app version in ``<user cache dir>/feature-speed.json``; the GUI measures in a worker thread.
No Qt here.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

from .. import __version__ as VERSION
from .. import user_dirs

CACHE_FILE = "feature-speed.json"
#: a camera's (and the demo video's) frame rate: live reading slower than this falls behind
CAMERA_FPS = 15.0
#: fit-only settings cut short for the timing (they change what is learned, not how long transform takes)
FIT_ONLY = {"n_patches": 4000, "kmeans_max_iter": 1}
#: timed repetitions (the median is kept) and the batch size of the per-image figure
REPEATS, BATCH = 5, 16


def cache_key(name: str, params: dict, image_size, colour: bool) -> str:
    """The cache's key of one measurement: the setting, the image format, the cores and the app version."""
    p = json.dumps(params or {}, sort_keys=True, default=str)
    h, w = (int(v) for v in image_size)
    return f"{name}|{p}|{h}x{w}x{3 if colour else 1}|cpu{os.cpu_count()}|v{VERSION}"


def _cache_path() -> Path:
    return user_dirs.cache_dir() / CACHE_FILE


def load_cache() -> dict:
    """Measured speeds by :func:`cache_key` (``{}`` when none or the file is damaged)."""
    try:
        doc = json.loads(_cache_path().read_bytes()[: 4 << 20].decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


def save_cache(key: str, value: dict) -> None:
    """Add one measurement to the cache (atomically; a folder that cannot be written keeps nothing)."""
    from ..core.store.atomic import write_file_atomic

    doc = load_cache()
    doc[key] = value
    try:
        _cache_path().parent.mkdir(parents=True, exist_ok=True)
        write_file_atomic(_cache_path(), json.dumps(doc, indent=1).encode("utf-8"))
    except OSError:
        pass


def measure(name: str, params: dict, image_size, colour: bool, should_stop=None) -> dict:
    """Time feature map ``name`` with ``params`` on ``image_size`` (h, w) images: ``{"ms_image": batch ms per
    image, "ms_live": ms for one frame, "fps": live frames/s, "dim": feature length}``; ``{"error": text}``
    when it cannot be built or fitted with these settings."""
    from ..core import registry

    h, w = (int(v) for v in image_size)
    shape = (max(BATCH, 24), h, w, 3) if colour else (max(BATCH, 24), h, w)
    images = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
    try:
        comp = registry.component("features", name)
        known = {p.name for p in getattr(comp, "params", ())}
        fit_params = {**(params or {}), **{k: v for k, v in FIT_ONLY.items() if k in known}}
        fm = registry.make_features(name, **fit_params).fit(images)
        fm.transform(images[:1])  # the first call pays one-off costs (compiled kernels, caches)
        live, batch = [], []
        for _ in range(REPEATS):
            if should_stop is not None and should_stop():
                return {"error": "stopped"}
            t0 = time.perf_counter()
            X = fm.transform(images[:1])
            live.append(time.perf_counter() - t0)
        for _ in range(max(1, REPEATS // 2)):
            t0 = time.perf_counter()
            fm.transform(images[:BATCH])
            batch.append((time.perf_counter() - t0) / BATCH)
    except Exception as exc:  # noqa: BLE001 - a setting that cannot run here is shown as such, not raised
        return {"error": str(exc) or type(exc).__name__}
    ms_live = 1000 * float(np.median(live))
    return {"ms_image": 1000 * float(np.median(batch)), "ms_live": ms_live, "fps": 1000 / max(ms_live, 1e-3),
            "dim": int(np.asarray(X).shape[1])}


def keeps_up(result: dict | None, fps: float | None = None) -> bool:
    """True when a measured ``result`` reads at least ``fps`` (None: :data:`CAMERA_FPS`) frames/s live (unknown
    counts as keeping up)."""
    return result is None or "fps" not in result or result["fps"] >= (CAMERA_FPS if fps is None else fps)


__all__ = ["BATCH", "CAMERA_FPS", "CACHE_FILE", "FIT_ONLY", "REPEATS", "cache_key", "keeps_up", "load_cache",
           "measure", "save_cache"]
