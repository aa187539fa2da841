"""The Runs table: every training run of the project side by side (sortable), and a button to restore one.

Rows come from the project's :class:`~classmap_gui.core.project.runs.RunLog`; what a row says is computed
by :func:`run_row` without a window. Restoring is the Train panel's job (it re-evaluates the restored
model and checks its predictions against the record); this view only asks for it (``restoreRequested``).
"""
from __future__ import annotations

import calendar
import os
import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QPushButton, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

COLUMNS = ("Run", "Accuracy", "Evals/query", "Speed-up", "Train time", "Features", "Bank", "ClassMap", "Split",
           "Data", "Date", "Model")
TIPS = {"Accuracy": "Accuracy on the held-out test part (bursts kept whole when the data has them)",
        "Evals/query": "Binary classifiers evaluated per image, of all of them (brute force)",
        "Speed-up": "Measured: brute force time over this recogniser's, one image at a time (classification only)",
        "Train time": "Wall-clock training time", "Split": "How the data was split: by capture burst, or by image",
        "Data": "Images and a fingerprint of the data the run saw", "Model": "kept: restored at once; "
        "retrain: only the record is kept, restoring retrains with its settings and seed"}
_PARAM_SHORT = {"n_centroids": "k", "patch_size": "patch", "m": "m", "alpha": "α", "C": "C", "d": "d", "p": "p"}


def _params(params: dict, keys=("n_centroids", "m", "alpha", "C")) -> str:
    bits = [f"{_PARAM_SHORT[k]}={params[k]:g}" if isinstance(params.get(k), (int, float)) else
            f"{_PARAM_SHORT[k]}={params[k]}" for k in keys if k in params]
    return f" ({', '.join(bits)})" if bits else ""


def _obj(value) -> dict:
    """``value`` when it is a JSON object, else empty (a record from a hand-edited file may hold anything)."""
    return value if isinstance(value, dict) else {}


def run_row(record: dict, current_version: str | None = None) -> list[tuple[str, object]]:
    """The cells of one run: ``(text, sort key)`` per column of :data:`COLUMNS`. ``current_version``: the
    fingerprint of the data open now (a run trained on other data says so)."""
    s, data, split = _obj(record.get("settings")), _obj(record.get("data")), _obj(record.get("split"))
    chosen = {str(k).split(".", 1)[-1]: v for k, v in _obj(record.get("chosen")).items()}
    bank_params = {**_obj(s.get("bank_params")), **chosen}
    cm = _obj(s.get("classmap"))
    cm_text = "—" if not isinstance(s.get("classmap"), dict) else \
        f"d={cm.get('d', 'default')} p={cm.get('p', 'default')}"  # {}: ClassMap with its defaults
    date = str(record.get("date", ""))
    try:
        local = time.strftime("%m-%d %H:%M",
                              time.localtime(calendar.timegm(time.strptime(date, "%Y-%m-%dT%H:%M:%SZ"))))
    except ValueError:
        local = date
    version = str(data.get("version", ""))
    changed = current_version is not None and version != current_version
    data_text = f"{data.get('images', '?')} · {version[:6]}" + (" (other data)" if changed else "")
    if split.get("by") == "capture group":
        split_text = f"{split.get('groups', '?')} bursts"
    else:
        split_text = "by image"
    if isinstance(split.get("too_few"), list) and split["too_few"]:
        split_text += f" ⚠ {len(split['too_few'])} class(es) too few"
    acc = record.get("accuracy")
    on = record.get("report_on", "test")
    speed = _obj(record.get("latency_speedup")).get("single")
    speed = speed if isinstance(speed, (int, float)) else None
    evals = record.get("evaluations_per_query")
    secs = record.get("train_seconds")
    kept = bool(record.get("model_kept"))
    cells = {
        "Run": (str(record.get("id", "")), record.get("id", 0)),
        "Accuracy": ("—" if acc is None else f"{100 * acc:.1f}%" + ("" if on == "test" else " (train)"),
                     -1 if acc is None else acc),
        "Evals/query": ("—" if evals is None else f"{evals:.1f}" + (f" of {record['brute_force_evaluations']}" if
                        isinstance(record.get("brute_force_evaluations"), int) else ""), -1 if evals is None else evals),
        "Speed-up": ("—" if speed is None else f"{speed:.2f}×", -1 if speed is None else speed),
        "Train time": ("—" if secs is None else f"{secs:.1f} s", -1 if secs is None else secs),
        "Features": (str(s.get("features", "?")) + _params(_obj(s.get("features_params"))), str(s.get("features", ""))),
        "Bank": (str(s.get("bank", "?")) + _params(bank_params), str(s.get("bank", ""))),
        "ClassMap": (cm_text, cm_text),
        "Split": (split_text, split.get("groups", 0) if split.get("by") == "capture group" else -1),
        "Data": (data_text, version),
        "Date": (local, date),
        "Model": ("kept" if kept else "retrain", int(kept)),
    }
    return [cells[c] for c in COLUMNS]


def megabytes(n: float) -> str:
    """A size for a person: ``"48 MB"``, ``"2.4 MB"``, ``"37 KB"``."""
    return f"{n / 1e6:.0f} MB" if n >= 9.5e6 else f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{max(1.0, n / 1e3):.0f} KB"


def kept_models_text(runs, current: int | None = None, bytes_of=None) -> str:
    """What the kept run models add to the saved project, the model in use (run ``current``'s, saved anyway)
    aside: ``"the models of 4 other kept runs add 48 MB to the saved project"`` ("" when none do).
    ``bytes_of``: run id -> bytes (default: each model's ``saved_bytes()``)."""
    ids = [i for i in runs.models if i != current]
    if not ids:
        return ""
    total = sum((bytes_of or (lambda i: runs.models[i].saved_bytes()))(i) for i in ids)
    return f"the models of {len(ids)} other kept run(s) add {megabytes(total)} to the saved project"


