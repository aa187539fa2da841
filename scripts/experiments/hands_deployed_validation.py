"""The deployed hand model (`docs/bench/scan.json`'s) on its own validation part: how much of its low
validation accuracy is the background class.

Regenerates the build's images (`varied` style, its framing jitter, seed and 32 images per class), carves the
same 10 % hold-out (`core.selection.splits.holdout` over the same labels), and scores the bank (brute force) on its hand
crops two ways: as `bench scan`'s `selection.classmap_p` scored it (every class, the background included: a
hand named background is wrong) and as the reader names a hand (`core/detect/reading.py`: the hand classes
only, the scan having decided a hand is there). Validation material only.

    PYTHONPATH=. .venv/bin/python scripts/experiments/hands_deployed_validation.py /tmp/hand_models/v3 [OUT.json]
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import numpy as np

from classmap_gui.cli.bench import revision
from classmap_gui.core.data.hand_pose import generate_hand_pose, pose_scores
from classmap_gui.core.data.hand_style import STYLES
from classmap_gui.core.data.imageset import BACKGROUND_CLASS
from classmap_gui.core.recogniser import Recogniser
from classmap_gui.core.selection.splits import holdout

OUT = Path(__file__).resolve().parents[2] / "docs" / "bench" / "hands-deployed-validation.json"


def main() -> None:
    folder = sys.argv[1]
    rec = Recogniser.load(folder)
    opt = rec.metadata["hand_model"]["build_options"]
    style = dataclasses.replace(STYLES[opt["style"]], shift_jitter=opt["shift_jitter"], scale_jitter=opt["scale_jitter"])
    ims = generate_hand_pose(shapes=opt["shapes"], orientations=opt["orientations"],
                             images_per_class=int(opt["images_per_class"]), style=style, seed=int(opt["seed"]), n_jobs=-1)
    y_all = np.concatenate([ims.labels, np.full(int(opt["background"]), ims.n_classes)])
    _, val_idx = holdout(y_all, float(opt["validation_fraction"]), int(opt["seed"]))  # as build_hand_model
    val_idx = val_idx[val_idx < len(ims)]
    names = list(rec.class_names)
    if names[:ims.n_classes] != list(ims.class_names):
        raise SystemExit("the model's classes are not the generated ones")
    S = rec.classifier.decision_function(rec.transform(ims.images[val_idx]))
    bg = names.index(BACKGROUND_CLASS)
    every = S.argmax(1)
    S[:, bg] = -np.inf
    true = [names[i] for i in ims.labels[val_idx]]
    res = {"bench": "hands-deployed-validation (scripts/experiments/hands_deployed_validation.py)",
           "revision": revision(),
           "test_seed": None,
           "test_part": "none: validation only (the hand-model build's 10 % hold-out, seed 0); no test seed, test "
                        "video or camera image",
           "model": str(folder), "model_bank_alpha": rec.metadata.get("bank_params", {}).get("alpha"),
           "load": os.getloadavg()[0],
           "selection": {"split": "validation", "part": "the build's own 10 % hold-out of every hand class (seed "
                         f"{opt['seed']}, {opt['images_per_class']} images per class, style {opt['style']})",
                         "hand_crops": int(len(val_idx))},
           "named_background": float(np.mean(every == bg)),
           "every_class": pose_scores(true, [None if i == bg else names[i] for i in every]),
           "hand_classes_only": pose_scores(true, [names[i] for i in S.argmax(1)])}
    (Path(sys.argv[2]) if len(sys.argv) > 2 else OUT).write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
