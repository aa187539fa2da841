"""Load the compiled (numba) kernels and the lazily imported extension modules once, up front.

The first call of a numba function in a process loads its machine code from the cache while
holding the GIL (measured: ~100 ms for the k-means encoder). Done in the middle of training or of
a live stream, that freezes the app's window; done once at start-up, nobody notices. This runs
each compiled path on tiny inputs through the public API, so it stays right as kernels change.
"""
from __future__ import annotations

import importlib

import numpy as np

#: extension modules a library imports only when first used, in a worker thread: loading a shared library
#: holds the GIL (measured: openTSNE's Annoy, imported by the first t-SNE of 1000 points or more, held the
#: window 270 ms on a loaded machine)
LAZY_EXTENSIONS = ("openTSNE.dependencies.annoy",)


def warm_compiled_kernels() -> None:
    """Run the k-means encoder, subset scoring and ClassMap's single-query and batch paths once; import
    :data:`LAZY_EXTENSIONS`."""
    for name in LAZY_EXTENSIONS:
        try:
            importlib.import_module(name)
        except ImportError:  # a library version without it: its first use imports whatever it needs
            pass
    from .classify import OneVsAllRidge
    from .classify.classmap.estimator import ClassMap
    from .registry import make_features

    rng = np.random.default_rng(0)
    images = rng.integers(0, 255, (12, 12, 12), dtype=np.uint8)
    feats = make_features("kmeans", n_centroids=4, patch_size=3, n_patches=200, random_state=0)
    X = feats.fit(images).transform(images)
    y = np.arange(len(X)) % 3
    bank = OneVsAllRidge().fit(X, y)
    bank.decision_function_subset(np.repeat(X, 6, axis=0), np.tile([[0, 1]], (len(X) * 6, 1)))
    cmap = ClassMap(d=2, p=2, embedding="random", random_state=0).fit_embedding(bank, X, y)
    cmap.predict_result(X[:1], top=2, bank=bank)
    cmap.predict_result(X, top=2, bank=bank)
