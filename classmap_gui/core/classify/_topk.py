"""The running top-k selection shared by the compiled filter kernels (numba, ``nogil``).

A filter keeps the ``k`` smallest of a stream of ``(value, item)`` pairs in two caller-owned buffers
sorted ascending. With ``k`` of a few dozen and most values rejected by one compare against the
current k-th, insertion into a sorted array beats a heap or a final ``argpartition`` and allocates
nothing, which is what a per-query kernel needs.
"""
from __future__ import annotations

import numba as nb
import numpy as np

_OPTS = dict(nogil=True, fastmath=True, cache=True, boundscheck=False)


@nb.njit(**_OPTS)
def topk_insert(value, item, filled, k, topd, topc):
    """Insert ``(value, item)`` into the ascending list ``topd[:filled]`` / ``topc[:filled]`` capped at ``k``.

    ``topd (>= k,)`` values (any numeric dtype) and ``topc (>= k,)`` items (int64) are the caller's
    buffers; ``filled`` is how many are valid. A full list drops its largest entry; a value not
    below the current k-th is rejected (ties keep the earlier item first, so a scan in item order
    ranks equal values by item). Returns the new fill count (``min(filled + 1, k)``, or ``filled``
    when rejected). Hot loops may test ``value < topd[k - 1]`` themselves first and skip the call.
    """
    if filled == k:
        if not value < topd[k - 1]:
            return filled
        pos = k - 1
    else:
        pos = filled
        filled += 1
    while pos > 0 and topd[pos - 1] > value:
        topd[pos] = topd[pos - 1]
        topc[pos] = topc[pos - 1]
        pos -= 1
    topd[pos] = value
    topc[pos] = item
    return filled


@nb.njit(**_OPTS)
def topk_insert_lex(value, item, filled, k, topd, topc):
    """:func:`topk_insert` for items offered in any order: the list is ordered by ``(value, item)``, so
    an equal value ranks by the lower item whatever came first. Offering every item once, in any
    order, leaves the same list as offering them in item order to :func:`topk_insert`."""
    if filled == k:
        w = topd[k - 1]
        if not (value < w or (value == w and item < topc[k - 1])):
            return filled
        pos = k - 1
    else:
        pos = filled
        filled += 1
    while pos > 0 and (topd[pos - 1] > value or (topd[pos - 1] == value and topc[pos - 1] > item)):
        topd[pos] = topd[pos - 1]
        topc[pos] = topc[pos - 1]
        pos -= 1
    topd[pos] = value
    topc[pos] = item
    return filled


@nb.njit(**_OPTS)
def kth_smallest_nonneg(a, k):
    """The ``k``-th smallest (0-based) of ``a``, a float32 array of values >= +0.0 (no NaN), without
    reordering it: a binary search over the bit patterns (non-negative float32 values order as their
    int32 bits), each step one branch-free count over ``a``. 31 vectorised passes over a few hundred
    values beat a quickselect, whose data-dependent branches mispredict about half the time."""
    bits = a.view(np.int32)
    lo = np.int32(0)
    hi = np.int32(0x7F800000)                               # +inf: every value is at most this
    while lo < hi:
        mid = np.int32(lo + (hi - lo) // 2)
        cnt = 0
        for i in range(bits.shape[0]):
            cnt += bits[i] <= mid
        if cnt >= k + 1:
            hi = mid
        else:
            lo = np.int32(mid + 1)
    if hi == 0:
        return np.float32(0.0)                              # the k-th is a zero (+0.0 or -0.0 alike)
    for i in range(bits.shape[0]):
        if bits[i] == hi:
            return a[i]
    return a[0]                                             # unreachable: hi is the bits of a value of a
