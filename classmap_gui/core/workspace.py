"""The open project, headless: image set, trained recogniser and report, settings, file path, dirty flag.

The desktop app wraps one :class:`Workspace` in a Qt object that turns its change notes into signals;
everything here runs and is tested without a window. Captures are written to disk the moment they are
taken (:meth:`Workspace.save_capture`) and join the image set in bursts (:meth:`Workspace.add_images`).

"Unsaved changes" means: something a person would lose by closing. A freshly opened, imported or
built-in set that nobody edited has nothing to lose (``dirty`` False, although it was never saved);
``replaces_work`` says whether replacing the project would throw work away (edits, or a trained model).
"""
from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .data import ImageSet
from .data import editing
from .errors import DataError
from .project.runs import RunLog, data_version

#: what changed, for :attr:`Workspace.listener`
DATASET, MODEL, STATE, MESSAGE = "dataset", "model", "state", "message"


def safe_folder_name(name: str) -> str:
    """A folder name for a class: letters, digits, ``-_. `` kept, anything else ``_``."""
    keep = "".join(ch if ch.isalnum() or ch in "-_. " else "_" for ch in name).strip(" .")
    return keep or "class"


class Workspace:
    """The one project the app has open.

    ``capture_root``: a callable giving the folder for captures of a never-saved project (the app
    passes the platform's data folder; core reads no settings itself). ``listener(kind, text)`` is
    called after each change with ``kind`` one of DATASET, MODEL, STATE, MESSAGE.
    """

    def __init__(self, capture_root: Callable[[], Path] | None = None,
                 listener: Callable[[str, str], None] | None = None):
        self.default_capture_root = capture_root or (lambda: Path.cwd() / "captures")
        self.listener = listener or (lambda kind, text: None)
        self.imageset: ImageSet | None = None
        self.recogniser = None
        self.report = None
        self.split = None  # (train ImageSet | None, test ImageSet) of the last training, for inspection
        self.settings: dict = {}
        self.path: Path | None = None
        self.dirty = False
        self.data_version = 0
        self.trained_on_version = -1
        self.capture_root: Path | None = None
        self.unpacked: Path | None = None  # a temporary folder this project owns (an archive's captures)
        self.runs = RunLog()  # every training run of this project (records, and the newest runs' models)

    # ------------------------------------------------------------------ notes
    def _note(self, *kinds: str, text: str = "") -> None:
        for k in kinds:
            self.listener(k, text)

    def message(self, text: str) -> None:
        """Pass a status-line message to the listener (the GUI shows it)."""
        self._note(MESSAGE, text=text)

    # ------------------------------------------------------------------ whole-project changes
    def reset(self, imageset: ImageSet | None = None, *, recogniser=None, report=None, settings=None,
              path: str | Path | None = None, captures_dir: str | Path | None = None, runs: RunLog | None = None,
              unpacked: str | Path | None = None) -> None:
        """Replace everything (new, opened or imported project); nothing is unsaved afterwards.

        ``unpacked``: a temporary folder the new project owns (where an opened archive's captures were
        unpacked); it is deleted when this project is replaced in turn, or on :meth:`close`."""
        owned = Path(unpacked) if unpacked else None
        if self.unpacked != owned:
            self.close()
        self.unpacked = owned
        self.runs = runs if runs is not None else RunLog()
        self.imageset = imageset
        self.recogniser, self.report, self.split = recogniser, report, None
        self.settings = dict(settings or {})
        self.path = Path(path) if path else None
        self.capture_root = Path(captures_dir) if captures_dir else None
        self.data_version += 1
        self.trained_on_version = self.data_version if recogniser is not None else -1
        self.dirty = False
        self._note(DATASET, MODEL, STATE)

    def close(self) -> None:
        """The project is being put away (replaced, or the app quits after the person kept or discarded its
        changes): delete the temporary folder it owns, if any."""
        if self.unpacked is not None:
            shutil.rmtree(self.unpacked, ignore_errors=True)
            self.unpacked = None

    def new_project(self, size: tuple[int, int], *, colour: bool = False, name: str = "") -> None:
        """An empty project whose images will be ``size`` (h, w), grey unless ``colour``."""
        self.reset(editing.empty_imageset(size, colour=colour, name=name))

    def set_trained(self, recogniser, report, split=None, settings: dict | None = None) -> None:
        """Keep a newly trained recogniser, its report and train/test split; the model now matches the data."""
        self.recogniser, self.report, self.split = recogniser, report, split
        if settings is not None:
            self.settings = dict(settings)
        self.trained_on_version = self.data_version
        self.dirty = True
        self._note(STATE, MODEL)

    def add_run(self, record: dict, recogniser=None) -> dict:
        """Keep a training run's record (and its recogniser, within the bound); returns the kept record."""
        kept = self.runs.add(record, recogniser)
        self.dirty = True
        self._note(STATE)
        return kept

    def restore_run(self, run_id: int) -> dict:
        """Make run ``run_id``'s kept recogniser and settings the project's again; returns its record.

        DataError when only its record is kept (retrain with its settings instead) or when it was trained on
        other classes than the project has now. The model counts as current only when the data is unchanged
        since the run (same fingerprint)."""
        record = self.runs.get(run_id)
        model = self.runs.model(run_id)
        if model is None:
            raise DataError(f"run {run_id} kept only its record (models are kept for the newest "
                            f"{self.runs.keep_models} runs): retrain with its settings to restore it")
        ims = self._need_set()
        from .training import TrainConfig
        TrainConfig.from_dict(record.get("settings") or {})   # ConfigError for a record edited by hand
        if list(model.class_names) != list(ims.class_names):
            raise DataError(f"run {run_id} was trained on other classes than the project has now "
                            f"({len(model.class_names)} then, {ims.n_classes} now); it cannot be restored")
        keep = {k: v for k, v in self.settings.items() if k.startswith("capture_")}  # capture options, not training
        self.recogniser, self.report, self.split = model, None, None
        self.settings = {**record.get("settings", {}), **keep}
        same = record.get("data", {}).get("version") == data_version(ims)
        self.trained_on_version = self.data_version if same else -1
        self.dirty = True
        self._note(STATE, MODEL)
        return record

    def mark_saved(self, path: str | Path) -> None:
        """Record that the project was saved to ``path``: not dirty, and new captures go inside a folder project."""
        self.path = Path(path)
        if self.path.is_dir():  # a folder project keeps its captures inside; new ones go there too
            self.capture_root = self.path / "captures"
        self.dirty = False
        self._note(STATE)

    # ------------------------------------------------------------------ queries
    @property
    def class_names(self) -> list[str]:
        """The class names in label order (empty with no image set)."""
        return [] if self.imageset is None else list(self.imageset.class_names)

    @property
    def model_is_current(self) -> bool:
        """True when a recogniser exists and was trained on the current data (no edits since)."""
        return self.recogniser is not None and self.trained_on_version == self.data_version

    @property
    def replaces_work(self) -> bool:
        """True when replacing the project would lose something: unsaved edits or an unsaved model."""
        return self.dirty

    @property
    def title(self) -> str:
        """What the window title names: the file, else the data set, else "untitled"."""
        if self.path is not None:
            return self.path.name
        return self.imageset.name if self.imageset is not None and self.imageset.name else "untitled"

    def images_of(self, cls: int) -> np.ndarray:
        """Indices ``(k,)`` int64 of the images of class ``cls``."""
        return np.flatnonzero(self.imageset.labels == cls) if self.imageset is not None else np.zeros(0, np.int64)

    def class_thumbnail(self, cls: int) -> np.ndarray | None:
        """A representative image of class ``cls`` (its first image), or None when empty."""
        idx = self.images_of(cls)
        return self.imageset.images[idx[0]] if len(idx) else None

    # ------------------------------------------------------------------ edits
    def _need_set(self) -> ImageSet:
        if self.imageset is None:
            raise DataError("no project is open: choose File > New project (or open or import one) first")
        return self.imageset

    def _edited(self, imageset: ImageSet, *, model_invalid: bool, version_bump: bool = True) -> None:
        self.imageset = imageset
        if model_invalid:
            self.recogniser, self.report, self.split = None, None, None
        if version_bump:
            self.data_version += 1
        self.dirty = True
        self._note(STATE, DATASET, *((MODEL,) if model_invalid else ()))

    def set_imageset(self, imageset: ImageSet) -> None:
        """Use newly imported images in this project; the old recogniser no longer applies."""
        self._edited(imageset, model_invalid=True)

    def add_class(self, name: str) -> int:
        """Add an empty class ``name`` and return its label; the recogniser stays valid."""
        self._edited(editing.add_class(self._need_set(), name), model_invalid=False)
        return self.imageset.n_classes - 1

    def rename_class(self, cls: int, name: str) -> None:
        """Rename class ``cls``, in the recogniser too; labels and the model are unchanged."""
        ims = editing.rename_class(self._need_set(), cls, name)
        rec = self.recogniser
        if rec is not None and cls < len(getattr(rec, "class_names", [])):
            rec.class_names = list(rec.class_names)
            rec.class_names[cls] = ims.class_names[cls]
        self._edited(ims, model_invalid=False, version_bump=False)

    def delete_class(self, cls: int) -> None:
        """Delete class ``cls`` and its images (labels above it shift down); the recogniser is discarded."""
        self._edited(editing.delete_class(self._need_set(), cls), model_invalid=True)

    def delete_images(self, index) -> None:
        """Remove the images at indices ``index`` ``(k,)`` int64 from the set."""
        self._edited(editing.delete_images(self._need_set(), index), model_invalid=False)

    def move_images(self, index, cls: int) -> None:
        """Relabel the images at indices ``index`` ``(k,)`` int64 as class ``cls``."""
        self._edited(editing.move_images(self._need_set(), index, cls), model_invalid=False)

    def add_images(self, cls: int, images, sources=None, group=None) -> int:
        """Add frames of any size/colour to class ``cls``; returns how many were added. ``group``: see
        :func:`editing.add_images` (``editing.NEW_GROUP`` for one capture burst)."""
        if not len(images):
            return 0
        ims = editing.add_images(self._need_set(), cls, images, sources, group)
        n = len(ims) - len(self.imageset)
        self._edited(ims, model_invalid=False)
        self.message(f"added {n} image(s) to {ims.class_names[cls]!r}")
        return n

    # ------------------------------------------------------------------ captures
    def capture_dir(self, cls: int) -> Path:
        """The folder where captures of class ``cls`` are written as they are taken."""
        if self.capture_root is None:
            self.capture_root = (self.path / "captures") if self.path is not None and self.path.is_dir() \
                else self.default_capture_root()
        return self.capture_root / safe_folder_name(self.class_names[cls])

    def save_capture(self, cls: int, img: np.ndarray, burst: str | None = None) -> Path:
        """Write one captured frame (uint8 RGB or grey, any size) to disk now; returns its path. ``burst``:
        the token of its capture burst (:func:`~.data.capture_names.new_burst_token`), kept in the file
        name so a re-imported folder of captures gets its bursts back."""
        from .data.capture_names import capture_name

        d = self.capture_dir(cls)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        n = len(list(d.glob("*.png"))) if d.exists() else 0
        path = d / capture_name(stamp, n, burst)
        while path.exists():
            n += 1
            path = d / capture_name(stamp, n, burst)
        write_png_atomic(path, img)
        return path


def write_png_atomic(path: Path, img: np.ndarray) -> None:
    """Write ``img`` (uint8 grey or RGB) as PNG through a temporary file and a rename.

    The file gets the permissions the user's umask gives new files (``mkstemp`` alone would make it
    private to the user, which surprises a person sharing a project folder).
    """
    import os
    import tempfile

    import cv2

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
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def current_umask() -> int:
    """The process's file-creation mask (read by setting and restoring it)."""
    import os

    mask = os.umask(0o022)
    os.umask(mask)
    return mask
