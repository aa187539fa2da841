"""Checking a saved component's parameters at load, against the schema training checks them with.

A model file holds each component's constructor parameters; the classes store them verbatim
(scikit-learn's contract) and check them only when fitting or predicting, so a corrupted or
hand-edited value (ClassMap ``p = 0``, ``refine = []``, a solver tolerance of ``-Infinity``)
would pass loading and break the first prediction as an internal error. Here every saved
parameter that the component's schema in :mod:`classmap_gui.core.registry` knows is checked by
that same schema, so the file is refused at load with one line naming the value: one table of
what is allowed, for options typed by a person and values read from a file alike.

Worker counts (``n_jobs``) depend on the machine: a count saved on a larger machine is not an
error here, only one that no machine accepts (0, not a whole number).
"""
from __future__ import annotations

from typing import Any

from .. import registry
from ..errors import ModelFormatError
from ..schema import Invalid


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


def check_saved_params(cls: type, params: dict[str, Any], where: str) -> dict[str, Any]:
    """``params`` of a saved ``cls`` checked against its registry schema (converted as the schema
    converts); ModelFormatError ``"<where>: model file is invalid: <what>"`` for the first bad one.
    Parameters the schema does not list are left to the class's own checks."""
    comps = _components_of(cls)
    if not comps:
        return params
    schema = {p.name: p for p in comps[0].params}
    fixed: dict[str, list] = {}
    for comp in comps:
        for key, value in comp.fixed.items():
            fixed.setdefault(key, []).append(value)
    out = dict(params)
    for key, value in params.items():
        if key in fixed and key not in schema:
            if not isinstance(value, str) or value not in fixed[key]:
                raise ModelFormatError(f"{where}: model file is invalid: {key} must be one of "
                                       f"{', '.join(map(str, fixed[key]))}, got {str(value)[:60]!r}")
            continue
        param = schema.get(key)
        if param is None:
            continue
        try:
            if param.per_core and value is not None:
                if isinstance(value, bool) or not isinstance(value, int) or value == 0:
                    raise Invalid(f"{key} must be a whole number other than 0 (-1: all cores)")
                continue
            out[key] = param.check(value)
        except Invalid as exc:
            raise ModelFormatError(f"{where}: model file is invalid: {exc}, got {str(value)[:60]!r}") from None
    return out
