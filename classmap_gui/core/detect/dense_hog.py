"""Dense HOG: the descriptors of every cell-aligned window of a frame from one pass over the frame.

Dalal & Triggs detect by computing a frame's block histograms once and reading every window's
descriptor from them: overlapping windows share their blocks. The recogniser's per-window HOG
(:mod:`..features.hog`, :mod:`..features.hog_ops`) differs from a crop of a frame-wide HOG in one
place only: it takes gradients with a reflect-101 border *at the window's edge*, so the window's
first and last pixel columns have ``dx = 0`` and its first and last rows ``dy = 0``. A block therefore
has 9 variants by where it sits in a window — (interior, top edge, bottom edge) x (interior, left
edge, right edge) — and a window takes its 4 x 6 edge blocks from the edge variants and the rest from
the interior one. Each variant is the interior histogram plus the change on its one or two edge
lines (<= 31 pixels), so the 9 variants cost about twice one histogram, not nine. The result equals
the per-window HOG to float rounding (tests/core/detect: < 1e-5 against the numpy back-end, within
OpenCV's fast-atan tolerance against the OpenCV back-end).

Kernels are numba (``nogil``): the per-pixel vote and per-block loops have no library equivalent that
also yields the edge variants (OpenCV's ``HOGDescriptor.compute(frame, winStride)`` shares blocks too,
but with frame-wide gradients, so its windows are *not* the recogniser's features: measured up to
0.2 apart on window-edge blocks).
"""
from __future__ import annotations

import numba as nb
import numpy as np

from ..errors import ConfigError, DataError
from ..features.hog_ops import axis_weights

_OPTS = dict(nogil=True, cache=True, boundscheck=False)
# sums in any order, no NaN/inf checks: the block arithmetic stays within float rounding of hog_numpy's GEMMs
_FAST = dict(nogil=True, cache=True, boundscheck=False, fastmath=True)


@nb.njit(**_FAST, inline="always")
def _atan2(y, x):
    """float32 atan2 within ~2 ulp, branch-free so the pixel loop vectorises (libm's atan2f is ~4x
    slower per pixel here): Cephes' atanf polynomial on [0, tan(pi/8)] after octant reduction."""
    ax, ay = abs(x), abs(y)
    mx, mn = max(ax, ay), min(ax, ay)
    t = mn / max(mx, np.float32(1e-30))                     # [0, 1]; 0 for dx = dy = 0
    big = t > np.float32(0.41421356)
    u = np.float32((t - 1.0) / (t + 1.0)) if big else t
    z = u * u
    r = (((np.float32(8.05374449538e-2) * z - np.float32(1.38776856032e-1)) * z + np.float32(1.99777106478e-1)) * z
         - np.float32(3.33329491539e-1)) * z * u + u
    if big:
        r += np.float32(np.pi / 4)
    if ay > ax:
        r = np.float32(np.pi / 2) - r
    if x < 0:
        r = np.float32(np.pi) - r
    if y < 0:
        r = -r
    return r


@nb.njit(**_FAST)
def _vote(dx, dy, scale, n_bins, lo, hi, wlo, whi, v, y, x):
    mag = np.float32(np.sqrt(dx * dx + dy * dy))
    a = _atan2(dy, dx) * scale - np.float32(0.5)
    f = np.float32(np.floor(a))
    frac = a - f
    li = int(f) + 2 * n_bins                                # f >= -n_bins - 1: no integer division
    while li >= n_bins:
        li -= n_bins
    h = li + 1
    if h == n_bins:
        h = 0
    up = mag * frac
    lo[v, y, x] = li
    hi[v, y, x] = h
    whi[v, y, x] = up
    wlo[v, y, x] = mag - up


