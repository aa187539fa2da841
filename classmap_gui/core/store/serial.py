"""Generic, pickle-free (de)serialisation of estimators, through a registry of allowed classes.

An estimator's saved form is ``{"type": registered name, "params": get_params(deep=False),
"state": {...}}`` where the state holds every public attribute ending in ``_`` (a fitted
attribute, scikit-learn style). Values are encoded recursively:

* ``int``/``float``/``str``/``bool``/``None`` -> JSON (non-finite floats as JSON ``NaN``/``Infinity``),
* ``list``/``tuple`` -> JSON list, ``dict`` with ``str`` keys -> JSON object,
* numpy scalar -> its Python value,
* ``np.ndarray`` (bool/int/float) -> ``{"__array__": key}`` with the array stored in ``arrays.npz``,
* a registered estimator -> ``{"__estimator__": {...}}`` (nested bank inside a ClassMap, say).

Loading only ever instantiates classes found in the registry under the name read from the file;
an unknown name is a :class:`ModelFormatError`. A class may define:

* ``_store_exclude``: attribute names ending in ``_`` that are not state (caches, counters);
* ``_validate_state(self)``: check shapes/consistency after loading; raise ValueError (or
  ModelFormatError) with a message when wrong;
* ``_after_load(self)``: rebuild caches from the loaded state.

Register with :func:`register` (``@register("kmeans")`` on the class) in the module that
defines the class; :func:`_load_plugins` imports the modules that hold registered classes.
"""
from __future__ import annotations

import importlib
import math
from typing import Any, Callable, TypeVar

import numpy as np

from ..errors import ConfigError, ModelFormatError

T = TypeVar("T", bound=type)

_BY_NAME: dict[str, type] = {}
_BY_CLASS: dict[type, str] = {}

#: Modules (fixed in code, never read from a file) whose import registers storable classes.
PLUGIN_MODULES = (
    "classmap_gui.core.features",
    "classmap_gui.core.classify",
)


def register(name: str) -> Callable[[T], T]:
    """Class decorator: allow instances of the class to be saved and loaded as ``name``."""

    def deco(cls: T) -> T:
        register_class(cls, name)
        return cls

    return deco


def register_class(cls: type, name: str) -> None:
    """Allow ``cls`` to be (de)serialised under ``name`` (re-registering the same pair is fine)."""
    if name in _BY_NAME and _BY_NAME[name] is not cls and _BY_NAME[name].__qualname__ != cls.__qualname__:
        raise ConfigError(f"store: name {name!r} is already registered for {_BY_NAME[name].__qualname__}")
    _BY_NAME[name] = cls
    _BY_CLASS[cls] = name


def _load_plugins() -> None:
    for mod in PLUGIN_MODULES:
        importlib.import_module(mod)  # registers on import; late to avoid an import cycle


def registered_name(obj: object) -> str:
    """The name ``obj``'s class is registered under; ConfigError when it is not storable."""
    name = _BY_CLASS.get(type(obj))
    if name is None:
        _load_plugins()
        name = _BY_CLASS.get(type(obj))
    if name is None:
        name = _feature_map_name(type(obj))
    if name is None:
        raise ConfigError(f"{type(obj).__qualname__} cannot be saved: it is not registered with "
                          f"classmap_gui.core.store.register")
    return name


def registered_class(name: str) -> type:
    """The class registered as ``name``; ModelFormatError when unknown."""
    cls = _BY_NAME.get(name)
    if cls is None:
        _load_plugins()
        cls = _BY_NAME.get(name)
    if cls is None:
        cls = _feature_map_class(name)
    if cls is None:
        raise ModelFormatError(f"the model uses a component of type {name!r}, which this version of "
                               f"ClassMap Studio does not know")
    return cls


def _feature_map_name(cls: type) -> str | None:
    """Feature maps listed in ``features.base.FEATURE_MAPS`` (a table written in code) are storable
    under their feature name without a separate :func:`register` call."""
    try:
        from ..features.base import FEATURE_MAPS
    except ImportError:  # pragma: no cover
        return None
    target = f"{cls.__module__}:{cls.__qualname__}"
    for name, t in FEATURE_MAPS.items():
        if t == target and name not in _BY_NAME:
            register_class(cls, name)
            return name
    return None


def _feature_map_class(name: str) -> type | None:
    try:
        from ..features.base import FEATURE_MAPS, feature_class
    except ImportError:  # pragma: no cover
        return None
    if name not in FEATURE_MAPS:
        return None
    try:
        cls = feature_class(name)
    except ConfigError as exc:
        raise ModelFormatError(f"the model needs feature map {name!r}: {exc}") from None
    register_class(cls, name)
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
    if type(value) in _BY_CLASS or hasattr(value, "get_params"):
        return {"__estimator__": dump_estimator(value, arrays, key)}
    raise ConfigError(f"cannot save {key}: values of type {type(value).__name__} are not storable")


def dump_estimator(est: Any, arrays: dict[str, np.ndarray], prefix: str) -> dict[str, Any]:
    """The JSON spec of ``est``; its arrays are added to ``arrays`` under keys starting with ``prefix``."""
    name = registered_name(est)
    params = est.get_params(deep=False)
    exclude = set(getattr(type(est), "_store_exclude", ()))
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
    cls = registered_class(spec["type"])
    where = f"{where} ({spec['type']})"
    params = _decode(spec.get("params", {}), arrays, used, where)
    state = _decode(spec.get("state", {}), arrays, used, where)
    if not isinstance(params, dict) or not isinstance(state, dict):
        raise ModelFormatError(f"{where}: params and state must be objects")
    try:
        est = cls(**params)
    except (TypeError, ValueError) as exc:
        raise ModelFormatError(f"{where}: parameters do not fit this version: {exc}") from None
    for k, v in state.items():
        if not k.endswith("_") or k.startswith("_"):
            raise ModelFormatError(f"{where}: {k!r} is not a fitted attribute")
        setattr(est, k, v)
    try:
        if hasattr(est, "_validate_state"):
            est._validate_state()
        if hasattr(est, "_after_load"):
            est._after_load()
    except ModelFormatError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        raise ModelFormatError(f"{where}: inconsistent saved state: {exc}") from None
    return est


def check_array(name: str, arr: Any, *, dtype: Any = None, ndim: int | None = None,
                shape: tuple[int | None, ...] | None = None) -> np.ndarray:
    """Helper for ``_validate_state``: raise ValueError unless ``arr`` is an ndarray as described.

    ``shape`` entries that are ``None`` match any size.
    """
    if not isinstance(arr, np.ndarray):
        raise ValueError(f"{name} must be an array, got {type(arr).__name__}")
    if dtype is not None and arr.dtype != np.dtype(dtype):
        raise ValueError(f"{name} must be {np.dtype(dtype)}, got {arr.dtype}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} holds NaN or infinite values")
    return arr


def is_finite_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
