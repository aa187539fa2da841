"""The window network's trunk sizes: multiply-adds and the time of one frame's pass, per width.

For each width of `network_training_window.WIDTHS` (small, base, wide), a network of that shape (random weights: the
time and the operations do not depend on the weights) is exported as the product exports it and run by
onnxruntime over a 320 x 240 frame's pyramid exactly as `core.detect.pyramid.NetworkPyramid` runs it (window
sides 0.36, 0.43, 0.52, 0.62 of the frame's height, each level padded by the context margin): milliseconds per
frame (median of interleaved rounds, the load average before and after), windows per frame, multiply-adds per
crop-equivalent and per window. Where a trained network of that width exists (`--record WIDTH=training.json`),
its last validation score is copied in: the accuracy side of the choice. No test part is read.

    PYTHONPATH=. .venv/bin/python scripts/experiments/trunk_sizes.py --out docs/bench/trunk-sizes.json \\
        --record base=classmap_gui/resources/networks/hand-window.json

Needs the training extra (PyTorch) to build the networks of the widths; nothing else here runs torch.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--frames", type=int, default=20, help="frames a round")
    ap.add_argument("--record", action="append", default=[], metavar="WIDTH=training.json")
    a = ap.parse_args()

    import torch

    from classmap_gui.core.detect.pyramid import NetworkPyramid
    from classmap_gui.core.features.network import NetworkFeatures
    from classmap_gui.network_training_window import WIDTHS, WindowNet, export_dense_onnx, multiply_adds

    torch.manual_seed(0)
    records = dict(r.split("=", 1) for r in a.record)
    frames = np.random.default_rng(0).integers(0, 256, (a.frames, 240, 320), dtype=np.uint8)
    sides = (0.36, 0.43, 0.52, 0.62)
    pyramids, out = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for w, chans in WIDTHS.items():
            path = Path(tmp) / f"{w}.onnx"
            export_dense_onnx(WindowNet(chans), path)
            pyramids[w] = NetworkPyramid(NetworkFeatures(str(path)).fit(), sides)
            pyramids[w].features(frames[0])
        load_before = os.getloadavg()[0]
        ms = {w: [] for w in WIDTHS}
        for r in range(a.rounds):
            for w in (list(WIDTHS) if r % 2 == 0 else list(WIDTHS)[::-1]):
                net = 0.0
                for f in frames:
                    pyramids[w].features(f)
                    net += pyramids[w].stage_seconds["network"]
                ms[w].append(1e3 * net / len(frames))
        load_after = os.getloadavg()[0]
    for w, chans in WIDTHS.items():
        ops = multiply_adds(chans)
        n = len(pyramids[w].boxes(240, 320))
        crop_eq = sum(sw * sh for (sw, sh), _, _ in pyramids[w]._levels) / 64 ** 2
        rec = json.loads(Path(records[w]).read_text()) if w in records else None
        out[w] = {"channels": list(chans), "multiply_adds": ops, "windows_per_frame": n,
                  "crop_equivalents_per_frame": crop_eq,
                  "trunk_multiply_adds_per_window": ops["trunk_per_crop_equivalent"] * crop_eq / n,
                  "network_ms_per_frame": {"median": float(np.median(ms[w])), "min": float(np.min(ms[w])),
                                           "max": float(np.max(ms[w])), "rounds": ms[w]},
                  "validation": (rec["validation_curve"][-1] if rec else None)}
    result = {"frame": "320x240", "sides": list(sides), "widths": out, "load_before": load_before,
              "load_after": load_after, "test_part": "none (timing of random-weight networks; validation scores "
                                                     "copied from the training records)",
              "command": "scripts/experiments/trunk_sizes.py " + " ".join(f"--record {r}" for r in a.record)}
    a.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({w: (v["network_ms_per_frame"]["median"], v["multiply_adds"]["trunk_per_crop_equivalent"])
                      for w, v in out.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
