"""Decoding an image file's bytes to uint8 pixels, the same way in the app and in an exported
``predict.py`` (which inlines this module: numpy and OpenCV only).

:func:`checked_pixels` is the one reading rule both use: the header's size checked against the
pixel limit before anything is decoded (:mod:`.image_header`), the formats of :data:`NOT_READ`
refused by name, the decoder's size compared with the header's. Each refusal is an
:class:`ImageRefused` whose text is the reason, and it is the only word the user gets: OpenCV's own
log lines (``imdecode_ ... can't read header``, ``PNG input buffer is incomplete``, libtiff's
warnings) are silenced while it decodes (:func:`quiet_opencv`).

OpenCV's 8-bit reads (``IMREAD_GRAYSCALE`` / ``IMREAD_COLOR``) return nothing for float TIFFs,
which are valid images; those are decoded as they are and brought to uint8 here (floats are read
as 0..1, OpenCV's convention for float images; 16/32-bit integers keep their top byte).
"""
from __future__ import annotations


import cv2
import numpy as np

from ..guards.read_limits import MIN_IMAGE_SIDE
from ..guards.opencv_log import quiet_opencv
from .image_header import image_dimensions

#: Formats the header reader recognises but neither the app nor an exported predict.py reads, and why.
#: OpenCV decodes only the first frame of an animated GIF: a result for it would be for one frame of many.
NOT_READ = {"gif": "GIF images are not read (an animated GIF would be classified by its first frame alone); "
                   "convert it to PNG"}
#: The formats read, for messages.
READ_FORMATS = "PNG, JPEG, BMP, TIFF or WebP"
#: The file names read as images, from a folder and on a command line.
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")


def is_image_file(path) -> bool:
    """A visible entry of a folder (``pathlib.Path``) with an image extension that is not a folder. Not
    opened here: a FIFO or device named like an image is refused, with a note, when it is read."""
    return path.suffix.lower() in IMAGE_EXTENSIONS and not path.name.startswith(".") and not path.is_dir()


def folder_images(folder) -> list:
    """The image files of ``folder`` (a ``pathlib.Path``), sorted by name: what ``classmap predict`` and an
    exported predict.py classify when handed a folder."""
    return sorted(f for f in folder.iterdir() if is_image_file(f))


class ImageRefused(ValueError):
    """An image file's bytes that are not read; ``str`` is the reason, for ``<path>: cannot read image: <reason>``."""




def to_uint8(img: np.ndarray) -> np.ndarray:
    """Pixels of any depth as uint8: floats as 0..1 (NaN as 0), 16-bit and wider integers by their top byte."""
    if img.dtype == np.uint8:
        return img
    if img.dtype.kind == "f":
        out = np.nan_to_num(img.astype(np.float32), nan=0.0, posinf=1.0, neginf=0.0)
        return np.clip(np.rint(out * 255.0), 0, 255).astype(np.uint8)
    if img.dtype.kind in "iu":
        shift = 8 * (img.dtype.itemsize - 1)
        return (np.clip(img, 0, None).astype(np.uint64) >> shift).astype(np.uint8)
    return img.astype(np.uint8)


def decode_pixels(data: bytes, grey: bool) -> np.ndarray | None:
    """uint8 ``(h, w)`` grey or ``(h, w, 3)`` RGB from an encoded image; None when OpenCV cannot decode it."""
    with quiet_opencv():
        return _decode(np.frombuffer(data, np.uint8), grey)


def _decode(buf: np.ndarray, grey: bool) -> np.ndarray | None:
    img = cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE if grey else cv2.IMREAD_COLOR)
    if img is None:  # float (and some wide integer) TIFFs: only an unchanged read decodes them
        img = cv2.imdecode(buf, cv2.IMREAD_UNCHANGED)
        if img is None or img.ndim not in (2, 3) or img.size == 0:
            return None
        img = to_uint8(img)
        if img.ndim == 3 and img.shape[2] == 1:
            img = img[:, :, 0]
        elif img.ndim == 3 and img.shape[2] == 4:
            img = cv2.cvtColor(img, cv2.COLOR_BGRA2BGR)
        elif img.ndim == 3 and img.shape[2] != 3:
            return None
        if grey and img.ndim == 3:
            img = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        elif not grey and img.ndim == 2:
            img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    return img if grey else cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


def checked_pixels(data: bytes, grey: bool, max_pixels: int, limit_note: str = "") -> np.ndarray:
    """uint8 ``(h, w)`` grey or ``(h, w, 3)`` RGB of an image file's bytes, read by the app's rule;
    :class:`ImageRefused` saying why not. ``limit_note`` follows the pixel limit in its message (the
    option that sets it)."""
    if not data:
        raise ImageRefused("the file is empty")
    dims = image_dimensions(data)
    if dims is None:
        raise ImageRefused(f"not a {READ_FORMATS} image, or its header is damaged")
    fmt, w, h = dims
    if fmt in NOT_READ:
        raise ImageRefused(NOT_READ[fmt])
    if w < 1 or h < 1:
        raise ImageRefused(f"its header declares {w}x{h} pixels")
    if min(w, h) < MIN_IMAGE_SIDE:
        raise ImageRefused(f"{w}x{h} pixels is too small to show anything (the smallest side read is "
                           f"{MIN_IMAGE_SIDE} pixels)")
    if w * h > max_pixels:
        raise ImageRefused(f"{w}x{h} pixels ({w * h / 1e6:.0f} megapixels) is more than the limit of "
                           f"{max_pixels / 1e6:g} megapixels{limit_note}")
    try:
        img = decode_pixels(data, grey)
    except cv2.error as exc:  # OpenCV's own limits and decoder failures
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        raise ImageRefused(f"OpenCV cannot decode it ({lines[-1][:160] if lines else 'cv2.error'})") from None
    if img is None or img.size == 0:
        raise ImageRefused(f"the {fmt.upper()} data is corrupt, truncated or of an unsupported kind")
    if sorted(img.shape[:2]) != sorted((h, w)):  # the decoder saw another size than the header (EXIF may rotate)
        raise ImageRefused(f"its header declares {w}x{h} pixels, the decoder found {img.shape[1]}x{img.shape[0]}")
    return img
