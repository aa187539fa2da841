"""The 2430-class hand-pose model behind the live map's figures and pictures, in about a minute.

    PYTHONPATH=. .venv/bin/python scripts/experiments/live_map_model.py OUT

All 81 shapes x 30 orientations, 10 generated 48x48 images per class (seed 0), HOG, ridge one-vs-all
(alpha 30), ClassMap d = 30, p = 40, references from a 30x smoother bank, 20 000 boosting triples; 20 %
of each class for the test report and 20 % to embed the classes. A small, quick stand-in for the README's
hand-pose model: its settings were not tuned (68.6 % test accuracy), it only has to be a real 2430-class
ClassMap for scripts/experiments/live_map_bench.py, live_map_faithful.py and scripts/screenshots/make_live.py.
"""
from __future__ import annotations


def main() -> int:
    import argparse

    from classmap_gui.core.data.hand_pose import generate_hand_pose
    from classmap_gui.core.train.training import TrainConfig, train

    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--shapes", type=int, help="the first N shapes (default all 81: a smoke run uses a few)")
    ap.add_argument("--orientations", type=int, help="N of the 30 orientations (default all)")
    ap.add_argument("--d", type=int, default=30)
    ap.add_argument("--p", type=int, default=40)
    ap.add_argument("--triples", type=int, default=20000)
    a = ap.parse_args()
    ims = generate_hand_pose(images_per_class=10, size=(48, 48), name="hand-pose-live", shapes=a.shapes,
                             orientations=a.orientations)
    cfg = TrainConfig(features="hog", bank="ova-ridge", bank_params={"alpha": 30.0},
                      classmap={"d": a.d, "p": a.p, "embedding": "boosted", "refine": "v2", "n_triples": a.triples,
                                "reference_penalty": 30.0},
                      test_fraction=0.2, classmap_fraction=0.2, seed=0)
    res = train(ims, cfg)
    res.recogniser.save(a.out)
    print(f"{len(ims)} images, test accuracy {res.report.accuracy:.3f}, saved to {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
