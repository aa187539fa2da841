#!/usr/bin/env python3
"""Standalone predictor of a recogniser exported by ClassMap Studio. Needs only numpy and OpenCV.

    python predict.py IMAGE [IMAGE ...] [--top 5] [--json]

Prints, per image, the ``top`` best classes with their scores, the same as ClassMap Studio's
``classmap predict`` on the same files. The model is ``model.json`` + ``arrays.npz`` next to
this file (``--model DIR`` to point elsewhere). The arrays are read with ``allow_pickle=False``
and checked against the shapes and dtypes ``model.json`` declares: a file holding a pickle is
refused, nothing in it runs.

Every step re-implements the app's computation in plain float32 numpy/OpenCV: image reading and
resizing, the feature map (pixels, HOG, single-layer k-means, random Fourier features, random
CNN), the
classifier bank (one-vs-all linear or rbf, all-pairs voting, compressive class sketches), ClassMap
filter-and-refine (v2/v3) and the top-p ranking. (This file is generated from classmap_gui/core/export_predict_template.py.)
"""
from __future__ import annotations

import argparse
import json
import sys
import zipfile
import zlib
from pathlib import Path

import cv2
import numpy as np

FORMAT = "classmap-export"
VERSION = 1
_KINDS = "biuf"


class ModelError(Exception):
    """The exported model is missing, damaged, unsafe or from a newer ClassMap Studio."""


# ---------------------------------------------------------------- model files

def load_model(folder: str | Path) -> tuple[dict, dict[str, np.ndarray]]:
    """``(doc, arrays)`` of the export in ``folder``; ModelError when anything is not as declared."""
    folder = Path(folder)
    try:
        doc = json.loads((folder / "model.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"{folder / 'model.json'}: cannot read the model ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ModelError(f"{folder}: not a ClassMap Studio export")
    if not isinstance(doc.get("version"), int) or doc["version"] > VERSION:
        raise ModelError(f"{folder}: export format {doc.get('version')!r} is newer than this predict.py reads")
    manifest = doc.get("arrays")
    if not isinstance(manifest, dict):
        raise ModelError(f"{folder}: the array manifest is missing")
    arrays = {}
    try:
        with np.load(folder / "arrays.npz", allow_pickle=False) as z:
            if set(z.files) != set(manifest):
                raise ModelError(f"{folder / 'arrays.npz'}: members differ from those model.json declares")
            for key, spec in manifest.items():
                dtype, shape = np.dtype(str(spec["dtype"])), tuple(int(s) for s in spec["shape"])
                if dtype.kind not in _KINDS:
                    raise ModelError(f"{folder / 'arrays.npz'}: array {key!r} declares dtype {dtype}; refused")
                arr = z[key]  # allow_pickle=False: an object (pickled) array raises ValueError, runs nothing
                if arr.dtype != dtype or arr.shape != shape:
                    raise ModelError(f"{folder / 'arrays.npz'}: array {key!r} is {arr.dtype}{arr.shape}, "
                                     f"declared {dtype}{shape}")
                arrays[key] = arr
    except ModelError:
        raise
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        if "pickle" in str(exc).lower():
            raise ModelError(f"{folder / 'arrays.npz'} holds a pickled object; refused without loading it") from None
        raise ModelError(f"{folder / 'arrays.npz'}: corrupt ({exc})") from None
    return doc, arrays


# ---------------------------------------------------------------- images

def read_image(path: str | Path, grey: bool) -> np.ndarray:
    """uint8 ``(h, w)`` grey or ``(h, w, 3)`` RGB, as ClassMap Studio reads files."""
    buf = np.fromfile(str(path), dtype=np.uint8)
    img = cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE if grey else cv2.IMREAD_COLOR) if buf.size else None
    if img is None:
        raise ValueError(f"{path} is not a readable image")
    return img if grey else cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


def fit_size(img: np.ndarray, size) -> np.ndarray:
    """Resize to ``size`` (h, w): area averaging when shrinking, linear when growing (as the app)."""
    h, w = int(size[0]), int(size[1])
    if img.shape[:2] == (h, w):
        return img
    shrink = img.shape[0] * img.shape[1] > h * w
    return cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)


