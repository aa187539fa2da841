"""The open project, headless and evented: image set, trained recogniser and report, settings, captures,
file path, dirty flag and training runs — one object for the app, the file format and the tests.

Every change emits a psygnal signal (napari's evented models: a view subscribes, nothing forwards):
``datasetChanged``, ``modelChanged``, ``evaluated``, ``stateChanged``, ``message(str)`` and the request
``trainingRequested`` (:meth:`Project.request_training`; the Train panel answers it). ``settings`` is a
psygnal ``EventedDict``: setting a key emits by itself (``settings.events``) and counts as an edit; a
setting's value is replaced, not edited in place (a nested dict changed in place emits nothing). ``report``,
``split`` and ``runs`` are properties whose setters emit, so no caller emits on the model's behalf.
``live`` is the headless :class:`~..live_stream.LiveStream` the Run panel publishes to (not saved).
Signals are delivered on the
thread that made the change; the desktop app changes its project only on the UI thread (results of
background work arrive there), so its panels may draw in their callbacks. :func:`~.format.load_project`
returns a :class:`Project` and :func:`~.format.save_project` writes one; :meth:`Project.snapshot` is what a
background save writes while the person goes on editing.

Captures are written to disk the moment they are taken (:meth:`Project.save_capture`) and join the image
set in bursts (:meth:`Project.add_images`). "Unsaved changes" means: something a person would lose by
closing. A freshly opened, imported or built-in set that nobody edited has nothing to lose (``dirty``
False, although it was never saved); ``replaces_work`` says whether replacing it would throw work away.
``dirty`` is derived, never set: every edit (a setting, the images, a model trained or restored, the runs)
advances ``revision``; opening or saving records the revision that is on disk, and the project is dirty
while the two differ — so an edit made while a background save runs still counts as unsaved after it.
"""
from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
from psygnal import Signal
from psygnal.containers import EventedDict

from ..data import ImageSet
from ..data import editing
from ..errors import DataError
from ..explore.live_stream import LiveStream
from ..train.config import TrainConfig
from .captures import safe_folder_name, write_capture
from .edits import ImageSetEdits
from .runs import RunLog, data_version


