"""The ``real`` object of ``bench scale --data hand-pose``'s JSON, assembled from what :func:`.scale_real.run_real`
measured: the data and its parts, both methods' figures, the ratios, the bank, memory, times and load."""
from __future__ import annotations

import hashlib
import os

import numpy as np

from .hand_parts import TEST


def weights_digest(W: np.ndarray) -> str:
    """SHA-1 of the weight matrix, in row blocks (a memory map is read once, not copied)."""
    h = hashlib.sha1()
    for a in range(0, len(W), 8192):
        h.update(np.ascontiguousarray(W[a:a + 8192]).tobytes())
    return h.hexdigest()[:16]


def real_report(o: dict, *, spec, data, tdata, extra, used_extra, names, D: int, queries: dict, brute: dict, classmap: dict,
                timing: dict, d: int, p: int, bank: dict, quiet, seconds: dict, placed, load_start, folder,
                peak: tuple[float, float], images_per_class: int, split_positions: dict) -> dict:
    """The ``real`` object of the JSON: what was run, on which parts, the two methods' figures and ratios.
    ``bank``: ``{"alpha", "weights_file", "W"}`` (the final weights, in memory or mapped); ``peak``: the peak
    memory (GB) of this process and its children."""
    from .classmap_report import headline
    from .latency import speedups

    C, W = data.n_classes, bank["W"]
    peak, peak_children = peak
    return {
        "data": "hand-pose", "classes": C, "orientations": spec["orientations"], "shapes": len(set(s.split(" · ")[0]
                                                                                                  for s in names)),
        "images_per_class": int(images_per_class),
        "split_positions": split_positions,
        "features": {"name": "hog", "D": D}, "queries": queries,
        "extra_images": None if extra is None else {
            "seed": int(o["extra_seed"]), "images_per_class": int(o["extra_images"]), "folder": extra[0].folder.name,
            "used_per_class": int(used_extra or 0), "for": "class embeddings only"},
        "brute_force": brute, "classmap": classmap,
        "accuracy_gap_points": 100 * (brute["accuracy"] - classmap["accuracy"]),
        **headline(C, D, int(d), classmap["evaluations"], speedups(timing)),
        "seed": int(o["seed"]), "test_seed": o.get("test_seed"), "test_part": tdata.folder.name if tdata is not data else
        f"positions {list(TEST)} of the seed's set (seen by earlier runs)",
        "bank": {"alpha": bank["alpha"], "weights_file": str(bank["weights_file"]), "weights_sha1": weights_digest(W),
                 "weights_in": "memory" if not isinstance(W, np.memmap) else "memory map",
                 "layout": "(C, D) float32 rows, one layout for brute force's GEMV and ClassMap's refine"},
        # what one query must read: brute force every weight row; the quantised scan every class's code
        "bytes_per_query": {"brute_force_weights": int(C * D * 4), "class_codes_uint8": int(C * -(-int(d) // 16) * 16),
                            "refine_rows": int(p * D * 4)},
        "quiet_before_timing": quiet,
        "peak_memory_gb": peak, "peak_memory_children_gb": peak_children,
        "seconds": {k2: round(v, 2) for k2, v in seconds.items()}, "data_cached": bool(data.cached),
        "backend": placed, "load_average": {"start": load_start, "end": list(os.getloadavg())},
        "cache_folder": str(folder),
    }
