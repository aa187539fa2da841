"""``hand-pose`` at 10^5 classes: images and HOG features generated in chunks into memory-mapped files.

:func:`build_hand_pose_memmap` writes, into one folder,

* ``images.npy``  ``(n, h, w) uint8`` — exactly the images :func:`.hand_pose.generate_hand_pose` gives
  for the same options (same determinism blocks, same random streams);
* ``features.npy`` ``(n, D) float32`` — their HOG descriptors (``HOGFeatures`` with its defaults);
* ``meta.json`` — the options, versions and stage times, written last: a folder without it is
  incomplete and is rebuilt.

Images are class-major, ``images_per_class`` per class, so row ``i`` belongs to class
``i // images_per_class`` and its position within the class is ``i % images_per_class`` (the
benchmark's split is by that position, as :func:`.pose_split.split_per_class` splits). Nothing is
held in RAM beyond one chunk per worker: each task opens the files, fills its rows and unmaps them.

Two stages, each timed: generation (every chunk rendered), then encoding (every chunk's HOG). The
tasks run through ``joblib.Parallel`` — threads of this process by default, or the workers of a Dask
cluster inside :func:`classmap_gui.core.parallel.parallel_backend` ``("dask")``. Workers write
straight into the files, so they must see the same file system (a local cluster does; for a remote
one put the folder on a shared disk). The results do not depend on where a chunk ran.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ConfigError, DataError
from ..progress import ProgressFn, StopFn, check_stop, report
from .hand_pose import BLOCK, GENERATOR_VERSION, N_SHAPES, SHAPE_NAMES, class_name, orientation_table, pick_indices, \
    render_block
from .hand_style import STYLES

META_FILE = "meta.json"
IMAGES_FILE = "images.npy"
FEATURES_FILE = "features.npy"
#: determinism blocks (256 images each) per task
CHUNK_BLOCKS = 16
LAYOUT_VERSION = 1


@dataclass
class HandPoseMemmap:
    """A generated, encoded ``hand-pose`` set on disk: ``images (n, h, w) uint8`` and ``features (n, D)
    float32`` read-only memory maps, ``class_names`` (C,), ``images_per_class``, the ``folder``, stage
    ``seconds`` (``generation``, ``encoding``) and whether the folder was reused (``cached``)."""

    folder: Path
    images: np.ndarray
    features: np.ndarray
    class_names: list[str]
    images_per_class: int
    seconds: dict = field(default_factory=dict)
    cached: bool = False

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return len(self.class_names)

    def rows(self, positions) -> np.ndarray:
        """``(C * len(positions),) int64`` rows holding the images at these positions within every class,
        class-major (class 0's positions first)."""
        pos = np.asarray(positions, np.int64)
        if pos.ndim != 1 or pos.size == 0 or pos.min() < 0 or pos.max() >= self.images_per_class:
            raise DataError(f"positions must lie in 0..{self.images_per_class - 1}, got {positions!r}")
        return (np.arange(self.n_classes, dtype=np.int64)[:, None] * self.images_per_class + pos[None]).ravel()

    def labels(self, rows: np.ndarray) -> np.ndarray:
        """Class index of each row, ``(k,) int64``."""
        return np.asarray(rows, np.int64) // self.images_per_class


def _spec(shapes, orientations, images_per_class, size, seed, style, hog_params) -> dict:
    return {"layout": LAYOUT_VERSION, "generator": GENERATOR_VERSION, "shapes": shapes, "orientations": orientations,
            "images_per_class": images_per_class, "size": list(size), "seed": seed, "style": style,
            "hog": hog_params}


def _plan(shapes, orientations, images_per_class: int):
    """``(shape index per class, orientation index per class, grid, class names)``."""
    sh = pick_indices(N_SHAPES, shapes, "shapes", SHAPE_NAMES)
    grid, orr = orientation_table(orientations)
    shape_idx = np.repeat(sh, len(orr))
    orient_idx = np.tile(orr, len(sh))
    names = [class_name(SHAPE_NAMES[s], *(int(a) for a in grid[o])) for s, o in zip(shape_idx, orient_idx)]
    return shape_idx, orient_idx, grid, names


def _generate_task(folder: str, b0: int, b1: int, spec: dict) -> float:
    """Render determinism blocks ``b0..b1-1`` into ``images.npy``; returns seconds spent. Module level:
    Dask workers run it."""
    t = time.perf_counter()
    shape_idx, orient_idx, grid, _ = _plan(spec["shapes"], spec["orientations"], spec["images_per_class"])
    ipc = spec["images_per_class"]
    n = len(shape_idx) * ipc
    style = STYLES[spec["style"]]
    images = np.load(Path(folder) / IMAGES_FILE, mmap_mode="r+")
    try:
        for b in range(b0, b1):
            a, e = b * BLOCK, min(n, (b + 1) * BLOCK)
            cls = np.arange(a, e) // ipc
            images[a:e] = render_block(b, shape_idx[cls], orient_idx[cls], tuple(spec["size"]), spec["seed"], style,
                                       grid=grid)
        images.flush()
    finally:
        del images
    return time.perf_counter() - t


def _encode_task(folder: str, a: int, e: int, spec: dict) -> float:
    """HOG of images ``a..e-1`` into ``features.npy``; returns seconds spent."""
    from ..features.hog import HOGFeatures

    t = time.perf_counter()
    images = np.load(Path(folder) / IMAGES_FILE, mmap_mode="r")
    features = np.load(Path(folder) / FEATURES_FILE, mmap_mode="r+")
    try:
        hog = HOGFeatures(**spec["hog"], n_jobs=1).fit(images[:1])
        features[a:e] = hog.transform(np.array(images[a:e]))
        features.flush()
    finally:
        del images, features
    return time.perf_counter() - t


def _run(tasks, n_jobs, progress: ProgressFn, should_stop: StopFn, stage: str, lo: float, hi: float) -> None:
    from joblib import Parallel, delayed

    tasks = list(tasks)
    step = max(1, 4 * max(1, int(n_jobs or 1)))
    with Parallel(n_jobs=n_jobs, prefer="threads") as par:  # a soft hint: a Dask backend around us wins
        for s in range(0, len(tasks), step):
            check_stop(should_stop)
            par(delayed(fn)(*args) for fn, args in tasks[s:s + step])
            report(progress, lo + (hi - lo) * min(1.0, (s + step) / len(tasks)), stage)


def open_hand_pose_memmap(folder: str | os.PathLike) -> HandPoseMemmap:
    """Open a complete folder written by :func:`build_hand_pose_memmap` (DataError when incomplete)."""
    folder = Path(folder)
    try:
        meta = json.loads((folder / META_FILE).read_text())
    except (OSError, ValueError) as exc:
        raise DataError(f"{folder} holds no complete generated hand-pose set ({exc})") from None
    spec = meta["spec"]
    *_, names = _plan(spec["shapes"], spec["orientations"], spec["images_per_class"])
    images = np.load(folder / IMAGES_FILE, mmap_mode="r")
    features = np.load(folder / FEATURES_FILE, mmap_mode="r")
    n = len(names) * spec["images_per_class"]
    if images.shape[0] != n or features.shape[0] != n:
        raise DataError(f"{folder}: the files hold {images.shape[0]} images, the options say {n}")
    return HandPoseMemmap(folder, images, features, names, spec["images_per_class"], dict(meta.get("seconds", {})),
                          cached=True)


def build_hand_pose_memmap(folder: str | os.PathLike, *, shapes=None, orientations=None, images_per_class: int = 8,
                           size: int = 64, seed: int = 0, style: str = "clean", n_jobs: int | None = 2,
                           reuse: bool = True, progress: ProgressFn = None,
                           should_stop: StopFn = None) -> HandPoseMemmap:
    """Generate ``hand-pose`` (``shapes`` x ``orientations`` classes, ``images_per_class`` each) and its HOG
    features into memory-mapped files in ``folder`` (created); see the module docstring.

    ``orientations``: as :func:`.hand_pose.generate_hand_pose` (e.g. 1235 for 81 x 1235 = 100 035
    classes). ``n_jobs``: parallel tasks (threads here, or workers of an active Dask backend).
    ``reuse``: open the folder's files when they were built with the same options (``cached``).
    Returns a :class:`HandPoseMemmap` (read-only maps)."""
    from ..features.hog import HOGFeatures

    if style not in STYLES:
        raise DataError(f"hand-pose: style must be one of {', '.join(STYLES)}, got {style!r}")
    size = int(size)
    if size < 16:
        raise DataError(f"hand-pose: image size must be at least 16, got {size}")
    if not isinstance(images_per_class, (int, np.integer)) or images_per_class < 1:
        raise DataError(f"hand-pose: images_per_class must be a positive integer, got {images_per_class!r}")
    hog = HOGFeatures()
    hog_params = {k: v for k, v in hog.get_params().items() if k != "n_jobs"}
    spec = _spec(shapes, None if orientations is None else int(orientations), int(images_per_class), (size, size),
                 int(seed), style, hog_params)
    folder = Path(folder)
    if reuse and (folder / META_FILE).is_file():
        try:
            if json.loads((folder / META_FILE).read_text()).get("spec") == spec:
                return open_hand_pose_memmap(folder)
        except (OSError, ValueError, DataError):
            pass
    shape_idx, _, _, names = _plan(shapes, spec["orientations"], spec["images_per_class"])
    n = len(names) * spec["images_per_class"]
    D = hog.fit(np.zeros((1, size, size), np.uint8)).n_features_out_
    folder.mkdir(parents=True, exist_ok=True)
    (folder / META_FILE).unlink(missing_ok=True)
    need = n * (size * size + 4 * D)
    st = os.statvfs(folder)
    if st.f_bavail * st.f_frsize < need * 1.05:
        raise ConfigError(f"{folder}: the set needs {need / 2**30:.1f} GiB of disk, "
                          f"{st.f_bavail * st.f_frsize / 2**30:.1f} GiB are free; choose another --cache-dir")
    np.lib.format.open_memmap(folder / IMAGES_FILE, mode="w+", dtype=np.uint8, shape=(n, size, size)).flush()
    np.lib.format.open_memmap(folder / FEATURES_FILE, mode="w+", dtype=np.float32, shape=(n, D)).flush()
    from .hand_pose import all_poses  # solve shapes / build backgrounds once before threads share them

    all_poses()
    STYLES[style].backgrounds(size)
    blocks = (n + BLOCK - 1) // BLOCK
    seconds = {}
    t = time.perf_counter()
    _run([(_generate_task, (str(folder), b, min(blocks, b + CHUNK_BLOCKS), spec))
          for b in range(0, blocks, CHUNK_BLOCKS)], n_jobs, progress, should_stop, "generating", 0.0, 0.6)
    seconds["generation"] = time.perf_counter() - t
    t = time.perf_counter()
    step = CHUNK_BLOCKS * BLOCK
    _run([(_encode_task, (str(folder), a, min(n, a + step), spec)) for a in range(0, n, step)], n_jobs, progress,
         should_stop, "encoding (HOG)", 0.6, 1.0)
    seconds["encoding"] = time.perf_counter() - t
    meta = {"spec": spec, "n_images": n, "n_classes": len(names), "n_features": int(D), "seconds": seconds}
    tmp = folder / (META_FILE + ".part")
    tmp.write_text(json.dumps(meta, indent=1))
    os.replace(tmp, folder / META_FILE)
    out = open_hand_pose_memmap(folder)
    out.cached = False
    return out


__all__ = ["CHUNK_BLOCKS", "HandPoseMemmap", "build_hand_pose_memmap", "open_hand_pose_memmap"]
