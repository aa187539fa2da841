"""``classmap train | eval | predict | add-class``: model commands of the CLI.

``--set key=value`` (repeatable, or comma-separated) sets feature map parameters; a ``bank.`` prefix
sets classifier bank parameters (``--set bank.C=0.1``) and a ``classmap.`` prefix ClassMap ones.
``--classmap [key=value,...]`` turns ClassMap on (with its defaults when no value is given).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from .core.data.folder import MAX_IMAGE_SIDE
from .core.errors import ConfigError
from .core.parallel import BACKENDS, parallel_backend


def _cli():
    from . import cli  # late: cli imports this module while building its parser

    return cli


def split_sets(items: list[str] | None) -> tuple[dict, dict, dict]:
    """``--set`` items -> (feature params, bank params, classmap params) by key prefix."""
    feats, bank, cmap = {}, {}, {}
    for key, value in _cli().parse_sets(items).items():
        if key.startswith("bank."):
            bank[key[5:]] = value
        elif key.startswith("classmap."):
            cmap[key[9:]] = value
        elif key.startswith("features."):
            feats[key[9:]] = value
        else:
            feats[key] = value
    return feats, bank, cmap


def parse_classmap(value: str | None) -> dict | None:
    """``--classmap`` value -> ClassMap parameters (None: option absent, ``{}``: defaults)."""
    if value is None:
        return None
    return _cli().parse_sets([value]) if value.strip() else {}


def parse_size(value: str | None) -> tuple[int, int] | None:
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


def cmd_train(args: argparse.Namespace) -> int:
    from .core.data import load_dataset
    from .core.training import TrainConfig, train

    cli = _cli()
    feats, bank, cmap = split_sets(args.set)
    if args.bank == "compressive":  # `--bank compressive --set sketch=rff,m=1000,sigma=2`: bank settings
        for key in ("sketch", "m", "sigma", "priors"):
            if key in feats:
                bank[key] = feats.pop(key)
    classmap = parse_classmap(args.classmap)
    if cmap:
        classmap = {**(classmap or {}), **cmap}
    out = Path(args.out).expanduser()
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a folder name for the model")
    config = TrainConfig(features=args.features, features_params=feats, bank=args.bank, bank_params=bank,
                         classmap=classmap, test_fraction=args.test_fraction, seed=args.seed)
    bar = cli.ProgressBar()
    try:
        data = load_dataset(args.data, size=parse_size(args.size), grey=not args.colour, progress=bar)
        if data.skipped:
            bar.close()
            print(f"skipped {len(data.skipped)} unreadable file(s), e.g. {data.skipped[0][0]}: {data.skipped[0][1]}")
        with parallel_backend(args.backend, scheduler=args.scheduler):
            result = train(data, config, progress=bar)
    finally:
        bar.close()
    path = result.recogniser.save(out)
    rep = result.report
    summary = {"data": data.name or str(args.data), "images": result.sizes, "classes": data.n_classes,
               f"{result.report_on}_accuracy": rep.accuracy, "report": rep.to_dict(include_confusion=False),
               "train_seconds": result.timings, "model": str(path)}
    text = (f"trained on {result.sizes['train']} images of {data.n_classes} classes "
            f"({data.name or args.data}) in {sum(result.timings.values()):.1f}s\n"
            f"{result.report_on} {rep.summary()}\nmodel saved to {path}")
    cli.emit(summary, args.json, text)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from .core.data import load_dataset
    from .core.recogniser import Recogniser
    from .core.training import evaluate

    cli = _cli()
    if args.top < 1:
        raise ConfigError(f"--top must be at least 1, got {args.top}")
    model = Recogniser.load(args.model)
    bar = cli.ProgressBar()
    try:
        data = load_dataset(args.data, size=model.image_size, grey=model.grey, progress=bar)
        if data.image_size != model.image_size or data.is_color == model.grey:
            data.images = model.prepare(data.images)
        with parallel_backend(args.backend, scheduler=args.scheduler):
            rep = evaluate(model, data, top=args.top, progress=bar)
    finally:
        bar.close()
    cli.emit({"model": str(args.model), "data": data.name or str(args.data), **rep.to_dict()}, args.json,
             f"{args.model} on {data.name or args.data}: {rep.summary()}")
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    from .core.data import read_image
    from .core.recogniser import Recogniser

    cli = _cli()
    if args.top < 1:
        raise ConfigError(f"--top must be at least 1, got {args.top}")
    model = Recogniser.load(args.model)
    images = [read_image(p, size=None, grey=model.grey) for p in args.images]  # DataError names a bad file
    pred = model.predict(images, top=args.top)
    names = model.class_names
    rows = []
    for path, cls_row, score_row, ev in zip(args.images, pred.top_classes, pred.top_scores, pred.evaluations):
        rows.append({"image": path, "label": names[cls_row[0]],
                     "top": [{"class": names[c], "score": float(s)} for c, s in zip(cls_row, score_row)],
                     "evaluations": int(ev)})
    text = "\n".join(f"{r['image']}: {r['label']}   (" + ", ".join(f"{t['class']} {t['score']:.3f}" for t in r["top"])
                     + ")" for r in rows)
    cli.emit({"predictions": rows, "timings": pred.timings}, args.json, text)
    return 0


def cmd_add_class(args: argparse.Namespace) -> int:
    """Add a class from a folder of images to a saved (compressive) model, in place."""
    import time

    from .core.data.folder import IMAGE_EXTENSIONS, read_image
    from .core.errors import DataError
    from .core.recogniser import Recogniser

    cli = _cli()
    folder = Path(args.images).expanduser()
    if not folder.is_dir():
        raise DataError(f"--images {folder}: not a folder")
    model = Recogniser.load(args.model)
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_EXTENSIONS)
    images, skipped = [], []
    for p in files:
        try:
            images.append(read_image(p, size=model.image_size, grey=model.grey))
        except Exception as exc:  # unreadable files are listed, not fatal
            skipped.append((str(p), str(exc)))
    if not images:
        raise DataError(f"--images {folder}: no readable images" + (f" ({len(skipped)} unreadable)" if skipped else ""))
    t0 = time.perf_counter()
    label = model.add_class(args.name, images)
    seconds = time.perf_counter() - t0
    model.save(args.model)
    result = {"model": str(args.model), "class": args.name, "label": label, "images": len(images),
              "skipped": [s[0] for s in skipped], "classes": model.n_classes, "seconds": round(seconds, 4)}
    cli.emit(result, args.json, f"added class {args.name!r} ({len(images)} images, label {label}) to {args.model} "
                                f"in {seconds:.3f} s; {model.n_classes} classes"
                                + (f"; skipped {len(skipped)} unreadable file(s)" if skipped else ""))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write a standalone folder (model + numpy/OpenCV predict.py) for a saved model."""
    from .core.export import export_recogniser
    from .core.recogniser import Recogniser

    out = export_recogniser(Recogniser.load(args.model), args.out, overwrite=args.overwrite)
    print(f"exported to {out}; run: python {out / 'predict.py'} IMAGE ...")
    return 0


