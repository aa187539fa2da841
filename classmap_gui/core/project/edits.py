"""A project's edits of its image set (classes added, renamed, deleted; images added, moved, deleted): each is a
pure function of :mod:`..data.editing` applied to the set, then recorded as an edit — the data version and the
revision advance, ``datasetChanged`` is emitted, and where the edit invalidates the recogniser it is dropped and
``modelChanged`` emitted too. A part of :class:`.model.Project` (mixed into it; it reads and sets the project's
``imageset``, ``recogniser``, ``data_version`` and signals)."""
from __future__ import annotations

from ..data import ImageSet
from ..data import editing
from ..errors import DataError


class ImageSetEdits:
    """The image-set edits of :class:`.model.Project`."""

    def _need_set(self) -> ImageSet:
        if self.imageset is None:
            raise DataError("no project is open: choose File > New project (or open or import one) first")
        return self.imageset

    def _edited(self, imageset: ImageSet, *, model_invalid: bool, version_bump: bool = True) -> None:
        self.imageset = imageset
        if model_invalid:
            self.recogniser, self._report, self._split = None, None, None
        if version_bump:
            self.data_version += 1
        self._touch()
        self.datasetChanged.emit()
        if model_invalid:
            self.modelChanged.emit()

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
        self.message.emit(f"added {n} image(s) to {ims.class_names[cls]!r}")
        return n
