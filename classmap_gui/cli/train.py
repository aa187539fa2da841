"""``classmap train``: check every option and the output folder, load the data, train, save.

Everything that can be refused is refused before training starts: option values and the
``--out`` folder (writable, empty or a model, enough free space) before any file is read, and
the memory the options ask for once the data's size is known.
"""
from __future__ import annotations

import argparse
import sys
import time

from ..core.train.memory import check_train_memory, model_bytes
from ..core.registry import bank_names, check_train_options, feature_names, route_unprefixed
from ..core.train.config import TrainConfig
from ..core.parallel import parallel_backend
from .common import ProgressBar, Subcommands, emit
from .options import (add_backend_args, add_data_args, load_data, parse_classmap, parse_size, report_skipped,
                      split_sets)

MODEL_JSON = "model.json"
#: Free space a model folder needs at the least (its JSON, small arrays, headroom).
MIN_FREE_BYTES = 4 << 20


def split_line(info: dict) -> str:
    """One line saying how training split the data, and which classes it could not test honestly."""
    parts = info.get("groups_per_part", {})
    if info.get("by") == "capture group":
        text = (f"split grouped by capture burst: {info['groups']} bursts ("
                + ", ".join(f"{k} {v}" for k, v in parts.items() if v) + ")")
    else:
        text = "split by image (no capture bursts)"
    if info.get("too_few"):
        text += (f"; WARNING: {len(info['too_few'])} class(es) have fewer than {info['needed']} bursts, so their "
                 f"test images come from bursts they were trained on: " + ", ".join(map(repr, info["too_few"][:10])))
    return text


def cmd_train(args: argparse.Namespace) -> int:
    """``classmap train``: check the settings, train a recogniser on the data, save it and print its accuracy."""
    from ..core.store.format import check_bundle_target, foreign_entries

    plain, feats, bank, cmap = split_sets(args.set)
    to_features, to_bank = route_unprefixed(args.features, args.bank, plain)
    feats, bank = {**to_features, **feats}, {**to_bank, **bank}
    classmap = parse_classmap(args.classmap)
    if cmap:
        classmap = {**(classmap or {}), **cmap}
    size = parse_size(args.size)
    # the folder first: refusing it loads nothing; the options' schemas come from the components' classes
    out = check_bundle_target(args.out, MODEL_JSON, need_bytes=MIN_FREE_BYTES)
    feats, bank, classmap = check_train_options(features=args.features, features_params=feats, bank=args.bank,
                                                bank_params=bank, classmap=classmap, seed_value=args.seed,
                                                test_fraction=args.test_fraction)  # before reading any data
    from ..core.train.training import TrainConfig, train  # late: the numeric stack loads after the cheap checks
    config = TrainConfig(features=args.features, features_params=feats, bank=args.bank, bank_params=bank,
                         classmap=classmap, test_fraction=args.test_fraction, seed=args.seed)
    bar = ProgressBar()
    try:
        data = load_data(args.data, size=size, grey=not args.colour, args=args, progress=bar)
        bar.close()
        report_skipped(data, sys.stderr)
        shape = data.images.shape[1:]
        check_train_memory(features=args.features, features_params=feats, bank=args.bank, bank_params=bank,
                           classmap=classmap, n_images=len(data), image_shape=shape, n_classes=data.n_classes)
        check_bundle_target(out, MODEL_JSON,
                            need_bytes=model_bytes(args.features, feats, data.n_classes, shape, MIN_FREE_BYTES))
        t0 = time.perf_counter()
        with parallel_backend(args.backend, scheduler=args.scheduler):
            result = train(data, config, progress=bar)
        seconds = time.perf_counter() - t0
    finally:
        bar.close()
    from ..core.project.runs import run_record
    record = run_record(result, data, seconds=seconds)
    kept = foreign_entries(out, MODEL_JSON)
    path = result.recogniser.save(out)
    rep = result.report
    summary = {"data": data.name or str(args.data), "images": result.sizes, "classes": data.n_classes,
               f"{result.report_on}_accuracy": rep.accuracy, "report": rep.to_dict(include_confusion=False),
               "train_seconds": result.timings, "model": str(path), "kept_files": kept,
               "skipped": [p for p, _ in data.skipped], "run": record}
    text = (f"trained on {result.sizes['train']} images of {data.n_classes} classes "
            f"({data.name or args.data}) in {sum(result.timings.values()):.1f}s\n"
            f"{split_line(result.split_info)}\n"
            f"{result.report_on} {rep.summary()}\nmodel saved to {path}"
            + (f"\nkept {len(kept)} file(s) in {path} that the model does not use: {', '.join(kept[:5])}"
               if kept else ""))
    emit(summary, args.json, text)
    return 0


def add_commands(sub: Subcommands, with_choices: bool = True) -> None:
    """Register ``classmap train``. ``with_choices`` (for ``--help``) lets argparse list the feature
    maps and banks; when parsing a command line they are checked by :func:`check_train_options`
    instead, whose refusal is the one ``classmap: error:`` line every other option gets."""
    features, banks = (sorted(feature_names()), bank_names()) if with_choices else (None, None)

    s = sub.add_parser("train", help="train a recogniser on a data set and save it",
                       description="Train a recogniser: feature map + classifier bank (+ ClassMap). "
                                   "--set key=value sets a parameter of the feature map, or of the bank when "
                                   "only the bank has it; prefix features., bank. or classmap. to say which "
                                   "(e.g. --set n_centroids=800 --set bank.C=0.1).")
    s.add_argument("--data", required=True, help="a built-in data set name (see `classmap datasets`) or a folder "
                                                 "with one sub-folder of images per class")
    s.add_argument("--features", default=TrainConfig.features, choices=features,
                   help=f"feature map (default {TrainConfig.features})")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="a parameter, repeatable")
    s.add_argument("--bank", default=TrainConfig.bank, choices=banks, help=f"classifier bank (default {TrainConfig.bank})")
    s.add_argument("--classmap", nargs="?", const="", default=None, metavar="KEY=VALUE,...",
                   help="use ClassMap filter-and-refine (e.g. --classmap d=45,p=40)")
    s.add_argument("--test-fraction", type=float, default=TrainConfig.test_fraction,
                   help=f"part of each class held out for testing ({TrainConfig.test_fraction})")
    s.add_argument("--seed", type=int, default=0, help="random seed, 0 to 4294967295 (0)")
    s.add_argument("--size", help="image size HxW for folder data (default 64x64)")
    s.add_argument("--colour", "--color", action="store_true", help="keep colour (folder data)")
    s.add_argument("--out", required=True, help="folder to save the model in (new, empty, or an earlier model)")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    add_data_args(s)
    add_backend_args(s)
    s.set_defaults(func=cmd_train)
