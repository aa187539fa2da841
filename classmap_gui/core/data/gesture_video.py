"""A rendered take of a hand gesture that is not among the 81 shapes: a person's own gesture as a camera films it,
for the Run panel's *Add a gesture…* (its test and README screenshot play it as the camera).

The gesture is a finger-state code of :mod:`.hand_shapes` (``"IMRL/spread/thumb"``, e.g. ``"EEFE/s/out"``: index,
middle and little finger up, ring finger down, thumb out; :func:`.hand_shapes.code_pose`). The hand is framed
by a centred square (:data:`FILL` of the shorter side: the Run panel's Box at that size reads it as one crop),
drifting a little in place and orientation in front of a static clutter scene, in one light: a person showing a
gesture to the Run panel. (``bench
add-gesture``'s takes, :mod:`classmap_gui.bench.gesture_takes`, put a smaller hand anywhere in the frame for the
scan to find, in many styles.)
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import DataError
from .hand_shapes import SHAPE_CODES, code_pose

#: the hand's square as a share of the frame's shorter side: within the scan's window sides (at most 0.62), so
#: the scan boxes it; the Run panel's Box at this size reads it framed as the recorded crops are
FILL = 0.56


def gesture_frames(code: str, n: int, size: tuple[int, int] = (240, 320), seed: int = 0,
                   orientation=(0.0, -30.0, 20.0), fill: float = FILL):
    """Yield ``n`` frames ``(h, w, 3)`` uint8 RGB of the gesture ``code`` framed by a centred square of ``fill``
    of the shorter side, drifting by a few per cent and ±12° of yaw around ``orientation`` (yaw, pitch, roll)."""
    from .hand_scene import clutter_scene, finish, paste_hand

    if code in dict(SHAPE_CODES).values():
        raise DataError(f"gesture code {code!r} is one of the 81 shapes already")
    h, w = size
    rng = np.random.default_rng([seed, 211])
    scene = clutter_scene(rng, h, w)
    params = code_pose(code)
    side = fill * min(h, w)
    for f in range(n):
        u = 2 * np.pi * f / max(1, n)
        cx, cy = w / 2 + 0.03 * side * np.sin(u), h / 2 + 0.03 * side * np.cos(1.3 * u)
        angles = np.asarray(orientation, np.float64) + (12.0 * np.sin(u), 5.0 * np.sin(2 * u), 6.0 * np.cos(u))
        img = paste_hand(scene, params, angles, (cx - side / 2, cy - side / 2, side))
        yield finish(img, rng)


def write_gesture_video(path: str | Path, code: str, seconds: float = 8.0, fps: float = 15.0,
                        size: tuple[int, int] = (240, 320), seed: int = 0) -> int:
    """Write :func:`gesture_frames` as an MJPG ``.avi`` of ``seconds`` at ``fps``; returns its frame count."""
    import cv2

    n = max(1, int(round(seconds * fps)))
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), float(fps), (int(size[1]), int(size[0])))
    if not vw.isOpened():
        raise DataError(f"cannot write an MJPG video to {path}")
    try:
        for frame in gesture_frames(code, n, size, seed):
            vw.write(cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))
    finally:
        vw.release()
    return n


__all__ = ["FILL", "gesture_frames", "write_gesture_video"]