@nb.njit(**_FAST)
def _votes(G, n_bins, signed, stride, lo, hi, wlo, whi):
    """Per pixel of grey ``G (H, W) float32`` and gradient variant v (0: as is, 1: dx = 0, 2: dy = 0):
    the two orientation bins ``lo/hi (3, H, W) int32`` and their votes ``wlo/whi (3, H, W) float32``,
    as ``hog_numpy`` (reflect-101 border, bin k centred on (k + 0.5) bin widths). Variants 1 and 2 only
    where a window edge can fall (columns / rows ``0`` and ``stride - 1`` modulo ``stride``)."""
    H, W = G.shape
    scale = np.float32(n_bins / (2 * np.pi if signed else np.pi))
    zero = np.float32(0.0)
    edge_x = np.zeros(W, np.bool_)
    for x in range(W):
        edge_x[x] = x % stride == 0 or x % stride == stride - 1
    for y in range(H):
        ym = y - 1 if y > 0 else 1
        yp = y + 1 if y < H - 1 else H - 2
        edge_y = y % stride == 0 or y % stride == stride - 1
        for x in range(W):
            xm = x - 1 if x > 0 else 1
            xp = x + 1 if x < W - 1 else W - 2
            dx = G[y, xp] - G[y, xm]
            dy = G[yp, x] - G[ym, x]
            _vote(dx, dy, scale, n_bins, lo, hi, wlo, whi, 0, y, x)
            if edge_x[x]:
                _vote(zero, dy, scale, n_bins, lo, hi, wlo, whi, 1, y, x)
            if edge_y:
                _vote(dx, zero, scale, n_bins, lo, hi, wlo, whi, 2, y, x)


@nb.njit(**_FAST, inline="always")
def _line(h, lo, hi, wlo, whi, v, y0, x0, er, ec, wb, ncb, n_bins, block, sign):
    """Add ``sign`` x the votes of variant ``v`` along one line of the block at (y0, x0): row ``er``
    (ec < 0) or column ``ec`` (er < 0), with each pixel's cell weights."""
    for k in range(block):
        t = er if er >= 0 else k
        u = ec if ec >= 0 else k
        y, x = y0 + t, x0 + u
        l, m, a, b = lo[v, y, x], hi[v, y, x], wlo[v, y, x] * sign, whi[v, y, x] * sign
        for cx in range(ncb):
            wx = wb[u, cx]
            if wx == 0:
                continue
            for cy in range(ncb):
                w = wb[t, cy] * wx
                if w == 0:
                    continue
                base = (cx * ncb + cy) * n_bins
                h[base + l] += a * w
                h[base + m] += b * w


@nb.njit(**_FAST, inline="always")
def _pixel(h, lo, hi, wlo, whi, v, y, x, t, u, wb, ncb, n_bins, sign):
    l, m, a, b = lo[v, y, x], hi[v, y, x], wlo[v, y, x] * sign, whi[v, y, x] * sign
    for cx in range(ncb):
        for cy in range(ncb):
            w = wb[t, cy] * wb[u, cx]
            base = (cx * ncb + cy) * n_bins
            h[base + l] += a * w
            h[base + m] += b * w


@nb.njit(**_FAST, inline="always")
def _normalise(src, dst, L):
    """L2-Hys as ``hog_numpy``: ``v / (|v| + 0.1 L)``, clip at 0.2, ``v / (|v| + 1e-3)``."""
    s = np.float32(0.0)
    for k in range(L):
        s += src[k] * src[k]
    inv = np.float32(1.0) / (np.float32(np.sqrt(s)) + np.float32(0.1 * L))
    s = np.float32(0.0)
    for k in range(L):
        v = min(src[k] * inv, np.float32(0.2))
        dst[k] = v
        s += v * v
    inv = np.float32(1.0) / (np.float32(np.sqrt(s)) + np.float32(1e-3))
    for k in range(L):
        dst[k] *= inv


