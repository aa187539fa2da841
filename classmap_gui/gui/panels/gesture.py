"""Run panel, *Add a gesture…*: record a new hand gesture from the camera or video playing and add it to the open
hand model as one more class, without retraining (:meth:`~classmap_gui.core.recogniser.Recogniser.add_class`).

The person names the gesture, a countdown (3-2-1) gives them time to show it, then about
:data:`RECORD_SECONDS` seconds are recorded: every frame is scanned for the hand (the scan of *Find the hand*,
:class:`~classmap_gui.core.detect.scanner.Scanner`, on the stream's thread) and the boxed hand, cropped as the
model reads it, joins a strip of thumbnails; a click on one drops it. *Add* adds the class on a worker thread
(on a copy of the model, so the stream goes on reading with the old one meanwhile), saves the model to the
folder it was opened from (atomically: the store writes a temporary folder and renames it) and hands it to the
project, so the Run panel names the gesture from the next frame on and Explore draws it. The *Gestures* menu
removes an added gesture again (*Undo* removes the last one).
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QLineEdit, QListView, QListWidget, QListWidgetItem, QMenu,
                               QPushButton, QToolButton, QVBoxLayout, QWidget)

from ..imageutil import to_pixmap

COUNTDOWN_FROM = 3     # seconds of countdown before recording
RECORD_SECONDS = 5.0   # recorded after the countdown
MAX_CROPS = 100        # crops kept per recording (at 15-30 frames/s, 5 s is 75-150 frames)
MIN_CROPS = 5          # fewer recorded crops than this make no class
THUMB = 56             # thumbnail side in the strip (pixels)


def hand_cropper(rec):
    """A function ``crop(frame) -> (box, image) | None`` for the stream's thread: the hand the scan boxes in
    ``frame`` (``(h, w, 3)`` uint8 RGB), ``box`` (x, y, w, h) in frame pixels and ``image`` the box cropped as
    ``rec`` reads a hand (:func:`~classmap_gui.core.detect.gesture_crops.hand_crops`, as ``classmap add-class
    --images VIDEO`` crops), or None when the scan finds no hand. ConfigError when the model cannot scan."""
    from ...core.detect.gesture_crops import hand_crops
    from ...core.detect.scanner import Scanner

    scanner = Scanner(rec, "classmap" if rec.classmap is not None else "brute_force")

    def crop(frame: np.ndarray):
        found = hand_crops(rec, [frame], scanner=scanner)
        return (tuple(float(v) for v in found.boxes[0]), found.crops[0]) if len(found.crops) else None
    return crop


class GestureRecorder(QWidget):
    """The strip under the Run panel's view while a gesture is recorded, and the panel's *Add a gesture…* button
    (:attr:`add_btn`) and *Gestures* menu (:attr:`menu_btn`). ``panel``: the Run panel (its stream, status line
    and model); ``runner``: the window's background tasks (None: nothing can be added here).

    ``phase``: "idle", "naming", "countdown", "recording", "review" or "adding". :attr:`cropper` is set while
    recording: the Run panel's stream thread calls it on each frame and hands the result to :meth:`offer`."""

    def __init__(self, project, runner, panel, parent=None):
        super().__init__(parent)
        self.project, self.runner, self.panel = project, runner, panel
        self.phase = "idle"
        self.crops: list[np.ndarray] = []
        self.cropper = None
        self.recorded_with = None  # the feature map of the model the crops were recorded with (added to it alone)
        self.last_message = ""
        self.add_btn = QPushButton("Add a gesture…")
        self.add_btn.setToolTip(f"Record a hand gesture of your own ({RECORD_SECONDS:.0f} s after a countdown) and "
                                "add it to the model as a new class, without retraining")
        self.add_btn.clicked.connect(self.begin)
        self.menu_btn = QToolButton()
        self.menu_btn.setText("Gestures")
        self.menu_btn.setToolTip("The gestures you added: remove one, or undo the last")
        self.menu_btn.setPopupMode(QToolButton.InstantPopup)
        self.menu = QMenu(self.menu_btn)
        self.menu_btn.setMenu(self.menu)

        self.name = QLineEdit()
        self.name.setPlaceholderText("name of the gesture, e.g. rock-on")
        self.name.returnPressed.connect(self.record)
        self.record_btn = QPushButton("● Record")
        self.record_btn.clicked.connect(self.record)
        self.finish_btn = QPushButton("Add gesture")
        self.finish_btn.clicked.connect(self.add)
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.clicked.connect(self.cancel)
        self.count = QLabel("")
        self.count.setStyleSheet("QLabel { font-size: 20pt; font-weight: bold; color: #b42318; }")
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.strip = QListWidget()
        self.strip.setViewMode(QListView.IconMode)
        self.strip.setFlow(QListView.LeftToRight)
        self.strip.setWrapping(False)
        self.strip.setMovement(QListView.Static)
        self.strip.setIconSize(QSize(THUMB, THUMB))
        self.strip.setFixedHeight(THUMB + 30)
        self.strip.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.strip.setToolTip("The recorded crops of your hand: click a bad one to drop it")
        self.strip.itemClicked.connect(self.drop)
        self.ticker = QTimer(self)              # the countdown: one tick a second
        self.ticker.setInterval(1000)
        self.ticker.timeout.connect(self.tick)
        self.record_timer = QTimer(self)        # the end of the recording
        self.record_timer.setSingleShot(True)
        self.record_timer.setInterval(int(RECORD_SECONDS * 1000))
        self.record_timer.timeout.connect(self.stop_recording)

        row = QHBoxLayout()
        row.addWidget(QLabel("New gesture"))
        row.addWidget(self.name, 1)
        for w in (self.record_btn, self.count, self.finish_btn, self.cancel_btn):
            row.addWidget(w)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(row)
        lay.addWidget(self.strip)
        lay.addWidget(self.message)
        self.hide()
        project.modelChanged.connect(self.refresh)
        self.refresh()

    # ------------------------------------------------------------------ state
    def refresh(self) -> None:
        """The buttons and the *Gestures* menu for the model and stream now."""
        rec = self.project.recogniser
        live = self.panel.stream is not None and not isinstance(self.panel.sources.current(), (list, tuple))
        self.add_btn.setEnabled(rec is not None and live and self.phase == "idle" and self.runner is not None)
        self.add_btn.setToolTip(self.add_btn.toolTip() if live else "Start a camera or video first (with a hand "
                                "model open), then add a gesture of your own")
        names = self.names()
        self.menu.clear()
        undo = self.menu.addAction(f"Undo: remove {names[-1]!r}" if names else "Undo (no gesture added)")
        undo.setEnabled(bool(names))
        undo.triggered.connect(lambda: self.remove(names[-1]))
        if names:
            self.menu.addSeparator()
        for n in names:
            self.menu.addAction(f"Remove {n!r}").triggered.connect(lambda _=False, n=n: self.remove(n))
        self.menu_btn.setEnabled(bool(names))
        self.menu_btn.setText(f"Gestures ({len(names)})" if names else "Gestures")
        self.record_btn.setEnabled(self.phase == "naming")
        self.name.setEnabled(self.phase == "naming")
        self.finish_btn.setEnabled(self.phase == "review" and len(self.crops) >= MIN_CROPS)
        self.cancel_btn.setEnabled(self.phase in ("naming", "countdown", "recording", "review"))

    def names(self) -> list[str]:
        """The gestures added to the open model, oldest first (what the *Gestures* menu lists)."""
        return self.project.recogniser.added_classes() if self.project.recogniser is not None else []

    def _say(self, text: str) -> None:
        """Tell the person: under the strip while it shows, else on the Run panel's status line."""
        self.last_message = text
        self.message.setText(text)
        self.panel.set_status(" " if self.isVisible() else text)

    def _phase(self, phase: str) -> None:
        self.phase = phase
        self.refresh()

    # ------------------------------------------------------------------ steps
    def begin(self) -> bool:
        """*Add a gesture…*: show the strip and ask for the name (the stream must be playing)."""
        if not self.add_btn.isEnabled():
            self._say("Start a camera or video with a hand model open first, then add a gesture.")
            return False
        self.crops.clear()
        self.strip.clear()
        self.count.setText("")
        self.message.setStyleSheet("")
        self.strip.show()
        self.show()
        self._phase("naming")
        self.name.setFocus()
        self._say("Name the gesture, then press Record (or Enter): after a 3-2-1 countdown, show it "
                  f"for {RECORD_SECONDS:.0f} seconds, moving it a little.")
        return True

    def _name_problem(self, name: str) -> str:
        """Why ``name`` cannot be the new class's ("" when it can): the library's check, then the store's."""
        from ...core.classify.new_class import check_new_name
        from ...core.data.imageset import check_class_names
        from ...core.errors import ClassMapError

        if not name:
            return "Type a name for the gesture first."
        names = list(self.project.recogniser.class_names)
        try:
            check_class_names(names + [check_new_name(name, names)], "the gesture's name")
        except ClassMapError as exc:
            return f"{exc}."
        return ""

    def record(self) -> bool:
        """Record (or Enter in the name): check the name, then count down from :data:`COUNTDOWN_FROM`."""
        if self.phase != "naming":
            return False
        problem = self._name_problem(self.name.text().strip())
        if problem:
            self._say(problem)
            return False
        from ...core.errors import ClassMapError

        try:  # built here, where a model that cannot scan is told, then used on the stream's thread
            self._cropper = hand_cropper(self.project.recogniser)
            self.recorded_with = self.project.recogniser.features
        except ClassMapError as exc:
            self._say(f"This model cannot find the hand to record a gesture: {exc}")
            return False
        self._left = COUNTDOWN_FROM
        self.count.setText(str(self._left))
        self._phase("countdown")
        self._say(f"Get ready: recording {self.name.text().strip()!r} in {self._left}…")
        self.ticker.start()
        return True

    def tick(self) -> None:
        """One second of the countdown; at zero the recording starts."""
        if self.phase != "countdown":
            self.ticker.stop()
            return
        self._left -= 1
        if self._left > 0:
            self.count.setText(str(self._left))
            self._say(f"Get ready: recording {self.name.text().strip()!r} in {self._left}…")
            return
        self.ticker.stop()
        self.count.setText("● REC")
        self._phase("recording")
        self.cropper = self._cropper
        self.record_timer.start()
        self._say(f"Recording: show the gesture, moving it a little ({RECORD_SECONDS:.0f} s).")

    def offer(self, hand) -> None:
        """A frame's boxed hand (``(box, image)`` from :attr:`cropper`) while recording: it joins the strip."""
        if self.phase != "recording" or hand is None or len(self.crops) >= MAX_CROPS:
            return
        image = hand[1]
        self.crops.append(image)
        item = QListWidgetItem(QIcon(to_pixmap(image, THUMB)), "")
        item.setToolTip("click to drop this crop")
        self.strip.addItem(item)
        self.strip.scrollToBottom()

    def stop_recording(self) -> None:
        """The recording's time is up: the crops are shown for review."""
        if self.phase != "recording":
            return
        self.record_timer.stop()
        self.cropper = None
        self.count.setText("")
        self._phase("review")
        n = len(self.crops)
        if n < MIN_CROPS:
            self._say(f"Only {n} frame(s) showed a hand the scan could box: press Cancel and record again, with the "
                      "hand well in view.")
        else:
            self._say(f"Recorded {n} crops of {self.name.text().strip()!r}. Click a bad one to drop it, then press "
                      "Add gesture.")

    def drop(self, item: QListWidgetItem) -> None:
        """A click on a thumbnail: that crop is left out."""
        row = self.strip.row(item)
        if self.phase not in ("recording", "review") or not 0 <= row < len(self.crops):
            return
        del self.crops[row]
        self.strip.takeItem(row)
        self.refresh()

    def cancel(self) -> None:
        """Cancel: nothing is recorded or added; the strip goes."""
        self.ticker.stop()
        self.record_timer.stop()
        self.cropper = None
        self.crops.clear()
        self.strip.clear()
        self.hide()
        self._phase("idle")
        self.panel.set_status(" ")

    def stop(self) -> None:
        """The stream stopped (a video's end, a camera lost, Stop) or the project is replaced: a recording ends
        there, its crops kept for review; a name or countdown in progress is cancelled."""
        if self.phase == "recording":
            self.stop_recording()
        elif self.phase in ("naming", "countdown"):
            self.cancel()
        self.refresh()

    # ------------------------------------------------------------------ the model
    def add(self) -> bool:
        """Add gesture: the class is added on a worker thread, saved with the model, then named live."""
        if self.phase != "review" or len(self.crops) < MIN_CROPS:
            return False
        rec = self.project.recogniser
        if rec is None or rec.features is not self.recorded_with:
            self.cancel()
            self._say("Another model was opened since the recording: record the gesture again with it.")
            return False
        name, images = self.name.text().strip(), np.stack(self.crops)
        self._phase("adding")
        self._say(f"Adding {name!r} from {len(images)} crops…")

        def work(rec, progress, should_stop):
            added = rec.add_class(name, images, progress=progress, should_stop=should_stop)
            # too close to a class the model knows (most held-out crops named as it): said, and Undo is at hand
            warning = getattr(added, "warning", None)
            return (f"{warning} Undo removes it (Gestures menu)", True) if warning else \
                (f"{name!r} added from {len(images)} crops and named live", False)
        return self._change(f"Adding the gesture {name!r}", work, failed=lambda: self._phase("review"))

    def remove(self, name: str) -> bool:
        """*Gestures* menu: remove the added gesture ``name`` from the model (and its saved folder)."""
        def work(rec, progress, should_stop):
            rec.remove_class(name)
            return f"{name!r} removed", False
        return self._change(f"Removing the gesture {name!r}", work)

    def _change(self, title: str, work, failed=None) -> bool:
        """Run ``work(copy_of_model, progress, should_stop)`` (it returns what to tell the person and whether that
        is a warning) on a worker
        thread, save the copy where the model was opened from, and make it the project's model."""
        rec, folder = self.project.recogniser, self.project.model_folder
        if rec is None or self.runner is None:
            return False

        def task(progress, should_stop):
            new = rec.detached()
            said = work(new, progress, should_stop)
            if folder is not None:
                new.save(folder)
            return new, said

        def done(result):
            new, (said, close) = result
            if self.project.recogniser is not rec:  # another model was opened meanwhile: it is not this one's
                self._phase("idle")
                return self._say(f"{title} finished after another model was opened: "
                                 + (f"saved in {folder}." if folder is not None else "not kept."))
            self.project.change_classes(new, saved=folder is not None)
            self.crops.clear()
            self.strip.clear()
            self.message.setStyleSheet("QLabel { background: #fff4d6; color: #5c4400; padding: 4px; }" if close else "")
            self.strip.setVisible(not close)
            self.setVisible(close)  # a warning stays in view until the next gesture; otherwise the strip goes
            self._phase("idle")
            self._say(f"{said}; " + (f"the model is saved in {folder}." if folder is not None else
                                     "save the project to keep it."))

        def error(message: str):
            self._say(message)
            if failed is not None:
                failed()
        task_obj = self.runner.run(title, task, done, error)
        if task_obj is None and failed is not None:
            failed()
        return task_obj is not None


__all__ = ["COUNTDOWN_FROM", "GestureRecorder", "MAX_CROPS", "MIN_CROPS", "RECORD_SECONDS",
           "hand_cropper"]
