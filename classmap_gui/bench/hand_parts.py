"""The hand-pose parts of the real scale bench (``scale_real``) beyond its training set: feature rows read
through short-lived maps, the test part generated afresh with its own seed, and the re-check of the chosen
graph beam on retired test parts (now validation) under the final model."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.errors import ConfigError
from ..core.progress import StopFn, check_stop
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


def recheck(o, spec, data, fpath, cm, bank, index, p_cands: list[int], seeds: list[int], should_stop: StopFn) -> dict:
    """p and the graph beam held to their rules once more under the final model (the bank refitted on the
    validation images too, the class embeddings over every training image: the geometry the choices were made
    on shifts), on ``recheck_images`` images of the retired test parts of ``seeds`` (now validation):

    * ``p``: from the chosen ``cm.p`` up ``p_cands``, the one operating-point rule
      (:func:`..core.selection.operating_point` over the exact filter, as on validation);
    * ``beam`` (a graph ``index`` only): :func:`.graph_selection.recheck_beam` at that p.

    Sets ``cm.p`` and ``index.ef_search``; returns ``{"p": record, "beam": record or None}``."""
    from ..core.classify.ann_index import FilterIndex
    from ..core.classify.classmap_sampled import use_filter_index
    from ..core.classify.ridge_moments import top_k_linear
    from ..core.selection import measured_gaps, operating_point, paired_se_from_rates
    from .graph_selection import recheck_beam

    rng = np.random.default_rng(int(o["seed"]))
    n_each = int(o.get("recheck_images") or 6000) // len(seeds)
    parts = [test_part({**o, "test_seed": v}, spec, data, fpath, should_stop) for v in seeds]
    picked = [(t, path, np.sort(rng.choice(rows, min(n_each, len(rows)), replace=False))) for t, path, rows in parts]
    X = np.concatenate([read_rows(path, r) for _, path, r in picked])
    y = np.concatenate([t.labels(r) for t, _, r in picked])
    where = f"{len(y)} images of the retired test parts of seeds {', '.join(map(str, seeds))}"
    bf = top_k_linear(X, bank.coef_, bank.intercept_, 1)[:, 0]
    bf_acc = float(np.mean(bf == y))
    use_filter_index(cm, FilterIndex(method="exact").fit(cm.class_embeddings_, cm.alpha_))
    rows = []
    for p in [v for v in p_cands if v >= cm.p]:
        cm.set_params(p=min(p, cm.n_classes_))
        pr = cm.predict_result(X, top=1, bank=bank)
        lost, gained = float(np.mean((pr.labels != y) & (bf == y))), float(np.mean((pr.labels == y) & (bf != y)))
        rows.append({"p": p, "accuracy": float(np.mean(pr.labels == y)), "lost": lost,
                     "difference_se": paired_se_from_rates(lost, gained, len(y)),
                     "evaluations": float(pr.evaluations.mean())})
        check_stop(should_stop)
    sel = operating_point(measured_gaps(rows, bf_acc), ("p",), tolerance=float(o["tolerance"]), gaps="re-checked",
                          by=f"gap to brute force (exact filter) under the final model on {where}",
                          brute_force_accuracy=bf_acc, queries=len(y), parameter="classmap.p", split=f"validation: {where}")
    cm.set_params(p=min(sel["chosen"]["p"], cm.n_classes_))
    cm.clear_caches()  # the exact index was for the re-check; the caller sets the model's own
    beam = None
    if index is not None:
        F = np.ascontiguousarray(cm.reference_outputs(bank, X[:1000]), np.float32)
        exact = exact_topp(F * cm.alpha_, np.ascontiguousarray(cm.class_embeddings_ * cm.alpha_), cm.p)
        beam = recheck_beam(index, F, exact, cm.p, target=float(o["target_recall"]), should_stop=should_stop,
                            parts=f"{len(F)} of the {where}")
    return {"p": sel, "beam": beam}


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
