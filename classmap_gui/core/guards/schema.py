"""Parameter schemas: what one hyper-parameter of a component accepts, and checking a value against it.

Each component class declares what its parameters accept once, as scikit-learn's
``_parameter_constraints`` (``Interval``, ``StrOptions``, ``"boolean"``, ``None``, ...);
:func:`from_constraints` reads that declaration into a :class:`Param`, the form field the GUI, the
CLI and the store use. A :class:`Param` names a parameter's kind (``int``, ``float``, ``str``, ``bool``), default, help
line and every bound on its values: numeric range, allowed words (``"auto"``, ``"scale"``),
whether ``None`` (unset/off) is accepted, image sizes ``HxW``, and thread counts bounded by this
machine's cores. :meth:`Param.check` converts and checks one value, raising :class:`Invalid` with
what is wrong ("C must lie between 1e-08 and 1e+08"); the component registry
(:mod:`classmap_gui.core.registry`) holds the schemas and turns that into a ConfigError naming the
option as the user wrote it. Bounds that keep hostile values from exhausting the machine (sizes,
counts, thread numbers) live here with the rest, so there is one table of what is allowed.

Imports nothing heavy: the CLI checks options with it before the numeric stack loads.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from ..errors import ConfigError

# the largest image side a model works at (:mod:`.read_limits`, the table an export shares). Recognition needs
# small images; the bound also keeps a hostile model file from making the loader encode a giant blank image.
from .read_limits import MAX_IMAGE_SIDE

AUTO = "auto"
#: Worker threads/processes per core a setting may ask for (more only thrashes the machine).
MAX_JOBS_PER_CORE = 4
#: Random seeds: what numpy's legacy seeding (and scikit-learn) accepts.
MAX_SEED = 2**32 - 1


class Invalid(ConfigError):
    """A value a parameter does not accept; ``str`` says what it must be ("C must lie between ...")."""


def _is_bool(v: Any) -> bool:
    return isinstance(v, (bool, np.bool_))


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not _is_bool(v)


def _is_whole(v: Any) -> bool:
    return _is_number(v) and math.isfinite(float(v)) and float(v).is_integer()


@dataclass(frozen=True)
class Param:
    """One hyper-parameter of a component.

    kind: ``int``, ``float``, ``str`` or ``bool``; default: the value the class uses when unset.
    help: one line for people. choices: allowed values (for ``int``/``float`` kinds: allowed
    *words* besides numbers, e.g. ``gamma="scale"``). low / high: inclusive numeric bounds (for an
    image size, of each side). auto: also accepts ``"auto"``. nullable: accepts ``None``
    (unset/off; implied by a ``None`` default). image_size: the value is an image size, text
    ``"HxW"``, one side for a square, or ``[h, w]``; it becomes ``(h, w)``. per_core: a worker
    count: -1 is every core, -2 all but one, ..., 0 is refused and the top is
    :data:`MAX_JOBS_PER_CORE` times this machine's cores. closed: which of low / high belong to the
    range (``"both"``, ``"left"``, ``"right"``, ``"neither"``, as scikit-learn's ``Interval``).
    """

    name: str
    kind: type
    default: object
    help: str
    choices: tuple | None = None
    low: float | None = None
    high: float | None = None
    auto: bool = False
    nullable: bool = False
    image_size: bool = False
    per_core: bool = False
    closed: str = "both"

    def bounds(self) -> tuple[float | None, float | None]:
        """The inclusive numeric range today (a worker count's depends on this machine's cores)."""
        if self.per_core:
            cores = os.cpu_count() or 1
            return -(cores + 1), MAX_JOBS_PER_CORE * cores
        return self.low, self.high

    def check(self, value: Any) -> Any:
        """``value`` converted to this parameter's kind after checking it; :class:`Invalid` when refused.

        Text holding a number (or true/false) is accepted for numeric (boolean) parameters and
        converted: values from a form field or a config file arrive as text."""
        if value is None:
            if self.nullable or self.default is None:
                return None
            raise Invalid(f"{self.name} needs a value")
        if self.image_size:
            return self._size(value)
        if isinstance(value, str):
            return self._text(value)
        if self.kind is bool:
            if _is_bool(value):
                return bool(value)
            raise Invalid(f"{self.name} must be true or false")
        if not _is_number(value):
            raise Invalid(f"{self.name} must be {_kind_name(self.kind)}")
        if self.kind is str:
            raise Invalid(f"{self.name} must be one of {', '.join(self.choices or ())}")
        if not math.isfinite(float(value)):
            raise Invalid(f"{self.name} must be a finite number")
        if self.kind is int and not _is_whole(value):
            raise Invalid(f"{self.name} must be a whole number")
        self._in_range(value)
        return int(value) if self.kind is int else value

    def _text(self, value: str) -> Any:
        if self.auto and value == AUTO:
            return value
        if self.kind is str:
            if self.choices and value not in self.choices:
                raise Invalid(f"{self.name} must be one of {', '.join(self.choices)}")
            return value
        if self.choices and value in self.choices:
            return value
        number = _number(value, self.kind)
        if number is not None:
            return self.check(number)
        words = [*(self.choices or ()), *((AUTO,) if self.auto else ())]
        raise Invalid(f"{self.name} must be {_kind_name(self.kind)}"
                      + (f" or one of {', '.join(words)}" if words else ""))

    def _in_range(self, value: Any) -> None:
        low, high = self.bounds()
        if self.per_core and value == 0:
            raise Invalid(self._range_text(low, high))
        left, right = self.closed in ("both", "left"), self.closed in ("both", "right")
        if (low is not None and (value < low or (value == low and not left))) or \
                (high is not None and (value > high or (value == high and not right))):
            raise Invalid(self._range_text(low, high))

    def _range_text(self, low: float | None, high: float | None) -> str:
        if self.per_core:
            return (f"{self.name} must lie between {low} and {high}, not 0 "
                    f"(-1: all {os.cpu_count() or 1} cores, -2: all but one)")
        if self.closed != "both":
            parts = [*([f"{'at least' if self.closed == 'left' else 'above'} {low:g}"] if low is not None else []),
                     *([f"{'at most' if self.closed == 'right' else 'below'} {high:g}"] if high is not None else [])]
            return f"{self.name} must be {' and '.join(parts)}"
        if low is not None and high is not None:
            return f"{self.name} must lie between {low:g} and {high:g}"
        return f"{self.name} must be at least {low:g}" if low is not None else f"{self.name} must be at most {high:g}"

    def _size(self, value: Any) -> tuple[int, int]:
        low, high = int(self.low or 1), int(self.high or MAX_IMAGE_SIDE)
        if isinstance(value, str):
            parts = value.lower().replace("×", "x").split("x")
        elif isinstance(value, (list, tuple)):
            parts = list(value)
        else:
            parts = [value]
        ok = len(parts) in (1, 2)
        try:
            sides = [int(p) for p in parts] if ok and all(_is_whole(p) or isinstance(p, str) for p in parts) else []
        except ValueError:
            sides = []
        if len(sides) == 1:
            sides = sides * 2
        if len(sides) != 2 or not all(low <= s <= high for s in sides):
            raise Invalid(f"{self.name} must be HxW with sides from {low} to {high} (e.g. 16x16)")
        return sides[0], sides[1]


def _number(text: str, kind: type) -> int | float | bool | None:
    """``text`` as a value of ``kind`` (int, float or bool), or None when it is not one."""
    t = text.strip().lower()
    if kind is bool:
        return {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}.get(t)
    try:
        return int(t) if kind is int else float(t)
    except ValueError:
        try:
            f = float(t)  # "1e3" for a whole-number parameter
        except ValueError:
            return None
        return f if kind is int else None


def _kind_name(kind: type) -> str:
    return {int: "a whole number", float: "a number", bool: "true or false", str: "a word"}[kind]


def from_constraints(name: str, constraints: list, default: Any, help: str) -> Param:
    """The form field of parameter ``name`` from its scikit-learn ``_parameter_constraints`` entry.

    Read by duck type, so this module needs no scikit-learn: ``Interval`` (``type``, ``left``,
    ``right``, ``closed``) gives the kind and range, ``StrOptions`` words (``"auto"`` sets ``auto``),
    ``"boolean"`` a check box, ``"random_state"`` a seed from 0 to :data:`MAX_SEED`, ``None``
    unset/off, the types ``Integral`` / ``Real`` an unbounded number, a constraint with
    ``image_size`` an image size; a parameter named ``n_jobs`` is a worker count (``per_core``).
    Anything else (an estimator, a callable) is not a setting a person types: ConfigError.
    """
    kind, low, high, closed, words, nullable, image = None, None, None, "both", [], False, False
    for c in constraints:
        if c is None:
            nullable = True
        elif c == "boolean":
            kind = bool
        elif c == "random_state":
            kind, low, high, nullable = int, 0, MAX_SEED, True
        elif c is Integral or c is Real:
            kind = int if c is Integral else float
        elif getattr(c, "image_size", False):
            kind, low, high, image = str, c.low, c.high, True
        elif all(hasattr(c, a) for a in ("left", "right", "closed", "type")):
            kind, low, high, closed = (int if c.type is Integral else float), c.left, c.right, c.closed
        elif getattr(c, "type", None) is str and hasattr(c, "options"):
            words += sorted(c.options)
        else:
            raise ConfigError(f"parameter {name!r}: constraint {c!r} is not one a settings form can offer; "
                              "name the parameter among the component's internal ones")
    auto = words == [AUTO] and kind not in (None, str)     # a number or "auto"; other words are choices
    choices = None if auto else tuple(words) or None
    return Param(name, kind or str, default, help, choices=choices, low=low, high=high, auto=auto,
                 nullable=nullable, image_size=image, per_core=name == "n_jobs", closed=closed)


# ---------------------------------------------------------------- parameters many components share
#: ``classmap train --seed``: the seed training hands every component without its own ``random_state``
SEED = Param("random_state", int, None, "random seed (unset: the training seed)", low=0, high=MAX_SEED,
             nullable=True)
