"""The appearance knobs of generated hand images: ``HandStyle``, and the two styles ``CLEAN`` and ``CAMERA``.

``CLEAN`` is the training domain (calibrated so HOG + a linear one-vs-all bank lands in the paper's
range, ``docs/hands.md``). ``CAMERA`` stands in for real photographs: light from directions
``CLEAN`` never uses (further off the camera axis), a different ambient range, skin tones and
background families (``clutter``) ``CLEAN`` never uses, more blur and noise, and JPEG artefacts.
Angles in degrees; lengths as fractions of the image's shorter side; intensities on 0..255.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .clutter import tile_bank


@lru_cache(maxsize=1)
def _normal_lut(k: int = 256) -> np.ndarray:
    """Standard-normal quantiles at (i + 0.5) / k, ``(k,)`` float32 with unit variance: a byte per
    pixel indexes it, ~5x cheaper than ``standard_normal`` and plenty for sigma <= 12."""
    from statistics import NormalDist

    q = np.array([NormalDist().inv_cdf((i + 0.5) / k) for i in range(k)])
    return (q / q.std()).astype(np.float32)


@dataclass(frozen=True)
class HandStyle:
    """One appearance domain of the generated hands."""

    name: str
    stream: int  # mixed into the random stream, so the styles never share draws
    angle_jitter: float = 2.5  # uniform +- on yaw, pitch and roll
    joint_jitter: float = 2.0  # uniform +- on every joint angle (then clipped to the limits)
    fill: float = 0.85  # the hand's bounding box spans this much of the crop, at scale 1
    scale_jitter: float = 0.05  # uniform +- relative
    shift_jitter: float = 0.03  # uniform +- of the centre, each axis
    # a range (lo, hi), or a union of ranges ((lo, hi), (lo, hi)) (:func:`draw`), for every range knob below
    light_angle: tuple = (0.0, 40.0)  # light direction's angle from the camera axis
    ambient: tuple[float, float] = (0.25, 0.45)
    skins: tuple[tuple[int, int, int], ...] = ()  # RGB albedos, one per image (x a 0.93..1.07 jitter)
    background_contrast: tuple[float, float] = (0.3, 0.75)
    blur: tuple[float, float] = (0.0, 0.5)  # Gaussian sigma in pixels (none below 0.3)
    noise: tuple[float, float] = (2.0, 4.0)  # Gaussian noise sigma
    jpeg_quality: tuple[int, int] | None = None  # JPEG round trip at a quality in this range
    n_tiles: int = 96  # background tiles of the style's families

    def backgrounds(self, side: int, grey: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Two zoom levels of the style's tiles, ``(n, s, s, c)`` and ``(n, s/2, s/2, c)`` uint8, c = 1 grey
        or 3 RGB, with ``s/2 >= side``."""
        return _banks(self.name, self.n_tiles, max(192, 2 * int(side)), bool(grey))

    def draw_lights(self, rng: np.random.Generator, m: int) -> np.ndarray:
        """``(m, 3)`` unit vectors toward the light (image frame: x right, y down, z to the camera)."""
        th = np.deg2rad(draw(rng, self.light_angle, m))
        ph = rng.uniform(0.0, 2.0 * np.pi, m)
        return np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], 1)

    @property
    def noise_lut(self) -> np.ndarray:
        """Standard-normal quantiles ``(256,)`` float32 that a random byte per pixel indexes for cheap noise."""
        return _normal_lut()


def draw(rng: np.random.Generator, spec, m: int, integers: bool = False) -> np.ndarray:
    """``m`` uniform draws from a range ``(lo, hi)`` (exactly ``rng.uniform(lo, hi, m)``, or
    ``rng.integers(lo, hi + 1, m)``), or from a union of ranges ``((lo, hi), (lo, hi), ...)``: one range
    per draw, in proportion to its width, then uniform inside it."""
    if not isinstance(spec[0], (tuple, list)):
        return rng.integers(spec[0], spec[1] + 1, m) if integers else rng.uniform(spec[0], spec[1], m)
    lo, hi = (np.array([r[k] for r in spec], np.float64) for k in (0, 1))
    width = hi - lo + (1 if integers else 0)
    which = rng.choice(len(spec), m, p=width / width.sum())
    u = lo[which] + rng.random(m) * width[which]
    return np.floor(u).astype(np.int64) if integers else u


@lru_cache(maxsize=8)
def _banks(style: str, n: int, side: int, grey: bool) -> tuple[np.ndarray, np.ndarray]:
    import cv2

    big = tile_bank(style, n, side)
    if grey:
        big = np.stack([cv2.cvtColor(t, cv2.COLOR_RGB2GRAY) for t in big])[..., None]
    small = np.stack([cv2.resize(t, (side // 2, side // 2), interpolation=cv2.INTER_AREA).reshape(
        side // 2, side // 2, -1) for t in big])
    big.setflags(write=False)
    small.setflags(write=False)
    return big, small


CLEAN = HandStyle(
    "clean", 0,
    skins=((236, 188, 152), (214, 160, 122), (190, 134, 98), (158, 104, 72), (122, 80, 56), (245, 208, 180)),
)
CAMERA = HandStyle(
    "camera", 1,
    # A real hand never holds the shape exactly, a person labels its orientation only to ~30 degrees and
    # a detector's box is sloppy: larger jitters; then other light, skins and scenes, a softer lens,
    # more sensor noise and JPEG.
    angle_jitter=6.0, joint_jitter=8.0, scale_jitter=0.15, shift_jitter=0.08,
    light_angle=(50.0, 75.0), ambient=(0.12, 0.22),
    skins=((228, 178, 140), (201, 146, 110), (174, 118, 84), (140, 92, 64), (104, 68, 48), (250, 220, 196)),
    background_contrast=(0.8, 1.2), blur=(0.7, 1.5), noise=(5.0, 10.0), jpeg_quality=(20, 50), n_tiles=64,
)
#: the hand model's training domain (``classmap hand-model``): randomised light, skins, scenes, blur, sensor noise,
#: JPEG and framing, wider than ``CLEAN`` on every knob, but never inside a ``CAMERA`` range, tile or skin
#: (each range brackets the camera's from both sides, so the camera style stays a held-out style)
VARIED = HandStyle(
    "varied", 2,
    angle_jitter=5.0, joint_jitter=5.0, scale_jitter=0.10, shift_jitter=0.06,
    light_angle=((0.0, 48.0), (77.0, 88.0)), ambient=((0.05, 0.11), (0.23, 0.5)),
    skins=((236, 188, 152), (214, 160, 122), (190, 134, 98), (158, 104, 72), (122, 80, 56), (245, 208, 180),
           (232, 182, 165), (204, 162, 118), (168, 124, 102), (112, 76, 62), (252, 214, 168), (138, 102, 82)),
    background_contrast=((0.2, 0.78), (1.22, 1.5)), blur=((0.0, 0.65), (1.6, 1.9)), noise=((1.0, 4.8), (10.5, 12.0)),
    jpeg_quality=((10, 18), (55, 95)), n_tiles=96,
)
STYLES = {"clean": CLEAN, "camera": CAMERA, "varied": VARIED}

__all__ = ["CAMERA", "CLEAN", "STYLES", "VARIED", "HandStyle", "draw"]
