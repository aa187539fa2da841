"""``classmap eval | predict | add-class | export``: commands that use a saved model."""
from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

from ..core.errors import ConfigError, DataError, ModelFormatError
from ..core.parallel import parallel_backend
from .common import ProgressBar, Subcommands, emit
from .options import add_backend_args, add_data_args, load_data, report_skipped

#: Exit status of ``predict`` when some images could not be read (the others were classified).
EXIT_SOME_UNREADABLE = 1


def _check_top(top: int) -> None:
    if top < 1:
        raise ConfigError(f"--top must be at least 1, got {top}")


@contextlib.contextmanager
def _of_model(path):
    """A model found faulty while it runs (its network gives NaN) is named in the one line, as at load."""
    try:
        yield
    except ModelFormatError as exc:
        raise ModelFormatError(f"{path}: {exc}") from None


def cmd_eval(args: argparse.Namespace) -> int:
    """``classmap eval``: score a saved recogniser on a data set (accuracy, top-k) and print the report."""
    from ..core.recogniser import Recogniser
    from ..core.train.training import evaluate

    _check_top(args.top)
    model = Recogniser.load(args.model)
    bar = ProgressBar()
    try:
        data = load_data(args.data, size=model.image_size, grey=model.grey, args=args, progress=bar)
        bar.close()
        report_skipped(data, sys.stderr)
        if data.image_size != model.image_size or data.is_color == model.grey:
            data.images = model.prepare(data.images)
        part, note = _held_out(model, data, args.all)
        if note:
            print(f"note: {note}", file=sys.stderr)
        with parallel_backend(args.backend, scheduler=args.scheduler), _of_model(args.model):
            rep = evaluate(model, part, top=args.top, progress=bar)
    finally:
        bar.close()
    emit({"model": str(args.model), "data": data.name or str(args.data), "images_scored": len(part),
          **rep.to_dict()}, args.json, f"{args.model} on {data.name or args.data}: {rep.summary()}")
    return 0


def _held_out(model, data, score_all: bool):
    """``(images to score, note or None)``. On the very set the model was trained on, the images its
    training held out (its recorded settings give the same split); accuracy on the training images
    themselves flatters, so scoring them (``--all``) says so."""
    from ..core.train.training import TrainConfig, split_parts

    meta = model.metadata or {}
    same = (meta.get("data") == data.name and meta.get("config") is not None
            and sum((meta.get("sizes") or {}).values()) == len(data) and list(data.class_names) == model.class_names)
    if not same:
        return data, None
    if score_all:
        return data, (f"{data.name} is the set this model was trained on: the accuracy below includes its "
                      "training images and flatters it")
    try:
        test = split_parts(data.labels, TrainConfig.from_dict(meta["config"]), data.groups)["test"]  # as trained
    except Exception:  # noqa: BLE001 - settings from another version: score everything, and say so
        return data, f"{data.name} is the set this model was trained on: the accuracy below includes its training images"
    if not len(test):
        return data, (f"{data.name} is the set this model was trained on and it held nothing out: the "
                      "accuracy below is on its training images")
    return data.subset(test), (f"{data.name} is the set this model was trained on: scoring the {len(test)} "
                               "images its training held out (--all scores every image)")


def cmd_predict(args: argparse.Namespace) -> int:
    """Classify every readable image; one ``<path>: cannot read image: <reason>`` line on stderr per
    unreadable one; exit status 1 when any was unreadable (0 when all were classified). Names are
    printed on one line each, their control characters escaped (:func:`~classmap_gui.core.plain_text.one_line`)."""
    from ..core.data.folder import IMAGE_EXTENSIONS, ImageReadError, read_image
    from ..core.data.image_decode import NOT_READ
    from ..core.plain_text import one_line
    from ..core.recogniser import Recogniser

    _check_top(args.top)
    model = Recogniser.load(args.model)
    paths, images, bad = [], [], []
    for p in _expand_folders(args.images):
        try:
            suffix = Path(p).suffix.lower()
            if suffix not in IMAGE_EXTENSIONS:  # the same files `train` reads from a folder
                raise ImageReadError(p, NOT_READ.get(suffix[1:], f"not an image file name (use "
                                                                  f"{', '.join(IMAGE_EXTENSIONS)})"))
            images.append(read_image(p, size=model.image_size, grey=model.grey, max_pixels=args.max_image_pixels))
            paths.append(p)
        except ImageReadError as exc:
            bad.append(exc)
            print(one_line(str(exc)), file=sys.stderr)
    rows, timings = [], {}
    if images:
        with _of_model(args.model):
            pred = model.predict(images, top=args.top)
        timings = pred.timings
        names = model.class_names
        for path, cls_row, score_row, ev in zip(paths, pred.top_classes, pred.top_scores, pred.evaluations):
            rows.append({"image": path, "label": names[cls_row[0]],
                         "top": [{"class": names[c], "score": float(s)} for c, s in zip(cls_row, score_row)],
                         "evaluations": int(ev)})
    text = "\n".join(f"{one_line(r['image'])}: {r['label']}   (" + ", ".join(f"{t['class']} {t['score']:.3f}" for t in r["top"])
                     + ")" for r in rows)
    if rows or args.json:
        emit({"predictions": rows, "unreadable": [{"image": e.path, "reason": e.reason} for e in bad],
              "timings": timings}, args.json, text)
    return EXIT_SOME_UNREADABLE if bad else 0


def _expand_folders(args: list[str]) -> list[str]:
    """Each folder among ``args`` replaced by its image files, sorted by name (the rule an exported predict.py
    applies too: :func:`~classmap_gui.core.data.image_decode.folder_images`); other arguments kept as given."""
    from ..core.data.image_decode import folder_images

    return [q for a in args for q in ([str(f) for f in folder_images(Path(a))] if Path(a).is_dir() else [a])]


