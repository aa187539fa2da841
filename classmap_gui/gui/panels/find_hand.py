"""Run panel, "Find the hand": every frame of a video or camera scanned for the hand, off the UI thread.

The scan is :class:`classmap_gui.core.detect.scanner.Scanner` (dense HOG of every window at several
scales, the windows classified by ClassMap or by brute force, background rejected). This module only
adapts it: :class:`.scan_stream.ScanStream` reads and scans frames on its own thread and hands the newest
result to the UI; :class:`FindHandView` draws the boxes, the winning class, its top candidates and each method's
frames/s, measured live in the worker.
"""
from __future__ import annotations

import cv2
import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QButtonGroup, QCheckBox, QHBoxLayout, QHeaderView, QLabel, QPushButton,
                               QRadioButton, QSizePolicy, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from ..imageutil import to_pixmap
from ..widgets import elided_item
from .scan_stream import ScanStream, reading_candidates

METHOD_LABELS = {"classmap": "ClassMap", "brute_force": "Brute force"}
BOX_COLOURS = ((60, 220, 90), (255, 200, 0), (255, 120, 60))  # best box first
#: what the boxes mean (shown under the frame)
BOX_LEGEND = ("<span style='color:#3cdc5a'>■</span> the hand (best window) · "
              "<span style='color:#ffc800'>■</span> runner-up: the next-best place that also passes the hand-found test "
              "· <span style='color:#969696'>■</span> best window, but no hand found there")


