"""Exact orthographic ray-capsule rendering of posed hands, with a depth buffer and Lambert shading.

Each capsule (segment + radius) is intersected in closed form (a cylinder body plus two end spheres)
by the camera ray of every pixel of its 2-D bounding box; the nearest hit wins (depth buffer), its
normal is exact, and the shade is ``ambient + (1 - ambient) * max(0, n . light)``. Seen
orthographically a capsule's outline is a flat rounded bar (the projected segment grown by the
radius), so the silhouette gets a one-pixel anti-aliased edge from the 2-D distance alone.

Image coordinates: x right, y down, z toward the camera (larger z is nearer). A hand-frame point X
(mm) lands at ``offset + scale * (R @ (X - centre))`` with the y axis flipped (the hand frame has y
up). ``frame_hands`` chooses ``scale`` and ``offset`` so the hand's bounding box (forearm excluded)
fills a given fraction of the image, centred, plus a shift: a hand detector's crop.

All functions are numba-compiled and release the GIL, so blocks render in parallel threads.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .hand_model import FOREARM, HAND_CENTRE


@njit(cache=True, nogil=True)
def _transform(caps: np.ndarray, R: np.ndarray, centre: np.ndarray, scale: float, ox: float, oy: float,
               out: np.ndarray) -> None:
    """Hand-frame capsules (N, 7) -> image-frame capsules (N, 7) in pixels."""
    for i in range(caps.shape[0]):
        for e in range(2):
            x = caps[i, 3 * e] - centre[0]
            y = caps[i, 3 * e + 1] - centre[1]
            z = caps[i, 3 * e + 2] - centre[2]
            qx = R[0, 0] * x + R[0, 1] * y + R[0, 2] * z
            qy = R[1, 0] * x + R[1, 1] * y + R[1, 2] * z
            qz = R[2, 0] * x + R[2, 1] * y + R[2, 2] * z
            out[i, 3 * e] = ox + scale * qx
            out[i, 3 * e + 1] = oy - scale * qy
            out[i, 3 * e + 2] = scale * qz
        out[i, 6] = scale * caps[i, 6]


@njit(cache=True, nogil=True)
def frame_hands(caps: np.ndarray, R: np.ndarray, fill: np.ndarray, shift: np.ndarray, h: int, w: int,
                scale_out: np.ndarray, offset_out: np.ndarray) -> None:
    """Per hand i: the scale (px/mm) and offset (px) that make the bounding box of capsules (m, N, 7)
    rotated by R (m, 3, 3) — forearm excluded — span ``fill[i]`` of the image's shorter side, its
    centre at the image centre plus ``shift[i]`` (fractions of that side)."""
    side = min(h, w)
    tmp = np.empty((caps.shape[1], 7))
    for i in range(caps.shape[0]):
        _transform(caps[i], R[i], HAND_CENTRE, 1.0, 0.0, 0.0, tmp)
        x0 = y0 = 1e30
        x1 = y1 = -1e30
        for c in range(tmp.shape[0]):
            if c == FOREARM:
                continue
            r = tmp[c, 6]
            for e in range(2):
                x0 = min(x0, tmp[c, 3 * e] - r)
                x1 = max(x1, tmp[c, 3 * e] + r)
                y0 = min(y0, tmp[c, 3 * e + 1] - r)
                y1 = max(y1, tmp[c, 3 * e + 1] + r)
        s = fill[i] * side / max(x1 - x0, y1 - y0)
        scale_out[i] = s
        offset_out[i, 0] = w / 2.0 + shift[i, 0] * side - s * 0.5 * (x0 + x1)
        offset_out[i, 1] = h / 2.0 + shift[i, 1] * side - s * 0.5 * (y0 + y1)


@njit(cache=True, nogil=True, fastmath=True)
def render_into(caps: np.ndarray, light: np.ndarray, ambient: float, shade: np.ndarray, alpha: np.ndarray,
                depth: np.ndarray, edge: np.ndarray) -> None:
    """Render image-frame capsules (N, 7) into ``shade`` and ``alpha`` (h, w) float32 (both cleared
    here); ``depth`` and ``edge`` are (h, w) float64 scratch. ``light`` (3,) is a unit vector toward
    the light in image coordinates."""
    h, w = shade.shape
    depth[:] = -1e30
    edge[:] = 0.0
    shade[:] = 0.0
    alpha[:] = 0.0
    lx, ly, lz = light[0], light[1], light[2]
    diff = 1.0 - ambient
    # Front to back: later capsules skip every pixel already covered by something nearer.
    for i in np.argsort(-(np.maximum(caps[:, 2], caps[:, 5]) + caps[:, 6])):
        c = caps[i]
        r = c[6]
        xa, ya, xb, yb = c[0], c[1], c[3], c[4]
        sx, sy = xb - xa, yb - ya
        ss = sx * sx + sy * sy
        inv_ss = 0.0 if ss < 1e-12 else 1.0 / ss
        zmax = max(c[2], c[5]) + r  # nothing of this capsule is nearer than zmax
        rr = r + 0.5
        # Per-capsule constants of the exact ray test (rays from z = zo along -z).
        za, zb = c[2], c[5]
        bz = zb - za
        baba = ss + bz * bz
        r2 = r * r
        A = baba - bz * bz
        body = A > 1e-9 * max(baba, 1e-12)
        inv_a = 1.0 / A if body else 0.0
        inv_baba = 1.0 / baba if baba > 1e-12 else 0.0
        inv_r = 1.0 / r
        oaz = zmax + 1.0 - za
        y0 = max(0, int(math.floor(min(ya, yb) - rr)))
        y1 = min(h, int(math.ceil(max(ya, yb) + rr)))
        for py in range(y0, y1):
            uy = py + 0.5
            # This row meets the outline only where the segment is within rr in y: a tight x range.
            if abs(sy) > 1e-9:
                ta, tb = (uy - rr - ya) / sy, (uy + rr - ya) / sy
                t0, t1 = min(1.0, max(0.0, min(ta, tb))), min(1.0, max(0.0, max(ta, tb)))
                xs, xe = xa + t0 * sx, xa + t1 * sx
                x0 = max(0, int(math.floor(min(xs, xe) - rr)))
                x1 = min(w, int(math.ceil(max(xs, xe) + rr)))
            else:
                x0 = max(0, int(math.floor(min(xa, xb) - rr)))
                x1 = min(w, int(math.ceil(max(xa, xb) + rr)))
            for px in range(x0, x1):
                if depth[py, px] >= zmax:  # already covered by something nearer
                    continue
                ux = px + 0.5
                # 2-D distance to the projected segment: the silhouette test and its anti-aliased edge.
                t = min(1.0, max(0.0, ((ux - xa) * sx + (uy - ya) * sy) * inv_ss))
                dx, dy = ux - (xa + t * sx), uy - (ya + t * sy)
                d2 = dx * dx + dy * dy
                if d2 >= rr * rr:
                    continue
                if d2 < r2:
                    # Exact nearest hit in closed form: the ray against the infinite cylinder around the
                    # segment; inside the segment's span that is the body hit, else the end sphere on
                    # the side it fell (or, for a segment along the ray, the nearer end sphere).
                    oax, oay = ux - xa, uy - ya
                    baoa = sx * oax + sy * oay + bz * oaz
                    end = -1
                    if body:
                        B = -baba * oaz + baoa * bz
                        C = baba * (oax * oax + oay * oay + oaz * oaz) - baoa * baoa - r2 * baba
                        hh = B * B - A * C
                        if hh >= 0.0:
                            tt = (-B - math.sqrt(hh)) * inv_a
                            yy = baoa - tt * bz
                            if 0.0 < yy < baba:
                                k = yy * inv_baba
                                z = za + oaz - tt
                                if z > depth[py, px]:
                                    depth[py, px] = z
                                    nx = (oax - sx * k) * inv_r
                                    ny = (oay - sy * k) * inv_r
                                    nz = (oaz - tt - bz * k) * inv_r
                                    shade[py, px] = ambient + diff * max(0.0, nx * lx + ny * ly + nz * lz)
                                continue
                            end = 0 if yy <= 0.0 else 1
                    else:
                        end = 0 if za >= zb else 1
                    if end >= 0:
                        ex, ey, ez = (xa, ya, za) if end == 0 else (xb, yb, zb)
                        ddx, ddy = ux - ex, uy - ey
                        e2 = ddx * ddx + ddy * ddy
                        if e2 < r2:
                            nzr = math.sqrt(r2 - e2)
                            z = ez + nzr
                            if z > depth[py, px]:
                                depth[py, px] = z
                                shade[py, px] = ambient + diff * max(0.0, (ddx * lx + ddy * ly + nzr * lz) * inv_r)
                            continue
                d = math.sqrt(d2)
                cov = min(1.0, rr - d)
                if cov > edge[py, px] and depth[py, px] < -1e29:
                    edge[py, px] = cov
                    inv = 1.0 / max(d, 1e-9)  # the rim: normal in the image plane
                    shade[py, px] = ambient + diff * max(0.0, (dx * lx + dy * ly) * inv)
    for py in range(h):
        for px in range(w):
            alpha[py, px] = 1.0 if depth[py, px] > -1e29 else edge[py, px]


@njit(cache=True, nogil=True)
def render_hands(caps: np.ndarray, R: np.ndarray, scale: np.ndarray, offset: np.ndarray, light: np.ndarray,
                 ambient: np.ndarray, shade: np.ndarray, alpha: np.ndarray) -> None:
    """Render m hands: capsules (m, N, 7) in the hand frame, rotations R (m, 3, 3), ``scale`` (m,),
    ``offset`` (m, 2), ``light`` (m, 3) unit vectors, ``ambient`` (m,) into ``shade`` and ``alpha``
    (m, h, w) float32."""
    m, h, w = shade.shape
    tmp = np.empty((caps.shape[1], 7))
    depth = np.empty((h, w))
    edge = np.empty((h, w))
    for i in range(m):
        _transform(caps[i], R[i], HAND_CENTRE, scale[i], offset[i, 0], offset[i, 1], tmp)
        render_into(tmp, light[i], ambient[i], shade[i], alpha[i], depth, edge)


@njit(cache=True, nogil=True)
def composite(bg: np.ndarray, contrast: np.ndarray, shade: np.ndarray, alpha: np.ndarray, albedo: np.ndarray,
              out: np.ndarray) -> None:
    """Hands over backgrounds: ``bg`` (m, h, w, c) uint8 with its contrast scaled by ``contrast`` (m,)
    about its mean, the hand ``shade * albedo`` ((m, h, w) float32 x (m, c)) blended by ``alpha``
    (m, h, w) into ``out`` (m, h, w, c) float32 (0..255)."""
    m, h, w, ch = bg.shape
    for i in range(m):
        for k in range(ch):
            s = 0.0
            for y in range(h):
                for x in range(w):
                    s += bg[i, y, x, k]
            mu = s / (h * w)
            c = contrast[i]
            alb = albedo[i, k]
            for y in range(h):
                for x in range(w):
                    b = mu + c * (bg[i, y, x, k] - mu)
                    a = alpha[i, y, x]
                    out[i, y, x, k] = b + a * (shade[i, y, x] * alb - b)


@njit(cache=True, nogil=True)
def add_noise(img: np.ndarray, noise_bytes: np.ndarray, lut: np.ndarray, sigma: np.ndarray, out: np.ndarray) -> None:
    """``out`` (m, ...) uint8 = round(clip(img + sigma[i] * lut[noise_bytes], 0, 255)); ``img`` float32 and
    ``noise_bytes`` uint8 of ``out``'s shape, ``lut`` (256,) unit-variance normal quantiles."""
    m = img.shape[0]
    a = img.reshape(m, -1)
    nb = noise_bytes.reshape(m, -1)
    o = out.reshape(m, -1)
    for i in range(m):
        sg = sigma[i]
        for j in range(a.shape[1]):
            v = a[i, j] + sg * lut[nb[i, j]]
            o[i, j] = 0 if v < 0.0 else (255 if v > 255.0 else np.uint8(math.floor(v + 0.5)))




