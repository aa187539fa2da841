"""`hand-pose`: the ClassMap paper's 2430 hand-pose classes, rendered from a procedural 3-D hand.

81 hand shapes (``hand_shapes``) x 30 three-dimensional orientations = 2430 classes. Each image is
the articulated hand of ``hand_model`` in its shape (plus a small per-image joint jitter) and grid
orientation (plus a small angle jitter), rendered exactly by ``hand_render`` (ray-capsule, depth
buffer, Lambert + ambient shading, a forearm stub) with a random skin tone and light, scaled and
shifted inside the crop like a hand detector's box, over procedural clutter (``clutter``) outside
the silhouette, then blurred and noised. Grey uint8 images, default 64x64.

``style="clean"`` is the training domain; ``style="camera"`` is the stand-in for the paper's real
photos: lighting, skin tones and backgrounds never used by ``clean`` (``CLEAN``, ``CAMERA``), more
blur and noise, and JPEG artefacts.

Class index = ``shape * n_orientations + orientation`` over the chosen subsets; class names read like
``"V · palm forward · turned 30° left · fingers 30° toward camera · leaning 20° right"``;
``class_factors(names)`` gives each class's shape and (yaw, pitch, roll) back, ``pose_match``
scores "same shape, orientation within 30°" as the paper did for real photos.

``orientations=N`` with N <= 30 takes N of the 30 default orientations (spread evenly); a larger N
builds an even grid over all 3-D orientations (``hand_orientations``: Fibonacci viewing directions x
in-plane rolls), e.g. 1235 orientations x 81 shapes = 100 035 classes. The default grid's images
are unchanged by this.

Determinism: every block of ``BLOCK`` consecutive images draws all its randomness from
``numpy.random.default_rng([seed, block, style])``: the same seed and options give identical
images for any ``n_jobs``. ``GENERATOR_VERSION`` changes whenever that would stop being true.
"""
from __future__ import annotations

import numpy as np

from ..errors import DataError
from ..progress import ProgressFn, StopFn, check_stop, report
from .catalog import BuiltinDataset
from .hand_model import LIMITS, N_PARAMS, forward_kinematics_many
from .hand_render import add_noise, composite, frame_hands, render_hands
from .hand_orientations import orientation_grid, parse_orientation
from .hand_style import CAMERA, CLEAN, STYLES, HandStyle, draw
from .hand_shapes import SHAPE_NAMES, all_poses
from .imageset import ImageSet
from .pose_split import BENCH_SPLIT, rotations, split_per_class

_YAWS = (-60, -30, 0, 30, 60)
_PITCHES = (-30, 0, 30)
_ROLLS = (-20, 20)
_ORIENTATIONS: tuple[tuple[int, int, int], ...] = tuple(
    (y, p, r) for y in _YAWS for p in _PITCHES for r in _ROLLS)  # 30 (yaw, pitch, roll), degrees
N_SHAPES = len(SHAPE_NAMES)
N_ORIENTATIONS = len(_ORIENTATIONS)
DEFAULT_SIZE = (64, 64)
BLOCK = 256  # images per random stream: the unit of determinism
GENERATOR_VERSION = 1  # bump whenever the same seed would give other images (caches key on it)
SMALL_SHAPES = ("1", "3", "5", "8", "9", "10", "A", "S", "T", "E", "B", "bent-B", "C", "O", "flat-O", "D", "G",
                "X", "L", "H", "V", "R", "K", "Y", "ILY")  # 25 well-known, distinct shapes for hand-pose-small


def shape_names() -> list[str]:
    """The 81 hand-shape names, in shape-index order."""
    return list(SHAPE_NAMES)


def orientations() -> list[tuple[int, int, int]]:
    """The 30 (yaw, pitch, roll) grid orientations in degrees, in orientation-index order. Yaw turns the
    palm toward the image's right, pitch tips the fingers toward the camera, roll leans them left."""
    return list(_ORIENTATIONS)


