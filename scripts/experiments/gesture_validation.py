"""Validation-only harness for issue 48's recall figures: bench add-gesture's validation takes (seed
``--seed``, never a test seed) turned into feature rows once (``cache``), then variants of adding a gesture and
of reading it scored on those rows without rescanning (``score``). The boxes are the base model's scan (before
any gesture is added): an approximation of the bench, which rescans with each method after adding; the chosen
variant is then confirmed by ``classmap bench add-gesture`` itself on the same validation seed.

    python scripts/experiments/gesture_validation.py cache --model /tmp/hm/gesture --seed 47101 --out /tmp/gest48/val.npz
    python scripts/experiments/gesture_validation.py score --model /tmp/hm/gesture --cache /tmp/gest48/val.npz \
        --grid '[["brute_force", 9, 40], ["classmap", 9, 40]]'

``score`` prints one JSON line per (method, crops per recorded frame, rows or null) with the reading rules "sum"
and "fair": mean recall on the clean and camera takes, the share of the shape videos' key frames taken by a
gesture, and the 2430 classes' accuracy (one crop each) after adding.
"""

from __future__ import annotations

import argparse

import numpy as np

from classmap_gui.bench.gesture_takes import GESTURES
from classmap_gui.core.classify.banks.ridge_stats import RidgeStatistics
from classmap_gui.core.detect.boxes import iou
from classmap_gui.core.detect.reading import shape_groups, softmax_scores


def cache(model: str, seed: int, out: str, record_seed: int = 48001, clean=2, camera=1, videos=2) -> None:
    import cv2

    from classmap_gui.bench.add_gesture import _class_crops, _shape_frames
    from classmap_gui.bench.gesture_takes import GESTURES, gesture_pose, take_frames
    from classmap_gui.core.detect.gesture_crops import hand_crops
    from classmap_gui.core.detect.reading import RECROP_SHIFTS, square_crop
    from classmap_gui.core.detect.scanner import Scanner
    from classmap_gui.core.recogniser import Recogniser

    rec = Recogniser.load(model)
    sc = Scanner(rec, "brute_force")
    ctx = float(getattr(rec.features, "context_", 0.0))
    arrays = {}

    def frames_rows(frames, key):
        X, found, boxes = [], [], []
        for f in frames:
            r = sc.scan(f)
            ok = r.best_box is not None and r.hand_found
            found.append(ok)
            boxes.append(np.asarray(r.best_box if r.best_box is not None else (0, 0, 1, 1), np.float32))
            g = cv2.cvtColor(np.asarray(f), cv2.COLOR_RGB2GRAY)
            crops = np.stack(
                [square_crop(g, r.best_box if ok else (0, 0, 8, 8), rec.image_size, sh, ctx) for sh in RECROP_SHIFTS]
            )
            X.append(rec.transform(crops))
        arrays[key + "/X"] = np.asarray(X, np.float32)
        arrays[key + "/found"] = np.asarray(found)
        arrays[key + "/boxes"] = np.asarray(boxes)

    for i, (name, code) in enumerate(GESTURES):
        frames = take_frames(gesture_pose(code), record_seed + i, size=(240, 320), fps=15.0, seconds=5.0)[0]
        found = hand_crops(rec, frames, scanner=sc, shifts=9)
        arrays[f"rec{i}/X"] = rec.transform(found.crops).astype(np.float32)
        arrays[f"rec{i}/frames"] = found.frames
        for style, n in (("clean", clean), ("camera", camera)):
            for j in range(n):
                s = seed + 100 * i + 10 * (style == "camera") + j
                frames_rows(
                    take_frames(gesture_pose(code), s, style=style, size=(240, 320), fps=15.0, seconds=3.0)[0],
                    f"take{i}/{style}/{j}",
                )
        print("gesture", i, flush=True)
    frames, truth = _shape_frames([seed + 900 + k for k in range(videos)], (240, 320))
    frames_rows(frames, "shapes")
    arrays["shapes/truth"] = np.asarray(truth)
    crops, ctruth = _class_crops(rec, seed, None)
    arrays["classes/X"] = rec.transform(crops).astype(np.float32)
    arrays["classes/truth"] = np.asarray(ctruth)
    np.savez(out, **arrays)


T, H = 0.05, 5  # the hand model's saved reading temperature and history
A: dict = {}
base = None
names = [g[0] for g in GESTURES]


def add(rec, crops, weight, joint=False, offset=0.0):
    bank = rec.classifier
    st = RidgeStatistics.of_bank(bank)
    alpha = float(bank.alpha)
    Ws, Zs = [], []
    for i in range(len(names)):
        Z = A[f"rec{i}/X"][::9] if crops == 1 else A[f"rec{i}/X"]
        om = 1.0 if weight is None else weight / len(Z)
        st = st.with_rows_w(Z, om) if hasattr(st, "with_rows_w") else wrows(st, Z, om)
        Zs.append((Z, om))
        if not joint:
            Ws.append(solve(st, Z, om, alpha))
    if joint:
        Ws = [solve(st, Z, om, alpha) for Z, om in Zs]
    C0 = len(bank.classes_)
    bank.coef_ = np.vstack([bank.coef_] + [w[None] for w, _ in Ws]).astype(np.float32)
    bank.intercept_ = np.append(bank.intercept_, [b + offset for _, b in Ws]).astype(np.float32)
    bank.classes_ = np.arange(C0 + len(names))
    rec.class_names = list(rec.class_names) + names
    if rec.classmap is not None:
        X = np.concatenate([Z for Z, _ in Zs])
        y = np.concatenate([np.full(len(Z), C0 + i) for i, (Z, _) in enumerate(Zs)])
        rec.classmap.update_class_embeddings(bank, X, y)
    return rec


