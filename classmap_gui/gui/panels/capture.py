"""Capture from a camera or a video file into a class: preview, mirror, square region,
hold-to-record burst at a chosen rate after a count-down. Every frame is written to disk
the moment it is taken (Project.save_capture); the burst joins the image set when it ends."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QPushButton,
                               QSizePolicy, QSlider, QSpinBox, QVBoxLayout, QWidget)

from ..camera import FrameStream, list_cameras
from ..imageutil import to_pixmap


class CapturePanel(QWidget):
    def __init__(self, project, current_class, parent=None):
        super().__init__(parent)
        self.project = project
        self.current_class = current_class
        self.stream: FrameStream | None = None
        self.latest_crop = None
        self._latest_id = 0
        self._taken_id = -1
        self.burst: list = []
        self.burst_paths: list[str] = []
        self.burst_class = -1
        self.recording = False
        self.last_message = ""

        self.source = QComboBox()
        self.source.setMinimumWidth(140)
        self.refresh_btn = QPushButton("Find cameras")
        self.refresh_btn.clicked.connect(self.refresh_cameras)
        self.video_btn = QPushButton("Video file…")
        self.video_btn.clicked.connect(lambda: self.choose_video())
        self.start_btn = QPushButton("Start preview")
        self.start_btn.setCheckable(True)
        self.start_btn.toggled.connect(self._toggle)
        self.preview = QLabel("No preview.\nPick a camera or a video file and press Start preview.")
        self.preview.setAlignment(Qt.AlignCenter)
        self.preview.setMinimumSize(240, 180)
        self.preview.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.preview.setStyleSheet("QLabel { background: #202428; color: #d0d4d8; }")
        self.mirror = QCheckBox("Mirror")
        self.mirror.setChecked(True)
        self.mirror.toggled.connect(lambda v: setattr(self.stream, "mirror", v) if self.stream else None)
        self.region = QSlider(Qt.Horizontal)
        self.region.setRange(20, 100)
        self.region.setValue(70)
        self.region.valueChanged.connect(lambda v: setattr(self.stream, "region", v / 100) if self.stream else None)
        self.rate = QSpinBox()
        self.rate.setRange(1, 30)
        self.rate.setValue(10)
        self.rate.setSuffix(" frames/s")
        self.countdown = QSpinBox()
        self.countdown.setRange(0, 10)
        self.countdown.setValue(3)
        self.countdown.setSuffix(" s")
        self.record_btn = QPushButton("● Hold to record")
        self.record_btn.setEnabled(False)
        self.record_btn.pressed.connect(self.press_record)
        self.record_btn.released.connect(self.release_record)
        self.status = QLabel(" ")
        self.status.setWordWrap(True)

        row = QHBoxLayout()
        row.addWidget(self.source, 1)
        row.addWidget(self.refresh_btn)
        row.addWidget(self.video_btn)
        form = QFormLayout()
        form.addRow("Source", row)
        opts = QHBoxLayout()
        opts.addWidget(self.mirror)
        opts.addWidget(QLabel("Box"))
        opts.addWidget(self.region, 1)
        form.addRow("View", opts)
        rr = QHBoxLayout()
        rr.addWidget(self.rate)
        rr.addWidget(QLabel("count-down"))
        rr.addWidget(self.countdown)
        form.addRow("Record", rr)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(form)
        lay.addWidget(self.start_btn)
        lay.addWidget(self.preview, 1)
        lay.addWidget(self.record_btn)
        lay.addWidget(self.status)

        self.tick = QTimer(self)
        self.tick.timeout.connect(self._take)
        self.count_timer = QTimer(self)
        self.count_timer.setInterval(1000)
        self.count_timer.timeout.connect(self._count)
        self._count_left = 0

    # ------------------------------------------------------------------ sources
    def refresh_cameras(self) -> list[int]:
        cams = list_cameras()
        video = [self.source.itemData(i) for i in range(self.source.count())
                 if isinstance(self.source.itemData(i), str)]
        self.source.clear()
        for c in cams:
            self.source.addItem(f"Camera {c}", c)
        for v in video:
            self.source.addItem(Path(v).name, v)
        self._set_status("found camera(s) " + ", ".join(map(str, cams)) if cams else
                         "No camera found. Connect one and press Find cameras again, or use a video file.")
        return cams

    def choose_video(self, path: str | None = None) -> None:
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Video file", "", "Videos (*.avi *.mp4 *.mkv *.mov *.webm);;All files (*)")
            if not path:
                return
        self.source.addItem(Path(path).name, str(path))
        self.source.setCurrentIndex(self.source.count() - 1)

    # ------------------------------------------------------------------ stream
    def _toggle(self, on: bool) -> None:
        (self.start_preview if on else self.stop_preview)()

    def start_preview(self) -> bool:
        if self.stream is not None:
            return True
        src = self.source.currentData()
        if src is None:
            self._set_status("No source: no camera was found. Press Find cameras, or choose a video file.")
            self.start_btn.setChecked(False)
            return False
        self.stream = FrameStream(src, mirror=self.mirror.isChecked(), region=self.region.value() / 100,
                                  realtime=True, parent=self)
        self.stream.frame.connect(self._on_frame)
        self.stream.ended.connect(self._on_end)
        self.stream.start()
        self.start_btn.blockSignals(True)
        self.start_btn.setChecked(True)
        self.start_btn.setText("Stop preview")
        self.start_btn.blockSignals(False)
        self.record_btn.setEnabled(True)
        return True

    def stop_preview(self) -> None:
        if self.stream is not None:
            self.stream.stop()
            self.stream.wait(3000)

    def _on_frame(self, view, crop, _result) -> None:
        if self.sender() is not self.stream:
            return
        self.latest_crop = crop
        self._latest_id += 1
        pm = to_pixmap(view)
        self.preview.setPixmap(pm.scaled(self.preview.size(), Qt.KeepAspectRatio, Qt.SmoothTransformation))
        self.stream.frame_shown()

    def _on_end(self, message: str) -> None:
        if self.sender() is not self.stream:
            return
        self.release_record()
        self.stream.wait(3000)
        self.stream.deleteLater()
        self.stream = None
        self.start_btn.blockSignals(True)
        self.start_btn.setChecked(False)
        self.start_btn.setText("Start preview")
        self.start_btn.blockSignals(False)
        self.record_btn.setEnabled(False)
        self.preview.setText(f"Preview ended: {message}")
        self._set_status(message)

    # ------------------------------------------------------------------ recording
    def press_record(self) -> None:
        cls = self.current_class()
        if cls < 0 or self.project.imageset is None:
            self._set_status("Select (or add) the class to record into first.")
            return
        self.burst_class = cls
        self._count_left = self.countdown.value()
        self.recording = True
        if self._count_left > 0:
            self._set_status(f"Recording into {self.project.class_names[cls]!r} in {self._count_left}…")
            self.count_timer.start()
        else:
            self._begin()

    def _count(self) -> None:
        self._count_left -= 1
        if self._count_left > 0:
            self._set_status(f"Recording into {self.project.class_names[self.burst_class]!r} in {self._count_left}…")
        else:
            self.count_timer.stop()
            self._begin()

    def _begin(self) -> None:
        self.burst, self.burst_paths = [], []
        self._taken_id = self._latest_id  # start from the next fresh frame
        self.tick.start(int(1000 / self.rate.value()))
        self.record_btn.setText("● Recording… release to stop")

    def _take(self) -> None:
        if self.latest_crop is None or self._taken_id == self._latest_id:
            return
        self._taken_id = self._latest_id
        try:
            path = self.project.save_capture(self.burst_class, self.latest_crop)
        except OSError as exc:
            self.release_record()
            self._set_status(f"Could not write the capture: {exc}")
            return
        self.burst.append(self.latest_crop)
        self.burst_paths.append(str(path))
        self._set_status(f"{len(self.burst)} frame(s) → {self.project.class_names[self.burst_class]!r} "
                         f"(saved in {path.parent})")

    def release_record(self) -> None:
        if not self.recording:
            return
        self.recording = False
        self.count_timer.stop()
        self.tick.stop()
        self.record_btn.setText("● Hold to record")
        if self.burst:
            n, name = len(self.burst), self.project.class_names[self.burst_class]
            self.project.add_images(self.burst_class, self.burst, self.burst_paths)
            self._set_status(f"Recorded {n} frame(s) into {name!r}.")
        elif self._count_left > 0:
            self._set_status("Count-down cancelled; nothing recorded.")
        self.burst, self.burst_paths = [], []

    def _set_status(self, text: str) -> None:
        self.last_message = text
        self.status.setText(text)
        self.project.message.emit(text)

    def shutdown(self) -> None:
        self.release_record()
        self.stop_preview()
