"""Small reusable widgets: the task progress strip, thumbnail helpers, elided names, message dialogs."""
from __future__ import annotations

import time

import numpy as np
from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import (QAbstractScrollArea, QAbstractSpinBox, QApplication, QComboBox, QDialog,
                               QDialogButtonBox, QHBoxLayout, QLabel, QListView, QListWidget, QListWidgetItem,
                               QMessageBox, QPlainTextEdit, QProgressBar, QPushButton, QSizePolicy, QSlider, QStyle,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from .imageutil import to_pixmap, to_qimage


def strip_image(images: np.ndarray, n: int = 6) -> np.ndarray:
    """Up to ``n`` images side by side, ``(h, n*w)`` or ``(h, n*w, 3)`` uint8, blank-padded."""
    k = min(n, len(images))
    h, w = images.shape[1:3]
    out = np.full((h, n * w) + images.shape[3:], 255, np.uint8)
    if k:
        out[:, : k * w] = np.concatenate(list(images[:k]), axis=1)
    return out


def strip_icon(images: np.ndarray, n: int = 6, height: int = 28) -> QIcon:
    """An icon of up to ``n`` images ``(k, h, w[, 3])`` uint8 side by side, ``height`` pixels high (class lists)."""
    strip = strip_image(images, n)
    pm = QPixmap.fromImage(to_qimage(strip)).scaledToHeight(height, Qt.FastTransformation
                                                            if strip.shape[0] * 2 <= height else Qt.SmoothTransformation)
    return QIcon(pm)


class TaskProgress(QWidget):
    """Stage name, progress bar, remaining time and a Cancel button, for the status bar."""

    cancelRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.stage = QLabel()
        # a stage name is read whole ("hand images: generating hand-pose images"): the status bar's message
        # gives way, never the stage
        self.stage.setSizePolicy(QSizePolicy.Minimum, QSizePolicy.Preferred)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setFixedWidth(220)
        self.bar.setTextVisible(True)
        self.eta = QLabel()
        self.cancel = QPushButton("Cancel")
        self.cancel.clicked.connect(self.cancelRequested)
        for w in (self.stage, self.bar, self.eta, self.cancel):
            lay.addWidget(w)
        self.setVisible(False)
        # the time left counts down between reports (a long stage reports rarely) and only ever falls
        from PySide6.QtCore import QTimer

        self._left: tuple[float, float] | None = None   # (seconds left, when estimated)
        self._tick = QTimer(self)
        self._tick.setInterval(1000)
        self._tick.timeout.connect(self._show_left)

    def start(self, title: str) -> None:
        """A task started: show the bar at 0 with ``title`` and enable Cancel."""
        self.stage.setText(title)
        self.bar.setValue(0)
        self.bar.setFormat("%p%")
        self.eta.setText("")
        self._left = None
        self.cancel.setEnabled(True)
        self.setVisible(True)

    def update_progress(self, fraction: float, stage: str, eta: float) -> None:
        """The runner's progress signal: show the stage, ``fraction`` (0-1) and time left (``eta`` < 0: unknown).
        The bar never goes back within a task and the time left only falls (one overall figure)."""
        self.stage.setText(stage)
        self.bar.setValue(max(self.bar.value(), int(round(fraction * 1000))))
        now = time.monotonic()
        if eta >= 0:
            shown = self._remaining(now)
            self._left = (eta if shown is None else min(eta, shown), now)
            self._tick.start()
        self._show_left()

    def _remaining(self, now: float) -> float | None:
        return None if self._left is None else max(0.0, self._left[0] - (now - self._left[1]))

    def _show_left(self) -> None:
        left = self._remaining(time.monotonic())
        if left is None:
            self.eta.setText("estimating…")
        elif left >= 90:
            self.eta.setText(f"about {round(left / 60):.0f} min left")
        else:
            self.eta.setText(f"{left:.0f} s left" if left >= 1 else "almost done")

    def stop(self) -> None:
        """The task ended: hide the progress row."""
        self._tick.stop()
        self._left = None
        self.setVisible(False)


class ImageGridDialog(QDialog):
    """A non-modal window showing a set of images with captions (e.g. misclassified test images)."""

    def __init__(self, title: str, images: np.ndarray, captions: list[str], parent=None, size: int = 72):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(640, 420)
        lay = QVBoxLayout(self)
        self.info = QLabel(f"{len(images)} image(s)")
        lay.addWidget(self.info)
        self.grid = QListWidget()
        self.grid.setViewMode(QListView.IconMode)
        self.grid.setIconSize(QSize(size, size))
        self.grid.setResizeMode(QListView.Adjust)
        self.grid.setSpacing(4)
        for img, cap in zip(images, captions):
            self.grid.addItem(QListWidgetItem(QIcon(to_pixmap(img, size)), cap))
        lay.addWidget(self.grid)
        bb = QDialogButtonBox(QDialogButtonBox.Close)
        bb.rejected.connect(self.close)
        lay.addWidget(bb)


def elided_item(text: str, tooltip: str | None = None) -> QTableWidgetItem:
    """A table cell whose full text is its tooltip (views elide long names at the end: a class name
    reads shape first, so the end is the part to drop)."""
    item = QTableWidgetItem(text)
    item.setToolTip(tooltip or text)
    return item


def elide_end(fm, text: str, width: int, lines: int = 1) -> str:
    """``text`` cut at the end with "…" so that, word-wrapped at ``width`` pixels in the font of ``fm``
    (QFontMetrics), it takes at most ``lines`` lines."""
    if lines <= 1:
        return fm.elidedText(text, Qt.ElideRight, width)
    from PySide6.QtCore import QRect

    def fits(t: str) -> bool:
        return fm.boundingRect(QRect(0, 0, width, 10 ** 6), int(Qt.TextWordWrap), t).height() <= lines * fm.lineSpacing()
    if fits(text):
        return text
    lo, hi = 0, len(text)  # the longest prefix that fits with its ellipsis
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(text[:mid].rstrip() + "…") else (lo, mid - 1)
    return text[:lo].rstrip() + "…"


class WrappedLabel(QLabel):
    """A word-wrapped label that is always as tall as its lines at its width, its text from the top.

    A plain wrapped QLabel in a box layout can be given less height than its lines need (layouts in a
    splitter or a scroll area do not ask its height for its width): its text, centred, then spills above and
    below its box and is cut by the widgets around it (Explore's "No held-out images…" under the plot's legend)."""

    def __init__(self, text: str = "", parent=None):
        super().__init__(text, parent)
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)

    def _fit_height(self) -> None:
        need = self.heightForWidth(max(1, self.width())) if self.text() else 0
        if need > 0 and need != self.minimumHeight():
            self.setMinimumHeight(need)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt API
        """Show ``text`` and ask for the height its lines need."""
        super().setText(text)
        self._fit_height()

    def resizeEvent(self, e) -> None:  # noqa: N802
        """A new width: new lines, a new height."""
        super().resizeEvent(e)
        self._fit_height()