def prepare(images: list[np.ndarray], image_size, grey: bool) -> np.ndarray:
    """Images of any size/colour -> ``(n, h, w)`` or ``(n, h, w, 3)`` uint8 at the model's size."""
    out = []
    for img in images:  # one resize per image: sizes may differ
        if img.ndim == 3 and img.shape[2] == 4:
            img = cv2.cvtColor(img, cv2.COLOR_RGBA2RGB)
        if grey and img.ndim == 3:
            img = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
        elif not grey and img.ndim == 2:
            img = cv2.cvtColor(img, cv2.COLOR_GRAY2RGB)
        out.append(np.ascontiguousarray(fit_size(img, image_size)))
    return np.stack(out)


# ---------------------------------------------------------------- feature maps

def _to_grey(X: np.ndarray) -> np.ndarray:
    n, h, w = X.shape[:3]
    return cv2.cvtColor(np.ascontiguousarray(X).reshape(n * h, w, 3), cv2.COLOR_RGB2GRAY).reshape(n, h, w)


def pixel_features(X: np.ndarray, spec: dict, arrays: dict) -> np.ndarray:
    if spec["size"] is not None:
        th, tw = spec["size"]
        h, w = X.shape[1:3]
        if (h, w) != (th, tw):
            interp = cv2.INTER_AREA if th <= h and tw <= w else cv2.INTER_LINEAR
            X = np.stack([cv2.resize(np.ascontiguousarray(x), (tw, th), interpolation=interp) for x in X])
    if spec["grey"] and X.ndim == 4:
        X = _to_grey(X)
    out = X.reshape(len(X), -1).astype(np.float32)
    out *= np.float32(1.0 / 255.0)
    if spec["standardize"]:
        out -= arrays["features.mean"]
        out /= arrays["features.scale"]
    return out


def hog_features(X: np.ndarray, spec: dict, arrays: dict) -> np.ndarray:
    G = _to_grey(X) if X.ndim == 4 else X
    n, h, w = G.shape
    b, s, c, nb = spec["block_size"], spec["block_stride"], spec["cell_size"], spec["n_bins"]
    wh, ww = b + (h - b) // s * s, b + (w - b) // s * s
    top, left = (h - wh) // 2, (w - ww) // 2
    G = G[:, top:top + wh, left:left + ww]
    if spec["backend"] == "opencv":
        hog = cv2.HOGDescriptor((ww, wh), (b, b), (s, s), (c, c), nb, 1, -1.0, 0, 0.2, False, 64, bool(spec["signed"]))
        return np.stack([hog.compute(np.ascontiguousarray(g)).reshape(-1) for g in G]).astype(np.float32)
    Ax, Ay = _axis_weights(ww, b, s, c), _axis_weights(wh, b, s, c)
    return np.concatenate([_hog_numpy(G[a:a + 64], Ay, Ax, b, s, c, nb, spec["signed"]) for a in range(0, n, 64)])


def _axis_weights(length: int, block: int, stride: int, cell: int) -> np.ndarray:
    ncb = block // cell
    nb = (length - block) // stride + 1
    sigma = (block + block) / 8.0
    t = np.arange(block, dtype=np.float64)
    g = np.exp(-((t - block / 2.0) ** 2) / (2.0 * sigma * sigma))
    pos = (t + 0.5) / cell - 0.5
    lin = np.clip(1.0 - np.abs(pos[:, None] - np.arange(ncb)[None, :]), 0.0, 1.0)
    wb = g[:, None] * lin
    M = np.zeros((length, nb, ncb), np.float64)
    k = np.arange(nb)
    M[(k[:, None] * stride + np.arange(block)[None, :]), k[:, None], :] = wb[None, :, :]
    return M.reshape(length, nb * ncb).astype(np.float32)


