"""`Recogniser`: the one object that turns images into class predictions (GUI, CLI, export, benchmarks).

feature map (images -> ``(n, D) float32``) + classifier bank (``(n, D)`` -> scores of C classes) and,
optionally, a ClassMap that replaces brute-force scoring by filter-and-refine. ``predict`` returns a
:class:`~.classify.result.Prediction` (the one result type of every prediction path) that says what
it cost: binary classifier evaluations per query, counted from what was evaluated, and the time of
each stage. Predicting changes no object, so threads may share one recogniser.

Saved as a folder (see :mod:`classmap_gui.core.store`): ``model.json`` with the structure and
``arrays.npz`` with the numbers; no pickles, every shape and dtype checked on load. Large arrays
(a 10^5-class bank's weights) are memory-mapped, not read (:mod:`.store.npz`), and a ClassMap's
filter index is saved with it (its lists or graph, a component of the store like any other), so a
10^5-class model opens in seconds.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .data.folder import MAX_IMAGE_SIDE
from .data.imageset import check_class_names
from .errors import ConfigError, DataError, ModelFormatError, NotFittedError
from .image_ops import conform, fit_size
from .progress import ProgressFn, StopFn, check_stop
from .classify.banks.base import top_k
from .classify.new_class import dump_examples, load_examples
from .classify.result import Prediction
from .store import array_manifest, dump_estimator, load_bundle, load_estimator, save_bundle

if TYPE_CHECKING:
    from .classify.new_class import AddedClass

MODEL_FORMAT = "classmap-model"
MODEL_VERSION = 1
MODEL_JSON = "model.json"
#: rows scored at a time so that the (rows, C) score matrix stays small
SCORE_CHUNK = 4096


class Recogniser:
    """Feature map + classifier bank (+ optional ClassMap), with the images' size and colour.

    The one object the app, the command line, export and the benchmarks predict with, so a benchmark's
    figure is what a user gets. Predicting changes nothing (threads may share a recogniser). ``save`` writes
    a model folder (JSON and ``.npz``, never a pickle); ``load`` checks it (``ModelFormatError``): the
    classes are ``0..C-1`` and the feature map's width on a blank image equals the bank's
    ``n_features_in_``.

    Parameters
    ----------
    features : transformer
        Fitted, uint8 images -> ``(n, D) float32``.
    classifier : classifier bank
        Fitted; its ``classes_`` are ``0..C-1`` (indices into ``class_names``).
    classmap : ClassMap or None, default=None
        A fitted :class:`~classmap_gui.core.classify.classmap.estimator.ClassMap` (anything with
        ``predict_result(X, top=, bank=) -> Prediction``), or None for brute force.
    class_names : sequence of str, default=()
        The name of each class.
    image_size : tuple of int, default=(64, 64)
        ``(h, w)`` every image is brought to (``prepare``).
    grey : bool, default=True
        Whether the model reads grey images.
    metadata : dict or None, default=None
        Free JSON (training settings, data set, test accuracy) saved with the model.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from classmap_gui.core.classify import OneVsAllRidge
    >>> from classmap_gui.core.features import PixelFeatures
    >>> from classmap_gui.core.recogniser import Recogniser
    >>> digits = load_digits()
    >>> images = (digits.images * 15).astype(np.uint8)                 # (1797, 8, 8) uint8
    >>> features = PixelFeatures().fit(images)
    >>> bank = OneVsAllRidge().fit(features.transform(images), digits.target)
    >>> rec = Recogniser(features, bank, class_names=[str(k) for k in range(10)], image_size=(8, 8))
    >>> result = rec.predict(images[:3], top=2)
    >>> result.labels, result.top_classes.shape
    (array([0, 1, 2]), (3, 2))
    >>> sorted(result.timings)                                         # seconds per stage
    ['classify', 'features', 'total']
    """

    def __init__(self, features: Any, classifier: Any, classmap: Any = None, class_names: Sequence[str] = (),
                 image_size: tuple[int, int] = (64, 64), grey: bool = True, metadata: dict | None = None):
        self.features = features
        self.classifier = classifier
        self.classmap = classmap
        self.class_names = [str(c) for c in class_names]
        self.image_size = (int(image_size[0]), int(image_size[1]))
        self.grey = bool(grey)
        self.metadata = dict(metadata or {})
        #: ``{name: (m, h, w[, 3]) uint8}``: the images of the classes added by :meth:`add_class`, saved with the model
        self.class_examples: dict[str, np.ndarray] = {}

    @property
    def n_classes(self) -> int:
        """Number of classes (``len(class_names)``)."""
        return len(self.class_names)

    @property
    def brute_force_evaluations(self) -> int:
        """Binary classifier evaluations a brute-force query costs (C for one-vs-all, C(C−1)/2 all-pairs)."""
        return int(getattr(self.classifier, "n_classifiers_", self.n_classes))

    # ------------------------------------------------------------ input
    def prepare(self, images: Any) -> np.ndarray:
        """Bring images to the model's size and colour: ``(n, h, w)`` or ``(n, h, w, 3)`` uint8.

        ``images``: one image ``(h, w)``/``(h, w, 3)``, an array of them, or a list of differently
        sized ones. Colour is taken to be RGB.
        """
        want = (*self.image_size,) if self.grey else (*self.image_size, 3)
        if isinstance(images, np.ndarray):
            if images.ndim == 2 or (images.ndim == 3 and images.shape[2] in (3, 4) and images.shape[1:] != want):
                images = images[None]  # one image (h, w) or (h, w, 3|4)
            elif images.dtype == np.uint8 and images.shape[1:] == want:
                return np.ascontiguousarray(images)  # already the model's size and colour: no copy per image
        seq = list(images) if not isinstance(images, np.ndarray) else images
        out = []
        for img in seq:  # one resize per image: sizes may differ
            img = np.asarray(img)
            if img.dtype != np.uint8:
                raise DataError(f"images must be uint8, got {img.dtype}")
            if img.ndim not in (2, 3) or (img.ndim == 3 and img.shape[2] not in (1, 3, 4)) or min(img.shape[:2]) < 1:
                raise DataError(f"not an image: array of shape {img.shape}")
            out.append(np.ascontiguousarray(fit_size(conform(img, self.grey), self.image_size)))
        if not out:
            shape = (0, *self.image_size) if self.grey else (0, *self.image_size, 3)
            return np.zeros(shape, np.uint8)
        return np.stack(out)

    def transform(self, images: Any, *, progress: ProgressFn = None, should_stop: StopFn = None) -> np.ndarray:
        """Features of (prepared) images, ``(n, D) float32``."""
        return np.asarray(self.features.transform(self.prepare(images), progress=progress, should_stop=should_stop),
                          dtype=np.float32)

    # ------------------------------------------------------------ prediction
    def predict(self, images: Any, top: int = 5, *, progress: ProgressFn = None,
                should_stop: StopFn = None) -> Prediction:
        """Classify images; ``top`` best candidates per image with scores, cost and stage timings."""
        t0 = time.perf_counter()
        X = self.transform(images, progress=progress, should_stop=should_stop)
        t1 = time.perf_counter()
        pred = self.predict_features(X, top=top, should_stop=should_stop)
        pred.timings = {"features": t1 - t0, **pred.timings}
        pred.timings["total"] = time.perf_counter() - t0
        return pred

    def predict_features(self, X: np.ndarray, top: int = 5, *, should_stop: StopFn = None) -> Prediction:
        """Classify feature rows ``X (n, D) float32`` (features already computed).

        Brute force scores every classifier, so each query costs ``brute_force_evaluations``; with a
        ClassMap the cost per query is the one it reports from what it evaluated."""
        if self.classifier is None or not hasattr(self.classifier, "classes_"):
            raise NotFittedError("the recogniser has no trained classifier")
        top = max(1, min(int(top), self.n_classes))
        X = np.ascontiguousarray(X, dtype=np.float32)
        n = len(X)
        if self.classmap is not None:
            return self.classmap.predict_result(X, top=top, should_stop=should_stop, bank=self.classifier)
        labels = np.empty(n, np.int64)
        top_classes = np.empty((n, top), np.int64)
        top_scores = np.empty((n, top), np.float32)
        t0 = time.perf_counter()
        for s in range(0, n, SCORE_CHUNK):
            check_stop(should_stop)
            e = min(n, s + SCORE_CHUNK)
            idx, vals = top_k(self.classifier.decision_function(X[s:e]), top)
            top_classes[s:e], top_scores[s:e] = idx, vals
            labels[s:e] = idx[:, 0]
        evaluations = np.full(n, self.brute_force_evaluations, np.int64)
        return Prediction(labels, top_classes, top_scores, evaluations, {"classify": time.perf_counter() - t0})

    def add_class(self, name: str, images: Any, *, rows: float | None = None, progress: ProgressFn = None,
                  should_stop: StopFn = None) -> "AddedClass":
        """Add class ``name`` from uint8 ``images`` (in recording order) without retraining; returns an
        :class:`~.classify.new_class.AddedClass` (its label, and a ``warning`` naming the existing class its
        held-out images went to when it is too close to one).

        A ridge bank that keeps its training statistics gets the class's classifier in closed form (the other
        classes' classifiers unchanged), a ClassMap embeds it through its references and adds it to its filter
        index; a compressive bank adds its sketch. ``rows``: how many training rows the images count as in the
        ridge solve together (each weighs ``rows / len(images)``; None: one row each), kept in
        ``metadata["added_rows"]`` so that removing the class takes out what it put in. The images are kept with the model (:attr:`class_examples`,
        saved with it) so that the class can be removed (:meth:`remove_class`) or rebuilt. Other banks, and
        models saved before the statistics were kept, raise ConfigError saying to retrain."""
        from .classify.new_class import AddedClass, add_to_models, check_new_name, closeness

        name = check_new_name(name, self.class_names)
        prepared = self.prepare(images)
        if len(prepared) == 0:
            raise DataError(f"no images for the new class {name!r}")
        X = self.transform(prepared, progress=progress, should_stop=should_stop)
        check_stop(should_stop)
        weight = 1.0 if rows is None else float(rows) / len(X)
        check = closeness(self.classifier, X, self.class_names, name, weight)
        label = len(self.class_names)
        add_to_models(self.classifier, self.classmap, X, label, weight=weight, progress=progress,
                      should_stop=should_stop)
        if rows is not None:
            self.metadata.setdefault("added_rows", {})[name] = float(rows)
        self.class_names.append(name)
        self.class_examples[name] = prepared
        return AddedClass(label, name, len(prepared), **check)

    def added_classes(self) -> list[str]:
        """The classes a person added (:meth:`add_class`), oldest first: the ones whose images the model keeps
        (``class_examples``, saved with it, so the list survives reopening the model)."""
        kept = getattr(self, "class_examples", None) or {}
        return sorted((str(n) for n in kept if n in self.class_names), key=self.class_names.index)

    def detached(self) -> "Recogniser":
        """A copy that can take or lose a class while this one goes on predicting on another thread: everything
        copied but the feature map (the network or HOG, which a class change never touches); a ClassMap's bank
        stays the copy's own classifier (one deep copy keeps that reference)."""
        import copy

        new = copy.copy(self)
        memo = {id(self.features): self.features}
        for key, value in copy.deepcopy({k: v for k, v in vars(self).items() if k != "features"}, memo).items():
            setattr(new, key, value)
        return new

    def remove_class(self, name: str) -> None:
        """Remove the added class ``name`` (the undo of :meth:`add_class`): its classifier, its embedding and its
        kept images go, its rows leave the ridge statistics, and the classes added after it move down by one.
        DataError for a class that was not added."""
        from .classify.new_class import remove_from_models, require_examples

        images = require_examples(self.class_examples, str(name))
        label = self.class_names.index(str(name))
        X = self.transform(images) if getattr(self.classifier, "gram_", None) is not None else None
        rows = (self.metadata.get("added_rows") or {}).pop(str(name), None)
        remove_from_models(self.classifier, self.classmap, label, X, 1.0 if rows is None else float(rows) / len(images))
        del self.class_names[label]
        del self.class_examples[str(name)]

    # ------------------------------------------------------------ store
    def save(self, path: str | Path) -> Path:
        """Save as a model folder (``model.json`` + ``arrays.npz``), atomically; returns the folder."""
        return save_bundle(path, MODEL_JSON, *self._bundle())

    def saved_bytes(self) -> int:
        """About the bytes :meth:`save` writes (the arrays, stored uncompressed, and the JSON), without writing:
        what a kept run adds to a project."""
        doc, arrays = self._bundle()
        doc["arrays"] = array_manifest({k: np.asarray(v) for k, v in arrays.items()})
        # per member of the .npz: its .npy header (128), the zip's local and central headers and the alignment
        members = sum(int(np.asarray(a).nbytes) + 240 + 2 * len(k) for k, a in arrays.items())
        return members + 22 + len(json.dumps(doc, indent=1, allow_nan=True, default=str))

    def _bundle(self) -> tuple[dict, dict[str, np.ndarray]]:
        """The saved document and its arrays (names -> arrays), as :meth:`save` writes them."""
        arrays: dict[str, np.ndarray] = {}
        doc = {
            "format": MODEL_FORMAT,
            "version": MODEL_VERSION,
            "software": _software(),
            "class_names": self.class_names,
            "image_size": list(self.image_size),
            "grey": self.grey,
            "features": dump_estimator(self.features, arrays, "features"),
            "classifier": dump_estimator(self.classifier, arrays, "classifier"),
            "classmap": None if self.classmap is None else dump_estimator(self.classmap, arrays, "classmap"),
            "metadata": _json_clean(self.metadata),
            "class_examples": dump_examples(self.class_examples, arrays),
        }
        return doc, arrays

    @classmethod
    def load(cls, path: str | Path) -> "Recogniser":
        """Load a model folder saved by :meth:`save`; :class:`ModelFormatError` when it is not safe or not right."""
        doc, arrays = load_bundle(path, MODEL_JSON, MODEL_FORMAT, MODEL_VERSION)
        where = str(path)
        names = doc.get("class_names")
        if not isinstance(names, list) or len(names) < 2 or not all(isinstance(c, str) for c in names):
            raise ModelFormatError(f"{where}: class_names must be a list of at least 2 names")
        try:
            check_class_names(names, f"{where}: class_names")
        except DataError as exc:  # duplicates or names no export or output line could hold
            raise ModelFormatError(str(exc)) from None
        size = doc.get("image_size")
        if not (isinstance(size, list) and len(size) == 2 and all(isinstance(s, int) and not isinstance(s, bool)
                                                                  and 1 <= s <= MAX_IMAGE_SIDE for s in size)):
            raise ModelFormatError(f"{where}: image_size must be two integers from 1 to {MAX_IMAGE_SIDE}, got {size!r}")
        grey = doc.get("grey")
        if not isinstance(grey, bool):
            raise ModelFormatError(f"{where}: grey must be true or false")
        metadata = doc.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise ModelFormatError(f"{where}: metadata must be an object")
        if "detection" in metadata:  # a hand model's saved scan settings (one table: core/settings/hand.py)
            from .settings.hand import check_detection

            check_detection(metadata["detection"], f"{where}: metadata")
        features = load_estimator(doc.get("features"), arrays, where=f"{where}: features")
        classifier = load_estimator(doc.get("classifier"), arrays, where=f"{where}: classifier")
        classmap = None if doc.get("classmap") is None else \
            load_estimator(doc["classmap"], arrays, where=f"{where}: classmap")
        rec = cls(features, classifier, classmap, names, tuple(size), grey, metadata)
        rec._check_consistent(where)
        shape = tuple(size) if grey else (*size, 3)
        rec.class_examples = load_examples(doc.get("class_examples"), arrays, names, shape, where)
        if classmap is not None:
            classmap.estimator_ = classifier   # the bank is saved once, as the classifier; the ClassMap refers to it
        return rec

    def _check_consistent(self, where: str) -> None:
        """Components fit together: class count, feature width (checked on one blank image)."""
        classes = getattr(self.classifier, "classes_", None)
        if classes is None or not np.array_equal(np.asarray(classes), np.arange(self.n_classes)):
            raise ModelFormatError(f"{where}: the classifier's classes do not match the {self.n_classes} class names")
        blank = np.zeros((1, *self.image_size) if self.grey else (1, *self.image_size, 3), np.uint8)
        try:
            width = self.features.transform(blank).shape[1]
        except Exception as exc:  # noqa: BLE001 - any failure here means the saved feature map is unusable
            raise ModelFormatError(f"{where}: the feature map cannot process {self.image_size} images: {exc}") from None
        want = getattr(self.classifier, "n_features_in_", width)
        if width != want:
            raise ModelFormatError(f"{where}: the feature map gives {width} features, the classifier expects {want}")


def _software() -> str:
    try:
        from importlib.metadata import version

        return f"classmap-studio {version('classmap-studio')}"
    except Exception:  # noqa: BLE001 - not installed (run from a checkout)
        return "classmap-studio"


def _json_clean(value: Any) -> Any:
    """Metadata as plain JSON values (numpy scalars/arrays to Python); ConfigError for anything else."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_json_clean(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_clean(v) for k, v in value.items()}
    raise ConfigError(f"model metadata: values of type {type(value).__name__} cannot be saved")
