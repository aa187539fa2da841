"""ClassMap's filter indexes: the p classes nearest a query embedding by weighted L1, one protocol and a kind table.

Every kind is a :class:`~.base.FilterIndex` (``fit(embeddings, alpha)``, ``search(F, p)``, its state saved by the
store's generic path). :data:`INDEXES` (:mod:`classmap_gui.core.filter_kinds`) is the one table of kinds: ClassMap's ``filter`` parameter takes its
names (or ``"auto"``), the registry derives the kinds' saved type names and parameter schemas from it, and
adding a kind is one module and one line there. ``"auto"`` (:func:`auto_kind`) is the one policy: the exact scan
below :data:`AUTO_INDEX_FROM` classes, the HNSW graph from there on (on real class embeddings the IVF lists did
not prune, docs/scale.md).

The kinds' modules load when one is made.
"""
from __future__ import annotations

import importlib

from ...filter_kinds import AUTO_INDEX_FROM, INDEXES, auto_kind


def filter_class(kind: str) -> type:
    """The class of filter kind ``kind`` (a name of :data:`INDEXES`)."""
    module, _, name = INDEXES[kind][0].partition(":")
    return getattr(importlib.import_module(module, "classmap_gui.core"), name)


def make_filter(kind: str, params: dict | None = None):
    """An unfitted filter index of ``kind`` with ``params``."""
    return filter_class(kind)(**(params or {}))


__all__ = ["AUTO_INDEX_FROM", "INDEXES", "auto_kind", "filter_class", "make_filter"]
