"""Image files: one sub-folder per class, any common format, mixed sizes.

Hostile folders are expected: only regular files are opened (a FIFO would block forever),
an image's pixel count is read from its header and checked against a budget before decoding
(:data:`~classmap_gui.core.guards.limits.DEFAULT_MAX_IMAGE_PIXELS`, settable per call), links that lead
out of the data folder are skipped unless the caller asks to follow them, hidden files and
folders are ignored, and every skipped file is listed with the reason.
"""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from ..errors import DataError
from ..guards.files import NotRegularFile, inside, read_regular
from ..guards.limits import DEFAULT_MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE, check_fits
from ..progress import ProgressFn, StopFn, check_stop, report
from ..image_ops import fit_size
from .capture_names import groups_from_names
from .image_decode import IMAGE_EXTENSIONS, ImageRefused, checked_pixels, is_image_file
from .imageset import ImageSet, check_class_name

__all__ = ["DEFAULT_SIZE", "IMAGE_EXTENSIONS", "MAX_IMAGE_SIDE", "ImageReadError", "class_folders", "fit_size",
           "is_image_file", "load_folder", "read_image"]

DEFAULT_SIZE = (64, 64)

# OpenCV prints "[ WARN ]" lines from its other parts too (video, camera); image decoding is silenced
# altogether while it runs (image_decode.quiet_opencv): the loader reports those files itself.
try:
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)
except AttributeError:  # pragma: no cover - OpenCV builds without the logging module
    pass


class ImageReadError(DataError):
    """One image file that cannot be used; ``path`` and ``reason`` separately for listing."""

    def __init__(self, path: str | Path, reason: str):
        self.path, self.reason = str(path), reason
        super().__init__(f"{path}: cannot read image: {reason}")


def read_image(path: str | Path, *, size: tuple[int, int] | None = DEFAULT_SIZE, grey: bool = True,
               max_pixels: int = DEFAULT_MAX_IMAGE_PIXELS) -> np.ndarray:
    """Read one image file as uint8 ``(h, w)`` grey or ``(h, w, 3)`` RGB, resized to ``size`` (h, w).

    Raises :class:`ImageReadError` (a DataError) when the file is not a regular file or is refused by
    the one reading rule of the app and its exports (:func:`.image_decode.checked_pixels`: a
    PNG/JPEG/BMP/TIFF/WebP whose header declares at most ``max_pixels`` pixels and no side under
    :data:`..read_limits.MIN_IMAGE_SIDE`, that decodes). Uses bytes + ``cv2.imdecode`` so that paths with any
    characters work.
    """
    path = Path(path)
    try:
        data = read_regular(path, max_bytes=max(1 << 20, 8 * max_pixels), too_big="is larger than any image "
                            "within the pixel limit")
    except NotRegularFile as exc:
        raise ImageReadError(path, str(exc).removeprefix(f"{path} ")) from None
    except OSError as exc:
        raise ImageReadError(path, exc.strerror or str(exc)) from None
    try:
        img = checked_pixels(data, grey, max_pixels, " (--max-image-pixels)")
    except ImageRefused as exc:
        raise ImageReadError(path, str(exc)) from None
    return fit_size(img, size)


