"""A project's saved settings checked on open against the one schema the Train panel and the CLI read.

``project.json`` keeps the training settings (:class:`~classmap_gui.core.train.config.TrainConfig`'s fields)
and a few of the app's own (``capture_target``). A file edited by hand or written by a stranger may hold
any JSON there; :func:`check_saved_settings` keeps every value the schema accepts, replaces each one it
refuses by its default (a component parameter: left out, so the component's own default applies) and
says which, so the project still opens and the panels only ever see values they can show.

Declarations read: the component registry's schemas (:mod:`classmap_gui.core.registry`, the same ones
``classmap train --set`` and the Train panel's forms check), :data:`~classmap_gui.core.guards.schema.SEED`,
:class:`TrainConfig`'s defaults, and :data:`CAPTURE_TARGET` here (the Capture panel's spin box reads it).
Keys it does not know are kept as they are: they are not settings anything reads.
"""
from __future__ import annotations

import math
from typing import Any

from .. import registry
from ..errors import ConfigError
from ..guards.schema import SEED, Param
from ..train.config import TrainConfig

__all__ = ["CAPTURE_TARGET", "FRACTION_LIMIT", "check_saved_settings"]

#: Dataset > Capture's images-per-class goal.
CAPTURE_TARGET = Param("capture_target", int, 50, "images to capture per class", low=1, high=100_000)
#: test_fraction and classmap_fraction lie in [0, FRACTION_LIMIT) (``classmap train --test-fraction``'s range).
FRACTION_LIMIT = 0.9
#: ClassMap parameters and bank penalties the search may be asked to choose ("auto" or a list of candidates).
_SEARCHABLE = {"classmap": ("reference_penalty", "embedding_examples", "refine", "p"), "bank": ("alpha", "C")}
_MAX_CANDIDATES = 64


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _fraction(name: str, value: Any, low_open: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not (0 < value if low_open else 0 <= value) or value >= FRACTION_LIMIT:
        raise ConfigError(f"{name} must be a number {'above 0' if low_open else 'from 0'} to below {FRACTION_LIMIT:g}")
    return float(value)


def _check_param(kind: str, comp, key: str, value: Any) -> Any:
    """``value`` of component parameter ``key`` as the schema converts it; ConfigError saying why not."""
    if key in comp.internal or (kind == "bank" and key == "trainer") or not comp.has(key):
        raise ConfigError(f"{comp.name} has no setting {key!r}")
    param = comp.param(key)
    if key in _SEARCHABLE.get(kind, ()) and not param.auto:
        if value == "auto":
            return value
        if isinstance(value, list):
            if not 0 < len(value) <= _MAX_CANDIDATES:
                raise ConfigError(f"{key} needs 1 to {_MAX_CANDIDATES} candidates")
            return [param.check(v) for v in value]
    return param.check(value)


def _component_params(kind: str, name: str, params: Any, field: str, notes: list[str]) -> dict:
    """The parameters in ``params`` that component ``name`` accepts; a note for each one left out."""
    if not isinstance(params, dict):
        notes.append(f"{field} = {_shown(params)} is not a set of named values; using the defaults")
        return {}
    comp = registry.component(kind, name)
    out = {}
    for key, value in params.items():
        try:
            out[key] = _check_param(kind, comp, key, value)
        except ConfigError as exc:
            default = f" ({comp.param(key).default!r})" if comp.has(key) and key not in comp.internal else ""
            notes.append(f"{field}.{key} = {_shown(value)}: {exc}; using the default{default}")
    return out


def _name(kind: str, value: Any, default: str, notes: list[str]) -> str:
    if isinstance(value, str) and value in registry.names(kind):
        return value
    notes.append(f"{kind} = {_shown(value)} is not one of {', '.join(registry.names(kind))}; using {default!r}")
    return default


def check_saved_settings(settings: dict) -> tuple[dict, list[str]]:
    """``(settings the schema accepts, one note per value refused)`` for a project's saved ``settings``.

    Each refused value is replaced by its default: a top-level setting by :class:`TrainConfig`'s (or
    :data:`CAPTURE_TARGET`'s), a component parameter by leaving it out. A note reads
    ``"classmap.d = 'abc': d must be a whole number; using the default"``.
    """
    out, notes = dict(settings), []
    train = TrainConfig()
    for kind in ("features", "bank"):  # a key that was not saved is not added: the panel's default applies
        default = getattr(train, kind)
        name = _name(kind, out[kind], default, notes) if kind in out else default
        if kind in out:
            out[kind] = name
        if f"{kind}_params" in out:
            out[f"{kind}_params"] = _component_params(kind, name, out[f"{kind}_params"], f"{kind}_params", notes)
    if out.get("classmap") is not None and not isinstance(out["classmap"], dict):
        notes.append(f"classmap = {_shown(out['classmap'])} is not a set of named values; using brute force "
                     f"(no ClassMap), the default")
        out["classmap"] = train.classmap
    elif out.get("classmap") is not None:
        out["classmap"] = _component_params("classmap", "classmap", out["classmap"], "classmap", notes)
    for key, low_open in (("test_fraction", False), ("classmap_fraction", True)):
        if key in out:
            try:
                out[key] = _fraction(key, out[key], low_open)
            except ConfigError as exc:
                notes.append(f"{key} = {_shown(out[key])}: {exc}; using {getattr(train, key):g}")
                out[key] = getattr(train, key)
    for key, param, default in (("seed", SEED, train.seed), ("capture_target", CAPTURE_TARGET, CAPTURE_TARGET.default)):
        if key in out:
            try:
                value = param.check(out[key])  # text holding a number is converted, as from a form
                if value is None:
                    raise ConfigError(f"{key} needs a value")
                out[key] = value
            except ConfigError as exc:
                text = str(exc).replace(param.name, key, 1)
                notes.append(f"{key} = {_shown(out[key])}: {text}; using {default}")
                out[key] = default
    if "search" in out and not isinstance(out["search"], dict):
        notes.append(f"search = {_shown(out['search'])} is not a set of named values; using the defaults")
        out["search"] = {}
    return out, notes