def _hog_numpy(G, Ay, Ax, block, stride, cell, n_bins, signed):
    m, h, w = G.shape
    ncb = block // cell
    nby, nbx = Ay.shape[1] // ncb, Ax.shape[1] // ncb
    x = G.astype(np.float32)
    p = np.pad(x, ((0, 0), (1, 1), (1, 1)), mode="reflect")
    dx = p[:, 1:-1, 2:] - p[:, 1:-1, :-2]
    dy = p[:, 2:, 1:-1] - p[:, :-2, 1:-1]
    mag = np.sqrt(dx * dx + dy * dy)
    a = np.arctan2(dy, dx)
    a *= np.float32(n_bins / (2 * np.pi if signed else np.pi))
    a -= np.float32(0.5)
    lo = np.floor(a)
    a -= lo
    lo_i = lo.astype(np.int32)
    lo_i %= n_bins
    hi_i = lo_i + 1
    hi_i[hi_i == n_bins] = 0
    V = np.zeros((m, h, n_bins, w), np.float32)
    base = (np.arange(m, dtype=np.int32)[:, None, None] * (h * n_bins * w)
            + np.arange(h, dtype=np.int32)[None, :, None] * (n_bins * w) + np.arange(w, dtype=np.int32)[None, None, :])
    lo_i *= w
    lo_i += base
    hi_i *= w
    hi_i += base
    hi_v = mag * a
    mag -= hi_v
    flat = V.reshape(-1)
    flat[lo_i] = mag
    flat[hi_i] = hi_v
    T = V.reshape(m * h * n_bins, w) @ Ax
    T = T.reshape(m, h, n_bins, nbx * ncb).transpose(0, 2, 3, 1)
    H = np.ascontiguousarray(T).reshape(-1, h) @ Ay
    H = H.reshape(m, n_bins, nbx, ncb, nby, ncb)
    H = H.transpose(0, 2, 4, 3, 5, 1).reshape(m, nbx * nby, ncb * ncb * n_bins)
    L = H.shape[2]
    H /= np.sqrt(np.einsum("nbk,nbk->nb", H, H))[:, :, None] + np.float32(0.1 * L)
    np.minimum(H, np.float32(0.2), out=H)
    H /= np.sqrt(np.einsum("nbk,nbk->nb", H, H))[:, :, None] + np.float32(1e-3)
    return H.reshape(m, -1)


