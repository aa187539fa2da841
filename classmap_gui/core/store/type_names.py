"""The type names a saved model writes for its components (a file format: never rename one), and the
classes they stand for: every registry component is saved under its name, a few classes outside the table
under names of their own, and banks saved before they were split per trainer under their old names.

Kept apart from the registry, which lists and checks components; this is how the store names them.
"""
from __future__ import annotations

import inspect

from ..errors import ConfigError, ModelFormatError
from ..registry import KINDS, component, components, resolve

__all__ = ["register_saved_type", "saved_spec", "saved_type", "saved_type_name"]

#: Saved type names (a file format, never rename): a component is saved under its name, so these stay component
#: names (checked when first needed; the filter kinds come from filter_kinds.INDEXES); no component's classes:
_PINNED_NAMES = ("kmeans", "hog", "pixels", "rff", "cnn", "network", "ova-liblinear", "ova-ridge", "ova-rbf", "all-pairs",
                 "all-pairs-ridge", "compressive", "classmap", "exact", "ivf", "hnsw", "network-head")
_SAVED_EXTRA: dict[str, str] = {"compressive-classifier": ".classify.banks.compressive:CompressiveClassifier"}
#: Banks saved before they were split per trainer: ``{type name: {trainer: today's type name}}``; their
#: params hold ``trainer`` and every trainer's parameters (:func:`saved_spec`).
_SWITCHED: dict[str, dict[str, str]] = {
    "one-vs-all": {"liblinear": "ova-liblinear", "ridge": "ova-ridge", "rbf": "ova-rbf"},
    "all-pairs": {"liblinear": "all-pairs", "ridge": "all-pairs-ridge"},
}
_SAVED_TYPES: dict[str, type] = {}
_SAVED_NAMES: dict[type, str] = {}


def _saved() -> dict[str, type]:
    """The saved type names' classes, imported on first need (saving or loading a model)."""
    pairs = [*_SAVED_EXTRA.items(), *((c.name, c.path) for kind in KINDS for c in components(kind))]
    if not all(n in _SAVED_TYPES for n, _ in pairs):
        lost = set(_PINNED_NAMES) - {n for n, _ in pairs}
        if lost:
            raise ConfigError(f"saved type names {sorted(lost)} are no component's name: saved models would not load")
        for name, path in pairs:
            cls = resolve(path)
            _SAVED_TYPES.setdefault(name, cls)
            _SAVED_NAMES.setdefault(cls, name)
    return _SAVED_TYPES


def saved_type_name(cls: type) -> str | None:
    """The type name a saved model records for instances of ``cls``; None when not storable."""
    _saved()
    return _SAVED_NAMES.get(cls)


def saved_type(name: str) -> type | None:
    """The class a saved model's type name stands for; None when this version does not know it."""
    return _saved().get(name)


def saved_spec(name: str, params: dict) -> tuple[str, dict]:
    """A saved component's ``(type name, params)`` as this version names them. A bank saved before the
    split per trainer (``"one-vs-all"`` with ``trainer="ridge"`` and every trainer's parameters) becomes
    its trainer's class (``"ova-ridge"``) with the parameters that class takes; others pass unchanged."""
    table = _SWITCHED.get(name)
    if table is None or "trainer" not in params:
        return name, params
    new = table.get(params["trainer"]) if isinstance(params["trainer"], str) else None
    if new is None:
        raise ModelFormatError(f"the model's {name} bank has trainer {str(params['trainer'])[:40]!r}; "
                               f"known: {', '.join(table)}")
    takes = inspect.signature(component("bank", new).cls.__init__).parameters
    return new, {k: v for k, v in params.items() if k in takes and k != "self"}


def register_saved_type(name: str, cls: type) -> None:
    """Let instances of ``cls`` be saved and loaded as ``name`` (components outside this table, tests).

    Re-registering the same pair is fine; another class under a known name is a ConfigError."""
    known = _saved().get(name)
    if known is not None and known is not cls and known.__qualname__ != cls.__qualname__:
        raise ConfigError(f"store: name {name!r} is already registered for {known.__qualname__}")
    _SAVED_TYPES[name] = cls
    _SAVED_NAMES[cls] = name