def draw_boxes(rgb: np.ndarray, result) -> np.ndarray:
    """A copy of ``rgb`` with the windows that hold a hand boxed, the best one thickest (the best window
    thin and grey when background beats every window)."""
    view = rgb.copy()
    thick = max(1, min(rgb.shape[:2]) // 200)
    for i in range(len(result.boxes) - 1, -1, -1):
        if not result.found[i] and i > 0:
            continue
        x, y, w, h = (int(round(v)) for v in result.boxes[i])
        colour = BOX_COLOURS[min(i, 2)] if result.found[i] else (150, 150, 150)
        cv2.rectangle(view, (x, y), (x + w - 1, y + h - 1), colour, thick * (2 if i == 0 and result.found[i] else 1))
    return view


class FindHandView(QWidget):
    """The "Find the hand" page of the Run panel: start/stop, the method switch, the annotated frame, the
    winning class with its candidates and both methods' frames/s. ``sources`` is the Run panel's picker;
    ``runner`` the window's background tasks (None: nothing can be generated here)."""

    def __init__(self, project, sources, runner=None, parent=None):
        super().__init__(parent)
        self.project, self.sources, self.runner = project, sources, runner
        self.stream: ScanStream | None = None
        self.last_result = None
        self.frames_shown = 0
        self.last_message = ""

        self.start_btn = QPushButton("▶ Find the hand")
        self.start_btn.clicked.connect(lambda: self.stop() if self.stream else self.start())
        self.methods = QButtonGroup(self)
        self.method_btns = {}
        for m, text in METHOD_LABELS.items():
            b = QRadioButton(text)
            b.setToolTip("ClassMap: filter and refine every window; brute force: every classifier on every window")
            self.methods.addButton(b)
            self.method_btns[m] = b
        self.method_btns["classmap"].setChecked(True)
        self.methods.buttonToggled.connect(lambda *_: self._method_changed())
        self.full_speed = QCheckBox("Full speed")
        self.full_speed.setToolTip("Video files: scan frames as fast as possible instead of at the video's pace")
        self.full_speed.setChecked(True)
        self.fps_labels = {m: QLabel(f"{t}: – frames/s") for m, t in METHOD_LABELS.items()}
        for lab in self.fps_labels.values():
            lab.setStyleSheet("QLabel { font-size: 12pt; font-weight: bold; }")

        self.view = QLabel("Pick a video or camera above and press Find the hand.")
        self.view.setAlignment(Qt.AlignCenter)
        self.view.setMinimumSize(320, 240)
        self.view.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Ignored)
        self.view.setStyleSheet("QLabel { background: #202428; color: #d0d4d8; }")
        self.status = QLabel(" ")
        self.status.setWordWrap(True)
        from ..hand_reading import HandReadingView

        self.reading = HandReadingView()
        self.legend = QLabel(BOX_LEGEND)
        self.legend.setWordWrap(True)
        self.warning = QLabel("")
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet("QLabel { background: #fff4d6; color: #5c4400; padding: 4px; }")
        self.warning.hide()
        self.add_bg_btn = QPushButton("Add a background class with generated clutter and retrain")
        self.add_bg_btn.setToolTip("Adds a 'background' class of generated clutter crops and near misses to the "
                                   "data set, then trains again with the same settings")
        self.add_bg_btn.clicked.connect(self.add_background)
        self.add_bg_btn.hide()
        self.cands = QTableWidget(0, 2)
        self.cands.setHorizontalHeaderLabels(["class", "probability"])
        self.cands.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.cands.verticalHeader().setVisible(False)
        self.cands.setEditTriggers(QTableWidget.NoEditTriggers)
        self.cands.setTextElideMode(Qt.ElideRight)  # a class name reads shape first: drop its end (full name: tooltip)
        self.details = QLabel("–")
        self.details.setWordWrap(True)

        bar = QHBoxLayout()
        bar.addWidget(self.start_btn)
        bar.addWidget(QLabel("Classify windows by"))
        for b in self.method_btns.values():
            bar.addWidget(b)
        bar.addWidget(self.full_speed)
        bar.addStretch(1)
        for lab in self.fps_labels.values():
            bar.addWidget(lab)
        left = QVBoxLayout()
        left.addWidget(self.view, 1)
        left.addWidget(self.legend)
        left.addWidget(self.status)
        right = QVBoxLayout()
        right.addWidget(self.warning)
        right.addWidget(self.add_bg_btn)
        right.addWidget(QLabel("The hand:"))
        right.addWidget(self.reading)
        right.addWidget(QLabel("Top candidates (the hand as read)"))
        right.addWidget(self.cands, 1)
        right.addWidget(self.details)
        rw = QWidget()
        rw.setLayout(right)
        rw.setFixedWidth(360)
        body = QHBoxLayout()
        body.addLayout(left, 1)
        body.addWidget(rw)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(bar)
        lay.addLayout(body, 1)

        project.modelChanged.connect(self._model_changed)
        self.check_background()

    def _model_changed(self) -> None:
        """Another model (or none): its scan starts afresh and nothing of the last model's stays on screen."""
        self.stop()
        self.last_result = None
        self.view.clear()
        self.view.setText("Pick a video or camera above and press Find the hand.")
        self.reading.clear()
        self.cands.setRowCount(0)
        self.details.setText("–")
        for m, lab in self.fps_labels.items():
            lab.setText(f"{METHOD_LABELS[m]}: – frames/s")
        self.check_background()

    def check_background(self) -> bool:
        """Warn (with the one-click fix) when the model has no background class: every window is then some
        class, so the best box lands on clutter as readily as on a hand. True when it has one."""
        from ...core.data.imageset import BACKGROUND_CLASS

        rec = self.project.recogniser
        missing = rec is not None and BACKGROUND_CLASS not in list(rec.class_names)
        self.warning.setText(f"This model has no \"{BACKGROUND_CLASS}\" class, so it cannot tell a hand from "
                             "clutter: every window is some class and the box lands anywhere. Add one (generated "
                             "clutter crops, or record your empty scene on the Capture panel) and train again."
                             if missing else "")
        self.warning.setVisible(missing)
        self.add_bg_btn.setVisible(missing)
        return not missing

    def add_background(self) -> bool:
        """The one-click fix: a ``background`` class of generated clutter and near-miss crops added to the data
        set, then the same training again (asked of the project). False when there is nothing to retrain."""
        from ...core.data.imageset import BACKGROUND_CLASS

        ims = self.project.imageset
        if ims is None or len(ims) == 0 or self.runner is None:
            return self._fail("This model came without its images, so it cannot be retrained here: open the project "
                              "it was trained from, or use File > Get the hand-pose model.")
        n = int(min(2000, max(300, 5 * len(ims) // max(1, ims.n_classes))))
        size, colour = ims.image_size, ims.is_color

        def work(progress, should_stop):
            import cv2

            from ...core.detect.background import background_images

            bg = background_images(n, size, seed=int(len(ims)), progress=progress, should_stop=should_stop)
            return np.stack([cv2.cvtColor(b, cv2.COLOR_GRAY2RGB) for b in bg]) if colour else bg

        def done(bg):
            names = list(self.project.imageset.class_names)
            cls = names.index(BACKGROUND_CLASS) if BACKGROUND_CLASS in names else self.project.add_class(BACKGROUND_CLASS)
            self.project.add_images(cls, bg)
            self._set_status(f"Added {len(bg)} generated background images; training again…")
            self.project.request_training()
        return bool(self.runner.run("Generating background images", work, done))

    @property
    def method(self) -> str:
        """The chosen method: "classmap" or "brute_force"."""
        return next(m for m, b in self.method_btns.items() if b.isChecked())

    def _method_changed(self) -> None:
        if self.stream is not None:
            self.stream.method = self.method

    def start(self) -> bool:
        """Find the hand button: scan the chosen video or camera; False (with a message) when it cannot."""
        from ...core.detect.scanner import Scanner
        from ...core.errors import ClassMapError

        if self.stream is not None:
            return True
        rec = self.project.recogniser
        if rec is None:
            return self._fail("No trained recogniser: train one (HOG features, ova-ridge) on the Train panel first.")
        src = self.sources.current()
        if src is None or isinstance(src, (list, tuple)):
            return self._fail("Find the hand scans a video file or a camera: choose one as the source.")
        self.check_background()
        try:  # check the model here, where the message can be shown, not in the thread
            Scanner(rec, self.method)
        except ClassMapError as exc:
            return self._fail(f"Cannot find the hand with this model: {exc}")
        self.stream = ScanStream(src, rec, self.method, realtime=not self.full_speed.isChecked(), parent=self)
        self.stream.frame.connect(self._on_frame)
        self.stream.ended.connect(self._on_end)
        self.frames_shown = 0
        for m, lab in self.fps_labels.items():
            lab.setText(f"{METHOD_LABELS[m]}: – frames/s")
        self.stream.start()
        self.start_btn.setText("■ Stop")
        self._set_status("Scanning every frame…")
        return True

    def stop(self) -> None:
        """Stop the scan; returns at once (its thread ends by itself)."""
        if self.stream is not None:
            self.stream.stop()
            self._ended("stopped")

    def _fail(self, text: str) -> bool:
        self._set_status(text)
        return False

    def _on_frame(self, rgb, result, method: str, reading=None) -> None:
        if self.sender() is not self.stream:
            return
        self.last_result = result
        self.view.setPixmap(to_pixmap(draw_boxes(rgb, result)).scaled(self.view.size(), Qt.KeepAspectRatio,
                                                                       Qt.SmoothTransformation))
        names = self.project.recogniser.class_names if self.project.recogniser is not None else []

        def name(c):
            return names[c] if 0 <= c < len(names) else str(c)

        # the reading names the shape, or "no hand" (still saying what the best window looked most like);
        # the table is made from the same reading, so its first row is the class the big name stands for
        from ..hand_reading import unsure_below

        self.reading.show_reading(reading, "" if result.label is None else name(result.label),
                                  unsure_below(self.project.recogniser))
        rows = getattr(reading, "candidates", None)
        if rows is None:
            rows = reading_candidates(reading, None, result)
        self.cands.setRowCount(len(rows))
        if rows:
            self.cands.setHorizontalHeaderLabels(["class", "probability" if rows[0][2] == "probability" else "score"])
        for r, (c, v, kind) in enumerate(rows):
            self.cands.setItem(r, 0, elided_item(name(c)))
            self.cands.setItem(r, 1, QTableWidgetItem(f"{100 * v:.0f} %" if kind != "score" else f"{v:.3f}"))
        t = result.timings
        self.details.setText(f"{result.windows} windows · {result.evaluations:.0f} classifier evaluations per window "
                             f"of {len(names)} · features {1000 * t['features']:.1f} ms · classify "
                             f"{1000 * t['classify']:.1f} ms · total {1000 * t['total']:.1f} ms")
        for m, rate in dict(self.stream.rates).items():
            self.fps_labels[m].setText(f"{METHOD_LABELS[m]}: {rate:.1f} frames/s")
        self.frames_shown += 1
        self.stream.frame_shown()

    def _on_end(self, message: str) -> None:
        if self.sender() is self.stream:
            self._ended(message)

    def _ended(self, message: str) -> None:
        self.stream = None
        self.start_btn.setText("▶ Find the hand")
        self._set_status(f"Scan ended: {message}.")

    def _set_status(self, text: str) -> None:
        self.last_message = text
        self.status.setText(text)