def orientation_name(yaw: int, pitch: int, roll: int) -> str:
    """e.g. ``"palm forward · turned 30° left · fingers 30° away · leaning 20° right"``."""
    parts = ["palm forward"]
    if yaw:
        parts.append(f"turned {abs(yaw)}° {'right' if yaw > 0 else 'left'}")
    if pitch:
        parts.append(f"fingers {abs(pitch)}° {'toward camera' if pitch > 0 else 'away'}")
    if roll:
        parts.append(f"leaning {abs(roll)}° {'left' if roll > 0 else 'right'}")
    return " · ".join(parts)


def class_name(shape: str, yaw: int, pitch: int, roll: int) -> str:
    """e.g. ``"V · palm forward · turned 30° left · leaning 20° right"``."""
    return f"{shape} · {orientation_name(yaw, pitch, roll)}"


_BY_NAME = {class_name(s, *o): (s, o) for s in SHAPE_NAMES for o in _ORIENTATIONS}


def class_factors(class_names: list[str]) -> dict:
    """What each hand-pose class is: ``{"shape": list[str], "shape_index": (k,) int64, "yaw", "pitch",
    "roll": (k,) int64 degrees}`` for ``class_names`` (any subset, any order). Unknown names raise."""
    got = []
    for n in class_names:
        hit = _BY_NAME.get(n)
        if hit is None:  # a class of a larger orientation grid: the name states its orientation
            shape, _, rest = str(n).partition(" · ")
            if shape not in SHAPE_NAMES:
                raise DataError(f"{n!r} is not a hand-pose class name")
            hit = (shape, parse_orientation(rest))
        got.append(hit)
    o = np.array([g[1] for g in got], np.int64).reshape(-1, 3)
    return {"shape": [g[0] for g in got], "shape_index": np.array([SHAPE_NAMES.index(g[0]) for g in got], np.int64),
            "yaw": o[:, 0], "pitch": o[:, 1], "roll": o[:, 2]}


def _rotations(yaw: np.ndarray, pitch: np.ndarray, roll: np.ndarray) -> np.ndarray:
    """``(m, 3, 3)`` rotations Rz(roll) @ Rx(pitch) @ Ry(yaw), angles in degrees (``hand_model``'s)."""
    return rotations(*(np.deg2rad(np.asarray(a, np.float64)) for a in (yaw, pitch, roll)))


