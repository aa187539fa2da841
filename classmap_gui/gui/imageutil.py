"""numpy uint8 images <-> Qt images: the only place the GUI converts pixels."""
from __future__ import annotations

import numpy as np
from PySide6.QtGui import QImage, QPixmap


def to_qimage(img: np.ndarray) -> QImage:
    """A QImage owning a copy of ``img``: ``(h, w)`` uint8 grey or ``(h, w, 3)`` uint8 RGB."""
    img = np.ascontiguousarray(img)
    if img.dtype != np.uint8:
        raise ValueError(f"expected uint8 image, got {img.dtype}")
    h, w = img.shape[:2]
    if img.ndim == 2:
        q = QImage(img.data, w, h, img.strides[0], QImage.Format_Grayscale8)
    elif img.ndim == 3 and img.shape[2] == 3:
        q = QImage(img.data, w, h, img.strides[0], QImage.Format_RGB888)
    else:
        raise ValueError(f"expected (h,w) or (h,w,3) image, got {img.shape}")
    return q.copy()  # detach from the numpy buffer, which may be freed


def to_pixmap(img: np.ndarray, size: int | None = None) -> QPixmap:
    """A QPixmap of ``img``; with ``size`` scaled (nearest for tiny images, so pixels stay crisp)."""
    from PySide6.QtCore import Qt

    pm = QPixmap.fromImage(to_qimage(img))
    if size is not None:
        mode = Qt.FastTransformation if max(img.shape[:2]) * 2 <= size else Qt.SmoothTransformation
        pm = pm.scaled(size, size, Qt.KeepAspectRatio, mode)
    return pm
