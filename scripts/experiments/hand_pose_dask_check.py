# usage: PYTHONPATH=. python scripts/experiments/hand_pose_dask_check.py BENCH_JSON MODEL_FOLDER [SCHEDULER]  (after bench scale
#        --data hand-pose --set save_model=MODEL_FOLDER; the bench's JSON names the cache folder, penalty and test part;
#        SCHEDULER tcp://HEAD:8786 runs it on that cluster, whose workers see the cache folder at the same path)
"""Full-scale check of the Dask backend: the 10^5-class model's training (the bank's moments, and from them the
weights, the reference classifiers and the class embeddings) recomputed on a 2-worker local Dask cluster gives
the model the local bench run saved, and the same predictions (brute force and ClassMap) on the bench's test
part. Prints one JSON object (``docs/bench/scale-hand-pose-dask.json``)."""
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from classmap_gui.bench.filter_selection import build_chosen
from classmap_gui.bench.scale_real import EMBEDDING, FIT, TEST, VALIDATION, final_embedding_chunks, read_rows
from classmap_gui.core.classify.classmap.sampled import set_mean_class_embeddings
from classmap_gui.core.classify.banks.ridge_moments import ova_ridge_bank, ridge_moments, top_k_linear
from classmap_gui.core.data.hand_chunks import FEATURES_FILE, open_hand_pose_memmap
from classmap_gui.core.parallel import parallel_backend
from classmap_gui.core.recogniser import Recogniser


if __name__ == "__main__":
    bench = json.loads(Path(sys.argv[1]).read_text())["real"]
    rec = Recogniser.load(sys.argv[2])
    folder = Path(bench["cache_folder"])
    data = open_hand_pose_memmap(folder)
    f = folder / FEATURES_FILE
    C, alpha = data.n_classes, float(bench["bank"]["alpha"])
    factor = float(bench["classmap"]["reference_penalty"])
    load_start = list(os.getloadavg())
    t = time.perf_counter()
    with parallel_backend("dask", scheduler=sys.argv[3] if len(sys.argv) > 3 else None, n_workers=2) as where:
        fr, vr = data.rows(FIT), data.rows(VALIDATION)
        m1 = ridge_moments(str(f), data.labels(fr), C, rows=fr, n_jobs=2)
        m2 = ridge_moments(str(f), data.labels(vr), C, rows=vr, shift=m1.shift, n_jobs=2)
        where = dict(where)
    path = (m1 + m2).path()
    W, b = path.weights(alpha)
    local, cm = rec.classifier, rec.classmap
    refs = cm.reference_
    dask_bank = ova_ridge_bank(W, b, alpha)
    Wl = np.asarray(local.coef_)
    out = {"classes": C, "alpha": alpha, "dask": where,
           "max_abs_weight_difference": float(max(np.abs(W[a:a + 8192] - Wl[a:a + 8192]).max()
                                                  for a in range(0, C, 8192))),
           "max_abs_weight": float(np.abs(Wl).max())}
    local_embeddings = cm.class_embeddings_
    if cm.reference_coef_ is not None:  # the reference bank refitted from the same moments
        Wr, br = path.weight_rows(alpha * factor, refs)
        out["max_abs_reference_weight_difference"] = float(np.abs(Wr - cm.reference_coef_).max())
        cm.reference_coef_, cm.reference_intercept_ = Wr, br
    del path, m1, m2
    if bench["classmap"]["class_embeddings"].startswith("all"):  # the bench's images, in its order of summation
        er, ex = data.rows(EMBEDDING), bench.get("extra_images")
        extra = None if not ex else (open_hand_pose_memmap(folder.parent / ex["folder"]),
                                     folder.parent / ex["folder"] / FEATURES_FILE)
        set_mean_class_embeddings(cm, dask_bank, final_embedding_chunks(f, data, read_rows(f, er), data.labels(er), extra,
                                                                        int(ex["used_per_class"]) if ex else 0))
    dask_embeddings = cm.class_embeddings_
    out["class_embeddings_identical"] = bool(np.array_equal(dask_embeddings, local_embeddings))
    out["max_abs_class_embedding_difference"] = float(np.abs(dask_embeddings - local_embeddings).max())
    # the Dask model: its own class embeddings and the filter index chosen on validation, built on them
    cm.use_filter(build_chosen(rec.metadata["filter_index"], cm.class_embeddings_, cm.alpha_))
    out["seconds_training"] = time.perf_counter() - t
    tfolder = folder.parent / bench["test_part"]
    tdata = open_hand_pose_memmap(tfolder)
    rng = np.random.default_rng(int(bench.get("seed", 0)))  # the bench's draws: 1000 validation images, then the test images
    rng.choice(data.rows(VALIDATION), size=int(bench["queries"]["validation"]), replace=False)
    rows = tdata.rows(tuple(range(len(TEST))))
    tq = np.sort(rng.choice(rows, size=min(len(rows), int(bench["queries"]["test"])), replace=False))
    Xt = read_rows(tfolder / FEATURES_FILE, tq)
    bf_dask = top_k_linear(Xt, W, b, 1)[:, 0]
    bf_local = top_k_linear(Xt, Wl, np.asarray(local.intercept_), 1)[:, 0]
    cm_dask = cm.predict_result(Xt, top=1, bank=dask_bank).labels
    local_rec = Recogniser.load(sys.argv[2])
    cm_local = local_rec.classmap.predict_result(Xt, top=1, bank=local_rec.classifier).labels
    out.update({"test_seed": bench["test_seed"], "test_part": bench["test_part"], "test_queries": int(len(tq)),
                "brute_force_predictions_identical": bool(np.array_equal(bf_dask, bf_local)),
                "classmap_predictions_identical": bool(np.array_equal(cm_dask, cm_local)),
                "classmap_predictions_differing": int(np.sum(cm_dask != cm_local)),
                "seconds": time.perf_counter() - t, "load_average": {"start": load_start, "end": list(os.getloadavg())}})
    print(json.dumps(out, default=str, indent=1))
