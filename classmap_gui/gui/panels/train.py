"""Train panel: choose features, bank and ClassMap; train in the background; read the results."""
from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFormLayout, QGridLayout, QGroupBox, QHBoxLayout,
                               QHeaderView, QLabel, QLineEdit, QListWidget, QPushButton, QScrollArea, QSpinBox, QSplitter,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from ...core import views as inspect
from ...core.progress import sub_progress
from ..widgets import ImageGridDialog
from .params import ParamForm

FEATURES = ("kmeans", "hog", "pixels", "rff", "cnn")
BANKS = ("ova-liblinear", "ova-ridge", "ova-rbf", "all-pairs", "compressive")
# The banks share one estimator class; these are the parameters each trainer actually reads.
BANK_PARAMS = {"ova-liblinear": ("C", "max_iter", "tol"), "ova-ridge": ("alpha",), "ova-rbf": ("C", "gamma"),
               "all-pairs": ("C", "max_iter", "tol", "trainer", "alpha")}


def _default_params(kind: str, name: str) -> dict:
    """The constructor defaults of a feature map or bank, from core's factories."""
    try:
        if kind == "features":
            from ...core.registry import make_features  # noqa: PLC0415
            return make_features(name).get_params()
        from ...core.registry import make_bank  # noqa: PLC0415
        return make_bank(name).get_params()
    except Exception:  # noqa: BLE001 - an unknown name shows no parameters; training reports the error
        return {}


class TrainOutcome:
    """What one training run produced, for the project and the result views."""

    def __init__(self, result, test_set, test_pred, settings, seconds):
        self.recogniser, self.report = result.recogniser, result.report
        self.test_set, self.test_pred, self.settings, self.seconds = test_set, test_pred, settings, seconds


def train_task(imageset, settings: dict, scheduler: str | None = None):
    """The background job: train with core, then predict the held-out images for inspection.

    ``scheduler``: a Dask scheduler address to send encoding and bank training to (None: this machine).
    """
    def work(progress, should_stop):
        from ...core.parallel import parallel_backend  # noqa: PLC0415
        from ...core.training import TrainConfig, train  # noqa: PLC0415
        imageset.check_trainable()
        cfg = TrainConfig.from_dict(settings)
        t0 = time.perf_counter()
        if scheduler:
            progress(0.0, f"connecting to the Dask scheduler {scheduler}")
        with parallel_backend(scheduler=scheduler or None):
            result = train(imageset, cfg, progress=sub_progress(progress, 0.0, 0.95), should_stop=should_stop)
        seconds = time.perf_counter() - t0
        test = inspect.test_part(imageset, cfg)
        if test is None:
            test = imageset
        progress(0.96, "predicting the test images")
        pred = result.recogniser.predict(test.images, top=1).labels if len(test) else np.zeros(0, np.int64)
        return TrainOutcome(result, test, np.asarray(pred, np.int64), settings, seconds)
    return work


