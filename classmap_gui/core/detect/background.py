"""The background class: what a window without a hand looks like, so a scan can reject it.

Generated crops (grey, the recogniser's size) of two kinds, from scenes of :mod:`..data.hand_scene`
on their own random streams (never the test video's):

* clutter: square crops of clutter scenes at the window sizes a scan uses;
* near misses: crops of scenes *with* a hand that frame it badly — overlapping the true box by IoU
  0.02 .. :data:`NEAR_MISS_IOU` (shifted, or a part of the hand seen too close, or the hand too small
  in a large crop) — the windows around a hand that must lose to the one that frames it.

A person adds their own (a wall, a desk, an empty room) by filing images under
:data:`~..data.imageset.BACKGROUND_CLASS`; :func:`with_background` merges generated ones into a set.
"""
from __future__ import annotations

import cv2
import numpy as np

from ..data.imageset import BACKGROUND_CLASS, ImageSet
from ..errors import DataError
from ..progress import ProgressFn, StopFn, check_stop, report

#: crops taken from each generated scene
CROPS_PER_SCENE = 24
#: a crop overlapping the true hand box less than this frames it badly: background (IoU >= 0.5 is a hit)
NEAR_MISS_IOU = 0.45


def _box_iou(a, b) -> float:
    ix = max(0.0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[1] + a[2], b[1] + b[2]) - max(a[1], b[1]))
    inter = ix * iy
    return inter / (a[2] ** 2 + b[2] ** 2 - inter)


def background_images(n: int, size: tuple[int, int] = (64, 64), *, seed: int = 0, near_miss: float = 0.5,
                      scene_size: tuple[int, int] = (240, 320), progress: ProgressFn = None,
                      should_stop: StopFn = None) -> np.ndarray:
    """``n`` background crops ``(n, h, w)`` uint8 grey: a ``near_miss`` share of them near a hand, the
    rest plain clutter. Deterministic for (n, size, seed, near_miss, scene_size)."""
    from ..data.hand_pose import orientations
    from ..data.hand_scene import clutter_scene, paste_hand
    from ..data.hand_shapes import all_poses
    from ..data.hand_style import CLEAN

    if n < 0:
        raise DataError(f"background crops: n must be >= 0, got {n}")
    H, W = scene_size
    out = np.empty((n, *size), np.uint8)
    poses, orients = all_poses(), np.asarray(orientations(), np.float64)
    short = min(H, W)
    k = 0
    scene_i = 0
    while k < n:
        check_stop(should_stop)
        rng = np.random.default_rng([seed, 733, scene_i])
        scene = clutter_scene(rng, H, W)
        with_hand = rng.random() < near_miss
        hand = None
        if with_hand:
            side = short * rng.uniform(0.3, 0.6)
            hand = (rng.uniform(0, W - side), rng.uniform(0, H - side), side)
            ang = orients[rng.integers(len(orients))] + rng.uniform(-5, 5, 3)
            skin = np.asarray(CLEAN.skins[rng.integers(len(CLEAN.skins))], np.float32)
            img = paste_hand(scene, poses[rng.integers(len(poses))], ang, hand, skin=skin,
                             light=(rng.uniform(-0.5, 0.5), rng.uniform(-0.6, 0.2), 0.82), ambient=rng.uniform(0.25, 0.45))
            scene = np.clip(np.rint(img + rng.normal(0, 2.0, img.shape)), 0, 255).astype(np.uint8)
        grey = cv2.cvtColor(scene, cv2.COLOR_RGB2GRAY)
        got, tries = 0, 0
        while got < CROPS_PER_SCENE and k < n and tries < 50 * CROPS_PER_SCENE:
            tries += 1
            side = short * rng.uniform(0.25, 0.7)
            x, y = rng.uniform(0, W - side), rng.uniform(0, H - side)
            if hand is not None:
                if not 0.02 < _box_iou((x, y, side), hand) < NEAR_MISS_IOU:
                    continue                     # a near miss, not a good crop and not plain clutter
            crop = grey[int(y):int(y + side), int(x):int(x + side)]
            out[k] = cv2.resize(crop, (size[1], size[0]), interpolation=cv2.INTER_AREA)
            k += 1
            got += 1
        scene_i += 1
        report(progress, k / max(1, n), "background crops")
    return out


