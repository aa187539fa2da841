"""Budgets that keep hostile or mistaken input from exhausting the machine, and the one place
where options that size memory or threads are checked before anything is allocated.

Every check raises :class:`ConfigError` naming the option as the user wrote it
(``--set bank.C=0``) and the range it accepts. The rules are a table keyed by component kind
(``features``, ``bank``, ``classmap``) and parameter name, so a typed component registry can
take them over as its parameter schemas; :func:`check_params` is the hook such a registry (or a
component's constructor) calls. Memory checks (:func:`check_train_memory`) need the data's
shape and run after loading it, before training.
"""
from __future__ import annotations

import math
import os
from typing import Any, Callable

from .errors import ConfigError

#: Source images with more pixels than this are skipped, read from the file's header before
#: decoding (a 30000x30000 PNG of 875 KB decodes to 900 MB). 50 megapixels holds any camera's photo.
DEFAULT_MAX_IMAGE_PIXELS = 50_000_000
#: Largest image side a model works at. Recognition needs small images; the bound also keeps a
#: hostile model file from making the loader's consistency check encode a giant blank image.
MAX_IMAGE_SIDE = 1024
#: Worker threads/processes per core a setting may ask for (more only thrashes the machine).
MAX_JOBS_PER_CORE = 4
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


# ---------------------------------------------------------------- value rules

def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def int_range(lo: int, hi: int | None = None) -> Callable[[Any], str | None]:
    def rule(v: Any) -> str | None:
        if not _is_int(v) or v < lo or (hi is not None and v > hi):
            return f"a whole number {f'from {lo} to {hi}' if hi is not None else f'of at least {lo}'}"
        return None
    return rule


def positive(v: Any) -> str | None:
    return None if _num(v) and v > 0 else "a positive finite number"


def non_negative(v: Any) -> str | None:
    return None if _num(v) and v >= 0 else "a finite number of at least 0"


def fraction(v: Any) -> str | None:
    return None if _num(v) and 0 <= v <= 1 else "a number from 0 to 1"


def optional(rule: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    def opt(v: Any) -> str | None:
        return None if v is None else rule(v)
    return opt


def word_or(words: tuple[str, ...], rule: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    def w(v: Any) -> str | None:
        if isinstance(v, str) and v in words:
            return None
        why = rule(v)
        return None if why is None else f"{' or '.join(repr(x) for x in words)} or {why}"
    return w


def finite_or_none(v: Any) -> str | None:
    return None if v is None or _num(v) else "a finite number (or none)"


def n_jobs(v: Any) -> str | None:
    cores = os.cpu_count() or 1
    top = MAX_JOBS_PER_CORE * cores
    if v is None or (_is_int(v) and v != 0 and -cores - 1 <= v <= top):
        return None
    return f"-1 (all {cores} cores), none, or a whole number from 1 to {top}"


def seed(v: Any) -> str | None:
    return None if v is None or (_is_int(v) and 0 <= v < 2 ** 32) else "a whole number from 0 to 4294967295"


def image_size_param(v: Any) -> str | None:
    if v is None:
        return None
    if _is_int(v):
        v = [v, v]
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(_is_int(s) and 1 <= s <= MAX_IMAGE_SIDE for s in v):
        return None
    return f"none or a size from 1 to {MAX_IMAGE_SIDE} (one side, or [height, width])"


_SIDE = int_range(1, 1024)
_COUNT = int_range(1)
RULES: dict[str, dict[str, Callable[[Any], str | None]]] = {
    "features": {
        "patch_size": _SIDE, "stride": _SIDE, "n_centroids": int_range(1, 1_000_000), "n_patches": _COUNT,
        "norm_eps": non_negative, "whiten_eps": optional(non_negative), "kmeans_batch_size": _COUNT,
        "kmeans_max_iter": int_range(1, 100_000), "n_jobs": n_jobs, "random_state": seed,
        "cell_size": _SIDE, "block_size": _SIDE, "block_stride": _SIDE, "n_bins": int_range(1, 360),
        "size": image_size_param, "m": _COUNT, "sigma": word_or(("auto",), positive), "depth": int_range(1, 16),
        "width": int_range(1, 4096), "kernel_size": _SIDE, "pool": _SIDE,
    },
    "bank": {
        "C": positive, "alpha": positive, "tol": positive, "gamma": word_or(("scale", "auto"), positive),
        "max_iter": int_range(1, 10_000_000), "n_jobs": n_jobs, "random_state": seed, "m": _COUNT,
        "sigma": word_or(("auto",), positive),
    },
    "classmap": {
        "d": int_range(1, 100_000), "p": _COUNT, "n_triples": int_range(1, 1_000_000_000),
        "hard_fraction": fraction, "threshold": finite_or_none, "max_memory_mb": positive, "random_state": seed,
    },
}
_PREFIX = {"features": "", "bank": "bank.", "classmap": "classmap."}


def check_params(kind: str, params: dict, *, option: str | None = None) -> None:
    """ConfigError for the first parameter of a ``kind`` component whose value is out of range.

    ``option``: how the user names the setting (default ``--set <prefix>key``); parameters
    without a rule pass (the component checks its own names and choices).
    """
    rules = RULES[kind]
    for key, value in params.items():
        rule = rules.get(key)
        why = rule(value) if rule is not None else None
        if why is not None:
            name = option or f"--set {_PREFIX[kind]}{key}"
            raise ConfigError(f"{name}={value!r}: {key} must be {why}")


def check_train_options(*, features_params: dict, bank_params: dict, classmap: dict | None, seed_value: Any,
                        test_fraction: float) -> None:
    """Every range check that needs no data: values and types, before any file is read."""
    why = seed(seed_value)
    if why is not None:
        raise ConfigError(f"--seed {seed_value}: the seed must be {why}")
    if not (_num(test_fraction) and 0 <= test_fraction < 0.9):
        raise ConfigError(f"--test-fraction {test_fraction}: must be from 0 to below 0.9")
    check_params("features", features_params)
    check_params("bank", bank_params)
    if classmap is not None:
        check_params("classmap", classmap, option=None)


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
        ps = fp.get("patch_size", 6)
        n_patches = fp.get("n_patches", 200_000)
        dim = ps * ps * (1 if fp.get("grey") else channels)
        check_fits("--set n_patches", 3 * n_patches * dim * f32, f"{n_patches} patches of {dim} values")
        k = fp.get("n_centroids", 1600)
        check_fits("--set n_centroids", n_images * 4 * k * f32, f"{n_images} feature vectors of {4 * k} values")
    elif features in ("rff", "cnn"):
        m = fp.get("m", 1000)
        what = f"{m} random features of {pixels} pixels"
        check_fits("--set m", m * pixels * f32 if features == "rff" else 0, what)
        check_fits("--set m", 2 * n_images * m * f32, f"{n_images} feature vectors of {2 * m} values")
    if bank == "compressive" and "m" in bank_params:
        m = bank_params["m"]
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
        triples = classmap.get("n_triples", 60_000)
        check_fits("--classmap n_triples", triples * 3 * 8 * 4, f"{triples} triples")


def check_image_pixels(max_pixels: Any, option: str = "--max-image-pixels") -> int:
    """The image pixel budget as an int; ConfigError for a value that is not a positive whole number."""
    if not _is_int(max_pixels) or max_pixels < 1:
        raise ConfigError(f"{option} {max_pixels!r}: must be a positive whole number of pixels")
    return max_pixels
