"""`glyph-pose`: a generated many-class set standing in for the ClassMap paper's 2430-class hand set.

81 glyph shapes x 30 three-dimensional orientations = 2430 classes. Each image is one glyph drawn with
OpenCV's Hershey fonts, seen by a pinhole camera after a 3-D rotation (a yaw/pitch/roll grid plus a
small per-image jitter: the warp is the homography of the rotated glyph plane), pasted over a crop of
the real photographs scikit-learn ships (``china.jpg``, ``flower.jpg``) with jitter in scale, position,
stroke width, contrast and polarity, plus Gaussian noise. Grey uint8 images, default 64x64.

Class index = ``shape * n_orientations + orientation``; class names read like
``"A@yaw+25,pitch-30,roll0"`` (``script-A`` is the script-font A, ``ab`` a two-letter glyph).

Determinism: every block of ``_BLOCK`` consecutive images draws all its randomness from
``numpy.random.default_rng([seed, block])``, so the same seed and parameters give identical images
whatever the chunking or ``n_jobs``.

Speed: each glyph is rendered once per stroke width at ~1.25x its output size; per image there is one
``cv2.warpPerspective`` (into the box the glyph lands in) and one background slice; compositing and
noise are numpy over whole blocks. Figures in ``docs/glyph-pose.md``.

The difficulty (``GlyphStyle``) was calibrated once so that HOG + a linear one-vs-all bank lands
between 85% and 97% test accuracy on the full set at the defaults; see ``docs/glyph-pose.md``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import DataError
from ..progress import ProgressFn, StopFn, check_stop, report
from .catalog import BuiltinDataset
from .imageset import ImageSet
from .pose_split import BENCH_SPLIT, rotations, split_per_class

# --------------------------------------------------------------------------- shapes and orientations
_DUPLEX, _SIMPLEX, _SCRIPT = 2, 0, 4  # cv2.FONT_HERSHEY_DUPLEX / _SIMPLEX / _SCRIPT_SIMPLEX
_SHAPES: tuple[tuple[str, str, int], ...] = (
    *((c, c, _DUPLEX) for c in "ABCDEFGHJKLMNPQRSTUVWXYZ"),  # 24 capitals (no I, O: like 1, 0)
    *((c, c, _DUPLEX) for c in "23456789"),  # 8 digits
    *((c, c, _DUPLEX) for c in "abdefghkmnqrty"),  # 14 lower-case letters unlike their capitals
    *((c, c, _SIMPLEX) for c in "#$%&@?+*{}<>"),  # 12 symbols
    *((f"script-{c}", c, _SCRIPT) for c in "ABDEFGHKLMNPRTY"),  # 15 script capitals
    *((s, s, _DUPLEX) for s in ("ab", "xy", "Fk", "7z", "Kt", "Hq", "Lm", "Wr")),  # 8 two-letter glyphs
)
assert len(_SHAPES) == 81 and len({s[0] for s in _SHAPES}) == 81

_YAWS = (-50, -25, 0, 25, 50)
_PITCHES = (-30, 0, 30)
_ROLLS = (-20, 20)
_ORIENTATIONS: tuple[tuple[int, int, int], ...] = tuple(
    (y, p, r) for y in _YAWS for p in _PITCHES for r in _ROLLS)  # 30 (yaw, pitch, roll) in degrees

N_SHAPES = len(_SHAPES)
N_ORIENTATIONS = len(_ORIENTATIONS)
DEFAULT_SIZE = (64, 64)
_BLOCK = 256  # images per random stream: the unit of determinism
GENERATOR_VERSION = 1  # bump whenever the same seed would give other images (caches key on it)


def _normal_quantiles(k: int = 256) -> np.ndarray:
    """Standard-normal quantiles at (i + 0.5) / k, ``(k,)`` float32, rescaled to unit variance."""
    from statistics import NormalDist

    q = np.array([NormalDist().inv_cdf((i + 0.5) / k) for i in range(k)])
    return (q / q.std()).astype(np.float32)


_NORMAL_LUT = _normal_quantiles()


def shape_names() -> list[str]:
    """The 81 glyph names, in shape-index order."""
    return [s[0] for s in _SHAPES]


def orientations() -> list[tuple[int, int, int]]:
    """The 30 (yaw, pitch, roll) grid orientations in degrees, in orientation-index order."""
    return list(_ORIENTATIONS)


def _signed(v: int) -> str:
    return "0" if v == 0 else f"{v:+d}"


def class_name(shape: str, yaw: int, pitch: int, roll: int) -> str:
    """e.g. ``"A@yaw+25,pitch-30,roll0"``."""
    return f"{shape}@yaw{_signed(yaw)},pitch{_signed(pitch)},roll{_signed(roll)}"


_BY_NAME = {class_name(s[0], *o): (s[0], o) for s in _SHAPES for o in _ORIENTATIONS}


def class_factors(class_names: list[str]) -> dict:
    """What each glyph-pose class is: ``{"shape": list[str], "shape_index": (k,) int64, "yaw", "pitch",
    "roll": (k,) int64 degrees}`` for ``class_names`` (any subset, any order). Unknown names raise."""
    got = []
    for n in class_names:
        if n not in _BY_NAME:
            raise DataError(f"{n!r} is not a glyph-pose class name")
        got.append(_BY_NAME[n])
    names = shape_names()
    o = np.array([g[1] for g in got], np.int64).reshape(-1, 3)
    return {"shape": [g[0] for g in got], "shape_index": np.array([names.index(g[0]) for g in got], np.int64),
            "yaw": o[:, 0], "pitch": o[:, 1], "roll": o[:, 2]}


def _pick(total: int, k: int | None, what: str) -> np.ndarray:
    """``k`` indices spread evenly over ``range(total)`` (all when ``k`` is None or ``total``)."""
    if k is None or k == total:
        return np.arange(total)
    if not isinstance(k, (int, np.integer)) or not 1 <= k <= total:
        raise DataError(f"glyph-pose: {what} must be an integer between 1 and {total}, got {k!r}")
    return np.unique(np.round(np.linspace(0, total - 1, k)).astype(int))


# --------------------------------------------------------------------------- difficulty
@dataclass(frozen=True)
class GlyphStyle:
    """The difficulty knobs, frozen after calibration (``docs/glyph-pose.md``). Angles in degrees,
    lengths as fractions of the image side, intensities on 0..255."""

    angle_jitter: float = 3.0  # uniform +- on each of yaw, pitch, roll
    glyph_size: float = 0.62  # side of the glyph's box, frontal, at scale 1
    scale_jitter: float = 0.06  # uniform +- relative
    shift_jitter: float = 0.03  # uniform +- of the centre, each axis
    camera_distance: float = 1.8  # in glyph-box sides: smaller = stronger perspective
    strokes: tuple[float, ...] = (0.06, 0.085, 0.11)  # stroke widths (fraction of the glyph box), one per image
    background_scales: tuple[float, ...] = (1.0, 0.6, 0.35)  # photo zoom levels crops are cut from
    background_contrast: tuple[float, float] = (0.35, 0.8)  # photo contrast multiplier range
    ink_contrast: tuple[float, float] = (75.0, 150.0)  # |ink - mean of the background crop| range
    noise: tuple[float, float] = (2.0, 7.0)  # Gaussian noise sigma range


DEFAULT_STYLE = GlyphStyle()


# --------------------------------------------------------------------------- assets
@lru_cache(maxsize=8)
def _glyph_masks(render: int, strokes: tuple[float, ...]) -> np.ndarray:
    """``(81, len(strokes), render, render)`` uint8 glyph masks, each glyph's ink box centred and
    scaled so its longer side is the whole canvas (aspect kept)."""
    import cv2

    big = 512
    out = np.zeros((N_SHAPES, len(strokes), render, render), np.uint8)
    for i, (_, text, font) in enumerate(_SHAPES):
        for j, stroke in enumerate(strokes):
            canvas = np.zeros((big, big), np.uint8)
            scale = 6.0 if len(text) == 1 else 4.0
            thick = max(1, int(round(stroke * big * 0.5)))
            (tw, th), base = cv2.getTextSize(text, font, scale, thick)
            org = ((big - tw) // 2, (big + th) // 2)
            cv2.putText(canvas, text, org, font, scale, 255, thick, cv2.LINE_AA)
            ys, xs = np.nonzero(canvas)
            crop = canvas[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
            ch, cw = crop.shape
            f = render / max(ch, cw)
            nh, nw = max(1, int(round(ch * f))), max(1, int(round(cw * f)))
            small = cv2.resize(crop, (nw, nh), interpolation=cv2.INTER_AREA)
            y0, x0 = (render - nh) // 2, (render - nw) // 2
            out[i, j, y0:y0 + nh, x0:x0 + nw] = small
    return out


@lru_cache(maxsize=4)
def _backgrounds(scales: tuple[float, ...]) -> tuple[np.ndarray, ...]:
    """Grey uint8 versions of scikit-learn's sample photographs at each zoom level."""
    import cv2
    import sklearn.datasets

    folder = Path(sklearn.datasets.__file__).parent / "images"
    photos = []
    for name in ("china.jpg", "flower.jpg"):
        im = cv2.imread(str(folder / name), cv2.IMREAD_GRAYSCALE)
        if im is None:
            raise DataError(f"glyph-pose needs scikit-learn's sample photograph {folder / name}; reinstall scikit-learn")
        photos.append(im)
    out = []
    for im in photos:
        for s in scales:
            out.append(im if s == 1.0 else cv2.resize(im, None, fx=s, fy=s, interpolation=cv2.INTER_AREA))
    return tuple(out)


