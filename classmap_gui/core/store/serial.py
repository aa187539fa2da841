"""Generic, pickle-free (de)serialisation of estimators, through a registry of allowed classes.

An estimator's saved form is ``{"type": registered name, "params": get_params(deep=False),
"state": {...}}`` where the state holds every public attribute ending in ``_`` (a fitted
attribute, scikit-learn style). Values are encoded recursively:

* ``int``/``float``/``str``/``bool``/``None`` -> JSON (non-finite floats as JSON ``NaN``/``Infinity``),
* ``list``/``tuple`` -> JSON list, ``dict`` with ``str`` keys -> JSON object,
* numpy scalar -> its Python value,
* ``np.ndarray`` (bool/int/float) -> ``{"__array__": key}`` with the array stored in ``arrays.npz``,
* a registered estimator -> ``{"__estimator__": {...}}`` (nested bank inside a ClassMap, say).

Loading only ever instantiates classes that :mod:`classmap_gui.core.registry` lists under the type
name read from the file; an unknown name is a :class:`ModelFormatError`. A class may define:

* ``store_exclude``: attribute names ending in ``_`` that are not state (caches, counters);
* ``validate_state(self)``: check shapes/consistency after loading; raise ValueError (or
  ModelFormatError) with a message when wrong;
* ``after_load(self)``: rebuild caches from the loaded state.

The type names are listed in the registry; :func:`register` adds a class outside that table.
"""
from __future__ import annotations

from typing import Any, Callable, TypeVar

import numpy as np

from ..guards.arrays import check_array  # noqa: F401  (re-exported: components' state checks)
from ..errors import ConfigError, ModelFormatError
from . import type_names
from .saved_values import check_saved_params, check_saved_state

T = TypeVar("T", bound=type)


def register(name: str) -> Callable[[T], T]:
    """Class decorator: allow instances of the class to be saved and loaded as ``name``.

    The product's components are listed in :mod:`classmap_gui.core.registry` and need no decorator;
    this is for classes outside that table (tests, extensions)."""

    def deco(cls: T) -> T:
        register_class(cls, name)
        return cls

    return deco


def register_class(cls: type, name: str) -> None:
    """Allow ``cls`` to be (de)serialised under ``name`` (re-registering the same pair is fine)."""
    type_names.register_saved_type(name, cls)


def registered_name(obj: object) -> str:
    """The type name ``obj``'s class is saved under; ConfigError when it is not storable."""
    name = type_names.saved_type_name(type(obj))
    if name is None:
        raise ConfigError(f"{type(obj).__qualname__} cannot be saved: it is not a component listed in "
                          f"classmap_gui.core.registry")
    return name


def registered_class(name: str) -> type:
    """The class a saved type name stands for; ModelFormatError when unknown."""
    cls = type_names.saved_type(name)
    if cls is None:
        raise ModelFormatError(f"the model uses a component of type {name!r}, which this version of "
                               f"ClassMap Studio does not know")
    return cls


# ---------------------------------------------------------------- encoding

def _encode(value: Any, arrays: dict[str, np.ndarray], key: str) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise ConfigError(f"cannot save {key}: arrays of dtype {value.dtype} are not storable")
        arrays[key] = value
        return {"__array__": key}
    if isinstance(value, (list, tuple)):
        return [_encode(v, arrays, f"{key}.{i}") for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str) or k.startswith("__"):
                raise ConfigError(f"cannot save {key}: dict keys must be strings not starting with '__', got {k!r}")
            out[k] = _encode(v, arrays, f"{key}.{k}")
        return out
    if type_names.saved_type_name(type(value)) is not None or hasattr(value, "get_params"):
        return {"__estimator__": dump_estimator(value, arrays, key)}
    raise ConfigError(f"cannot save {key}: values of type {type(value).__name__} are not storable")


def dump_estimator(est: Any, arrays: dict[str, np.ndarray], prefix: str) -> dict[str, Any]:
    """The JSON spec of ``est``; its arrays are added to ``arrays`` under keys starting with ``prefix``."""
    name = registered_name(est)
    params = est.get_params(deep=False)
    exclude = set(getattr(type(est), "store_exclude", ()))
    state = {k: v for k, v in vars(est).items()
             if k.endswith("_") and not k.startswith("_") and k not in exclude}
    return {
        "type": name,
        "params": _encode(params, arrays, f"{prefix}/params"),
        "state": _encode(state, arrays, f"{prefix}/state"),
    }


# ---------------------------------------------------------------- decoding

def _decode(value: Any, arrays: dict[str, np.ndarray], used: set[str], where: str) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, list):
        return [_decode(v, arrays, used, where) for v in value]
    if isinstance(value, dict):
        if "__array__" in value:
            key = value["__array__"]
            if len(value) != 1 or not isinstance(key, str) or key not in arrays:
                raise ModelFormatError(f"{where}: reference to a missing array {key!r}")
            used.add(key)
            return arrays[key]
        if "__estimator__" in value:
            if len(value) != 1:
                raise ModelFormatError(f"{where}: malformed nested component")
            return load_estimator(value["__estimator__"], arrays, used, where)
        bad = [k for k in value if k.startswith("__")]
        if bad:
            raise ModelFormatError(f"{where}: unknown marker {bad[0]!r}")
        return {k: _decode(v, arrays, used, where) for k, v in value.items()}
    raise ModelFormatError(f"{where}: unexpected value of type {type(value).__name__}")


def load_estimator(spec: Any, arrays: dict[str, np.ndarray], used: set[str] | None = None,
                   where: str = "model") -> Any:
    """Re-create an estimator from its spec: registered class, constructor params, state, checks."""
    used = set() if used is None else used
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        raise ModelFormatError(f"{where}: a component description is malformed (no type)")
    where = f"{where} ({spec['type']})"
    params = _decode(spec.get("params", {}), arrays, used, where)
    state = _decode(spec.get("state", {}), arrays, used, where)
    if not isinstance(params, dict) or not isinstance(state, dict):
        raise ModelFormatError(f"{where}: params and state must be objects")
    name, params = type_names.saved_spec(spec["type"], params)   # a bank saved before the split per trainer
    cls = registered_class(name)
    params = check_saved_params(cls, params, where)
    check_saved_state(name, state, where)
    try:
        est = cls(**params)
    except (TypeError, ValueError, ArithmeticError) as exc:
        raise ModelFormatError(f"{where}: parameters do not fit this version: {exc}") from None
    for k, v in state.items():
        if not k.endswith("_") or k.startswith("_"):
            raise ModelFormatError(f"{where}: {k!r} is not a fitted attribute")
        setattr(est, k, v)
    try:
        if hasattr(est, "validate_state"):
            est.validate_state()
        if hasattr(est, "after_load"):
            est.after_load()
    except ModelFormatError as exc:  # its own words (a refused network): said of this model file
        raise ModelFormatError(f"{where}: {exc}") from None
    except ConfigError as exc:  # the model needs a library this install lacks (faiss for a graph filter index)
        raise ModelFormatError(f"{where}: {exc}") from None
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, ArithmeticError) as exc:
        # ArithmeticError: int(-Infinity) and the like, from a value no model holds
        raise ModelFormatError(f"{where}: model file is invalid: inconsistent saved state: "
                               f"{str(exc)[:200]}") from None
    return est
