"""A push button that reports holding reliably (press and hold to record, or click to latch)."""
from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QPushButton, QWidget


class HoldButton(QPushButton):
    """A button that reports holding reliably: ``held()`` on press, ``let_go()`` on release.

    QPushButton emits ``released`` only when the pointer is released over it; while recording, the
    preview and status change and the layout may move the button from under a still pointer, so the
    release went unnoticed and recording never stopped. Here the button grabs the mouse on press and
    every release (anywhere), a lost focus or a hidden window ends the hold. Space works as well.
    """

    held = Signal()
    let_go = Signal()

    def __init__(self, text: str, parent=None):
        super().__init__(text, parent)
        self.holding = False
        self.setFocusPolicy(Qt.StrongFocus)

    def _start(self) -> None:
        if not self.holding:
            self.holding = True
            self.setDown(True)
            self.held.emit()

    def _end(self) -> None:
        if QWidget.mouseGrabber() is self:  # never keep the pointer captive (a disabled button gets no release)
            self.releaseMouse()
        if self.holding:
            self.holding = False
            self.setDown(False)
            self.let_go.emit()

    def changeEvent(self, e) -> None:  # noqa: N802 - disabled mid-hold (the stream ended): the hold ends
        """The button was disabled (e.g. the stream ended) while held: end the hold."""
        super().changeEvent(e)
        if e.type() == QEvent.EnabledChange and not self.isEnabled():
            self._end()

    def mousePressEvent(self, e) -> None:  # noqa: N802 - Qt API
        """Left press: grab the mouse and start the hold, so the release is seen wherever it happens."""
        if e.button() == Qt.LeftButton and self.isEnabled():
            self.grabMouse()
            self._start()
            e.accept()
        else:
            super().mousePressEvent(e)

    def mouseReleaseEvent(self, e) -> None:  # noqa: N802
        """Left release (anywhere, the mouse is grabbed): end the hold."""
        if e.button() == Qt.LeftButton:
            self.releaseMouse()
            self._end()
            e.accept()
        else:
            super().mouseReleaseEvent(e)

    def mouseMoveEvent(self, e) -> None:  # noqa: N802 - moving off the button does not end a hold
        """Swallow pointer moves: leaving the button does not end a hold."""
        e.accept()

    def keyPressEvent(self, e) -> None:  # noqa: N802
        """Space pressed (not auto-repeat): start the hold; other keys as usual."""
        if e.key() == Qt.Key_Space and not e.isAutoRepeat():
            self._start()
        elif e.key() != Qt.Key_Space:
            super().keyPressEvent(e)

    def keyReleaseEvent(self, e) -> None:  # noqa: N802
        """Space released: end the hold; other keys as usual."""
        if e.key() == Qt.Key_Space and not e.isAutoRepeat():
            self._end()
        elif e.key() != Qt.Key_Space:
            super().keyReleaseEvent(e)

    def focusOutEvent(self, e) -> None:  # noqa: N802
        """Focus lost (another widget or window): end the hold."""
        self._end()
        super().focusOutEvent(e)

    def hideEvent(self, e) -> None:  # noqa: N802
        """Button hidden (panel or window hidden): end the hold."""
        self._end()
        super().hideEvent(e)
