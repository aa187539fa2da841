"""The Train panel's background jobs and what they report, without a window: training (with its run
record), re-evaluating a loaded or restored recogniser on the part it held out (capture bursts kept whole),
and how the data is, or will be, split."""
from __future__ import annotations

import time

import numpy as np

from ...core.progress import sub_progress


class TrainOutcome:
    """What one training run produced, for the project and the result views; ``record`` is its run record
    (None for a re-evaluation), ``split_info`` how the data was split."""

    def __init__(self, recogniser, report, test_set, test_pred, settings, seconds, record=None, split_info=None):
        self.recogniser, self.report = recogniser, report
        self.test_set, self.test_pred, self.settings, self.seconds = test_set, test_pred, settings, seconds
        self.record, self.split_info = record, split_info


def _config(settings: dict):
    from ...core.train.training import TrainConfig
    return TrainConfig.from_dict({k: v for k, v in settings.items() if k in TrainConfig.__dataclass_fields__})


def held_out_part(imageset, settings: dict):
    """The test images training held out with ``settings`` (the whole set when it cannot be derived), capture
    bursts kept whole as in training: for a recogniser reopened from disk or restored from a run."""
    from ...core.train.training import split_parts
    try:
        cfg = _config(settings)
        if not cfg.test_fraction:
            return imageset
        return imageset.subset(split_parts(imageset.labels, cfg, imageset.groups)["test"])
    except Exception:  # noqa: BLE001 - data edited since training: evaluate on the whole set
        return imageset


def split_text(info: dict) -> tuple[str, bool]:
    """How the data was (or will be) split, for people, and whether that needs a warning."""
    parts = ", ".join(f"{k} {v}" for k, v in (info.get("groups_per_part") or {}).items() if v)
    if info.get("by") == "capture group":
        text = f"Split grouped by capture burst: {info['groups']} bursts ({parts}); frames of a burst stay together."
        shared = sum(int(v) for v in (info.get("groups_per_part") or {}).values()) - int(info["groups"])
        if shared > 0:  # the parts' counts do not add up: say why rather than leave a sum that looks wrong
            text = (text[:-1] + f", except {shared} burst(s) counted in two parts: a class with fewer bursts than "
                    "parts has a burst split between them.")
    else:
        text = "Split by image: no capture bursts in this data (each image is on its own)."
    few = info.get("too_few") or []
    if few:
        names = ", ".join(repr(n) for n in few[:8]) + (" …" if len(few) > 8 else "")
        text += (f" ⚠ {len(few)} class(es) have fewer than {info['needed']} bursts, so their test images come "
                 f"from bursts they were trained on and their accuracy flatters: {names}. Capture more bursts.")
    return text, bool(few)


def split_preview(imageset, settings: dict) -> dict | None:
    """How training would split ``imageset`` with ``settings`` now. Only sets with bursts are split here
    (0.1 s for 145 800 images in 24 300 bursts); without bursts the answer is known, and scikit-learn's
    stratified split of that many images would hold the window for seconds."""
    from ...core.train.training import split_with_info
    if not imageset.has_bursts:
        return {"by": "image", "groups": len(imageset), "too_few": [], "needed": 0, "groups_per_part": {}}
    try:
        _, info = split_with_info(imageset.labels, _config(settings), imageset.groups)
    except Exception:  # noqa: BLE001 - settings being edited or too few images: training will say why
        return None
    return {**info, "too_few": [imageset.class_names[c] for c in info["too_few"]]}


def train_task(imageset, settings: dict, scheduler: str | None = None):
    """The background job: train with core, then predict the held-out images for inspection.

    ``scheduler``: a Dask scheduler address to send encoding and bank training to (None: this machine).
    """
    def work(progress, should_stop):
        from ...core.parallel import parallel_backend
        from ...core.train.training import TrainConfig, train
        imageset.check_trainable()
        cfg = TrainConfig.from_dict(settings)
        t0 = time.perf_counter()
        if scheduler:
            progress(0.0, f"connecting to the Dask scheduler {scheduler}")
        from ...core.project.runs import run_record
        with parallel_backend(scheduler=scheduler or None):
            result = train(imageset, cfg, progress=sub_progress(progress, 0.0, 0.95), should_stop=should_stop)
        # the part the report is on (the held-out test part, else the training part) and its predictions
        test, pred = imageset.subset(result.split[result.report_on]), result.test_predictions.labels
        progress(0.97, "keeping the run's record")
        record = run_record(result, imageset, seconds=time.perf_counter() - t0)
        seconds = time.perf_counter() - t0  # the whole job: the Stages log's stages add up to it
        return TrainOutcome(result.recogniser, result.report, test, np.asarray(pred, np.int64), settings, seconds,
                            record, result.split_info)
    return work


def as_recorded(out: TrainOutcome, record: dict | None) -> TrainOutcome:
    """A re-evaluation of a kept run's model, showing the speed-up and training time that run recorded (the
    Runs table's figures) instead of a new timing: a timing taken again, while the window draws, read
    "1.0× slower" next to the recorded "1.34×". Accuracy and predictions are the ones just computed."""
    from dataclasses import replace
    if record is None:
        return out
    report = replace(out.report, latency_speedup=record.get("latency_speedup"))
    return TrainOutcome(out.recogniser, report, out.test_set, out.test_pred, out.settings,
                        float(record.get("train_seconds", float("nan"))))


def evaluate_task(rec, imageset, settings: dict):
    """Re-evaluate a loaded recogniser on the part its settings held out."""
    def work(progress, should_stop):
        from ...core.train.training import evaluate
        test = held_out_part(imageset, settings)
        rep = evaluate(rec, test, progress=progress, should_stop=should_stop)
        pred = rec.predict(test.images, top=1).labels
        return TrainOutcome(rec, rep, test, np.asarray(pred, np.int64), settings, float("nan"))
    return work
