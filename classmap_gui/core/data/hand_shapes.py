"""81 named hand shapes as joint angles for ``hand_model``: the 55 ASL shapes listed in ``shared/hands.md``
coded as finger states, plus 26 visibly distinct variants (crooked, contracted, slanted, offset and
combined shapes, as in the ClassMap paper's 81).

A code is ``"IMRL/spread/thumb"``: one finger state per finger (index, middle, ring, little) —
``E`` extended, ``a`` half bent at the base, ``A`` bent at the base, ``H`` hooked, ``C`` curved,
``R`` rounded to meet the thumb, ``F`` closed in a fist; spread ``s`` spread, ``t`` together,
``x`` index and middle crossed, ``-`` only one finger up (together); thumb ``side``, ``up``, ``out``,
``palm``, ``over``, ``C``, ``pinch-X`` (tip to the tip of finger X: I, M, R, P, or ``all``),
``btw-XY`` (tip between fingers X and Y), ``under`` (under the fingertips).

Thumbs that must reach a point (pinch, between, over, palm, under) are solved once per shape by a
small bounded inverse kinematics on the five thumb angles (projected Levenberg-Marquardt), so
every pose stays inside ``hand_model.LIMITS``. ``shape_pose(name)`` -> ``(21,)`` degrees.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..errors import DataError
from .hand_model import LIMITS, N_PARAMS, fingertip, forward_kinematics

# Finger states: (MCP, PIP, DIP) flexion in degrees.
FINGER_STATES = {"E": (0.0, 0.0, 0.0), "a": (45.0, 0.0, 0.0), "A": (85.0, 0.0, 0.0), "H": (10.0, 95.0, 65.0),
                 "C": (35.0, 45.0, 30.0), "R": (50.0, 65.0, 45.0), "F": (90.0, 100.0, 72.0)}
# Abduction per finger (index, middle, ring, little), + toward the thumb.
SPREADS = {"s": (18.0, 4.0, -14.0, -20.0), "t": (-3.0, 0.0, 2.0, 6.0), "-": (-3.0, 0.0, 2.0, 6.0),
           "x": (-16.0, 16.0, 2.0, 6.0)}
# Thumb poses given directly: (CMC radial, CMC palmar, CMC roll, MCP, IP).
THUMB_FIXED = {"side": (-12.0, 12.0, 15.0, 5.0, 5.0), "up": (-2.0, 20.0, 10.0, -5.0, -10.0),
               "out": (55.0, 10.0, 10.0, 0.0, 0.0), "C": (25.0, 45.0, 70.0, 12.0, 15.0)}
_FINGER_LETTER = {"I": 0, "M": 1, "R": 2, "P": 3}

SHAPE_CODES: tuple[tuple[str, str], ...] = (
    # the 56 of hands.md
    ("1", "EFFF/-/over"), ("3", "EEFF/s/out"), ("4", "EEEE/s/palm"), ("5", "EEEE/s/out"), ("6", "EEER/s/pinch-P"),
    ("7", "EERE/s/pinch-R"), ("8", "EREE/s/pinch-M"), ("open-8", "EaEE/s/out"), ("9", "REEE/s/pinch-I"),
    ("open-F", "CEEE/s/C"), ("10", "FFFF/t/up"), ("A", "FFFF/t/side"), ("S", "FFFF/t/over"), ("T", "FFFF/t/btw-IM"),
    ("N", "FFFF/t/btw-MR"), ("M", "FFFF/t/btw-RP"), ("E", "HHHH/t/under"), ("open-E", "HHHH/t/out"),
    ("spread-E", "HHHH/s/under"), ("B", "EEEE/t/palm"), ("open-B", "EEEE/t/out"), ("bent-B", "AAAA/t/palm"),
    ("flat-4", "AAAA/s/palm"), ("curved-4", "CCCC/s/palm"), ("flatspread-5", "AAAA/s/out"), ("claw-5", "CCCC/s/C"),
    ("C", "CCCC/t/C"), ("flat-C", "AAAA/t/C"), ("O", "RRRR/t/pinch-all"), ("flat-O", "AAAA/t/pinch-all"),
    ("baby-O", "RFFF/-/pinch-I"), ("D", "ERRR/t/pinch-M"), ("G", "AFFF/-/out"), ("flat-1", "AFFF/-/over"),
    ("curved-1", "CFFF/-/over"), ("X", "HFFF/-/over"), ("L", "EFFF/-/out"), ("bent-L", "HFFF/-/out"),
    ("curved-L", "CFFF/-/C"), ("H", "EEFF/t/over"), ("open-H", "EEFF/t/out"), ("flat-H", "AAFF/t/over"),
    ("curved-H", "CCFF/t/over"), ("V", "EEFF/s/over"), ("bent-V", "HHFF/s/over"), ("curved-V", "CCFF/s/over"),
    ("flat-V", "AAFF/s/over"), ("R", "EEFF/x/over"), ("K", "EaFF/-/btw-IM"), ("I", "FFFE/-/over"),
    ("Y", "FFFE/-/out"), ("ILY", "EFFE/-/out"), ("flat-ILY", "AFFA/-/out"), ("horns", "EFFE/-/over"),
    ("flat-horns", "AFFA/-/over"),
    # 26 variants (hands.md lists 55)
    ("W", "EEEF/s/over"), ("bent-3", "HHFF/s/out"), ("curved-3", "CCFF/s/out"), ("flat-3", "AAFF/s/out"),
    ("hooked-ring-little", "EEHH/s/out"), ("hooked-4", "HHHH/s/palm"), ("open-A", "FFFF/t/out"), ("bent-I", "FFFH/-/over"),
    ("crossed-4", "EEEE/x/palm"), ("crooked-ILY", "HFFH/-/out"), ("crooked-horns", "HFFH/-/over"),
    ("slanted-B", "EaAF/t/palm"), ("slanted-5", "EaAF/s/out"), ("reverse-slanted-5", "FAaE/s/out"),
    ("open-7", "EEaE/s/out"), ("open-6", "EEEa/s/out"), ("open-9", "aEEE/s/out"), ("open-R", "EEFF/x/out"),
    ("hooked-index-4", "HEEE/s/palm"), ("curved-B", "CCCC/t/palm"), ("bent-little-B", "EEEA/t/palm"),
    ("ring-little", "FFEE/s/over"), ("claw-3", "CCFF/s/C"), ("hooked-index-middle", "HHEE/s/over"), ("curved-5", "CCCC/s/out"), ("W-without-index", "FEEE/s/over"),
)
assert len(SHAPE_CODES) == 81 and len({n for n, _ in SHAPE_CODES}) == 81
SHAPE_NAMES: tuple[str, ...] = tuple(n for n, _ in SHAPE_CODES)
_CODE = dict(SHAPE_CODES)


def _finger_part(code: str) -> np.ndarray:
    """The pose with fingers set from ``code`` and the thumb at the C pose (IK start)."""
    fingers, spread, _ = code.split("/")
    p = np.zeros(N_PARAMS)
    for f, st in enumerate(fingers):
        mcp, pip, dip = FINGER_STATES[st]
        p[4 * f: 4 * f + 4] = (mcp, SPREADS[spread][f], pip, dip)
    p[16:21] = THUMB_FIXED["C"]
    return p


def _thumb_target(code: str, caps: np.ndarray) -> tuple[np.ndarray, float]:
    """Where the thumb tip should be for a reaching thumb code, and how far (mm) it may stay from it."""
    fingers, _, thumb = code.split("/")
    seg = lambda f, k: caps[11 + 3 * f + k]  # noqa: E731
    mid = lambda c: 0.5 * (c[0:3] + c[3:6])  # noqa: E731
    if thumb.startswith("pinch-"):
        who = thumb[6:]
        tips = [fingertip(caps, f) for f in (range(4) if who == "all" else [_FINGER_LETTER[who]])]
        t = np.mean(tips, axis=0)
        return t + np.array([3.0, -4.0, 4.0]), 0.0
    if thumb.startswith("btw-"):
        a, b = (_FINGER_LETTER[c] for c in thumb[4:])
        pip = 0.5 * (seg(a, 1)[0:3] + seg(b, 1)[0:3])  # PIP knuckles, the front of the fist
        return pip + np.array([0.0, -6.0, 6.0]), 0.0
    if thumb == "over":  # lying across the middle phalanges of the two most radial curled fingers
        curled = [f for f, st in enumerate(fingers) if st != "E"][:2] or [1, 2]
        t = np.mean([mid(seg(f, 1)) for f in curled], axis=0)
        return t + np.array([-4.0, 0.0, 16.0]), 0.0
    if thumb == "palm":  # folded across the palm, tip near the ring finger's base
        return np.array([-14.0, 66.0, 17.0]), 0.0
    if thumb == "under":  # under the hooked fingertips
        t = np.mean([fingertip(caps, f) for f in (0, 1)], axis=0)
        return t + np.array([0.0, -14.0, 2.0]), 0.0
    raise DataError(f"unknown thumb code {thumb!r}")


def _solve_thumb(p: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Thumb angles (5,) within LIMITS that bring its tip nearest ``target``, with a mild pull to the
    start: projected Levenberg-Marquardt on a numeric Jacobian (~1 ms per start; scipy's bounded
    least_squares took ~100x longer for the same answers)."""
    lo, hi = LIMITS[16:21, 0], LIMITS[16:21, 1]
    start = p[16:21].copy()
    q = p.copy()

    def resid(t: np.ndarray) -> np.ndarray:
        q[16:21] = t
        return np.concatenate([fingertip(forward_kinematics(q), 4) - target, 0.05 * (t - start)])

    best_t, best_c = start, np.inf
    for s0 in (start, np.array([0.0, 40.0, 80.0, 30.0, 30.0]), np.array([-10.0, 45.0, 85.0, 50.0, 50.0])):
        t = np.clip(s0, lo, hi)
        f = resid(t)
        cost, lam = float(f @ f), 1e-2
        for _ in range(40):
            J = np.empty((len(f), 5))
            for k in range(5):
                d = np.zeros(5)
                d[k] = 0.25
                J[:, k] = (resid(np.clip(t + d, lo - 1, hi + 1)) - f) / 0.25
            H, g = J.T @ J, J.T @ f
            step = np.linalg.solve(H + lam * np.diag(np.diag(H)) + 1e-9 * np.eye(5), -g)
            tn = np.clip(t + step, lo, hi)
            fn = resid(tn)
            cn = float(fn @ fn)
            if cn < cost:
                small = cost - cn < 1e-3 * cost
                t, f, cost, lam = tn, fn, cn, lam * 0.3
                if small:
                    break
            else:
                lam *= 10.0
                if lam > 1e8:
                    break
        if cost < best_c:
            best_t, best_c = t, cost
        if best_c < 50.0:  # within ~7 mm: other starts would not be seen at the images' scale
            break
    return best_t


