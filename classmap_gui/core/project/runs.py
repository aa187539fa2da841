"""Training runs a project keeps: one JSON record per run, and the trained recogniser of the newest few.

A record says what was trained and how it did — settings, the data it saw (a fingerprint of the images,
labels and capture groups), how the data was split, test accuracy, classifier evaluations per query,
the measured ClassMap speed-up, training time, date — and a checksum of its test predictions, so a
restored run can be checked against what it predicted then. ``classmap train --json`` prints the same
record.

Restoring a run needs its model. Keeping the models is the reliable way: retraining from the recorded
settings and seed reproduces the predictions only while the data is unchanged (the record's data
fingerprint says whether it is), and costs the training time again. Models take space (measured: see
``MAX_KEPT_MODELS``), so the :class:`RunLog` keeps the recogniser of the newest :data:`MAX_KEPT_MODELS`
runs; older runs keep their record and are restored by retraining with their settings.

In a project: records in ``project.json`` under ``"runs"``; models in ``runs/NNNN/`` as saved by
``Recogniser.save`` (JSON + pickle-free ``.npz``). The model of the run that is also the project's current
recogniser is not written twice: ``"runs_current"`` names that run and it is read from ``model/``.
"""
from __future__ import annotations

import hashlib
import time
from typing import Any

import numpy as np

from ..errors import ModelFormatError

#: Models kept in a project: the newest runs'. Saved sizes measured (``Recogniser.save``, load ~8): digits,
#: pixels + ridge 6.6 KB; hand-pose-small demo (250 classes, HOG 1764-d, ridge, ClassMap d=30) 2.0 MB and
#: 14 s to train; scaled by classes, hand-pose's 2430 would be ~20 MB a run (estimate). Five keeps a
#: comparison at hand without a project growing without bound; retraining instead costs the training time.
MAX_KEPT_MODELS = 5
#: Records kept at most (they are small: ~1 KB each); the oldest are dropped beyond this.
MAX_RUNS = 500
RUNS_DIR = "runs"

# field -> accepted JSON types of a record read from a project (None always accepted for the optional ones)
_NUM = (int, float)
_FIELDS: dict[str, tuple] = {
    "id": (int,), "date": (str,), "settings": (dict,), "data": (dict,), "split": (dict,), "sizes": (dict,),
    "report_on": (str,), "accuracy": _NUM, "top_accuracy": _NUM, "evaluations_per_query": _NUM,
    "brute_force_evaluations": _NUM, "latency_speedup": (dict,), "train_seconds": _NUM,
    "stage_seconds": (dict,), "chosen": (dict,), "predictions": (str,), "n_predictions": (int,),
    "model_kept": (bool,),
}
_REQUIRED = ("id", "date", "settings", "data")


def digest(array: np.ndarray) -> str:
    """A short checksum (hex) of an array's values and shape."""
    h = hashlib.blake2b(digest_size=8)
    a = np.ascontiguousarray(array)
    h.update(repr((a.dtype.str, a.shape)).encode())
    h.update(a.tobytes())
    return h.hexdigest()


def data_version(imageset) -> str:
    """A fingerprint of what training sees: images, labels, class names and capture groups (hex, 16 chars).
    Equal fingerprints mean a run retrained with its settings and seed sees exactly the same data."""
    h = hashlib.blake2b(digest_size=8)
    h.update("\x00".join(imageset.class_names).encode("utf-8", "surrogateescape"))
    for a in (imageset.labels, imageset.group_ids(), imageset.images):
        h.update(digest(a).encode())
    return h.hexdigest()


def run_record(result, imageset, *, seconds: float | None = None) -> dict:
    """The record of one training run: ``result`` is the :class:`~classmap_gui.core.train.training.TrainResult`
    of training on ``imageset``; ``seconds`` the wall-clock training time (else the sum of its stages).
    JSON-able; ``id`` and ``model_kept`` are set when a :class:`RunLog` keeps it."""
    rep = result.report
    meta = getattr(result.recogniser, "metadata", {}) or {}
    pred = result.test_predictions
    labels = np.asarray(pred.labels if pred is not None else [], np.int64)
    return {
        "id": 0, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "settings": meta.get("config", {}),
        "chosen": {k: v.get("chosen") for k, v in (result.selection or {}).items()},
        "data": {"name": imageset.name, "version": data_version(imageset), "images": len(imageset),
                 "classes": imageset.n_classes,
                 "bursts": int(len(np.unique(imageset.groups))) if imageset.groups is not None else None},
        "split": dict(result.split_info), "sizes": dict(result.sizes), "report_on": result.report_on,
        "accuracy": float(rep.accuracy), "top_accuracy": float(rep.top_accuracy),
        "evaluations_per_query": float(rep.evaluations_per_query),
        "brute_force_evaluations": int(rep.brute_force_evaluations),
        "latency_speedup": rep.latency_speedup,
        "train_seconds": float(seconds if seconds is not None else sum(result.timings.values())),
        "stage_seconds": {k: float(v) for k, v in result.timings.items()},
        "predictions": digest(labels), "n_predictions": int(len(labels)),
        "model_kept": False,
    }


