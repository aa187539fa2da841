"""The windows a scan classifies: a pyramid of frame scales, every window one HOG cell apart.

A window of side ``s`` pixels in the frame is the recogniser's window (e.g. 64 x 64) in the frame
shrunk by ``64 / s`` (OpenCV area averaging, as :func:`..image_ops.fit_size` shrinks crops); its HOG
comes from :class:`.dense_hog.DenseHOG` of that shrunk frame. Window sides are given as fractions of
the frame's shorter side, so a 640 x 480 frame is scanned for the same hand sizes as a 320 x 240 one.
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np

from ..errors import ConfigError, DataError
from .dense_hog import DenseHOG

#: window sides as fractions of the frame's shorter side (72 .. 149 px in a 320 x 240 frame), 1.2 apart
DEFAULT_SIDES = (0.30, 0.36, 0.43, 0.52, 0.62)

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _helper() -> ThreadPoolExecutor:
    """One helper thread (the caller is the other): the dense HOG kernels release the GIL."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dense-hog")
    return _pool


def grid_boxes(rows: int, cols: int, step: int, win_w: int, win_h: int, f: float) -> np.ndarray:
    """``(rows * cols, 4) float32`` frame boxes (x, y, w, h) of a shrunk level's windows ``step`` pixels apart, row
    by row, the level being the frame shrunk by ``f``."""
    r, c = np.mgrid[0:rows, 0:cols]
    n = rows * cols
    return np.stack([c.ravel() * step / f, r.ravel() * step / f, np.full(n, win_w / f), np.full(n, win_h / f)],
                    1).astype(np.float32)


class WindowPyramid:
    """Window boxes and their features for frames of one size.

    ``dense``: a :class:`DenseHOG`; ``sides``: window sides as fractions (0, 1] of the frame's shorter
    side (at least one; :data:`DEFAULT_SIDES` has 5, ``bench scan`` chooses its own on validation videos).
    ``features(grey)`` -> ``X (n, D) float32`` whose
    row i is the HOG of ``boxes(h, w)[i]``; the matrix is reused from frame to frame (copy to keep it).
    """

    def __init__(self, dense: DenseHOG, sides=DEFAULT_SIDES, threads: int = 2):
        sides = tuple(float(s) for s in sides)
        if not sides or any(not 0 < s <= 1 for s in sides):
            raise ConfigError(f"window sides must be fractions of the frame's shorter side in (0, 1], got {sides}")
        self.dense = dense
        self.sides = sides
        self.threads = int(threads)
        self._shape = None

    def _plan(self, h: int, w: int):
        """Per scale: (shrunk size (w, h), grid (rows, cols), factor), boxes ``(n, 4)`` float32 x, y, w, h."""
        if self._shape == (h, w):
            return
        d = self.dense
        levels, boxes, which = [], [], []
        for k, frac in enumerate(self.sides):
            f = d.win_h / (frac * min(h, w))
            if f > 1.0 + 1e-6:
                continue                        # a window smaller than the model's: never enlarge the frame
            sw, sh = max(1, int(round(w * f))), max(1, int(round(h * f)))
            rows, cols = d.grid(sh, sw)
            if rows * cols == 0:
                continue
            levels.append(((sw, sh), (rows, cols), f))
            boxes.append(grid_boxes(rows, cols, d.stride, d.win_w, d.win_h, f))
            which.append(np.full(rows * cols, k, np.int64))
        if not levels:
            raise DataError(f"a {w}x{h} frame is too small to scan: its windows ({', '.join(f'{s:g}' for s in self.sides)} "
                            f"of its shorter side) are smaller than the model's {d.win_w}x{d.win_h} pixels")
        self._levels = levels
        self._boxes = np.concatenate(boxes)
        self._side_index = np.concatenate(which)
        self._X = np.empty((len(self._boxes), d.n_features), np.float32)
        self._shape = (h, w)

    def boxes(self, h: int, w: int) -> np.ndarray:
        """``(n, 4) float32`` window boxes (x, y, width, height) in frame pixels, in feature-row order."""
        self._plan(h, w)
        return self._boxes

    def side_index(self, h: int, w: int) -> np.ndarray:
        """``(n,) int64``: each window's scale as an index into ``sides`` (feature-row order)."""
        self._plan(h, w)
        return self._side_index

    def scales(self, h: int, w: int) -> list[dict]:
        """Per scale: window side in frame pixels and the number of windows (for reports)."""
        self._plan(h, w)
        return [{"window_side": round(self.dense.win_h / f, 1), "windows": r * c} for _, (r, c), f in self._levels]

    def features(self, grey: np.ndarray) -> np.ndarray:
        """HOG of every window of ``grey (h, w) uint8``: ``(n, D) float32`` (a reused buffer)."""
        grey = np.asarray(grey)
        if grey.ndim != 2 or grey.dtype != np.uint8:
            raise DataError(f"the scan needs a grey uint8 frame (h, w), got {grey.dtype} {grey.shape}")
        self._plan(*grey.shape)
        starts = np.cumsum([0] + [r * c for _, (r, c), _ in self._levels])
        jobs = list(range(len(self._levels)))

        def level(i: int) -> None:
            (sw, sh), _, _ = self._levels[i]
            small = cv2.resize(grey, (sw, sh), interpolation=cv2.INTER_AREA)
            self.dense.window_features(small, self._X, int(starts[i]))

        if self.threads > 1 and len(jobs) > 1:
            # the largest level on the helper, the rest here: about half the pixels each
            fut = _helper().submit(level, 0)
            for i in jobs[1:]:
                level(i)
            fut.result()
        else:
            for i in jobs:
                level(i)
        return self._X


