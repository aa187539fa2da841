"""``classmap bench bursts``: does the reported accuracy on a capture-like set match what a new capture scores?

A capture-like set is made from a built-in set (digits): ``sources`` images per class, each "captured"
as a burst of ``frames`` near-identical frames (the image plus uniform noise of +-``noise`` grey
levels). The same recogniser settings are trained twice per seed: with the burst-grouped split
training uses (bursts whole on one side) and with a plain random split of the frames (what training
did before). Each model is then scored on *new bursts*: ``fresh`` other images per class, captured the
same way — the honest measure. Reported minus honest is how much a split flatters.

No hyper-parameter is chosen here beyond what training itself chooses on its validation part (ridge's
penalty, on bursts kept whole too).
"""
from __future__ import annotations

import os

import numpy as np

from ..core.data import ImageSet, load_digits
from ..core.progress import check_stop, report

OPTIONS = {
    "sources": (12, "source images per class (one burst each)"),
    "frames": (6, "frames per burst"),
    "fresh": (20, "new source images per class for the honest measure (3 frames each)"),
    "noise": (6, "frame-to-frame noise, +- grey levels"),
    "seeds": ("0/1/2", "training seeds, '/'-separated"),
    "features": ("pixels", "feature map"),
    "bank": ("ova-ridge", "classifier bank"),
    "test_fraction": (0.25, "test fraction"),
    "test_seed": (1, "seed of the new bursts (which unused digits, their noise): the honest test part"),
}


def capture_like(ims: ImageSet, idx, frames: int, noise: int, rng, first_group: int = 0) -> ImageSet:
    """Every image of ``idx`` taken ``frames`` times with +-``noise`` uniform noise, one capture group each."""
    imgs, labels, groups = [], [], []
    for g, i in enumerate(idx):
        for _ in range(frames):
            img = ims.images[i].astype(np.int16) + rng.integers(-noise, noise + 1, size=ims.images[i].shape)
            imgs.append(np.clip(img, 0, 255).astype(np.uint8))
            labels.append(ims.labels[i])
            groups.append(first_group + g)
    return ImageSet(np.stack(imgs), np.array(labels), ims.class_names, groups=np.array(groups),
                    name=f"{ims.name or 'set'}-bursts")


def make_sets(sources: int = 12, frames: int = 6, fresh: int = 20, noise: int = 6,
              seed: int = 0, test_seed: int = 1) -> tuple[ImageSet, ImageSet]:
    """``(capture-like set, new bursts)`` from digits: disjoint source images, new bursts 3 frames each; the
    new bursts (which of the unused images, their noise) are drawn with their own ``test_seed``, from
    images no burst of the set was made from (disjoint by construction)."""
    d = load_digits()
    rng, test_rng = np.random.default_rng(seed), np.random.default_rng(test_seed)
    src, new = [], []
    for c in range(d.n_classes):
        i = rng.permutation(np.flatnonzero(d.labels == c))
        src += list(i[:sources])
        new += list(test_rng.permutation(i[sources:])[:fresh])
    return capture_like(d, src, frames, noise, rng), capture_like(d, new, 3, noise, test_rng, 10 ** 6)


def run(*, progress=None, should_stop=None, sources: int = 12, frames: int = 6, fresh: int = 20, noise: int = 6,
        seeds="0/1/2", features: str = "pixels", bank: str = "ova-ridge", test_fraction: float = 0.25,
        test_seed: int = 1) -> dict:
    """The bench: per seed, reported and honest accuracy for the grouped and the random split."""
    from ..core.train.training import TrainConfig, evaluate, train

    cap, new = make_sets(int(sources), int(frames), int(fresh), int(noise), test_seed=int(test_seed))
    plain = ImageSet(cap.images, cap.labels, cap.class_names, name=cap.name)   # same frames, no bursts
    seed_list = [int(s) for s in str(seeds).split("/")]
    rows, selection = [], {}
    for k, seed in enumerate(seed_list):
        check_stop(should_stop)
        cfg = TrainConfig(features=features, bank=bank, test_fraction=float(test_fraction), seed=seed)
        row = {"seed": seed}
        for name, data in (("grouped", cap), ("random", plain)):
            res = train(data, cfg, should_stop=should_stop)
            honest = evaluate(res.recogniser, new, measure_latency=False).accuracy
            selection.update({f"seed{seed}.{name}.{key}": v for key, v in res.selection.items()})
            row[name] = {"reported": res.report.accuracy, "new_bursts": honest,
                         "flatters_by": res.report.accuracy - honest, "split": res.split_info["by"],
                         "test_groups": res.split_info["groups_per_part"]["test"]}
        rows.append(row)
        report(progress, (k + 1) / len(seed_list), "training")
    mean = {name: {key: float(np.mean([r[name][key] for r in rows])) for key in ("reported", "new_bursts",
                                                                                 "flatters_by")}
            for name in ("grouped", "random")}
    return {"bench": "bursts", "set": {"from": "digits", "classes": cap.n_classes, "sources_per_class": sources,
                                       "frames": frames, "noise": noise, "images": len(cap),
                                       "new_bursts_images": len(new)},
            "settings": {"features": features, "bank": bank, "test_fraction": test_fraction},
            "test_seed": int(test_seed), "selection": selection,
            "runs": rows, "mean": mean, "load": list(os.getloadavg())}
