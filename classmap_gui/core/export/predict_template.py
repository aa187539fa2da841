#!/usr/bin/env python3
"""Standalone predictor of a recogniser exported by ClassMap Studio. Needs only numpy and OpenCV.

    python predict.py IMAGE_OR_FOLDER [...] [--top 5] [--json]

Prints, per image, the ``top`` best classes with their scores, the same as ClassMap Studio's
``classmap predict`` on the same files. The model is ``model.json`` + ``arrays.npz`` next to
this file (``--model DIR`` to point elsewhere). The arrays are read with ``allow_pickle=False``
and checked against the shapes and dtypes ``model.json`` declares: a file holding a pickle is
refused, nothing in it runs.

Every step re-implements the app's computation in plain float32 numpy/OpenCV: image reading and
resizing, the feature map (pixels, HOG, single-layer k-means, random Fourier features, random
CNN, and composites of these side by side), the
classifier bank (one-vs-all linear or rbf, all-pairs voting, compressive class sketches), ClassMap
filter-and-refine and the top-p ranking. The HOG, random-CNN, k-means pooling and ClassMap steps
are the app's own numpy code, inlined when the model was exported, and so are the app's rules for
what it reads: the limits, the image-reading rule and the checks of every setting and array (a
model is refused as the app refuses it: one line, nothing used). Exit status: 0, 1 when an
image could not be read (one line per such image on stderr; the others are still classified),
2 when the model or an argument cannot be used. (Generated from classmap_gui/core/export/predict_template.py.)
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import stat
import struct
import sys
import threading
import unicodedata
import zipfile
import zlib
from pathlib import Path

import cv2
import numpy as np
from numpy.lib import format as npy_format

FORMAT = "classmap-export"
VERSION = 1
#: the paper's refine names, as models store them
REFINE_ALIASES = {"v1": "all-pairs-vote", "v2": "best-response", "v3": "first-above-threshold"}


class ModelError(Exception):
    """The exported model is missing, damaged, unsafe or from a newer ClassMap Studio."""


# ---------------------------------------------------------------- guards: files, model, images

# @inline classmap_gui.core.guards.regular_files


# @inline classmap_gui.core.guards.read_limits


# @inline classmap_gui.core.guards.opencv_log


# @inline classmap_gui.core.features.network_check


# @inline classmap_gui.core.plain_text


# @inline classmap_gui.core.store.bounded_zip


# @inline classmap_gui.core.data.image_header


# @inline classmap_gui.core.data.image_decode


# @inline classmap_gui.core.export.checks


# @settings-rules


def read_arrays(npz: Path, manifest: dict) -> dict[str, np.ndarray]:
    """The arrays of ``npz`` exactly as ``manifest`` declares them: every member's size checked against
    the manifest before any is inflated, then each inflated into its declared array and no further."""
    specs = parse_specs(manifest, MAX_MEMBERS)
    with os.fdopen(regular_fd(npz, follow_links=False), "rb") as fh:
        count = entry_count(fh)
        if count is not None and count > len(specs):
            raise ModelError(f"{npz} has {count} members, model.json declares {len(specs)}; refused")
        with zipfile.ZipFile(fh) as zf:
            infos = {}
            for info in zf.infolist():
                key = info.filename[:-4]
                if not info.filename.endswith(".npy") or key in infos or key not in specs \
                        or info.flag_bits & 0x1 or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                    raise ModelError(f"{npz}: unexpected member {info.filename[:80]!r}; refused")
                infos[key] = info
            if set(infos) != set(specs):
                raise ModelError(f"{npz}: members differ from those model.json declares")
            check_npz_sizes(infos, specs, os.fstat(fh.fileno()).st_size)
            return {key: read_npy_member(zf, infos[key], key, dt, shape) for key, (dt, shape) in specs.items()}


def load_model(folder: str | Path) -> tuple[dict, dict[str, np.ndarray]]:
    """``(doc, arrays)`` of the export in ``folder``, checked as the app checks a model (links inside the
    folder refused); ModelError when anything is not as declared."""
    folder = Path(folder)
    try:
        raw = regular_bytes(folder / "model.json", MAX_JSON_BYTES, False, "is too large to be a model description")
        if raw.count(b"[") + raw.count(b"{") > MAX_JSON_CONTAINERS:
            raise ValueError("too many lists and objects to be a model description")
        doc = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise ModelError(f"{folder / 'model.json'}: cannot read the model ({str(exc)[:200]})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ModelError(f"{folder}: not a ClassMap Studio export")
    if not isinstance(doc.get("version"), int) or doc["version"] > VERSION:
        raise ModelError(f"{folder}: export format {str(doc.get('version'))[:20]!r} is newer than this predict.py reads")
    manifest = doc.get("arrays")
    if not isinstance(manifest, dict):
        raise ModelError(f"{folder}: the array manifest is missing")
    try:
        arrays = read_arrays(folder / "arrays.npz", manifest)
    except ModelError:
        raise
    except ZipLimitError as exc:
        raise ModelError(f"{folder / 'arrays.npz'}: {exc}") from None
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile, zlib.error, struct.error,
            NotImplementedError, RuntimeError, SyntaxError) as exc:
        raise ModelError(f"{folder / 'arrays.npz'}: corrupt ({str(exc)[:200]})") from None
    try:
        check_export(doc, arrays)
        check_parts_fit(doc, arrays, predict, (cv2.error,))
    except SettingError as exc:
        raise ModelError(f"{folder / 'model.json'}: model file is invalid: {exc}") from None
    return doc, arrays


# ---------------------------------------------------------------- images

def read_image(path: str | Path, grey: bool, max_pixels: int = DEFAULT_MAX_IMAGE_PIXELS) -> np.ndarray:
    """uint8 ``(h, w)`` grey or ``(h, w, 3)`` RGB, as ClassMap Studio reads files (its own rule,
    :func:`checked_pixels`); ImageRefused saying why. Only regular files."""
    try:
        data = regular_bytes(path, max(1 << 20, 8 * max_pixels), too_big="is too large to be an image within the pixel limit")
    except OSError as exc:
        raise ImageRefused(exc.strerror or str(exc)) from None
    return checked_pixels(data, grey, max_pixels)


# @inline classmap_gui.core.image_ops


def prepare(images: list[np.ndarray], image_size, grey: bool) -> np.ndarray:
    """Images of any size/colour -> ``(n, h, w)`` or ``(n, h, w, 3)`` uint8 at the model's size."""
    # one resize per image: sizes may differ
    return np.stack([np.ascontiguousarray(fit_size(conform(img, grey), image_size)) for img in images])


