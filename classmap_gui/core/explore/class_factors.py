"""What a map can be coloured by: a class's factors (hand shape, yaw, pitch, roll) when its set has
them, else the class itself, or whether each image was recognised.

``factors_of(names)`` recognises the generated pose sets (hand-pose, glyph-pose and their subsets) from
their class names; ``colouring(...)`` turns one choice into group codes for classes and images plus
the groups' names, which the GUI maps to colours. Pure numpy: tested without a window.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError, DataError

FACTORS = ("shape", "yaw", "pitch", "roll")
RIGHT_WRONG = "right/wrong"


def factors_of(class_names: list[str]) -> dict | None:
    """``{"shape", "shape_index", "yaw", "pitch", "roll"}`` per class (see ``hand_pose.class_factors``)
    when every name is a hand-pose or every name a glyph-pose class; None for any other set."""
    from ..data import glyph_pose, hand_pose

    from ..data.imageset import BACKGROUND_CLASS

    names = [str(n) for n in class_names]
    bg = [i for i, n in enumerate(names) if n == BACKGROUND_CLASS]
    rest = [n for n in names if n != BACKGROUND_CLASS]
    if not rest:
        return None
    for mod in (hand_pose, glyph_pose):
        try:
            f = mod.class_factors(rest)
        except DataError:
            continue
        if bg:  # a hand model's background class: a group of its own under every factor (NO_FACTOR)
            keep = np.array([n != BACKGROUND_CLASS for n in names])
            out = {"shape": [BACKGROUND_CLASS] * len(names)}
            for key in ("shape_index", "yaw", "pitch", "roll"):
                full = np.full(len(names), NO_FACTOR, np.int64)
                full[keep] = f[key]
                out[key] = full
            it = iter(f["shape"])
            out["shape"] = [next(it) if k else BACKGROUND_CLASS for k in keep]
            return out
        return f
    return None


def colour_choices(factors: dict | None) -> list[str]:
    """The colourings offered: the factors first when there are any, then class and right/wrong."""
    return ([*FACTORS] if factors is not None else []) + ["class", RIGHT_WRONG]


@dataclass
class Colouring:
    """Group codes for a map: ``classes (C,) int64`` and ``queries (n,) int64`` index ``names`` (k,);
    ``ordered`` says the groups are steps of one scale (an angle) rather than unordered kinds."""

    classes: np.ndarray
    queries: np.ndarray
    names: list[str]
    ordered: bool


#: the factor value of a class that has none (the background class of a hand model)
NO_FACTOR = 10 ** 6


def _signed(v: int) -> str:
    if v == NO_FACTOR:
        return "background"
    return f"{v:+d}°" if v else "0°"


def colouring(kind: str, class_names: list[str], labels: np.ndarray, pred: np.ndarray | None = None,
              factors: dict | None = None) -> Colouring:
    """Groups for colouring ``kind`` ("class", a factor name, or "right/wrong").

    ``labels (n,)`` are the true classes of the map's images, ``pred (n,)`` their predicted classes
    (needed for right/wrong). Right/wrong puts an image in "right", "right shape, other orientation"
    (sets with factors) or "wrong"; a class takes the worst group of its images, or "no image shown".
    """
    labels = np.asarray(labels, np.int64)
    C = len(class_names)
    if kind == "class":
        return Colouring(np.arange(C, dtype=np.int64), labels.copy(), list(class_names), False)
    if kind in FACTORS:
        if factors is None:
            raise ConfigError(f"these classes have no {kind}: colour by class or right/wrong")
        values = np.asarray(factors["shape_index"] if kind == "shape" else factors[kind])
        uniq, codes = np.unique(values, return_inverse=True)
        if kind == "shape":
            first = {int(v): s for v, s in zip(values, factors["shape"])}
            names = [first[int(v)] for v in uniq]
        else:
            names = [_signed(int(v)) for v in uniq]
        codes = codes.astype(np.int64)
        return Colouring(codes, codes[labels], names, kind != "shape")
    if kind == RIGHT_WRONG:
        if pred is None:
            raise ConfigError("right/wrong needs the predicted class of every image")
        pred = np.asarray(pred, np.int64)
        right = pred == labels
        names = ["right", "wrong"]
        q = np.where(right, 0, 1).astype(np.int64)
        if factors is not None:
            shape = np.asarray(factors["shape_index"])
            same_shape = shape[labels] == shape[np.clip(pred, 0, C - 1)]
            names = ["right", "right shape, other orientation", "wrong shape"]
            q = np.where(right, 0, np.where(same_shape, 1, 2)).astype(np.int64)
        cls = np.full(C, -1, np.int64)
        np.maximum.at(cls, labels, q)
        names.append("no image shown")
        cls[cls < 0] = len(names) - 1
        return Colouring(cls, q, names, False)
    raise ConfigError(f"colour by must be one of class, {', '.join(FACTORS)}, {RIGHT_WRONG}; got {kind!r}")