def render_pose(params: np.ndarray, yaw: float, pitch: float, roll: float, size: tuple[int, int], *,
                fill: float = 0.8, shift: tuple[float, float] = (0.0, 0.0),
                light: tuple[float, float, float] = (-0.35, -0.45, 0.82), ambient: float = 0.3
                ) -> tuple[np.ndarray, np.ndarray]:
    """One hand: joint angles ``params`` (21,) degrees at orientation (yaw, pitch, roll) degrees,
    framed like the data sets (bounding box = ``fill`` of the shorter side, centred + ``shift``)
    -> ``(shade, alpha)``, each ``(h, w)`` float32 (shade 0..1, to multiply by a skin colour)."""
    from .hand_model import forward_kinematics_many, rotation_matrix

    h, w = size
    caps = forward_kinematics_many(np.asarray(params, np.float64)[None])
    R = rotation_matrix(float(yaw), float(pitch), float(roll))[None]
    scale, offset = np.empty(1), np.empty((1, 2))
    frame_hands(caps, R, np.array([fill]), np.array([shift], np.float64), h, w, scale, offset)
    L = np.asarray(light, np.float64)
    shade = np.empty((1, h, w), np.float32)
    alpha = np.empty((1, h, w), np.float32)
    render_hands(caps, R, scale, offset, (L / np.linalg.norm(L))[None], np.array([ambient]), shade, alpha)
    return shade[0], alpha[0]


__all__ = ["add_noise", "composite", "frame_hands", "render_hands", "render_into", "render_pose"]
