"""The hand model's re-crop classifier on validation crops: images per class x descriptor.

What bounds `bench scan`'s shape accuracy is the classifier that names the re-cropped hand
(`core/detect/reading.py`): the deployed bank (HOG 1764-D, ridge one-vs-all, 32 `varied` images per class)
names the exact class of its own held-out validation crops in under a fifth of them. This script measures,
on validation material only, how that moves with

* images per class: 32 / 64 / 128 (nested: the 64 hold the 32, the 128 hold the 64);
* the descriptor: HOG 8-px cells (the product's), its square root (Hellinger), 6-px cells, 18 signed bins,
  8-px + 6-px cells concatenated, and two non-linear classifiers at a linear classifier's cost (a second
  stage for the few re-crops a frame classifies): an explicit chi-square kernel map of the 8-px HOG and
  6144 random Fourier features of it (an RBF kernel); optionally 4-px cells;
* the classifier's target: the exact class (2430-way in the product; a shape is then read off the best
  class, or as the reader does, by the sum of its orientation classes' softmax probabilities) or the shape
  itself (81-way ridge, orientations pooled).

Data: the `varied` style with the hand model's framing jitter (`pose_model.BUILD_OPTIONS`), the training
seed (0), ``--orientations`` of the 30 spread evenly (default 10: all 81 shapes, a third of the
orientations, so that 128 images per class fit the time; every setting sees the same classes and images).
Per class, positions 0..127 are the training pool, the next 8 the *choice* part (each setting's ridge
penalty and reader temperature are chosen there), the next 8 the *report* part (the figures). No test
seed, test video or the `camera` style is used.

Cost: per descriptor the seconds of features and of the normal-equation accumulation per tranche of
images, of each penalty's solve, and the milliseconds per re-crop (descriptor + scores of all 2430 classes,
one crop at a time as the reader's nine crops are, one thread), each with the load average.

    PYTHONPATH=. nice -n 10 .venv/bin/python scripts/experiments/hands_reading_curve.py          # ~25 min on 2 cores
    PYTHONPATH=. .venv/bin/python scripts/experiments/hands_reading_curve.py --orientations 2 --ipc 8,16 --per-part 2 --quick
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from pathlib import Path

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from classmap_gui.cli.bench import revision
from classmap_gui.core.data.hand_pose import generate_hand_pose, pose_scores
from classmap_gui.core.data.hand_style import STYLES
from classmap_gui.core.detect.pose_model import BUILD_OPTIONS
from classmap_gui.core.detect.reading import shape_groups
from classmap_gui.core.features.hog import HOGFeatures

OUT = Path(__file__).resolve().parents[2] / "docs" / "bench" / "hands-reading-curve.json"
RELATIVE_PENALTIES = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)   # x trace(centred Gram) / D
TEMPERATURES = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05)
RFF_FEATURES = 6144
LDA_SHRINKAGE = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)   # x trace(within-class scatter) / D
CHUNK = 4096


def _hog(**kw):
    h = HOGFeatures(n_jobs=1, **kw)
    return lambda ims: h.fit(ims[:1]).transform(ims)


def _chi2(f):
    from sklearn.kernel_approximation import AdditiveChi2Sampler
    m = AdditiveChi2Sampler(sample_steps=2)
    return lambda ims: m.fit_transform(f(ims)).astype(np.float32)


def _rff(f):
    """Random Fourier features of ``f`` (an RBF kernel, Rahimi & Recht): sqrt(2/m) cos(x Omega + phi); the
    bandwidth (``_RFF["sigma"]``) is the median distance between training-pool descriptors, set in main."""
    def g(ims):
        if "omega" not in _RFF:
            rng = np.random.default_rng(7)
            x = f(ims[:1])
            _RFF["omega"] = (rng.standard_normal((x.shape[1], RFF_FEATURES)) / _RFF["sigma"]).astype(np.float32)
            _RFF["phi"] = rng.uniform(0, 2 * np.pi, RFF_FEATURES).astype(np.float32)
        return np.float32(np.sqrt(2.0 / RFF_FEATURES)) * np.cos(f(ims) @ _RFF["omega"] + _RFF["phi"])
    return g


_RFF: dict = {}
HOG8 = _hog()
DESCRIPTORS = {
    "hog8": HOG8,
    "hog8-sqrt": lambda ims: np.sqrt(HOG8(ims)),
    "hog6": _hog(cell_size=6, block_size=12, block_stride=6),
    "hog8-signed18": _hog(n_bins=18, signed=True),
    "hog8+hog6": lambda ims: np.concatenate([HOG8(ims), DESCRIPTORS["hog6"](ims)], 1),
    "hog8-chi2": _chi2(HOG8),
    "hog8-rff": _rff(HOG8),
    "hog4": _hog(cell_size=4, block_size=8, block_stride=4),
}


def _load():
    return round(os.getloadavg()[0], 2)


def _features(f, images):
    """``f`` over ``images`` in chunks, two threads (the build's)."""
    from joblib import Parallel, delayed
    parts = Parallel(n_jobs=2, backend="threading")(delayed(f)(images[a:a + 512]) for a in range(0, len(images), 512))
    return np.concatenate(parts).astype(np.float32)


def _accumulate(f, images, labels, C):
    """Sums for a ridge on ``f(images)``: n, sum x, X^T X (float64), per-class sums of x (C, D)."""
    n, s, G, B = 0, None, None, None
    for a in range(0, len(images), CHUNK):
        X = _features(f, images[a:a + CHUNK])
        y = labels[a:a + CHUNK]
        if G is None:
            D = X.shape[1]
            s, G, B = np.zeros(D), np.zeros((D, D)), np.zeros((C, D))
        G += X.T @ X
        B += sp.csr_matrix((np.ones(len(y)), (y, np.arange(len(y)))), shape=(C, len(y))) @ X
        s += X.sum(0, dtype=np.float64)
        n += len(X)
    return {"n": n, "s": s, "G": G, "B": B}


def _sum(parts):
    return {k: sum(p[k] for p in parts) for k in parts[0]}


def _ridges(acc, targets, rels):
    """Ridge to +-1 targets (the ova-ridge bank's maths), one Cholesky factor per relative penalty shared by
    every target map: yields ``(rel, [(W (D, K), b (K,)) per map], seconds)``. A map ``(K, C)`` 0/1 sends
    classes to targets (identity: the class bank; shapes: the shape bank)."""
    n, mu = acc["n"], acc["s"] / acc["n"]
    Gc = acc["G"] - n * np.outer(mu, mu)
    rhs, bias = [], []
    for Y in targets:
        cnt = Y @ acc["class_counts"]
        rhs.append(2.0 * (Y @ acc["B"] - np.outer(cnt, mu)).T)
        bias.append(2.0 * cnt / n - 1.0)
    sizes = np.cumsum([0] + [r.shape[1] for r in rhs])
    R = np.concatenate(rhs, 1)
    scale = np.trace(Gc) / len(Gc)
    for rel in rels:
        t = time.perf_counter()
        A = Gc.copy()
        A[np.diag_indices_from(A)] += rel * scale
        W = sla.cho_solve(sla.cho_factor(A, overwrite_a=True, check_finite=False), R, check_finite=False)
        yield rel, [(W[:, a:e].astype(np.float32), (y - mu @ W[:, a:e]).astype(np.float32))
                    for a, e, y in zip(sizes[:-1], sizes[1:], bias)], time.perf_counter() - t


def _lda(acc, rels):
    """Linear discriminant analysis from the same sums (shared within-class covariance, shrunk by ``rel``
    x trace/D; equal priors): yields ``(rel, W (D, C), b (C,))``. Also a linear bank a ClassMap can filter."""
    cnt = np.maximum(acc["class_counts"], 1.0)
    M = acc["B"] / cnt[:, None]                                 # class means (C, D)
    Sw = acc["G"] - (acc["B"].T / cnt) @ acc["B"]
    scale = np.trace(Sw) / len(Sw)
    for rel in rels:
        A = Sw.copy()
        A[np.diag_indices_from(A)] += rel * scale
        W = sla.cho_solve(sla.cho_factor(A, overwrite_a=True, check_finite=False), M.T, check_finite=False)
        yield rel, W.astype(np.float32), (-0.5 * np.einsum("cd,dc->c", M, W)).astype(np.float32)


def _softmax_shape(S, groups, n_groups, T):
    P = np.exp((S - S.max(1, keepdims=True)) / T)
    P /= P.sum(1, keepdims=True)
    Sh = np.zeros((len(S), n_groups))
    for g in range(n_groups):
        Sh[:, g] = P[:, groups == g].sum(1)
    return Sh.argmax(1)


def _per_crop_ms(f, D, images, reps=30):
    """One thread: descriptor of one 64x64 crop + the scores of all 2430 classes, ms per crop (median)."""
    W = np.random.default_rng(0).standard_normal((D, 2430)).astype(np.float32)
    from threadpoolctl import threadpool_limits
    ts = []
    with threadpool_limits(1):
        for r in range(reps):
            t = time.perf_counter()
            for i in range(9):
                j = (r * 9 + i) % len(images)
                _ = f(images[j:j + 1]) @ W
            ts.append((time.perf_counter() - t) / 9 * 1e3)
    return float(np.median(ts))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--orientations", type=int, default=10)
    ap.add_argument("--shapes", default=None)
    ap.add_argument("--ipc", default="32,64,128")
    ap.add_argument("--per-part", type=int, default=8, help="choice / report images per class")
    ap.add_argument("--descriptors", default="hog8,hog8-sqrt,hog6,hog8-signed18,hog8+hog6,hog8-chi2,hog8-rff")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--style", default="varied", choices=("varied", "clean"),
                    help="clean: the ceiling without the randomised domain (same framing jitter)")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--lda", action="store_true", help="also linear discriminant analysis (a linear bank)")
    ap.add_argument("--quick", action="store_true", help="a smoke run: nothing written unless --out given")
    a = ap.parse_args()
    ipcs = [int(v) for v in a.ipc.split(",")]
    per_class = ipcs[-1] + 2 * a.per_part
    style = dataclasses.replace(STYLES[a.style], shift_jitter=BUILD_OPTIONS["shift_jitter"][0],
                                scale_jitter=BUILD_OPTIONS["scale_jitter"][0])
    res = {"bench": "hands-reading-curve (scripts/experiments/hands_reading_curve.py)",
           "revision": revision(),
           "test_seed": None,
           "test_part": "none: validation only (held-out crops of the build's varied style, seed 0: per class 128 "
                        "training, 8 choice, 8 report positions); no test seed, test video or camera image",
           "command": "PYTHONPATH=. nice -n 10 .venv/bin/python scripts/experiments/hands_reading_curve.py " + " ".join(
               f"--{k.replace('_', '-')} {v}" for k, v in vars(a).items() if k not in ("out", "quick", "lda"))
               + (" --lda" if a.lda else ""),
           "cpu_count": os.cpu_count(), "load_start": _load()}
    t0 = time.perf_counter()
    ims = generate_hand_pose(shapes=a.shapes, orientations=a.orientations, images_per_class=per_class,
                             style=style, seed=a.seed, n_jobs=-1)
    names = list(ims.class_names)
    C = len(names)
    groups, gnames, _ = shape_groups(names)
    pos = np.arange(len(ims)) % per_class          # class-major: the position of an image in its class
    edges = [0, *ipcs]
    tranche = [np.flatnonzero((pos >= lo) & (pos < hi)) for lo, hi in zip(edges[:-1], edges[1:])]
    choice = np.flatnonzero((pos >= ipcs[-1]) & (pos < ipcs[-1] + a.per_part))
    report = np.flatnonzero(pos >= ipcs[-1] + a.per_part)
    res["generate"] = {"images": len(ims), "seconds": round(time.perf_counter() - t0, 1), "load_after": _load()}
    res["selection"] = {
        "split": "validation", "style": f"{a.style} (with the hand model's framing jitter)", "seed": a.seed,
        "classes": C, "shapes": len(gnames), "orientations_per_shape": C // len(gnames),
        "training_pool": f"positions 0-{ipcs[-1] - 1} of every class (the first k for k images per class)",
        "choice_part": f"positions {ipcs[-1]}-{ipcs[-1] + a.per_part - 1}: each setting's ridge penalty "
                       "(relative to trace(G)/D) and reader temperature chosen here",
        "report_part": f"positions {ipcs[-1] + a.per_part}-{per_class - 1}: the figures",
        "relative_penalties": list(RELATIVE_PENALTIES), "temperatures": list(TEMPERATURES),
        "never_used": "test seeds, test videos, the camera style"}
    Ygroup = np.zeros((len(gnames), C))
    Ygroup[groups, np.arange(C)] = 1.0
    yc, yr = ims.labels[choice], ims.labels[report]
    true_r = [names[i] for i in yr]
    res["results"] = []
    sample = HOG8(ims.images[np.random.default_rng(3).choice(tranche[0], 2000, replace=len(tranche[0]) < 2000)])
    d = np.sqrt(np.maximum(((sample[:1000] - sample[1000:]) ** 2).sum(1), 0))
    _RFF["sigma"] = float(np.median(d))
    res["selection"]["rff"] = {"features": RFF_FEATURES, "sigma": round(_RFF["sigma"], 4),
                               "sigma_rule": "median distance of 1000 pairs of the training pool's HOG descriptors"}
    for dname in a.descriptors.split(","):
        f = DESCRIPTORS[dname]
        row_load = _load()
        t = time.perf_counter()
        Xc, Xr = _features(f, ims.images[choice]), _features(f, ims.images[report])
        acc_parts, acc_s, acc_cpu = [], [], []
        for idx in tranche:
            t1, c1 = time.perf_counter(), time.process_time()
            p = _accumulate(f, ims.images[idx], ims.labels[idx], C)
            p["class_counts"] = np.bincount(ims.labels[idx], minlength=C).astype(np.float64)
            acc_parts.append(p)
            acc_s.append(round(time.perf_counter() - t1, 1))
            acc_cpu.append(round(time.process_time() - c1, 1))
        per_crop = _per_crop_ms(f, Xc.shape[1], ims.images[report])
        for k, ipc in enumerate(ipcs):
            acc = _sum(acc_parts[:k + 1])
            row = {"descriptor": dname, "features": int(Xc.shape[1]), "images_per_class": ipc,
                   "load_before": row_load, "per_crop_ms": round(per_crop, 3),
                   "accumulate_seconds": round(sum(acc_s[:k + 1]), 1),
                   "accumulate_cpu_seconds": round(sum(acc_cpu[:k + 1]), 1), "accumulated_images": int(acc["n"])}
            # the class bank: penalty by exact-class accuracy on the choice part; the shape bank (81 targets,
            # orientations pooled): penalty by shape accuracy there
            best, sbest, scores, sscores, solve_s = None, None, {}, {}, []
            for rel, ((W, b), (W2, b2)), s in _ridges(acc, (np.eye(C), Ygroup), RELATIVE_PENALTIES):
                solve_s.append(s)
                hit = float(np.mean(np.argmax(Xc @ W + b, 1) == yc))
                shit = float(np.mean(np.argmax(Xc @ W2 + b2, 1) == groups[yc]))
                scores[rel], sscores[rel] = round(hit, 4), round(shit, 4)
                if best is None or hit > best[0]:
                    best = (hit, rel, W, b)
                if sbest is None or shit > sbest[0]:
                    sbest = (shit, rel, W2, b2)
            _, rel, W, b = best
            Sc, Sr = Xc @ W + b, Xr @ W + b
            temps = {T: float(np.mean(_softmax_shape(Sc, groups, len(gnames), T) == groups[yc])) for T in TEMPERATURES}
            T = max(temps, key=temps.get)
            ps = pose_scores(true_r, [names[i] for i in Sr.argmax(1)])
            row.update({k2: round(v, 4) for k2, v in ps.items()})
            row["shape_accuracy_summed"] = round(float(np.mean(
                _softmax_shape(Sr, groups, len(gnames), T) == groups[yr])), 4)
            row["shape_bank_accuracy"] = round(float(np.mean(np.argmax(Xr @ sbest[2] + sbest[3], 1) == groups[yr])), 4)
            if a.lda:  # LDA: shrinkage by exact-class accuracy on the choice part
                lbest, lscores = None, {}
                for rel3, W3, b3 in _lda(acc, LDA_SHRINKAGE):
                    hit = float(np.mean(np.argmax(Xc @ W3 + b3, 1) == yc))
                    lscores[rel3] = round(hit, 4)
                    if lbest is None or hit > lbest[0]:
                        lbest = (hit, rel3, W3, b3)
                S3 = Xr @ lbest[2] + lbest[3]
                row["lda"] = {**{k2: round(v, 4) for k2, v in pose_scores(true_r, [names[i] for i in S3.argmax(1)]).items()},
                              "shrinkage": lbest[1], "choice_scores": lscores}
            row["solve_seconds_per_penalty"] = round(float(np.median(solve_s)), 1)
            row["class_bank"] = {"relative_penalty": rel, "choice_scores": scores, "temperature": T,
                                 "temperature_choice_scores": {str(k2): round(v, 4) for k2, v in temps.items()}}
            row["shape_bank"] = {"relative_penalty": sbest[1], "choice_scores": sscores}
            row["load_after"] = _load()
            res["results"].append(row)
            print(json.dumps(row), flush=True)
        res["results"][-1]["descriptor_seconds"] = round(time.perf_counter() - t, 1)
        del acc_parts
        res["seconds"] = round(time.perf_counter() - t0, 1)
        res["load_end"] = _load()
        if not a.quick or a.out != str(OUT):
            tmp = Path(a.out).with_suffix(".tmp")
            tmp.write_text(json.dumps(res, indent=1) + "\n")
            os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
