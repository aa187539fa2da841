"""A form for an estimator's hyper-parameters, built from its ``get_params()``."""
from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QDoubleSpinBox, QFormLayout, QLineEdit, QSpinBox, QWidget

HIDDEN = {"n_jobs", "random_state", "verbose", "kmeans_batch_size", "max_memory_mb", "copy"}


class ParamForm(QWidget):
    """Shows int/float/bool/str parameters as spin boxes, check boxes and text fields.

    ``values()`` returns only the parameters that differ from the defaults, so a
    TrainConfig stays short and keeps core's defaults when the user changes nothing.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.form = QFormLayout(self)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.defaults: dict = {}
        self.widgets: dict = {}

    def set_params(self, defaults: dict, values: dict | None = None, only: tuple | None = None) -> None:
        """Show ``defaults`` (name -> default value), set to ``values``; ``only`` limits the names shown."""
        while self.form.rowCount():
            self.form.removeRow(0)
        self.defaults, self.widgets = {}, {}
        values = values or {}
        for k, v in defaults.items():
            if k in HIDDEN or k.startswith("_") or (only is not None and k not in only):
                continue
            cur = values.get(k, v)
            if isinstance(v, bool):
                w = QCheckBox()
                w.setChecked(bool(cur))
            elif isinstance(v, int):
                w = QSpinBox()
                w.setRange(0, 10_000_000)
                w.setValue(int(cur))
            elif isinstance(v, float):
                w = QDoubleSpinBox()
                w.setDecimals(4)
                w.setRange(0.0, 1e6)
                w.setValue(float(cur))
            elif isinstance(v, str):
                w = QLineEdit(str(cur))
            else:
                continue  # None / objects: left to core's default
            self.defaults[k], self.widgets[k] = v, w
            self.form.addRow(k.replace("_", " "), w)

    def values(self) -> dict:
        out = {}
        for k, w in self.widgets.items():
            if isinstance(w, QCheckBox):
                v = w.isChecked()
            elif isinstance(w, (QSpinBox, QDoubleSpinBox)):
                v = w.value()
            else:
                v = w.text()
            if v != self.defaults[k]:
                out[k] = v
        return out
