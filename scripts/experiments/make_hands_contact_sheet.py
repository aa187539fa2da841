"""Draw docs/hands-contact-sheet.png (every hand-pose shape at three orientations, labelled) and
docs/hands-samples.png (data-set images as a model sees them: clean and camera style, 64x64 grey).

Each shape is rendered exactly as the generator poses it (no jitter), on a plain background with a
fixed light, at three of the 30 grid orientations: palm forward; turned 60 degrees right; fingers
30 degrees toward the camera and leaning 20 degrees right. Regenerate after changing the hand
model or the shapes:

    PYTHONPATH=. .venv/bin/python scripts/experiments/make_hands_contact_sheet.py [sheet.png [samples.png]]
"""
from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np

from classmap_gui.core.data.hand_pose import generate_hand_pose
from classmap_gui.core.data.hand_render import render_pose
from classmap_gui.core.data.hand_shapes import SHAPE_NAMES, all_poses, shape_code

ORIENTATIONS = ((0, 0, 20), (60, 0, 20), (0, 30, -20))
TILE, LABEL, PER_ROW = 84, 16, 6  # shapes per row (each three tiles wide)
SKIN = np.array([214, 160, 122], np.float32)
BACK = np.array([70, 74, 82], np.float32)


def sheet() -> np.ndarray:
    poses = all_poses()
    cells = []
    for i, name in enumerate(SHAPE_NAMES):
        tiles = []
        for yaw, pitch, roll in ORIENTATIONS:
            shade, alpha = render_pose(poses[i], yaw, pitch, roll, (TILE * 2, TILE * 2), fill=0.86)
            big = BACK + alpha[..., None] * (shade[..., None] * SKIN - BACK)
            tiles.append(cv2.resize(big, (TILE, TILE), interpolation=cv2.INTER_AREA))  # 2x supersampled
        cell = np.full((TILE + LABEL, 3 * TILE + 6, 3), 255, np.float32)
        cell[LABEL:, 2:2 + 3 * TILE] = np.hstack(tiles)
        cell = np.clip(np.rint(cell), 0, 255).astype(np.uint8)     # OpenCV 5 draws text on 8-bit images only
        cv2.putText(cell, f"{name}  {shape_code(name)}", (4, 12), cv2.FONT_HERSHEY_DUPLEX, 0.42, (0, 0, 0), 1,
                    cv2.LINE_AA)
        cells.append(cell)
    while len(cells) % PER_ROW:
        cells.append(np.full_like(cells[0], 255))
    rows = [np.hstack(cells[r:r + PER_ROW]) for r in range(0, len(cells), PER_ROW)]
    return np.clip(np.vstack(rows), 0, 255).astype(np.uint8)


def samples(shapes: str = "5,V,L,A,C,O,Y,ILY,S,B,D,H", seed: int = 3) -> np.ndarray:
    """Two rows of data-set images, one image per shape at spread orientations: clean above camera,
    each 64x64 grey shown at 2x (nearest neighbour, so the pixels a model sees stay visible)."""
    rows = []
    for style in ("clean", "camera"):
        ims = generate_hand_pose(shapes=shapes, orientations=2, images_per_class=1, size=64, style=style, seed=seed)
        rows.append(np.hstack(list(ims.images[::2])))
        rows.append(np.full((4, rows[-1].shape[1]), 255, np.uint8))
    return cv2.resize(np.vstack(rows[:-1]), None, fx=2, fy=2, interpolation=cv2.INTER_NEAREST)


if __name__ == "__main__":
    here = Path(__file__).resolve().parents[2] / "docs"
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else here / "hands-contact-sheet.png"
    cv2.imwrite(str(out), cv2.cvtColor(sheet(), cv2.COLOR_RGB2BGR))
    out2 = Path(sys.argv[2]) if len(sys.argv) > 2 else here / "hands-samples.png"
    cv2.imwrite(str(out2), samples())
    print(out, out2)
