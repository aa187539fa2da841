"""Time the Explore map's t-SNE on hand-pose and check the map still means something.

    PYTHONPATH=. .venv/bin/python scripts/experiments/explore_map_bench.py MODEL [--dots 5000] [--settings JSON ...]

MODEL: a hand-pose model folder with ClassMap (``classmap train --data hand-pose ... --classmap ...``).
Embeds ``--dots`` held-out images (the training run's own test part) and all 2430 classes, lays them out
by each t-SNE setting and prints JSON: seconds, the machine's load beside it, and two measures of the
map on the classes, against the embedding itself: ``knn_kept`` (share of each class's 10 nearest
classes in the filter's L1 that stay among its 10 nearest on the map) and ``shape_neighbour`` (share
of classes whose nearest class on the map has the same hand shape; chance is 29/2429).
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np


def knn_sets(Z: np.ndarray, k: int, metric: str) -> np.ndarray:
    from sklearn.neighbors import NearestNeighbors

    return NearestNeighbors(n_neighbors=k + 1, metric=metric).fit(Z).kneighbors(Z, return_distance=False)[:, 1:]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--shapes", type=int, help="the model's first N hand shapes (default all 81: a smoke run uses a few)")
    ap.add_argument("--orientations", type=int, help="N of the 30 orientations (default all)")
    ap.add_argument("--dots", type=int, default=5000)
    ap.add_argument("--points", help="an .npz with classes / queries / labels instead of embedding anew")
    ap.add_argument("--settings", nargs="*", default=['{}'])
    a = ap.parse_args()
    from classmap_gui.core.data.hand_pose import class_factors
    from classmap_gui.core.explore.embedding_map import TSNE_DEFAULTS, map_points, tsne_layout
    from classmap_gui.core.recogniser import Recogniser

    rec = Recogniser.load(a.model)
    if a.points:
        z = np.load(a.points)
        classes, queries = z["classes"], z["queries"][: a.dots]
    else:
        from classmap_gui.core.data import load_dataset
        from classmap_gui.core.train.training import TrainConfig, split_parts

        ims = load_dataset("hand-pose", shapes=a.shapes, orientations=a.orientations)
        test = split_parts(ims.labels, TrainConfig(classmap={}, test_fraction=0.2, seed=0))["test"]
        dots = np.sort(np.random.default_rng(0).choice(test, a.dots, replace=False))
        pts = map_points(rec.classmap, rec.classifier, rec.transform(ims.images[dots]))
        classes, queries = pts.classes, pts.queries
    P = np.vstack([classes, queries]).astype(np.float32)
    C = len(classes)
    shape = class_factors(rec.class_names)["shape_index"]
    true_knn = knn_sets(classes, 10, "manhattan")
    out = []
    for s in a.settings:
        kw = {**TSNE_DEFAULTS, **json.loads(s)}
        load0 = os.getloadavg()
        t0 = time.perf_counter()
        Y = tsne_layout(P, **kw)
        sec = time.perf_counter() - t0
        map_knn = knn_sets(Y[:C], 10, "euclidean")
        kept = np.mean([len(set(a_) & set(b_)) / 10 for a_, b_ in zip(true_knn, map_knn)])
        out.append({"settings": kw, "points": len(P), "classes": C, "dots": len(queries), "seconds": round(sec, 1),
                    "load_before": [round(v, 2) for v in load0], "load_after": [round(v, 2) for v in os.getloadavg()],
                    "knn_kept": round(float(kept), 3),
                    "shape_neighbour": round(float(np.mean(shape[map_knn[:, 0]] == shape)), 3)})
        print(json.dumps(out[-1]), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
