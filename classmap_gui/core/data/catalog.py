"""`BuiltinDataset`: the record a built-in data set is known by (a leaf module).

Generator modules (``glyph_pose``, ``hand_pose``) describe their sets with it and ``builtin`` collects
and registers them, so imports point one way: builtin -> generators -> catalog.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .imageset import ImageSet


@dataclass(frozen=True)
class BuiltinDataset:
    """A data set known by name. ``load(**options)`` returns an ImageSet; ``available()`` says
    whether it can be loaded here, and ``how_to_get`` what to do when not. ``version`` changes
    whenever the same options would load other images (caches of generated data key on it)."""

    name: str
    description: str
    load: Callable[..., ImageSet]
    available: Callable[[], bool] = lambda: True
    how_to_get: str = ""
    version: int = 0


__all__ = ["BuiltinDataset"]