@nb.njit(**_FAST)
def _blocks(lo, hi, wlo, whi, wb, block, stride, ncb, n_bins, out):
    """``out (9, nby, nbx, L)``: the L2-Hys block descriptors of every block position in its 9 variants
    (index ``3 * vertical + horizontal``; 0 interior, 1 first line is a window edge, 2 last line is).

    Separable, as ``hog_numpy``'s two GEMMs: a row pass sums each pixel row over the block's columns
    (x weights), a column pass sums those over the block's rows (y weights). A variant is the interior
    histogram plus its edge lines' change (dx = 0 on an edge column, dy = 0 on an edge row) and, where
    two edge lines cross, the corner pixel's (no vote at all)."""
    H = lo.shape[1]
    nby, nbx, L = out.shape[1], out.shape[2], out.shape[3]
    CB = ncb * n_bins
    R = np.zeros((H, nbx, CB), np.float32)                  # row pass: (y, block column, cx * bins + bin)
    for y in range(H):
        for bx in range(nbx):
            x0 = bx * stride
            r = R[y, bx]
            for u in range(block):
                l, m, a, b = lo[0, y, x0 + u], hi[0, y, x0 + u], wlo[0, y, x0 + u], whi[0, y, x0 + u]
                for cx in range(ncb):
                    w = wb[u, cx]
                    if w != 0:
                        r[cx * n_bins + l] += a * w
                        r[cx * n_bins + m] += b * w
    base = np.empty(L, np.float32)
    lines = np.empty((4, L), np.float32)                    # change on the top, bottom, left, right line
    h = np.empty(L, np.float32)
    one, minus = np.float32(1.0), np.float32(-1.0)
    for by in range(nby):
        y0 = by * stride
        for bx in range(nbx):
            x0 = bx * stride
            base[:] = 0
            for t in range(block):
                r = R[y0 + t, bx]
                for cy in range(ncb):
                    w = wb[t, cy]
                    if w == 0:
                        continue
                    for cx in range(ncb):
                        o = (cx * ncb + cy) * n_bins
                        for k in range(n_bins):
                            base[o + k] += w * r[cx * n_bins + k]
            lines[:] = 0
            for e in range(2):
                er = 0 if e == 0 else block - 1
                _line(lines[e], lo, hi, wlo, whi, 0, y0, x0, er, -1, wb, ncb, n_bins, block, minus)
                _line(lines[e], lo, hi, wlo, whi, 2, y0, x0, er, -1, wb, ncb, n_bins, block, one)
                _line(lines[2 + e], lo, hi, wlo, whi, 0, y0, x0, -1, er, wb, ncb, n_bins, block, minus)
                _line(lines[2 + e], lo, hi, wlo, whi, 1, y0, x0, -1, er, wb, ncb, n_bins, block, one)
            for vt in range(3):
                for vh in range(3):
                    h[:] = base
                    if vt:
                        h += lines[vt - 1]
                    if vh:
                        h += lines[1 + vh]
                    if vt and vh:   # the corner: the lines replaced its vote twice, it has none
                        t = 0 if vt == 1 else block - 1
                        u = 0 if vh == 1 else block - 1
                        _pixel(h, lo, hi, wlo, whi, 1, y0 + t, x0 + u, t, u, wb, ncb, n_bins, minus)
                        _pixel(h, lo, hi, wlo, whi, 2, y0 + t, x0 + u, t, u, wb, ncb, n_bins, minus)
                        _pixel(h, lo, hi, wlo, whi, 0, y0 + t, x0 + u, t, u, wb, ncb, n_bins, one)
                    _normalise(h, out[vt * 3 + vh, by, bx], L)


@nb.njit(**_OPTS)
def _gather(B, nwy, nwx, out, row0):
    """Window descriptors into ``out[row0:row0 + nwy * nwx]`` (windows row-major), blocks column-major
    as OpenCV orders them, each block from the variant its place in the window calls for."""
    nby, nbx, L = B.shape[1], B.shape[2], B.shape[3]
    bwy, bwx = nby - nwy + 1, nbx - nwx + 1                   # blocks per window along y, x
    r = row0
    for wy in range(nwy):
        for wx in range(nwx):
            for j in range(bwx):
                vh = 1 if j == 0 else (2 if j == bwx - 1 else 0)
                for i in range(bwy):
                    vt = 1 if i == 0 else (2 if i == bwy - 1 else 0)
                    src = B[vt * 3 + vh, wy + i, wx + j]
                    dst = (j * bwy + i) * L
                    out[r, dst:dst + L] = src
            r += 1


#: the HOG settings a window descriptor depends on (what the cascade's finder saves and rebuilds)
HOG_SETTINGS = ("cell_size", "block_size", "block_stride", "n_bins", "signed")


def is_hog(features) -> bool:
    """Whether ``features`` is a HOG feature map dense window features can reproduce (it has its settings)."""
    return all(hasattr(features, a) for a in HOG_SETTINGS)


