"""Dialogs that ask what a project needs: New project (image size, grey or colour) and Import folder
(the folder, plus the same two questions), and the file dialogs with sensible starting places."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (QButtonGroup, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QLabel, QLineEdit, QPushButton, QRadioButton, QSpinBox, QVBoxLayout, QWidget)

from ..core.data.editing import MAX_SIDE, MIN_SIDE


class ImageFormatForm(QWidget):
    """Image side (square, pixels) and grey or colour."""

    def __init__(self, side: int = 64, colour: bool = False, parent=None):
        super().__init__(parent)
        self.side = QSpinBox()
        self.side.setRange(MIN_SIDE, MAX_SIDE)
        self.side.setValue(side)
        self.side.setSuffix(" px")
        self.side.setToolTip("Every image is brought to this square size. 32 to 96 pixels suits hand shapes; "
                             "larger is slower and rarely more accurate.")
        self.grey = QRadioButton("Grey")
        self.colour = QRadioButton("Colour")
        self.grey.setToolTip("Shapes (hands, glyphs): grey is enough and three times lighter")
        self.colour.setToolTip("Keep colour when colour tells the classes apart (fruit, flags, …)")
        group = QButtonGroup(self)
        group.addButton(self.grey)
        group.addButton(self.colour)
        (self.colour if colour else self.grey).setChecked(True)
        row = QHBoxLayout()
        row.addWidget(self.grey)
        row.addWidget(self.colour)
        row.addStretch(1)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Image size", self.side)
        form.addRow("Images are", row)

    def size(self) -> tuple[int, int]:  # h, w
        """The chosen image size ``(h, w)`` (square)."""
        return self.side.value(), self.side.value()

    def is_colour(self) -> bool:
        """True when colour images were chosen, False for grey."""
        return self.colour.isChecked()


class NewProjectDialog(QDialog):
    """File > New project: a project with no classes yet, ready for *Add class* and captures."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("New project")
        lay = QVBoxLayout(self)
        intro = QLabel("A new, empty project. Add classes on the Dataset panel and capture their images "
                       "from a camera or a video, or add image files.")
        intro.setWordWrap(True)
        lay.addWidget(intro)
        self.format = ImageFormatForm()
        lay.addWidget(self.format)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.buttons.button(QDialogButtonBox.Ok).setText("Create")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self.setMinimumWidth(460)


class ImportDialog(QDialog):
    """File > Import folder: which folder (one sub-folder per class), at what size, grey or colour."""

    def __init__(self, folder: str = "", parent=None):
        super().__init__(parent)
        self.setWindowTitle("Import a folder of images")
        lay = QVBoxLayout(self)
        intro = QLabel("A folder with one sub-folder of images per class (the sub-folder's name is the class).")
        intro.setWordWrap(True)
        lay.addWidget(intro)
        self.folder = QLineEdit(folder)
        self.folder.setMinimumWidth(360)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.folder, 1)
        row.addWidget(browse)
        form = QFormLayout()
        form.addRow("Folder", row)
        lay.addLayout(form)
        self.format = ImageFormatForm()
        lay.addWidget(self.format)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.buttons.button(QDialogButtonBox.Ok).setText("Import")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Folder with one sub-folder per class",
                                                self.folder.text() or str(Path.home()))
        if path:
            self.folder.setText(path)


def start_folder(current: Path | None = None) -> Path:
    """Where file dialogs start: next to the open project, else the user's Documents or home folder."""
    if current is not None and current.parent.is_dir():
        return current.parent
    docs = Path.home() / "Documents"
    return docs if docs.is_dir() else Path.home()


def ask_save_path(parent, title: str, suggested: Path, name_filter: str = "") -> str:
    """A save dialog at ``suggested`` (folder + name) that accepts a name that does not exist yet."""
    dlg = QFileDialog(parent, title, str(suggested.parent))
    dlg.setAcceptMode(QFileDialog.AcceptSave)
    dlg.setFileMode(QFileDialog.AnyFile)
    dlg.setOption(QFileDialog.DontUseNativeDialog, True)  # the same dialog everywhere, and under test
    dlg.setOption(QFileDialog.DontConfirmOverwrite, True)  # core refuses to overwrite what is not a project
    if name_filter:
        dlg.setNameFilter(name_filter)
    dlg.selectFile(suggested.name)
    dlg.setMinimumWidth(640)
    if dlg.exec() != QDialog.Accepted or not dlg.selectedFiles():
        return ""
    return dlg.selectedFiles()[0]
