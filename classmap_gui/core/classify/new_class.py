"""A class added to a trained model without retraining it: the bank, the ClassMap and the kept examples together.

:meth:`classmap_gui.core.recogniser.Recogniser.add_class` calls :func:`add_to_models`: the bank adds the class's
classifier (a ridge bank in closed form from its kept statistics, a compressive bank its sketch), a ClassMap embeds
the class through its references and adds it to its filter index; no other class's classifier or embedding
changes. Before that, :func:`closeness` holds out the last quarter of the examples (a recording's last frames: the
most honest part to hold out of a video), fits the new classifier on the rest from the same statistics and names
the existing class that most of the held-out examples go to, if any — a gesture too close to one the model
already knows. The result is an :class:`AddedClass` the app shows and the CLI prints.

The examples are kept with the model (:func:`dump_examples` / :func:`load_examples`: one uint8 array in the
model's ``arrays.npz``, no pickle), so an added class can be removed again (its rows taken out of the ridge
statistics, :func:`remove_from_models`) or rebuilt.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data.imageset import BACKGROUND_CLASS
from ..errors import ConfigError, DataError, ModelFormatError

#: share of the examples held out to check that a new class is not an existing one
HOLDOUT = 0.25
#: a new class is "too close" to an existing one when more than this share of its held-out examples go to it
CLOSE_SHARE = 0.5


@dataclass
class AddedClass:
    """What adding a class did: its ``label`` and ``name``, the ``examples`` it was built from, and the check on
    its held-out examples: ``held_out`` of them, ``recall`` (the share named as the new class by a classifier
    fitted without them), ``closest`` (the existing class — a hand shape for hand-pose names — that took the
    most of them, or None) with its ``closest_share``; ``warning``: one line for a person when the new class is
    too close to ``closest`` (else None)."""

    label: int
    name: str
    examples: int
    held_out: int = 0
    recall: float | None = None
    closest: str | None = None
    closest_share: float = 0.0
    warning: str | None = None

    def to_json(self) -> dict:
        return {k: v for k, v in vars(self).items()}


def group_name(name: str) -> str:
    """The shape a class name is of (``"V · palm forward · …"`` -> ``"V"``); other names are their own."""
    return str(name).partition(" · ")[0]


def closeness(bank, X: np.ndarray, class_names: list[str], name: str, weight: float = 1.0) -> dict:
    """The held-out check (module docstring) for a ridge bank that keeps statistics: ``{"held_out", "recall",
    "closest", "closest_share", "warning"}``; an empty dict where it cannot be made (too few examples, a bank
    without statistics)."""
    n_val = int(len(X) * HOLDOUT)
    if n_val < 2 or getattr(bank, "gram_", None) is None or not hasattr(bank, "coef_"):
        return {}
    fit, val = X[:len(X) - n_val], X[len(X) - n_val:]
    w, b = bank.new_classifier(fit, weight)
    S = val @ np.asarray(bank.coef_, np.float32).T + bank.intercept_
    if BACKGROUND_CLASS in class_names and len(class_names) > 2:
        # a hand model reads a hand among the hand classes (its scan has decided there is one): so here
        S[:, class_names.index(BACKGROUND_CLASS)] = -np.inf
    own = val @ w + b
    best = np.argmax(S, axis=1)
    named_new = own >= S.max(axis=1)
    groups = [group_name(class_names[c]) for c in best[~named_new]]
    out = {"held_out": int(n_val), "recall": float(named_new.mean()), "closest": None, "closest_share": 0.0,
           "warning": None}
    if groups:
        names, counts = np.unique(groups, return_counts=True)
        top = int(np.argmax(counts))
        out["closest"], out["closest_share"] = str(names[top]), float(counts[top] / n_val)
        if out["closest_share"] > CLOSE_SHARE:
            out["warning"] = (f"{name!r} looks like {out['closest']!r}: {counts[top]} of its {n_val} held-out "
                              f"examples are named {out['closest']!r}; record a more distinct gesture, or remove it")
    return out


def check_new_name(name: str, class_names: list[str]) -> str:
    """``name`` if a new class may take it; ConfigError when a class, or a hand shape, has it already."""
    name = str(name)
    if name in class_names:
        raise ConfigError(f"class {name!r} exists already in the model")
    if any(n.startswith(name + " · ") for n in class_names):
        raise ConfigError(f"{name!r} is the name of a hand shape the model knows already; choose another name")
    return name


def add_to_models(classifier, classmap, X: np.ndarray, label: int, *, weight: float = 1.0, progress=None,
                  should_stop=None) -> None:
    """Add class ``label`` with feature rows ``X (m, D) float32`` (each counting as ``weight`` rows in a ridge
    solve) to the bank and (when given) the ClassMap."""
    if not hasattr(classifier, "add_class"):
        raise ConfigError(f"the model's classifier ({type(classifier).__name__}) cannot take a new class without "
                          "retraining; retrain with the new class (a ridge bank, ova-ridge, or --bank compressive)")
    if classmap is not None and getattr(classifier, "gram_", None) is None:
        raise ConfigError("this ClassMap model's bank keeps no training statistics (a model saved before they "
                          "were kept): retrain it with this version to add classes")
    if weight != 1.0:
        if getattr(classifier, "gram_", None) is None:
            raise ConfigError("only a ridge bank that keeps its statistics can weigh a new class's examples")
        classifier.add_class(label, X, weight=weight, progress=progress, should_stop=should_stop)
    else:
        classifier.add_class(label, X, progress=progress, should_stop=should_stop)
    if classmap is not None:
        classmap.update_class_embeddings(classifier, X, np.full(len(X), label, np.int64))


def remove_from_models(classifier, classmap, label: int, X: np.ndarray | None, weight: float = 1.0) -> None:
    """Take class ``label`` out of the bank (its rows ``X``, of ``weight``, out of kept statistics) and the
    ClassMap; the classes after it move down by one (labels stay ``0..C-1``)."""
    if not hasattr(classifier, "remove_class"):
        raise ConfigError(f"the model's classifier ({type(classifier).__name__}) cannot remove a class")
    if weight != 1.0:
        classifier.remove_class(label, X, weight)
    else:
        classifier.remove_class(label, X)
    classifier.classes_ = np.arange(len(classifier.classes_), dtype=np.int64)
    if classmap is not None:
        classmap.remove_class(label)


def dump_examples(examples: dict[str, np.ndarray], arrays: dict, prefix: str = "examples") -> dict | None:
    """``{name: (m, h, w[, 3]) uint8}`` as JSON (names, counts) plus one array in ``arrays``; None when empty."""
    if not examples:
        return None
    names = list(examples)
    arrays[f"{prefix}/images"] = np.ascontiguousarray(np.concatenate([examples[n] for n in names]), np.uint8)
    return {"names": names, "counts": [int(len(examples[n])) for n in names],
            "images": {"__array__": f"{prefix}/images"}}


def load_examples(doc, arrays: dict, class_names: list[str], shape: tuple, where: str) -> dict[str, np.ndarray]:
    """The examples :func:`dump_examples` saved, checked (ModelFormatError): names of the model's classes,
    counts that add up, uint8 images of the model's ``shape`` (h, w[, 3])."""
    if doc is None:
        return {}
    ref = doc.get("images") if isinstance(doc, dict) else None
    key = ref.get("__array__") if isinstance(ref, dict) else None
    names, counts = (doc.get("names"), doc.get("counts")) if isinstance(doc, dict) else (None, None)
    images = arrays.get(key) if isinstance(key, str) else None
    ok = (isinstance(names, list) and isinstance(counts, list) and len(names) == len(counts)
          and all(isinstance(n, str) and n in class_names for n in names) and len(set(names)) == len(names)
          and all(isinstance(c, int) and not isinstance(c, bool) and c > 0 for c in counts)
          and isinstance(images, np.ndarray) and images.dtype == np.uint8 and images.shape[1:] == tuple(shape)
          and len(images) == sum(counts))
    if not ok:
        raise ModelFormatError(f"{where}: the added classes' examples are malformed (names of the model's classes, "
                               f"counts, and uint8 images of shape {tuple(shape)} must agree)")
    ends = np.cumsum(counts)
    return {n: np.asarray(images[e - c:e]) for n, c, e in zip(names, counts, ends)}


def require_examples(examples: dict, name: str) -> np.ndarray:
    """The kept examples of added class ``name``; DataError when it is not an added class."""
    if name not in examples:
        raise DataError(f"class {name!r} was not added to this model (only added classes keep their examples and "
                        "can be removed)")
    return examples[name]


__all__ = ["AddedClass", "CLOSE_SHARE", "HOLDOUT", "add_to_models", "check_new_name", "closeness", "dump_examples",
           "group_name", "load_examples", "remove_from_models", "require_examples"]
