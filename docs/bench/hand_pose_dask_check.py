# usage: PYTHONPATH=. python docs/bench/hand_pose_dask_check.py CACHE_FOLDER ALPHA  (after bench scale --data hand-pose)
"""Full-scale check: the 10^5-class bank's moments computed on a 2-worker local Dask cluster give the
weights the local bench run saved (within 1e-5)."""
import time, sys, json, os
import numpy as np
from pathlib import Path
from classmap_gui.core.classify.ridge_moments import ridge_moments
from classmap_gui.core.data.hand_chunks import open_hand_pose_memmap
from classmap_gui.bench.scale_real import FIT, VALIDATION
from classmap_gui.core.parallel import parallel_backend

if __name__ == "__main__":
    folder = Path(sys.argv[1]); alpha = float(sys.argv[2])
    data = open_hand_pose_memmap(folder); f = str(folder / "features.npy"); C = data.n_classes
    t = time.perf_counter()
    with parallel_backend("dask", n_workers=2) as where:
        fr, vr = data.rows(FIT), data.rows(VALIDATION)
        m1 = ridge_moments(f, data.labels(fr), C, rows=fr, n_jobs=2)
        m2 = ridge_moments(f, data.labels(vr), C, rows=vr, shift=m1.shift, n_jobs=2)
    W, b = (m1 + m2).path().weights(alpha)
    Wl = np.load(folder / "coef-local.npy", mmap_mode="r")
    diff = max(float(np.abs(W[a:a + 8192] - Wl[a:a + 8192]).max()) for a in range(0, C, 8192))
    out = {"classes": C, "alpha": alpha, "dask": where, "max_abs_weight_difference": diff,
           "max_abs_weight": float(max(np.abs(Wl[a:a + 8192]).max() for a in range(0, C, 8192))),
           "seconds": time.perf_counter() - t, "load_average": list(os.getloadavg())}
    print(json.dumps(out, default=str))
