"""Orientation grids of ``hand-pose`` beyond its 30 default orientations, and reading a class name back.

The default grid (30 orientations around "palm forward") lives in :mod:`.hand_pose`. For more
classes, :func:`orientation_grid` spreads ``n`` orientations evenly over all of them, the way
Athitsos & Sclaroff's hand database was built (viewpoints uniform on the sphere x in-plane
rotations): ``m`` viewing directions on a Fibonacci sphere x ``r`` in-plane rolls evenly around the
circle, ``m * r = n``, with ``m`` and ``r`` chosen so that neighbouring directions and neighbouring
rolls are about equally far apart. Directions and rolls are Haar-uniform, so the product is an even
grid over all 3-D rotations.

Every grid orientation is stored as whole degrees (yaw, pitch, roll) in ``hand_model``'s convention
(``R = Rz(roll) Rx(pitch) Ry(yaw)``; the camera sees the hand from direction
``(-sin yaw cos pitch, sin pitch, cos yaw cos pitch)`` in the hand's frame), so a class name states
exactly the orientation its images are rendered at and :func:`parse_orientation` reads it back.
"""
from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from ..errors import DataError

#: largest ratio between the spacing of neighbouring directions and of neighbouring rolls
MAX_SPACING_RATIO = 2.0
#: most orientations a grid may have (81 shapes x this = 1.6 million classes)
MAX_ORIENTATIONS = 20_000

_PART = re.compile(r"^(turned (\d+)° (left|right)|fingers (\d+)° (toward camera|away)|leaning (\d+)° (left|right))$")


def _spacing(m: int, r: int) -> tuple[float, float]:
    """Nearest-neighbour spacing (radians) of ``m`` Fibonacci directions (hexagonal packing) and ``r`` rolls."""
    return float(np.sqrt(8 * np.pi / (np.sqrt(3) * m))), 2 * np.pi / r


def grid_shape(n: int) -> tuple[int, int]:
    """``(directions m, rolls r)`` with ``m * r = n`` whose spacings are closest to equal; DataError with
    nearby counts that work when no split of ``n`` keeps them within ``MAX_SPACING_RATIO``."""
    best = None
    for r in range(1, n + 1):
        if n % r:
            continue
        m = n // r
        if m < 2:
            continue
        a, b = _spacing(m, r)
        ratio = max(a, b) / min(a, b)
        if best is None or ratio < best[0]:
            best = (ratio, m, r)
    if best is None or best[0] > MAX_SPACING_RATIO:
        near = [k for k in range(max(31, n - 40), n + 41) if k != n and _ok(k)]
        near = sorted(near, key=lambda k: abs(k - n))[:4]
        raise DataError(f"hand-pose: {n} orientations cannot be split evenly into viewing directions x in-plane "
                        f"rolls; counts near it that can: {', '.join(map(str, sorted(near)))}")
    return best[1], best[2]


def _ok(n: int) -> bool:
    """Whether some split of ``n`` into directions x rolls keeps the spacings within the ratio."""
    for r in range(1, n // 2 + 1):
        if n % r == 0:
            a, b = _spacing(n // r, r)
            if max(a, b) / min(a, b) <= MAX_SPACING_RATIO:
                return True
    return False


@lru_cache(maxsize=16)
def orientation_grid(n: int) -> np.ndarray:
    """``(n, 3) int64`` (yaw, pitch, roll) in whole degrees: ``m`` Fibonacci viewing directions x ``r``
    rolls (:func:`grid_shape`), direction-major. Yaw in (-180, 180], pitch in [-90, 90], roll in
    (-180, 180]. Read-only; distinct rows."""
    n = int(n)
    if not 2 <= n <= MAX_ORIENTATIONS:
        raise DataError(f"hand-pose: an orientation grid needs 2 to {MAX_ORIENTATIONS} orientations, got {n}")
    m, r = grid_shape(n)
    i = np.arange(m, dtype=np.float64)
    z = 1.0 - (2.0 * i + 1.0) / m  # Fibonacci sphere: even in z, golden-angle turns in azimuth
    phi = i * np.pi * (3.0 - np.sqrt(5.0))
    rad = np.sqrt(1.0 - z * z)
    # the spiral's axis is the hand's vertical (y): pitch then runs over [-90, 90] evenly in sin
    v = np.stack([rad * np.cos(phi), z, rad * np.sin(phi)], 1)  # direction toward the camera, hand frame
    pitch = np.rad2deg(np.arcsin(np.clip(v[:, 1], -1, 1)))
    yaw = np.rad2deg(np.arctan2(-v[:, 0], v[:, 2]))
    rolls = np.arange(r) * 360.0 / r
    rolls = np.where(rolls > 180, rolls - 360, rolls)
    g = np.empty((m, r, 3))
    g[:, :, 0] = yaw[:, None]
    g[:, :, 1] = pitch[:, None]
    g[:, :, 2] = rolls[None, :]
    g = np.rint(g.reshape(-1, 3)).astype(np.int64)
    g[:, 0] = np.where(g[:, 0] <= -180, g[:, 0] + 360, g[:, 0])
    g[:, 2] = np.where(g[:, 2] <= -180, g[:, 2] + 360, g[:, 2])
    if len(np.unique(g, axis=0)) != n:  # whole degrees could only merge points far closer than the grid
        raise DataError(f"hand-pose: the {n}-orientation grid has coinciding orientations")
    g.setflags(write=False)
    return g


def parse_orientation(text: str) -> tuple[int, int, int]:
    """``(yaw, pitch, roll)`` degrees from an orientation name (``hand_pose.orientation_name``'s
    format: ``"palm forward · turned 30° left · fingers 30° away · leaning 20° right"``); DataError
    when it is not one."""
    parts = [p.strip() for p in text.split("·")]
    if not parts or parts[0] != "palm forward":
        raise DataError(f"{text!r} is not a hand-pose orientation")
    yaw = pitch = roll = 0
    seen: set[int] = set()
    for p in parts[1:]:
        m = _PART.match(p)
        if not m:
            raise DataError(f"{text!r} is not a hand-pose orientation (at {p!r})")
        kind = 0 if m.group(2) else 1 if m.group(4) else 2
        if kind in seen or (seen and kind < max(seen)):
            raise DataError(f"{text!r} is not a hand-pose orientation (parts out of order)")
        seen.add(kind)
        if kind == 0:
            yaw = int(m.group(2)) * (1 if m.group(3) == "right" else -1)
        elif kind == 1:
            pitch = int(m.group(4)) * (1 if m.group(5) == "toward camera" else -1)
        else:
            roll = int(m.group(6)) * (1 if m.group(7) == "left" else -1)
        if (kind == 0 and not 0 < abs(yaw) <= 180) or (kind == 1 and not 0 < abs(pitch) <= 90) \
                or (kind == 2 and not 0 < abs(roll) <= 180):
            raise DataError(f"{text!r} is not a hand-pose orientation (angle out of range)")
    return yaw, pitch, roll


__all__ = ["MAX_ORIENTATIONS", "grid_shape", "orientation_grid", "parse_orientation"]
