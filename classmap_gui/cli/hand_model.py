"""``classmap hand-model``: build the 2430-class hand-pose model (with its background class, hand detector and
scan settings) where the app finds it (:func:`hand_model_dir`), with a progress bar."""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from ..user_dirs import hand_model_dir
from .common import ProgressBar, Subcommands, emit, parse_sets

def cmd_hand_model(args: argparse.Namespace) -> int:
    """Build the model (:func:`..core.detect.pose_model.make_hand_model`) and save it; prints a summary."""
    from ..core.detect.pose_model import make_hand_model

    out = Path(args.out) if args.out else hand_model_dir()
    from ..core.settings.hand import options as group, quick

    # --quick: a few shapes and orientations, fewer validation videos (the table's quick values)
    choosing = group("choice")
    sets = parse_sets(args.set)
    options = {**(quick("build") if args.quick else {}), **{k: v for k, v in sets.items() if k not in choosing}}
    choice = {**(quick("choice") if args.quick else {}), **{k: v for k, v in sets.items() if k in choosing}}
    load = list(os.getloadavg())
    bar = ProgressBar(enabled=True)  # a build of minutes is never silent, on a terminal or in a log
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        rec, info = make_hand_model(out, options, choice, progress=bar)
    finally:
        bar.close()
    emit({"model": str(out), "classes": rec.n_classes, "seconds": time.perf_counter() - t0,
          "cpu_seconds": time.process_time() - c0,
          "stage_seconds": info["seconds"], "load_average_before": load, "load_average_after": list(os.getloadavg()),
          "detection": info["detection"]}, args.json,
         f"hand-pose model: {rec.n_classes} classes in {time.perf_counter() - t0:.0f} s -> {out}\n"
         + ("open it in the app with File > Get the hand-pose model" if out.absolute() == hand_model_dir().absolute()
            else f"open it in the app with File > Open model… ({out / 'model.json'}); from then on File > Get the "
                 f"hand-pose model opens it too (or start the app with CLASSMAP_HAND_MODEL={out})"))
    return 0


def cmd_train_network(args: argparse.Namespace) -> int:
    """``classmap train-network``: :func:`..network_training.train` (needs the ``[train]`` extra: PyTorch)."""
    try:
        from ..network_training import run_command
    except ImportError as e:
        from ..core.errors import ConfigError

        raise ConfigError(f"train-network needs PyTorch, a training-only extra: pip install 'classmap-studio[train]' "
                          f"(or pip install torch==2.13.0) ({e})") from None
    return run_command(args)


def add_commands(sub: Subcommands) -> None:
    """Register ``classmap hand-model`` and ``classmap train-network``."""
    t = sub.add_parser("train-network", help="train the hand reader's network (PyTorch, the [train] extra) and "
                                             "export it to ONNX",
                       description="Train the hand reader's convolutional network on hand crops generated on the "
                                   "fly (seeded, resumable from checkpoints), score it on validation crops and "
                                   "export network.onnx with training.json beside it.")
    t.add_argument("--out", required=True, type=Path, help="folder: checkpoint.pt, curve.json, network.onnx, "
                                                           "training.json (an existing checkpoint is resumed)")
    t.add_argument("--steps", type=int, default=7000, help="training steps, one batch each (default 7000)")
    t.add_argument("--batch", type=int, default=128, help="crops per step (default 128)")
    t.add_argument("--background", type=int, default=8, help="background crops in each batch (default 8)")
    t.add_argument("--seed", type=int, default=36000, help="seed of the generated training crops")
    t.add_argument("--validation-seed", type=int, default=36901, help="seed of the validation crops")
    t.add_argument("--validation-per-class", type=int, default=2, help="validation crops per class (default 2)")
    t.add_argument("--arch", choices=("crop", "dense"), default="crop",
                   help="crop: one crop at a time (the first hand network); dense: the window network, fully "
                        "convolutional, every window of a pyramid level from one pass (network_training_window)")
    t.add_argument("--width", choices=("small", "base", "wide"), default="base", help="network width")
    t.add_argument("--embedding", type=int, default=512, help="embedding (exported feature) width (default 512)")
    t.add_argument("--lr", type=float, default=1e-3, help="peak learning rate, AdamW (default 1e-3)")
    t.add_argument("--eval-every", type=int, default=1000, help="steps between validation scores (default 1000)")
    t.add_argument("--threads", type=int, default=None, help="PyTorch threads (default: its own)")
    t.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                   help="where PyTorch trains: a GPU where it sees one (auto, the default), or the CPU")
    t.add_argument("--workers", type=int, default=1, help="processes rendering the training crops (default 1); "
                                                          "the batches are the same whatever the number")
    t.add_argument("--minutes", type=float, default=None,
                   help="a time budget instead of --steps: the length is set from the speed of the first "
                        "steps and recorded (run again with --steps that length to repeat it)")
    t.set_defaults(func=cmd_train_network)
    s = sub.add_parser("hand-model", help="build the 2430-class hand-pose model the app names hand shapes with",
                       description="Generate, train and calibrate the hand-pose model (81 shapes x 30 orientations "
                                   "+ background, hand detector, scan settings chosen on validation videos).")
    s.add_argument("--out", help="model folder (default: where the app looks, $CLASSMAP_HAND_MODEL or the user "
                                 "data folder)")
    s.add_argument("--quick", action="store_true", help="a small model (8 shapes x 6 orientations) in a minute")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="build and choice options (bench scan's)")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_hand_model)
