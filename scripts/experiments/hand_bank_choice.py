"""Which classifiers the window hand model reads a window's embedding with: the network's own class head, or a
ridge bank fitted on the hand model's own images — on validation crops only (no test seed, no test video).

The ridge bank is fitted as ``classmap hand-model`` fits it: the build's images (``images_per_class`` of every
class at the build's training seed and framing jitter, the window's context, a background class of clutter and
near misses), its penalty chosen on the first validation seed among the search's grid (relative to n x mean
feature variance). The head is the network's (``resources/networks/<network>-head.npz``). Both score the same
validation crops of their own seeds (``varied`` and ``camera`` styles); a crop's shape is read as the reader
reads it (the sum of its orientation classes' softmax probabilities, the temperature chosen on the first
validation seed per bank) and its class as the best hand class. The build's ``bank=auto`` is the bank with the
better shape accuracy here; the JSON says which and by how much.

    PYTHONPATH=. nice -n 10 .venv/bin/python scripts/experiments/hand_bank_choice.py        # ~10 min on 2 cores
    PYTHONPATH=. .venv/bin/python scripts/experiments/hand_bank_choice.py --shapes 4 --images-per-class 4 --out /tmp/x.json

Writes ``docs/bench/hand-bank-choice.json`` (``--out``): a validation-only record, so its ``test_seed`` is null.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from pathlib import Path

import numpy as np

VALIDATION = ((45901, "varied"), (45903, "varied"), (45902, "camera"))
TEMPERATURES = {"ridge": (0.01, 0.02, 0.05, 0.1, 0.2), "head": (0.25, 0.5, 1.0, 2.0, 4.0)}


def shape_accuracy(S, truth, groups, n_groups, temperature) -> tuple[float, float]:
    """(shape accuracy as the reader reads, best hand class accuracy) of scores ``S (n, C)``."""
    P = np.exp((S - S.max(1, keepdims=True)) / temperature)
    P /= P.sum(1, keepdims=True)
    G = np.zeros((len(S), n_groups + 1))
    np.add.at(G.T, np.where(groups >= 0, groups, n_groups), P.T)
    shape = G[:, :n_groups].argmax(1)
    cls = np.where(groups[None, :] >= 0, S, -np.inf).argmax(1)
    return float(np.mean(shape == groups[truth])), float(np.mean(cls == truth))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--network", default="hand-window")
    ap.add_argument("--shapes", type=int, default=None, help="fewer shapes for a quick look (default all 81)")
    ap.add_argument("--images-per-class", type=int, default=32)
    ap.add_argument("--per-class", type=int, default=1, help="validation crops per class and seed")
    ap.add_argument("--out", default="docs/bench/hand-bank-choice.json")
    ap.add_argument("--models", nargs=2, metavar=("RIDGE", "HEAD"), help="two built hand models (classmap hand-model "
                    "--set bank=ova-ridge / bank=network-head, same network): their validation-video records are copied")
    a = ap.parse_args(argv)
    from classmap_gui.core.classify.banks.ridge_moments import ridge_moments
    from classmap_gui.core.data.hand_pose import generate_hand_pose
    from classmap_gui.core.data.hand_style import STYLES
    from classmap_gui.core.data.imageset import BACKGROUND_CLASS
    from classmap_gui.core.detect.background import background_images
    from classmap_gui.core.detect.pose_model import BUILD_OPTIONS
    from classmap_gui.core.detect.reading import shape_groups
    from classmap_gui.core.detect.window_crops import context_style, near_misses
    from classmap_gui.core.features.network import WindowNetworkFeatures
    from classmap_gui.core.features.network_head import network_head
    from classmap_gui.core.features.network_input import CROP
    from classmap_gui.core.timing import load_average
    from classmap_gui.core.train.search_space import PENALTY_GRID

    t0, load0 = time.perf_counter(), load_average()
    opt = {k: v[0] for k, v in BUILD_OPTIONS.items()}
    style = context_style(dataclasses.replace(STYLES["varied"], shift_jitter=float(opt["shift_jitter"]),
                                              scale_jitter=float(opt["scale_jitter"])))
    feats = WindowNetworkFeatures(network=a.network)
    ims = generate_hand_pose(shapes=a.shapes, images_per_class=a.images_per_class, style=style, size=(CROP, CROP),
                             seed=int(opt["seed"]), n_jobs=-1)
    feats.fit(ims.images[:1])
    rng = np.random.default_rng([int(opt["seed"]), 23])
    n_bg = int(opt["background"]) if a.shapes is None else 200
    near = near_misses(ims.images[rng.choice(len(ims), min(len(ims), n_bg // 2), replace=False)], rng)
    bg = np.concatenate([background_images(n_bg - len(near), (CROP, CROP), seed=int(opt["seed"]) + 17), near])
    names = list(ims.class_names) + [BACKGROUND_CLASS]
    X = feats.transform(np.concatenate([ims.images, bg]))
    y = np.r_[ims.labels, np.full(len(bg), ims.n_classes)]
    del ims, bg, near
    head_names, W, b = network_head(a.network)
    rows = [head_names.tolist().index(n) for n in names]
    Wh, bh = W[rows], b[rows]
    groups, gnames, _ = shape_groups(names)
    var = float(np.mean(np.var(X, axis=0, dtype=np.float64)))
    alphas = [g * len(X) * var for g in PENALTY_GRID["alpha"]]
    path = ridge_moments(X, y, len(names)).path()                   # the Gram once; each penalty one solve
    del X
    val = []
    for seed, sty in VALIDATION:
        v = generate_hand_pose(shapes=a.shapes, images_per_class=a.per_class, style=context_style(STYLES[sty]),
                               size=(CROP, CROP), seed=seed, n_jobs=-1)
        val.append((seed, sty, feats.transform(v.images), np.array([names.index(v.class_names[i]) for i in v.labels])))
    out = {"what": "validation-only comparison of the window hand model's bank: ridge on the build's images vs "
                   "the network's own class head (scripts/experiments/hand_bank_choice.py)",
           "test_seed": None, "network": a.network, "training_images": int(len(y)), "validation": [], "load_before": load0}
    choose_seed, Xv0, tv0 = val[0][0], val[0][2], val[0][3]
    ridge_scores = {}
    for g, alpha in zip(PENALTY_GRID["alpha"], alphas):
        Wr, br = path.weights(alpha)
        best = max(shape_accuracy(Xv0 @ Wr.T + br, tv0, groups, len(gnames), t)[0] for t in TEMPERATURES["ridge"])
        ridge_scores[g] = (best, Wr, br)
    alpha_rel = max(ridge_scores, key=lambda g: (ridge_scores[g][0], g))
    _, Wr, br = ridge_scores[alpha_rel]
    out["ridge_alpha_rel"] = {"chosen": alpha_rel, "scores": {str(g): s[0] for g, s in ridge_scores.items()},
                              "split": f"validation seed {choose_seed}",
                              "at_edge": alpha_rel in (PENALTY_GRID["alpha"][0], PENALTY_GRID["alpha"][-1])}
    banks = {"ridge": (Wr, br), "head": (Wh, bh)}
    temps = {k: max(TEMPERATURES[k], key=lambda t: shape_accuracy(Xv0 @ Wk.T + bk, tv0, groups, len(gnames), t)[0])
             for k, (Wk, bk) in banks.items()}
    out["temperature"] = {"chosen": temps, "split": f"validation seed {choose_seed}"}
    for seed, sty, Xv, tv in val:
        row = {"seed": seed, "style": sty, "crops": int(len(tv))}
        for k, (Wk, bk) in banks.items():
            row[k] = dict(zip(("shape", "class"), shape_accuracy(Xv @ Wk.T + bk, tv, groups, len(gnames), temps[k])))
        out["validation"].append(row)
    mean = {k: float(np.mean([r[k]["shape"] for r in out["validation"]])) for k in banks}
    out["mean_shape"] = mean
    out["chosen"] = max(mean, key=mean.get)
    out["rule"] = "the bank with the higher mean shape accuracy over the validation seeds"
    if a.models:   # end to end on the build's validation videos, as each model's build recorded it
        out["validation_videos"] = {}
        for kind, folder in zip(("ridge", "head"), a.models):
            sel = json.loads((Path(folder) / "model.json").read_text())["metadata"]["hand_model"]["selection"]
            r = sel["reading"]
            ch = r["chosen"]
            key = "/".join(f"{ch[k]:g}" for k in ("temperature", "history", "crops"))
            out["validation_videos"][kind] = {"model": str(folder), "reading_chosen": ch,
                                              "shape_key_pose_frames": r["scores"][key], "reading_by": r["by"],
                                              "localisation": sel["validation_localisation"]}
    out["seconds"], out["load_after"] = time.perf_counter() - t0, load_average()
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps({k: out[k] for k in ("mean_shape", "chosen", "ridge_alpha_rel", "temperature")}, indent=1))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    raise SystemExit(main())
