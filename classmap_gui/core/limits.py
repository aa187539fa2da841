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
from typing import Any

from .errors import ConfigError
from .schema import MAX_IMAGE_SIDE  # noqa: F401  (re-exported: the data loaders' and --size's bound)

#: Source images with more pixels than this are skipped, read from the file's header before
#: decoding (a 30000x30000 PNG of 875 KB decodes to 900 MB). 50 megapixels holds any camera's photo.
DEFAULT_MAX_IMAGE_PIXELS = 50_000_000
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


def check_train_memory(*, features: str, features_params: dict, bank: str, bank_params: dict,
                       classmap: dict | None, n_images: int, image_shape: tuple[int, ...], n_classes: int) -> None:
    """Memory and data-dependent checks before training: what the options ask for must fit.

    image_shape: ``(h, w)`` or ``(h, w, 3)`` of one image. Estimates count the largest float32
    arrays a step holds (patches sampled for k-means, random projections, the feature matrix).
    """
    pixels = math.prod(image_shape)
    channels = image_shape[2] if len(image_shape) == 3 else 1
    f32 = 4
    fp = features_params
    if features == "kmeans":
        ps = planned_size(fp, "patch_size", 6)
        n_patches = planned_size(fp, "n_patches", 200_000)
        dim = ps * ps * (1 if fp.get("grey") else channels)
        check_fits("--set n_patches", 3 * n_patches * dim * f32, f"{n_patches} patches of {dim} values")
        k = planned_size(fp, "n_centroids", 1600)
        check_fits("--set n_centroids", n_images * 4 * k * f32, f"{n_images} feature vectors of {4 * k} values")
    elif features in ("rff", "cnn"):
        m = planned_size(fp, "m", 1000)
        what = f"{m} random features of {pixels} pixels"
        check_fits("--set m", m * pixels * f32 if features == "rff" else 0, what)
        check_fits("--set m", 2 * n_images * m * f32, f"{n_images} feature vectors of {2 * m} values")
    if bank == "compressive" and "m" in bank_params:
        m = planned_size(bank_params, "m", 1000)
        check_fits("--set m", 2 * max(n_images, pixels) * m * f32, f"a sketch with {m} random features")
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


def check_image_pixels(max_pixels: Any, option: str = "--max-image-pixels") -> int:
    """The image pixel budget as an int; ConfigError for a value that is not a positive whole number."""
    if not _is_int(max_pixels) or max_pixels < 1:
        raise ConfigError(f"{option} {max_pixels!r}: must be a positive whole number of pixels")
    return max_pixels
