"""Parsing the model commands' options, and the checks that run before any work is spent.

``--set key=value`` (repeatable, or comma-separated) sets a parameter of the chosen feature map, or
of the chosen bank when only the bank has it (:func:`classmap_gui.core.registry.route_unprefixed`);
prefixes say which: ``features.``, ``bank.`` (``--set bank.C=0.1``), ``classmap.``.
``--classmap [key=value,...]`` turns ClassMap on (with its defaults when no value is given).
Values are checked against the components' schemas in :mod:`classmap_gui.core.registry`, the one
table for every caller; memory budgets are :mod:`classmap_gui.core.guards.limits`.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ..core.errors import ConfigError
from ..core.guards.limits import DEFAULT_MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE, check_image_pixels
from ..core.parallel import BACKENDS
from .common import parse_sets


def split_sets(items: list[str] | None) -> tuple[dict, dict, dict, dict]:
    """``--set`` items -> (unprefixed, feature params, bank params, classmap params) by key prefix."""
    plain, feats, bank, cmap = {}, {}, {}, {}
    prefixes = {"bank.": bank, "classmap.": cmap, "features.": feats}
    for key, value in parse_sets(items).items():
        prefix = next((p for p in prefixes if key.startswith(p)), None)
        if prefix is None:
            plain[key] = value
        else:
            prefixes[prefix][key[len(prefix):]] = value
    return plain, feats, bank, cmap


def parse_classmap(value: str | None) -> dict | None:
    """``--classmap`` value -> ClassMap parameters (None: option absent, ``{}``: defaults)."""
    if value is None:
        return None
    return parse_sets([value], option="--classmap") if value.strip() else {}


def parse_size(value: str | None) -> tuple[int, int] | None:
    """``--size HxW`` (or one number for a square) -> (h, w); ConfigError outside 4..MAX_IMAGE_SIDE."""
    if value is None:
        return None
    try:
        parts = [int(v) for v in value.lower().replace("×", "x").split("x")]
    except ValueError:
        raise ConfigError(f"--size expects HxW (e.g. 32x32), got {value!r}") from None
    if len(parts) == 1:
        parts = parts * 2
    if len(parts) != 2 or min(parts) < 4 or max(parts) > MAX_IMAGE_SIDE:
        raise ConfigError(f"--size expects HxW with sides between 4 and {MAX_IMAGE_SIDE}, got {value!r}")
    return parts[0], parts[1]


def parse_pixels(value: str) -> int:
    """``--max-image-pixels`` as an int: ``50000000``, ``50M`` or ``50e6``."""
    text = value.strip().lower()
    scale = 1_000_000 if text.endswith("m") else 1
    try:
        number = float(text.rstrip("m")) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a number of pixels (e.g. 50M), got {value!r}") from None
    if not number == number or number == float("inf"):  # NaN or inf
        raise argparse.ArgumentTypeError(f"expects a number of pixels (e.g. 50M), got {value!r}")
    if number < 1:  # argparse shows only an ArgumentTypeError's words ("invalid parse_pixels value" otherwise)
        raise argparse.ArgumentTypeError(f"must be a positive number of pixels (e.g. 50M), got {value!r}")
    return check_image_pixels(int(number))


def add_backend_args(s: argparse.ArgumentParser) -> None:
    """``--backend`` / ``--scheduler``: where joblib work (bank training, encoding) runs."""
    s.add_argument("--backend", choices=BACKENDS, default=None,
                   help="run parallel work with joblib's loky processes, threads, or on a Dask cluster "
                        "(needs classmap-studio[cluster]); default: each step's own choice on this machine")
    s.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="Dask scheduler address, e.g. tcp://10.0.0.5:8786 (implies --backend dask; "
                        "--backend dask without it starts a local cluster)")


def add_data_args(s: argparse.ArgumentParser) -> None:
    """``--max-image-pixels`` / ``--follow-links``: how a data folder's files are read."""
    s.add_argument("--max-image-pixels", type=parse_pixels, default=DEFAULT_MAX_IMAGE_PIXELS, metavar="N",
                   help=f"skip source images larger than this many pixels, read from their header before "
                        f"decoding (default {DEFAULT_MAX_IMAGE_PIXELS // 1_000_000}M)")
    s.add_argument("--follow-links", action="store_true",
                   help="use links in the data folder that lead outside it (skipped with a note by default)")


def load_data(spec: str, *, size, grey: bool, args: argparse.Namespace, progress):
    """A built-in data set by name, or a folder read with the pixel budget and link rule of ``args``."""
    from ..core.data import builtin_datasets, load_dataset
    from ..core.data.folder import DEFAULT_SIZE, load_folder

    if spec not in {d.name for d in builtin_datasets()} and Path(spec).expanduser().is_dir():
        return load_folder(Path(spec).expanduser(), size=size or DEFAULT_SIZE, grey=grey, progress=progress,
                           max_pixels=args.max_image_pixels, follow_links=args.follow_links)
    return load_dataset(spec, size=size, grey=grey, progress=progress)


def report_skipped(data, stream) -> None:
    """One line per skipped file of a loaded data set (notes, on ``stream``), at most 20 then a count."""
    for path, reason in data.skipped[:20]:
        print(f"note: skipped {path}: {reason}", file=stream)
    if len(data.skipped) > 20:
        print(f"note: skipped {len(data.skipped) - 20} more file(s)", file=stream)