def predictions_match(record: dict, labels: np.ndarray) -> bool:
    """True when ``labels`` (predicted labels of the run's test part, in order) are the ones the run recorded."""
    return record.get("predictions") == digest(np.asarray(labels, np.int64))


def check_records(runs: Any, where: str) -> list[dict]:
    """The run records of a ``project.json``, checked; ModelFormatError naming what is wrong."""
    if runs is None:
        return []
    if not isinstance(runs, list) or len(runs) > MAX_RUNS:
        raise ModelFormatError(f"{where}: runs must be a list of at most {MAX_RUNS} run records")
    seen = set()
    for r in runs:
        if not isinstance(r, dict) or any(k not in r for k in _REQUIRED):
            raise ModelFormatError(f"{where}: a run record must be an object with {', '.join(_REQUIRED)}")
        for k, types in _FIELDS.items():
            v = r.get(k)
            if v is None and k not in _REQUIRED:
                continue
            if not isinstance(v, types) or (isinstance(v, bool) and bool not in types):
                raise ModelFormatError(f"{where}: run {r.get('id')!r} has a bad {k!r} ({str(v)[:60]!r})")
        if not 1 <= r["id"] <= 10 ** 6 or r["id"] in seen:
            raise ModelFormatError(f"{where}: run ids must be distinct numbers from 1, got {r['id']!r}")
        seen.add(r["id"])
    return runs


def read_run_models(doc: dict, records: list[dict], recogniser, where: str, load) -> dict:
    """run id -> Recogniser for the runs whose model a ``project.json`` says it keeps: the current run's is
    the project's ``recogniser``, the others come from ``load(run_id)``."""
    ids = {r["id"] for r in records}
    listed = doc.get("run_models") or []
    current = doc.get("runs_current")
    if not isinstance(listed, list) or not all(isinstance(i, int) and not isinstance(i, bool) and i in ids for i in listed) or \
            (current is not None and (not isinstance(current, int) or current not in ids)):
        raise ModelFormatError(f"{where}: run_models and runs_current must name runs of the project")
    models = {}
    if current is not None and recogniser is not None:
        models[current] = recogniser
    for rid in listed:
        if rid != current:
            models[rid] = load(rid)
    return models


def run_folder(run_id: int) -> str:
    """The member folder of run ``run_id``'s model in a project (``runs/0007``)."""
    return f"{RUNS_DIR}/{int(run_id):04d}"


class RunLog:
    """The runs of the open project: records (oldest first) and the recogniser of the newest
    ``keep_models`` of them (``models``: run id -> Recogniser)."""

    def __init__(self, records: list[dict] | None = None, models: dict | None = None,
                 keep_models: int = MAX_KEPT_MODELS, next_id: int | None = None):
        self.records: list[dict] = [dict(r) for r in (records or [])]
        self.models: dict[int, Any] = dict(models or {})
        self.keep_models = int(keep_models)
        # ids are never reused, so "run 3" names one run even after runs are deleted
        self.next_id = max([int(next_id or 1)] + [r["id"] + 1 for r in self.records])
        for r in self.records:
            r["model_kept"] = r["id"] in self.models

    def __len__(self) -> int:
        return len(self.records)

    def add(self, record: dict, recogniser=None) -> dict:
        """Keep ``record`` (a copy, given the next id) and its ``recogniser``; older models beyond the bound
        are let go (their records stay). Returns the kept record."""
        rec = dict(record)
        rec["id"] = self.next_id
        self.next_id += 1
        self.records.append(rec)
        if recogniser is not None:
            self.models[rec["id"]] = recogniser
        for old in sorted(self.models)[:-self.keep_models] if self.keep_models > 0 else list(self.models):
            del self.models[old]
        del self.records[:-MAX_RUNS]
        for r in self.records:
            r["model_kept"] = r["id"] in self.models
        return rec

    def get(self, run_id: int) -> dict:
        """The record of run ``run_id``; KeyError when there is none."""
        for r in self.records:
            if r["id"] == run_id:
                return r
        raise KeyError(f"no run {run_id}")

    def model(self, run_id: int):
        """The kept recogniser of run ``run_id``, or None when only its record is kept."""
        return self.models.get(run_id)

    def remove(self, run_id: int) -> None:
        """Forget run ``run_id`` and its model."""
        self.records = [r for r in self.records if r["id"] != run_id]
        self.models.pop(run_id, None)

    def models_bytes(self) -> int:
        """About the bytes the kept models add to the saved project (:meth:`Recogniser.saved_bytes` each; the
        model that is also the project's current one is saved once, under ``model/``, and counted here too)."""
        return sum(m.saved_bytes() for m in self.models.values())

    def forget_models(self, keep: int | None = None) -> int:
        """Let go of every kept model but run ``keep``'s (their records stay: restoring one retrains it with
        its settings and seed); returns how many were let go."""
        gone = [i for i in self.models if i != keep]
        for i in gone:
            del self.models[i]
        for r in self.records:
            r["model_kept"] = r["id"] in self.models
        return len(gone)

    def current_of(self, recogniser) -> int | None:
        """The id of the run whose kept model is ``recogniser`` (the same object), or None."""
        return next((i for i, m in self.models.items() if m is recogniser and recogniser is not None), None)