class TrainPanel(QWidget):
    def __init__(self, project, runner, parent=None):
        super().__init__(parent)
        self.project, self.runner = project, runner
        self.outcome: TrainOutcome | None = None
        self.misclassified_dialog = None
        self._stage, self._stage_t0 = None, 0.0

        # ---- settings column
        self.features = QComboBox()
        self.features.addItems(FEATURES)
        self.features_form = ParamForm()
        self.features.currentTextChanged.connect(lambda n: self.features_form.set_params(_default_params("features", n)))
        fbox = QGroupBox("Feature map")
        fl = QVBoxLayout(fbox)
        fl.addWidget(self.features)
        fl.addWidget(self.features_form)

        self.bank = QComboBox()
        self.bank.addItems(BANKS)
        self.bank_form = ParamForm()
        self.bank.currentTextChanged.connect(self._bank_changed)
        bbox = QGroupBox("Classifier bank")
        bl = QVBoxLayout(bbox)
        bl.addWidget(self.bank)
        bl.addWidget(self.bank_form)

        self.cm_box = QGroupBox("ClassMap filter-and-refine")
        self.cm_box.setCheckable(True)
        self.cm_embedding = QComboBox()
        self.cm_embedding.addItems(["boosted", "random"])
        self.cm_d, self.cm_p = QSpinBox(), QSpinBox()
        self.cm_d.setRange(1, 1000)
        self.cm_p.setRange(1, 100000)
        self.cm_refine = QComboBox()
        self.cm_refine.addItems(["v2", "v3", "v1"])
        self.cm_refine.setToolTip("v1: all-pairs vote (all-pairs bank) · v2: best one-vs-all among the top p · "
                                  "v3: one-vs-all with a learned threshold")
        cf = QFormLayout(self.cm_box)
        cf.addRow("embedding", self.cm_embedding)
        cf.addRow("d (reference classifiers)", self.cm_d)
        cf.addRow("p (candidates refined)", self.cm_p)
        cf.addRow("refine", self.cm_refine)

        ebox = QGroupBox("Evaluation")
        ef = QFormLayout(ebox)
        self.test_fraction = QDoubleSpinBox()
        self.test_fraction.setRange(0.05, 0.9)
        self.test_fraction.setSingleStep(0.05)
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
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

        self.train_btn = QPushButton("Train")
        self.train_btn.setStyleSheet("QPushButton { font-weight: bold; padding: 8px; }")
        self.train_btn.clicked.connect(lambda: self.start_training())
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.setEnabled(False)
        self.cancel_btn.clicked.connect(runner.cancel)
        settings = QWidget()
        sl = QVBoxLayout(settings)
        for w in (fbox, bbox, self.cm_box, ebox, rbox):
            sl.addWidget(w)
        sl.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(settings)
        scroll.setMinimumWidth(320)
        self.stages = QListWidget()
        self.stages.setMaximumHeight(110)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(scroll, 1)
        row = QHBoxLayout()
        row.addWidget(self.train_btn, 2)
        row.addWidget(self.cancel_btn, 1)
        ll.addLayout(row)
        ll.addWidget(QLabel("Stages"))
        ll.addWidget(self.stages)

        # ---- results column
        self.status = QLabel("Not trained yet. Choose settings and press Train.")
        self.status.setWordWrap(True)
        self.figures = {}
        grid = QGridLayout()
        for i, (key, title) in enumerate((("accuracy", "test accuracy"), ("evaluations", "evaluations / query"),
                                          ("speedup", "fewer than brute force"), ("time", "training time"))):
            big, small = QLabel("–"), QLabel(title)
            big.setStyleSheet("QLabel { font-size: 20pt; font-weight: bold; }")
            big.setAlignment(Qt.AlignCenter)
            small.setAlignment(Qt.AlignCenter)
            grid.addWidget(big, 0, i)
            grid.addWidget(small, 1, i)
            self.figures[key] = big
        self.per_class = QTableWidget(0, 3)
        self.per_class.setHorizontalHeaderLabels(["class", "accuracy %", "tested"])
        self.per_class.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.per_class.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeToContents)
        self.per_class.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeToContents)
        self.per_class.verticalHeader().setVisible(False)
        self.per_class.setEditTriggers(QTableWidget.NoEditTriggers)
        self.per_class.setSortingEnabled(True)
        self.per_class.setWordWrap(False)
        self.per_class.verticalHeader().setDefaultSectionSize(22)
        self.per_class.setTextElideMode(Qt.ElideMiddle)
        self.conf_plot = pg.PlotWidget(background="w")
        self.conf_plot.setAspectLocked(True)
        self.conf_plot.invertY(True)
        self.conf_plot.setLabel("left", "true class")
        self.conf_plot.setLabel("bottom", "predicted class")
        self.conf_plot.setMenuEnabled(False)
        self.conf_img = pg.ImageItem(axisOrder="row-major")
        self.conf_img.setLookupTable(pg.colormap.get("viridis").getLookupTable(nPts=256))
        self.conf_plot.addItem(self.conf_img)
        self.conf_plot.scene().sigMouseClicked.connect(self._conf_clicked)
        self.conf_hint = QLabel("Confusion matrix (rows: true class, share of its test images). "
                                "Click a cell to see those images.")
        self.conf_hint.setWordWrap(True)
        conf = QWidget()
        cl = QVBoxLayout(conf)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.addWidget(self.conf_hint)
        cl.addWidget(self.conf_plot, 1)
        res_split = QSplitter()
        res_split.addWidget(self.per_class)
        res_split.addWidget(conf)
        res_split.setSizes([380, 420])
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.status)
        rl.addLayout(grid)
        rl.addWidget(res_split, 1)

        split = QSplitter()
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([360, 800])
        lay = QVBoxLayout(self)
        lay.addWidget(split)

        self.apply_settings({"features": "kmeans", "bank": "ova-liblinear",
                             "classmap": {"d": 45, "p": 40, "embedding": "boosted", "refine": "v2"},
                             "test_fraction": 0.2, "seed": 0})
        project.modelChanged.connect(self._model_changed)
        project.datasetChanged.connect(self._dataset_changed)
        runner.busyChanged.connect(self._busy)
        runner.progressed.connect(self._progress)

    # ------------------------------------------------------------------ settings
    def _bank_changed(self, name: str) -> None:
        self.bank_form.set_params(_default_params("bank", name), only=BANK_PARAMS.get(name))
        self.cm_box.setEnabled(name != "compressive")

    def apply_settings(self, s: dict) -> None:
        self.features.setCurrentText(s.get("features", "kmeans"))
        self.features_form.set_params(_default_params("features", self.features.currentText()), s.get("features_params"))
        self.bank.setCurrentText(s.get("bank", "ova-liblinear"))
        self.bank_form.set_params(_default_params("bank", self.bank.currentText()), s.get("bank_params"),
                                  only=BANK_PARAMS.get(self.bank.currentText()))
        cm = s.get("classmap")
        self.cm_box.setChecked(cm is not None)
        cm = cm or {}
        self.cm_embedding.setCurrentText(cm.get("embedding", "boosted"))
        self.cm_d.setValue(int(cm.get("d", 45)))
        self.cm_p.setValue(int(cm.get("p", 40)))
        self.cm_refine.setCurrentText(cm.get("refine", "v2"))
        self.test_fraction.setValue(float(s.get("test_fraction", 0.2)))
        self.seed.setValue(int(s.get("seed", 0)))

    def settings(self) -> dict:
        use_cm = self.cm_box.isChecked() and self.bank.currentText() != "compressive"
        return {"features": self.features.currentText(), "features_params": self.features_form.values(),
                "bank": self.bank.currentText(), "bank_params": self.bank_form.values(),
                "classmap": {"d": self.cm_d.value(), "p": self.cm_p.value(),
                             "embedding": self.cm_embedding.currentText(),
                             "refine": self.cm_refine.currentText()} if use_cm else None,
                "test_fraction": round(self.test_fraction.value(), 4), "seed": self.seed.value()}

    # ------------------------------------------------------------------ training
    def start_training(self) -> bool:
        ims = self.project.imageset
        if ims is None:
            self.status.setText("No images: import a folder or load a built-in set on the Dataset panel first.")
            return False
        settings = self.settings()
        self.stages.clear()
        self._stage = None
        self.status.setText(f"Training on {len(ims)} images of {ims.n_classes} classes…")
        version = self.project.data_version

        def done(out: TrainOutcome):
            if self.project.data_version != version:
                self.status.setText("The images changed while training; train again to use them.")
            self.outcome = out
            self.project.set_trained(out.recogniser, out.report, (None, out.test_set), settings)
            self._log_stage_end()
            self.stages.addItem(f"done in {out.seconds:.1f} s")
            self.stages.scrollToBottom()
        return self.runner.run("Training", train_task(ims, settings, self.scheduler_address()), done)

    def scheduler_address(self) -> str | None:
        """The Dask scheduler chosen under "Run training on", or None for this machine."""
        return self.scheduler.text().strip() or None if self.run_on.currentIndex() == 1 else None

    def _busy(self, busy: bool) -> None:
        self.train_btn.setEnabled(not busy)
        self.cancel_btn.setEnabled(busy and self.runner.title == "Training")
        if not busy and self.runner.title == "Training" and self.outcome is None and self.project.recogniser is None:
            self.status.setText("Not trained. " + (f"Last attempt: {self.runner.last_error}" if self.runner.last_error
                                                    else "Training was cancelled."))

    def _progress(self, fraction: float, stage: str, eta: float) -> None:
        if self.runner.title != "Training" or stage == self._stage:
            return
        self._log_stage_end()
        self._stage, self._stage_t0 = stage, time.perf_counter()
        self.stages.addItem(f"{stage} …")
        self.stages.scrollToBottom()

    def _log_stage_end(self) -> None:
        if self._stage is not None and self.stages.count():
            self.stages.item(self.stages.count() - 1).setText(
                f"{self._stage}  ({time.perf_counter() - self._stage_t0:.1f} s)")
            self._stage = None

    # ------------------------------------------------------------------ results
    def _dataset_changed(self) -> None:
        if self.project.recogniser is not None and not self.project.model_is_current:
            self.status.setText("The images changed since training: train again to include them.")

    def _model_changed(self) -> None:
        p = self.project
        if p.recogniser is None:
            self.outcome = None
            self._clear_results()
            return
        if self.outcome is None or self.outcome.recogniser is not p.recogniser:
            self.outcome = None  # opened from a file: the test results are recomputed in the background
            if p.settings:
                self.apply_settings(p.settings)
            self._clear_results()
            self.status.setText("A trained recogniser is loaded; evaluating it on its held-out test images…")
            self.reevaluate()
            return
        self._show_results()

    def reevaluate(self) -> bool:
        """Recompute the test report of a loaded recogniser on the test part its settings held out."""
        p = self.project
        rec, ims, settings = p.recogniser, p.imageset, dict(p.settings)
        if rec is None or ims is None:
            return False

        def work(progress, should_stop):
            from ...core.training import TrainConfig, evaluate  # noqa: PLC0415
            known = {k: v for k, v in settings.items() if k in TrainConfig.__dataclass_fields__}
            cfg = TrainConfig.from_dict(known)
            try:
                test = inspect.test_part(ims, cfg) or ims
            except Exception:  # noqa: BLE001 - data edited since: fall back to the whole set
                test = ims
            rep = evaluate(rec, test, progress=progress, should_stop=should_stop)
            pred = rec.predict(test.images, top=1).labels

            class _Result:
                recogniser, report = rec, rep
            return TrainOutcome(_Result, test, np.asarray(pred, np.int64), settings, float("nan"))

        def done(out):
            if self.project.recogniser is rec:
                self.outcome = out
                self.project.report = out.report
                self._show_results()
                self.figures["time"].setText("–")
                self.status.setText(f"Loaded recogniser, evaluated on {len(out.test_set)} images it was not "
                                    "trained on (the same held-out part as in training when the images are unchanged).")
        return self.runner.run("Evaluating", work, done)

    def _clear_results(self) -> None:
        for lab in self.figures.values():
            lab.setText("–")
        self.per_class.setRowCount(0)
        self.conf_img.clear()
        self.status.setText("Not trained yet. Choose settings and press Train.")

    def _show_results(self) -> None:
        o, r = self.outcome, self.outcome.report
        names = self.project.class_names
        acc = float(getattr(r, "accuracy", np.mean(o.test_pred == o.test_set.labels) if len(o.test_pred) else 0))
        ev = float(getattr(r, "evaluations_per_query", np.nan))
        brute = float(getattr(r, "brute_force_evaluations", len(names)))
        speed = float(getattr(r, "speedup", brute / ev if ev else np.nan))
        self.figures["accuracy"].setText(f"{100 * acc:.1f}%")
        self.figures["evaluations"].setText(f"{ev:.1f} of {brute:.0f}")
        self.figures["speedup"].setText(f"{speed:.1f}×")
        self.figures["time"].setText(f"{o.seconds:.1f} s")
        self.status.setText(f"Trained on {len(self.project.imageset) - len(o.test_set)} images, tested on "
                            f"{len(o.test_set)} held-out images.")
        conf = getattr(r, "confusion", None)
        if conf is None or np.asarray(conf).shape != (len(names), len(names)):
            conf = inspect.confusion_from_labels(o.test_set.labels, o.test_pred, len(names))
        self.confusion = np.asarray(conf)
        per = getattr(r, "per_class_accuracy", None)
        per = np.asarray(per if per is not None else np.diag(inspect.confusion_rates(conf)), np.float64)
        counts = self.confusion.sum(axis=1)
        self.per_class.setSortingEnabled(False)
        self.per_class.setRowCount(len(names))
        for c, name in enumerate(names):
            a = QTableWidgetItem()
            a.setData(Qt.DisplayRole, round(100 * float(per[c]), 1) if c < len(per) else 0.0)
            n = QTableWidgetItem()
            n.setData(Qt.DisplayRole, int(counts[c]))
            self.per_class.setItem(c, 0, QTableWidgetItem(name))
            self.per_class.setItem(c, 1, a)
            self.per_class.setItem(c, 2, n)
        self.per_class.setSortingEnabled(True)
        self.per_class.sortItems(1, Qt.AscendingOrder)
        self.conf_img.setImage(inspect.confusion_rates(self.confusion), levels=(0, 1))
        self.conf_plot.autoRange()

    def _conf_clicked(self, ev) -> None:
        if self.outcome is None:
            return
        pos = self.conf_img.mapFromScene(ev.scenePos())
        j, i = int(np.floor(pos.x())), int(np.floor(pos.y()))
        self.open_cell(i, j)

    def open_cell(self, i: int, j: int):
        """Show the test images of true class i predicted as j (the misclassified ones when i != j)."""
        o = self.outcome
        n = len(self.project.class_names)
        if o is None or not (0 <= i < n and 0 <= j < n):
            return None
        idx = inspect.cell_examples(o.test_set.labels, o.test_pred, i, j)
        names = self.project.class_names
        title = f"{names[i]} predicted as {names[j]}" if i != j else f"{names[i]} recognised correctly"
        src = o.test_set.sources
        caps = [(src[k].rsplit("/", 1)[-1] if src is not None and src[k] else f"test #{k}") for k in idx]
        self.misclassified_dialog = ImageGridDialog(title, o.test_set.images[idx], caps, self)
        self.misclassified_dialog.show()
        return self.misclassified_dialog
