"""An articulated procedural right hand: capsule geometry, joints, joint limits, forward kinematics.

Hand frame (millimetres): origin at the wrist centre, +y along the fingers, +x toward the thumb,
+z out of the palm (a right hand seen palm-forward by a camera on +z has its thumb on the image's
right). Segment lengths, radii and joint ranges follow ``shared/hands.md`` (typical adult); no model
file is used.

Pose vector: ``N_PARAMS = 21`` float64 joint angles in degrees, ``PARAM_NAMES`` order —
per finger (index, middle, ring, little) MCP flexion, MCP abduction (+ toward the thumb), PIP, DIP;
then the thumb's CMC radial abduction (swings the thumb out in the palm plane), CMC palmar abduction
(lifts it in front of the palm), CMC opposition roll (turns its flexion plane from the palm plane,
0, to the palm's normal, 90), MCP and IP flexion. ``LIMITS`` (21, 2) holds each range.

Geometry: ``N_CAPSULES = 23`` capsules, each ``(x0, y0, z0, x1, y1, z1, r)``: forearm stub, heel of
the palm, 4 metacarpals, the knuckle line, the thenar pad, 3 thumb segments, 4 x 3 phalanges
(``CAPSULE_PARTS`` names them). ``forward_kinematics(params)`` gives them; it is compiled with numba
(``fk_into``) so the generator can pose hundreds of hands per millisecond.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

FINGERS = ("index", "middle", "ring", "little")
PARAM_NAMES: tuple[str, ...] = (
    *(f"{f}_{j}" for f in FINGERS for j in ("mcp_flex", "mcp_abd", "pip", "dip")),
    "thumb_cmc_radial", "thumb_cmc_palmar", "thumb_cmc_roll", "thumb_mcp", "thumb_ip")
N_PARAMS = len(PARAM_NAMES)

# Ranges in degrees (hands.md). Abduction of the fingers +-20; the thumb's CMC: radial abduction up to
# 60 (and 15 of flexion across the palm, negative), palmar abduction up to 45 (+ 5 of slack for the
# folded shapes), opposition roll 0..90; MCP -10..55, IP -15..80.
_FINGER_LIMITS = ((-45.0, 90.0), (-20.0, 20.0), (0.0, 100.0), (0.0, 80.0))
LIMITS = np.array([*(_FINGER_LIMITS * 4), (-15.0, 60.0), (0.0, 50.0), (0.0, 90.0), (-10.0, 55.0), (-15.0, 80.0)])
assert LIMITS.shape == (N_PARAMS, 2)

# Finger bases (MCP joints) across the top of the palm, phalanx lengths and radii (proximal, middle, distal).
MCP = np.array([[30.0, 93.0, 0.0], [9.0, 96.0, 0.0], [-11.0, 92.0, 0.0], [-29.0, 84.0, 0.0]])
PHALANX = np.array([[40.0, 24.0, 20.0], [45.0, 27.0, 21.0], [42.0, 25.0, 20.0], [33.0, 19.0, 18.0]])
FINGER_R = np.array([[9.5, 8.8, 8.0], [9.8, 9.0, 8.2], [9.2, 8.5, 7.8], [8.2, 7.6, 7.0]])
FAN = np.array([4.0, 0.0, -4.0, -9.0])  # natural splay (deg, + toward the thumb) added to the abduction
# Thumb: CMC at the radial side of the wrist; metacarpal / proximal / distal lengths and radii.
THUMB_CMC = np.array([20.0, 18.0, 6.0])
THUMB_LEN = np.array([46.0, 33.0, 27.0])
THUMB_R = np.array([12.5, 10.5, 9.0])
THUMB_BASE_ANGLE = 28.0  # rest direction of the metacarpal, degrees from +y toward +x, in the palm plane
HAND_CENTRE = np.array([0.0, 92.0, 0.0])  # what global rotations turn about

CAPSULE_PARTS: tuple[str, ...] = (
    "forearm", "heel", *(f"{f}_metacarpal" for f in FINGERS), "knuckles", "thenar",
    "thumb_metacarpal", "thumb_proximal", "thumb_distal",
    *(f"{f}_{p}" for f in FINGERS for p in ("proximal", "middle", "distal")))
N_CAPSULES = len(CAPSULE_PARTS)
FOREARM = 0  # capsule index of the forearm stub (excluded from the hand's bounding box)


def _static_capsules() -> np.ndarray:
    """The capsules that do not move with the joints: ``(8, 7)`` float64 (forearm .. thenar)."""
    c = np.zeros((8, 7))
    c[0] = (0.0, 4.0, -3.0, 0.0, -320.0, -6.0, 25.0)           # forearm stub, runs out of the crop
    c[1] = (-17.0, 26.0, 0.0, 14.0, 26.0, 0.0, 17.0)           # heel of the palm
    for i in range(4):                                         # metacarpals: wrist -> MCP
        x, y, _ = MCP[i]
        c[2 + i] = (x * 0.45, 20.0, 0.0, x, y - 4.0, 0.0, 12.0)
    c[6] = (MCP[0, 0] - 2.0, MCP[0, 1] - 6.0, 0.5, MCP[3, 0] + 2.0, MCP[3, 1] - 6.0, 0.5, 11.5)  # knuckle line
    c[7] = (12.0, 24.0, 4.0, 24.0, 50.0, 3.0, 13.5)           # thenar pad (the thumb's muscle)
    return c


STATIC = _static_capsules()


@njit(cache=True, nogil=True)
def _rot(axis: int, deg: float) -> np.ndarray:
    """3x3 rotation by ``deg`` about x (0), y (1) or z (2)."""
    a = math.radians(deg)
    c, s = math.cos(a), math.sin(a)
    m = np.eye(3)
    if axis == 0:
        m[1, 1] = c; m[1, 2] = -s; m[2, 1] = s; m[2, 2] = c  # noqa: E702
    elif axis == 1:
        m[0, 0] = c; m[0, 2] = s; m[2, 0] = -s; m[2, 2] = c  # noqa: E702
    else:
        m[0, 0] = c; m[0, 1] = -s; m[1, 0] = s; m[1, 1] = c  # noqa: E702
    return m


@njit(cache=True, nogil=True)
def fk_into(p: np.ndarray, static: np.ndarray, mcp: np.ndarray, phal: np.ndarray, fr: np.ndarray, fan: np.ndarray,
            cmc: np.ndarray, tlen: np.ndarray, tr: np.ndarray, base_angle: float, out: np.ndarray) -> None:
    """Forward kinematics of one pose ``p`` (21,) degrees into ``out`` (23, 7) capsules (hand frame, mm)."""
    for i in range(8):
        out[i] = static[i]
    # Thumb: the metacarpal direction swings out (radial) in the palm plane and lifts (palmar) toward +z;
    # its flexion axis is the local z turned about the bone by the opposition roll (0: flexes across the
    # palm plane toward the index; 90: flexes toward the palm).
    frame = _rot(2, -(base_angle + p[16])) @ _rot(0, p[17]) @ _rot(1, p[18])
    pos = cmc.copy()
    for k in range(3):
        if k == 1:
            frame = frame @ _rot(2, p[19])
        elif k == 2:
            frame = frame @ _rot(2, p[20])
        d = frame[:, 1]
        end = pos + tlen[k] * d
        o = 8 + k
        out[o, 0:3] = pos
        out[o, 3:6] = end
        out[o, 6] = tr[k]
        pos = end
    # Fingers: abduction about the palm normal at the MCP, then flexion about the local x at each joint.
    for f in range(4):
        frame = _rot(2, -(p[4 * f + 1] + fan[f])) @ _rot(0, p[4 * f])
        pos = mcp[f].copy()
        for k in range(3):
            if k > 0:
                frame = frame @ _rot(0, p[4 * f + 1 + k])
            end = pos + phal[f, k] * frame[:, 1]
            o = 11 + 3 * f + k
            out[o, 0:3] = pos
            out[o, 3:6] = end
            out[o, 6] = fr[f, k]
            pos = end


@njit(cache=True, nogil=True)
def _fk_many(params: np.ndarray, static: np.ndarray, mcp: np.ndarray, phal: np.ndarray, fr: np.ndarray,
             fan: np.ndarray, cmc: np.ndarray, tlen: np.ndarray, tr: np.ndarray, base_angle: float,
             out: np.ndarray) -> None:
    for i in range(params.shape[0]):
        fk_into(params[i], static, mcp, phal, fr, fan, cmc, tlen, tr, base_angle, out[i])


def forward_kinematics_many(params: np.ndarray) -> np.ndarray:
    """Capsules of many poses: ``params`` (m, 21) degrees -> ``(m, 23, 7)`` float64 (hand frame, mm)."""
    params = np.ascontiguousarray(params, np.float64)
    out = np.empty((len(params), N_CAPSULES, 7))
    _fk_many(params, STATIC, MCP, PHALANX, FINGER_R, FAN, THUMB_CMC, THUMB_LEN, THUMB_R, THUMB_BASE_ANGLE, out)
    return out


def forward_kinematics(params: np.ndarray) -> np.ndarray:
    """Capsules of one pose: ``params`` (21,) degrees -> ``(23, 7)`` float64 in the hand frame (mm)."""
    out = np.empty((N_CAPSULES, 7))
    fk_into(np.asarray(params, np.float64), STATIC, MCP, PHALANX, FINGER_R, FAN, THUMB_CMC, THUMB_LEN, THUMB_R,
            THUMB_BASE_ANGLE, out)
    return out


def fingertip(caps: np.ndarray, finger: int) -> np.ndarray:
    """Centre of finger ``finger``'s tip (0 index .. 3 little, 4 thumb) from its capsules, ``(3,)``."""
    return caps[10, 3:6] if finger == 4 else caps[11 + 3 * finger + 2, 3:6]


def clip_to_limits(params: np.ndarray) -> np.ndarray:
    """``params`` (..., 21) clipped into ``LIMITS``."""
    return np.clip(params, LIMITS[:, 0], LIMITS[:, 1])


@njit(cache=True, nogil=True)
def rotation_matrix(yaw: float, pitch: float, roll: float) -> np.ndarray:
    """R = Rz(roll) @ Rx(pitch) @ Ry(yaw), degrees: yaw turns the palm toward the image's right, pitch
    tips the fingers toward the camera, roll leans them toward the image's left (hand frame, y up)."""
    return _rot(2, roll) @ _rot(0, pitch) @ _rot(1, yaw)


__all__ = ["CAPSULE_PARTS", "FINGERS", "FOREARM", "HAND_CENTRE", "LIMITS", "N_CAPSULES", "N_PARAMS", "PARAM_NAMES",
           "clip_to_limits", "fingertip", "fk_into", "forward_kinematics", "forward_kinematics_many", "rotation_matrix"]