class Project(ImageSetEdits):
    """The one open project.

    ``imageset``: the labelled images (uint8, one size) or None before one is made; ``recogniser``: a trained
    ``Recogniser`` or None; ``settings``: JSON-able values by name (training settings, UI state), kept in an
    ``EventedDict``; ``captures_dir``:
    the folder captures are written to and saved with the project (for a folder project
    ``<project>/captures``); ``runs``: the training runs (:class:`~.runs.RunLog`). ``default_captures``: a
    callable giving the captures folder of a never-saved project (the app passes the platform's data
    folder; core reads no settings itself).
    """

    datasetChanged = Signal()   # images, labels or class names changed
    modelChanged = Signal()     # the trained recogniser / report was set or cleared
    evaluated = Signal()        # report and split of the recogniser in use were set (after it was evaluated)
    stateChanged = Signal()     # path, dirty flag, settings or runs changed (window title, status bar)
    message = Signal(str)       # a short note for the status bar
    # a panel asks for a training (the Train panel runs it): "" = with the project's settings (Find the hand's
    # background fix), "classmap" = again with ClassMap on, so Explore can draw its map
    trainingRequested = Signal(str)

    def __init__(self, imageset: ImageSet | None = None, recogniser=None, settings: dict | None = None,
                 captures_dir: str | Path | None = None, path: str | Path | None = None, runs: RunLog | None = None,
                 *, default_captures: Callable[[], Path] | None = None):
        self.default_captures = default_captures or (lambda: Path.cwd() / "captures")
        self._report = None
        self._split = None  # (train ImageSet | None, test ImageSet) of the last training, for inspection
        self.revision = 0        # advances with every edit a person would lose by closing
        self._clean_revision = 0  # the revision that is on disk (or was opened)
        self.data_version = 0
        self.unpacked: Path | None = None  # a temporary folder this project owns (an archive's captures)
        #: what :func:`~.format.load_project` replaced by defaults among the saved settings, one line each
        self.settings_notes: list[str] = []
        self._settings = EventedDict()
        for sig in (self._settings.events.added, self._settings.events.changed, self._settings.events.removed):
            sig.connect(self._setting_changed)
        self.live = LiveStream()
        self._assign(imageset, recogniser, settings, path, captures_dir, runs)

    def _assign(self, imageset, recogniser, settings, path, captures_dir, runs, model_folder=None) -> None:
        self.imageset = imageset
        #: the folder of a model opened alone (File > Open model): where a gesture added to it is saved
        self.model_folder = Path(model_folder) if model_folder else None
        self.recogniser, self._report, self._split = recogniser, None, None
        self._replace_settings(settings)
        self.path = Path(path) if path else None
        self.captures_dir = Path(captures_dir) if captures_dir else None
        self._runs = runs if runs is not None else RunLog()  # every training run (records, newest runs' models)
        self.data_version += 1
        self.trained_on_version = self.data_version if recogniser is not None else -1
        self._clean_revision = self.revision

    # ------------------------------------------------------------------ evented fields
    @property
    def dirty(self) -> bool:
        """True when something was edited since the project was opened or saved (see the module's note)."""
        return self.revision != self._clean_revision

    def _touch(self) -> None:
        """An edit a person would lose by closing: the project becomes dirty (stateChanged)."""
        self.revision += 1
        self.stateChanged.emit()

    @property
    def settings(self) -> EventedDict:
        """The settings (JSON-able values by name); assigning a whole dict replaces them as one edit."""
        return self._settings

    @settings.setter
    def settings(self, value: dict) -> None:
        self._replace_settings(value)
        self._touch()

    def _replace_settings(self, value: dict | None) -> None:
        """Make the settings ``value`` with one notification (the callers emit), not one per key."""
        with self._settings.events.blocked():
            self._settings.clear()
            self._settings.update(dict(value or {}))

    def edit_settings(self, values: dict) -> None:
        """A person edited settings: set each of ``values`` (name -> JSON-able value) as one edit, so the
        project is unsaved at once and saving keeps them; values equal to the current ones change nothing."""
        changed = {k: v for k, v in values.items() if k not in self._settings or self._settings[k] != v}
        if changed:
            with self._settings.events.blocked():
                self._settings.update(changed)
            self._touch()

    def request_training(self, what: str = "") -> None:
        """Ask for a training on the project's images (:attr:`trainingRequested`): with its settings (``""``), or
        ``"classmap"``: again with ClassMap on, sized for the embedding map. A panel that needs one asks the
        project, not the panel that trains."""
        self.trainingRequested.emit(str(what))

    def _setting_changed(self, key, *values) -> None:
        if len(values) == 2 and values[0] == values[1]:  # the same value again: nothing to lose
            return
        self._touch()

    @property
    def report(self):
        """The test report of the recogniser in use (None until it was trained or evaluated)."""
        return self._report

    @report.setter
    def report(self, value) -> None:
        self._report = value
        self.evaluated.emit()

    @property
    def split(self):
        """``(train ImageSet | None, test ImageSet)`` the recogniser in use was tested on, or None."""
        return self._split

    @split.setter
    def split(self, value) -> None:
        self._split = value
        self.evaluated.emit()

    def set_evaluation(self, report, split) -> None:
        """The recogniser in use was evaluated: its ``report`` and the ``split`` it was tested on (one event)."""
        self._report, self._split = report, split
        self.evaluated.emit()

    @property
    def runs(self) -> RunLog:
        """The training runs (records, the newest runs' models); assigning a run log is an edit."""
        return self._runs

    @runs.setter
    def runs(self, value: RunLog) -> None:
        self._runs = value
        self._touch()

    # ------------------------------------------------------------------ whole-project changes
    def reset(self, imageset: ImageSet | None = None, *, recogniser=None, settings=None,
              path: str | Path | None = None, captures_dir: str | Path | None = None, runs: RunLog | None = None,
              unpacked: str | Path | None = None, model_folder: str | Path | None = None) -> None:
        """Replace everything (new, opened or imported project); nothing is unsaved afterwards.

        ``unpacked``: a temporary folder the new project owns (where an opened archive's captures were
        unpacked); it is deleted when this project is replaced in turn, or on :meth:`close`. ``model_folder``:
        the folder ``recogniser`` was opened from when it was opened alone (:attr:`model_folder`)."""
        owned = Path(unpacked) if unpacked else None
        if self.unpacked != owned:
            self.close()
        self.unpacked = owned
        self._assign(imageset, recogniser, settings, path, captures_dir, runs, model_folder)
        self.datasetChanged.emit()
        self.modelChanged.emit()
        self.stateChanged.emit()

    def adopt(self, other: Project, *, unpacked: str | Path | None = None) -> None:
        """Become the project ``other`` (one :func:`~.format.load_project` returned): :meth:`reset` with its parts."""
        self.reset(other.imageset, recogniser=other.recogniser, settings=other.settings, path=other.path,
                   captures_dir=other.captures_dir, runs=other.runs, unpacked=unpacked)

    def snapshot(self) -> Project:
        """A copy to save in the background while this one goes on changing: the same (immutable) image set
        and recogniser, copies of the settings and the run log, the captures folder when it exists."""
        runs = self.runs
        caps = self.captures_dir if self.captures_dir is not None and self.captures_dir.is_dir() else None
        snap = Project(self.imageset, self.recogniser, dict(self.settings), caps, self.path,
                       RunLog(runs.records, runs.models, runs.keep_models, runs.next_id))
        snap.revision = snap._clean_revision = self.revision  # what :meth:`mark_saved` is told was written
        return snap

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
        self.recogniser, self._report, self._split = recogniser, report, split
        if settings is not None:
            self._replace_settings(settings)
        self.trained_on_version = self.data_version
        self._touch()
        self.modelChanged.emit()

    def change_classes(self, recogniser, *, saved: bool = False) -> None:
        """The recogniser took or lost classes without retraining (a gesture added or removed): the image set's
        classes follow its class names (a new class has no images, a removed one leaves with its images) and it
        stays current. ``saved``: it was just written to :attr:`model_folder`, so nothing is unsaved."""
        ims, names = self._need_set(), list(recogniser.class_names)
        for cls in [i for i, n in enumerate(ims.class_names) if n not in names][::-1]:
            ims = editing.delete_class(ims, cls)
        for name in names[ims.n_classes:]:
            ims = editing.add_class(ims, name)
        if list(ims.class_names) != names:
            raise DataError("the model's classes do not follow the project's: retrain it on the project instead")
        self.imageset, self.recogniser, self._report = ims, recogniser, None
        self.data_version += 1
        self.trained_on_version = self.data_version
        self._touch()
        if saved:
            self._clean_revision = self.revision
            self.stateChanged.emit()
        self.datasetChanged.emit()
        self.modelChanged.emit()

    def add_run(self, record: dict, recogniser=None) -> dict:
        """Keep a training run's record (and its recogniser, within the bound); returns the kept record."""
        kept = self.runs.add(record, recogniser)
        self._touch()
        return kept

    def remove_run(self, run_id: int) -> None:
        """Forget run ``run_id`` (its record and kept model); KeyError when there is none."""
        self.runs.remove(run_id)
        self._touch()

    def note_capture_source(self, source) -> None:
        """Images were recorded from ``source`` (a video path or a camera index): from a hand video the project
        says its images are of hands (setting ``capture_subject``), which the Train panel's proposal reads."""
        from ..data.hand_video import shows_hands

        if shows_hands(source) and self.settings.get("capture_subject") != "hands":
            self.settings["capture_subject"] = "hands"

    def forget_run_models(self) -> int:
        """Let go of the kept models of every run but the one in use (a smaller project; their records stay and
        restoring one retrains it); returns how many were let go."""
        gone = self.runs.forget_models(keep=self.runs.current_of(self.recogniser))
        if gone:
            self._touch()
        return gone

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
        TrainConfig.from_dict(record.get("settings") or {})   # ConfigError for a record edited by hand
        if list(model.class_names) != list(ims.class_names):
            raise DataError(f"run {run_id} was trained on other classes than the project has now "
                            f"({len(model.class_names)} then, {ims.n_classes} now); it cannot be restored")
        keep = {k: v for k, v in self.settings.items() if k.startswith("capture_")}  # capture options, not training
        self.recogniser, self._report, self._split = model, None, None
        self._replace_settings({**record.get("settings", {}), **keep})
        same = record.get("data", {}).get("version") == data_version(ims)
        self.trained_on_version = self.data_version if same else -1
        self._touch()
        self.modelChanged.emit()
        return record

    def mark_saved(self, path: str | Path, revision: int | None = None) -> None:
        """Record that the project was saved to ``path``: new captures go inside a folder project, and it is
        clean unless edited after the save's :meth:`snapshot` (``revision``: the snapshot's; None: now)."""
        self.path = Path(path)
        if self.path.is_dir():  # a folder project keeps its captures inside; new ones go there too
            self.captures_dir = self.path / "captures"
        self._clean_revision = self.revision if revision is None else revision
        self.stateChanged.emit()

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

    # ------------------------------------------------------------------ captures
    def capture_dir(self, cls: int) -> Path:
        """The folder where captures of class ``cls`` are written as they are taken."""
        if self.captures_dir is None:
            self.captures_dir = (self.path / "captures") if self.path is not None and self.path.is_dir() \
                else self.default_captures()
        return self.captures_dir / safe_folder_name(self.class_names[cls])

    def save_capture(self, cls: int, img: np.ndarray, burst: str | None = None) -> Path:
        """Write one captured frame (uint8 RGB or grey, any size) to disk now; returns its path. ``burst``:
        the token of its capture burst (:func:`~..data.capture_names.new_burst_token`), kept in the file
        name so a re-imported folder of captures gets its bursts back."""
        return write_capture(self.capture_dir(cls), img, burst)