# ---------------------------------------------------------------- feature maps

# @feature-maps


# ---------------------------------------------------------------- classifier and ranking

def scores(F: np.ndarray, spec: dict, arrays: dict) -> np.ndarray:
    """Class scores ``(n, C)`` float32 of features ``F (n, D)``: one GEMM with the stacked classifiers."""
    kind = spec["type"]
    if kind == "compressive":  # p_k <f(x), z_k>: prior times correlation with each class sketch
        Z = F if spec["map"] is None else rff_map(F, spec["map"], arrays, "classifier.map")
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


# @inline classmap_gui.core.classify.banks.ranking_ops


# @inline classmap_gui.core.classify.classmap.ops


def classmap_rank(F: np.ndarray, spec: dict, arrays: dict, top: int) -> tuple[np.ndarray, np.ndarray]:
    """ClassMap filter-and-refine over a linear bank (the app's numpy steps).

    Embedding: the d reference classifiers' outputs (rows of the bank, or of the separate smoother bank
    the model kept its references from). Filter: the ``p`` classes whose embeddings
    are nearest in weighted L1 (ties: lower class first). Refine: "all-pairs-vote" (v1) ranks the
    candidates by the votes of the all-pairs classifiers among them; "best-response" (v2) by their
    own classifier responses; "first-above-threshold" (v3) stops at the first candidate (filter
    order) whose response reaches the threshold, the rest follow unscored (NaN) in filter order.
    """
    W, b = arrays["classifier.coef"], arrays["classifier.intercept"]
    refs, alpha, E = arrays["classmap.reference"], arrays["classmap.alpha"], arrays["classmap.embeddings"]
    p, refine = spec["p"], REFINE_ALIASES.get(spec["refine"], spec["refine"])
    threshold = None
    if refine == "first-above-threshold":
        threshold = np.float32(np.inf if spec["threshold"] is None else spec["threshold"])
    refpos = np.full(len(W), -1, np.int64)
    if "classmap.reference_coef" in arrays:  # references from a separate, smoother bank: none is a candidate's
        W_ref, b_ref = arrays["classmap.reference_coef"], arrays["classmap.reference_intercept"]
    else:
        W_ref, b_ref = np.ascontiguousarray(W[refs]), b[refs]
        refpos[refs] = np.arange(len(refs))
    n = len(F)
    cls = np.empty((n, p), np.int64)
    score = np.empty((n, p), np.float32)
    step = max(1, (1 << 24) // max(1, E.size))
    ia, ib = np.triu_indices(p, 1)
    for a in range(0, n, step):  # chunks of queries bound the (queries, C, d) distance temporary
        X = F[a:a + step]
        Q = X @ W_ref.T
        Q += b_ref
        cands = filter_exact(Q, E, alpha, p)
        if refine == "all-pairs-vote":
            ca = cands[:, ia]
            rows = pair_rows(ca, cands[:, ib], len(E))
            R = with_reference_outputs(np.einsum("mpd,md->mp", W[rows], X) + b[rows], refpos[rows], Q)
            cls[a:a + step], score[a:a + step] = vote_among_candidates(R, ca, cands, ia, ib)
            continue
        R = with_reference_outputs(np.einsum("nd,nkd->nk", X, W[cands]) + b[cands], refpos[cands], Q)
        cls[a:a + step], score[a:a + step], _ = rank_by_response(R.astype(np.float32), cands, threshold)
    top = max(1, min(int(top), p))
    return arrays["classmap.classes"][cls[:, :top]], score[:, :top]


def predict(images: list[np.ndarray], doc: dict, arrays: dict, top: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """``(top_classes (n, top) int64, top_scores (n, top) float32)`` for uint8 images of any size."""
    X = prepare(images, doc["image_size"], doc["grey"])
    spec = doc["features"]
    F = np.ascontiguousarray(FEATURES[spec["type"]](X, spec, arrays), dtype=np.float32)
    if doc.get("classmap"):
        return classmap_rank(F, doc["classmap"], arrays, min(int(top), len(doc["class_names"])))
    return top_k(scores(F, doc["classifier"], arrays), top)


def main(argv: list[str] | None = None) -> int:
    """Command line: classify every readable image; exit 0, 1 when any image was unreadable, 2 for a bad model.

    Each unreadable image is one line on stderr, ``<path>: cannot read image: <reason>``; the others
    are still classified and printed.
    """
    ap = argparse.ArgumentParser(description="Classify image files with an exported ClassMap Studio recogniser.")
    ap.add_argument("images", nargs="+", help="image files (png, jpg, bmp, tif, webp; not gif), or folders "
                                              "(their image files, by name)")
    ap.add_argument("--top", type=int, default=5, help="classes to list per image (default 5)")
    ap.add_argument("--model", default=str(Path(__file__).resolve().parent), help="the export folder")
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args(argv)
    if args.top < 1:
        print(f"predict.py: error: --top must be at least 1, got {args.top}", file=sys.stderr)
        return 2
    try:
        doc, arrays = load_model(args.model)
    except ModelError as exc:
        print(f"predict.py: error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    paths, images, unreadable = [], [], 0
    for p in [q for a in args.images for q in (map(str, folder_images(Path(a))) if Path(a).is_dir() else [a])]:
        try:
            images.append(read_image(p, doc.get("grey") is True))
            paths.append(p)
        except ImageRefused as exc:
            print(one_line(f"{p}: cannot read image: {exc}"), file=sys.stderr)
            unreadable += 1
    names = doc["class_names"]
    try:
        cls, val = predict(images, doc, arrays, args.top) if images else ([], [])
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, ArithmeticError, cv2.error) as exc:
        print(f"predict.py: error: {args.model}: model.json is invalid ({type(exc).__name__}: "
              f"{' '.join(str(exc).split())[:200]})", file=sys.stderr)
        return 2
    if args.json:
        rows = [{"image": str(p), "top": [{"class": names[c], "index": int(c), "score": float(v)}
                                          for c, v in zip(cr, vr)]} for p, cr, vr in zip(paths, cls, val)]
        print(json.dumps(rows, indent=1))
    else:
        for p, cr, vr in zip(paths, cls, val):
            print(f"{one_line(p)}\t" + "\t".join(f"{names[c]} ({v:.4f})" for c, v in zip(cr, vr)))
    return 1 if unreadable else 0


if __name__ == "__main__":
    sys.exit(main())