def wrows(st, Z, om):
    Z = np.asarray(Z, np.float64)
    m = om * len(Z)
    n = st.n + m
    mz = Z.mean(0)
    Zc = Z - mz
    d = st.mean - mz
    return RidgeStatistics(st.gram + om * Zc.T @ Zc + (st.n * m / n) * np.outer(d, d), (st.n * st.mean + m * mz) / n, n)


def solve(st, Z, om, alpha):
    from scipy.linalg import solve as s

    Z = np.asarray(Z, np.float64)
    m = om * len(Z)
    G = st.gram.copy()
    G[np.diag_indices_from(G)] += alpha
    w = s(G, 2.0 * (m * Z.mean(0) - m * st.mean), assume_a="pos")
    return w, (2.0 * m / st.n - 1.0) - float(st.mean @ w)


def parts(rec, method, X):
    if method == "brute_force":
        S = X @ rec.classifier.coef_.T + rec.classifier.intercept_
        ev = np.arange(S.shape[1])
        return [(ev, S[i]) for i in range(len(S))]
    pr = rec.classmap.predict_result(np.ascontiguousarray(X), bank=rec.classifier)
    return [(np.asarray(pr.top_classes[i]), np.asarray(pr.top_scores[i], np.float64)) for i in range(len(X))]


def read(prob, groups, gnames, rule):
    hand = groups >= 0
    if rule == "fair":
        sizes = np.bincount(groups[hand], minlength=len(gnames))
        sp = np.bincount(groups[hand], weights=prob[hand], minlength=len(gnames))
        mx = np.zeros(len(gnames))
        np.maximum.at(mx, groups[hand], prob[hand])
        multi = sizes > 1
        g = int(np.argmax(np.where(multi, sp, -1)))
        single = np.where(~multi, mx, -1)
        s1 = int(np.argmax(single))
        return gnames[s1] if single[s1] > mx[g] else gnames[g]
    if rule == "sum":
        sp = np.bincount(groups[hand], weights=prob[hand], minlength=len(gnames))
    else:
        sp = np.zeros(len(gnames))
        np.maximum.at(sp, groups[hand], prob[hand])
    return gnames[int(np.argmax(sp))]


def said(rec, method, key, rule, groups, gnames, crops=9):
    X, found, boxes = A[key + "/X"], A[key + "/found"], A[key + "/boxes"]
    C = len(groups)
    allp = parts(rec, method, X[:, :crops].reshape(-1, X.shape[-1]))
    out, track, last = [], [], None
    for f in range(len(X)):
        if not found[f]:
            track, last = [], None
            out.append(None)
            continue
        ps = allp[f * crops : (f + 1) * crops]
        p = np.mean([softmax_scores(c[groups[c] >= 0], s[groups[c] >= 0], C, T) for c, s in ps], axis=0)
        if last is not None and iou(last, boxes[f]) < 0.3:
            track = []
        track = (track + [p])[-H:]
        last = boxes[f]
        out.append(read(np.mean(track, axis=0), groups, gnames, rule))
    return out


def evaluate(method, crops, weight, joint=False, offset=0.0, rules=("sum", "fair")):
    rec = add(base.detached(), crops, weight, joint, offset)
    groups, gnames, _ = shape_groups(rec.class_names)
    res = {}
    for rule in rules:
        r = {}
        for style in ("clean", "camera"):
            rc = []
            for i, n in enumerate(names):
                s = [
                    x
                    for j in range(2 if style == "clean" else 1)
                    for x in said(rec, method, f"take{i}/{style}/{j}", rule, groups, gnames)
                ]
                rc.append(np.mean([x == n for x in s]))
            r[style] = float(np.mean(rc))
            r[style + "_min"] = float(np.min(rc))
        s = said(rec, method, "shapes", rule, groups, gnames)
        r["taken"] = float(np.mean([x in names for x in s]))
        # 2430: one crop each
        Xc = A["classes/X"]
        tr = A["classes/truth"]
        pp = parts(rec, method, Xc)
        got = [
            read(softmax_scores(c[groups[c] >= 0], s[groups[c] >= 0], len(groups), T), groups, gnames, rule)
            for c, s in pp
        ]
        r["acc2430"] = float(np.mean([g == t for g, t in zip(got, tr)]))
        r["taken2430"] = float(np.mean([g in names for g in got]))
        res[rule] = r
    return res


if __name__ == "__main__":
    import json

    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=["cache", "score"])
    ap.add_argument("--model", required=True)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--out")
    ap.add_argument("--cache")
    ap.add_argument("--grid", default='[["brute_force", 9, 40], ["classmap", 9, 40]]')
    a = ap.parse_args()
    if a.step == "cache":
        cache(a.model, a.seed, a.out)
    else:
        from classmap_gui.core.recogniser import Recogniser

        A.update(np.load(a.cache))
        base = Recogniser.load(a.model)
        for method, crops, rows in json.loads(a.grid):
            r = evaluate(method, crops, rows)
            print(json.dumps({"method": method, "crops": crops, "rows": rows, **r}), flush=True)
