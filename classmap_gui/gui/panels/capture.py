"""Capture from a camera or a video file into a class: preview, mirror, square region, a burst at a
chosen rate after a count-down, while the record button is held (or from one click to the next).

Every frame is written to disk the moment it is taken (Project.save_capture; its burst is in the file
name, so a re-imported capture folder keeps its bursts: core/data/capture_names.py); the burst joins the
image set when it ends, as one capture group, so training keeps a burst's near-identical frames on one
side of its split. A video file loops, pauses and plays slower, needs no count-down, and its frames are
split into bursts by what changes in it (:mod:`.capture_video`). A maximum duration stops a burst nobody
stops. A per-class target shows how far each class is; one click adds the "background" class
(:mod:`.capture_target`).
"""
from __future__ import annotations

import time

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (QCheckBox, QFormLayout, QHBoxLayout, QLabel, QProgressBar, QPushButton, QSizePolicy,
                               QSlider, QSpinBox, QVBoxLayout, QWidget)

from ...core.data.capture_names import new_burst_token
from ...core.data.editing import NEW_GROUP
from ...core.data.imageset import BACKGROUND_CLASS
from ...core.project.saved_settings import CAPTURE_TARGET
from ..camera import FrameStream
from ..imageutil import to_pixmap
from ..sources import SourcePicker
from ..video_file import VideoFile
from ..widgets import ElidedLabel
from .capture_target import TargetProgress
from .capture_video import VIDEO_COUNTDOWN, PlaybackRow, VideoBursts
from .hold_button import HoldButton

#: a press shorter than this is a click: recording then runs until the next click
CLICK_SECONDS = 0.35


