"""What the person is told about the hand: the shape's name large, the orientation under it, a confidence, or
"no hand" (:class:`HandReadingView`; the Run panel and Find the hand show it).

The reading comes from :mod:`classmap_gui.core.detect.reading`: shapes scored by their orientation classes
together, the background class's probability as "no hand". For a person's own classes (names that are not
hand-pose names) the class name is the "shape" and there is no orientation line.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from ..core.detect.reading import DEFAULTS, Reading, read_probabilities, shape_groups, softmax_scores
from .widgets import ElidedLabel


class HandReadingView(QWidget):
    """Three lines: ``shape`` (large), ``orientation`` and ``confidence``; ``text()`` is what they say."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.shape = ElidedLabel("–")
        self.shape.setStyleSheet("QLabel { font-size: 26pt; font-weight: bold; color: #1a7f37; }")
        self.orientation = ElidedLabel(" ", lines=2)  # "palm forward · turned 30° left · fingers …": wrap, then cut at the end
        self.orientation.setStyleSheet("QLabel { font-size: 11pt; }")
        self.confidence = QLabel(" ")
        self.confidence.setStyleSheet("QLabel { color: #5a5f64; }")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        for w in (self.shape, self.orientation, self.confidence):
            lay.addWidget(w)
        self._groups_for: tuple | None = None
        self.reading: Reading | None = None

    def text(self) -> str:
        """The three lines as one string (what a person reads)."""
        return " | ".join(w.text().strip() for w in (self.shape, self.orientation, self.confidence) if w.text().strip())

    def show_reading(self, reading: Reading | None, closest: str = "") -> None:
        """Show ``reading`` (None or not found: "no hand", with the ``closest`` class name when known)."""
        self.reading = reading
        if reading is None or not reading.found:
            self.shape.setText("no hand")
            self.shape.setStyleSheet("QLabel { font-size: 26pt; font-weight: bold; color: #8a8f94; }")
            self.orientation.setText(f"closest: {closest}" if closest else " ")
            self.confidence.setText(f"background {100 * reading.confidence:.0f} %" if reading is not None
                                    and reading.confidence > 0 else " ")
            return
        self.shape.setStyleSheet("QLabel { font-size: 26pt; font-weight: bold; color: #1a7f37; }")
        self.shape.setText(reading.shape)
        self.orientation.setText(reading.orientation or " ")
        self.confidence.setText(f"confidence {100 * reading.confidence:.0f} %")

    def show_scores(self, recogniser, classes, scores) -> Reading:
        """Read the candidate ``classes`` / ``scores`` of one crop with the model's reading settings
        (softmax temperature) and show it; returns the reading."""
        names = list(recogniser.class_names)
        key = (id(recogniser), len(names))
        if self._groups_for != key:
            self._groups = shape_groups(names)
            self._groups_for = key
        saved = ((getattr(recogniser, "metadata", None) or {}).get("detection") or {}).get("reading") or {}
        t = float(saved.get("temperature", DEFAULTS["temperature"]))
        prob = softmax_scores(np.asarray(classes, np.int64), np.asarray(scores, np.float64), len(names), t)
        reading = read_probabilities(prob, *self._groups)
        closest = names[int(classes[0])] if len(classes) else ""
        self.show_reading(reading, closest)
        return reading


__all__ = ["HandReadingView"]