def _pose_cached(name: str) -> tuple[float, ...]:
    return _code_pose(_CODE[name])


def code_pose(code: str) -> np.ndarray:
    """Joint angles ``(21,)`` float64 degrees of a finger-state ``code`` (the module docstring's form, e.g.
    ``"EFFE/s/palm"``): a shape need not be one of the 81 (``bench add-gesture`` renders new ones)."""
    return np.array(_code_pose(str(code)))


@lru_cache(maxsize=None)
def _code_pose(code: str) -> tuple[float, ...]:
    p = _finger_part(code)
    thumb = code.split("/")[2]
    if thumb in THUMB_FIXED:
        p[16:21] = THUMB_FIXED[thumb]
    else:
        target, _ = _thumb_target(code, forward_kinematics(p))
        p[16:21] = _solve_thumb(p, target)
    return tuple(float(v) for v in p)


def shape_pose(name: str) -> np.ndarray:
    """Joint angles of shape ``name``: ``(21,)`` float64 degrees, inside ``LIMITS``."""
    if name not in _CODE:
        raise DataError(f"unknown hand shape {name!r}; known: {', '.join(SHAPE_NAMES)}")
    return np.array(_pose_cached(name))


def shape_code(name: str) -> str:
    """The finger-state code of shape ``name`` (e.g. ``"EEFF/s/over"`` for V)."""
    return _CODE[name]


@lru_cache(maxsize=1)
def _all_poses() -> np.ndarray:
    return np.stack([shape_pose(n) for n in SHAPE_NAMES])


def all_poses() -> np.ndarray:
    """``(81, 21)`` float64 joint angles of every shape, in ``SHAPE_NAMES`` order (solved once, cached)."""
    return _all_poses().copy()


__all__ = ["FINGER_STATES", "SHAPE_CODES", "SHAPE_NAMES", "all_poses", "code_pose", "shape_code", "shape_pose"]