class ElidedLabel(QLabel):
    """A label of at most ``lines`` lines that cuts its text at the end to fit (full text as tooltip).

    Its height is fixed to those lines and it never asks for more width than it has, so a long class
    name neither widens its column nor moves the widgets below it.
    """

    def __init__(self, text: str = "", parent=None, lines: int = 1):
        super().__init__(parent)
        self._full = ""
        self.lines = lines
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self.setMinimumWidth(40)
        self.setWordWrap(lines > 1)
        self.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt API
        """Keep the full ``text`` (also as tooltip) and show it cut to the width."""
        self._full = str(text)
        self.setToolTip(self._full)
        self._fit()

    def text(self) -> str:
        """The full text, not the cut one shown."""
        return self._full

    def changeEvent(self, e) -> None:  # noqa: N802 - a style sheet's larger font: a new height
        """Font changes (a style sheet) refit the height and text."""
        super().changeEvent(e)
        if e.type() in (QEvent.FontChange, QEvent.StyleChange):
            self._fit()

    def _fit(self) -> None:
        fm = self.fontMetrics()
        m = self.contentsMargins()
        self.setFixedHeight(self.lines * fm.lineSpacing() + m.top() + m.bottom() + 2)
        super().setText(elide_end(fm, self._full, max(10, self.width() - 4), self.lines))

    def resizeEvent(self, e) -> None:  # noqa: N802
        """Re-cut the text to the new width."""
        super().resizeEvent(e)
        self._fit()


