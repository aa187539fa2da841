"""A demo video: a rendered hand moving through hand shapes and orientations in front of clutter.

The app's live demo plays it as a camera. The hand holds each key pose (a shape and grid orientation
of ``hand-pose-small``, so a model trained on that set has a right answer for it) for a moment, then
moves smoothly (joint angles and orientation eased together) to the next, in front of a slowly
panning procedural clutter scene. It does so in three *takes* (:data:`TAKES`): every pose comes round
three times, each time at another place and size in the frame, in another light and before another
background, with a moment of the empty scene between takes. So a person following the README records
a few bursts per class that differ (a repeat of the same frames would be skipped as such), and the test
part of a training holds whole bursts it never trained on. In the first take the hand fills as much of
the centred square (the region the app's run panel crops) as in the ``clean`` training images. MJPG in
an ``.avi`` (OpenCV writes and reads it everywhere). Regenerate the shipped file with::

    PYTHONPATH=. .venv/bin/python -m classmap_gui.core.data.hand_video resources/demo-hands.avi

The *find-the-hand* variant (:func:`find_hand_frames`, ``resources/demo-find-hand.avi``) moves a
smaller hand across a static cluttered scene while it changes pose, and knows the true hand box of
every frame (:mod:`.hand_scene`): the test video of ``classmap bench scan``. Regenerate with::

    PYTHONPATH=. .venv/bin/python -m classmap_gui.core.data.hand_video resources/demo-find-hand.avi find-hand
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DataError
from .clutter import make_tile
from .hand_render import render_pose
from .hand_shapes import shape_pose
from .hand_style import CLEAN

# (shape, yaw, pitch, roll): shapes of hand-pose-small at orientations of its 10-orientation grid.
KEY_POSES: tuple[tuple[str, int, int, int], ...] = (
    ("5", 0, -30, 20), ("B", 0, -30, 20), ("V", 0, -30, 20), ("L", -30, -30, -20), ("Y", -30, -30, -20),
    ("A", 0, 30, -20), ("1", 30, -30, 20),
)


@dataclass(frozen=True)
class Take:
    """One pass of the hand through every key pose, filmed differently: the hand's ``place`` (its shift in
    the frame, fractions of the shorter side), ``size`` (its fill times the training images'), the
    ``light`` (direction; ``gain`` for its strength) and the ``scene`` (clutter families behind it)."""

    place: tuple[float, float]
    size: float
    light: tuple[float, float, float]
    gain: float
    scene: tuple[str, ...]


#: the three takes: a person recording "a few bursts per class" meets each pose three times, each time at
#: another place and size, in another light, before another background (issue 39)
TAKES: tuple[Take, ...] = (
    Take((0.0, 0.0), 1.0, (-0.35, -0.45, 0.82), 1.0, ("blobs", "foliage")),
    Take((0.05, -0.04), 0.88, (0.45, -0.3, 0.84), 0.82, ("grain", "blobs")),
    Take((-0.05, 0.04), 1.08, (-0.1, 0.55, 0.83), 1.12, ("foliage", "fractal")),
)
#: seconds of the empty scene after each take but the last (no hand: what "no hand" looks like)
EMPTY_SECONDS = 0.8


def _ease(t: float) -> float:
    return t * t * (3.0 - 2.0 * t)


def _timeline(keys, n_hold: int, n_move: int) -> list:
    """``(params, angles, label)`` per frame: each key pose held ``n_hold`` frames, then ``n_move``
    eased in-between frames (label None) to the next."""
    timeline = []
    for i, (pa, aa, lab) in enumerate(keys):
        timeline += [(pa, aa, lab)] * n_hold
        if i + 1 < len(keys):
            pb, ab, _ = keys[i + 1]
            for k in range(1, n_move + 1):
                t = _ease(k / (n_move + 1))
                timeline.append((pa + t * (pb - pa), aa + t * (ab - aa), None))
    return timeline


def _takes_timeline(keys, n_hold: int, n_move: int, n_empty: int) -> list:
    """``(take index, params or None, angles, label)`` per frame: every take's pass through ``keys``, an
    empty scene of ``n_empty`` frames (params None) between takes; the last take returns to the first pose."""
    out = []
    for t in range(len(TAKES)):
        # the last take ends on the first pose again, so the looping video joins up (its first frames' truth)
        last = t + 1 == len(TAKES)
        out += [(t, pa, aa, lab) for pa, aa, lab in _timeline(list(keys) + (list(keys[:1]) if last else []),
                                                              n_hold, n_move)]
        if t + 1 < len(TAKES):
            out += [(t, None, None, None)] * n_empty
    return out


def demo_frames(size: tuple[int, int] = (240, 320), fps: float = 15.0, hold: float = 0.8, move: float = 0.4,
                fill: float | None = None, seed: int = 0, poses=None):
    """Yield ``(frame, label)``: ``(h, w, 3)`` uint8 RGB frames and the key pose shown (None while moving or
    while the scene is empty). Every key pose (``poses``, None: :data:`KEY_POSES`, the shipped video's) appears
    once per :data:`TAKES` entry; ``seed`` draws the scenes and the noise."""
    h, w = size
    fill = CLEAN.fill if fill is None else fill  # as large as in the training images
    rng = np.random.default_rng([seed, 97])
    n_hold, n_move = max(1, round(hold * fps)), max(1, round(move * fps))
    n_empty = max(1, round(EMPTY_SECONDS * fps))
    side = 2 * h
    # one wide scene per take (clean families, never a tile of the data sets' banks), panned across once
    scenes = [np.hstack([make_tile(fam, rng, side) for fam in take.scene]) for take in TAKES]
    keys = [(shape_pose(s), np.array([y, p, r], np.float64), (s, y, p, r))
            for s, y, p, r in (KEY_POSES if poses is None else poses)]
    skin = np.array([214, 160, 122], np.float32)
    timeline = _takes_timeline(keys, n_hold, n_move, n_empty)
    per_take = np.bincount([t for t, *_ in timeline], minlength=len(TAKES))
    seen = np.zeros(len(TAKES), np.int64)
    for take_i, params, ang, lab in timeline:
        take, scene = TAKES[take_i], scenes[take_i]
        f, seen[take_i] = seen[take_i], seen[take_i] + 1
        x0 = int((scene.shape[1] - w) * f / max(1, per_take[take_i] - 1))
        y0 = (side - h) // 2
        bg = scene[y0:y0 + h, x0:x0 + w].astype(np.float32) * np.float32(0.75 + 0.25 * take.gain)
        if params is None:
            img = bg
        else:
            shade, alpha = render_pose(params, *ang, (h, w), fill=fill * take.size, light=take.light, ambient=0.3,
                                       shift=take.place)
            img = bg + alpha[..., None] * (np.minimum(1.0, shade * take.gain)[..., None] * skin - bg)
        img = img + rng.normal(0, 1.5, img.shape).astype(np.float32)  # sensor noise
        yield np.clip(np.rint(img), 0, 255).astype(np.uint8), lab


def demo_labels(fps: float = 15.0, hold: float = 0.8, move: float = 0.4) -> list:
    """The key pose ``(shape, yaw, pitch, roll)`` of each frame :func:`demo_frames` yields with these
    timings (None while moving or empty): the truth of the shipped demo video, frame by frame."""
    return [lab for _t, lab, _in in demo_timeline(fps, hold, move)]


#: the shipped videos of a rendered hand (``resources/``): what is recorded from them is images of hands
HAND_VIDEOS = ("demo-hands.avi", "demo-find-hand.avi")


def shows_hands(source) -> bool:
    """Whether ``source`` (a video's path or name; a camera's index) is one of :data:`HAND_VIDEOS`, so the
    images recorded from it are of hands (the Train panel then proposes the hand network's features)."""
    return isinstance(source, (str, Path)) and Path(source).name in HAND_VIDEOS


def demo_timeline(fps: float = 15.0, hold: float = 0.8, move: float = 0.4,
                  poses=None) -> list[tuple[int, tuple | None, bool]]:
    """``(take, key pose or None, hand in view)`` of each frame :func:`demo_frames` yields with these timings
    (and ``poses``): which of :data:`TAKES` it belongs to, the pose held (None while moving or empty) and whether
    the hand is in the frame at all (False on the empty scene between takes)."""
    n_hold, n_move = max(1, round(hold * fps)), max(1, round(move * fps))
    zero = np.zeros(1)
    return [(t, lab, params is not None) for t, params, _a, lab in _takes_timeline(
        [(zero, zero, k) for k in (KEY_POSES if poses is None else poses)], n_hold, n_move,
        max(1, round(EMPTY_SECONDS * fps)))]


def find_hand_labels(fps: float = 15.0, hold: float = 0.6, move: float = 0.4, poses=None) -> list:
    """The key pose of each frame :func:`find_hand_frames` yields with these timings through ``poses`` (None:
    :data:`FIND_HAND_POSES`, the shipped ``demo-find-hand.avi``'s), None while the hand changes pose."""
    n_hold, n_move = max(1, round(hold * fps)), max(1, round(move * fps))
    zero = np.zeros(1)
    keys = FIND_HAND_POSES if poses is None else poses
    return [lab for *_, lab in _timeline([(zero, zero, k) for k in keys], n_hold, n_move)]


def random_key_poses(seed: int, n: int = len(KEY_POSES)) -> tuple[tuple[str, int, int, int], ...]:
    """``n`` key poses ``(shape, yaw, pitch, roll)`` drawn from all 2430 hand-pose classes (81 shapes x 30
    grid orientations), from ``seed`` alone: the poses of ``bench scan``'s validation and test videos."""
    from .hand_pose import orientations
    from .hand_shapes import SHAPE_NAMES

    rng = np.random.default_rng([int(seed), 139])
    grid = orientations()
    return tuple((SHAPE_NAMES[int(rng.integers(len(SHAPE_NAMES)))], *grid[int(rng.integers(len(grid)))])
                 for _ in range(int(n)))


#: the poses a find-the-hand video goes through by default (the demo video's poses before it had takes)
SCAN_POSES: tuple[tuple[str, int, int, int], ...] = KEY_POSES + (
    ("C", 60, 0, -20), ("O", 30, 30, 20), ("ILY", 0, -30, 20), ("S", -60, 0, 20), ("H", 0, 30, -20),
    ("3", 30, -30, 20), ("5", 0, -30, 20))
#: the shipped find-the-hand video's poses (``resources/demo-find-hand.avi``)
FIND_HAND_POSES = SCAN_POSES[:8]

#: the find-the-hand video's hand: box side as a fraction of the frame's shorter side (min, max)
FIND_HAND_SIDES = (0.35, 0.55)


def find_hand_frames(size: tuple[int, int] = (240, 320), fps: float = 15.0, hold: float = 0.6, move: float = 0.4,
                     seed: int = 0, poses=SCAN_POSES, skin=(214, 160, 122)):
    """Yield ``(frame, label, box)``: ``(h, w, 3)`` uint8 RGB frames of a hand travelling across a
    cluttered scene, the key pose held (``(shape, yaw, pitch, roll)``, None while changing pose) and
    the true hand box ``(x, y, side)`` in pixels (the square that frames the hand as the training
    images do; see :mod:`.hand_scene`). The path, sizes and scene depend on ``seed`` only, in frame-size
    units: a 640 x 480 video has the same path and hand sizes relative to the frame as a 320 x 240 one."""
    from .hand_scene import clutter_scene, finish, paste_hand

    h, w = size
    rng = np.random.default_rng([seed, 131])
    phase = np.random.default_rng([seed, 137]).uniform(0, 2 * np.pi, 3)   # the path: the same at any frame size
    scene = clutter_scene(rng, h, w)
    n_hold, n_move = max(1, round(hold * fps)), max(1, round(move * fps))
    keys = [(shape_pose(s), np.array([y, p, r], np.float64), (s, y, p, r)) for s, y, p, r in poses]
    timeline = _timeline(keys, n_hold, n_move)
    n = len(timeline)
    short = min(h, w)
    lo, hi = FIND_HAND_SIDES
    for f, (params, ang, lab) in enumerate(timeline):
        u = f / max(1, n - 1)
        side = short * (lo + (hi - lo) * (0.5 + 0.5 * np.sin(2 * np.pi * 1.5 * u + phase[0])))
        # across the frame and back once, bobbing up and down: every region of the scene gets a visit
        cx = side / 2 + (w - side) * (0.5 - 0.5 * np.cos(2 * np.pi * u))
        cy = side / 2 + (h - side) * (0.5 + 0.45 * np.sin(2 * np.pi * 2.0 * u + phase[2]))
        box = (cx - side / 2, cy - side / 2, side)
        light = (-0.35 + 0.2 * np.sin(2 * np.pi * u), -0.45, 0.82)
        img = paste_hand(scene, params, ang, box, skin=skin, light=light, ambient=0.3)
        yield finish(img, rng), lab, tuple(float(v) for v in box)


def write_demo_video(path: str | Path, size: tuple[int, int] = (240, 320), fps: float = 15.0, quality: int | None = None,
                     seed: int = 0, variant: str = "poses", poses=SCAN_POSES) -> dict:
    """Write the demo video as MJPG ``.avi`` at ``size`` (h, w); returns ``{"frames", "seconds", "bytes"}``.
    ``variant``: ``"poses"`` (the hand holding poses, centred) or ``"find-hand"`` (:func:`find_hand_frames`
    through ``poses``)."""
    if variant not in ("poses", "find-hand"):
        raise DataError(f"demo video variant must be poses or find-hand, got {variant!r}")
    import cv2

    path = Path(path)
    h, w = size
    fourcc = cv2.VideoWriter_fourcc(*"MJPG")
    # quality=None: the default (FFmpeg) writer, which picks its own JPEG quality and makes the smallest
    # files here; a number: OpenCV's own MJPEG writer, which honours it (80 is ~2.4x larger).
    if quality is None:
        vw = cv2.VideoWriter(str(path), fourcc, float(fps), (int(w), int(h)))
    else:
        vw = cv2.VideoWriter(str(path), cv2.CAP_OPENCV_MJPEG, fourcc, float(fps), (int(w), int(h)))
        vw.set(cv2.VIDEOWRITER_PROP_QUALITY, float(quality))
    if not vw.isOpened():
        raise DataError(f"cannot write an MJPG video to {path}")
    n = 0
    try:
        frames = (demo_frames(size, fps, seed=seed) if variant == "poses"
                  else (fr[:2] for fr in find_hand_frames(size, fps, seed=seed, poses=poses)))
        for frame, _ in frames:
            vw.write(cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))
            n += 1
    finally:
        vw.release()
    return {"frames": n, "seconds": round(n / fps, 1), "bytes": path.stat().st_size}


if __name__ == "__main__":
    variant = sys.argv[2] if len(sys.argv) > 2 else "poses"
    # the shipped find-hand file: the first 8 key poses (8 s, ~1.5 MB; noisy clutter compresses poorly)
    print(write_demo_video(sys.argv[1] if len(sys.argv) > 1 else "demo-hands.avi", variant=variant,
                           poses=FIND_HAND_POSES if variant == "find-hand" else KEY_POSES))
