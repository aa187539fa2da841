"""Training settings sized to the data, with the reasons a person can read.

``suggest_config(imageset)`` looks at the number of classes, images and the image size and returns
TrainConfig fields plus one sentence per choice. It is what the app proposes for a new or imported
set (so five classes of webcam captures are not trained with 1600 k-means centroids and a ClassMap
that cannot save anything), and it is a pure function: testable, and the same for the CLI.
"""
from __future__ import annotations

import math

from .data import ImageSet

#: below this many classes brute force is already cheap: ClassMap's filter cannot save enough to pay
#: for its embedding (the paper's gains start at hundreds of classes)
CLASSMAP_MIN_CLASSES = 50
#: HOG's 8x8 cells need images at least this size to see shape
HOG_MIN_SIDE = 24


def _pow2(x: float, low: int, high: int) -> int:
    """The power of two nearest ``x``, clipped to [low, high]."""
    return int(min(high, max(low, 2 ** round(math.log2(max(x, 1.0))))))


def suggest_config(imageset: ImageSet, base: dict | None = None) -> tuple[dict, list[str]]:
    """Settings (``TrainConfig`` fields) for ``imageset`` and the reasons for them.

    ``base``: settings to adapt (a person's choice of feature map and bank is kept; the sizes and
    ClassMap are fitted to the data). Without it the feature map is HOG (no fitting, good on shapes)
    or, for images smaller than 24 pixels, single-layer k-means.
    """
    base = dict(base or {})
    n, C = len(imageset), imageset.n_classes
    counts = imageset.counts() if C else []
    fewest = int(min(counts)) if C else 0
    side = min(imageset.image_size)
    reasons: list[str] = []

    features = base.get("features") or ("hog" if side >= HOG_MIN_SIDE else "kmeans")
    fparams = dict(base.get("features_params") or {}) if base.get("features") == features else {}
    if "features" not in base:
        reasons.append(f"Features: HOG ({side}-pixel images are big enough for its 8-pixel cells; nothing to fit)."
                       if features == "hog" else
                       f"Features: single-layer k-means ({side}-pixel images are too small for HOG's cells).")
    if features == "kmeans":
        k = _pow2(n / 2, 16, 1600)
        patches = int(min(200_000, max(5_000, 200 * n)))
        fparams.update({"n_centroids": k, "n_patches": patches})
        reasons.append(f"k-means: {k} centroids from {patches} patches, sized to {n} images "
                       "(the paper's 1600 need tens of thousands of images).")

    bank = base.get("bank") or ("ova-liblinear" if C < 100 else "ova-ridge")
    bparams = dict(base.get("bank_params") or {}) if base.get("bank") == bank else {}
    if bank == "ova-ridge" and "alpha" not in bparams:
        bparams["alpha"] = 100.0 if n >= 2000 else 10.0
    if "bank" not in base:
        reasons.append(f"Classifiers: {'linear SVMs (liblinear)' if bank == 'ova-liblinear' else 'ridge regression'}"
                       f" one-vs-all, {'accurate and quick at this size' if C < 100 else 'one linear solve for all ' + str(C) + ' classes'}.")

    test_fraction = float(base.get("test_fraction", 0.2))
    if C and n and test_fraction * n < C:
        test_fraction = round(min(0.5, (C + 0.5) / n), 3)
        reasons.append(f"Test part: {100 * test_fraction:.0f}% so every class has a test image.")

    classmap = None
    if bank == "compressive":
        reasons.append("ClassMap off: a compressive bank scores every class at the cost of one.")
    elif C < CLASSMAP_MIN_CLASSES:
        reasons.append(f"ClassMap off: with {C} classes brute force evaluates only {C} classifiers per image; "
                       f"filter-and-refine pays off from about {CLASSMAP_MIN_CLASSES} classes.")
    elif fewest < 6:
        reasons.append(f"ClassMap off: it holds out images of every class to fit its embedding, and the "
                       f"smallest class has {fewest}.")
    else:
        d = int(min(45, max(8, C // 8)))
        p = int(min(40, max(5, C // 12)))
        cm = dict(base.get("classmap") or {})
        classmap = {"d": d, "p": p, "embedding": cm.get("embedding", "boosted"), "refine": cm.get("refine", "v2")}
        reasons.append(f"ClassMap on: {d} reference classifiers, refine the top {p} of {C} classes.")

    settings = {"features": features, "features_params": fparams, "bank": bank, "bank_params": bparams,
                "classmap": classmap, "test_fraction": test_fraction, "seed": int(base.get("seed", 0))}
    return settings, reasons
