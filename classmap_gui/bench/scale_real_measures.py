"""What ``bench scale``'s real part measures beside accuracy and how it keeps its model: peak memory,
scores by pose, where one query's time goes, and the model saved as the app saves it.
"""
from __future__ import annotations

import resource

import numpy as np


def peak_gb() -> tuple[float, float]:
    """The peak resident memory of this process and of its children, GB."""
    return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20)


def scores(pred_names: list[str], true_names: list[str], pred, true) -> dict:
    """Accuracy, and the share within 30 degrees of the true pose (by class names)."""
    from ..core.data.hand_pose import pose_match

    return {"accuracy": float(np.mean(np.asarray(pred) == np.asarray(true))),
            "accuracy_within_30": float(np.mean(pose_match(true_names, pred_names)))}


def stage_times(cm, bank, index, X: np.ndarray, F: np.ndarray, p: int) -> dict:
    """Where one query's time goes (medians over the rows of ``X`` / their embeddings ``F``, ms): ClassMap's
    single-query stages (embedding + filter, refine: ``Prediction.timings``) and the filter index alone."""
    from .ivf_selection import each_query

    stages = [cm.predict_result(x[None], top=1, bank=bank).timings for x in X]
    index_s = np.min([each_query(lambda f: index.search(f[None], p), F) for _ in range(3)], axis=0)
    return {"embedding_filter": 1e3 * float(np.median([t["embedding+filter"] for t in stages])),
            "refine": 1e3 * float(np.median([t["refine"] for t in stages])),
            "filter_index": 1e3 * float(np.median(index_s)), "queries": int(len(X))}


def save_model(path, bank, cm, names, chosen: dict, figures: dict) -> None:
    """The real-scale model as the app saves it (HOG, the bank, ClassMap), with its chosen index and figures."""
    from ..core.features.hog import HOGFeatures
    from ..core.recogniser import Recogniser

    hog = HOGFeatures().fit(np.zeros((1, 64, 64), np.uint8))
    meta = {"data": "hand-pose", "classes": len(names), "filter_index": dict(chosen),
            "test": {k: {m: v for m, v in f.items() if m in ("accuracy", "accuracy_within_30", "evaluations")}
                     for k, f in figures.items()}}
    Recogniser(hog, bank, cm, names, (64, 64), True, meta).save(path)