class NetworkPyramid:
    """The same windows (sides as fractions of the frame's shorter side, one step apart) embedded by a window
    network (:class:`~..features.network.NetworkFeatures` of kind ``"window"``): per scale the frame is shrunk
    so a window is the network's :data:`~..features.network_input.WINDOW` pixels, padded by the context margin
    (reflected, as a crop's context would be), normalised by
    :func:`~..features.network_input.local_contrast` and read in one pass; every window inside the frame is one
    row of ``X``, in the step of the network's cells. The interface of :class:`WindowPyramid`.
    ``stage_seconds``: the last frame's time in the network and in the rest (shrinking, normalising, gathering)."""

    def __init__(self, network, sides=DEFAULT_SIDES):
        from ..features.network_input import CONTEXT, STRIDE, WINDOW

        sides = tuple(float(s) for s in sides)
        if not sides or any(not 0 < s <= 1 for s in sides):
            raise ConfigError(f"window sides must be fractions of the frame's shorter side in (0, 1], got {sides}")
        self.network, self.sides = network, sides
        self.window, self.stride, self.context = WINDOW, STRIDE, CONTEXT
        self._shape = None
        self.stage_seconds = {}

    def _plan(self, h: int, w: int):
        if self._shape == (h, w):
            return
        win, st, ctx = self.window, self.stride, self.context
        levels, boxes, which = [], [], []
        for k, frac in enumerate(self.sides):
            f = win / (frac * min(h, w))
            if f > 1.0 + 1e-6:
                continue
            sw, sh = max(1, int(round(w * f))), max(1, int(round(h * f)))
            rows, cols = (sh - win) // st + 1, (sw - win) // st + 1    # windows inside the shrunk frame
            if rows <= 0 or cols <= 0:
                continue
            levels.append(((sw, sh), (rows, cols), f))
            boxes.append(grid_boxes(rows, cols, st, win, win, f))
            which.append(np.full(rows * cols, k, np.int64))
        if not levels:
            raise DataError(f"a {w}x{h} frame is too small to scan: its windows ({', '.join(f'{s:g}' for s in self.sides)} "
                            f"of its shorter side) are smaller than the network's {win}x{win} pixels")
        self._levels = levels
        self._boxes = np.concatenate(boxes)
        self._side_index = np.concatenate(which)
        self._X = np.empty((len(self._boxes), int(self.network.n_features_out_)), np.float32)
        self._shape = (h, w)
        self._ctx_cells = ctx // st

    boxes = WindowPyramid.boxes
    side_index = WindowPyramid.side_index

    def scales(self, h: int, w: int) -> list[dict]:
        """Per scale: window side in frame pixels and the number of windows (for reports)."""
        self._plan(h, w)
        return [{"window_side": round(self.window / f, 1), "windows": r * c} for _, (r, c), f in self._levels]

    def features(self, grey: np.ndarray) -> np.ndarray:
        """The network's embedding of every window of ``grey (h, w) uint8``: ``(n, D) float32`` (a reused buffer)."""
        import time

        from ..features.network_input import local_contrast

        grey = np.asarray(grey)
        if grey.ndim != 2 or grey.dtype != np.uint8:
            raise DataError(f"the scan needs a grey uint8 frame (h, w), got {grey.dtype} {grey.shape}")
        self._plan(*grey.shape)
        ctx, c0 = self.context, self._ctx_cells
        net = other = 0.0
        start = 0
        for (sw, sh), (rows, cols), _ in self._levels:
            t0 = time.perf_counter()
            small = cv2.resize(grey, (sw, sh), interpolation=cv2.INTER_AREA)
            small = cv2.copyMakeBorder(small, ctx, ctx, ctx, ctx, cv2.BORDER_REFLECT)
            x = local_contrast(small)
            t1 = time.perf_counter()
            out = self.network.windows(x)                          # (D, R, C) over the padded level
            t2 = time.perf_counter()
            grid = out[:, c0:c0 + rows, c0:c0 + cols]
            if grid.shape[1:] != (rows, cols):
                raise DataError(f"the window network gave a {out.shape[1]}x{out.shape[2]} grid for a {sw}x{sh} "
                                f"level: not the {rows}x{cols} windows of its cells")
            self._X[start:start + rows * cols] = grid.reshape(len(grid), -1).T
            start += rows * cols
            net += t2 - t1
            other += time.perf_counter() - t2 + t1 - t0
        self.stage_seconds = {"network": net, "levels": other}
        return self._X


def is_window_network(features) -> bool:
    """Whether ``features`` is a fitted window network (:class:`NetworkPyramid` can embed a frame's windows)."""
    return getattr(features, "kind_", None) == "window"


__all__ = ["DEFAULT_SIDES", "NetworkPyramid", "WindowPyramid", "is_window_network"]
