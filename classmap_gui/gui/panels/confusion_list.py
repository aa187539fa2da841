"""The top confusions as a sortable list with thumbnails: readable at thousands of classes, where a
C x C matrix is not. One row per (true, predicted) pair with mistakes (``core.explore.views.top_confusions``);
thumbnails are made only for rows drawn, so a list of thousands of rows opens at once. Clicking a row
emits ``pairChosen(true, predicted)`` (the Train panel opens those images)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSize, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QVBoxLayout, QWidget

from ...core.explore import views
from ..imageutil import to_pixmap

THUMB = 36
COLUMNS = ("true class", "predicted as", "count", "share %")
SORT_ROLE = Qt.UserRole + 1


class ConfusionModel(QAbstractTableModel):
    """Rows of a :class:`~classmap_gui.core.explore.views.Confusions`; the class columns carry a thumbnail:
    an image of the mistake (true column) and an image of the predicted class (predicted column)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.conf = views.Confusions(*(np.zeros(0, np.int64),) * 3, np.zeros(0, np.float32))
        self.names: list[str] = []
        self.images = None
        self.example = self.look = np.zeros(0, np.int64)
        self._pix: dict = {}

    def set_confusions(self, conf, names: list[str], images: np.ndarray, true: np.ndarray, pred: np.ndarray) -> None:
        """Show ``conf`` for test ``images`` whose labels are ``true`` and predictions ``pred``."""
        self.beginResetModel()
        self.conf, self.names, self.images, self._pix = conf, list(names), images, {}
        true, pred = np.asarray(true, np.int64), np.asarray(pred, np.int64)
        C = max(len(names), 1)
        # first test image of each (true, predicted) pair, and of each class: one pass each, no C x C table
        codes = true * C + pred
        uniq, first = np.unique(codes, return_index=True)
        pos = np.searchsorted(uniq, conf.true * C + conf.pred)
        self.example = first[np.clip(pos, 0, max(len(uniq) - 1, 0))] if len(uniq) else np.zeros(0, np.int64)
        cls, first_of = np.unique(true, return_index=True)
        look = np.full(C, -1, np.int64)
        look[cls] = first_of
        self.look = look[conf.pred] if len(conf) else np.zeros(0, np.int64)
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(self.conf)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):  # noqa: N802 - Qt API
        if role == Qt.DisplayRole and orientation == Qt.Horizontal:
            return COLUMNS[section]
        return None

    def _thumb(self, k: int):
        if k < 0 or self.images is None:
            return None
        if k not in self._pix:
            self._pix[k] = to_pixmap(self.images[k], THUMB)
        return self._pix[k]

    def data(self, index, role=Qt.DisplayRole):
        """Cell text, thumbnail, tooltip and sort key."""
        if not index.isValid():
            return None
        r, c = index.row(), index.column()
        t, p = int(self.conf.true[r]), int(self.conf.pred[r])
        if role == Qt.DisplayRole:
            return (self.names[t], self.names[p], int(self.conf.count[r]), round(100 * float(self.conf.share[r]), 1))[c]
        if role == SORT_ROLE:
            return (self.names[t].lower(), self.names[p].lower(), int(self.conf.count[r]), float(self.conf.share[r]))[c]
        if role == Qt.DecorationRole and c in (0, 1):
            return self._thumb(int(self.example[r] if c == 0 else self.look[r]))
        if role == Qt.ToolTipRole:
            return (f"{self.conf.count[r]} test image(s) of {self.names[t]} recognised as {self.names[p]} "
                    f"({100 * float(self.conf.share[r]):.1f}% of its test images). Click to see them.")
        if role == Qt.TextAlignmentRole and c >= 2:
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None

    def pair(self, row: int) -> tuple[int, int]:
        """``(true, predicted)`` classes of source row ``row``."""
        return int(self.conf.true[row]), int(self.conf.pred[row])


class ConfusionList(QWidget):
    """A sortable table of the top confusions. Signal ``pairChosen(true, predicted)``."""

    pairChosen = Signal(int, int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model = ConfusionModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.view = QTableView()
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.view.setIconSize(QSize(THUMB, THUMB))
        self.view.verticalHeader().setVisible(False)
        # rows as tall as a thumbnail or three lines of a wrapped name (cut at the end beyond; tooltip: all)
        self.view.verticalHeader().setDefaultSectionSize(max(THUMB + 4, 3 * self.view.fontMetrics().lineSpacing() + 6))
        self.view.setTextElideMode(Qt.ElideRight)
        self.view.setWordWrap(True)
        hh = self.view.horizontalHeader()
        for c in (0, 1):
            hh.setSectionResizeMode(c, QHeaderView.Stretch)
        for c in (2, 3):
            hh.setSectionResizeMode(c, QHeaderView.ResizeToContents)
        self.view.clicked.connect(self._clicked)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.view)

    def set_confusions(self, conf, names, images, true, pred) -> None:
        """Fill the list (most frequent first) from test ``images`` with labels ``true`` and predictions ``pred``."""
        self.model.set_confusions(conf, names, images, true, pred)
        self.view.sortByColumn(2, Qt.DescendingOrder)

    def row_count(self) -> int:
        """Confusion pairs listed."""
        return self.proxy.rowCount()

    def pair_at(self, view_row: int) -> tuple[int, int]:
        """``(true, predicted)`` of the row drawn at ``view_row`` (after sorting)."""
        return self.model.pair(self.proxy.mapToSource(self.proxy.index(view_row, 0)).row())

    def _clicked(self, index) -> None:
        self.pairChosen.emit(*self.pair_at(index.row()))
