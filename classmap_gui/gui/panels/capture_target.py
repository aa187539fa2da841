"""The Capture panel's per-class target: how far the selected class is towards the number of images to capture
(the burst being recorded included), how many classes reached it, whether the class has bursts enough for an
honest test, and the one-click "background" class. A part of :class:`.capture.CapturePanel`."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from ...core.data.imageset import BACKGROUND_CLASS

#: bursts a class needs so that training, the ClassMap embedding and the test each get one of their own
HONEST_BURSTS = 3


def class_progress(imageset, cls: int) -> tuple[int, int]:
    """``(images, capture bursts)`` of class ``cls`` (an image without a burst counts as one)."""
    mine = np.flatnonzero(imageset.labels == cls)
    return len(mine), len(np.unique(imageset.group_ids()[mine]))


class TargetProgress:
    """The target's spin box handler, the progress bar and note, and the background button's action. Mixed into
    the Capture panel, which provides ``project``, ``current_class``, ``target``, ``progress``, ``progress_note``,
    ``sources``, the recording state (``recording``, ``burst_class``, ``burst``), ``classRequested`` and
    ``_set_status``."""

    def _target_changed(self, v: int) -> None:
        if self.project.imageset is not None:
            self.project.settings["capture_target"] = int(v)
        self.update_progress()

    def update_progress(self) -> None:
        """Show how far the selected class is towards the target (and the burst being recorded), and how
        many classes have reached it."""
        ims, cls = self.project.imageset, self.current_class()
        saved = self.project.settings.get("capture_target") if ims is not None else None
        if isinstance(saved, int) and saved != self.target.value():  # an opened project's own target
            self.target.blockSignals(True)
            self.target.setValue(saved)
            self.target.blockSignals(False)
        target = self.target.value()
        if ims is None or not 0 <= cls < ims.n_classes:
            self.progress.setRange(0, target)
            self.progress.setValue(0)
            self.progress.setFormat("select a class")
            self.progress_note.setText(" ")
            return
        n, bursts = class_progress(ims, cls)
        if self.recording and self.burst_class == cls:
            n += len(self.burst)
        self.progress.setRange(0, target)
        self.progress.setValue(min(n, target))
        # one line inside the bar: the name cut at the end to what is left beside the count (tooltip: all)
        count = f": {n} / {target}"
        fm = self.progress.fontMetrics()
        room = max(30, self.progress.width() - fm.horizontalAdvance(count) - 24)
        self.progress.setFormat(fm.elidedText(ims.class_names[cls], Qt.ElideRight, room).replace("%", "%%") + count)
        self.progress.setToolTip(f"{ims.class_names[cls]}{count}")
        done = int(np.sum(ims.counts() >= target))
        note = f"{done} of {ims.n_classes} class(es) at the target; {ims.class_names[cls]!r} has {bursts} burst(s)"
        if ims.groups is not None and bursts < HONEST_BURSTS:
            note += (f" — record at least {HONEST_BURSTS}, so it can be tested on frames it was not trained on: "
                     + ("a video makes a new burst where its picture changes, so hold ● while the pose moves"
                        if isinstance(self.sources.current(), str) else "separate bursts, move, change the light"))
        self.progress_note.setText(note + ".")

    def add_background(self) -> int:
        """The background button: add the ``background`` class when missing, select it; its label (-1 with no
        project open)."""
        ims = self.project.imageset
        if ims is None:
            self._set_status("Open or start a project first (File > New project).")
            return -1
        if BACKGROUND_CLASS in ims.class_names:
            cls = ims.class_names.index(BACKGROUND_CLASS)
        else:
            cls = self.project.add_class(BACKGROUND_CLASS)
        self.classRequested.emit(cls)
        self.update_progress()
        self._set_status(f"Recording into {BACKGROUND_CLASS!r}: capture the scene without the object — the empty "
                         "view, the room, other things — so detection can tell 'nothing here'.")
        return cls
