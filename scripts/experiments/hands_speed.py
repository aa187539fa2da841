"""Generation speed of `hand-pose` at 64x64: images per second (wall) and CPU time per image.

Warms up first (numba's compiled kernels, the thumb inverse kinematics, the background tiles), then
generates 10 images of each of the 2430 classes with one thread and with all cores. Report the load
with the figure: the machine is shared.

    PYTHONPATH=. .venv/bin/python scripts/experiments/hands_speed.py [--style camera]
"""
from __future__ import annotations

import argparse
import json
import os
import time

from classmap_gui.core.data.hand_pose import generate_hand_pose


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--style", default="clean")
    ap.add_argument("--per-class", type=int, default=10)
    ap.add_argument("--shapes", type=int, help="the first N shapes (default all 81: a smoke run uses a few)")
    ap.add_argument("--orientations", type=int, help="N of the 30 orientations (default all)")
    a = ap.parse_args()
    generate_hand_pose(shapes=3, orientations=3, images_per_class=30, style=a.style)  # warm-up
    out = {"style": a.style, "size": "64x64"}
    for jobs in (1, -1):
        load0 = os.getloadavg()[0]
        c0, t0 = time.process_time(), time.perf_counter()
        ims = generate_hand_pose(images_per_class=a.per_class, style=a.style, n_jobs=jobs, shapes=a.shapes,
                                 orientations=a.orientations)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        out[f"n_jobs={jobs}"] = {"images": len(ims), "seconds": round(wall, 2),
                                 "generation_images_per_second": round(len(ims) / wall),
                                 "cpu_us_per_image": round(cpu / len(ims) * 1e6, 1),
                                 "load_before": round(load0, 2), "load_after": round(os.getloadavg()[0], 2)}
    out["cores"] = os.cpu_count()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
