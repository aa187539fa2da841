"""Difficulty calibration of `hand-pose`: HOG + ridge one-vs-all brute force, penalty chosen on validation.

Generates the clean set (40 / 10 / 10 images per class: bank training / validation (the embedding
part) / test), fits ridge one-vs-all banks on HOG of the training part for several penalties in one
Gram matrix, picks the penalty with the best validation accuracy, and reports test accuracy on the
clean test part and on a `camera`-style test set (exact class, and the paper's real-photo score:
same shape with orientation within 30 degrees). Nothing is chosen on a test part.

    PYTHONPATH=. .venv/bin/python scripts/experiments/hands_calibration.py            # full set, ~3-6 min here
    PYTHONPATH=. .venv/bin/python scripts/experiments/hands_calibration.py --shapes 27 # a third of the shapes
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from classmap_gui.core.data import load_dataset
from classmap_gui.core.data.hand_pose import pose_match, split_per_class
from classmap_gui.core.features.hog import HOGFeatures


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", type=int, default=None)
    ap.add_argument("--orientations", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--alphas", default="1,10,100,1000,3000,10000")
    ap.add_argument("--camera-per-class", type=int, default=10)
    a = ap.parse_args()
    t0 = time.perf_counter()
    opts = dict(shapes=a.shapes, orientations=a.orientations, n_jobs=-1)
    ims = load_dataset("hand-pose", seed=a.seed, **opts)
    t_gen = time.perf_counter() - t0
    tr, va, te = split_per_class(ims)
    cam = load_dataset("hand-pose", seed=a.seed + 1000, style="camera", images_per_class=a.camera_per_class, **opts)
    hog = HOGFeatures(n_jobs=-1).fit(tr.images)
    X = {k: hog.transform(p.images) for k, p in (("tr", tr), ("va", va), ("te", te), ("cam", cam))}
    C = len(ims.class_names)
    # Ridge to +-1 targets, all classes at once (the ova-ridge bank's maths), one Gram matrix for every alpha.
    Xtr = X["tr"].astype(np.float64)
    mu = Xtr.mean(0)
    Xc = Xtr - mu
    G = Xc.T @ Xc
    onehot = np.zeros((C, len(Xc)))
    onehot[tr.labels, np.arange(len(Xc))] = 1.0
    B = onehot @ Xc
    ymean = 2.0 * np.bincount(tr.labels, minlength=C) / len(Xc) - 1.0
    res = {"classes": C, "images": len(ims), "generate_s": round(t_gen, 1),
           "generation_images_per_second": round(len(ims) / t_gen), "load": os.getloadavg()[0], "alphas": {}}
    best = None
    for alpha in (float(s) for s in a.alphas.split(",")):
        Gd = G.copy()
        Gd[np.diag_indices_from(Gd)] += alpha
        W = np.linalg.solve(Gd, 2.0 * B.T)
        b = ymean - mu @ W
        acc = float(np.mean(np.argmax(X["va"] @ W + b, 1) == va.labels))
        res["alphas"][alpha] = round(acc, 4)
        if best is None or acc > best[0]:
            best = (acc, alpha, W, b)
    _, alpha, W, b = best
    pred = np.argmax(X["te"] @ W + b, 1)
    pc = np.argmax(X["cam"] @ W + b, 1)
    names = np.array(ims.class_names, dtype=object)
    ok = pred == te.labels
    same_shape = pose_match(list(names[te.labels[~ok]]), list(names[pred[~ok]]), max_degrees=1e9)
    res.update(alpha=alpha, validation=res["alphas"][alpha], test_clean=round(float(ok.mean()), 4),
               errors_same_shape=round(float(same_shape.mean()), 3) if len(same_shape) else None,
               test_clean_within_30=round(float(pose_match(list(names[te.labels]), list(names[pred])).mean()), 4),
               test_camera=round(float(np.mean(pc == cam.labels)), 4),
               test_camera_within_30=round(float(pose_match(list(names[cam.labels]), list(names[pc])).mean()), 4),
               seconds=round(time.perf_counter() - t0, 1))
    # Which shapes get mistaken for which (test errors to another shape, both directions counted together).
    shape_of = [n.split(" · ")[0] for n in ims.class_names]
    pairs: dict = {}
    for t, p in zip(te.labels[~ok], pred[~ok]):
        a, b = sorted((shape_of[t], shape_of[p]))
        if a != b:
            pairs[a + " / " + b] = pairs.get(a + " / " + b, 0) + 1
    res["confused_shapes"] = dict(sorted(pairs.items(), key=lambda kv: -kv[1])[:15])
    print(json.dumps(res))


if __name__ == "__main__":
    main()