_GREY_WEIGHTS = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def kmeans_features(X: np.ndarray, spec: dict, arrays: dict) -> np.ndarray:
    """Coates et al. single-layer features: normalised, whitened patches -> triangle (or hard) code
    -> sum over the 4 image quadrants -> ``(n, 4K)`` float32."""
    p, s, c = spec["patch_size"], spec["stride"], spec["n_channels"]
    if X.ndim == 4 and c == 1:
        X = np.clip(np.rint(X.astype(np.float32) @ _GREY_WEIGHTS), 0, 255).astype(np.uint8)
    if X.ndim == 3:
        X = X[..., None]
        if c == 3:
            X = np.repeat(X, 3, axis=3)
    mean, W, C = arrays["features.mean"], arrays["features.whitening"], arrays["features.centroids"]
    K, D = C.shape
    ct = np.ascontiguousarray(-2.0 * C.T, dtype=np.float32)
    cc = np.einsum("ij,ij->i", C, C).astype(np.float32)
    n, h, w = X.shape[:3]
    n_h, n_w = (h - p) // s + 1, (w - p) // s + 1
    hh, hw = (n_h + 1) // 2, (n_w + 1) // 2
    out = np.zeros((n, 4, K), np.float32)
    step = max(1, 8192 // (n_h * n_w))
    for a in range(0, n, step):  # chunks of images keep the (patches, K) matrix small
        B = X[a:a + step]
        win = np.lib.stride_tricks.sliding_window_view(B, (p, p), axis=(1, 2))[:, ::s, ::s]
        P = np.ascontiguousarray(win.transpose(0, 1, 2, 4, 5, 3), dtype=np.float32).reshape(-1, D)
        P -= P.mean(axis=1, keepdims=True, dtype=np.float32)
        var = np.einsum("ij,ij->i", P, P) / np.float32(D)
        P /= np.sqrt(var + np.float32(spec["norm_eps"]))[:, None]
        P -= mean
        P = P @ W
        xx = np.einsum("ij,ij->i", P, P)
        G = P @ ct
        if spec["encoder"] == "hard":
            best = np.argmin(G + cc, axis=1)
            G = np.zeros_like(G)
            G[np.arange(len(G)), best] = 1.0
        else:
            G += xx[:, None]
            G += cc
            np.maximum(G, 0, out=G)
            np.sqrt(G, out=G)
            mu = G.sum(axis=1, dtype=np.float32) * np.float32(1.0 / K)
            np.subtract(mu[:, None], G, out=G)
            np.maximum(G, 0, out=G)
        G = G.reshape(len(B), n_h, n_w, K)
        o = out[a:a + step]
        o[:, 0] = G[:, :hh, :hw].sum(axis=(1, 2), dtype=np.float32)
        o[:, 1] = G[:, :hh, hw:].sum(axis=(1, 2), dtype=np.float32)
        o[:, 2] = G[:, hh:, :hw].sum(axis=(1, 2), dtype=np.float32)
        o[:, 3] = G[:, hh:, hw:].sum(axis=(1, 2), dtype=np.float32)
    F = out.reshape(n, 4 * K)
    if spec["hellinger"]:
        np.sqrt(F, out=F)
    return F


def _rff(X: np.ndarray, spec: dict, arrays: dict, prefix: str) -> np.ndarray:
    """Random Fourier features ``[cos XW, sin XW] / sqrt(m)`` (or ``cos(XW + b)``), ``(n, 2m)`` float32."""
    m = spec["m"]
    P = X @ arrays[f"{prefix}.frequencies"]
    if spec["kind"] == "phase":
        P += arrays[f"{prefix}.offsets"]
        out = np.cos(P)
    else:
        out = np.empty((len(X), 2 * m), np.float32)
        np.cos(P, out=out[:, :m])
        np.sin(P, out=out[:, m:])
    out *= np.float32(1.0 / np.sqrt(m))
    return out


def rff_features(X: np.ndarray, spec: dict, arrays: dict) -> np.ndarray:
    F = X.reshape(len(X), -1).astype(np.float32) / np.float32(255.0)
    return _rff(F, spec, arrays, "features")


def cnn_features(X: np.ndarray, spec: dict, arrays: dict) -> np.ndarray:
    """A fixed random CNN: depth x (k x k valid convolution as one GEMM, ReLU, max-pool), then a
    random final layer (ReLU, or cos/sin random Fourier features) to ``m`` outputs."""
    X = (X[..., None] if X.ndim == 3 else X).astype(np.float32) / np.float32(255.0)
    k, p, m = spec["kernel_size"], spec["pool"], spec["m"]
    for level in range(spec["depth"]):
        Wl = arrays[f"features.filters.{level}"]
        b, h, w, c = X.shape
        ho, wo = h - k + 1, w - k + 1
        cols = np.lib.stride_tricks.sliding_window_view(X, (k, k), axis=(1, 2)).reshape(b * ho * wo, c * k * k)
        Y = (cols @ Wl).reshape(b, ho, wo, Wl.shape[1])
        np.maximum(Y, 0, out=Y)
        if p > 1:
            hp, wp = ho // p, wo // p
            Y = Y[:, :hp * p, :wp * p].reshape(b, hp, p, wp, p, -1).max(axis=(2, 4))
        X = Y
    H = np.ascontiguousarray(X.reshape(len(X), -1))
    if spec["normalize"]:
        H /= np.maximum(np.linalg.norm(H, axis=1, keepdims=True), np.float32(1e-12))
    Z = H @ arrays["features.final_weights"]
    if spec["final"] == "relu":
        Z += arrays["features.final_bias"]
        np.maximum(Z, 0, out=Z)
        Z *= np.float32(np.sqrt(2.0 / m))
        return Z
    half = m // 2
    out = np.zeros((len(H), m), np.float32)
    np.cos(Z, out=out[:, :half])
    np.sin(Z, out=out[:, half:2 * half])
    out *= np.float32(1.0 / np.sqrt(half))
    return out


FEATURES = {"pixels": pixel_features, "hog": hog_features, "kmeans": kmeans_features, "rff": rff_features,
            "cnn": cnn_features}


# ---------------------------------------------------------------- classifier and ranking

def scores(F: np.ndarray, spec: dict, arrays: dict) -> np.ndarray:
    """Class scores ``(n, C)`` float32 of features ``F (n, D)``: one GEMM with the stacked classifiers."""
    kind = spec["type"]
    if kind == "compressive":  # p_k <f(x), z_k>: prior times correlation with each class sketch
        Z = F if spec["map"] is None else _rff(F, spec["map"], arrays, "classifier.map")
        S = Z @ arrays["classifier.sketches"].T
        S *= arrays["classifier.priors"][None, :]
        S[:, arrays["classifier.empty"]] = -np.inf
        return S
    if kind == "rbf-ova":  # kernel SVMs: exp(-gamma |x - s|^2) against the support vectors, then one GEMM
        S = arrays["classifier.support_vectors"]
        K = F @ S.T
        K *= -2.0
        K += np.einsum("ij,ij->i", F, F)[:, None]
        K += np.einsum("ij,ij->i", S, S)[None, :]
        np.maximum(K, 0.0, out=K)
        K *= -spec["gamma"]
        np.exp(K, out=K)
        out = K @ arrays["classifier.dual_coef"].T
        out += arrays["classifier.intercept"]
        return out
    out = F @ arrays["classifier.coef"].T
    out += arrays["classifier.intercept"]
    if kind == "all-pairs":  # votes + a tie-break below one vote, from the pairwise scores
        pairs, C = arrays["classifier.pairs"], spec["n_classes"]
        m = len(pairs)
        Ei = np.zeros((m, C), np.float32)
        Ej = np.zeros((m, C), np.float32)
        Ei[np.arange(m), pairs[:, 0]] = 1
        Ej[np.arange(m), pairs[:, 1]] = 1
        win = (out > 0).astype(np.float32)
        votes = win @ Ei + (1 - win) @ Ej
        conf = out @ (Ei - Ej)
        return (votes + conf / (3 * (np.abs(conf) + 1))).astype(np.float32)
    return out


def top_k(S: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best classes per row, best first (ties: as the app, a stable sort of a partition)."""
    n, C = S.shape
    k = max(1, min(int(k), C))
    part = np.argpartition(-S, k - 1, axis=1)[:, :k] if k < C else np.broadcast_to(np.arange(C), (n, C)).copy()
    vals = np.take_along_axis(S, part, axis=1)
    order = np.argsort(-vals, axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1).astype(np.int64), np.take_along_axis(vals, order, axis=1)


def classmap_rank(F: np.ndarray, spec: dict, arrays: dict, top: int) -> tuple[np.ndarray, np.ndarray]:
    """ClassMap filter-and-refine over a linear bank (as the app, in numpy).

    Embedding: the d reference classifiers' outputs. Filter: the ``p`` classes whose embeddings
    are nearest in weighted L1 (ties: lower class first). Refine: the candidates' own classifier
    responses, best first; with v3, stop at the first candidate (filter order) whose response
    reaches the threshold, the rest follow unscored (NaN) in filter order; v1 ranks candidates by
    the votes of the all-pairs classifiers among them.
    """
    W, b = arrays["classifier.coef"], arrays["classifier.intercept"]
    refs, alpha, E = arrays["classmap.reference"], arrays["classmap.alpha"], arrays["classmap.embeddings"]
    p, v3 = spec["p"], spec["refine"] == "v3"
    t = np.float32(np.inf if spec["threshold"] is None else spec["threshold"])
    refpos = np.full(len(W), -1, np.int64)
    refpos[refs] = np.arange(len(refs))
    n = len(F)
    cls = np.empty((n, p), np.int64)
    score = np.empty((n, p), np.float32)
    step = max(1, (1 << 24) // max(1, E.size))
    for a in range(0, n, step):  # chunks of queries bound the (queries, C, d) distance temporary
        X = F[a:a + step]
        Q = X @ np.ascontiguousarray(W[refs]).T
        Q += b[refs]
        dist = np.abs(Q[:, None, :] - E[None, :, :]) @ alpha
        cands = np.argsort(dist, axis=1, kind="stable")[:, :p]
        if spec["refine"] == "v1":
            cls[a:a + step], score[a:a + step] = _refine_pairs(X, W, b, Q, refpos, cands, len(E))
            continue
        R = np.einsum("nd,nkd->nk", X, W[cands]) + b[cands]
        known = refpos[cands]
        R = np.where(known >= 0, np.take_along_axis(Q, np.maximum(known, 0), axis=1), R).astype(np.float32)
        stop = np.full(len(X), p)
        if v3:
            hit = R >= t
            stop = np.where(hit.any(1), hit.argmax(1) + 1, p)
        done = np.arange(p)[None, :] < stop[:, None]
        key = np.where(done, -R, np.inf)
        order = np.argsort(key, axis=1, kind="stable")
        cls[a:a + step] = np.take_along_axis(cands, order, axis=1)
        score[a:a + step] = np.where(np.take_along_axis(done, order, axis=1), np.take_along_axis(R, order, axis=1),
                                     np.nan)
    top = max(1, min(int(top), p))
    return arrays["classmap.classes"][cls[:, :top]], score[:, :top]


def _refine_pairs(X, W, b, Q, refpos, cands, C):
    """ClassMap v1: all-pairs votes among the candidates, ties by summed margin, then filter order."""
    n, p = cands.shape
    ia, ib = np.triu_indices(p, 1)
    ca, cb = cands[:, ia], cands[:, ib]
    lo, hi = np.minimum(ca, cb), np.maximum(ca, cb)
    rows = lo * (2 * C - lo - 1) // 2 + (hi - lo - 1)  # the pair's row in lexicographic (i < j) order
    R = np.einsum("mpd,md->mp", W[rows], X) + b[rows]
    known = refpos[rows]
    R = np.where(known >= 0, np.take_along_axis(Q, np.maximum(known, 0), axis=1), R)
    r_lo = np.where(ca == lo, R, -R)  # > 0 favours ca
    votes = np.zeros((n, p), np.float32)
    margin = np.zeros((n, p), np.float32)
    rr = np.arange(n)[:, None]
    np.add.at(votes, (rr, np.broadcast_to(ia, R.shape)), (r_lo > 0).astype(np.float32))
    np.add.at(votes, (rr, np.broadcast_to(ib, R.shape)), (r_lo <= 0).astype(np.float32))
    np.add.at(margin, (rr, np.broadcast_to(ia, R.shape)), r_lo)
    np.add.at(margin, (rr, np.broadcast_to(ib, R.shape)), -r_lo)
    order = np.lexsort((np.arange(p)[None, :].repeat(n, 0), -margin, -votes), axis=1)
    return np.take_along_axis(cands, order, axis=1), np.take_along_axis(votes, order, axis=1)


def predict(images: list[np.ndarray], doc: dict, arrays: dict, top: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """``(top_classes (n, top) int64, top_scores (n, top) float32)`` for uint8 images of any size."""
    X = prepare(images, doc["image_size"], doc["grey"])
    spec = doc["features"]
    F = np.ascontiguousarray(FEATURES[spec["type"]](X, spec, arrays), dtype=np.float32)
    if doc.get("classmap"):
        return classmap_rank(F, doc["classmap"], arrays, min(int(top), len(doc["class_names"])))
    return top_k(scores(F, doc["classifier"], arrays), top)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Classify image files with an exported ClassMap Studio recogniser.")
    ap.add_argument("images", nargs="+", help="image files (png, jpg, bmp, tif, webp, ...)")
    ap.add_argument("--top", type=int, default=5, help="classes to list per image (default 5)")
    ap.add_argument("--model", default=str(Path(__file__).resolve().parent), help="the export folder")
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args(argv)
    try:
        doc, arrays = load_model(args.model)
        images = [read_image(p, doc["grey"]) for p in args.images]
    except (ModelError, ValueError) as exc:
        print(f"predict.py: error: {exc}", file=sys.stderr)
        return 2
    names = doc["class_names"]
    cls, val = predict(images, doc, arrays, args.top)
    if args.json:
        rows = [{"image": str(p), "top": [{"class": names[c], "index": int(c), "score": float(v)}
                                          for c, v in zip(cr, vr)]} for p, cr, vr in zip(args.images, cls, val)]
        print(json.dumps(rows, indent=1))
    else:
        for p, cr, vr in zip(args.images, cls, val):
            print(f"{p}\t" + "\t".join(f"{names[c]} ({v:.4f})" for c, v in zip(cr, vr)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
