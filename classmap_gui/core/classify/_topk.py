"""The running top-k selection shared by the compiled filter kernels (numba, ``nogil``).

A filter keeps the ``k`` smallest of a stream of ``(value, item)`` pairs in two caller-owned buffers
sorted ascending. With ``k`` of a few dozen and most values rejected by one compare against the
current k-th, insertion into a sorted array beats a heap or a final ``argpartition`` and allocates
nothing, which is what a per-query kernel needs.
"""
from __future__ import annotations

import numba as nb

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
def kth_smallest(a, n, k):
    """The ``k``-th smallest (0-based) of ``a[:n]``, reordering ``a[:n]`` in place (quickselect,
    median-of-three pivots; allocates nothing). The value does not depend on the order taken."""
    lo = 0
    hi = n - 1
    while hi > lo:
        mid = (lo + hi) // 2
        x, y, z = a[lo], a[mid], a[hi]
        pivot = max(min(x, y), min(max(x, y), z))
        i = lo
        j = hi
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                t = a[i]
                a[i] = a[j]
                a[j] = t
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return a[k]
    return a[k]
