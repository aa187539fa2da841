"""What the person is told about the hand: the shape's name large, the orientation under it, how sure the
model is (a word, a colour and a bar), or "no hand" (:class:`HandReadingView`; the Run panel and Find the hand
show it).

*Sure* and *unsure*: a reading whose confidence is below the model's
``metadata["detection"]["reading"]["unsure_below"]`` (chosen on validation when the model is built; else
:data:`UNSURE_BELOW`) is shown as a guess — amber, "unsure: maybe V" — never in the sure reading's green
words; when the background class wins (or the scan found no hand) it says "no hand" in grey.

The reading comes from :mod:`classmap_gui.core.detect.reading`: shapes scored by their orientation classes
together, the background class's probability as "no hand". For a person's own classes (names that are not
hand-pose names) the class name is the "shape" and there is no orientation line.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QVBoxLayout, QWidget

from ..core.detect.reading import DEFAULTS, CropReading, Reading
from ..core.selection.policy import is_sure
from .widgets import ElidedLabel


#: a reading less sure than this is "unsure" when the model carries no threshold of its own
UNSURE_BELOW = DEFAULTS["unsure_below"]
#: colour of each state: sure (green), unsure (amber), no hand (grey)
STATE_COLOURS = {"sure": "#1a7f37", "unsure": "#9a6700", "no hand": "#8a8f94"}


def unsure_below(recogniser, capture: bool = False) -> float:
    """The confidence below which ``recogniser``'s readings are "unsure": its
    ``metadata["detection"]["reading"]["unsure_below"]`` (a float in [0, 1]; ``capture``: the Run panel's capture
    box's own ``capture_unsure_below`` where the model has one), else :data:`UNSURE_BELOW`."""
    saved = ((getattr(recogniser, "metadata", None) or {}).get("detection") or {}).get("reading") or {}
    key = "capture_unsure_below" if capture and saved.get("capture_unsure_below") is not None else "unsure_below"
    try:
        t = float(saved.get(key, UNSURE_BELOW))
    except (TypeError, ValueError):
        return UNSURE_BELOW
    return min(1.0, max(0.0, t)) if np.isfinite(t) else UNSURE_BELOW


def reading_state(reading: Reading | None, threshold: float) -> str:
    """"sure", "unsure" or "no hand" for ``reading`` at the ``threshold`` confidence."""
    if reading is None or not reading.found:
        return "no hand"
    return "sure" if is_sure(reading.confidence, threshold) else "unsure"


class HandReadingView(QWidget):
    """Three lines: ``shape`` (large), ``orientation`` and ``confidence``; ``text()`` is what they say."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.shape = ElidedLabel("–")
        self.shape.setStyleSheet("QLabel { font-size: 26pt; font-weight: bold; color: #1a7f37; }")
        self.orientation = ElidedLabel(" ", lines=2)  # "palm forward · turned 30° left · fingers …": wrap, then cut at the end
        self.orientation.setStyleSheet("QLabel { font-size: 11pt; }")
        self.confidence = QLabel(" ")
        self.bar = QProgressBar()  # how sure, as a length a person reads at a glance
        self.bar.setRange(0, 100)
        self.bar.setTextVisible(False)
        self.bar.setFixedHeight(10)
        self.bar.setValue(0)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        for w in (self.shape, self.orientation):
            lay.addWidget(w)
        row = QHBoxLayout()
        row.addWidget(self.confidence, 1)
        row.addWidget(self.bar, 1)
        lay.addLayout(row)
        self._groups_for: tuple | None = None
        self.reading: Reading | None = None
        self.threshold = UNSURE_BELOW
        self.state = "no hand"
        self._colour("no hand")

    def _colour(self, state: str) -> None:
        c = STATE_COLOURS[state]
        self.shape.setStyleSheet(f"QLabel {{ font-size: 26pt; font-weight: bold; color: {c}; }}")
        self.confidence.setStyleSheet(f"QLabel {{ color: {c}; font-weight: bold; }}")
        self.bar.setStyleSheet(f"QProgressBar {{ border: 1px solid #c0c4c8; background: #eef0f2; }} "
                               f"QProgressBar::chunk {{ background: {c}; }}")
        self.state = state

    def clear(self) -> None:
        """Nothing read yet (a new model, or none): a dash, no confidence."""
        self.reading = None
        self._colour("no hand")
        self.shape.setText("–")
        self.orientation.setText(" ")
        self.confidence.setText(" ")
        self.bar.setValue(0)

    def colour(self) -> str:
        """The colour the reading is drawn in now (``STATE_COLOURS[self.state]``)."""
        return STATE_COLOURS[self.state]

    def text(self) -> str:
        """The three lines as one string (what a person reads)."""
        return " | ".join(w.text().strip() for w in (self.shape, self.orientation, self.confidence) if w.text().strip())

    def show_reading(self, reading: Reading | None, closest: str = "", threshold: float | None = None) -> None:
        """Show ``reading`` (None or not found: "no hand", with the ``closest`` class name when known); a found
        reading below ``threshold`` (None: the last one set, :data:`UNSURE_BELOW` at first) is "unsure"."""
        self.reading = reading
        if threshold is not None:
            self.threshold = float(threshold)
        state = reading_state(reading, self.threshold)
        self._colour(state)
        if state == "no hand":
            self.shape.setText("no hand")
            self.orientation.setText(f"closest: {closest}" if closest else " ")
            bg = reading.confidence if reading is not None else 0.0
            self.confidence.setText(f"no hand (background {100 * bg:.0f} %)" if bg > 0 else "no hand")
            self.bar.setValue(0)
            return
        pct = 100 * reading.confidence
        self.bar.setValue(int(round(pct)))
        self.orientation.setText(reading.orientation or " ")
        self.shape.setText(reading.shape)  # the name alone, large; its colour and the line below say how sure
        if state == "sure":
            self.confidence.setText(f"sure · confidence {pct:.0f} %")
        else:
            self.confidence.setText(f"unsure, maybe {reading.shape} · confidence {pct:.0f} %")
        self.confidence.setToolTip(f"sure from {100 * self.threshold:.0f} % (the threshold the model was built with)")

    def show_scores(self, recogniser, classes, scores) -> Reading:
        """Read the candidate ``classes`` / ``scores`` of one crop with the model's reading settings
        (softmax temperature; :class:`~classmap_gui.core.detect.reading.CropReading`, which ``bench
        demo-reading`` measures) and show it; returns the reading."""
        key = (id(recogniser), len(recogniser.class_names))
        if self._groups_for != key:
            self._reader = CropReading(recogniser, history=1)  # each frame alone (the bench: history did not help)
            self._groups_for = key
        reading = self._reader.read(classes, scores)
        names = recogniser.class_names
        closest = names[int(classes[0])] if len(classes) else ""
        self.show_reading(reading, closest, unsure_below(recogniser, capture=True))
        return reading


__all__ = ["HandReadingView", "STATE_COLOURS", "UNSURE_BELOW", "reading_state", "unsure_below"]
