"""One class of the map: search by name, then its training images, its nearest classes in the
embedding and the classes it is most often confused with. Choosing a neighbour selects it."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (QCompleter, QLabel, QLineEdit, QListView, QListWidget, QListWidgetItem,
                               QVBoxLayout, QWidget)

from ..imageutil import to_pixmap

THUMB = 44


def find_class(names: list[str], text: str) -> int | None:
    """The class a search means: the exact name (any case), else the first whose name starts with the
    text, else the first that contains it; None when none does."""
    t = text.strip().lower()
    if not t:
        return None
    low = [n.lower() for n in names]
    for test in (lambda n: n == t, lambda n: n.startswith(t), lambda n: t in n):
        hit = next((i for i, n in enumerate(low) if test(n)), None)
        if hit is not None:
            return hit
    return None


class ClassDetail(QWidget):
    """Search box and the chosen class's images, nearest and most confused classes.
    Signal ``classChosen(int)``: a search hit or a neighbour was chosen."""

    classChosen = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.names: list[str] = []
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search a class by name…")
        self.search.setClearButtonEnabled(True)
        self.completer = QCompleter([], self)
        self.completer.setCaseSensitivity(Qt.CaseInsensitive)
        self.completer.setFilterMode(Qt.MatchContains)
        self.completer.setMaxVisibleItems(12)
        self.search.setCompleter(self.completer)
        self.completer.activated.connect(self._search)
        self.search.returnPressed.connect(lambda: self._search(self.search.text()))
        self.search.textEdited.connect(self._typed)
        self.title = QLabel("Click a star, or search, to choose a class.")
        self.title.setWordWrap(True)
        self.title.setStyleSheet("QLabel { font-weight: bold; }")
        self.images = QListWidget()
        self.images.setViewMode(QListView.IconMode)
        self.images.setIconSize(QSize(THUMB, THUMB))
        self.images.setResizeMode(QListView.Adjust)
        self.images.setMovement(QListView.Static)
        self.images.setSpacing(2)
        self.images.setMaximumHeight(2 * (THUMB + 12) + 6)
        self.nearest = QListWidget()
        self.confused = QListWidget()
        for w in (self.nearest, self.confused):
            w.setTextElideMode(Qt.ElideRight)  # pose names read shape first, then the orientation
            w.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
            w.itemClicked.connect(lambda it: it.data(Qt.UserRole) is not None
                                  and self.classChosen.emit(int(it.data(Qt.UserRole))))
        self.nearest.setToolTip("Classes whose embeddings are nearest in the filter's weighted L1 distance")
        self.confused.setToolTip("Mistakes between the two classes on the held-out images, either way round")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.search)
        lay.addWidget(self.title)
        self.images_label = QLabel("Training images")
        lay.addWidget(self.images_label)
        lay.addWidget(self.images)
        lay.addWidget(QLabel("Nearest classes in the embedding"))
        lay.addWidget(self.nearest, 1)
        lay.addWidget(QLabel("Most confused with (held-out mistakes)"))
        lay.addWidget(self.confused, 1)

    def set_names(self, names: list[str]) -> None:
        """The classes one can search (the map's)."""
        self.names = list(names)
        self.completer.model().setStringList(self.names)
        self.clear()

    def clear(self) -> None:
        """No class chosen."""
        self.title.setText("Click a star, or search, to choose a class.")
        for w in (self.images, self.nearest, self.confused):
            w.clear()

    def _no_match(self, text: str) -> bool:
        """Say so when ``text`` matches no class (or there are none to search yet); True then."""
        if not text.strip() or find_class(self.names, text) is not None:
            return False
        self.title.setText(f"No class matches {text.strip()!r}." if self.names else
                           "Nothing to search yet: press Compute views.")
        self.title.setStyleSheet("QLabel { font-weight: bold; color: #b00020; }")
        return True

    def _typed(self, text: str) -> None:
        """While typing: say at once when nothing matches (the drop-down of matches just stays closed)."""
        if not self._no_match(text) and self.title.styleSheet().endswith("#b00020; }"):
            self.title.setText("Click a star, or search, to choose a class.")
            self.title.setStyleSheet("QLabel { font-weight: bold; }")

    def _search(self, text: str) -> None:
        if self._no_match(text) or not text.strip():
            return
        self.title.setStyleSheet("QLabel { font-weight: bold; }")
        self.classChosen.emit(find_class(self.names, text))

    def show_class(self, c: int, images: np.ndarray, n_images: int, nearest, confused) -> None:
        """Show class ``c``: up to a few of its ``n_images`` training ``images``, ``nearest`` as
        ``(classes, distances)`` and ``confused`` as ``(classes, mistakes)``."""
        self.title.setText(self.names[c])
        self.title.setToolTip(self.names[c])
        self.images_label.setText(f"Training images ({n_images})")
        self.images.clear()
        for k, img in enumerate(images):
            it = QListWidgetItem(QIcon(to_pixmap(img, THUMB)), "")
            it.setToolTip(f"{self.names[c]}, training image {k + 1}")
            self.images.addItem(it)
        for w, (classes, values), fmt in ((self.nearest, nearest, "{:.2f}"), (self.confused, confused, "{:d}×")):
            w.clear()
            for k, v in zip(classes, values):
                it = QListWidgetItem(f"{fmt.format(v.item() if hasattr(v, 'item') else v)}  {self.names[int(k)]}")
                it.setData(Qt.UserRole, int(k))
                it.setToolTip(self.names[int(k)])
                w.addItem(it)
        if not len(confused[0]):
            it = QListWidgetItem("no mistakes with other classes")
            it.setFlags(Qt.NoItemFlags)
            self.confused.addItem(it)
