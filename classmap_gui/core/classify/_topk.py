"""The one compiled top-k insertion every filter scan uses (exact ClassMap filter, the IVF index).

A scan over C candidates keeps the k smallest distances seen so far in two small sorted buffers;
inserting by shifting is cheaper than a heap for the k (≤ a few hundred) ClassMap uses, and keeps
ties in arrival order, so equal distances rank the lower class index first — the order the
single-query path, the batch path and the exported ``predict.py`` all rely on.
"""
from __future__ import annotations

import numba as nb

_OPTS = dict(nogil=True, fastmath=True, cache=True, boundscheck=False)


@nb.njit(**_OPTS)
def push(s, c, filled, k, topd, topc):
    """Insert distance ``s`` of candidate ``c`` into ``topd/topc[:filled]`` (ascending), capped at ``k``.

    ``topd (>=k,) float32`` and ``topc (>=k,) int64`` are the caller's buffers; ``filled`` how many
    entries they hold. When the buffers are full (``filled == k``) the caller must already know that
    ``s < topd[k - 1]`` (checking that bound first is what makes a scan cheap); the last entry is
    then dropped. A new entry goes after existing equal distances. Returns the new fill count.
    """
    if filled == k:
        pos = k - 1
    else:
        pos = filled
        filled += 1
    while pos > 0 and topd[pos - 1] > s:
        topd[pos] = topd[pos - 1]
        topc[pos] = topc[pos - 1]
        pos -= 1
    topd[pos] = s
    topc[pos] = c
    return filled
