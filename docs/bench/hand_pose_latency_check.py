# usage: PYTHONPATH=. python docs/bench/hand_pose_latency_check.py MODEL_DIR CACHE_FOLDER  (after bench scale --data hand-pose)
"""Single-query and batch latency of brute force and ClassMap re-measured on the saved 10^5-class model, with the
bench's own timers (``bench/latency.py``: interleaved rounds on 300 queries) and the load average beside them: the
ratio moves with the load (brute force is one pass over 706 MB of weights)."""
import json, os, sys, time
import numpy as np
from classmap_gui.bench.latency import brute_vs_classmap, medians, speedups
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
    timing = brute_vs_classmap(rec.classifier, rec.classmap, X, 300, 128)
    print(json.dumps({"model_load_s": load_s, "filter": type(rec.classmap._filter_index()).__name__, "p": rec.classmap.p,
                      "ms": {mode: medians(t) for mode, t in timing.items()}, "latency_speedup": speedups(timing)},
                     indent=1))
