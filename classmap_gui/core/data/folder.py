"""Image files: one sub-folder per class, any common format, mixed sizes."""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from ..errors import DataError
from ..progress import ProgressFn, StopFn, check_stop, report
from .imageset import ImageSet

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")
DEFAULT_SIZE = (64, 64)
# Largest image side a model works at. Recognition needs small images; the bound also keeps a
# hostile model file from making the loader's consistency check encode a giant blank image.
MAX_IMAGE_SIDE = 1024


def is_image_file(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in IMAGE_EXTENSIONS


def read_image(path: str | Path, *, size: tuple[int, int] | None = DEFAULT_SIZE, grey: bool = True) -> np.ndarray:
    """Read one image file as uint8 ``(h, w)`` grey or ``(h, w, 3)`` RGB, resized to ``size`` (h, w).

    Raises :class:`DataError` when the file cannot be decoded. Uses ``np.fromfile`` +
    ``cv2.imdecode`` so that paths with any characters work.
    """
    path = Path(path)
    try:
        buf = np.fromfile(str(path), dtype=np.uint8)
    except OSError as exc:
        raise DataError(f"cannot read {path}: {exc.strerror or exc}") from exc
    img = cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE if grey else cv2.IMREAD_COLOR) if buf.size else None
    if img is None:
        raise DataError(f"{path} is not a readable image (empty, corrupt or unsupported format)")
    if not grey:
        img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
    return fit_size(img, size)


def fit_size(img: np.ndarray, size: tuple[int, int] | None) -> np.ndarray:
    """Resize ``img`` to ``size`` (h, w) with area averaging when shrinking, linear when growing."""
    if size is None or img.shape[:2] == tuple(size):
        return img
    h, w = size
    shrink = img.shape[0] * img.shape[1] > h * w
    return cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)


def class_folders(root: Path) -> list[Path]:
    """The class sub-folders of ``root``, sorted by name, hidden ones excluded."""
    return sorted((p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")), key=lambda p: p.name)


def load_folder(
    root: str | Path,
    *,
    size: tuple[int, int] | None = DEFAULT_SIZE,
    grey: bool = True,
    min_per_class: int = 1,
    progress: ProgressFn = None,
    should_stop: StopFn = None,
) -> ImageSet:
    """Load a folder tree, one sub-folder per class, into an :class:`ImageSet`.

    Images of any size are brought to ``size`` (h, w); with ``size=None`` all images must
    already share one size. Unreadable files are skipped and listed in ``skipped``. A missing
    folder, a folder with no class sub-folders, or a class with fewer than ``min_per_class``
    readable images is a :class:`DataError` naming the folder.
    """
    root = Path(root)
    if not root.is_dir():
        raise DataError(f"{root} is not a folder. Give a folder with one sub-folder of images per class.")
    classes = class_folders(root)
    if not classes:
        raise DataError(f"{root} has no class sub-folders. Put the images of each class in a sub-folder named after it.")
    files = [(ci, f) for ci, d in enumerate(classes) for f in sorted(d.iterdir()) if is_image_file(f)]
    empty = [d.name for ci, d in enumerate(classes) if not any(c == ci for c, _ in files)]
    if empty:
        raise DataError(f"{root}: these class folders have no images: {', '.join(empty)}. "
                        f"Add images ({', '.join(IMAGE_EXTENSIONS)}) or remove the folders.")
    images, labels, sources, skipped = [], [], [], []
    for i, (ci, f) in enumerate(files):
        if i % 64 == 0:
            check_stop(should_stop)
            report(progress, i / len(files), "reading images")
        try:
            img = read_image(f, size=size, grey=grey)
        except DataError as exc:
            skipped.append((str(f), str(exc)))
            continue
        if images and img.shape != images[0].shape:
            skipped.append((str(f), f"size {img.shape[:2]} differs from {images[0].shape[:2]}; give a size to resize"))
            continue
        images.append(img)
        labels.append(ci)
        sources.append(str(f))
    report(progress, 1.0, "reading images")
    counts = np.bincount(np.asarray(labels, dtype=np.int64), minlength=len(classes))
    few = [f"{classes[c].name} ({counts[c]})" for c in np.flatnonzero(counts < min_per_class)]
    if few:
        raise DataError(f"{root}: these classes have fewer than {min_per_class} readable images: {', '.join(few)}"
                        + (f"; {len(skipped)} files could not be read" if skipped else ""))
    return ImageSet(np.stack(images), np.asarray(labels), [d.name for d in classes], sources, skipped, name=root.name)