# --------------------------------------------------------------------------- rendering
def _render_size(size: tuple[int, int], style: GlyphStyle) -> int:
    """Side of the pre-rendered glyph masks: ~1.25x the glyph's output size, so the per-image warp
    shrinks by 1.1-1.4x and bilinear sampling does not alias the strokes."""
    return max(16, int(round(min(size) * style.glyph_size * 1.25)))


def _render_block(block: int, labels: np.ndarray, shape_idx: np.ndarray, orient_idx: np.ndarray,
                  size: tuple[int, int], seed: int, style: GlyphStyle) -> np.ndarray:
    """The images of one determinism block: ``labels`` (m,) class indices -> ``(m, h, w)`` uint8."""
    import cv2

    h, w = size
    m = len(labels)
    rng = np.random.default_rng([int(seed), int(block)])
    render = _render_size((h, w), style)
    masks = _glyph_masks(render, tuple(style.strokes))
    bgs = _backgrounds(tuple(style.background_scales))

    # All random draws of the block, in a fixed order, vectorised.
    s = shape_idx[labels]
    ori = np.asarray(_ORIENTATIONS, np.float64)[orient_idx[labels]]  # (m, 3)
    ang = np.deg2rad(ori + rng.uniform(-style.angle_jitter, style.angle_jitter, (m, 3)))
    scale = style.glyph_size * (1.0 + rng.uniform(-style.scale_jitter, style.scale_jitter, m))
    shift = rng.uniform(-style.shift_jitter, style.shift_jitter, (m, 2))
    stroke = rng.integers(0, len(style.strokes), m)
    bg_pick = rng.integers(0, len(bgs), m)
    bg_u = rng.random((m, 2))
    bg_flip = rng.random(m) < 0.5
    bg_contrast = rng.uniform(*style.background_contrast, m)
    polarity = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    delta = rng.uniform(*style.ink_contrast, m)
    sigma = rng.uniform(*style.noise, m)

    # Homography source pixel -> output pixel: plane point X = (u / render - 1/2) * glyph box, rotated,
    # pushed to distance d, projected with focal length f so a frontal glyph spans `scale` of the image.
    side = min(h, w)
    d = style.camera_distance
    R = rotations(ang[:, 0], ang[:, 1], ang[:, 2])
    P = np.zeros((m, 3, 3))
    P[:, :, 0] = R[:, :, 0]
    P[:, :, 1] = R[:, :, 1]
    P[:, 2, 2] = d
    A = np.array([[1.0 / render, 0, -0.5], [0, 1.0 / render, -0.5], [0, 0, 1]])
    K = np.zeros((m, 3, 3))
    K[:, 0, 0] = K[:, 1, 1] = d * scale * side
    K[:, 0, 2] = w / 2.0 + shift[:, 0] * side
    K[:, 1, 2] = h / 2.0 + shift[:, 1] * side
    K[:, 2, 2] = 1.0
    H = K @ P @ A

    # Warp only the box the glyph square lands in (+1 px for the bilinear fringe): ~half the pixels.
    corners = np.array([[0, 0, 1], [render, 0, 1], [0, render, 1], [render, render, 1]], np.float64).T
    proj = H @ corners  # (m, 3, 4)
    px, py = proj[:, 0] / proj[:, 2], proj[:, 1] / proj[:, 2]
    bx0 = np.clip(np.floor(px.min(1)) - 1, 0, w).astype(int)
    bx1 = np.clip(np.ceil(px.max(1)) + 2, 0, w).astype(int)
    by0 = np.clip(np.floor(py.min(1)) - 1, 0, h).astype(int)
    by1 = np.clip(np.ceil(py.max(1)) + 2, 0, h).astype(int)
    Hb = H.copy()
    Hb[:, 0] -= bx0[:, None] * H[:, 2]  # translate the output by (-x0, -y0)
    Hb[:, 1] -= by0[:, None] * H[:, 2]

    alpha = np.zeros((m, h, w), np.uint8)
    bg = np.empty((m, h, w), np.uint8)
    for i in range(m):  # one OpenCV warp and one slice per image
        if bx1[i] > bx0[i] and by1[i] > by0[i]:
            alpha[i, by0[i]:by1[i], bx0[i]:bx1[i]] = cv2.warpPerspective(
                masks[s[i], stroke[i]], Hb[i], (int(bx1[i] - bx0[i]), int(by1[i] - by0[i])),
                flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        photo = bgs[bg_pick[i]]
        y0 = int(bg_u[i, 0] * (photo.shape[0] - h))
        x0 = int(bg_u[i, 1] * (photo.shape[1] - w))
        crop = photo[y0:y0 + h, x0:x0 + w]
        bg[i] = crop[:, ::-1] if bg_flip[i] else crop

    # Composite, in place on float32: photo with contrast c around its mean, ink blended by alpha.
    out = bg.astype(np.float32)
    mean = out.mean(axis=(1, 2), keepdims=True)
    out -= mean
    out *= bg_contrast.astype(np.float32)[:, None, None]
    out += mean
    # Ink darker or brighter than the crop's mean by `delta`; the other polarity when that leaves 0..255.
    mu = mean[:, 0, 0].astype(np.float64)
    polarity = np.where((mu + polarity * delta < 0) | (mu + polarity * delta > 255), -polarity, polarity)
    ink = np.clip(mu + polarity * delta, 0, 255).astype(np.float32)
    a = alpha.astype(np.float32)
    a *= np.float32(1.0 / 255.0)
    out += a * (ink[:, None, None] - out)
    # Gaussian noise through a 256-level quantile table: random bytes are ~5x cheaper than
    # standard_normal (measured 24 vs 111 us per 64x64 image), and 256 levels are plenty at sigma <= 12.
    noise = _NORMAL_LUT[np.frombuffer(rng.bytes(m * h * w), np.uint8).reshape(m, h, w)]
    noise *= sigma.astype(np.float32)[:, None, None]
    out += noise
    np.clip(out, 0, 255, out=out)
    return np.rint(out, out=out).astype(np.uint8)


def generate_glyph_pose(*, shapes: int | None = None, orientations: int | None = None, images_per_class: int = 60,
                        size: tuple[int, int] | int | None = None, seed: int = 0, style: GlyphStyle | None = None,
                        n_jobs: int | None = 1, name: str = "glyph-pose", progress: ProgressFn = None,
                        should_stop: StopFn = None) -> ImageSet:
    """Generate the set: ``shapes`` x ``orientations`` classes (subsets spread evenly over the 81 shapes
    and the 30-orientation grid; None = all), ``images_per_class`` images each, class-major order.

    Returns an :class:`ImageSet` of ``(n, h, w)`` uint8 grey images, labels ``(n,)`` int64 with class
    index ``shape * n_orientations + orientation`` over the chosen subsets.
    """
    if size is None:
        size = DEFAULT_SIZE
    if isinstance(size, (int, np.integer)):
        size = (int(size), int(size))
    h, w = (int(v) for v in size)
    if h < 8 or w < 8:
        raise DataError(f"glyph-pose: image size must be at least 8x8, got {h}x{w}")
    if not isinstance(images_per_class, (int, np.integer)) or images_per_class < 1:
        raise DataError(f"glyph-pose: images_per_class must be a positive integer, got {images_per_class!r}")
    style = style or DEFAULT_STYLE
    sh = _pick(N_SHAPES, shapes, "shapes")
    orr = _pick(N_ORIENTATIONS, orientations, "orientations")
    n_classes = len(sh) * len(orr)
    shape_idx = np.repeat(sh, len(orr))
    orient_idx = np.tile(orr, len(sh))
    names = [class_name(_SHAPES[s][0], *_ORIENTATIONS[o]) for s, o in zip(shape_idx, orient_idx)]
    labels = np.repeat(np.arange(n_classes, dtype=np.int64), images_per_class)
    n = len(labels)
    images = np.empty((n, h, w), np.uint8)
    report(progress, 0.0, "generating glyph-pose")
    _glyph_masks(_render_size((h, w), style), tuple(style.strokes))  # build the shared assets once, before any thread
    _backgrounds(tuple(style.background_scales))
    blocks = list(range((n + _BLOCK - 1) // _BLOCK))
    done = [0]

    def task(b: int) -> None:
        check_stop(should_stop)
        a, e = b * _BLOCK, min(n, (b + 1) * _BLOCK)
        images[a:e] = _render_block(b, labels[a:e], shape_idx, orient_idx, (h, w), seed, style)
        done[0] += e - a
        report(progress, done[0] / n, "generating glyph-pose")

    from joblib import Parallel, delayed, effective_n_jobs

    jobs = min(effective_n_jobs(n_jobs), len(blocks))
    if jobs <= 1:
        for b in blocks:
            task(b)
    else:  # OpenCV and numpy release the GIL; blocks write disjoint slices
        Parallel(n_jobs=jobs, backend="threading")(delayed(task)(b) for b in blocks)
    return ImageSet(images, labels, names, name=name)


# --------------------------------------------------------------------------- benchmark split
# BENCH_SPLIT and split_per_class live in pose_split (shared with hand-pose); imported above.


# --------------------------------------------------------------------------- built-in records (builtin.py registers them)
def _loader(name: str, shapes: int | None, orients: int | None, ipc: int):
    def load(*, size=None, progress: ProgressFn = None, should_stop: StopFn = None, images_per_class: int = ipc,
             seed: int = 0, shapes: int | None = shapes, orientations: int | None = orients, n_jobs: int | None = 1,
             **_: object) -> ImageSet:
        def opt_int(v, what="option"):  # options may arrive as text from the command line
            try:
                return None if v is None else int(v)
            except (TypeError, ValueError):
                raise DataError(f"{name}: {what} must be an integer, got {v!r}") from None

        return generate_glyph_pose(shapes=opt_int(shapes, "shapes"), orientations=opt_int(orientations, "orientations"),
                                   images_per_class=opt_int(images_per_class, "images_per_class"), size=size,
                                   seed=opt_int(seed, "seed"), n_jobs=opt_int(n_jobs, "n_jobs"), name=name,
                                   progress=progress, should_stop=should_stop)
    return load


BUILTINS = (BuiltinDataset(
    "glyph-pose",
    f"generated: 81 glyph shapes x 30 3-D orientations = 2430 classes, 64x64 grey, {sum(BENCH_SPLIT)} images per "
    f"class by default (ClassMap benchmark stand-in for the paper's hand poses)",
    _loader("glyph-pose", None, None, sum(BENCH_SPLIT)), version=GENERATOR_VERSION), BuiltinDataset(
    "glyph-pose-small",
    "generated: 25 glyph shapes x 10 orientations = 250 classes, 64x64 grey, 20 images per class (tests, demo)",
    _loader("glyph-pose-small", 25, 10, 20), version=GENERATOR_VERSION))


def style_dict(style: GlyphStyle = DEFAULT_STYLE) -> dict:
    """The style as a JSON-able dict (for reports)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(style).items()}


__all__ = ["BENCH_SPLIT", "BUILTINS", "DEFAULT_STYLE", "GENERATOR_VERSION", "GlyphStyle", "N_ORIENTATIONS", "N_SHAPES",
           "class_factors", "class_name",
           "generate_glyph_pose", "orientations", "shape_names", "split_per_class", "style_dict"]