class WheelGuard(QObject):
    """An application-wide event filter: the mouse wheel changes a spin box, drop-down or slider only while
    it has the keyboard focus (a click into it first). Otherwise the wheel scrolls what is around it, so a
    pointer passing over a field while the page scrolls changes nothing."""

    TYPES = (QAbstractSpinBox, QComboBox, QSlider)

    def eventFilter(self, obj, e) -> bool:  # noqa: N802 - Qt API
        """Polish: give the value widgets focus by click or tab only (not by wheel); Wheel: let it pass to
        the parent unless the widget has the focus."""
        t = e.type()
        if t == QEvent.Polish and isinstance(obj, self.TYPES) and obj.focusPolicy() == Qt.WheelFocus:
            obj.setFocusPolicy(Qt.StrongFocus)
        elif t == QEvent.Wheel and isinstance(obj, self.TYPES) and not obj.hasFocus():
            area = obj.parentWidget()
            while area is not None and not isinstance(area, QAbstractScrollArea):
                area = area.parentWidget()
            if area is not None:  # the page around it scrolls, as if the field were not there
                QApplication.sendEvent(area.viewport(), e)
            else:
                e.ignore()
            return True
        return False


class MessageDialog(QDialog):
    """A message a person can read whole: a bold headline, the sentence word-wrapped (paths break at
    slashes rather than run off the edge), technical details behind a button; resizable (size grip).

    Reads like :class:`QMessageBox` for callers and tests: :meth:`text`, :meth:`informativeText`,
    :meth:`detailedText`. QMessageBox itself caps its width and cannot be enlarged, so a long message
    was cut at the dialog's edge."""

    def __init__(self, title: str, message: str, details: str = "", icon=QMessageBox.Warning, parent=None):
        super().__init__(parent)
        self.setWindowTitle("ClassMap Studio")
        self.setSizeGripEnabled(True)
        self._details = details
        lay = QVBoxLayout(self)
        head = QHBoxLayout()
        pix = QLabel()
        sp = QStyle.StandardPixmap
        std = {QMessageBox.Critical: sp.SP_MessageBoxCritical,
               QMessageBox.Information: sp.SP_MessageBoxInformation}.get(icon, sp.SP_MessageBoxWarning)
        pix.setPixmap(self.style().standardIcon(std).pixmap(32, 32))
        head.addWidget(pix, 0, Qt.AlignTop)
        self.title_label = QLabel(title)
        self.title_label.setWordWrap(True)
        self.title_label.setStyleSheet("font-weight: bold;")
        head.addWidget(self.title_label, 1)
        lay.addLayout(head)
        # a zero-width space after each slash lets a long path wrap there instead of widening the box
        self.message_label = QLabel(message.replace("/", "/\u200b"))
        self._message = message
        self.message_label.setWordWrap(True)
        self.message_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.message_label.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.MinimumExpanding)
        lay.addWidget(self.message_label, 1)
        self.details_view = QPlainTextEdit(details)
        self.details_view.setReadOnly(True)
        self.details_view.setVisible(False)
        lay.addWidget(self.details_view, 2)
        bb = QDialogButtonBox(QDialogButtonBox.Ok)
        if details:
            more = bb.addButton("Show details…", QDialogButtonBox.ActionRole)
            more.clicked.connect(lambda: self.details_view.setVisible(not self.details_view.isVisible()))
        bb.accepted.connect(self.accept)
        lay.addWidget(bb)
        self.setMinimumWidth(520)
        self.resize(560, self.sizeHint().height())

    def text(self) -> str:
        """The headline."""
        return self.title_label.text()

    def informativeText(self) -> str:  # noqa: N802 - QMessageBox's name
        """The message, as given."""
        return self._message

    def detailedText(self) -> str:  # noqa: N802 - QMessageBox's name
        """The technical details ("" when none)."""
        return self._details


def show_message(parent, title: str, message: str, details: str = "", *, icon=QMessageBox.Warning,
                 modal: bool = False) -> MessageDialog:
    """A :class:`MessageDialog`: a plain sentence, the technical details behind a button.

    Non-modal by default, so the app stays usable behind it.
    """
    box = MessageDialog(title, message, details, icon, parent)
    box.setModal(modal)
    if modal:
        box.exec()
    else:
        box.show()
    return box


class ReportDialog(QDialog):
    """A non-modal window with a summary line and a read-only, copyable list (e.g. skipped files)."""

    def __init__(self, title: str, summary: str, lines: list[str], parent=None):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(720, 360)
        lay = QVBoxLayout(self)
        self.summary = QLabel(summary)
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)
        self.text = QPlainTextEdit("\n".join(lines))
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.NoWrap)
        lay.addWidget(self.text, 1)
        bb = QDialogButtonBox(QDialogButtonBox.Close)
        bb.rejected.connect(self.close)
        lay.addWidget(bb)
