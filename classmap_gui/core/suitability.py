"""When a component suits a data set and how its parameters grow with it, as plain data.

A registry entry (:class:`~classmap_gui.core.registry.Component`) carries a :class:`Suits`, so the
settings proposed for a data set (:func:`classmap_gui.core.train.defaults.suggest_config`) read the
registry without importing any component's class: the GUI proposes settings with numba, OpenCV and
the solvers still unloaded. A new feature map or bank is proposed by giving its entry a ``Suits``;
``defaults`` names no component.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

__all__ = ["DataSize", "Sized", "Suits"]


@dataclass(frozen=True)
class DataSize:
    """What the suggestions look at: images, classes, the smaller image side, the smallest class's size, and
    whether the images are known to be of hands (``hands``: recorded from a hand video)."""

    n: int
    classes: int
    side: int
    fewest: int
    hands: bool = False

    def fields(self) -> dict:
        """The names reasons may use: ``{n}``, ``{C}``, ``{side}``, ``{fewest}``."""
        return {"n": self.n, "C": self.classes, "side": self.side, "fewest": self.fewest}


@dataclass(frozen=True)
class Sized:
    """Parameter ``param`` sized to the data.

    ``of`` (``"images"`` or ``"classes"``) times ``ratio``, rounded down (``rounding="floor"``) or
    to the nearest power of two (``"pow2"``), clipped to ``[low, high]``; with ``steps``
    (``((at_least, value), ...)``, rising) instead the value of the last step the count reaches.
    ``keep``: a value the person gave is kept (else the sized value replaces it).
    """

    param: str
    of: str = "images"
    ratio: Fraction = Fraction(1)
    low: float = 0
    high: float = math.inf
    rounding: str = "floor"
    steps: tuple[tuple[int, float], ...] = ()
    keep: bool = False

    def value(self, data: DataSize) -> int | float:
        """The parameter's value for ``data``."""
        count = data.n if self.of == "images" else data.classes
        if self.steps:
            return [v for at, v in self.steps if count >= at][-1]
        x = Fraction(count) * Fraction(self.ratio)
        x = 2 ** round(math.log2(max(x, 1))) if self.rounding == "pow2" else math.floor(x)
        return int(min(self.high, max(self.low, x)))


@dataclass(frozen=True)
class Suits:
    """When a component is proposed and how it is sized.

    Among the components of a kind that suit the data (images of at least ``min_side`` pixels, at
    most ``max_classes`` and at least ``min_classes`` classes, at least ``min_per_class`` images in
    the smallest class) the one of lowest ``rank`` is proposed, with ``why``. ``sizes`` set its
    parameters whenever it is used (proposed or chosen), said by ``sized_why``. ``why_not``: what to
    say when a rule fails (keyed by the rule's name, e.g. ``"min_classes"``). Texts are format
    strings over :meth:`DataSize.fields`, the sized parameters and the rules' thresholds. ``hands``: made for
    images of hands (a network trained on them): proposed only where the images are hands, and there before
    every other component of its kind.
    """

    rank: int = 0
    min_side: int = 0
    max_classes: int | None = None
    min_classes: int = 0
    min_per_class: int = 0
    why: str = ""
    sizes: tuple[Sized, ...] = ()
    sized_why: str = ""
    why_not: dict = field(default_factory=dict)
    hands: bool = False

    def misfit(self, data: DataSize) -> str | None:
        """The name of the first rule ``data`` fails, None when the component suits it."""
        for rule, ok in (("min_side", data.side >= self.min_side),
                         ("max_classes", self.max_classes is None or data.classes <= self.max_classes),
                         ("min_classes", data.classes >= self.min_classes),
                         ("min_per_class", data.fewest >= self.min_per_class),
                         ("hands", data.hands or not self.hands)):
            if not ok:
                return rule
        return None

    def sized(self, data: DataSize, given: dict | None = None) -> dict:
        """The sized parameters for ``data``, ``given`` ones kept where a :class:`Sized` says ``keep``."""
        given = given or {}
        return {s.param: s.value(data) for s in self.sizes if not (s.keep and s.param in given)}

    def say(self, text: str, data: DataSize, sized: dict | None = None) -> str:
        """``text`` with the data's fields, the sized parameters and the thresholds filled in."""
        return text.format(**data.fields(), **(sized or {}), min_side=self.min_side, max_classes=self.max_classes,
                           min_classes=self.min_classes, min_per_class=self.min_per_class)
