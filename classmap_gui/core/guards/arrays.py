"""Shape and dtype checks of arrays, for components checking their learned state after loading.

Kept apart from the store so that components can check their state without importing the store:
the store loads components, components never load the store.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def check_array(name: str, arr: Any, *, dtype: Any = None, ndim: int | None = None,
                shape: tuple[int | None, ...] | None = None) -> np.ndarray:
    """Helper for ``validate_state``: raise ValueError unless ``arr`` is an ndarray as described.

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
