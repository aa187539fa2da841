"""Rendered takes of hand shapes that are not among the hand model's 81: ``bench add-gesture``'s recordings and tests.

A *gesture* is a finger-state code (:mod:`..core.data.hand_shapes`' notation) that no one of the 81 shapes has,
turned into joint angles by the same solver and drawn by the same renderer as the model's training images
(:func:`..core.data.hand_scene.paste_hand`). A *take* is what a person records: ``seconds`` of video at ``fps``
in one place (the hand's box wanders a little), one light, one skin, one cluttered background, the hand's
orientation drifting about a base orientation by up to ``drift`` degrees and its joints by a small tremor. A take's
look is drawn from a :class:`..core.data.hand_style.HandStyle`: the ``clean`` style's skins, lights and scenes
(the recording and the fresh takes), or the ``camera`` style's (other skins, low light, room scenes, a softer lens,
more noise and JPEG: never trained on). Everything is drawn from the take's seed.
"""
from __future__ import annotations

import numpy as np

from ..core.data.hand_shapes import SHAPE_CODES, code_pose

#: the new gestures: (name, finger-state code), none of them a code of the 81 shapes
GESTURES: tuple[tuple[str, str], ...] = (
    ("middle-up", "FEFF/-/out"), ("three-and-little", "EEFE/s/out"), ("index-ring", "EFEF/s/over"),
    ("curved-two-open-two", "CCEE/s/out"), ("hooks-between", "HEHE/s/out"), ("index-little-palm", "EFFE/s/palm"),
)
assert not {c for _, c in GESTURES} & {c for _, c in SHAPE_CODES}
#: the orientation every gesture is recorded and tested about: (yaw, pitch, roll) degrees, palm to the camera
BASE_ORIENTATION = (0.0, -15.0, 10.0)


def gesture_pose(code: str) -> np.ndarray:
    """``(21,)`` float64 joint angles of a gesture's code."""
    return code_pose(code)


def take_frames(params: np.ndarray, seed: int, *, style: str = "clean", size=(240, 320), seconds: float = 5.0,
                fps: float = 15.0, drift: float = 15.0, base=BASE_ORIENTATION):
    """The frames of one take: a list of ``(h, w, 3)`` uint8 RGB images of the hand with joint angles ``params``
    (module docstring), and the hand's true box ``(x, y, side)`` of each."""
    import cv2

    from ..core.data.clutter import STYLE_FAMILIES
    from ..core.data.hand_model import LIMITS
    from ..core.data.hand_scene import clutter_scene, paste_hand
    from ..core.data.hand_style import STYLES, draw

    st = STYLES[style]
    rng = np.random.default_rng([int(seed), 4801])
    h, w = size
    short = min(h, w)
    scene = clutter_scene(rng, h, w, STYLE_FAMILIES[style])
    side = short * rng.uniform(0.42, 0.56)
    cx, cy = rng.uniform(side / 2, w - side / 2), rng.uniform(side / 2, h - side / 2)
    skin = np.asarray(st.skins[int(rng.integers(len(st.skins)))], np.float64) * rng.uniform(0.93, 1.07)
    light = st.draw_lights(rng, 1)[0]
    light = (light[0], light[1], abs(light[2]))
    ambient = float(draw(rng, st.ambient, 1)[0])
    blur, noise = float(draw(rng, st.blur, 1)[0]), float(draw(rng, st.noise, 1)[0])
    jpeg = None if st.jpeg_quality is None else int(draw(rng, st.jpeg_quality, 1, integers=True)[0])
    held = np.clip(params + rng.uniform(-st.joint_jitter, st.joint_jitter, len(params)), LIMITS[:, 0], LIMITS[:, 1])
    phase = rng.uniform(0, 2 * np.pi, 6)
    n = max(1, int(round(seconds * fps)))
    frames, boxes = [], []
    for f in range(n):
        u = f / n
        ang = np.asarray(base) + drift * np.sin(2 * np.pi * np.array([0.7, 0.5, 0.9]) * u + phase[:3])
        tremor = np.clip(held + 1.5 * np.sin(2 * np.pi * 1.3 * u + phase[3]), LIMITS[:, 0], LIMITS[:, 1])
        x = cx + 0.04 * short * np.sin(2 * np.pi * 0.6 * u + phase[4]) - side / 2
        y = cy + 0.04 * short * np.sin(2 * np.pi * 0.8 * u + phase[5]) - side / 2
        img = paste_hand(scene, tremor, tuple(ang), (x, y, side), skin=tuple(skin), light=light, ambient=ambient)
        if blur >= 0.3:
            img = cv2.GaussianBlur(img, (0, 0), blur)
        img = np.clip(np.rint(img + rng.normal(0, noise, img.shape)), 0, 255).astype(np.uint8)
        if jpeg is not None:
            ok, buf = cv2.imencode(".jpg", img[..., ::-1], [cv2.IMWRITE_JPEG_QUALITY, jpeg])
            img = cv2.imdecode(buf, cv2.IMREAD_COLOR)[..., ::-1].copy()
        frames.append(img)
        boxes.append((float(x), float(y), float(side)))
    return frames, boxes


__all__ = ["BASE_ORIENTATION", "GESTURES", "gesture_pose", "take_frames"]