def orientation_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle in degrees of the rotation between orientations ``a`` and ``b`` ((k, 3) yaw, pitch, roll)."""
    Ra = _rotations(*np.asarray(a, np.float64).reshape(-1, 3).T)
    Rb = _rotations(*np.asarray(b, np.float64).reshape(-1, 3).T)
    tr = np.einsum("kij,kij->k", Ra, Rb)  # trace(Ra^T Rb)
    return np.rad2deg(np.arccos(np.clip((tr - 1.0) / 2.0, -1.0, 1.0)))


def pose_match(true_names: list[str], predicted_names: list[str], max_degrees: float = 30.0) -> np.ndarray:
    """``(k,)`` bool: same shape and orientation within ``max_degrees`` (the paper's score for real
    photos, whose orientation a person can only judge to ~30°)."""
    t, p = class_factors(true_names), class_factors(predicted_names)
    ot = np.stack([t["yaw"], t["pitch"], t["roll"]], 1)
    op = np.stack([p["yaw"], p["pitch"], p["roll"]], 1)
    return (t["shape_index"] == p["shape_index"]) & (orientation_distance(ot, op) <= max_degrees + 1e-6)


def pose_scores(true_names: list[str], predicted_names: list) -> dict:
    """What a person sees right: ``class_accuracy`` (the exact class), ``shape_accuracy`` (the shape, orientation
    ignored) and ``pose_accuracy_within_30`` (:func:`pose_match`) of ``predicted_names`` against ``true_names``;
    a prediction of None (no hand named, or named at the wrong place) is wrong. None values for no names."""
    if not len(true_names):
        return {"class_accuracy": None, "shape_accuracy": None, "pose_accuracy_within_30": None}
    said = np.array([p is not None for p in predicted_names])
    t = [a for a, ok in zip(true_names, said) if ok]
    p = [b for b, ok in zip(predicted_names, said) if ok]
    exact, shape, pose = (np.zeros(len(true_names), bool) for _ in range(3))
    if t:
        exact[said] = [a == b for a, b in zip(t, p)]
        shape[said] = class_factors(t)["shape_index"] == class_factors(p)["shape_index"]
        pose[said] = pose_match(t, p, 30)
    return {"class_accuracy": float(exact.mean()), "shape_accuracy": float(shape.mean()),
            "pose_accuracy_within_30": float(pose.mean())}


def pick_indices(total: int, k, what: str, names: tuple[str, ...] | None = None) -> np.ndarray:
    """Indices into ``range(total)``: all (None), ``k`` spread evenly (int), or named (list / comma text)."""
    if k is None or (isinstance(k, (int, np.integer)) and k == total):
        return np.arange(total)
    if isinstance(k, str) and not k.strip().isdigit():
        k = [s.strip() for s in k.split(",") if s.strip()]
    if isinstance(k, (list, tuple)):
        if names is None:
            raise DataError(f"hand-pose: {what} takes a count")
        bad = [s for s in k if s not in names]
        if bad or not k:
            raise DataError(f"hand-pose: unknown {what} {bad or k}; known: {', '.join(names)}")
        return np.array(sorted({names.index(s) for s in k}))
    try:
        k = int(k)
    except (TypeError, ValueError):
        raise DataError(f"hand-pose: {what} must be an integer between 1 and {total}, got {k!r}") from None
    if not 1 <= k <= total:
        raise DataError(f"hand-pose: {what} must be an integer between 1 and {total}, got {k!r}")
    return np.unique(np.round(np.linspace(0, total - 1, k)).astype(int))


def orientation_table(orientations=None) -> tuple[np.ndarray, np.ndarray]:
    """``(grid (G, 3) yaw/pitch/roll degrees, chosen (k,) int64 indices into it)`` for the
    ``orientations`` option: None or up to 30 -> the default grid (all, or k spread evenly); more ->
    the even grid of that many orientations (:func:`.hand_orientations.orientation_grid`), all of it."""
    if orientations is not None and not isinstance(orientations, (list, tuple)):
        try:
            k = int(orientations)
        except (TypeError, ValueError):
            raise DataError(f"hand-pose: orientations must be an integer, got {orientations!r}") from None
        if k > N_ORIENTATIONS:
            g = orientation_grid(k)
            return g, np.arange(len(g))
    return np.asarray(_ORIENTATIONS, np.int64), pick_indices(N_ORIENTATIONS, orientations, "orientations")


def render_block(block: int, shapes: np.ndarray, orients: np.ndarray, size: tuple[int, int], seed: int,
                 style: HandStyle, colour: bool = False, grid: np.ndarray | None = None) -> np.ndarray:
    """The images of one determinism block: per image a shape index (m,) and an orientation index (m,)
    into ``grid`` ((G, 3) degrees; default the 30 default orientations) -> ``(m, h, w)`` uint8 grey
    (``colour``: ``(m, h, w, 3)`` RGB)."""
    import cv2

    h, w = size
    m = len(shapes)
    rng = np.random.default_rng([int(seed), int(block), style.stream])
    n_tiles = style.n_tiles
    # All random draws of the block, in a fixed order.
    params = all_poses()[shapes] + rng.uniform(-style.joint_jitter, style.joint_jitter, (m, N_PARAMS))
    params = np.clip(params, LIMITS[:, 0], LIMITS[:, 1])
    table = _ORIENTATIONS if grid is None else grid
    ang = np.asarray(table, np.float64)[orients] + rng.uniform(-style.angle_jitter, style.angle_jitter, (m, 3))
    fill = style.fill * (1.0 + rng.uniform(-style.scale_jitter, style.scale_jitter, m))
    shift = rng.uniform(-style.shift_jitter, style.shift_jitter, (m, 2))
    light = style.draw_lights(rng, m)
    ambient = draw(rng, style.ambient, m)
    skin = np.asarray(style.skins, np.float64)[rng.integers(0, len(style.skins), m)]
    skin = skin * rng.uniform(0.93, 1.07, (m, 1))
    tile = rng.integers(0, n_tiles, m)
    zoom = rng.integers(0, 2, m)
    bg_u = rng.random((m, 2))
    flip = rng.integers(0, 4, m)
    contrast = draw(rng, style.background_contrast, m)
    blur = draw(rng, style.blur, m)
    sigma = draw(rng, style.noise, m)
    quality = draw(rng, style.jpeg_quality, m, integers=True) if style.jpeg_quality else None

    caps = forward_kinematics_many(params)
    R = _rotations(ang[:, 0], ang[:, 1], ang[:, 2])
    scale, offset = np.empty(m), np.empty((m, 2))
    frame_hands(caps, R, fill, shift, h, w, scale, offset)
    shade = np.empty((m, h, w), np.float32)
    alpha = np.empty((m, h, w), np.float32)
    render_hands(caps, R, scale, offset, light, ambient, shade, alpha)

    ch = 3 if colour else 1
    bank = style.backgrounds(max(h, w), grey=not colour)
    bg = np.empty((m, h, w, ch), np.uint8)
    for i in range(m):  # a crop of a tile at one of two zooms, mirrored / flipped
        t = bank[zoom[i]][tile[i]]
        y0 = int(bg_u[i, 0] * (t.shape[0] - h))
        x0 = int(bg_u[i, 1] * (t.shape[1] - w))
        crop = t[y0:y0 + h, x0:x0 + w]
        crop = crop[:, ::-1] if flip[i] & 1 else crop
        bg[i] = crop[::-1] if flip[i] & 2 else crop
    albedo = skin if colour else skin @ np.array([[0.299], [0.587], [0.114]])
    img = np.empty((m, h, w, ch), np.float32)
    composite(bg, contrast, shade, alpha, np.ascontiguousarray(albedo, np.float32), img)
    for i in range(m):
        if blur[i] >= 0.3:
            img[i] = cv2.GaussianBlur(img[i], (0, 0), float(blur[i])).reshape(h, w, ch)
    out = np.empty((m, h, w, ch), np.uint8)
    noise = np.frombuffer(rng.bytes(m * h * w * ch), np.uint8).reshape(m, h, w, ch)
    add_noise(img, noise, style.noise_lut, sigma.astype(np.float32), out)
    if quality is not None:
        for i in range(m):
            im = out[i] if colour else out[i, ..., 0]
            ok, buf = cv2.imencode(".jpg", im[..., ::-1] if colour else im, [cv2.IMWRITE_JPEG_QUALITY, int(quality[i])])
            dec = cv2.imdecode(buf, cv2.IMREAD_COLOR if colour else cv2.IMREAD_GRAYSCALE)
            out[i] = (dec[..., ::-1] if colour else dec[..., None])
    return out if colour else out[..., 0]


def generate_hand_pose(*, shapes=None, orientations=None, images_per_class: int = 60,
                       size: tuple[int, int] | int | None = None, seed: int = 0, style: str | HandStyle = "clean",
                       n_jobs: int | None = 1, name: str = "hand-pose", progress: ProgressFn = None,
                       should_stop: StopFn = None) -> ImageSet:
    """Generate ``shapes`` x ``orientations`` classes, ``images_per_class`` each, class-major order.

    ``shapes``: None (all 81), a count (spread evenly) or names (list or comma-separated text);
    ``orientations``: None (all 30), a count up to 30 spread evenly over the default grid, or a larger
    count: an even grid over all orientations (:func:`orientation_table`). ``style``: ``"clean"``,
    ``"camera"`` or a :class:`HandStyle`. Returns an :class:`ImageSet` of ``(n, h, w)`` uint8 grey
    images with labels ``(n,)`` int64 = ``shape * n_orientations + orientation`` over the subsets.
    """
    if size is None:
        size = DEFAULT_SIZE
    if isinstance(size, str):  # from the command line: "64" or "48x64"
        try:
            size = tuple(int(v) for v in size.lower().split("x")) if "x" in size.lower() else int(size)
        except ValueError:
            raise DataError(f"{name}: size must be N or HxW, got {size!r}") from None
    if isinstance(size, (int, np.integer)):
        size = (int(size), int(size))
    h, w = (int(v) for v in size)
    if h < 16 or w < 16:
        raise DataError(f"{name}: image size must be at least 16x16, got {h}x{w}")
    if not isinstance(images_per_class, (int, np.integer)) or images_per_class < 1:
        raise DataError(f"{name}: images_per_class must be a positive integer, got {images_per_class!r}")
    if isinstance(style, str):
        if style not in STYLES:
            raise DataError(f"{name}: style must be one of {', '.join(STYLES)}, got {style!r}")
        style = STYLES[style]
    sh = pick_indices(N_SHAPES, shapes, "shapes", SHAPE_NAMES)
    grid, orr = orientation_table(orientations)
    shape_idx = np.repeat(sh, len(orr))
    orient_idx = np.tile(orr, len(sh))
    names = [class_name(SHAPE_NAMES[s], *(int(a) for a in grid[o])) for s, o in zip(shape_idx, orient_idx)]
    labels = np.repeat(np.arange(len(names), dtype=np.int64), images_per_class)
    n = len(labels)
    images = np.empty((n, h, w), np.uint8)
    report(progress, 0.0, f"generating {name}")
    all_poses()  # solve the shapes and build the backgrounds once, before any thread
    style.backgrounds(max(h, w))
    blocks = list(range((n + BLOCK - 1) // BLOCK))
    done = [0]

    def task(b: int) -> None:
        check_stop(should_stop)
        a, e = b * BLOCK, min(n, (b + 1) * BLOCK)
        images[a:e] = render_block(b, shape_idx[labels[a:e]], orient_idx[labels[a:e]], (h, w), seed, style,
                                   grid=grid)
        done[0] += e - a
        report(progress, done[0] / n, f"generating {name}")

    from joblib import Parallel, delayed, effective_n_jobs

    jobs = min(effective_n_jobs(n_jobs), len(blocks))
    if jobs <= 1:
        for b in blocks:
            task(b)
    else:  # the numba kernels, OpenCV and numpy release the GIL; blocks write disjoint slices
        Parallel(n_jobs=jobs, backend="threading")(delayed(task)(b) for b in blocks)
    return ImageSet(images, labels, names, name=name)


def _loader(name: str, shapes, orients, ipc: int):
    def load(*, size=None, progress: ProgressFn = None, should_stop: StopFn = None, images_per_class=ipc,
             seed=0, shapes=shapes, orientations=orients, n_jobs=1, style="clean", **_: object) -> ImageSet:
        def opt_int(v, what):  # options may arrive as text from the command line
            try:
                return None if v is None else int(v)
            except (TypeError, ValueError):
                raise DataError(f"{name}: {what} must be an integer, got {v!r}") from None

        return generate_hand_pose(shapes=shapes, orientations=opt_int(orientations, "orientations"),
                                  images_per_class=opt_int(images_per_class, "images_per_class"), size=size,
                                  seed=opt_int(seed, "seed"), style=style, n_jobs=opt_int(n_jobs, "n_jobs"),
                                  name=name, progress=progress, should_stop=should_stop)
    return load


BUILTINS = (
    BuiltinDataset("hand-pose", f"generated: 81 hand shapes x 30 3-D orientations = 2430 classes, 64x64 grey, "
                   f"{sum(BENCH_SPLIT)} images per class by default (the ClassMap paper's hand poses; "
                   f"style=camera for the real-photo stand-in; orientations=N > 30: an even grid over all "
                   f"3-D orientations, e.g. 1235 for 100 035 classes)",
                   _loader("hand-pose", None, None, sum(BENCH_SPLIT)), version=GENERATOR_VERSION),
    BuiltinDataset("hand-pose-small", "generated: 25 hand shapes x 10 orientations = 250 classes, 64x64 grey, "
                   "20 images per class (demo, tests)",
                   _loader("hand-pose-small", ",".join(SMALL_SHAPES), 10, 20), version=GENERATOR_VERSION),
)

__all__ = ["BENCH_SPLIT", "BLOCK", "BUILTINS", "CAMERA", "CLEAN", "GENERATOR_VERSION", "HandStyle", "N_ORIENTATIONS", "N_SHAPES",
           "SMALL_SHAPES", "class_factors", "class_name", "generate_hand_pose", "orientation_distance",
           "orientation_name", "orientation_table", "orientations", "pick_indices", "pose_match", "pose_scores", "render_block", "shape_names", "split_per_class"]
