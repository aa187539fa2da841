"""Budgets that keep hostile or mistaken input from exhausting the machine: memory, image pixels.

Every check raises :class:`ConfigError` naming the option as the user wrote it (``--set m``) and
what it would cost. The value ranges of every component parameter (sizes, counts, threads) are
the parameter schemas of :mod:`classmap_gui.core.registry`, checked before any data is read
(:func:`~classmap_gui.core.registry.check_train_options`); the checks here need the data's shape
and run after loading it, before training (:func:`classmap_gui.core.train.memory.check_train_memory`), or guard one allocation
(:func:`check_fits`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError

# the source images' pixel budget, read from the file's header before decoding (the table an export shares)
from .read_limits import DEFAULT_MAX_IMAGE_PIXELS  # noqa: F401
from .schema import MAX_IMAGE_SIDE  # noqa: F401  (re-exported: the data loaders' and --size's bound)

#: Largest share of the memory available now that one step may plan to use.
MEMORY_SHARE = 0.8


def available_memory() -> int:
    """Bytes of memory available to a new allocation now (``MemAvailable``), or physical memory."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 1 << 40


def fmt_bytes(n: float) -> str:
    """``n`` bytes as a short human-readable size ("512 bytes", "3.2 MB") for messages."""
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"  # pragma: no cover


def check_fits(option: str, nbytes: float, what: str, *, budget: int | None = None) -> None:
    """ConfigError naming ``option`` when ``nbytes`` cannot fit in memory (``budget`` default: 80% available)."""
    budget = int(MEMORY_SHARE * available_memory()) if budget is None else budget
    if nbytes > budget:
        raise ConfigError(f"{option}: {what} would need {fmt_bytes(nbytes)} of memory, more than the "
                          f"{fmt_bytes(budget)} this computer has free; choose a smaller value")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def planned_size(params: dict, key: str, default: int) -> int:
    """``params[key]`` when it is a number, else ``default``: the largest value ``"auto"`` (or unset) means."""
    v = params.get(key)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else default


@dataclass(frozen=True)
class MemoryPlan:
    """What a component will hold, planned before training from its parameters and the data's shape: ``width``
    features per image (a feature map), ``own_floats`` of its own arrays (saved with the model), and ``budgets``
    ``(option, bytes, what)`` of its largest allocations, each checked by :func:`check_fits`. A component
    class says its own with ``memory_plan(params, n_images, image_shape)``; without one,
    :func:`classmap_gui.core.train.memory.memory_plan`
    plans one float per pixel and value (pixels, HOG) and no allocation worth checking."""

    width: int
    own_floats: int = 0
    budgets: tuple[tuple[str, float, str], ...] = ()


def check_image_pixels(max_pixels: Any, option: str = "--max-image-pixels") -> int:
    """The image pixel budget as an int; ConfigError for a value that is not a positive whole number."""
    if not _is_int(max_pixels) or max_pixels < 1:
        raise ConfigError(f"{option} {max_pixels!r}: must be a positive whole number of pixels")
    return max_pixels
