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