def add_backend_args(s: argparse.ArgumentParser) -> None:
    """``--backend`` / ``--scheduler``: where joblib work (bank training, encoding) runs."""
    s.add_argument("--backend", choices=BACKENDS, default=None,
                   help="run parallel work with joblib's loky processes, threads, or on a Dask cluster "
                        "(needs classmap-studio[cluster]); default: each step's own choice on this machine")
    s.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="Dask scheduler address, e.g. tcp://10.0.0.5:8786 (implies --backend dask; "
                        "--backend dask without it starts a local cluster)")


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the model sub-commands on the ``classmap`` parser."""
    from .core.classify import bank_names
    from .core.features.base import FEATURE_MAPS

    s = sub.add_parser("train", help="train a recogniser on a data set and save it",
                       description="Train a recogniser: feature map + classifier bank (+ ClassMap). "
                                   "--set key=value sets feature map parameters; prefix bank. or classmap. "
                                   "for those (e.g. --set n_centroids=800 --set bank.C=0.1).")
    s.add_argument("--data", required=True, help="a built-in data set name (see `classmap datasets`) or a folder "
                                                 "with one sub-folder of images per class")
    s.add_argument("--features", default="kmeans", choices=sorted(FEATURE_MAPS), help="feature map (default kmeans)")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="a parameter, repeatable")
    s.add_argument("--bank", default="ova-liblinear", choices=bank_names(), help="classifier bank (default ova-liblinear)")
    s.add_argument("--classmap", nargs="?", const="", default=None, metavar="KEY=VALUE,...",
                   help="use ClassMap filter-and-refine (e.g. --classmap d=45,p=40)")
    s.add_argument("--test-fraction", type=float, default=0.2, help="part of each class held out for testing (0.2)")
    s.add_argument("--seed", type=int, default=0, help="random seed (0)")
    s.add_argument("--size", help="image size HxW for folder data (default 64x64)")
    s.add_argument("--colour", "--color", action="store_true", help="keep colour (folder data)")
    s.add_argument("--out", required=True, help="folder to save the model in")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    add_backend_args(s)
    s.set_defaults(func=cmd_train)

    s = sub.add_parser("add-class", help="add a class to a saved compressive model from a folder of images",
                       description="Add a class without retraining (compressive models: --bank compressive). "
                                   "The model folder is updated in place.")
    s.add_argument("model", help="a model folder saved by `classmap train`")
    s.add_argument("--name", required=True, help="name of the new class")
    s.add_argument("--images", required=True, help="folder holding the new class's images")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_add_class)

    s = sub.add_parser("eval", help="evaluate a saved model on a labelled data set")
    s.add_argument("model", help="a model folder saved by `classmap train`")
    s.add_argument("--data", required=True, help="built-in data set name or folder of class sub-folders")
    s.add_argument("--top", type=int, default=5, help="also report top-N accuracy (5)")
    s.add_argument("--json", action="store_true", help="print JSON (with the confusion matrix)")
    add_backend_args(s)
    s.set_defaults(func=cmd_eval)

    s = sub.add_parser("predict", help="classify image files with a saved model")
    s.add_argument("model", help="a model folder saved by `classmap train`")
    s.add_argument("images", nargs="+", metavar="IMAGE", help="image files")
    s.add_argument("--top", type=int, default=5, help="candidates to list per image (5)")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_predict)

    s = sub.add_parser("export", help="export a saved model with a standalone predict.py (numpy + OpenCV only)")
    s.add_argument("model", help="a model folder saved by `classmap train`")
    s.add_argument("--out", required=True, help="new folder for the export")
    s.add_argument("--overwrite", action="store_true", help="replace an earlier export in --out")
    s.set_defaults(func=cmd_export)
