"""What ClassMap Studio reads at most, and the rule that checks one saved setting: one table for the
app and for an exported ``predict.py``, which inlines this module (standard library and numpy only),
so the two refuse the same files for the same reasons.

The app's loaders import the bounds from here (:mod:`.schema`, :mod:`.limits`, :mod:`.store`,
:mod:`.data.folder`); the export writes each component's parameter rules, taken from the registry's
schemas as the app's loader checks them (:func:`classmap_gui.core.store.saved_values.saved_schema`),
into ``predict.py`` as plain data that :func:`check_settings` reads.
"""
from __future__ import annotations

import math

import numpy as np

#: Largest image side a model works at (``image_size``, ``--size``, a resize inside a feature map).
MAX_IMAGE_SIDE = 1024
#: the largest trained network file read (a model's ONNX graph; the shipped hand network is ~3 MB)
MAX_NETWORK_BYTES = 30 * 1024 * 1024
#: ONNX IR versions and standard operator sets a network may declare (PyTorch's exporter writes IR 8, opset 17)
NETWORK_IR_VERSIONS = (7, 10)
NETWORK_OPSETS = (13, 21)
#: most operators in a network's graph (the shipped hand network has 17, the dense window network ~100)
MAX_NETWORK_NODES = 2000
#: most values in one weight or constant of a network (the hand network's largest is 331 776)
MAX_NETWORK_TENSOR_ELEMENTS = 8_000_000
#: most values per image in any shape a network states (its input, output and intermediate values)
MAX_NETWORK_SHAPE_ELEMENTS = 16_000_000
#: largest kernel, stride, dilation or padding of a network's sliding windows (the product's: 5, 2, 1, 2)
MAX_NETWORK_WINDOW = 16
#: largest side of the crop a network states as its input (the hand network reads 64 x 64)
MAX_NETWORK_INPUT_SIDE = 1024
#: Source images with more pixels than this are refused from their header, before decoding
#: (a 30000x30000 PNG of 875 KB decodes to 900 MB). 50 megapixels holds any camera's photo.
DEFAULT_MAX_IMAGE_PIXELS = 50_000_000
#: Smallest side of an image read from a file: a 1x1 "image" is a mistake, not a picture of its class.
MIN_IMAGE_SIDE = 4
#: Largest model description read (a model's is kilobytes; class names of 10 000 classes ~1 MB).
MAX_JSON_BYTES = 16 * 1024 * 1024
#: Most lists and objects a model description may hold (a model has hundreds).
MAX_JSON_CONTAINERS = 200_000
#: Most members a model's arrays file may have (a model has tens).
MAX_MEMBERS = 100_000
#: Most workers a saved setting may name (``n_jobs``): a model trained on a larger machine loads on a smaller one
#: (its count is brought to this machine's when used), but no machine has this many cores.
MAX_SAVED_WORKERS = 4096
#: No learned float value of a model comes near this (weights, centroids, priors, frequencies).
MAX_ABS = 1e15


class SettingError(ValueError):
    """A saved value that the app's rules refuse; ``str`` says which and why."""


def all_finite(arr: np.ndarray) -> bool:
    """Whether the float array ``arr`` holds no NaN, no infinity and nothing beyond :data:`MAX_ABS`
    (other dtypes: always)."""
    if arr.dtype.kind != "f" or arr.size == 0:
        return True
    return bool(np.isfinite(arr).all() and float(np.abs(arr).max()) <= MAX_ABS)   # float: a float16 array too


def _whole(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and float(v).is_integer()


def check_setting(name: str, value, rule: dict) -> None:
    """SettingError when ``value`` breaks ``rule``: ``{"kind": "int"|"float"|"bool"|"str", "low", "high",
    "choices", "nullable"}`` (the registry's :class:`~classmap_gui.core.guards.schema.Param` as plain data)."""
    kind, low, high = rule.get("kind"), rule.get("low"), rule.get("high")
    if value is None:
        if rule.get("nullable"):
            return
        raise SettingError(f"{name} needs a value")
    choices = rule.get("choices") or ()
    if isinstance(value, str) and (kind == "str" or value in choices):
        if choices and value not in choices:
            raise SettingError(f"{name} must be one of {', '.join(map(str, choices))}, got {value[:40]!r}")
        return
    if kind == "bool":
        if not isinstance(value, bool):
            raise SettingError(f"{name} must be true or false, got {str(value)[:40]!r}")
        return
    if kind == "int" and not _whole(value) or kind == "float" and not (
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)):
        raise SettingError(f"{name} must be {'a whole' if kind == 'int' else 'a finite'} number, "
                           f"got {str(value)[:40]!r}")
    if kind not in ("int", "float"):
        raise SettingError(f"{name} must be one of {', '.join(map(str, choices))}, got {str(value)[:40]!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        span = f"between {low:g} and {high:g}" if low is not None and high is not None else \
            f"at least {low:g}" if low is not None else f"at most {high:g}"
        raise SettingError(f"{name} must lie {span}, got {value!r}")


def check_settings(spec: dict, rules: dict, where: str) -> None:
    """Every key of ``spec`` that ``rules`` (``{key: rule}``) names, checked by :func:`check_setting`;
    SettingError ``"<where>: <what>"`` for the first one refused."""
    for key, rule in rules.items():
        if key in spec:
            try:
                check_setting(key, spec[key], rule)
            except SettingError as exc:
                raise SettingError(f"{where}: {exc}") from None


def checked_array(arrays: dict, key: str, shape: tuple, kinds: str = "f") -> np.ndarray:
    """``arrays[key]`` when present with ``len(shape)`` dimensions of the sizes ``shape`` gives (None:
    any) and a dtype of ``kinds``; SettingError otherwise."""
    arr = arrays.get(key)
    if arr is None:
        raise SettingError(f"arrays.npz has no {key}")
    if arr.dtype.kind not in kinds or arr.ndim != len(shape) or any(
            want is not None and got != want for got, want in zip(arr.shape, shape)):
        want = "x".join("any" if s is None else str(s) for s in shape) or "a scalar"
        raise SettingError(f"{key} is {arr.dtype.name} of shape {list(arr.shape)}, the model needs {want} "
                           f"({'float' if kinds == 'f' else 'integer' if kinds == 'iu' else 'bool'})")
    return arr
