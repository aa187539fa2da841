"""One source picker for the Run panel and Capture: cameras, video files, image files and folders.

The demo video shipped in ``resources/`` is listed out of the box, so both work without a camera.
A source's data is a camera index (int), a video path (str) or a list of image files/folders.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QPushButton, QWidget

from . import camera
from .demo import demo_videos

VIDEO_FILTER = "Videos (*.avi *.mp4 *.mkv *.mov *.webm);;All files (*)"
IMAGE_FILTER = "Images (*.png *.jpg *.jpeg *.bmp *.tif *.tiff *.webp)"


class SourcePicker(QWidget):
    """A combo box of sources plus buttons to find cameras and add files.

    ``images=True`` adds *Images…* and *Folder…* (the Run panel). Signals: ``status(str)`` a note for
    the user (cameras found or not), ``changed()`` the chosen source changed.
    """

    status = Signal(str)
    changed = Signal()

    def __init__(self, images: bool = False, parent=None):
        super().__init__(parent)
        self.combo = QComboBox()
        self.combo.setMinimumContentsLength(16)
        self.combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.combo.currentIndexChanged.connect(lambda _i: self.changed.emit())
        self.find_btn = QPushButton("Find cameras")
        self.find_btn.clicked.connect(self.refresh_cameras)
        self.video_btn = QPushButton("Video file…")
        self.video_btn.clicked.connect(lambda: self.add("video"))
        self.buttons = [self.find_btn, self.video_btn]
        if images:
            self.files_btn = QPushButton("Images…")
            self.files_btn.clicked.connect(lambda: self.add("files"))
            self.folder_btn = QPushButton("Folder…")
            self.folder_btn.clicked.connect(lambda: self.add("folder"))
            self.buttons += [self.files_btn, self.folder_btn]
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.combo, 1)
        for b in self.buttons:
            lay.addWidget(b)
        for demo in reversed(demo_videos()):  # each add chooses its source: the hand-pose demo ends chosen
            self.add("video", str(demo), label=f"Demo video: {demo.name}")

    def current(self):
        """The chosen source's data, or None when the list is empty."""
        return self.combo.currentData()

    def current_text(self) -> str:
        """The label of the chosen source as shown in the combo box."""
        return self.combo.currentText()

    def setEnabled(self, on: bool) -> None:  # noqa: N802 - Qt API
        """Enable or disable the combo box and its buttons together (off while a stream runs)."""
        for w in [self.combo, *self.buttons]:
            w.setEnabled(on)

    def refresh_cameras(self) -> list[int]:
        """List the cameras that deliver a frame first, keeping the files already listed."""
        cams = camera.list_cameras()
        keep = [(self.combo.itemText(i), self.combo.itemData(i)) for i in range(self.combo.count())
                if not isinstance(self.combo.itemData(i), int)]
        self.combo.blockSignals(True)
        self.combo.clear()
        for c in cams:
            self.combo.addItem(f"Camera {c}", c)
        for t, d in keep:
            self.combo.addItem(t, d)
        self.combo.blockSignals(False)
        self.changed.emit()
        self.status.emit(f"Found camera(s) {', '.join(map(str, cams))}." if cams else
                         "No camera found. Connect one and press Find cameras again, or use a video file"
                         + (", images or a folder." if len(self.buttons) > 2 else "."))
        return cams

    def add(self, kind: str, value=None, label: str | None = None) -> bool:
        """Add and choose a source: ``kind`` "video", "files" or "folder"; asks for it when ``value`` is None."""
        if value is None:
            if kind == "video":
                value, _ = QFileDialog.getOpenFileName(self, "Video file", "", VIDEO_FILTER)
            elif kind == "files":
                value, _ = QFileDialog.getOpenFileNames(self, "Image files", "", IMAGE_FILTER)
            else:
                value = QFileDialog.getExistingDirectory(self, "Folder of images")
            if not value:
                return False
        if kind == "video":
            data, text = str(value), label or f"Video: {Path(value).name}"
        elif kind == "files":
            data = [str(v) for v in value]
            text = label or (f"Image: {Path(data[0]).name}" if len(data) == 1 else f"{len(data)} image files")
        else:
            data, text = [str(value)], label or f"Folder: {Path(value).name}"
        for i in range(self.combo.count()):  # the same source twice is one entry
            if self.combo.itemData(i) == data:
                self.combo.setCurrentIndex(i)
                return True
        self.combo.addItem(text, data)
        self.combo.setItemData(self.combo.count() - 1, str(value) if kind != "files" else "\n".join(data[:20]),
                               3)  # Qt.ToolTipRole: the full path
        self.combo.setCurrentIndex(self.combo.count() - 1)
        return True
