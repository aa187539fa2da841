"""Crops for a window network (:mod:`..features.network`, kind ``"window"``): a window with its context.

A window network reads a window of :data:`~..features.network_input.WINDOW` pixels with a margin of
:data:`~..features.network_input.CONTEXT` around it, as the window sits inside a frame. Training crops (the
``classmap train-network --arch dense`` stream) and the hand model's class images are drawn the same way:
:func:`context_style` frames the hand in the central window of a :data:`~..features.network_input.CROP`
image, and :func:`near_misses` moves it out of the window (what a frame's neighbouring windows see), for the
background class.
"""
from __future__ import annotations

import dataclasses

import cv2
import numpy as np

from ..features.network_input import CROP, WINDOW


def context_style(style):
    """``style`` (a :class:`~..data.hand_style.HandStyle`) framed for a :data:`CROP` image whose central
    :data:`WINDOW` is what the style frames: the hand's size and shift scaled by ``WINDOW / CROP``."""
    r = WINDOW / CROP
    return dataclasses.replace(style, fill=style.fill * r, shift_jitter=style.shift_jitter * r)


def near_misses(images: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Hands moved out of the window: each crop ``(n, CROP, CROP)`` uint8 shifted by 35-60 % of the window in
    a random direction, or scaled by 0.45-0.6 or 1.7-2.2 about a point near its centre (reflected border):
    the window then holds part of a hand, a hand far too small, or a close-up of one."""
    out = np.empty_like(images)
    kind = rng.integers(0, 3, len(images))
    for i in range(len(images)):
        if kind[i] == 0:
            a = rng.uniform(0, 2 * np.pi)
            d = rng.uniform(0.35, 0.6) * WINDOW
            M = np.float32([[1, 0, d * np.cos(a)], [0, 1, d * np.sin(a)]])
        else:
            z = rng.uniform(0.45, 0.6) if kind[i] == 1 else rng.uniform(1.7, 2.2)
            cx, cy = CROP / 2 + rng.uniform(-8, 8, 2)
            M = np.float32([[z, 0, (1 - z) * cx], [0, z, (1 - z) * cy]])
        out[i] = cv2.warpAffine(images[i], M, (CROP, CROP), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    return out


__all__ = ["context_style", "crops_for", "near_misses", "with_context"]


def crops_for(recogniser, style):
    """``(style, size)`` that generate hand crops as ``recogniser`` reads them: a window network's crops carry
    their window's context (:func:`context_style` at ``CROP`` pixels); other models' the style as it is at their
    image size."""
    if float(getattr(recogniser.features, "context_", 0.0)) > 0:
        return context_style(style), (CROP, CROP)
    return style, tuple(recogniser.image_size)


def with_context(image: np.ndarray, context: float) -> np.ndarray:
    """``image`` (a window: ``(h, w)`` or ``(h, w, c)`` uint8, e.g. the Run panel's capture box) with a margin of
    ``context`` of its side around it, its edge repeated: what a window network's crop holds around its window
    when no frame is there to take it from (``context`` 0: the image itself). Measured on the demo video's
    key-pose frames with the built window model (the Run panel's whole-frame box): shape named in 67 of 88 with
    the edge repeated, 41 reflected, 44 without a margin."""
    if not context:
        return image
    m = int(round(float(context) * max(image.shape[:2])))
    return cv2.copyMakeBorder(np.ascontiguousarray(image), m, m, m, m, cv2.BORDER_REPLICATE)
