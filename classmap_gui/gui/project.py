"""The one model object of the GUI: the open project.

It holds the image set, the trained recogniser with its evaluation report, the training
settings, the file path and the dirty flag. Panels change the project only through its
methods and learn about changes only from its signals; they never talk to each other.
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np
from PySide6.QtCore import QObject, Signal

from ..core.data import ImageSet
from ..core.data.folder import fit_size
from ..core.errors import DataError


def write_image_atomic(path: Path, img: np.ndarray) -> None:
    """Write ``img`` (uint8 grey or RGB) as PNG through a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    bgr = img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_RGB2BGR)
    ok, buf = cv2.imencode(".png", bgr)
    if not ok:
        raise DataError(f"could not encode the image for {path}")
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(buf.tobytes())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def default_capture_root() -> Path:
    """Where captures of a not-yet-saved project go: the platform's user data folder."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("classmap-studio", appauthor=False)) / "captures" / time.strftime("%Y%m%d-%H%M%S")


def _safe_name(name: str) -> str:
    keep = "".join(ch if ch.isalnum() or ch in "-_. " else "_" for ch in name).strip(" .")
    return keep or "class"


class Project(QObject):
    """The open project. Signals:

    - ``datasetChanged``: images, labels or class names changed.
    - ``modelChanged``: the trained recogniser / report was set or cleared.
    - ``stateChanged``: path or dirty flag changed (window title, status bar).
    - ``message(str)``: a short note for the status bar.
    """

    datasetChanged = Signal()
    modelChanged = Signal()
    stateChanged = Signal()
    message = Signal(str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.imageset: ImageSet | None = None
        self.recogniser = None
        self.report = None
        self.split = None          # (train ImageSet, test ImageSet) of the last training, for inspection
        self.settings: dict = {}
        self.path: Path | None = None
        self.dirty = False
        self.trained_on_version = -1
        self.data_version = 0
        self.capture_root: Path | None = None

    # ------------------------------------------------------------------ whole-project changes
    def reset(self, imageset: ImageSet | None = None, *, recogniser=None, report=None, settings=None,
              path: str | Path | None = None, captures_dir: str | Path | None = None) -> None:
        """Replace everything (new project, opened project, imported data set)."""
        self.imageset = imageset
        self.recogniser, self.report, self.split = recogniser, report, None
        if settings is not None:
            self.settings = dict(settings)
        self.path = Path(path) if path else None
        self.capture_root = Path(captures_dir) if captures_dir else None
        self.data_version += 1
        self.trained_on_version = self.data_version if recogniser is not None else -1
        self.dirty = False
        self.datasetChanged.emit()
        self.modelChanged.emit()
        self.stateChanged.emit()

    def set_imageset(self, imageset: ImageSet) -> None:
        """Use a newly imported image set; the old recogniser no longer applies."""
        self.imageset = imageset
        self.recogniser, self.report, self.split = None, None, None
        self._data_edited(model_invalid=True)

    def set_trained(self, recogniser, report, split=None, settings: dict | None = None) -> None:
        self.recogniser, self.report, self.split = recogniser, report, split
        if settings is not None:
            self.settings = dict(settings)
        self.trained_on_version = self.data_version
        self._mark_dirty()
        self.modelChanged.emit()

    def mark_saved(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.is_dir():  # a folder project keeps its captures inside; new ones go there too
            self.capture_root = self.path / "captures"
        self.dirty = False
        self.stateChanged.emit()

    # ------------------------------------------------------------------ queries
    @property
    def class_names(self) -> list[str]:
        return [] if self.imageset is None else list(self.imageset.class_names)

    @property
    def model_is_current(self) -> bool:
        return self.recogniser is not None and self.trained_on_version == self.data_version

    def images_of(self, cls: int) -> np.ndarray:
        """Indices ``(k,)`` int64 of the images of class ``cls``."""
        return np.flatnonzero(self.imageset.labels == cls) if self.imageset is not None else np.zeros(0, np.int64)

    def class_thumbnail(self, cls: int) -> np.ndarray | None:
        """A representative image of class ``cls`` (its first image), or None when empty."""
        idx = self.images_of(cls)
        return self.imageset.images[idx[0]] if len(idx) else None

    # ------------------------------------------------------------------ class edits
    def add_class(self, name: str) -> int:
        name = name.strip()
        if not name:
            raise DataError("a class needs a name")
        if self.imageset is None:
            raise DataError("open or import a data set first")
        if name in self.imageset.class_names:
            raise DataError(f"there is already a class named {name!r}")
        ims = self.imageset
        self.imageset = ImageSet(ims.images, ims.labels, ims.class_names + [name], ims.sources, ims.skipped, ims.name)
        self._data_edited(model_invalid=False)
        return self.imageset.n_classes - 1

    def rename_class(self, cls: int, name: str) -> None:
        name = name.strip()
        if not name:
            raise DataError("a class needs a name")
        names = self.class_names
        if name in names and names.index(name) != cls:
            raise DataError(f"there is already a class named {name!r}")
        names[cls] = name
        ims = self.imageset
        self.imageset = ImageSet(ims.images, ims.labels, names, ims.sources, ims.skipped, ims.name)
        if self.recogniser is not None and len(getattr(self.recogniser, "class_names", [])) > cls:
            self.recogniser.class_names = list(self.recogniser.class_names)
            self.recogniser.class_names[cls] = name
        self._data_edited(model_invalid=False, version_bump=False)

    def delete_class(self, cls: int) -> None:
        ims = self.imageset
        keep = np.flatnonzero(ims.labels != cls)
        labels = ims.labels[keep]
        labels = labels - (labels > cls)
        names = [n for i, n in enumerate(ims.class_names) if i != cls]
        self.imageset = ImageSet(ims.images[keep], labels, names, self._sources(keep), ims.skipped, ims.name)
        self.recogniser, self.report, self.split = None, None, None
        self._data_edited(model_invalid=True)

    def delete_images(self, index) -> None:
        ims = self.imageset
        keep = np.setdiff1d(np.arange(len(ims)), np.asarray(index, dtype=np.int64))
        self.imageset = ImageSet(ims.images[keep], ims.labels[keep], ims.class_names, self._sources(keep),
                                 ims.skipped, ims.name)
        self._data_edited(model_invalid=False)

    def move_images(self, index, cls: int) -> None:
        ims = self.imageset
        labels = ims.labels.copy()
        labels[np.asarray(index, dtype=np.int64)] = cls
        self.imageset = ImageSet(ims.images, labels, ims.class_names, ims.sources, ims.skipped, ims.name)
        self._data_edited(model_invalid=False)

    # ------------------------------------------------------------------ captures
    def capture_dir(self, cls: int) -> Path:
        """The folder where captures of class ``cls`` are written as they are taken."""
        if self.capture_root is None:
            self.capture_root = (self.path / "captures") if self.path is not None and self.path.is_dir() \
                else default_capture_root()
        return self.capture_root / _safe_name(self.class_names[cls])

    def save_capture(self, cls: int, img: np.ndarray) -> Path:
        """Write one captured frame (uint8 RGB or grey, any size) to disk now; returns its path.

        The image joins the image set later, in :meth:`add_images` (a burst is added at once so
        the set is not copied for every frame); a crash in between loses nothing on disk.
        """
        d = self.capture_dir(cls)
        n = len(list(d.glob("*.png"))) if d.exists() else 0
        path = d / f"capture-{time.strftime('%Y%m%d-%H%M%S')}-{n:05d}.png"
        write_image_atomic(path, img)
        return path

    def add_images(self, cls: int, images: list[np.ndarray], sources: list[str] | None = None) -> None:
        """Add frames of any size/colour to class ``cls``, brought to the set's size and colour."""
        if not images:
            return
        ims = self.imageset
        h, w = ims.image_size
        out = []
        for img in images:
            if ims.is_color and img.ndim == 2:
                img = cv2.cvtColor(img, cv2.COLOR_GRAY2RGB)
            elif not ims.is_color and img.ndim == 3:
                img = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
            out.append(fit_size(img, (h, w)))
        new = np.stack(out).astype(np.uint8)
        src = None
        if ims.sources is not None or sources is not None:
            src = (ims.sources or [""] * len(ims)) + list(sources or [""] * len(new))
        self.imageset = ImageSet(np.concatenate([ims.images, new]),
                                 np.concatenate([ims.labels, np.full(len(new), cls, np.int64)]),
                                 ims.class_names, src, ims.skipped, ims.name)
        self._data_edited(model_invalid=False)
        self.message.emit(f"added {len(new)} image(s) to {ims.class_names[cls]!r}")

    # ------------------------------------------------------------------ internals
    def _sources(self, keep: np.ndarray):
        s = self.imageset.sources
        return None if s is None else [s[i] for i in keep]

    def _data_edited(self, *, model_invalid: bool, version_bump: bool = True) -> None:
        if version_bump:
            self.data_version += 1
        self._mark_dirty()
        self.datasetChanged.emit()
        if model_invalid:
            self.modelChanged.emit()

    def _mark_dirty(self) -> None:
        self.dirty = True
        self.stateChanged.emit()
