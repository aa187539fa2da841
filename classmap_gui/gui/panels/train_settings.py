"""The Train panel's settings column: feature map, classifier bank, ClassMap, evaluation, where to run.

Forms are built from parameter descriptions (:mod:`.param_specs`); every choice is a drop-down with
a tooltip saying what it is. Settings proposed for the data (``core.train.defaults.suggest_config``) are
shown with their reasons; ``edited`` fires when a person changes anything by hand.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QLabel, QLineEdit, QPushButton,
                               QSpinBox, QVBoxLayout, QWidget)

from ...core.registry import classmap_applies
from ...core.train.config import TrainConfig
from . import param_specs
from .params import ParamForm

def _combo(items) -> QComboBox:
    c = QComboBox()
    for i, (name, tip) in enumerate(items):
        c.addItem(name, name)
        c.setItemData(i, tip, Qt.ToolTipRole)
    c.currentIndexChanged.connect(lambda i: c.setToolTip(c.itemData(i, Qt.ToolTipRole) or ""))
    return c


class TrainSettings(QWidget):
    """Signals: ``edited()`` after a change by hand; ``suggestRequested()`` the "Suggest" button."""

    edited = Signal()
    suggestRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._applying = False
        self.features = _combo(param_specs.FEATURES)
        self.features_form = ParamForm()
        self.features.currentIndexChanged.connect(lambda _i: self._features_changed())
        fbox = QGroupBox("Feature map")
        fl = QVBoxLayout(fbox)
        fl.addWidget(self.features)
        from .speed_column import SpeedColumn
        self.speed = SpeedColumn([n for n, _ in param_specs.FEATURES])
        self.features_form.edited.connect(self._speed_choice)
        fl.addWidget(self.speed)  # beside the choice it is about, above the parameters (seen without scrolling)
        fl.addWidget(self.features_form)

        self.bank = _combo(param_specs.BANKS)
        self.bank_form = ParamForm()
        self.bank.currentIndexChanged.connect(lambda _i: self._bank_changed())
        bbox = QGroupBox("Classifier bank")
        bl = QVBoxLayout(bbox)
        bl.addWidget(self.bank)
        bl.addWidget(self.bank_form)

        self.cm_box = QGroupBox("ClassMap filter-and-refine")
        self.cm_box.setCheckable(True)
        self.cm_box.setToolTip("Rank the classes cheaply in an embedding, then evaluate only the top p. "
                               "Pays off from about 50 classes.")
        # the parameters, defaults and ranges are ClassMap's own (the registry's): ticked and untouched the box
        # sends {} and training uses the same defaults as `classmap train --classmap`
        self.cm_form = ParamForm()
        QVBoxLayout(self.cm_box).addWidget(self.cm_form)

        ebox = QGroupBox("Evaluation")
        ef = QFormLayout(ebox)
        self.test_fraction = QDoubleSpinBox()
        self.test_fraction.setRange(0.05, 0.9)
        self.test_fraction.setSingleStep(0.05)
        self.test_fraction.setToolTip("Share of each class held out to measure accuracy (never trained on)")
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setToolTip("Random seed of the split and every random part: the same seed gives the same model")
        ef.addRow("test fraction", self.test_fraction)
        ef.addRow("seed", self.seed)

        rbox = QGroupBox("Run training on")
        rf = QFormLayout(rbox)
        self.run_on = QComboBox()
        self.run_on.addItems(["this machine", "a Dask cluster"])
        self.scheduler = QLineEdit()
        self.scheduler.setPlaceholderText("tcp://host:8786")
        self.scheduler.setToolTip("Address of a running Dask scheduler (pip install 'classmap-studio[cluster]')")
        self.scheduler.setEnabled(False)
        self.run_on.currentIndexChanged.connect(lambda i: self.scheduler.setEnabled(i == 1))
        rf.addRow("where", self.run_on)
        rf.addRow("scheduler", self.scheduler)

        self.advice = QLabel("")
        self.advice.setWordWrap(True)
        self.advice.setStyleSheet("QLabel { color: #345; background: #eef3f8; padding: 4px; }")
        self.suggest_btn = QPushButton("Suggest settings for this data")
        self.suggest_btn.setToolTip("Choose the feature map, bank and ClassMap from the number of classes and images")
        self.suggest_btn.clicked.connect(self.suggestRequested)

        lay = QVBoxLayout(self)
        lay.addWidget(self.advice)
        lay.addWidget(self.suggest_btn)
        for w in (fbox, bbox, self.cm_box, ebox, rbox):
            lay.addWidget(w)
        lay.addStretch(1)
        for sig in (self.features_form.edited, self.bank_form.edited, self.cm_box.toggled, self.cm_form.edited,
                    self.test_fraction.valueChanged, self.seed.valueChanged):
            sig.connect(self._changed)
        self.apply(TrainConfig().to_dict())  # the same defaults as `classmap train` until the data suggests others

    def _changed(self, *_args) -> None:
        if not self._applying:
            self.edited.emit()

    def _features_changed(self) -> None:
        self.features_form.set_params(param_specs.feature_params(self.features.currentData()))
        self._speed_choice()
        self._changed()

    def _speed_choice(self, *_args) -> None:
        self.speed.set_choice(self.features.currentData(), self.features_form.values())

    def _bank_changed(self) -> None:
        name = self.bank.currentData()
        self.bank_form.set_params(param_specs.bank_params(name))
        self.cm_box.setEnabled(classmap_applies(name))
        self._changed()

    def apply(self, s: dict, advice: list[str] | None = None) -> None:
        """Show the settings ``s`` (TrainConfig fields); ``advice``: why they were chosen."""
        self._applying = True
        try:
            self.features.setCurrentIndex(max(0, self.features.findData(s.get("features", TrainConfig.features))))
            self.features_form.set_params(param_specs.feature_params(self.features.currentData()),
                                          s.get("features_params"))
            self.bank.setCurrentIndex(max(0, self.bank.findData(s.get("bank", TrainConfig.bank))))
            self.bank_form.set_params(param_specs.bank_params(self.bank.currentData()), s.get("bank_params"))
            self.cm_box.setEnabled(classmap_applies(self.bank.currentData()))
            cm = s.get("classmap")
            self.cm_box.setChecked(cm is not None)
            self.cm_form.set_params(param_specs.classmap_params(), cm)
            self.test_fraction.setValue(float(s.get("test_fraction", TrainConfig.test_fraction)))
            self.seed.setValue(int(s.get("seed", TrainConfig.seed)))
        finally:
            self._applying = False
        self._speed_choice()
        self.set_advice(advice)

    def set_advice(self, advice: list[str] | None) -> None:
        """Show the suggestions behind the settings (``advice``), or say they are the user's own when None."""
        self.advice.setText("Suggested for this data:\n• " + "\n• ".join(advice) if advice else
                            "Your settings. Press the button below for settings sized to the data.")

    def values(self) -> dict:
        """The settings shown, as TrainConfig fields."""
        use_cm = self.cm_box.isChecked() and classmap_applies(self.bank.currentData())
        return {"features": self.features.currentData(), "features_params": self.features_form.values(),
                "bank": self.bank.currentData(), "bank_params": self.bank_form.values(),
                "classmap": self.cm_form.values() if use_cm else None,
                "test_fraction": round(self.test_fraction.value(), 4), "seed": self.seed.value()}

    def scheduler_address(self) -> str | None:
        """The Dask scheduler chosen under "Run training on", or None for this machine."""
        return self.scheduler.text().strip() or None if self.run_on.currentIndex() == 1 else None