def with_background(imageset, images: np.ndarray):
    """``imageset`` with ``images`` (uint8, its image size, grey or colour as the set) added to the
    :data:`BACKGROUND_CLASS` class (created as the last class when the set has none). An encoded set
    (:class:`~..train.encode.EncodedSet`) takes their feature rows instead, so the images need never be joined."""
    from ..train.encode import EncodedSet

    names = list(imageset.class_names)
    if BACKGROUND_CLASS in names:
        label = names.index(BACKGROUND_CLASS)
    else:
        label = len(names)
        names.append(BACKGROUND_CLASS)
    labels = np.concatenate([imageset.labels, np.full(len(images), label, np.int64)])
    if isinstance(imageset, EncodedSet):
        rows = np.asarray(images)
        if rows.dtype != np.float32 or rows.shape[1:] != imageset.X.shape[1:]:
            raise DataError(f"background features must be float32 rows of width {imageset.X.shape[1]}, got "
                            f"{rows.dtype} {rows.shape}")
        return EncodedSet(np.concatenate([imageset.X, rows]), labels, names, imageset.features, imageset.image_size,
                          imageset.is_color, imageset.name)
    images = np.asarray(images)
    if images.shape[1:] != imageset.images.shape[1:] or images.dtype != np.uint8:
        raise DataError(f"background images must be uint8 of shape {imageset.images.shape[1:]}, got "
                        f"{images.dtype} {images.shape[1:]}")
    sources = None if imageset.sources is None else list(imageset.sources) + [""] * len(images)
    return ImageSet(np.concatenate([imageset.images, images]), labels, names, sources, [], imageset.name)





def hard_negatives(recogniser, n: int, *, seed: int = 0, per_scene: int = 8, scene_size: tuple[int, int] = (240, 320),
                   sides=None, background_weight: float | None = None, progress: ProgressFn = None,
                   should_stop: StopFn = None) -> np.ndarray:
    """Dalal & Triggs' bootstrap: ``n`` crops ``(n, h, w)`` uint8 grey of the windows ``recogniser`` scores
    highest (brute force, every window) in generated hand scenes although they do not frame the hand
    (IoU < :data:`NEAR_MISS_IOU` with its true box) — the false alarms to add to the background class
    before retraining. ``background_weight``: the scanner's (None: its default); mine with the weight
    the scan will rank windows by, so the false alarms mined are the ones that scan would make."""
    from ..data.hand_scene import random_hand_scene
    from .pyramid import DEFAULT_SIDES
    from .boxes import iou
    from .scanner import Scanner

    sc = Scanner(recogniser, "brute_force", sides=DEFAULT_SIDES if sides is None else sides,
                 background_weight=background_weight)
    h, w = recogniser.image_size
    H, W = scene_size
    out = np.empty((n, h, w), np.uint8)
    k, i = 0, 0
    while k < n:
        check_stop(should_stop)
        grey, box = random_hand_scene(np.random.default_rng([seed, 977, i]), H, W)
        i += 1
        score, boxes = sc.window_scores(grey)
        order = np.argsort(-score)
        got = 0
        for j in order[:200]:
            if got >= per_scene or k >= n:
                break
            bx = boxes[j]
            if iou(bx, (box[0], box[1], box[2], box[2])) >= NEAR_MISS_IOU:
                continue
            x, y, s = int(round(bx[0])), int(round(bx[1])), int(round(bx[2]))
            crop = grey[max(0, y):y + s, max(0, x):x + s]
            if crop.size == 0:
                continue
            out[k] = cv2.resize(crop, (w, h), interpolation=cv2.INTER_AREA)
            k += 1
            got += 1
        report(progress, k / max(1, n), "hard negatives")
    return out


__all__ = ["CROPS_PER_SCENE", "NEAR_MISS_IOU", "background_images", "hard_negatives", "with_background"]