def class_folders(root: Path) -> list[Path]:
    """The class sub-folders of ``root``, sorted by name, hidden ones excluded."""
    return sorted((p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")), key=lambda p: p.name)


def _outside_link(p: Path, root: Path) -> bool:
    return p.is_symlink() and not inside(p, root)


def list_class_files(root: Path, *, follow_links: bool = False
                     ) -> tuple[list[Path], list[list[Path]], list[tuple[str, str]]]:
    """(class folders, their image files, skipped ``(path, reason)``) of a data folder.

    Links that lead out of ``root`` (class folders or files) are skipped with a note unless
    ``follow_links``; hidden files and folders are ignored; every class folder name is checked
    (:func:`check_class_name`).
    """
    skipped: list[tuple[str, str]] = []
    classes = []
    for d in class_folders(root):
        if not follow_links and _outside_link(d, root):
            skipped.append((str(d), "a link to a folder outside the data folder; skipped (--follow-links uses it)"))
            continue
        check_class_name(d.name, where=f"{root}: class folder")
        classes.append(d)
    files = [image_files(d, root, follow_links=follow_links, skipped=skipped) for d in classes]
    return classes, files, skipped


def image_files(folder: Path, root: Path | None = None, *, follow_links: bool = False,
                skipped: list[tuple[str, str]] | None = None) -> list[Path]:
    """The visible image files of ``folder``, sorted; links that lead out of ``root`` (default: the
    folder itself) are left out and noted in ``skipped`` as ``(path, reason)`` unless ``follow_links``."""
    root = folder if root is None else root
    out = []
    for f in sorted(folder.iterdir()):
        if not is_image_file(f):
            continue
        if not follow_links and _outside_link(f, root):
            if skipped is not None:
                skipped.append((str(f), "a link to a file outside the data folder; skipped (--follow-links uses it)"))
            continue
        out.append(f)
    return out


def read_images(files: list[Path], *, size: tuple[int, int] | None, grey: bool, max_pixels: int,
                skipped: list[tuple[str, str]], progress: ProgressFn = None, should_stop: StopFn = None
                ) -> tuple[list[np.ndarray], list[int]]:
    """Read ``files``: ``(images, positions in files)``; each unreadable one (or, without ``size``,
    one whose size differs from the first) is appended to ``skipped`` as ``(path, reason)``."""
    images, kept = [], []
    for i, f in enumerate(files):
        if i % 64 == 0:
            check_stop(should_stop)
            report(progress, i / max(1, len(files)), "reading images")
        try:
            img = read_image(f, size=size, grey=grey, max_pixels=max_pixels)
        except ImageReadError as exc:
            skipped.append((str(f), exc.reason))
            continue
        if images and img.shape != images[0].shape:
            skipped.append((str(f), f"size {img.shape[:2]} differs from {images[0].shape[:2]}; give a size to resize"))
            continue
        images.append(img)
        kept.append(i)
    report(progress, 1.0, "reading images")
    return images, kept


def load_folder(
    root: str | Path,
    *,
    size: tuple[int, int] | None = DEFAULT_SIZE,
    grey: bool = True,
    min_per_class: int = 1,
    max_pixels: int = DEFAULT_MAX_IMAGE_PIXELS,
    follow_links: bool = False,
    progress: ProgressFn = None,
    should_stop: StopFn = None,
) -> ImageSet:
    """Load a folder tree, one sub-folder per class, into an :class:`ImageSet`.

    Images of any size are brought to ``size`` (h, w); with ``size=None`` all images must
    already share one size. Unreadable files, images over ``max_pixels`` (read from the header,
    before decoding) and links out of ``root`` (unless ``follow_links``) are skipped and listed in
    ``skipped``. A missing folder, a folder with no class sub-folders, a class folder whose name
    cannot be a class name, or a class with fewer than ``min_per_class`` readable images is a
    :class:`DataError` naming the folder. Captured frames whose names carry their burst
    (:mod:`.capture_names`) get their capture groups back in ``groups``.
    """
    root = Path(root)
    if not root.is_dir():
        raise DataError(f"{root} is not a folder. Give a folder with one sub-folder of images per class.")
    try:
        classes, per_class, skipped = list_class_files(root, follow_links=follow_links)
    except OSError as exc:
        raise DataError(f"cannot list {exc.filename or root}: {exc.strerror or exc}") from None
    if not classes:
        raise DataError(f"{root} has no class sub-folders. Put the images of each class in a sub-folder named after it.")
    empty = [d.name for d, fs in zip(classes, per_class) if not fs]
    if empty:
        raise DataError(f"{root}: these class folders have no images: {', '.join(empty)}. "
                        f"Add images ({', '.join(IMAGE_EXTENSIONS)}) or remove the folders.")
    files = [(ci, f) for ci, fs in enumerate(per_class) for f in fs]
    if size is not None:  # the stacked set must fit (twice: the list of images, then the stacked array)
        check_fits("image size", 2 * len(files) * size[0] * size[1] * (1 if grey else 3),
                   f"{len(files)} images of {size[1]}x{size[0]} {'grey' if grey else 'colour'}")
    images, kept = read_images([f for _, f in files], size=size, grey=grey, max_pixels=max_pixels, skipped=skipped,
                               progress=progress, should_stop=should_stop)
    labels = [files[i][0] for i in kept]
    sources = [str(files[i][1]) for i in kept]
    counts = np.bincount(np.asarray(labels, dtype=np.int64), minlength=len(classes))
    few = [f"{classes[c].name} ({counts[c]})" for c in np.flatnonzero(counts < min_per_class)]
    if few:
        need = "no readable images" if min_per_class <= 1 else f"fewer than {min_per_class} readable images"
        raise DataError(f"{root}: these classes have {need}: {', '.join(few)}"
                        + (f"; {len(skipped)} files could not be read" if skipped else ""))
    # frames saved by the capture panel name their burst: rebuild the groups so splits keep bursts whole
    return ImageSet(np.stack(images), np.asarray(labels), [d.name for d in classes], sources, skipped,
                    name=root.name, groups=groups_from_names(sources, labels))
