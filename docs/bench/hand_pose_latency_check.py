# usage: PYTHONPATH=. python docs/bench/hand_pose_latency_check.py MODEL_DIR CACHE_FOLDER  (after bench scale --data hand-pose)
"""Single-query and batch latency of brute force and ClassMap re-measured on the saved 10^5-class model, with the
bench's own timers (``bench/latency.py``) and the load average beside them: the bench's ratio moves with the load
(brute force is one pass over 706 MB of weights), so a second measurement at another load shows how much."""
import json, os, sys, time
import numpy as np
from classmap_gui.bench.latency import brute_force_latency, classmap_latency
from classmap_gui.bench.scale_real import TEST, read_rows
from classmap_gui.core.data.hand_chunks import FEATURES_FILE, open_hand_pose_memmap
from classmap_gui.core.recogniser import Recogniser

if __name__ == "__main__":
    t = time.perf_counter()
    rec = Recogniser.load(sys.argv[1])
    load_s = time.perf_counter() - t
    data = open_hand_pose_memmap(sys.argv[2])
    rows = np.sort(np.random.default_rng(0).choice(data.rows(TEST), 300, replace=False))
    X = read_rows(data.folder / FEATURES_FILE, rows)
    start = list(os.getloadavg())
    bf_single, bf_batch, kernel = brute_force_latency(rec.classifier, X, 10, 128)
    cm_single, cm_batch = classmap_latency(rec.classmap, rec.classifier, X, 10, 128)
    print(json.dumps({"model_load_s": load_s, "filter": type(rec.classmap._filter_index()).__name__, "p": rec.classmap.p,
                      "brute_force": {"latency_single_ms": bf_single, "latency_batch_ms": bf_batch, **kernel},
                      "classmap": {"latency_single_ms": cm_single, "latency_batch_ms": cm_batch},
                      "speedup_single": bf_single / cm_single, "speedup_batch": bf_batch / cm_batch,
                      "load_average": {"start": start, "end": list(os.getloadavg())}}, indent=1))
