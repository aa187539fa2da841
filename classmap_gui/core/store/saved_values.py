"""Checking a saved component's parameters and learned values at load.

A model file holds each component's constructor parameters; the classes store them verbatim
(scikit-learn's contract) and check them only when fitting or predicting, so a corrupted or
hand-edited value (ClassMap ``p = 0``, ``refine = []``, a solver tolerance of ``-Infinity``)
would pass loading and break the first prediction as an internal error. Here every saved
parameter that the component's schema in :mod:`classmap_gui.core.registry` knows is checked by
that same schema, so the file is refused at load with one line naming the value: one table of
what is allowed, for options typed by a person and values read from a file alike.

Learned arrays are checked for values no fitted model holds: every float array finite, and the
ranges of :data:`STATE_RANGES` (per saved type name); a memory-mapped array is not read for this
(that would read what the map is there to avoid). Shapes are the classes' own ``_validate_state``.

Worker counts (``n_jobs``) depend on the machine: a count saved on a larger machine is not an
error here, only one that no machine accepts (0, not a whole number).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import registry
from ..errors import ModelFormatError

# MAX_ABS: no learned float value of a model comes near it (the table an exported predict.py shares)
from ..guards.read_limits import MAX_ABS, MAX_SAVED_WORKERS, all_finite
from ..guards.schema import Invalid


def _components_of(cls: type) -> list:
    found = []
    for kind in registry.KINDS:
        for comp in registry.components(kind):
            try:
                if comp.cls is cls:
                    found.append(comp)
            except ImportError:  # pragma: no cover - an optional component's library is missing
                continue
    return found


def saved_schema(cls: type) -> dict[str, Any]:
    """``{parameter name: Param}`` of the saved class ``cls``: the schemas of every registry component
    it stands for (the names of one class share its parameters' schema). An export writes the same
    rules into its predict.py (:func:`classmap_gui.core.export.predictor.settings_rules`)."""
    schema: dict = {}
    for comp in _components_of(cls):
        schema.update({p.name: p for p in comp.params if p.name not in schema})
    return schema


def check_saved_params(cls: type, params: dict[str, Any], where: str) -> dict[str, Any]:
    """``params`` of a saved ``cls`` checked against its registry schema (converted as the schema
    converts); ModelFormatError ``"<where>: model file is invalid: <what>"`` for the first bad one.
    Parameters the schema does not list are left to the class's own checks."""
    schema = saved_schema(cls)
    out = dict(params)
    for key, value in params.items():
        param = schema.get(key)
        if param is None:  # a parameter the app fixes (a nested estimator, ...): the class checks it
            continue
        try:
            if param.per_core and value is not None:
                if isinstance(value, bool) or not isinstance(value, int) or value == 0 \
                        or abs(value) > MAX_SAVED_WORKERS:
                    raise Invalid(f"{key} must be a whole number from -{MAX_SAVED_WORKERS} to {MAX_SAVED_WORKERS} "
                                  f"other than 0 (-1: all cores)")
                continue
            out[key] = param.check(value)
        except Invalid as exc:
            raise ModelFormatError(f"{where}: model file is invalid: {exc}, got {str(value)[:60]!r}") from None
    return out


#: ``{saved type name: {state attribute: smallest value allowed}}`` beyond finiteness
STATE_RANGES: dict[str, dict[str, float]] = {
    "classmap": {"alpha_": 0.0, "reference_": 0},
}


def check_saved_state(type_name: str, state: dict[str, Any], where: str) -> None:
    """ModelFormatError ``"<where>: model file is invalid: ..."`` for a learned array holding NaN or
    infinity, or a value below its :data:`STATE_RANGES` bound."""
    lows = STATE_RANGES.get(type_name, {})
    for key, value in state.items():
        if not isinstance(value, np.ndarray) or isinstance(value, np.memmap) or value.size == 0:
            continue
        if not all_finite(value):
            raise ModelFormatError(f"{where}: model file is invalid: {key} holds NaN, infinite or absurdly large "
                                   f"values (beyond {MAX_ABS:g})")
        if key in lows and value.dtype.kind in "iuf" and value.min() < lows[key]:
            raise ModelFormatError(f"{where}: model file is invalid: {key} holds values below {lows[key]}")
    if type_name == "classmap":
        _check_references(state, where)


def _check_references(state: dict[str, Any], where: str) -> None:
    """ClassMap's reference classifiers index its bank: a one-vs-all bank has one per class, an
    all-pairs bank one per pair."""
    refs, n = state.get("reference_"), state.get("n_classes_")
    if not isinstance(refs, np.ndarray) or refs.dtype.kind not in "iu" or refs.size == 0 or not isinstance(n, int):
        return  # malformed: the class's own checks say so
    size = n if state.get("bank_kind_") == "ova" else n * (n - 1) // 2
    if refs.max() >= size:
        raise ModelFormatError(f"{where}: model file is invalid: reference_ names classifier {int(refs.max())}, "
                               f"the bank has {size}")
