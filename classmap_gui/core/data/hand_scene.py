"""A rendered hand at a known place in a cluttered scene: the frames detection is tested on.

``hand_box`` is what a hand detector should return: the square crop that frames the hand as the
``hand-pose`` training images do (the hand's bounding box, forearm excluded, spans ``CLEAN.fill`` of
the side, centred). The hand is rendered into that square by the same renderer as the data sets
(:func:`.hand_render.render_pose`) and composited over a procedural clutter scene
(:func:`.clutter.make_tile`, the ``clean`` families; the scene's own random stream, never one of
the data sets' tiles). Colour frames ``(h, w, 3)`` uint8 RGB.
"""
from __future__ import annotations

import numpy as np

from .clutter import CLEAN_FAMILIES, make_tile
from .hand_render import render_pose
from .hand_style import CLEAN

#: the square a hand is rendered into, as a multiple of its box: the forearm shows past the box's edge
ARM_REACH = 3.0
#: the scenes' clutter contrast about its mean: the clean style's strongest (training spans 0.3 .. 0.75)
SCENE_CONTRAST = 0.75


def clutter_scene(rng: np.random.Generator, height: int, width: int, families=CLEAN_FAMILIES) -> np.ndarray:
    """A ``(height, width, 3)`` uint8 RGB scene: a grid of clutter tiles (half the height each) of random
    ``families``, contrast :data:`SCENE_CONTRAST` about the mean."""
    side = max(8, int(height) // 2)
    rows, cols = -(-int(height) // side), -(-int(width) // side)
    tiles = [[make_tile(families[int(rng.integers(len(families)))], rng, side) for _ in range(cols)]
             for _ in range(rows)]
    scene = np.vstack([np.hstack(r) for r in tiles])[:height, :width].astype(np.float32)
    mu = scene.mean(axis=(0, 1))
    return np.clip(np.rint(mu + SCENE_CONTRAST * (scene - mu)), 0, 255).astype(np.uint8)


def paste_hand(scene: np.ndarray, params: np.ndarray, angles, box, *, skin=(214, 160, 122),
               light=(-0.35, -0.45, 0.82), ambient: float = 0.3, fill: float | None = None) -> np.ndarray:
    """``scene`` with a hand (joint angles ``params`` (21,), ``angles`` (yaw, pitch, roll) degrees)
    framed in the square ``box`` (x, y, side) pixels; the part of the box outside the frame is cut.
    Returns a new float32 ``(h, w, 3)`` image (0..255)."""
    h, w = scene.shape[:2]
    x, y, side = (int(round(v)) for v in box)
    fill = CLEAN.fill if fill is None else fill
    # rendered into a square ARM_REACH times the box, centred on it, so the forearm runs on past the box's
    # edge as a real arm does (cut at the box, its end would be a cue no real hand gives)
    pad = int(round(side * (ARM_REACH - 1) / 2))
    big = side + 2 * pad
    shade, alpha = render_pose(params, *angles, (big, big), fill=fill * side / big, light=light, ambient=ambient)
    x, y, side = x - pad, y - pad, big
    out = scene.astype(np.float32)
    x0, y0, x1, y1 = max(0, x), max(0, y), min(w, x + side), min(h, y + side)
    if x1 <= x0 or y1 <= y0:
        return out
    a = alpha[y0 - y:y1 - y, x0 - x:x1 - x, None]
    s = shade[y0 - y:y1 - y, x0 - x:x1 - x, None] * np.asarray(skin, np.float32)
    region = out[y0:y1, x0:x1]
    region += a * (s - region)
    return out


def finish(img: np.ndarray, rng: np.random.Generator, noise: float = 2.0) -> np.ndarray:
    """Sensor noise and rounding: float32 0..255 -> uint8."""
    img = img + rng.normal(0, noise, img.shape).astype(np.float32)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def random_hand_scene(rng: np.random.Generator, height: int = 240, width: int = 320):
    """A scene for training and mining detectors: ``(grey (height, width) uint8, true box (x, y, side))`` — a
    hand of a random shape, orientation (±5° jitter), skin and light, 0.33-0.57 of the shorter side, over
    clutter, all drawn from ``rng``."""
    import cv2

    from .hand_pose import orientations
    from .hand_shapes import all_poses

    poses, orients = all_poses(), np.asarray(orientations(), np.float64)
    side = min(height, width) * rng.uniform(0.33, 0.57)
    box = (rng.uniform(0, width - side), rng.uniform(0, height - side), side)
    skin = np.asarray(CLEAN.skins[rng.integers(len(CLEAN.skins))], np.float32)
    img = paste_hand(clutter_scene(rng, height, width), poses[rng.integers(len(poses))],
                     orients[rng.integers(len(orients))] + rng.uniform(-5, 5, 3), box, skin=skin,
                     light=(rng.uniform(-0.5, 0.5), rng.uniform(-0.6, 0.2), 0.82), ambient=rng.uniform(0.25, 0.45))
    return cv2.cvtColor(finish(img, rng), cv2.COLOR_RGB2GRAY), box


__all__ = ["ARM_REACH", "SCENE_CONTRAST", "clutter_scene", "finish", "paste_hand", "random_hand_scene"]
