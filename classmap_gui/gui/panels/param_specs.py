"""The Train panel's list of components and their parameters, as parameter descriptions.

THE ONE PLACE that says which feature maps and banks the panel offers and how each parameter is shown.
Each parameter is described by a :class:`Param` shaped like core's registry entries
(``Param(name, kind, default, help, choices=None, low=None, high=None, auto=False)``); the settings
form is built from these descriptions only (duck-typed), so feeding it from the registry later means
changing :func:`feature_params` / :func:`bank_params` / :data:`FEATURES` / :data:`BANKS` here and
nothing else. Defaults come from core's factories (``get_params()``), help texts and choices from below.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Param:
    """One hyper-parameter: ``kind`` is ``int``, ``float``, ``bool`` or ``str``; ``choices`` a list of
    allowed values (shown as a drop-down); ``low``/``high`` bounds; ``auto`` True when "auto" is allowed."""

    name: str
    kind: type
    default: Any
    help: str = ""
    choices: tuple | None = None
    low: float | None = None
    high: float | None = None
    auto: bool = False


#: feature maps offered, with what they are (shown as tooltips of the drop-down)
FEATURES = (
    ("kmeans", "Single-layer k-means network (Coates, Lee & Ng): learns patch centroids, triangle "
               "activation, 2x2 pooling. Strong on natural images; takes longest to fit."),
    ("hog", "Histograms of oriented gradients: nothing to fit, fast, good for shapes and hand poses."),
    ("pixels", "The raw pixels (optionally standardised): a baseline."),
    ("rff", "Random Fourier features of the pixels: a random approximation of an RBF kernel."),
    ("cnn", "Random convolutional network (\"cnn\"): fixed random filters, ReLU and pooling, nothing "
            "learned; tolerant to small shifts. The compressive paper's image sketch map."),
)
#: classifier banks offered
BANKS = (
    ("ova-liblinear", "One linear SVM per class (liblinear): accurate; minutes for hundreds of classes."),
    ("ova-ridge", "One ridge regression per class, all in one linear solve: fastest to train."),
    ("ova-rbf", "One RBF-kernel SVM per class: non-linear, slow on large sets."),
    ("all-pairs", "One linear classifier per pair of classes (C(C-1)/2), voting."),
    ("compressive", "Compressive classification: each class is the mean of random features of its "
                    "images; no training, new classes instantly."),
)
# The banks share one estimator class; these are the parameters each trainer actually reads.
BANK_PARAMS = {"ova-liblinear": ("C", "max_iter", "tol"), "ova-ridge": ("alpha",), "ova-rbf": ("C", "gamma"),
               "all-pairs": ("C", "max_iter", "tol", "trainer", "alpha"),
               "compressive": ("m", "priors", "sketch", "sigma")}
HIDDEN = {"n_jobs", "random_state", "verbose", "kmeans_batch_size", "max_memory_mb", "copy", "class_weight"}

HELP = {
    "n_centroids": "Number of k-means centroids (features = 4 x this). More needs more images.",
    "patch_size": "Side of the square patches, in pixels.",
    "n_patches": "Random patches drawn to fit the centroids.",
    "stride": "Step between patches when encoding (1 = every position).",
    "norm_eps": "Added to each patch's variance before normalising (contrast normalisation).",
    "whiten_eps": "Regulariser of ZCA whitening.",
    "encoder": "triangle: soft activation max(0, mean distance - distance); hard: 1 for the nearest centroid.",
    "kmeans_algorithm": "lloyd: full-batch k-means (as the paper); minibatch: faster on many patches.",
    "kmeans_max_iter": "k-means iterations.",
    "hellinger": "Square-root of the pooled features (Hellinger kernel).",
    "grey": "Work on grey images even when the set is in colour.",
    "backend": "Where HOG runs: auto picks the fastest here; numpy or opencv force one.",
    "cell_size": "HOG cell side in pixels.", "block_size": "HOG block side in pixels.",
    "block_stride": "Step between HOG blocks in pixels.", "n_bins": "Orientation bins per cell.",
    "signed": "Distinguish gradient directions 180 degrees apart.",
    "standardize": "Scale each pixel to zero mean and unit variance.",
    "m": "Number of random features (width of the map).",
    "sigma": "Kernel width; auto: the median distance between images.",
    "kind": "cossin: cos and sin of each projection; phase: cos with a random phase.",
    "depth": "Convolution + pooling blocks.", "width": "Filters per convolution.",
    "kernel_size": "Filter side in pixels.", "pool": "Max-pooling size.",
    "final": "Last random layer: rff (random Fourier) or relu.",
    "normalize": "Scale each feature vector to unit length.",
    "C": "Inverse regularisation of the SVMs: larger fits the training images more closely.",
    "alpha": "Ridge regularisation: larger is smoother (100 suits a few thousand images).",
    "max_iter": "Iterations of the solver.", "tol": "Stopping tolerance of the solver.",
    "gamma": "RBF kernel width: scale uses 1 / (features x variance).",
    "trainer": "How each pair classifier is trained: liblinear (SVM) or ridge.",
    "priors": "Class priors: empirical (from the counts) or uniform.",
    "sketch": "The random map of the class sketches: rff of the features, the features themselves, "
              "or a random CNN of the images (cnn).",
}
CHOICES = {
    "encoder": ("triangle", "hard"), "kmeans_algorithm": ("lloyd", "minibatch"),
    "backend": ("auto", "numpy", "opencv"), "kind": ("cossin", "phase"), "final": ("rff", "relu"),
    "trainer": ("liblinear", "ridge"), "priors": ("empirical", "uniform"), "sketch": ("rff", "features", "cnn"),
    "gamma": ("scale", "auto"),
}
AUTO = {"sigma"}


def _describe(defaults: dict, only: tuple | None = None) -> list[Param]:
    out = []
    for name, v in defaults.items():
        if name in HIDDEN or name.startswith("_") or (only is not None and name not in only):
            continue
        if isinstance(v, bool):
            kind = bool
        elif isinstance(v, int):
            kind = int
        elif isinstance(v, float):
            kind = float
        elif isinstance(v, str):
            kind = float if name in AUTO else str
        else:
            continue  # None / objects: left to core's default
        out.append(Param(name, kind, v, HELP.get(name, ""), CHOICES.get(name), low=0 if kind in (int, float) else None,
                         auto=name in AUTO))
    return out


def _defaults(kind: str, name: str) -> dict:
    try:
        if kind == "features":
            from ...core.features import make_features  # noqa: PLC0415
            return make_features(name).get_params()
        from ...core.classify import make_bank  # noqa: PLC0415
        return make_bank(name).get_params()
    except Exception:  # noqa: BLE001 - an unknown name shows no parameters; training reports the error
        return {}


def feature_params(name: str) -> list[Param]:
    """The parameters of feature map ``name`` as descriptions."""
    return _describe(_defaults("features", name))


def bank_params(name: str) -> list[Param]:
    """The parameters of classifier bank ``name`` that its trainer reads, as descriptions."""
    return _describe(_defaults("bank", name), BANK_PARAMS.get(name))
