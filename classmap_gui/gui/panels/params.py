"""A form of hyper-parameters built from parameter descriptions.

A description is any object with ``name, kind, default, help, choices, low, high, auto`` (core's
registry ``Param``, see :mod:`.param_specs`): choices become drop-downs, ``bool`` a check box,
numbers spin boxes, ``auto`` an editable drop-down offering "auto"; ``help`` is every widget's tooltip.
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QLabel, QLineEdit, QSpinBox, QWidget


def _unsettable(p) -> bool:
    """Whether the parameter accepts None (unset), shown as an empty text field."""
    return bool(getattr(p, "nullable", False)) or p.default is None


def _as_text(value) -> str:
    """A value as a text field shows it: None empty, an image size ``(h, w)`` as ``"HxW"``."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return "x".join(str(v) for v in value)
    return str(value)


class ParamForm(QWidget):
    """``values()`` returns only the parameters that differ from the defaults, so a TrainConfig stays
    short and keeps core's defaults when the user changes nothing. ``edited`` fires on a user's change."""

    edited = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.form = QFormLayout(self)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.defaults: dict = {}
        self.widgets: dict = {}
        self.kinds: dict = {}

    def set_params(self, params, values: dict | None = None) -> None:
        """Show the described ``params``, set to ``values`` (name -> value; missing: the default)."""
        while self.form.rowCount():
            self.form.removeRow(0)
        self.defaults, self.widgets, self.kinds = {}, {}, {}
        values = values or {}
        for p in params:
            cur = values.get(p.name, p.default)
            w = self._widget(p, cur)
            tip = p.help or ""
            w.setToolTip(tip)
            label = QLabel(p.name.replace("_", " "))
            label.setToolTip(tip)
            self.defaults[p.name], self.widgets[p.name], self.kinds[p.name] = p.default, w, p
            self.form.addRow(label, w)

    def _widget(self, p, cur) -> QWidget:
        if p.choices:
            w = QComboBox()
            for c in p.choices:
                w.addItem(str(c), c)
            i = w.findData(cur)
            w.setCurrentIndex(max(0, i))
            w.currentIndexChanged.connect(lambda _i: self.edited.emit())
        elif getattr(p, "auto", False):
            w = QComboBox()
            w.setEditable(True)
            w.addItem("auto")
            w.setCurrentText(str(cur))
            w.currentTextChanged.connect(lambda _t: self.edited.emit())
        elif p.kind is bool:
            w = QCheckBox()
            w.setChecked(bool(cur))
            w.toggled.connect(lambda _v: self.edited.emit())
        elif p.kind is int and p.default is not None:
            w = QSpinBox()
            w.setRange(int(p.low if p.low is not None else 0), int(p.high if p.high is not None else 10_000_000))
            w.setValue(int(cur))
            w.valueChanged.connect(lambda _v: self.edited.emit())
        elif p.kind is float and p.default is not None:  # unset by default: a text field (empty: unset)
            w = QDoubleSpinBox()
            w.setDecimals(4)
            w.setRange(float(p.low if p.low is not None else 0.0), float(p.high if p.high is not None else 1e6))
            w.setValue(float(cur))
            w.valueChanged.connect(lambda _v: self.edited.emit())
        else:
            w = QLineEdit(_as_text(cur))
            if _unsettable(p):
                w.setPlaceholderText("unset")  # empty text is None (the text "None" would be taken as a value)
            w.textEdited.connect(lambda _t: self.edited.emit())
        return w

    def value(self, name: str):
        """The current value of the setting ``name`` from its widget (bool, number, choice or "auto")."""
        w, p = self.widgets[name], self.kinds[name]
        if isinstance(w, QCheckBox):
            return w.isChecked()
        if isinstance(w, (QSpinBox, QDoubleSpinBox)):
            return w.value()
        if isinstance(w, QComboBox) and not w.isEditable():
            return w.currentData()
        text = w.currentText() if isinstance(w, QComboBox) else w.text()
        if getattr(p, "auto", False) and text.strip() != "auto":
            try:
                return int(text) if p.kind is int else float(text)
            except ValueError:
                return text  # training says what is wrong with it
        if _unsettable(p) and not text.strip():
            return None
        return text

    def values(self) -> dict:
        """The settings that differ from their defaults, by name (what a training run passes on)."""
        out = {}
        for k in self.widgets:
            v = self.value(k)
            if v != self.defaults[k]:
                out[k] = v
        return out
