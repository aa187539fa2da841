"""Small reusable widgets: the task progress strip and thumbnail helpers."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QListView, QListWidget,
                               QListWidgetItem, QProgressBar, QPushButton, QVBoxLayout, QWidget)

from .imageutil import to_pixmap, to_qimage


def strip_image(images: np.ndarray, n: int = 6) -> np.ndarray:
    """Up to ``n`` images side by side, ``(h, n*w)`` or ``(h, n*w, 3)`` uint8, blank-padded."""
    k = min(n, len(images))
    h, w = images.shape[1:3]
    out = np.full((h, n * w) + images.shape[3:], 255, np.uint8)
    if k:
        out[:, : k * w] = np.concatenate(list(images[:k]), axis=1)
    return out


def strip_icon(images: np.ndarray, n: int = 6, height: int = 28) -> QIcon:
    strip = strip_image(images, n)
    pm = QPixmap.fromImage(to_qimage(strip)).scaledToHeight(height, Qt.FastTransformation
                                                            if strip.shape[0] * 2 <= height else Qt.SmoothTransformation)
    return QIcon(pm)


class TaskProgress(QWidget):
    """Stage name, progress bar, remaining time and a Cancel button, for the status bar."""

    cancelRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.stage = QLabel()
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setFixedWidth(220)
        self.bar.setTextVisible(True)
        self.eta = QLabel()
        self.cancel = QPushButton("Cancel")
        self.cancel.clicked.connect(self.cancelRequested)
        for w in (self.stage, self.bar, self.eta, self.cancel):
            lay.addWidget(w)
        self.setVisible(False)

    def start(self, title: str) -> None:
        self.stage.setText(title)
        self.bar.setValue(0)
        self.bar.setFormat("%p%")
        self.eta.setText("")
        self.cancel.setEnabled(True)
        self.setVisible(True)

    def update_progress(self, fraction: float, stage: str, eta: float) -> None:
        self.stage.setText(stage)
        self.bar.setValue(int(round(fraction * 1000)))
        if eta >= 0:
            self.eta.setText(f"{eta:.0f} s left" if eta >= 1 else "< 1 s left")
        else:
            self.eta.setText("estimating…")

    def stop(self) -> None:
        self.setVisible(False)


class ImageGridDialog(QDialog):
    """A non-modal window showing a set of images with captions (e.g. misclassified test images)."""

    def __init__(self, title: str, images: np.ndarray, captions: list[str], parent=None, size: int = 72):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(640, 420)
        lay = QVBoxLayout(self)
        self.info = QLabel(f"{len(images)} image(s)")
        lay.addWidget(self.info)
        self.grid = QListWidget()
        self.grid.setViewMode(QListView.IconMode)
        self.grid.setIconSize(QSize(size, size))
        self.grid.setResizeMode(QListView.Adjust)
        self.grid.setSpacing(4)
        for img, cap in zip(images, captions):
            self.grid.addItem(QListWidgetItem(QIcon(to_pixmap(img, size)), cap))
        lay.addWidget(self.grid)
        bb = QDialogButtonBox(QDialogButtonBox.Close)
        bb.rejected.connect(self.close)
        lay.addWidget(bb)