def cmd_add_class(args: argparse.Namespace) -> int:
    """Add a class to a saved model, in place (saved atomically): from a folder of images, or from a video (a hand
    model: the hand's crop in every frame where its scan finds one; another model: the frames themselves)."""
    from ..core.data.imageset import check_class_name
    from ..core.recogniser import Recogniser
    from ..core.store.format import check_bundle_target

    name = check_class_name(args.name, "--name")
    source = Path(args.images).expanduser()
    if not source.is_dir() and not source.is_file():
        raise DataError(f"--images {source}: not a folder or a video file")
    model = Recogniser.load(args.model)
    if name in model.class_names:
        raise DataError(f"--name {name!r}: the model already has a class of that name")
    check_bundle_target(args.model, "model.json")
    images, skipped = (_folder_images(source, model, args) if source.is_dir() else _video_images(source, model))
    for path, reason in skipped:
        print(f"note: skipped {path}: {reason}", file=sys.stderr)
    if not len(images):
        raise DataError(f"--images {source}: no readable images" + (f" ({len(skipped)} skipped)" if skipped else ""))
    t0 = time.perf_counter()
    added = model.add_class(name, images)
    seconds = time.perf_counter() - t0
    model.save(args.model)
    result = {"model": str(args.model), "class": name, "label": added.label, "images": len(images),
              "skipped": [s[0] for s in skipped], "classes": model.n_classes, "seconds": round(seconds, 4),
              "check": {k: v for k, v in added.to_json().items() if k not in ("label", "name", "examples")}}
    if added.warning:
        print(f"warning: {added.warning}", file=sys.stderr)
    emit(result, args.json, f"added class {name!r} ({len(images)} images, label {added.label}) to {args.model} "
                            f"in {seconds:.3f} s; {model.n_classes} classes"
                            + (f"; skipped {len(skipped)} unreadable file(s)" if skipped else ""))
    return 0


def _folder_images(folder: Path, model, args) -> tuple[list, list]:
    from ..core.data.folder import image_files, read_images

    skipped: list[tuple[str, str]] = []
    files = image_files(folder, follow_links=args.follow_links, skipped=skipped)
    images, _ = read_images(files, size=model.image_size, grey=model.grey, max_pixels=args.max_image_pixels,
                            skipped=skipped)
    return images, skipped


def _video_images(path: Path, model) -> tuple:
    """A video's frames; a hand model's (one with scan settings) are the hand crops its scan finds."""
    from ..core.detect.gesture_crops import hand_crops, video_frames

    frames = video_frames(path)
    if "detection" not in model.metadata:
        return frames, []
    found = hand_crops(model, frames, method="classmap" if model.classmap is not None else "brute_force")
    return found.crops, [(f"{path} frame {i}", "no hand found") for i in found.skipped]


def cmd_export(args: argparse.Namespace) -> int:
    """Write a standalone folder (model + numpy/OpenCV predict.py) for a saved model."""
    from ..core.export.folder import export_recogniser
    from ..core.recogniser import Recogniser

    out = export_recogniser(Recogniser.load(args.model), args.out, overwrite=args.overwrite)
    print(f"exported to {out}; run: python {out / 'predict.py'} IMAGE ...")
    return 0


def add_commands(sub: Subcommands) -> None:
    """Register the commands that use a saved model on the ``classmap`` parser."""
    s = sub.add_parser("add-class", help="add a class to a saved model (ridge bank, with or without ClassMap, or "
                                         "compressive) from a folder of images or a video, without retraining",
                       description="Add a class without retraining (compressive models: --bank compressive). "
                                   "The model folder is updated in place.")
    s.add_argument("model", help="a model folder saved by `classmap train`")
    s.add_argument("--name", required=True, help="name of the new class")
    s.add_argument("--images", required=True, help="folder holding the new class's images, or a video file (a hand "
                                                   "model takes the hand boxes its scan finds in each frame)")
    s.add_argument("--json", action="store_true")
    add_data_args(s)
    s.set_defaults(func=cmd_add_class)

    s = sub.add_parser("eval", help="evaluate a saved model on a labelled data set")
    s.add_argument("model", help="a model folder saved by `classmap train`")
    s.add_argument("--data", required=True, help="built-in data set name or folder of class sub-folders")
    s.add_argument("--top", type=int, default=5, help="also report top-N accuracy (5)")
    s.add_argument("--json", action="store_true", help="print JSON (with the confusion matrix)")
    s.add_argument("--all", action="store_true", help="on the set the model was trained on, score every image "
                                                      "(default: only those its training held out)")
    add_data_args(s)
    add_backend_args(s)
    s.set_defaults(func=cmd_eval)

    s = sub.add_parser("predict", help="classify image files with a saved model",
                       description="Prints one line per readable image; each unreadable one gets a line "
                                   "'<path>: cannot read image: <reason>' on stderr and the exit status is 1.")
    s.add_argument("model", help="a model folder saved by `classmap train`")
    s.add_argument("images", nargs="+", metavar="IMAGE", help="image files, or folders (their image files, by name)")
    s.add_argument("--top", type=int, default=5, help="candidates to list per image (5)")
    s.add_argument("--json", action="store_true")
    add_data_args(s)
    s.set_defaults(func=cmd_predict)

    s = sub.add_parser("export", help="export a saved model with a standalone predict.py (numpy + OpenCV only)")
    s.add_argument("model", help="a model folder saved by `classmap train`")
    s.add_argument("--out", required=True, help="new folder for the export")
    s.add_argument("--overwrite", action="store_true", help="replace an earlier export in --out")
    s.set_defaults(func=cmd_export)
