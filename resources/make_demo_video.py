"""Make resources/demo-glyphs.avi: the demo video the app lists as a source out of the box.

Three glyph-pose-small classes (a shape seen from one angle each) shown in turn, three seconds each,
twice over, every frame a different generated image of its class (so captures vary like a hand held
in front of a camera). 15 frames/s, 160x120 colour MJPG: about 12 s, OpenCV reads it everywhere.

    .venv/bin/python resources/make_demo_video.py
"""
from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from classmap_gui.core.data.glyph_pose import generate_glyph_pose  # noqa: E402
from classmap_gui.gui.demo import DEMO_VIDEO  # noqa: E402

FPS, SECONDS_PER_CLASS, ROUNDS = 15, 3, 2
W, H, SIDE = 160, 120, 96


def main() -> Path:
    per_class = FPS * SECONDS_PER_CLASS * ROUNDS
    ims = generate_glyph_pose(shapes=3, orientations=1, images_per_class=per_class, size=64, seed=7,
                              name="demo-video")
    out = ROOT / "resources" / DEMO_VIDEO
    vw = cv2.VideoWriter(str(out), cv2.VideoWriter_fourcc(*"MJPG"), float(FPS), (W, H))
    if not vw.isOpened():
        raise SystemExit("OpenCV cannot write MJPG here")
    tint = np.array([70, 90, 110], np.float32)  # a dim bluish room around the square
    frame_bg = np.broadcast_to(tint, (H, W, 3)).astype(np.uint8)
    for r in range(ROUNDS):
        for c in range(ims.n_classes):
            idx = np.flatnonzero(ims.labels == c)[r * FPS * SECONDS_PER_CLASS:(r + 1) * FPS * SECONDS_PER_CLASS]
            for i in idx:
                frame = frame_bg.copy()
                glyph = cv2.resize(ims.images[i], (SIDE, SIDE), interpolation=cv2.INTER_LINEAR)
                y, x = (H - SIDE) // 2, (W - SIDE) // 2
                frame[y:y + SIDE, x:x + SIDE] = glyph[..., None]
                vw.write(frame)
    vw.release()
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB): classes {', '.join(ims.class_names)}")
    return out


if __name__ == "__main__":
    main()