def saved_size_text(path, project) -> str:
    """The size of ``project`` just saved at ``path`` (a file, or a folder) and what of it the kept run models
    are, with where to let them go: said after *Save*."""
    path = str(path)
    try:
        size = os.path.getsize(path) if os.path.isfile(path) else sum(
            os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
    except OSError:
        return ""
    runs = project.runs
    kept = kept_models_text(runs, runs.current_of(project.recogniser)) if runs is not None else ""
    return f" ({megabytes(size)}" + (f"; {kept}: Train > Runs > Forget kept models lets them go)" if kept else ")")


class _Item(QTableWidgetItem):
    """A cell that sorts by its key (numbers as numbers), not by its text."""

    def __init__(self, text: str, key):
        super().__init__(text)
        self.key = key

    def __lt__(self, other) -> bool:  # Qt sort
        a, b = self.key, getattr(other, "key", None)
        try:
            return a < b
        except TypeError:
            return str(a) < str(b)


class RunsView(QWidget):
    """The table of runs with Restore and Delete buttons. Signals: ``restoreRequested(run id)``,
    ``deleteRequested(run id)``."""

    restoreRequested = Signal(int)
    deleteRequested = Signal(int)
    forgetModelsRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        for c, name in enumerate(COLUMNS):
            if name in TIPS:
                self.table.horizontalHeaderItem(c).setToolTip(TIPS[name])
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setSortingEnabled(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._selection)
        self.table.itemDoubleClicked.connect(lambda _it: self._restore())
        self.restore_btn = QPushButton("Restore selected run")
        self.restore_btn.setToolTip("Use this run's settings and trained model again (a run whose model was not "
                                    "kept is retrained with its settings and seed)")
        self.restore_btn.clicked.connect(self._restore)
        self.delete_btn = QPushButton("Delete run")
        self.delete_btn.clicked.connect(lambda: self.selected() is not None and
                                        self.deleteRequested.emit(self.selected()))
        self.forget_btn = QPushButton("Forget kept models")
        self.forget_btn.setToolTip("Make the project smaller: let go of the kept models of every run but the one "
                                   "in use; their records stay, and restoring one retrains it with its settings "
                                   "and seed (saved with the project's next save)")
        self.forget_btn.clicked.connect(self.forgetModelsRequested.emit)
        self.note = QLabel("No runs yet: every training run is listed here.")
        self.note.setWordWrap(True)
        self._sizes: dict[int, tuple] = {}  # run id -> (its model, saved bytes): a kept model never changes
        row = QHBoxLayout()
        row.addWidget(self.restore_btn)
        row.addWidget(self.delete_btn)
        row.addWidget(self.forget_btn)
        row.addWidget(self.note, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.table, 1)
        lay.addLayout(row)
        self._selection()

    def show_runs(self, runs, current_id: int | None = None, current_version: str | None = None) -> None:
        """Fill the table from a RunLog; the run whose model is in use (``current_id``) is bold."""
        keep = self.selected()
        self.table.setSortingEnabled(False)
        self.table.setRowCount(0)
        bold = QFont()
        bold.setBold(True)
        for r, record in enumerate(runs.records):
            self.table.insertRow(r)
            for c, (text, key) in enumerate(run_row(record, current_version)):
                item = _Item(text, key)
                item.setData(Qt.UserRole, record["id"])
                if record["id"] == current_id:
                    item.setFont(bold)
                few = _obj(record.get("split")).get("too_few")
                if c == COLUMNS.index("Split") and isinstance(few, list) and few:
                    item.setToolTip("Too few bursts to test honestly: " + ", ".join(map(str, few[:20])))
                self.table.setItem(r, c, item)
        self.table.setSortingEnabled(True)
        kept = sum(bool(r.get("model_kept")) for r in runs.records)
        # measured once per kept model; another project's run of the same id is measured anew, gone ones dropped
        self._sizes = {rid: self._sizes[rid] if self._sizes.get(rid, (None,))[0] is model else
                       (model, model.saved_bytes()) for rid, model in runs.models.items()}
        size = kept_models_text(runs, current_id, lambda rid: self._sizes[rid][1])
        self.note.setText(f"{len(runs)} run(s); models kept for {kept} (the newest {runs.keep_models})"
                          + (f": {size}" if size else "") + "; older runs are restored by retraining with their "
                          "settings and seed." if len(runs) else "No runs yet: every training run is listed here.")
        self.forget_btn.setEnabled(any(i != current_id for i in runs.models))  # the one in use stays
        if keep is not None:
            self.select(keep)
        self._selection()

    def row_of(self, run_id: int) -> int:
        """The table row showing run ``run_id`` (after sorting), or -1."""
        for r in range(self.table.rowCount()):
            if self.table.item(r, 0).data(Qt.UserRole) == run_id:
                return r
        return -1

    def select(self, run_id: int) -> None:
        """Select the row of run ``run_id``."""
        r = self.row_of(run_id)
        if r >= 0:
            self.table.selectRow(r)

    def selected(self) -> int | None:
        """The id of the selected run, or None."""
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        return None if not rows else self.table.item(rows[0].row(), 0).data(Qt.UserRole)

    def _selection(self) -> None:
        on = self.selected() is not None
        self.restore_btn.setEnabled(on)
        self.delete_btn.setEnabled(on)

    def _restore(self) -> None:
        rid = self.selected()
        if rid is not None:
            self.restoreRequested.emit(rid)
