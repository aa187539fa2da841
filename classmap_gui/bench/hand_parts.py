"""The hand-pose parts of the real scale bench (``scale_real``) beyond its training set: feature rows read
through short-lived maps, the test part generated afresh with its own seed, and the re-check of the chosen
graph beam on retired test parts (now validation) under the final model."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.errors import ConfigError
from ..core.progress import StopFn
from .common import cache_key
from .ivf_selection import exact_topp

#: positions of the seed's own set that were its test part before ``test_seed`` (2 images per class)
TEST = (6, 7)


def read_rows(path: Path, rows: np.ndarray, chunk: int = 16384) -> np.ndarray:
    """Rows of a ``.npy`` feature file into RAM ``(k, D) float32`` through short-lived maps (no mapping
    outlives the call, so mapped pages do not stay in this process's resident set)."""
    from ..core.classify.ridge_moments import rows_of

    rows = np.asarray(rows, np.int64)
    parts = [rows_of(str(path), rows[a:a + chunk]) for a in range(0, len(rows), chunk)]
    return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)


def recheck(o, spec, data, fpath, cm, W, b, index, k: int, seeds: list[int], should_stop: StopFn) -> dict:
    """:func:`.graph_selection.recheck_beam` on 1000 images of the test parts of ``seeds`` (retired, generated
    like a test part) embedded by the final model."""
    from .graph_selection import recheck_beam

    rng = np.random.default_rng(int(o["seed"]))
    Wr, br = (cm.reference_coef_, cm.reference_intercept_) if cm.reference_coef_ is not None else \
        (np.asarray(W[cm.reference_]), b[cm.reference_])
    parts = [test_part({**o, "test_seed": v}, spec, data, fpath, should_stop) for v in seeds]
    X = np.concatenate([read_rows(path, np.sort(rng.choice(rows, 1000 // len(parts), replace=False)))
                        for _, path, rows in parts])
    F = (X @ Wr.T + br).astype(np.float32)
    exact = exact_topp(F * cm.alpha_, np.ascontiguousarray(cm.class_embeddings_ * cm.alpha_), k)
    return recheck_beam(index, F, exact, k, target=float(o["target_recall"]), should_stop=should_stop,
                        parts=f"{len(F)} images of the retired test parts of seeds {', '.join(map(str, seeds))}")


def test_part(o: dict, spec: dict, data, fpath: Path, should_stop: StopFn):
    """``(set, features path, rows)`` of the test part: generated afresh with ``test_seed`` (its own cached
    folder, ``len(TEST)`` images per class), or positions ``TEST`` of the seed's set when it is none."""
    from ..core.data.hand_chunks import FEATURES_FILE, build_hand_pose_memmap

    ts = o.get("test_seed")
    if str(ts).lower() in ("none", ""):
        return data, fpath, data.rows(TEST)
    tspec = {**spec, "seed": int(ts), "ipc": len(TEST)}
    tdata = build_hand_pose_memmap(Path(o["cache_dir"]).expanduser() / f"hand-pose-test-{cache_key(tspec)}",
                                   shapes=o.get("shapes"), orientations=spec["orientations"],
                                   images_per_class=len(TEST), seed=int(ts), n_jobs=2, should_stop=should_stop)
    if tdata.class_names != data.class_names:
        raise ConfigError("bench scale: the fresh test part has other classes than the training part")
    return tdata, tdata.folder / FEATURES_FILE, tdata.rows(tuple(range(len(TEST))))


__all__ = ["TEST", "read_rows", "recheck", "test_part"]
