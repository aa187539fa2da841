"""The built-in demo the app opens on, and training settings that make it a one-click train."""
from __future__ import annotations

from pathlib import Path

from .resource_files import resource_path

from ..core.data import builtin_datasets

PREFERRED = ("hand-pose-small", "glyph-pose-small", "digits")
#: the demo video in resources/ that Run and Capture list out of the box (no camera needed): a rendered
#: hand holding hand-pose-small poses in front of clutter (``python -m classmap_gui.core.data.hand_video``)
DEMO_VIDEO = "demo-hands.avi"
#: the Find-the-hand demo: a rendered hand moving across a cluttered scene (``hand_video`` variant "find-hand")
FIND_HAND_VIDEO = "demo-find-hand.avi"


def demo_video() -> Path | None:
    """The shipped demo video of hand poses; None if missing."""
    return resource_path(DEMO_VIDEO)


def demo_videos() -> list[Path]:
    """Every shipped demo video, the hand-pose one first (the Run and Capture source lists offer them all)."""
    return [p for p in (resource_path(DEMO_VIDEO), resource_path(FIND_HAND_VIDEO)) if p is not None]


def demo_dataset() -> str:
    """The first of :data:`PREFERRED` available here (digits is always shipped)."""
    avail = {ds.name for ds in builtin_datasets() if ds.available()}
    return next(n for n in PREFERRED if n in avail or n == "digits")


def demo_settings(dataset: str, features: str | None = None) -> dict:
    """Training settings (TrainConfig fields) that train the demo in seconds on 2 cores.

    ``features="kmeans"`` on a 10-class set of real-sized images (Fashion-MNIST) swaps in a small
    single-layer k-means network (256 centroids of 6x6 patches, stride 2), to see learned centroids:
    88% test accuracy there in about 15 s. (On the glyph set such a network reaches only ~40%: its
    2x2 pooling loses the orientation that HOG's 7x7 cells keep.)
    """
    if dataset != "digits" and features == "kmeans":
        return {"features": "kmeans", "features_params": {"n_centroids": 256, "stride": 2, "n_patches": 100000},
                "bank": "ova-ridge", "bank_params": {"alpha": 100.0},
                "classmap": {"d": 4, "p": 3, "embedding": "boosted", "refine": "v2"},
                "test_fraction": 0.2, "seed": 0}
    if dataset == "digits":
        return {"features": "kmeans", "features_params": {"n_centroids": 64, "patch_size": 3, "n_patches": 20000},
                "bank": "ova-liblinear", "bank_params": {},
                "classmap": {"d": 6, "p": 4, "embedding": "boosted", "refine": "v2"},
                "test_fraction": 0.2, "seed": 0}
    if dataset == "hand-pose-small":
        # HOG + ridge one-vs-all, alpha=10 chosen on a validation part of the training images (94.5%
        # there; 100: 92.9%, 1000: 90.4%): one linear solve, seconds for 250 classes. ClassMap's
        # references from a 30x smoother bank, chosen the same way (validation 92.9% at 50 evaluations
        # against 75.0% with the bank's own references and 94.1% for brute force; 3: 85.4%, 10: 91.9%).
        return {"features": "hog", "features_params": {}, "bank": "ova-ridge", "bank_params": {"alpha": 10.0},
                "classmap": {"d": 30, "p": 20, "embedding": "boosted", "refine": "v2", "reference_penalty": 30.0},
                "test_fraction": 0.2, "seed": 0}
    # HOG + ridge one-vs-all: one linear solve, ~6 s for 250 classes (liblinear: minutes) and 96.5% test
    # accuracy on glyph-pose-small; ridge's default alpha=1 over-fits these 4000 images (58%).
    return {"features": "hog", "features_params": {}, "bank": "ova-ridge", "bank_params": {"alpha": 100.0},
            "classmap": {"d": 30, "p": 20, "embedding": "boosted", "refine": "v2"},
            "test_fraction": 0.2, "seed": 0}


def open_demo(win, features: str | None = None):
    """Load the built-in demo set with the settings that make it a one-click train."""
    from .hand_model import offer_hand_model

    offer_hand_model(win)                        # "show your hand": the 2430-class model, no training
    name = demo_dataset()
    win.dataset.summary.setText(f"Opening the demo ({name})…")  # not "No project open" while it loads
    task = win.dataset.load_builtin(name)
    if task is not None:
        task.succeeded.connect(lambda _ims: win.train.apply_settings(demo_settings(name, features)))
    return task
