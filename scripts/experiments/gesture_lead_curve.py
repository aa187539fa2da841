"""How far a person's own gesture can be kept from taking other hand shapes' frames, and what its recall pays:
the lead over the network head's logits a gesture must have, on validation takes only (no test seed).

``bench add-gesture``'s own measure (:func:`classmap_gui.bench.add_gesture._measure`: six new hand shapes each
recorded as one 5-second take, added as the app adds them, then read on fresh clean and camera-style takes of
their own and on bench scan's videos of the 81 shapes) is run once per ``--leads`` value on the validation seed,
with every added gesture's intercept lowered by that lead: a gesture then wins a frame only where it beats every
other class by that much more. The curve of recall against "taken" (the other shapes' key-pose frames read as a
gesture) bounds what any offset of the added classifiers can reach with this network's embedding.

    PYTHONPATH=. nice -n 10 .venv/bin/python scripts/experiments/gesture_lead_curve.py --model-dir MODEL   # ~5 min
    PYTHONPATH=. .venv/bin/python scripts/experiments/gesture_lead_curve.py --model-dir MODEL --leads 0,4 \\
        --gestures 1 --shape-videos 1 --quick --out /tmp/x.json

Writes ``docs/bench/gesture-lead-curve.json`` (``--out``): a validation-only record, so its ``test_seed`` is null.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np


def main() -> int:
    from classmap_gui.bench import add_gesture as ag
    from classmap_gui.bench.common import machine
    from classmap_gui.cli.bench import revision
    from classmap_gui.core.recogniser import Recogniser

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model-dir", required=True, help="the hand model (classmap hand-model --out)")
    ap.add_argument("--leads", default="0,3,6", help="leads over the head to try, comma-separated")
    ap.add_argument("--seed", type=int, default=ag.OPTIONS["validation_seed"][0], help="the validation seed")
    ap.add_argument("--gestures", type=int, default=ag.OPTIONS["gestures"][0])
    ap.add_argument("--shape-videos", type=int, default=4, help="bench scan's videos of the 81 shapes")
    ap.add_argument("--quick", action="store_true", help="short takes (2 s recorded, 1 s each fresh take, one of "
                                                             "each style): a smoke run, its figures meaningless")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[2] / "docs" / "bench" /
                                         "gesture-lead-curve.json"))
    args = ap.parse_args()
    leads = [float(v) for v in args.leads.split(",") if v.strip()]
    if int(args.seed) == int(ag.TEST_SEED):
        raise SystemExit(f"--seed {args.seed} is bench add-gesture's test seed: pick a validation seed")
    added = Recogniser.add_class
    t0, before, rows = time.perf_counter(), machine(), []
    try:
        for lead in leads:
            def add_class(self, name, images, _lead=lead, **kw):
                res = added(self, name, images, **kw)
                self.classifier.intercept_[-1] -= np.float32(_lead)   # the gesture must beat the others by more
                return res
            Recogniser.add_class = add_class
            opt = {k: v[0] for k, v in ag.OPTIONS.items()}
            opt.update(model_dir=args.model_dir, test_seed=int(args.seed), shape_videos=int(args.shape_videos),
                       gestures=int(args.gestures), **ag.parse_candidate("1:-:sum"))
            if args.quick:
                opt.update(record_seconds=2.0, test_seconds=1.0, clean_takes=1, camera_takes=1)
            r = ag._measure(opt)
            rows.append({"lead": lead, **{m: {"recall_clean_mean": v["recall_clean_mean"],
                                              "recall_camera_mean": v["recall_camera_mean"],
                                              "taken_by_gestures": v["shape_videos"]["taken_by_gestures"],
                                              "shape_video_frames": v["shape_videos"]["frames"],
                                              "classes_2430_change_points": v["classes_2430"]["change_points"]}
                                          for m, v in r["methods"].items()}})
            print(json.dumps(rows[-1]))
    finally:
        Recogniser.add_class = added
    out = {"experiment": "gesture-lead-curve", "test_seed": None, "validation_seed": int(args.seed),
           "model_dir": str(args.model_dir), "gestures": int(args.gestures), "shape_videos": int(args.shape_videos),
           "quick": bool(args.quick),
           "adding": "1:-:sum (the app's way)", "curve": rows, "seconds": time.perf_counter() - t0,
           "load_average_before": before["load_average"], "load_average_after": machine()["load_average"],
           "revision": revision()}
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
