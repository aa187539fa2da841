"""How faithful the live map's marker is: placement rule of core/explore/live_map.py on PCA and t-SNE maps.

    PYTHONPATH=. .venv/bin/python scripts/experiments/live_map_faithful.py MODEL [--dots 1000] [--queries 1000]

MODEL: a ClassMap model of hand-pose classes. New images are generated with other seeds than any
training set (seed 11: the map's dots; seed 12: validation queries, on which the number of nearest
classes ``place_k`` is chosen; seed 13: the reported queries). Both layouts hold every class and the
dots, as the Explore map does. For each query placed on the map, ``faithful@k`` is the share of the k
classes nearest the marker on the map that are among its k nearest classes in the embedding (filter
L1), for k = 10 and k = p (how many of the ringed candidates lie around the marker). Prints JSON with
the load average.
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--shapes", type=int, help="the model's first N hand shapes (default all 81: a smoke run uses a few)")
    ap.add_argument("--orientations", type=int, help="N of the 30 orientations (default all)")
    ap.add_argument("--dots", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=1000)
    a = ap.parse_args()
    from classmap_gui.core.explore import live_map as lm
    from classmap_gui.core.data.hand_pose import generate_hand_pose
    from classmap_gui.core.explore.embedding_map import pca_layout, tsne_layout
    from classmap_gui.core.recogniser import Recogniser

    rec = Recogniser.load(a.model)
    cm = rec.classmap
    C = len(cm.class_embeddings_)
    classes = np.ascontiguousarray(cm.class_embeddings_ * cm.alpha_, np.float32)

    def embedded(seed: int, n: int) -> np.ndarray:
        ims = generate_hand_pose(images_per_class=1, size=rec.image_size, seed=seed, shapes=a.shapes,
                                 orientations=a.orientations)
        pick = np.sort(np.random.default_rng(seed).choice(len(ims), size=min(n, len(ims)), replace=False))
        return lm.query_embedding(cm, rec.classifier, rec.transform(ims.images[pick]))

    dots, val, test = embedded(11, a.dots), embedded(12, a.queries), embedded(13, a.queries)
    out = {"model": a.model, "classes": C, "p": int(cm.p), "dots": len(dots), "queries": len(test),
           "load_before": round(os.getloadavg()[0], 2)}
    P = np.vstack([classes, dots])
    t0 = time.perf_counter()
    layouts = {"pca": pca_layout(P), "tsne": tsne_layout(P)}
    out["layout_seconds"] = round(time.perf_counter() - t0, 1)
    for name, Y in layouts.items():
        xy = Y[:C]
        val_scores = {k: lm.placement_faithfulness(val, classes, xy, k=10, place_k=k) for k in (1, 2, 3, 5, 10, 20)}
        best = max(val_scores, key=val_scores.get)
        out[name] = {"validation_faithful@10_by_place_k": {str(k): round(v, 3) for k, v in val_scores.items()},
                     "best_place_k_on_validation": best, "PLACE_K": lm.PLACE_K,
                     "test_faithful@10": round(lm.placement_faithfulness(test, classes, xy, k=10), 3),
                     "test_faithful@p": round(lm.placement_faithfulness(test, classes, xy, k=int(cm.p)), 3),
                     "chance@10": round(10 / C, 4), "chance@p": round(int(cm.p) / C, 4)}
    out["load_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
