"""The batch filter over byte codes, refined exactly: the same lists as the float32 filter, fewer operations.

:mod:`.exact_filter`' batch filter spends three vector operations per (query, class, dimension) term
(``C d`` terms per query: 109 000 at 2430 classes, d = 45) and sits at the vector units' limit. Here the
alpha-scaled class embeddings ``ET (d, C)`` are also kept as uint8 codes (:func:`encode_classes`: per
dimension an offset ``lo_j``, one step ``s`` for all dimensions so that code distances add up like the
real ones), each query is coded the same way, and :func:`.sad_tiles.sad_tile4` scores eight classes on
eight dimensions per instruction. The codes only *prefilter*; the answer is exact:

* with every class value inside ``[lo_j, hi_j]``, ``|x - e| = dist(x, [lo_j, hi_j]) + |clip(x) - e|``: a
  query's clipping adds the same ``K_q`` to every class, and rounding both codes moves each term by at
  most one step, so ``|exact(c) - K_q - s A(c)| <= d s`` for the code distance ``A(c)``;
* so every class among the exact p nearest has ``A(c) <= A_p + 2 d`` (``A_p`` the p-th smallest code
  distance), plus a relative slack for float32 rounding (:func:`band`);
* those classes (a few dozen of 2430) get their float32 distance by the filter's own arithmetic (``|f_j -
  e_j|`` added in ``j`` order from 0: :func:`.exact_filter.tail_distances`' operations, the same bits as
  the tiles) and the p nearest of them, ties to the lower class, are the float32 filter's list exactly.

One query alone (live video) runs the same arithmetic and selection through :func:`codes_one` (one query per
tile pass, preallocated buffers); the tests hold both equal to :func:`.exact_filter.filter_one` and to the
numpy reference :func:`..classmap.ops.filter_exact`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from .exact_filter import BOUND_SLACK, GROUP, padded_width, scale_query
from .threads import even_bounds, run_split
from .sad_tiles import CODE_QUERIES, CODE_TILE, SAD_BYTES, sad_tile1, sad_tile4
from .topk import kth_upper_bound, le_mask16, topk_insert

_EXACT = dict(nogil=True, fastmath={"nnan", "ninf", "nsz", "arcp"}, cache=True, boundscheck=False)
#: below this many classes the float32 scan is cheap already (and the codes' set-up is not)
MIN_CLASSES = 256

__all__ = ["MIN_CLASSES", "ByteCodes", "band", "codes_one", "encode_classes", "exact_distances",
           "filter_codes_batch", "one_scratch", "worth_it"]


@dataclass(frozen=True)
class ByteCodes:
    """The byte codes of alpha-scaled class embeddings: ``CT (G, 8 Cp) uint8`` (``G = ceil(d / 8)`` groups of
    eight dimensions; ``Cp`` classes padded to ``CODE_TILE``), per-dimension range ``lo, hi (d,) float32``
    and one step: ``code = clip(rint((x - lo_j) / s), 0, 255)``, ``inv_s = 1 / s``."""

    CT: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    inv_s: float
    #: ``(Cp,) float32``: each class's rounding in steps, ``R_c = sum_j |code - (e_j - lo_j) / s|`` (rounded
    #: up), less the largest: ``R_c - max R <= 0`` (0 for the padding classes)
    SUB: np.ndarray
    #: ``(C, d) float32``: ``ET`` transposed (a candidate's exact distance reads one row)
    ES: np.ndarray


def encode_classes(ET: np.ndarray) -> ByteCodes | None:
    """Byte codes of ``ET (d, C) float32`` (:func:`.exact_filter.transpose_embeddings`); None when this
    host has no ``psadbw`` vectors, there are fewer than ``MIN_CLASSES`` classes, or the embeddings are
    constant or not finite (the float32 filter then runs)."""
    d, C = ET.shape
    if SAD_BYTES == 0 or C < MIN_CLASSES or not np.all(np.isfinite(ET)):
        return None
    lo = ET.min(axis=1).astype(np.float32)
    hi = ET.max(axis=1).astype(np.float32)
    s = float(np.max(hi.astype(np.float64) - lo)) / 255.0
    if not s > 0.0:
        return None
    G = (d + 7) // 8
    Cp = CODE_TILE * ((C + CODE_TILE - 1) // CODE_TILE)
    codes = np.zeros((G * 8, Cp), np.uint8)
    v = (ET.astype(np.float64) - lo[:, None]) / s
    codes[:d, :C] = np.clip(np.rint(v), 0, 255).astype(np.uint8)
    R = np.abs(codes[:d, :C] - v).sum(axis=0) * (1 + 1e-6) + 1e-4
    SUB = np.zeros(Cp, np.float32)
    SUB[:C] = R - np.float32(R.max())
    CT = np.ascontiguousarray(codes.reshape(G, 8, Cp).transpose(0, 2, 1).reshape(G, 8 * Cp))
    return ByteCodes(CT=CT, lo=lo, hi=hi, inv_s=float(np.float32(1.0 / s)), SUB=SUB,
                     ES=np.ascontiguousarray(ET.T))


def band(d: int) -> tuple[float, float]:
    """``(width, gamma)`` of the bound in :func:`codes_range`: ``gamma`` bounds the relative float32 rounding
    of an exact distance (a sum of d terms) with a wide margin, ``width`` (steps) the float32 coding of the
    query (1e-3 step a dimension) plus one step for the bound's own arithmetic."""
    return 2e-3 * d + 1.0, 1e-4 + 4.0 * (d + 2) * 2.0 ** -24


