"""The hand-pose parts of the real scale bench (``scale_real``) beyond its training set: feature rows read
through short-lived maps, the extra embedding images and the class means over them, the test part generated
afresh with its own seed, and the re-check of the chosen p and graph beam on retired test parts (now
validation) under the final model."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.errors import ConfigError
from ..core.progress import ProgressFn, StopFn, check_stop
from .common import cache_key
from .ivf_selection import exact_topp

#: positions of the seed's own set that were its test part before ``test_seed`` (2 images per class)
TEST = (6, 7)


def read_rows(path: Path, rows: np.ndarray, chunk: int = 16384) -> np.ndarray:
    """Rows of a ``.npy`` feature file into RAM ``(k, D) float32`` through short-lived maps (no mapping
    outlives the call, so mapped pages do not stay in this process's resident set)."""
    from ..core.classify.banks.ridge_moments import rows_of

    rows = np.asarray(rows, np.int64)
    parts = [rows_of(str(path), rows[a:a + chunk]) for a in range(0, len(rows), chunk)]
    return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)


def feature_chunks(fpath: Path, data, rows: np.ndarray, first=(), chunk: int = 32768):
    """``(X, y)`` pairs: those in ``first``, then ``rows`` of the feature file read ``chunk`` at a time."""
    yield from first
    for a in range(0, len(rows), chunk):
        r = rows[a:a + chunk]
        yield read_rows(fpath, r), data.labels(r)


def embedding_kinds(names: list[str], extra_images: int) -> dict[str, int | None]:
    """The class-embedding candidates ``names`` -> how many extra images each adds: ``embedding`` (None: medians
    over the embedding images), ``all`` (0) or ``all+N`` (the first N of the ``extra_images`` per class)."""
    kinds: dict[str, int | None] = {}
    for v in names:
        n = None if v == "embedding" else 0 if v == "all" else \
            int(v[4:]) if v.startswith("all+") and v[4:].isdigit() else -1
        if n is not None and not 0 <= n <= extra_images:
            raise ConfigError(f"class_embeddings: each of 'embedding', 'all' or 'all+N' (N from 1 to extra_images = "
                              f"{extra_images}), got {v!r}")
        kinds[v] = n
    if not kinds:
        raise ConfigError("class_embeddings: name at least one of 'embedding', 'all', 'all+N'")
    return kinds


def extra_part(o: dict, spec: dict, progress: ProgressFn = None, should_stop: StopFn = None):
    """The extra embedding images: ``extra_images`` per class generated with ``extra_seed`` (their own cached
    folder), used for class embeddings only (never the bank, a test or a re-check part: the caller refuses such an
    ``extra_seed`` first, :func:`check_extra_seed`). ``(set, features path)``, or None when ``extra_images`` is 0."""
    from ..core.data.hand_chunks import FEATURES_FILE, build_hand_pose_memmap

    n, es = int(o.get("extra_images") or 0), int(o.get("extra_seed") or 0)
    if n <= 0:
        return None
    espec = {**spec, "seed": es, "ipc": n}
    ex = build_hand_pose_memmap(Path(o["cache_dir"]).expanduser() / f"hand-pose-extra-{cache_key(espec)}",
                                shapes=o.get("shapes"), orientations=spec["orientations"], images_per_class=n,
                                seed=es, n_jobs=2, progress=progress, should_stop=should_stop)
    return ex, ex.folder / FEATURES_FILE


def check_extra_seed(o: dict, seed: int) -> None:
    """Refuse an ``extra_seed`` that is the training, the test or a re-check part's seed (the same images)."""
    es = int(o.get("extra_seed") or 0)
    used = {"training": seed, "test": o.get("test_seed"),
            **{f"re-check {v.strip()}": v for v in str(o.get("recheck_seeds") or "").split(",") if v.strip()}}
    for name, v in used.items():
        if str(v).strip().lower() not in ("none", "") and int(v) == es:
            raise ConfigError(f"extra_seed {es} is the seed of the {name} part: the extra embedding images must be "
                              "other images (choose another extra_seed)")


def extra_chunks(extra, n: int):
    """The first ``n`` extra images per class as ``(X, y)`` chunks (none when ``extra`` is None or n is 0)."""
    if extra is None or not n:
        return iter(())
    ex, path = extra
    return feature_chunks(path, ex, ex.rows(tuple(range(n))))


def class_means(cm, bank, kinds: dict[str, int | None], base_chunks, extra) -> dict[str, np.ndarray]:
    """Class embeddings for every ``all`` / ``all+N`` kind of :func:`embedding_kinds`: the means of the reference
    outputs over ``base_chunks``, then over each growing prefix of the extra images (each image read once)."""
    from ..core.classify.classmap.sampled import class_output_sums, set_class_means

    counts = sorted({n for n in kinds.values() if n is not None})
    out, sums, done = {}, None, 0
    for n in counts:
        if sums is None:
            sums = class_output_sums(cm, bank, base_chunks)
        if n > done:
            ex, path = extra
            sums = class_output_sums(cm, bank, feature_chunks(path, ex, ex.rows(tuple(range(done, n)))), sums)
            done = n
        for v, m in kinds.items():
            if m == n:
                out[v] = set_class_means(cm, sums).class_embeddings_
    return out


def recheck(o, spec, data, fpath, cm, bank, index, p_cands: list[int], seeds: list[int], should_stop: StopFn) -> dict:
    """p and the graph beam held to their rules once more under the final model (the bank refitted on the
    validation images too, the class embeddings over every training image: the geometry the choices were made
    on shifts), on ``recheck_images`` images of the retired test parts of ``seeds`` (now validation):

    * ``p``: from the chosen ``cm.p`` up ``p_cands``, the one operating-point rule
      (:func:`..core.selection.policy.operating_point` over the exact filter, as on validation);
    * ``beam`` (a graph ``index`` only): :func:`.graph_selection.recheck_beam` at that p.

    Sets ``cm.p`` and ``index.ef_search``; returns ``{"p": record, "beam": record or None}``."""
    from ..core.classify.filters.exact import ExactFilter
    from ..core.classify.banks.ridge_moments import top_k_linear
    from ..core.selection.policy import measured_gaps, operating_point, paired_se_from_rates
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
    own = cm.current_filter()
    cm.use_filter(ExactFilter().fit(cm.class_embeddings_, cm.alpha_))
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
    cm.use_filter(own)  # the exact index was for the re-check
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


__all__ = ["TEST", "check_extra_seed", "class_means", "embedding_kinds", "extra_chunks", "extra_part", "feature_chunks",
           "read_rows", "recheck", "test_part"]