class DenseHOG:
    """Every cell-aligned window's HOG descriptor of one grey frame, as the given ``HOGFeatures`` computes
    it for that window alone.

    ``hog``: a fitted :class:`~..features.hog.HOGFeatures` (its ``image_size_`` is the window). Windows
    step by one cell (``block_stride`` must equal ``cell_size``; the window must be a whole number of
    block strides, as 64 x 64 with 16-pixel blocks at stride 8 is).
    """

    def __init__(self, hog):
        if not is_hog(hog):
            raise ConfigError(f"dense window features need HOG features, not {type(hog).__name__}")
        size = getattr(hog, "image_size_", None)
        if size is None:
            raise ConfigError("dense window features need fitted HOG features (their window size)")
        self.cell, self.block, self.stride = int(hog.cell_size), int(hog.block_size), int(hog.block_stride)
        self.n_bins, self.signed = int(hog.n_bins), bool(hog.signed)
        self.win_h, self.win_w = int(size[0]), int(size[1])
        if self.stride != self.cell:
            raise ConfigError(f"dense window features need the HOG block stride ({self.stride}) to equal the cell "
                              f"size ({self.cell}), so windows one cell apart share their blocks")
        top, left, wh, ww = hog.window(self.win_h, self.win_w)
        if (wh, ww) != (self.win_h, self.win_w):
            raise ConfigError(f"dense window features need a window that HOG covers whole ({self.win_h}x{self.win_w} "
                              f"is cropped to {wh}x{ww}); use a window of block + k * stride pixels")
        self.ncb = self.block // self.cell
        self.block_len = self.ncb * self.ncb * self.n_bins
        self.blocks_y = (self.win_h - self.block) // self.stride + 1
        self.blocks_x = (self.win_w - self.block) // self.stride + 1
        if self.blocks_y < 2 or self.blocks_x < 2:
            raise ConfigError("dense window features need windows of at least 2 x 2 blocks")
        self.n_features = self.blocks_y * self.blocks_x * self.block_len
        self._wb = np.ascontiguousarray(axis_weights(self.block, self.block, self.stride, self.cell))

    def grid(self, h: int, w: int) -> tuple[int, int]:
        """(rows, columns) of windows in an ``h x w`` frame (0 when the window does not fit)."""
        if h < self.win_h or w < self.win_w:
            return 0, 0
        return (h - self.win_h) // self.stride + 1, (w - self.win_w) // self.stride + 1

    def block_descriptors(self, grey: np.ndarray) -> np.ndarray:
        """``(9, nby, nbx, L) float32``: every block position's descriptor in its 9 window-edge variants."""
        G = np.ascontiguousarray(grey, np.float32)
        if G.ndim != 2 or min(G.shape) < 2:
            raise DataError(f"dense HOG needs one grey image (h, w), got shape {np.shape(grey)}")
        H, W = G.shape
        lo = np.empty((3, H, W), np.int32)
        hi = np.empty((3, H, W), np.int32)
        wlo = np.empty((3, H, W), np.float32)
        whi = np.empty((3, H, W), np.float32)
        _votes(G, self.n_bins, self.signed, self.stride, lo, hi, wlo, whi)
        nby, nbx = (H - self.block) // self.stride + 1, (W - self.block) // self.stride + 1
        out = np.empty((9, nby, nbx, self.block_len), np.float32)
        _blocks(lo, hi, wlo, whi, self._wb, self.block, self.stride, self.ncb, self.n_bins, out)
        return out

    def window_features(self, grey: np.ndarray, out: np.ndarray | None = None, row0: int = 0) -> np.ndarray:
        """HOG of every window of ``grey (h, w) uint8`` at a stride of one cell: ``(rows * cols, D) float32``,
        windows row-major (window (r, c) has its top-left pixel at ``(r * cell, c * cell)``). With ``out``
        the rows are written to ``out[row0:...]`` and ``out`` is returned."""
        rows, cols = self.grid(*np.shape(grey)[:2])
        if out is None:
            out = np.empty((rows * cols, self.n_features), np.float32)
            row0 = 0
        if rows * cols == 0:
            return out
        crop_h = self.block + (rows + self.blocks_y - 2) * self.stride
        crop_w = self.block + (cols + self.blocks_x - 2) * self.stride
        B = self.block_descriptors(np.asarray(grey)[:crop_h, :crop_w])
        _gather(B, rows, cols, out, row0)
        return out


__all__ = ["DenseHOG", "HOG_SETTINGS", "is_hog"]
