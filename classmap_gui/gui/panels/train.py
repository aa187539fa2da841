"""Train panel: settings on the left (:mod:`.train_settings`), the last run's results and the Runs table
(:mod:`.runs`) on the right; training and re-evaluation run as background tasks (:mod:`.train_jobs`)
whose own signals this panel listens to."""
from __future__ import annotations

import time

from PySide6.QtWidgets import (QHBoxLayout, QLabel, QListWidget, QPushButton, QScrollArea, QSplitter, QTabWidget,
                               QVBoxLayout, QWidget)

from ...core.train.defaults import suggest_config
from ...core.errors import ClassMapError
from .data_fingerprint import DataFingerprint
from .runs import RunsView
from .train_jobs import (TrainOutcome, as_recorded, evaluate_task, held_out_part, split_preview,  # noqa: F401
                         split_text, train_task)
from .train_results import TrainResults
from .train_settings import TrainSettings


class TrainPanel(QWidget):
    """The Train tab: settings (suggested from the data or edited), the Train button, stage progress and
    the results of the last training."""
    def __init__(self, project, runner, parent=None):
        super().__init__(parent)
        self.project, self.runner = project, runner
        self.outcome: TrainOutcome | None = None
        self.task = None
        self.auto = True  # settings follow the data until a person changes them
        self._stage, self._stage_t0 = None, 0.0

        self.settings_view = TrainSettings()
        self.settings_view.edited.connect(self._edited)
        self.settings_view.suggestRequested.connect(self._suggest_pressed)
        self.train_btn = QPushButton("Train")
        self.train_btn.setStyleSheet("QPushButton { font-weight: bold; padding: 8px; }")
        self.train_btn.clicked.connect(lambda: self.start_training())
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.setEnabled(False)
        self.cancel_btn.clicked.connect(lambda: self.task.cancel() if self.task is not None else None)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.settings_view)
        scroll.setMinimumWidth(340)
        self.stages = QListWidget()
        self.stages.setMaximumHeight(110)
        self.split_note = QLabel(" ")
        self.split_note.setWordWrap(True)
        self.split_warning = False
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
        ll.addWidget(self.split_note)

        self.results = TrainResults()
        self.runs_view = RunsView()
        self.runs_view.restoreRequested.connect(lambda rid: self.restore_run(rid))
        self.runs_view.deleteRequested.connect(lambda rid: self.delete_run(rid))
        self.runs_view.forgetModelsRequested.connect(project.forget_run_models)  # the table follows stateChanged
        self.pending_restore: dict | None = None   # a restored run whose predictions are still to be checked
        self.last_restore_message = ""
        self.fingerprint = DataFingerprint()        # the open data's, hashed off the GUI thread for the Runs table
        self.eval_task = None
        self.right = QTabWidget()
        self.right.addTab(self.results, "Last run")
        self.right.addTab(self.runs_view, "Runs")
        split = QSplitter()
        split.addWidget(left)
        split.addWidget(self.right)
        split.setSizes([370, 800])
        lay = QVBoxLayout(self)
        lay.addWidget(split)

        # names other parts (tests, screenshot driver) read
        self.status, self.figures, self.per_class = self.results.status, self.results.figures, self.results.per_class
        project.modelChanged.connect(self._model_changed)
        project.datasetChanged.connect(self._dataset_changed)
        project.trainingRequested.connect(self._train_requested)  # another panel asks through the project
        project.modelChanged.connect(self.show_runs)
        project.stateChanged.connect(self.show_runs)
        self.show_runs()
        runner.busyChanged.connect(lambda busy: self.train_btn.setEnabled(not busy))

    # ------------------------------------------------------------------ settings
    def apply_settings(self, s: dict) -> None:
        """Use the settings ``s`` (a project's or the demo's): they no longer follow the data."""
        self.auto = False
        self.settings_view.apply(s)

    def settings(self) -> dict:
        """The training settings as currently shown (only the changed ones, by name)."""
        return self.settings_view.values()

    def scheduler_address(self) -> str | None:
        """The Dask scheduler address to train on (``tcp://host:8786``), or None for this machine."""
        return self.settings_view.scheduler_address()

    def suggest(self, keep_choice: bool = False) -> list[str]:
        """Settings sized to the open data, with their reasons; ``keep_choice`` keeps the map and bank."""
        ims = self.project.imageset
        if ims is None:
            return []
        cur = self.settings()
        base = {"features": cur["features"], "bank": cur["bank"]} if keep_choice else None
        s, reasons = suggest_config(ims, base, hands=self.project.settings.get("capture_subject") == "hands")
        self.settings_view.apply(s, reasons)
        self.auto = not keep_choice
        return reasons

    def _saved_settings(self) -> dict:
        """The training settings the project holds (opened, or written when a person edited them)."""
        return {k: v for k, v in self.project.settings.items() if k in self.settings_view.values()}

    def _train_requested(self, what: str = ""):
        """Another panel asked for a training through the project: ``""`` trains with the settings shown (Find the
        hand's background fix); ``"classmap"`` (Explore, whose map needs ClassMap) trains the shown feature map and
        bank again with ClassMap on, sized for the map. The task or None."""
        if not what:
            return self.start_training()
        ims = self.project.imageset
        if what != "classmap" or ims is None:
            return None
        s, reasons = suggest_config(ims, self.settings(), for_map=True)
        if s["classmap"] is None:
            self.status.setText(reasons[-1])
            self.project.message.emit(reasons[-1])
            return None
        self.settings_view.apply(s, reasons)
        self.auto = False
        return self.start_training()

    def _edited(self) -> None:
        """A person changed a setting: it is the project's now (unsaved until saved; closing asks)."""
        self.auto = False
        self.settings_view.set_advice(None)
        self.project.edit_settings(self.settings())
        ims = self.project.imageset
        if ims is not None and len(ims):
            self._show_split(split_preview(ims, self.settings()))

    def _suggest_pressed(self) -> None:
        self.suggest(keep_choice=not self.auto)
        if self.project.imageset is not None:  # the person chose these settings for the project
            self.project.edit_settings(self.settings())

    # the panel protocol (panel_table.Panel)
    def stop(self) -> None:
        """The project is being replaced: nothing live to end (a training's result is kept only for the images
        it trained on)."""

    def shutdown(self) -> None:
        """The window closes: stop measuring feature speeds (training tasks end with the runner)."""
        self.settings_view.speed.shutdown()

    @property
    def confusion(self):
        """The last training's confusion matrix ``(C, C)`` (true x predicted), or None."""
        return self.results.confusion

    def open_cell(self, i: int, j: int):
        """Clicking confusion cell (``i``, ``j``): open the dialog with those test images."""
        return self.results.open_cell(i, j)

    # ------------------------------------------------------------------ training
    def start_training(self):
        """Train button: train on the project's images in the background with the shown settings; the task or None."""
        ims = self.project.imageset
        if ims is None:
            self.status.setText("No images: start a New project, import a folder or load a built-in set first.")
            return None
        settings = self.settings()
        self.stages.clear()
        self._stage = None
        version = self.project.data_version
        task = self.runner.run("Training", train_task(ims, settings, self.scheduler_address()))
        if task is None:
            self.status.setText("Another task is running; train when it has finished.")
            return None
        self.task = task
        self.status.setText(f"Training on {len(ims)} images of {ims.n_classes} classes…")
        self.cancel_btn.setEnabled(True)
        task.progressed.connect(self._progress)

        retrain_of, self.pending_restore = self.pending_restore, None

        def done(out: TrainOutcome):
            self._log_stage_end()  # now, before the results are drawn (drawing is not a training stage)
            self.outcome = out
            keep = {k: v for k, v in self.project.settings.items() if k.startswith("capture_")}
            if out.record is not None:
                if self.project.imageset is ims:  # the fingerprint training computed: no second hash
                    self.fingerprint.known(ims, out.record["data"]["version"])
                self.project.add_run(out.record, out.recogniser)
            self.project.set_trained(out.recogniser, out.report, (None, out.test_set), {**settings, **keep})
            self.stages.addItem(f"done in {out.seconds:.1f} s")
            self.stages.scrollToBottom()
            self._show_split(out.split_info)
            if self.project.data_version != version:
                self.status.setText("The images changed while training; train again to use them.")
            elif retrain_of is not None:
                self._say_reproduced(retrain_of, out.test_pred, "Retrained")
        task.succeeded.connect(done)
        task.cancelled.connect(lambda: self._ended("Training was cancelled; nothing changed."))
        task.failed.connect(lambda msg: self._ended(f"Training failed: {msg}"))
        task.finished.connect(lambda: self.cancel_btn.setEnabled(False))
        return task

    def _ended(self, text: str) -> None:
        self._log_stage_end()
        if self.project.recogniser is None:
            self.results.clear(f"Not trained. {text}")
        else:
            self.status.setText(f"{text} The previous recogniser is still in use.")

    def _progress(self, fraction: float, stage: str, eta: float) -> None:
        if stage == self._stage:
            return
        self._log_stage_end()
        if stage == "done":  # core's end mark, not a stage: "done in …" closes the log
            return
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
        p = self.project
        ims = p.imageset
        self.settings_view.speed.set_format(ims.image_size if ims is not None else None,
                                            bool(ims is not None and ims.is_color))
        saved, shown = self._saved_settings(), self.settings()
        if any(shown.get(k) != v for k, v in saved.items()):  # an opened project's own settings are shown
            self.apply_settings(saved)
        elif self.auto and p.imageset is not None and (self.task is None or not self.runner.busy):
            self.suggest()
        self._show_split(split_preview(p.imageset, self.settings()) if p.imageset is not None and len(p.imageset)
                         else None)
        if p.recogniser is not None and not p.model_is_current:
            self.status.setText("The images changed since training: train again to include them.")

    def _model_changed(self) -> None:
        p = self.project
        if p.recogniser is None:  # a new project, or the model was discarded: no old run's figures or stages
            self.outcome = None
            self.results.clear()
            if not self.runner.busy:
                self.stages.clear()
            return
        if self.outcome is None or self.outcome.recogniser is not p.recogniser:
            self.outcome = None  # opened from a file: the test results are recomputed in the background
            if p.settings:
                self.apply_settings(p.settings)
            self.results.clear("A trained recogniser is loaded; evaluating it on its held-out test images…")
            self.reevaluate()
            return
        self._show()

    def reevaluate(self):
        """Recompute the test report of a loaded recogniser on the test part its settings held out."""
        p = self.project
        rec, ims, settings = p.recogniser, p.imageset, dict(p.settings)
        if rec is None or ims is None or not len(ims):
            return None
        task = self.runner.run("Evaluating", evaluate_task(rec, ims, settings), abandonable=True)  # a network may hang
        if task is None:
            return None
        self.eval_task = task

        restoring, self.pending_restore = self.pending_restore, None

        def done(out):
            if self.project.recogniser is rec:
                runs = self.project.runs
                run_id = runs.current_of(rec)
                out = as_recorded(out, runs.get(run_id) if run_id is not None else None)
                self.outcome = out
                self.project.set_evaluation(out.report, (None, out.test_set))  # Explore shows the same held-out images
                self._show()
                self.status.setText(f"Loaded recogniser, evaluated on {len(out.test_set)} images it was not "
                                    "trained on (the same held-out part as in training when the images are unchanged).")
                if restoring is not None:
                    self._say_reproduced(restoring, out.test_pred, "Restored")
        task.succeeded.connect(done)
        task.failed.connect(lambda msg: self.results.clear(f"The loaded recogniser could not be evaluated: {msg}"))
        return task

    def _show(self) -> None:
        o = self.outcome
        self.results.show_report(o.report, self.project.class_names, o.test_set, o.test_pred, o.seconds,
                                 classmap=getattr(o.recogniser, "classmap", None) is not None)
        n_train = len(self.project.imageset) - len(o.test_set)
        self.status.setText(f"Trained on {n_train} images, tested on {len(o.test_set)} held-out images.")

    # ------------------------------------------------------------------ runs
    def show_runs(self) -> None:
        """Refresh the Runs table from the project's runs; the run in use is bold. The open data's fingerprint
        (to mark runs trained on other data) is hashed off the GUI thread, once per edit (0.5 s for 150 MB of
        images at load 10), and the table is refreshed when it is ready."""
        p = self.project
        runs = p.runs
        version = None
        if p.imageset is not None and len(runs):
            ims = p.imageset
            version = self.fingerprint.version(ims, lambda: self.show_runs() if self.project.imageset is ims else None)
        self.runs_view.show_runs(runs, runs.current_of(p.recogniser), version)
        self.right.setTabText(1, f"Runs ({len(runs)})" if len(runs) else "Runs")

    def restore_run(self, run_id: int):
        """Restore button: use run ``run_id`` again. A kept model is put back and re-evaluated on its held-out
        part; a run whose model was not kept is retrained with its settings and seed. Either way the new
        predictions are checked against the run's record. Returns the task started, or None."""
        from ...core.project.runs import data_version
        p = self.project
        try:
            record = p.runs.get(run_id)
        except KeyError:
            return None
        if self.runner.busy:
            self.status.setText("Another task is running; restore when it has finished.")
            return None
        if p.runs.model(run_id) is None:
            same = p.imageset is not None and record.get("data", {}).get("version") == data_version(p.imageset)
            self.apply_settings(record.get("settings") or {})
            self.pending_restore = record
            task = self.start_training()
            if task is not None:
                self.status.setText(f"Run {run_id} kept only its record: retraining with its settings and seed"
                                    + ("…" if same else " on the images as they are now (they changed since)…"))
            return task
        if p.recogniser is p.runs.model(run_id) and self.outcome is not None:
            self.status.setText(f"Run {run_id} is the one in use.")
            return None
        try:
            self.pending_restore = record
            p.restore_run(run_id)          # modelChanged: re-evaluated in the background, then checked
        except ClassMapError as exc:
            self.pending_restore = None
            self.status.setText(f"Run {run_id} cannot be restored: {exc}")
            return None
        self.right.setCurrentWidget(self.results)
        return self.eval_task

    def delete_run(self, run_id: int) -> None:
        """Delete button: forget run ``run_id`` (its record and kept model)."""
        self.project.remove_run(run_id)  # the project says it is unsaved; the table follows its stateChanged

    def _say_reproduced(self, record: dict, pred, how: str) -> None:
        from ...core.project.runs import predictions_match
        n = len(pred)
        if predictions_match(record, pred):
            self.status.setText(f"{how} run {record['id']}: its {n} test predictions are identical to the "
                                f"recorded run's (accuracy {100 * record.get('accuracy', 0):.1f}%).")
        else:
            self.status.setText(f"{how} run {record['id']}, but its {n} test predictions differ from the recorded "
                                "run's: the images changed since it was trained.")
        self.last_restore_message = self.status.text()

    def _show_split(self, info: dict | None) -> None:
        if info is None:
            self.split_note.setText(" ")
            self.split_warning = False
            return
        text, warn = split_text(info)
        self.split_warning = warn
        self.split_note.setText(text)
        self.split_note.setStyleSheet("QLabel { color: #b35900; }" if warn else "")
