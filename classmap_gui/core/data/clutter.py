"""Procedural photo-like clutter: colour background tiles for the generated hand images.

Eight families of scene-like textures, drawn with numpy and OpenCV from a seed (no image files):

* ``clean`` families — ``blobs`` (overlapping flat and shaded shapes on a 1/f texture, some out of
  focus), ``fractal`` (coloured 1/f noise, smooth to rough, sometimes posterised), ``grain``
  (warped gratings: wood, fabric), ``foliage`` (many small leaf-like ellipses, dappled);
* ``camera`` families — ``room`` (large planes of a room with straight edges, a bright window and
  shading), ``shelf`` (rows of book spines), ``tiles`` (a perspective-warped tiled wall or floor),
  ``posters`` (text and boxes on paper).

The two styles share no family and no tile: a ``camera`` image never shows a background a ``clean``
image could. ``tile_bank(style, n, side, seed)`` -> ``(n, side, side, 3)`` uint8 RGB, cached.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

CLEAN_FAMILIES = ("blobs", "fractal", "grain", "foliage")
CAMERA_FAMILIES = ("room", "shelf", "tiles", "posters")
STYLE_FAMILIES = {"clean": CLEAN_FAMILIES, "camera": CAMERA_FAMILIES, "varied": CLEAN_FAMILIES}
_STYLE_SALT = {"clean": 11, "camera": 23, "varied": 37}  # separate random streams, so no tile is shared


def _pink(rng: np.random.Generator, side: int, beta: float, channels: int = 3) -> np.ndarray:
    """1/f^beta noise ``(side, side, channels)`` float32 scaled to 0..1 per channel: white noise
    filtered in the Fourier domain (one real FFT pair for all channels)."""
    fy = np.fft.fftfreq(side)[:, None]
    fx = np.fft.rfftfreq(side)[None, :]
    r = np.sqrt(fy * fy + fx * fx)
    r[0, 0] = 1.0
    amp = r ** (-beta)  # amplitude ~ 1/f^beta: larger beta, smoother texture
    amp[0, 0] = 0.0
    spec = np.fft.rfft2(rng.standard_normal((side, side, channels), np.float32), axes=(0, 1))
    spec *= amp[..., None]
    x = np.fft.irfft2(spec, s=(side, side), axes=(0, 1)).astype(np.float32)
    x -= x.min(axis=(0, 1))
    x /= np.maximum(x.max(axis=(0, 1)), 1e-9)
    return x


def _colour(rng: np.random.Generator, sat: float = 0.6) -> np.ndarray:
    """A random RGB colour (3,) float 0..255 with saturation up to ``sat``."""
    grey = rng.uniform(20, 235)
    tint = rng.normal(0, 1, 3)
    tint *= sat * min(grey, 255 - grey) / max(float(np.abs(tint).max()), 1e-9)
    return np.clip(grey + tint, 0, 255)


def _blobs(rng, side):
    import cv2

    base = _pink(rng, side, rng.uniform(1.2, 2.0))
    im = (base * rng.uniform(60, 160) + _colour(rng) * 0.5).astype(np.float32)
    for _ in range(int(rng.integers(6, 25))):
        layer = np.zeros((side, side), np.uint8)
        cx, cy = rng.integers(-side // 4, side + side // 4, 2)
        a, b = rng.integers(side // 20, side // 3, 2)
        kind = rng.integers(0, 3)
        if kind == 0:
            cv2.ellipse(layer, (int(cx), int(cy)), (int(a), int(b)), float(rng.uniform(0, 180)), 0, 360, 255, -1)
        elif kind == 1:
            cv2.rectangle(layer, (int(cx - a), int(cy - b)), (int(cx + a), int(cy + b)), 255, -1)
        else:
            pts = (rng.uniform(-1, 1, (int(rng.integers(3, 7)), 2)) * [a, b] + [cx, cy]).astype(np.int32)
            cv2.fillPoly(layer, [pts], 255)
        m = layer.astype(np.float32) / 255.0
        if rng.random() < 0.4:  # out of focus
            m = cv2.GaussianBlur(m, (0, 0), float(rng.uniform(2, 8)))
        shade = 1.0 + rng.uniform(-0.4, 0.4) * np.linspace(-1, 1, side, dtype=np.float32)[None, :, None]
        col = _colour(rng).astype(np.float32) * shade
        im += m[..., None] * (col - im)
    return im


def _fractal(rng, side):
    x = _pink(rng, side, rng.uniform(0.8, 2.4))
    if rng.random() < 0.4:  # posterised: camouflage-like patches
        x = np.floor(x * rng.integers(3, 6)) / 4.0
    lo, hi = _colour(rng), _colour(rng)
    return (lo + x * (hi - lo)).astype(np.float32)


def _grain(rng, side):
    yy, xx = np.mgrid[0:side, 0:side].astype(np.float32)
    warp = _pink(rng, side, 2.0, 1)[..., 0] * rng.uniform(5, 40)
    th = rng.uniform(0, np.pi)
    u = (xx * np.cos(th) + yy * np.sin(th)) / rng.uniform(2, 12) + warp
    g = 0.5 + 0.5 * np.sin(u)
    if rng.random() < 0.5:  # a woven cross-grating
        g = 0.5 * g + 0.25 + 0.25 * np.sin((-xx * np.sin(th) + yy * np.cos(th)) / rng.uniform(2, 8))
    lo, hi = _colour(rng, 0.4), _colour(rng, 0.4)
    return (lo + g[..., None] * (hi - lo)).astype(np.float32)


def _foliage(rng, side):
    import cv2

    im = (_pink(rng, side, 1.5) * 60 + _colour(rng, 0.3) * 0.4).astype(np.float32)
    green = np.array([rng.uniform(20, 90), rng.uniform(80, 200), rng.uniform(20, 90)])
    for _ in range(int(rng.integers(80, 250))):
        c = tuple(int(v) for v in np.clip(green * rng.uniform(0.4, 1.5) + rng.normal(0, 25, 3), 0, 255))
        centre = tuple(int(v) for v in rng.integers(0, side, 2))
        axes = (int(rng.integers(3, side // 10)), int(rng.integers(2, side // 20 + 3)))
        cv2.ellipse(im, centre, axes, float(rng.uniform(0, 180)), 0, 360, c, -1, cv2.LINE_AA)
    light = _pink(rng, side, 2.5, 1) * 0.8 + 0.5  # dappled sunlight
    return im * light


def _room(rng, side):
    import cv2

    im = np.empty((side, side, 3), np.float32)
    wall, floor = _colour(rng, 0.3), _colour(rng, 0.3)
    horizon = int(rng.uniform(0.45, 0.8) * side)
    im[:horizon] = wall
    im[horizon:] = floor
    im *= (0.7 + 0.6 * np.linspace(0, 1, side, dtype=np.float32))[None, ::(1 if rng.random() < 0.5 else -1), None]
    for _ in range(int(rng.integers(2, 6))):  # doors, cupboards, a window
        x0, x1 = sorted(rng.integers(0, side, 2))
        y0 = int(rng.integers(0, horizon))
        y1 = int(rng.integers(y0 + 1, side + 1))
        col = (255, 250, 240) if rng.random() < 0.25 else tuple(float(v) for v in _colour(rng, 0.5))
        cv2.rectangle(im, (int(x0), y0), (int(x1), y1), col, -1)
        cv2.rectangle(im, (int(x0), y0), (int(x1), y1), tuple(float(v) * 0.5 for v in col), int(rng.integers(1, 4)))
    for _ in range(int(rng.integers(1, 5))):  # long straight edges: shelves, skirting, frames
        y = int(rng.integers(0, side))
        cv2.line(im, (0, y), (side, y + int(rng.integers(-side // 6, side // 6))),
                 tuple(float(v) for v in _colour(rng)), int(rng.integers(1, 6)))
    return im


def _shelf(rng, side):
    import cv2

    im = np.full((side, side, 3), _colour(rng, 0.3), np.float32)
    y = 0
    while y < side:
        h = int(rng.integers(side // 5, side // 2))
        x = 0
        while x < side:
            w = int(rng.integers(3, side // 12 + 4))
            top = y + int(rng.integers(0, h // 3 + 1))
            col = tuple(float(v) for v in _colour(rng, 0.8))
            cv2.rectangle(im, (x, top), (x + w - 1, y + h - 4), col, -1)
            if rng.random() < 0.4:
                cv2.line(im, (x + w // 2, top + 4), (x + w // 2, y + h - 8), tuple(255.0 - v for v in col), 1)
            x += w + int(rng.integers(0, 2))
        cv2.rectangle(im, (0, y + h - 4), (side, y + h), (40.0, 30.0, 20.0), -1)  # the shelf board
        y += h
    return im


def _tiles(rng, side):
    import cv2

    n = int(rng.integers(6, 20))
    big = side * 2
    im = np.empty((big, big, 3), np.float32)
    step = big / n
    base = _colour(rng, 0.5)
    for i in range(n):
        for j in range(n):
            im[int(i * step):int((i + 1) * step), int(j * step):int((j + 1) * step)] = \
                np.clip(base * rng.uniform(0.8, 1.2) + (_colour(rng) - 128) * 0.3 * (rng.random() < 0.2), 0, 255)
    grout = tuple(float(v) for v in _colour(rng, 0.1))
    for k in range(n + 1):
        cv2.line(im, (0, int(k * step)), (big, int(k * step)), grout, max(1, big // 150))
        cv2.line(im, (int(k * step), 0), (int(k * step), big), grout, max(1, big // 150))
    src = np.float32([[0, 0], [big, 0], [big, big], [0, big]])
    d = rng.uniform(0, 0.35, 4) * side
    dst = np.float32([[-d[0], 0], [side + d[1], 0], [side + d[2], side], [-d[3], side]])
    if rng.random() < 0.5:
        dst = dst[:, ::-1].copy()
    return cv2.warpPerspective(im, cv2.getPerspectiveTransform(src, dst), (side, side), flags=cv2.INTER_AREA)


def _posters(rng, side):
    import cv2

    im = np.full((side, side, 3), _colour(rng, 0.2) * 0.3 + 170, np.float32)
    for _ in range(int(rng.integers(2, 6))):
        x0, y0 = (int(v) for v in rng.integers(-side // 4, side, 2))
        x1, y1 = x0 + int(rng.integers(side // 5, side // 2)), y0 + int(rng.integers(side // 5, side // 2))
        cv2.rectangle(im, (x0, y0), (x1, y1), tuple(float(v) for v in _colour(rng, 0.8)), -1)
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    for _ in range(int(rng.integers(5, 20))):
        text = "".join(rng.choice(list(letters), int(rng.integers(2, 10))))
        org = (int(rng.integers(-20, side)), int(rng.integers(10, side)))
        _put_text(im, text, org, int(rng.choice([0, 1, 2, 3, 4])), float(rng.uniform(0.4, 2.0)),
                  tuple(float(v) for v in _colour(rng, 0.7)), int(rng.integers(1, 4)))
    return im


def _put_text(im: np.ndarray, text: str, org, font: int, scale: float, colour, thick: int) -> None:
    """Anti-aliased text drawn into a float32 image: OpenCV 4 draws on float images directly; OpenCV 5 only on
    uint8 ones, so there the text is drawn as a uint8 coverage mask and blended in (the same tile within the
    anti-aliasing's rounding: a few grey levels on the letters' edges)."""
    import cv2

    try:
        cv2.putText(im, text, org, font, scale, colour, thick, cv2.LINE_AA)
        return
    except cv2.error:
        pass
    mask = np.zeros(im.shape[:2], np.uint8)
    cv2.putText(mask, text, org, font, scale, 255, thick, cv2.LINE_AA)
    a = (mask.astype(np.float32) / 255.0)[..., None]
    im *= 1.0 - a
    im += a * np.asarray(colour, np.float32)


_MAKERS = {"blobs": _blobs, "fractal": _fractal, "grain": _grain, "foliage": _foliage,
           "room": _room, "shelf": _shelf, "tiles": _tiles, "posters": _posters}


def make_tile(family: str, rng: np.random.Generator, side: int) -> np.ndarray:
    """One ``(side, side, 3)`` uint8 RGB tile of ``family``, mildly blurred like a lens would."""
    import cv2

    im = _MAKERS[family](rng, side)
    im = cv2.GaussianBlur(np.ascontiguousarray(im, np.float32), (0, 0), float(rng.uniform(0.4, 1.2)))
    return np.clip(np.rint(im), 0, 255).astype(np.uint8)


@lru_cache(maxsize=8)
def tile_bank(style: str, n: int, side: int, seed: int = 0) -> np.ndarray:
    """``n`` tiles for ``style`` (``clean``, ``camera`` or ``varied``: the clean families, other tiles), families in turn: ``(n, side, side, 3)`` uint8
    RGB. Read-only (shared by threads). Deterministic for (style, n, side, seed)."""
    fams = STYLE_FAMILIES[style]
    out = np.empty((n, side, side, 3), np.uint8)
    for i in range(n):
        rng = np.random.default_rng([seed, _STYLE_SALT[style], i])
        out[i] = make_tile(fams[i % len(fams)], rng, side)
    out.setflags(write=False)
    return out


__all__ = ["CAMERA_FAMILIES", "CLEAN_FAMILIES", "STYLE_FAMILIES", "make_tile", "tile_bank"]