class CapturePanel(TargetProgress, QWidget):
    """Record images from a camera or video into the chosen class: live preview, crop region, mirror and
    a hold-to-record button with count-down; a per-class target with progress; a "background" class in one
    click. Signal ``classRequested(int)``: select that class (the class list belongs to the Dataset panel);
    ``framesRecorded(class, n)``: the burst being recorded holds ``n`` frames (not in the image set yet)."""

    classRequested = Signal(int)
    framesRecorded = Signal(int, int)

    def __init__(self, project, current_class, parent=None):
        super().__init__(parent)
        self.video_bursts = VideoBursts()
        self.burst_token = ""
        self.burst_keys: list[int] = []   # the video burst of every frame of the recording (camera: all 0)
        self.repeats = 0                  # frames of this recording skipped as already recorded
        self._countdowns = {False: 3, True: VIDEO_COUNTDOWN}   # seconds, for a camera and for a video file
        self._file_source = False
        self.project = project
        self.current_class = current_class
        self.stream: FrameStream | None = None
        self.latest_crop = None
        self._latest_id = 0
        self._taken_id = -1
        self.burst: list = []
        self.burst_paths: list[str] = []
        self.burst_class = -1
        self.recording = False  # between press and the end of the burst (count-down included)
        self.latched = False    # started by a click: runs until the next click
        self._pressed_at = 0.0
        self._began_at = 0.0
        self.last_message = ""

        self.sources = SourcePicker(images=False)
        self.sources.status.connect(self._set_status)
        self.sources.changed.connect(self._source_changed)
        self.playback = PlaybackRow()
        self.start_btn = QPushButton("Start preview")
        self.start_btn.setCheckable(True)
        self.start_btn.toggled.connect(self._toggle)
        self.preview = QLabel("No preview.\nPick a camera or a video file and press Start preview.")
        self.preview.setAlignment(Qt.AlignCenter)
        self.preview.setMinimumSize(240, 180)
        # Ignored: the picture never pushes the layout (a growing preview moved the record button)
        self.preview.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Ignored)
        self.preview.setStyleSheet("QLabel { background: #202428; color: #d0d4d8; }")
        self.mirror = QCheckBox("Mirror")
        self.mirror.setChecked(True)
        self.mirror.setToolTip("Flip the preview like a mirror, for you: the images recorded are what the camera gives")
        self.mirror.toggled.connect(lambda v: setattr(self.stream, "mirror", v) if self.stream else None)
        self.region = QSlider(Qt.Horizontal)
        self.region.setRange(20, 100)
        self.region.setValue(70)
        self.region.setToolTip("Size of the square box that is recorded, as a share of the frame")
        self.region.valueChanged.connect(lambda v: setattr(self.stream, "region", v / 100) if self.stream else None)
        self.rate = QSpinBox()
        self.rate.setRange(1, 30)
        self.rate.setValue(10)
        self.rate.setSuffix(" frames/s")
        self.countdown = QSpinBox()
        self.countdown.setRange(0, 10)
        self.countdown.setValue(3)
        self.countdown.setSuffix(" s")
        self.countdown.setSpecialValueText("none")
        self.countdown.setToolTip("Seconds from ● to the first frame (to get your hand in place); none for a video")
        self.max_seconds = QSpinBox()
        self.max_seconds.setRange(1, 600)
        self.max_seconds.setValue(30)
        self.max_seconds.setSuffix(" s")
        self.max_seconds.setToolTip("A recording stops by itself after this long")
        self.record_btn = HoldButton("● Hold to record")
        self.record_btn.setToolTip("Hold to record while held, or click once to start and again to stop")
        self.record_btn.setEnabled(False)
        self.record_btn.held.connect(self.press_record)
        self.record_btn.let_go.connect(self._let_go)
        self.target = QSpinBox()
        self.target.setRange(int(CAPTURE_TARGET.low), int(CAPTURE_TARGET.high))
        self.target.setValue(CAPTURE_TARGET.default)  # an opened project's own: update_progress
        self.target.setSuffix(" images per class")
        self.target.setToolTip("How many images to capture for every class; the bar shows the selected class")
        self.target.valueChanged.connect(self._target_changed)
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress_note = ElidedLabel(" ", lines=3)  # fixed height: the record button above never moves
        self.background_btn = QPushButton(f"+ \"{BACKGROUND_CLASS}\" class")
        self.background_btn.setToolTip("Add (or select) the class of scenes without the object (the empty room)")
        self.background_btn.clicked.connect(lambda: self.add_background())
        self.status = QLabel(" ")
        self.status.setWordWrap(True)
        self.status.setFixedHeight(3 * self.status.fontMetrics().lineSpacing() + 4)
        self.status.setAlignment(Qt.AlignLeft | Qt.AlignTop)

        form = QFormLayout()
        form.addRow("Source", self.sources)
        opts = QHBoxLayout()
        opts.addWidget(self.mirror)
        opts.addWidget(QLabel("Box"))
        opts.addWidget(self.region, 1)
        form.addRow("View", opts)
        form.addRow("Video", self.playback)
        rr = QHBoxLayout()
        rr.addWidget(self.rate)
        rr.addWidget(QLabel("count-down"))
        rr.addWidget(self.countdown)
        rr.addWidget(QLabel("at most"))
        rr.addWidget(self.max_seconds)
        rr.addStretch(1)
        form.addRow("Record", rr)
        tr = QHBoxLayout()
        tr.addWidget(self.target)
        tr.addWidget(self.background_btn)
        tr.addStretch(1)
        form.addRow("Target", tr)
        form.addRow("Progress", self.progress)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(form)
        lay.addWidget(self.start_btn)
        lay.addWidget(self.preview, 1)
        lay.addWidget(self.record_btn)
        lay.addWidget(self.progress_note)
        lay.addWidget(self.status)
        project.datasetChanged.connect(self.update_progress)
        self.update_progress()
        self._source_changed()  # the demo video is listed first: no count-down

        self.tick = QTimer(self)
        self.tick.timeout.connect(self._take)
        self.count_timer = QTimer(self)
        self.count_timer.setInterval(1000)
        self.count_timer.timeout.connect(self._count)
        self._count_left = 0

    # ------------------------------------------------------------------ sources (kept for scripts)
    def refresh_cameras(self) -> list[int]:
        """Find cameras button: probe for cameras and list them; returns their indices."""
        return self.sources.refresh_cameras()

    def choose_video(self, path: str | None = None) -> None:
        """Add a video file as source (asking for it when ``path`` is None)."""
        self.sources.add("video", path)

    # ------------------------------------------------------------------ stream
    def _toggle(self, on: bool) -> None:
        (self.start_preview if on else self.stop_preview)()

    def start_preview(self) -> bool:
        """Start button: open the chosen source and show its preview; False when there is no source."""
        if self.stream is not None:
            return True
        src = self.sources.current()
        if src is None:
            self._set_status("No source: no camera was found. Press Find cameras, or choose a video file.")
            self.start_btn.setChecked(False)
            return False
        video = VideoFile(src, loop=True) if isinstance(src, str) else None  # a file loops: poses come round again
        self.stream = FrameStream(video or src, mirror=self.mirror.isChecked(), region=self.region.value() / 100,
                                  realtime=True, parent=self)
        self.playback.set_video(video, video is not None)
        self.stream.frame.connect(self._on_frame)
        self.stream.ended.connect(self._on_end)
        self.stream.start()
        self.start_btn.blockSignals(True)
        self.start_btn.setChecked(True)
        self.start_btn.setText("Stop preview")
        self.start_btn.blockSignals(False)
        self.sources.setEnabled(False)
        self.record_btn.setEnabled(True)
        self._set_status(f"Preview of {self.sources.current_text()}. Select a class, then hold ● to record"
                         + (" (Pause video stops it on a pose)." if video is not None else "."))
        return True

    def _source_changed(self) -> None:
        """Another source chosen: a video file gets no count-down and its speed control, a camera its own."""
        is_file = isinstance(self.sources.current(), str)
        if is_file != self._file_source:  # the kind of source changed: each kind keeps its own count-down
            self._countdowns[self._file_source] = self.countdown.value()
            self.countdown.setValue(self._countdowns[is_file])
            self._file_source = is_file
        self.playback.set_video(None, is_file)
        self._set_status("A video file needs no count-down: recording starts when you press ● (pause the video on "
                         "the pose first, or slow it down)." if is_file else " ")

    def stop_preview(self) -> None:
        """Stop the preview stream (start button unchecked, panel shut down); returns at once, the thread ends
        by itself."""
        if self.stream is not None:
            self.stream.stop()
            self._ended("stopped")

    def _on_frame(self, view, crop, _result) -> None:
        if self.sender() is not self.stream:
            return
        self.latest_crop = crop
        self._latest_id += 1
        pm = to_pixmap(view)
        self.preview.setPixmap(pm.scaled(self.preview.size(), Qt.KeepAspectRatio, Qt.SmoothTransformation))
        self.stream.frame_shown()

    def _on_end(self, message: str) -> None:
        if self.sender() is self.stream:
            self._ended(message)

    def _ended(self, message: str) -> None:
        self.stop_recording()
        self.stream = None
        self.start_btn.blockSignals(True)
        self.start_btn.setChecked(False)
        self.start_btn.setText("Start preview")
        self.start_btn.blockSignals(False)
        self.sources.setEnabled(True)
        self.record_btn.setEnabled(False)
        self.playback.set_video(None, isinstance(self.sources.current(), str))
        self.preview.setText(f"Preview ended: {message}")
        self._set_status(f"Preview ended: {message}")

    # ------------------------------------------------------------------ recording
    def press_record(self) -> None:
        """The record button went down: stop a latched recording, else start one (after the count-down)."""
        if self.recording:
            self.stop_recording()
            return
        cls = self.current_class()
        if cls < 0 or self.project.imageset is None:
            self._set_status("Select (or add) the class to record into first.")
            return
        self._pressed_at = time.monotonic()
        self.burst_class = cls
        self._count_left = self.countdown.value()
        self.recording, self.latched = True, False
        self.burst, self.burst_paths, self.burst_keys, self.repeats = [], [], [], 0
        if self._count_left > 0:
            self._set_status(f"Recording into {self.project.class_names[cls]!r} in {self._count_left}…")
            self.record_btn.setText(f"● Recording in {self._count_left}… release to cancel")
            self.count_timer.start()
        else:
            self._begin()

    def _let_go(self) -> None:
        """The button came up: a short click latches the recording, a hold ends it."""
        if not self.recording:
            return
        if time.monotonic() - self._pressed_at < CLICK_SECONDS:
            self.latched = True
            self.record_btn.setText("● Recording… click to stop" if self._count_left <= 0 else
                                    f"● Recording in {self._count_left}… click to cancel")
            return
        self.stop_recording()

    def _count(self) -> None:
        self._count_left -= 1
        if self._count_left > 0:
            name = self.project.class_names[self.burst_class]
            self._set_status(f"Recording into {name!r} in {self._count_left}…")
            self.record_btn.setText(f"● Recording in {self._count_left}… " +
                                    ("click to cancel" if self.latched else "release to cancel"))
        else:
            self.count_timer.stop()
            self._begin()

    def _begin(self) -> None:
        self._taken_id = self._latest_id  # start from the next fresh frame
        src = self._video_source()  # the files name their burst; a video's bursts come from its frames
        self.burst_token = new_burst_token()
        if src is not None:
            self.video_bursts.start(self.project.imageset, src, self.burst_class)
        self.playback.play_while(True)
        self._began_at = time.monotonic()
        self.tick.start(int(1000 / self.rate.value()))
        self.record_btn.setText("● Recording… " + ("click to stop" if self.latched else "release to stop"))

    def _take(self) -> None:
        if time.monotonic() - self._began_at >= self.max_seconds.value():
            self.stop_recording(f"stopped after the maximum of {self.max_seconds.value()} s")
            return
        if self.latest_crop is None or self._taken_id == self._latest_id:
            return
        self._taken_id = self._latest_id
        src, burst, token = self._video_source(), 0, self.burst_token
        if src is not None:
            taken = self.video_bursts.take(src, self.burst_class, self.latest_crop)
            if taken is None:  # the same frame again (the video looped or stands paused)
                self.repeats += 1
                return
            burst, token = taken
        try:
            path = self.project.save_capture(self.burst_class, self.latest_crop, token)
        except OSError as exc:
            from ..tasks import friendly_error
            self.stop_recording()
            self._set_status(f"Could not write the capture. {friendly_error(exc)[0]}")
            return
        self.burst.append(self.latest_crop)
        self.burst_paths.append(str(path))
        self.burst_keys.append(burst)
        self._set_status(f"{len(self.burst)} frame(s) → {self.project.class_names[self.burst_class]!r}, "
                         f"each saved as it is taken.")
        self.update_progress()
        self.framesRecorded.emit(self.burst_class, len(self.burst))

    def stop_recording(self, why: str = "") -> None:
        """End a recording (button let go, time limit, stream ended): add the burst to its class and say
        why it stopped (``why``)."""
        if not self.recording:
            return
        self.recording = self.latched = False
        self.count_timer.stop()
        self.tick.stop()
        self.playback.play_while(False)
        self.record_btn.setText("● Hold to record")
        skipped = f"; {self.repeats} frame(s) skipped, recorded before" if self.repeats else ""
        if self.burst:
            n, name = len(self.burst), self.project.class_names[self.burst_class]
            folder = self.project.capture_dir(self.burst_class)
            self._add_bursts()
            self._set_status(f"Recorded {n} frame(s) into {name!r}{' (' + why + ')' if why else ''}{skipped}. "
                             f"Files: {folder}")
        elif self.repeats:
            self._set_status(f"Nothing new recorded{skipped}: let the video play on to other frames.")
        elif self._count_left > 0:
            self._set_status("Count-down cancelled; nothing recorded.")
        else:
            self._set_status("Nothing recorded: no new frame arrived.")
        self.burst, self.burst_paths, self.burst_keys = [], [], []

    def _add_bursts(self) -> None:
        """Add the recording to its class: one new capture group from a camera; from a video, one group per
        burst of change (the group earlier frames of that burst have, when there are some)."""
        src, cls = self._video_source(), self.burst_class
        self.project.note_capture_source(src)  # a hand video: its images are hands (said before they join)
        keys = np.asarray(self.burst_keys)
        for b in dict.fromkeys(self.burst_keys):
            k = np.flatnonzero(keys == b)
            group = NEW_GROUP if src is None else self.video_bursts.group(self.project.imageset, src, cls, b)
            self.project.add_images(cls, [self.burst[i] for i in k], [self.burst_paths[i] for i in k], group)
        self.project.message.emit(f"added {len(self.burst)} image(s) to {self.project.class_names[cls]!r}")

    def _video_source(self) -> str | None:
        """The video file being recorded from, or None for a camera."""
        src = getattr(self.stream, "source", None) if self.stream is not None else self.sources.current()
        src = src.path if isinstance(src, VideoFile) else src
        return src if isinstance(src, str) else None

    def _set_status(self, text: str) -> None:
        self.last_message = text
        self.status.setText(text)
        self.status.setToolTip(text)

    def shutdown(self) -> None:
        """Finish any recording and stop the preview; called when the window closes."""
        self.stop_recording()
        self.stop_preview()
