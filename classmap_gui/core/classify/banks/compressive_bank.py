"""`CompressiveBank`: the compressive classifier as one of the product's classifier banks.

What it adds to :class:`~.compressive.CompressiveClassifier`: the bank contract (``(n, C)`` scores also
for two classes, ``decision_function_subset``, ``n_classifiers_``), the choice of sketch, and the
feature map that sketch needs (:meth:`CompressiveBank.features_for`), so training asks the bank instead
of special-casing it.
"""
from __future__ import annotations

import math

import numpy as np

from ...guards.constraints import StrOptions
from ...errors import ConfigError
from ...guards.limits import MemoryPlan, planned_size
from .base import as_class_index, as_features
from .compressive import CompressiveClassifier

SKETCHES = ("rff", "features", "cnn")


class CompressiveBank(CompressiveClassifier):
    """:class:`CompressiveClassifier` with the classifier-bank interface of the product (``make_bank("compressive")``).

    Each class is the mean of random features of its examples (a sketch): training is one pass, a class
    can be added later from its images alone (``add_class``), and two banks of the same map merge.

    Parameters
    ----------
    sketch : {"rff", "features", "cnn"}, default="rff"
        ``"rff"``: random Fourier features of the feature matrix; ``"features"``: the feature matrix is the
        sketch (e.g. k-means features); ``"cnn"``: the feature map is the random CNN (``features_for`` tells
        training so) and its output is the sketch.
    m : int, default=1000
        The RFF size; for ``"cnn"`` it is handed to the CNN's final layer.
    sigma : float or "auto", default="auto"
        The RFF frequency scale; "auto" because image features have no fixed scale.
    priors : {"empirical", "uniform"}, default="empirical"
        Class priors.
    random_state : int or None, default=0
        Seed of the random map.

    Attributes
    ----------
    classes_ : ndarray of shape (C,)
        The labels.
    sketches_ : ndarray of shape (C, D), float32
        The class sketches.
    n_classifiers_ : int
        C: one sketch correlation per class.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from classmap_gui.core.classify import CompressiveBank
    >>> X, y = load_digits(return_X_y=True)
    >>> bank = CompressiveBank(sketch="features").fit(X.astype(np.float32), y)
    >>> bank.decision_function(X[:2].astype(np.float32)).shape       # always (n, C), also for two classes
    (2, 10)
    """

    #: ``{spec type: {"keys": the settings export_spec writes}}``: predict.py requires each (read by the export)
    exports = {"compressive": {"keys": ("map",)}}

    _parameter_constraints: dict = {"sketch": [StrOptions(set(SKETCHES))],
                                    **{k: v for k, v in CompressiveClassifier._parameter_constraints.items() if k != "map"}}

    def __init__(self, sketch: str = "rff", m: int = 1000, sigma="auto", priors: str = "empirical", random_state=0):
        self.sketch = sketch
        self.m = m
        self.sigma = sigma
        self.priors = priors
        self.random_state = random_state

    def _map_spec(self):
        return "rff" if self.sketch == "rff" else "identity"

    def features_for(self, name: str, params: dict) -> tuple[str, dict]:
        """The feature map ``(name, params)`` training must build for this bank, given the requested one.

        ``sketch="cnn"``: the random CNN, with this bank's ``m``, ``sigma`` and ``random_state`` for its
        final layer (CNN options in ``params`` are kept when ``name`` is already ``"cnn"``); other
        sketches keep the requested map.
        """
        if self.sketch != "cnn":
            return name, dict(params)
        out = dict(params) if name == "cnn" else {}
        given = self.get_params(deep=False)
        for key in ("m", "sigma", "random_state"):
            out[key] = given[key]
        return "cnn", out

    def fit(self, X, y, *, progress=None, should_stop=None):
        """Sketch every class of the feature matrix ``X (n, D)`` / ``y (n,)``; returns ``self``."""
        super().fit(as_features(X, what="compressive"), y, progress=progress, should_stop=should_stop)
        return self

    @property
    def n_classifiers_(self) -> int:
        """Binary evaluations of a brute-force query: one sketch correlation per class."""
        return len(self.classes_)

    def decision_function(self, X) -> np.ndarray:
        """``(n, C) float32`` scores ``p_k <f(x), z_k>``, also for two classes."""
        return self.scores(as_features(X, self.n_features_in_, "compressive"))

    def decision_function_subset(self, X, classes) -> np.ndarray:
        """Scores of the listed class indices per row: ``classes (n, k) int64`` -> ``(n, k) float32``."""
        X = as_features(X, self.n_features_in_, "compressive")
        classes = as_class_index(classes, len(X), len(self.classes_), "compressive")
        return self.scores_subset(X, classes)

    def export_spec(self, arrays: dict, prefix: str = "classifier") -> dict:
        """Settings for the exported ``predict.py`` (:mod:`classmap_gui.core.export.folder`); its arrays go into
        ``arrays`` under ``prefix``. The sketch map, when there is one, must export itself (random Fourier
        features do)."""
        arrays[f"{prefix}.sketches"] = np.ascontiguousarray(self.sketches_, np.float32)
        arrays[f"{prefix}.priors"] = np.ascontiguousarray(self.class_priors(), np.float32)
        arrays[f"{prefix}.empty"] = np.asarray(self.counts_ == 0, bool)
        sketch_map = getattr(self, "map_", None)
        spec = None if sketch_map is None or not hasattr(sketch_map, "export_spec") else \
            sketch_map.export_spec(arrays, f"{prefix}.map")
        if sketch_map is not None and (spec is None or spec["type"] != "rff"):   # predict.py sketches with RFF only
            raise ConfigError(f"cannot export a compressive bank whose sketch map is {type(sketch_map).__name__}")
        return {"type": "compressive", "map": spec}

    @staticmethod
    def memory_plan(params: dict, n_images: int, image_shape: tuple[int, ...]) -> MemoryPlan:
        """What training will hold (:class:`~classmap_gui.core.guards.limits.MemoryPlan`), from the parameters as given
        (``"auto"`` planned at its largest) and one image's shape."""
        if "m" not in params:
            return MemoryPlan(width=0)
        m = planned_size(params, "m", 1000)
        return MemoryPlan(width=0, budgets=(("--set m", 2 * max(n_images, math.prod(image_shape)) * m * 4,
                                             f"a sketch with {m} random features"),))
