"""What a component's parameters accept: scikit-learn's parameter constraints, the one declaration.

Each component class lists ``_parameter_constraints`` (scikit-learn's own mechanism: ``Interval``,
``StrOptions``, ``"boolean"``, ``None``, ...); :func:`validate_params` checks a component against them
when it is fitted, and the registry derives the settings forms and the CLI's and the store's checks
from the same lists (:func:`classmap_gui.core.guards.schema.from_constraints`). The constraint classes live
in scikit-learn's ``sklearn.utils._param_validation``: it is imported here only, so a change there
touches this module alone. :class:`ImageSize` is the one constraint of our own.
"""
from __future__ import annotations

from numbers import Integral
from typing import Any

from sklearn.utils._param_validation import HasMethods, Interval, InvalidParameterError, Options, StrOptions

from ..errors import ConfigError
from .schema import MAX_IMAGE_SIDE

__all__ = ["HasMethods", "ImageSize", "Interval", "StrOptions", "validate_params"]


class ImageSize(Options):
    """An image size ``(h, w)``: a list or tuple of two whole numbers from 1 to ``high``. The registry
    offers it as text ``HxW`` (``image_size``)."""

    image_size = True

    def __init__(self, high: int = MAX_IMAGE_SIDE):
        super().__init__(tuple, set())
        self.low, self.high = 1, int(high)

    def is_satisfied_by(self, val) -> bool:
        return (isinstance(val, (tuple, list)) and len(val) == 2
                and all(isinstance(v, Integral) and not isinstance(v, bool) and 1 <= v <= self.high for v in val))

    def __str__(self) -> str:
        return f"an image size (h, w) with sides from 1 to {self.high}"


def validate_params(est: Any) -> None:
    """``est``'s parameters against its ``_parameter_constraints`` (scikit-learn's validation); a refusal
    is a ConfigError (a ValueError, as scikit-learn's own) naming the parameter, the class and what it
    accepts."""
    try:
        est._validate_params()
    except InvalidParameterError as exc:
        raise ConfigError(str(exc)) from None