@nb.njit(**_EXACT)
def _code_query(fs, lo, hi, inv_s, qc):
    """The codes of the scaled query ``fs (d,)`` into ``qc (8 G,) uint8``; returns ``(K, R)`` in steps: its
    clipping distance ``sum_j dist(fs_j, [lo_j, hi_j]) / s`` and its rounding ``sum_j |code_j - v_j|``
    (branch-free: the clipped value ``x`` is in range, so its code needs no lower clamp)."""
    k = np.float32(0.0)
    r = np.float32(0.0)
    for j in range(fs.shape[0]):
        x = min(max(fs[j], lo[j]), hi[j])
        k += abs(fs[j] - x)
        v = (x - lo[j]) * inv_s
        c = min(np.float32(255.0), np.rint(v))
        r += abs(c - v)
        qc[j] = np.uint8(c)
    return k * inv_s, r


@nb.njit(**_EXACT)
def _exact_top(cv, cc, k, e, p, topd, topc):
    """The p smallest of ``cv[:k]`` (classes ``cc[:k]`` ascending) into ``topd/topc``, ties to the lower class,
    offering in class order to :func:`.topk.topk_insert` only the values ``<= e`` (an upper bound of the
    p-th smallest: ``inf`` when none is known)."""
    filled = 0
    for i in range(k):
        v = cv[i]
        if v <= e and (filled < p or v < topd[p - 1]):
            filled = topk_insert(v, cc[i], filled, p, topd, topc)


@nb.njit(**_EXACT)
def exact_distances(fs, ES, cc, k, cv):
    """``cv[i] = sum_j |fs[j] - ES[cc[i], j]|`` for ``i < k``, added in ``j`` order from 0 by the filter
    tiles' operations (:func:`.exact_filter.tail_distances`: the same bits); four candidates per pass,
    so their chains of d dependent additions overlap."""
    d = fs.shape[0]
    i = 0
    while i + 4 <= k:
        e0, e1, e2, e3 = ES[cc[i]], ES[cc[i + 1]], ES[cc[i + 2]], ES[cc[i + 3]]
        s0 = s1 = s2 = s3 = np.float32(0.0)
        for j in range(d):
            f = fs[j]
            s0 += abs(f - e0[j])
            s1 += abs(f - e1[j])
            s2 += abs(f - e2[j])
            s3 += abs(f - e3[j])
        cv[i], cv[i + 1], cv[i + 2], cv[i + 3] = s0, s1, s2, s3
        i += 4
    while i < k:
        e = ES[cc[i]]
        s = np.float32(0.0)
        for j in range(d):
            s += abs(fs[j] - e[j])
        cv[i] = s
        i += 1


