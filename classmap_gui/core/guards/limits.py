"""Budgets that keep hostile or mistaken input from exhausting the machine: memory, image pixels.

Every check raises :class:`ConfigError` naming the option as the user wrote it (``--set m``) and
what it would cost. The value ranges of every component parameter (sizes, counts, threads) are
the parameter schemas of :mod:`classmap_gui.core.registry`, checked before any data is read
(:func:`~classmap_gui.core.registry.check_train_options`); the checks here need the data's shape
and run after loading it, before training (:func:`check_train_memory`), or guard one allocation
(:func:`check_fits`).
"""
from __future__ import annotations

import math
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
    class says its own with ``memory_plan(params, n_images, image_shape)``; without one, :func:`memory_plan`
    plans one float per pixel and value (pixels, HOG) and no allocation worth checking."""

    width: int
    own_floats: int = 0
    budgets: tuple[tuple[str, float, str], ...] = ()


def memory_plan(kind: str, name: str, params: dict, n_images: int, image_shape: tuple[int, ...]) -> MemoryPlan:
    """The registry component ``name``'s :class:`MemoryPlan` (its class's ``memory_plan``, else the default)."""
    from ..registry import component  # the component's class imports on first use

    cls = component(kind, name).cls
    if hasattr(cls, "memory_plan"):
        return cls.memory_plan(params, n_images, image_shape)
    return MemoryPlan(width=4 * math.prod(image_shape))


def check_train_memory(*, features: str, features_params: dict, bank: str, bank_params: dict,
                       classmap: dict | None, n_images: int, image_shape: tuple[int, ...], n_classes: int) -> None:
    """Memory and data-dependent checks before training: what the options ask for must fit.

    image_shape: ``(h, w)`` or ``(h, w, 3)`` of one image. The feature map and the bank plan their
    largest float32 arrays themselves (:func:`memory_plan`: patches sampled for k-means, random
    projections, the feature matrix); ClassMap's are checked here.
    """
    for kind, name, params in (("features", features, features_params), ("bank", bank, bank_params)):
        for option, nbytes, what in memory_plan(kind, name, params, n_images, image_shape).budgets:
            check_fits(option, nbytes, what)
    if classmap is not None:
        p = classmap.get("p", 40)
        if _is_int(p) and p > n_classes:
            raise ConfigError(f"--classmap p={p}: ClassMap keeps p candidate classes, but the data has only "
                              f"{n_classes}; choose p below {n_classes} (or leave ClassMap off for few classes)")
        d = classmap.get("d", 45)
        if _is_int(d) and d > max(n_classes, 1) * 4 and d > 64:
            raise ConfigError(f"--classmap d={d}: an embedding of {d} dimensions for {n_classes} classes; "
                              f"choose d at most {max(64, 4 * n_classes)}")
        triples = planned_size(classmap, "n_triples", 60_000)
        check_fits("--classmap n_triples", triples * 3 * 8 * 4, f"{triples} triples")


def model_bytes(features: str, features_params: dict, n_classes: int, image_shape: tuple[int, ...],
                minimum: int = 0) -> int:
    """A rough upper estimate of a saved model's size: the feature map's own arrays and a (C, D) bank."""
    plan = memory_plan("features", features, features_params, 0, image_shape)
    return minimum + 4 * (plan.own_floats + 2 * n_classes * plan.width)


def check_image_pixels(max_pixels: Any, option: str = "--max-image-pixels") -> int:
    """The image pixel budget as an int; ConfigError for a value that is not a positive whole number."""
    if not _is_int(max_pixels) or max_pixels < 1:
        raise ConfigError(f"{option} {max_pixels!r}: must be a positive whole number of pixels")
    return max_pixels
