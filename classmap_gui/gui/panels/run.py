"""Run panel: live recognition on a camera, a video file, image files or a folder.

Video and cameras show the winner, the top candidates and stage timings per frame; image files and
folders also fill a per-file results list (file, recognised class, score, or why it was unreadable).
"""
from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np
import cv2
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QSlider, QSpinBox,
                               QSplitter, QVBoxLayout, QWidget)

from ..imageutil import to_pixmap
from ..sources import SourcePicker
from .gesture import GestureRecorder
from .run_results import ResultsColumn


class FrameResult(NamedTuple):
    """One streamed frame recognised (on the stream's thread): the ``top`` classes ``(top,) int64`` and scores
    ``(top,) float32``, the stage timings and their total (s), the classifier evaluations, and what a view of the
    same frame may re-use instead of computing it again: its ``features (1, D) float32`` and the ``recogniser``;
    ``hand``: while a gesture is recorded, the hand the scan boxed (``(box, image)``, :func:`.gesture.hand_cropper`)."""

    classes: np.ndarray
    scores: np.ndarray
    timings: dict
    total: float
    evaluations: int
    features: np.ndarray
    recogniser: Any
    hand: Any = None


class RunPanel(QWidget):
    """The Run tab: recognise a camera, video or images live with the trained recogniser and show the
    class, scores and speed. Each frame shown is published on ``project.live`` (a headless
    :class:`~classmap_gui.core.explore.live_stream.LiveStream`) for the views that follow the stream."""

    def __init__(self, project, runner=None, parent=None):
        super().__init__(parent)
        self.project = project  # ``runner``: the background tasks (Find the hand's background class)
        self.stream = None
        self.latest_crop = None
        self.last_result = None
        self.frames_shown = 0
        self.fps = 0.0
        self._fps_t0, self._fps_n, self._fps_s = time.perf_counter(), 0, 0.0
        self._run_n, self._run_s = 0, 0.0   # the run's frames and their processing seconds
        self.last_message = ""
        self._live_rec = None  # the model the stream reads with: a gesture added swaps it while it plays

        self.sources = SourcePicker(images=True)
        self.sources.status.connect(self.set_status)
        self.sources.changed.connect(lambda: self.set_status(" "))
        self.start_btn = QPushButton("▶ Start")
        self.start_btn.clicked.connect(lambda: self.stop() if self.stream else self.start())
        self.pause_btn = QPushButton("Pause")
        self.pause_btn.setCheckable(True)
        self.pause_btn.toggled.connect(self._pause)
        self.step_btn = QPushButton("Step")
        self.step_btn.clicked.connect(lambda: self.stream.step() if self.stream else None)
        self.full_speed = QCheckBox("Full speed")
        self.full_speed.setToolTip("Video files and images: process frames as fast as possible instead of in real time")
        self.mirror = QCheckBox("Mirror")
        self.mirror.setToolTip("Flip the view like a mirror, for you: the recogniser reads the frames as the camera "
                               "gives them either way")
        self.mirror.toggled.connect(lambda v: setattr(self.stream, "mirror", v) if self.stream else None)
        self.region = QSlider(Qt.Horizontal)
        self.region.setRange(20, 100)
        self.region.setValue(100)
        self.region.setMaximumWidth(120)
        self.region.setToolTip("Size of the square box that is recognised, as a share of the frame")
        self.region.valueChanged.connect(lambda v: setattr(self.stream, "region", v / 100) if self.stream else None)
        self.top = QSpinBox()
        self.top.setRange(1, 50)
        self.top.setValue(5)
        self.top.setPrefix("top ")

        self.view = QLabel()
        self.view.setAlignment(Qt.AlignCenter)
        self.view.setMinimumSize(320, 240)
        self.view.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Ignored)
        self.view.setStyleSheet("QLabel { background: #202428; color: #d0d4d8; }")
        self.fps_label = QLabel("– frames/s")
        self.fps_label.setToolTip("Frames the recogniser processes per second (its own time per frame), whatever "
                                  "the video's own pace")
        self.fps_label.setStyleSheet("QLabel { font-size: 14pt; font-weight: bold; }")
        self.fps_label.setMinimumWidth(self.fps_label.fontMetrics().horizontalAdvance("000.0 frames/s") + 24)
        self.status = QLabel(" ")
        self.status.setWordWrap(True)

        self.results = ResultsColumn(project, self._name)  # the right column (panels/run_results.py)
        r = self.results
        self.winner, self.reading, self.cands, self.timings, self.files = r.winner, r.reading, r.cands, r.timings, r.files
        self.snap_class = QComboBox()
        self.snap_class.setMinimumContentsLength(10)
        self.snap_class.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.snap_class.currentTextChanged.connect(self.snap_class.setToolTip)  # the whole name
        self.snap_btn = QPushButton("Snapshot into class")
        self.snap_btn.clicked.connect(lambda: self.snapshot())

        # "Find the hand": the same source, every frame scanned for the hand (panels/find_hand.py)
        from .find_hand import FindHandView
        self.find_hand = FindHandView(project, self.sources, runner, self)
        self.find_btn = QPushButton("Find the hand")
        self.find_btn.setCheckable(True)
        self.find_btn.setToolTip("Scan every frame of the video or camera for the hand: boxes, class, ClassMap vs brute force")
        self.find_btn.toggled.connect(self._find_mode)
        # "Add a gesture…": record the hand, add it as a new class (panels/gesture.py)
        self.gesture = GestureRecorder(project, runner, self)

        bar = QHBoxLayout()
        bar.addWidget(QLabel("Source"))
        bar.addWidget(self.sources, 1)
        bar.addWidget(self.find_btn)
        bar2 = QHBoxLayout()
        for w in (self.start_btn, self.pause_btn, self.step_btn, self.full_speed, self.mirror, QLabel("Box"),
                  self.region, self.top):
            bar2.addWidget(w)
        bar2.addStretch(1)
        bar2.addWidget(self.gesture.add_btn)
        bar2.addWidget(self.gesture.menu_btn)
        bar2.addWidget(self.fps_label)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(self.view, 1)
        ll.addWidget(self.gesture)
        ll.addWidget(self.status)
        sn = QHBoxLayout()
        sn.addWidget(self.snap_btn)
        sn.addWidget(self.snap_class, 1)
        self.results.layout().addLayout(sn)
        split = QSplitter()
        split.addWidget(left)
        split.addWidget(self.results)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 0)
        lay = QVBoxLayout(self)
        lay.addLayout(bar)
        lay.addLayout(bar2)
        lay.addWidget(split, 1)
        lay.addWidget(self.find_hand, 1)
        self.find_hand.hide()
        self._recognise_widgets = [split] + [bar2.itemAt(i).widget() for i in range(bar2.count())
                                             if bar2.itemAt(i).widget() is not None]
        project.datasetChanged.connect(self._classes_changed)
        project.modelChanged.connect(self._classes_changed)
        project.modelChanged.connect(self._model_changed)
        self._classes_changed()
        self._model_changed()
        self._buttons()

    # ------------------------------------------------------------------ sources
    @property
    def source(self):
        """The source combo box of the shared source picker."""
        return self.sources.combo

    def refresh_cameras(self) -> list[int]:
        """Find cameras button: probe for cameras and list them; returns their indices."""
        return self.sources.refresh_cameras()

    def add_source(self, kind: str, value=None) -> None:
        """Add and choose a source of ``kind`` ("video", "files", "folder"), asked for when ``value`` is None."""
        self.sources.add(kind, value)

    # ------------------------------------------------------------------ stream
    def start(self) -> bool:
        """Start button: stream the chosen source through the recogniser; False without a model or a source."""
        from ..camera import FrameStream

        if self.stream is not None:
            return True
        rec = self.project.recogniser
        if rec is None:
            self.set_status("No trained recogniser: train one on the Train panel (or open a project) first.")
            return False
        src = self.sources.current()
        if src is None:
            self.set_status("No source. Press Find cameras, or choose a video file, image files or a folder.")
            return False
        top = self.top.value()

        from ...core.detect.capture import capture_context
        from ...core.detect.window_crops import with_context

        context = capture_context(rec)  # a window network reads a window with a margin around it

        self._live_rec = rec

        def process(crop: np.ndarray, frame: np.ndarray) -> FrameResult:
            rec, cropper = self._live_rec, self.gesture.cropper  # read once a frame: the UI thread may swap them
            hand = cropper(frame) if cropper is not None else None  # the scan looks at the whole frame
            x = rec.prepare(with_context(crop, context)[None])
            t0 = time.perf_counter()
            X = rec.transform(x)  # Recogniser.predict's two stages, the features kept for the live map
            t1 = time.perf_counter()
            pred = rec.predict_features(X, top=top)
            total = time.perf_counter() - t0
            return FrameResult(np.asarray(pred.top_classes[0]), np.asarray(pred.top_scores[0]),
                               {"features": t1 - t0, **pred.timings, "total": total}, total,
                               int(np.asarray(pred.evaluations)[0]), X, rec, hand)

        self.results.brute = int(getattr(rec, "brute_force_evaluations", len(self.project.class_names)))
        is_file = not isinstance(src, int)
        self.stream = FrameStream(src, process=process, mirror=self.mirror.isChecked(),
                                  region=self.region.value() / 100,
                                  realtime=not (is_file and self.full_speed.isChecked()),
                                  image_interval=0.0 if self.full_speed.isChecked() else 1.0, with_frame=True,
                                  parent=self)
        self.stream.frame.connect(self._on_frame)
        self.stream.unreadable.connect(self._on_unreadable)
        self.stream.ended.connect(self._on_end)
        self.frames_shown, self.fps = 0, 0.0
        self._fps_t0, self._fps_n, self._fps_s = time.perf_counter(), 0, 0.0
        self._run_n, self._run_s = 0, 0.0
        self.fps_label.setText("– frames/s")  # never the previous run's figure
        self.results.clear()
        self.stream.set_paused(self.pause_btn.isChecked())
        self.stream.start()
        self.project.live.start(src)
        self.set_status(f"Running on {self.sources.current_text()}.")
        self.view.clear()   # a camera or video takes seconds to open: say so, not "Pick a source"
        self.view.setText(f"Opening {self.sources.current_text()}…")
        self._buttons()
        return True

    def stop(self) -> None:
        """Stop button (and window close): ask the stream to stop and go on at once (its thread ends by itself)."""
        if self.stream is not None:
            self.stream.stop()
            self._ended("stopped")
            self.fps_label.setText("– frames/s")  # stopped: no rate is running
        self.find_hand.stop()

    def shutdown(self) -> None:
        """The window closes (panel_table.Panel): stop the stream and the hand scan."""
        self.stop()

    def _find_mode(self, on: bool) -> None:
        """Find the hand button: show the scan page instead of the recognition view (one at a time)."""
        self.stop()
        self._model_changed()  # the recognition view comes back empty, not with an old run's frame and rate
        for w in self._recognise_widgets:
            w.setVisible(not on)
        self.find_hand.setVisible(on)

    def _pause(self, paused: bool) -> None:
        if self.stream is not None:
            self.stream.set_paused(paused)
            self.set_status(f"{'Paused' if paused else 'Running'} on {self.sources.current_text()}"
                             + (": Step advances one frame." if paused else "."))

    def _model_changed(self) -> None:
        """Another recogniser (or none: a new project): nothing of the last run stays on screen. While the stream
        plays and the model only changed its classes (a gesture added or removed; its feature map is the same
        object), the next frame is read with it; another model waits for the next Start."""
        rec = self.project.recogniser
        if self.stream is not None:
            live = self._live_rec
            if rec is not None and live is not None and rec.features is live.features:  # the same model, reclassed
                self._live_rec = rec
                self.results.brute = int(getattr(rec, "brute_force_evaluations", len(self.project.class_names)))
            return
        self.view.clear()
        self.view.setText("Pick a source and press Start." if rec is not None else
                          "Train a recogniser (Train panel) or open a project, then pick a source and press Start.")
        self.results.clear()
        self.fps_label.setText("– frames/s")
        self.frames_shown, self.fps, self.last_result, self.latest_crop = 0, 0.0, None, None
        self.set_status(" ")

    def _buttons(self) -> None:
        running = self.stream is not None
        self.start_btn.setText("■ Stop" if running else "▶ Start")
        if not running:  # nothing to pause: the button is not left down
            self.pause_btn.setChecked(False)
        self.pause_btn.setEnabled(running)
        self.step_btn.setEnabled(running)
        self.sources.setEnabled(not running)
        self.full_speed.setEnabled(not running)
        if not running:
            self.gesture.stop()
        self.gesture.refresh()

    def _on_frame(self, view, crop, result, name: str = "") -> None:
        if self.sender() is not self.stream:
            return
        self.latest_crop = crop
        hand = getattr(result, "hand", None)
        if hand is not None:  # recording a gesture: the hand the scan boxed
            view = self._box_hand(view, hand[0])
            self.gesture.offer(hand)
        self.view.setPixmap(to_pixmap(view).scaled(self.view.size(), Qt.KeepAspectRatio, Qt.FastTransformation))
        if result is not None:
            self._show_result(result)
            if name:
                c, s = int(result[0][0]), float(result[1][0])
                self._add_file_row(name, self._name(c), "–" if not np.isfinite(s) else f"{s:.3f}")
        self.project.live.publish(crop, result, name, self.stream.frames_read)
        self.frames_shown += 1
        # the processed rate: frames per second of the recogniser's own time, whatever the video's pace or Step
        spent = float(getattr(result, "total", 0.0) or 0.0)
        self._fps_n, self._fps_s = self._fps_n + (spent > 0), self._fps_s + spent
        self._run_n, self._run_s = self._run_n + (spent > 0), self._run_s + spent
        now = time.perf_counter()
        if now - self._fps_t0 >= 0.5 and self._fps_s > 0:
            self.fps = self._fps_n / self._fps_s
            self._fps_t0, self._fps_n, self._fps_s = now, 0, 0.0
            self.fps_label.setText(f"{self.fps:.1f} frames/s")
        self.stream.frame_shown()

    def _box_hand(self, view: np.ndarray, box) -> np.ndarray:
        """``view`` with the recorded hand's ``box`` (x, y, w, h in the frame's pixels) drawn in red."""
        x, y, w, h = box
        x = x if not self.mirror.isChecked() else view.shape[1] - (x + w)
        view = view.copy()
        cv2.rectangle(view, (int(x), int(y)), (int(x + w), int(y + h)), (230, 40, 40), max(2, view.shape[0] // 120))
        return view

    def _on_unreadable(self, name: str, reason: str) -> None:
        if self.sender() is self.stream:
            self._add_file_row(name, f"unreadable: {reason}", "")

    def _add_file_row(self, path: str, what: str, score: str) -> None:
        self.results.add_file_row(path, what, score)

    def _names(self) -> list[str]:
        rec = self.project.recogniser
        return list(rec.class_names if rec is not None and hasattr(rec, "class_names") else self.project.class_names)

    def _name(self, c: int) -> str:
        names = self._names()
        return names[c] if 0 <= c < len(names) else str(c)

    def _show_result(self, result) -> None:
        self.last_result = result
        self.results.show_result(result)

    def _on_end(self, message: str) -> None:
        if self.sender() is self.stream:
            self._ended(message)

    def _ended(self, message: str) -> None:
        self.stream = None
        self.project.live.end(message)
        self._buttons()
        if self._run_s > 0:  # the run's mean processed rate stays on screen (a Stop clears it)
            self.fps = self._run_n / self._run_s
            self.fps_label.setText(f"{self.fps:.1f} frames/s")
        self.set_status(f"Stream ended: {message}.")

    def _classes_changed(self) -> None:
        self.results.classes_changed()
        names = list(self.project.class_names)
        if names == getattr(self, "_snap_names", None):  # data and model signals both arrive: fill once
            return
        self._snap_names = names
        cur = self.snap_class.currentText()
        self.snap_class.clear()
        self.snap_class.addItems(names)  # one call: a model opened alone may have 10^5 classes
        for i, n in enumerate(names):
            self.snap_class.setItemData(i, n, Qt.ToolTipRole)
        if cur in names:
            self.snap_class.setCurrentText(cur)

    def snapshot(self, cls: int | None = None) -> bool:
        """Save the current frame's region into a class (written to disk, added to the set)."""
        cls = self.snap_class.currentIndex() if cls is None else cls
        if self.latest_crop is None or cls < 0 or self.project.imageset is None:
            self.set_status("Nothing to snapshot: start a source first.")
            return False
        try:
            path = self.project.save_capture(cls, self.latest_crop)
        except OSError as exc:
            from ..tasks import friendly_error
            self.set_status(f"Could not save the snapshot. {friendly_error(exc)[0]}")
            return False
        self.project.add_images(cls, [self.latest_crop], [str(path)])
        self.set_status(f"Snapshot saved into {self.project.class_names[cls]!r} ({path.name}).")
        return True

    def set_status(self, text: str) -> None:
        """The panel's status line (and ``last_message``); the gesture strip writes it too."""
        self.last_message = text
        self.status.setText(text)