@nb.njit(**_EXACT)
def _under(row, C, bound, cc):
    """The classes ``c < C`` with ``row[c] <= bound`` into ``cc`` in class order; returns how many."""
    k = 0
    for c0 in range(0, C, GROUP):
        mask = le_mask16(row, c0, bound)
        if c0 + GROUP > C:
            mask &= (1 << (C - c0)) - 1                     # the +inf padding is never a class
        while mask != 0:
            cc[k] = c0 + trailing_zeros(mask)
            k += 1
            mask &= mask - 1
    return k


@nb.njit(**_EXACT)
def codes_range(F, ET, alpha, CT, lo, hi, inv_s, SUB, ES, width, gamma, p, out_cls, out_dist, band_n, q_lo, q_hi):
    """The exact filter of rows ``q_lo..q_hi`` of ``F (n, d)`` into ``out_cls/out_dist (n, p)`` through the
    byte codes, four queries per tile pass; ``p <= C``. In steps of the code, with ``A(c)`` the code
    distance, ``R_c`` the class's rounding (``R``), ``R_q`` the query's and ``K`` its clipping distance:
    ``K + A(c) - R_c - R_q <= exact(c) / s <= K + A(c) + R_c + R_q``. The tiles write
    ``L(c) = A(c) - R_c + max R`` (``>= 0``, as the selection bound needs); ``u``, the p-th smallest of the
    strided groups' minima of ``L`` (:func:`.exact_filter.select_top`'s bound; with p or more groups, of
    ``L`` itself), has p classes under it,
    each with ``exact / s <= K + u + R_max + R_q`` (``R_max = max R``): so the p nearest all have
    ``L(c) <= u + 2 R_max + 2 R_q``, widened for float32 rounding (:func:`band`). Those classes (a few
    dozen) get their float32 distances and the p nearest of them, ties to the lower class, are the answer;
    ``band_n[q]`` says how many there were."""
    d, C = ET.shape
    G = CT.shape[0]
    Cp = CT.shape[1] // 8
    Cg = ((C + GROUP - 1) // GROUP) * GROUP
    FS = np.empty((CODE_QUERIES, d), np.float32)
    QC = np.zeros((CODE_QUERIES, 8 * G), np.uint8)
    DIST = np.empty((CODE_QUERIES, max(Cp, Cg)), np.float32)
    K = np.zeros(CODE_QUERIES, np.float32)
    RQ = np.zeros(CODE_QUERIES, np.float32)
    gm = np.empty(Cg // GROUP, np.float32)
    cv = np.empty(Cg, np.float32)
    cc = np.empty(Cg, np.int64)
    r_max = -np.float64(SUB.min())
    q = q_lo
    while q < q_hi:
        m = min(CODE_QUERIES, q_hi - q)
        for t in range(m):
            scale_query(F[q + t], alpha, FS[t])
            K[t], RQ[t] = _code_query(FS[t], lo, hi, inv_s, QC[t])
        for c0 in range(0, Cp, CODE_TILE):
            sad_tile4(QC, CT, SUB, c0, DIST)
        for t in range(m):
            band_n[q + t] = _select(DIST[t], C, p, FS[t], ES, r_max, K[t], RQ[t], width, gamma, gm, cv, cc,
                                    out_dist[q + t], out_cls[q + t])
        q += m


@nb.njit(**_EXACT)
def _select(row, C, p, fs, ES, r_max, kq, rq, width, gamma, gm, cv, cc, topd, topc):
    """The p nearest classes of one query from its tiles' row ``L(c)`` (:func:`codes_range`), exactly: the
    classes under the bound get their float32 distances, the p nearest of them (ties to the lower class) go
    to ``topd/topc``. Returns how many classes were under the bound."""
    for c in range(C, row.shape[0]):
        row[c] = np.inf
    # p classes low in A - R: those under the p-th smallest of the strided groups' minima
    G16 = gm.shape[0]
    for g in range(G16):
        gm[g] = row[g]
    for i in range(1, GROUP):
        for g in range(G16):
            gm[g] = min(gm[g], row[i * G16 + g])
    if G16 > p:
        u = kth_upper_bound(gm, p - 1, BOUND_SLACK)
    else:                                           # few groups: the p-th of all the classes
        u = kth_upper_bound(row[:C], p - 1, BOUND_SLACK)
    bound = np.float32(np.float64(u) + 2.0 * r_max + 2.0 * rq + width
                       + gamma * 2.0 * (np.float64(u) + 2.0 * r_max + rq + np.float64(kq)))
    k = _under(row, C, bound, cc)
    exact_distances(fs, ES, cc, k, cv)
    _exact_top(cv, cc, k, np.float32(np.inf), p, topd, topc)
    return k


def one_scratch(codes: ByteCodes, d: int) -> tuple:
    """The buffers of :func:`codes_one` for one query of ``d`` dimensions against ``codes``:
    ``(FS (1, d) float32, QC (1, 8 G) uint8, DIST (1, W) float32, gm, cv float32, cc int64)``."""
    G, Cp = codes.CT.shape[0], codes.CT.shape[1] // 8
    Cg = padded_width(len(codes.ES))
    width = max(Cp, Cg)
    return (np.empty((1, d), np.float32), np.zeros((1, 8 * G), np.uint8), np.empty((1, width), np.float32),
            np.empty(Cg // GROUP, np.float32), np.empty(Cg, np.float32), np.empty(Cg, np.int64))


@nb.njit(**_EXACT)
def codes_one(fq, ET, alpha, CT, lo, hi, inv_s, SUB, ES, width, gamma, p, scratch, topd, topc):
    """The exact filter of one query ``fq (d,)`` through the byte codes (:func:`codes_range`'s arithmetic and
    selection, one query per tile pass: :func:`.sad_tiles.sad_tile1`) into ``topd/topc[:p]``; ``scratch``
    from :func:`one_scratch`, nothing allocated (live video). Returns ``min(p, C)``."""
    FS, QC, DIST, gm, cv, cc = scratch
    C = ET.shape[1]
    Cp = CT.shape[1] // 8
    scale_query(fq, alpha, FS[0])
    kq, rq = _code_query(FS[0], lo, hi, inv_s, QC[0])
    for c0 in range(0, Cp, CODE_TILE):
        sad_tile1(QC, CT, SUB, c0, DIST)
    _select(DIST[0], C, p, FS[0], ES, -np.float64(SUB.min()), kq, rq, width, gamma, gm, cv, cc, topd, topc)
    return min(p, C)


def filter_codes_batch(F, ET, alpha, codes: ByteCodes, p: int, out_cls, out_dist) -> float:
    """The exact filter of every row of ``F (n, d) float32`` against ``ET (d, C)`` (its byte ``codes``) into
    ``out_cls (n, p) int64`` / ``out_dist (n, p) float32``: what :func:`.exact_filter.filter_batch_t`
    gives, queries split over threads. Returns the mean number of classes refined exactly per query
    (:func:`worth_it` says when that is too many)."""
    width, gamma = band(ET.shape[0])
    band_n = np.empty(len(F), np.int64)
    run_split(codes_range, even_bounds(len(F)), F, ET, alpha, codes.CT, codes.lo, codes.hi,
              np.float32(codes.inv_s), codes.SUB, codes.ES, np.float32(width), np.float32(gamma), int(p),
              out_cls, out_dist, band_n)
    return float(band_n.mean()) if len(F) else 0.0


def worth_it(mean_band: float, C: int) -> bool:
    """Whether the codes beat the float32 scan with ``mean_band`` classes refined per query of ``C``: the
    scan costs ``C d`` terms, the codes about ``C d / 8`` plus the band's ``band d``, so past ``C / 8``
    refined classes the float32 scan is the cheaper."""
    return mean_band <= C / 8
