"""The running top-k selection shared by the compiled filter kernels (numba, ``nogil``).

A filter keeps the ``k`` smallest of a stream of ``(value, item)`` pairs in two caller-owned buffers
sorted ascending. With ``k`` of a few dozen and most values rejected by one compare against the
current k-th, insertion into a sorted array beats a heap or a final ``argpartition`` and allocates
nothing, which is what a per-query kernel needs.
"""
from __future__ import annotations

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

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


@intrinsic
def _bits_to_float(typingctx, bits):
    """The float32 whose bit pattern is the int32 ``bits``."""
    if bits != types.int32:
        raise nb.errors.TypingError("_bits_to_float: bits must be int32")

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


@nb.njit(**_OPTS)
def kth_upper_bound(a, k, slack):
    """A value at least the ``k``-th smallest (0-based) of ``a`` and at most ``slack`` float32 steps
    (units in the last place) above it; ``slack = 0``: exactly the ``k``-th smallest. ``a`` float32,
    values >= +0.0, no NaN, left unordered.

    A binary search over the bit patterns (non-negative float32 values order as their int32 bits)
    between the smallest and largest value, each step one branch-free count over ``a``: a few dozen
    vectorised passes over a few hundred values beat a quickselect, whose data-dependent branches
    mispredict about half the time. A filter's selection bound needs no exact order statistic, only
    an upper bound close to it: a slack of ``2**16`` steps (0.8 %) halves the passes."""
    bits = a.view(np.int32)
    n = bits.shape[0]
    lo = bits[0]
    hi = bits[0]
    for i in range(1, n):
        lo = min(lo, bits[i])
        hi = max(hi, bits[i])
    if lo < 0:
        lo = np.int32(0)                                    # -0.0 orders with +0.0
    while hi - lo > slack:                                  # invariant: at least k + 1 values <= hi
        mid = np.int32(lo + (hi - lo) // 2)
        cnt = np.int32(0)
        for i in range(n):
            cnt += np.int32(bits[i] <= mid)
        if cnt >= k + 1:
            hi = mid
        else:
            lo = np.int32(mid + 1)
    if hi <= 0:
        return np.float32(0.0)                              # the k-th is a zero (+0.0 or -0.0 alike)
    return _bits_to_float(hi)


@intrinsic
def le_mask16(typingctx, a, start, bound):
    """Bit ``i`` of the result (int64) set when ``a[start + i] <= bound``, for ``i < 16``: one vector
    load and compare of a C-contiguous float32 array (``start + 16 <= len(a)``), so a scan for the few
    values under a bound costs a compare per 16 values instead of a branch per value (numba's loop
    vectoriser does not compress)."""
    if not (isinstance(a, types.Array) and a.ndim == 1 and a.dtype == types.float32 and a.layout == "C"):
        raise nb.errors.TypingError("le_mask16: a must be a C-contiguous 1-D float32 array")
    sig = types.int64(a, types.int64, types.float32)

    def codegen(context, builder, signature, args):
        arr = context.make_array(a)(context, builder, args[0])
        vec_t = ir.VectorType(ir.FloatType(), 16)
        ptr = builder.bitcast(builder.gep(arr.data, [args[1]]), vec_t.as_pointer())
        v = builder.load(ptr, align=4)
        splat = builder.insert_element(ir.Constant(vec_t, ir.Undefined), args[2], ir.Constant(ir.IntType(32), 0))
        splat = builder.shuffle_vector(splat, splat, ir.Constant(ir.VectorType(ir.IntType(32), 16), [0] * 16))
        m = builder.fcmp_ordered("<=", v, splat)
        bits = builder.bitcast(m, ir.IntType(16))
        return builder.zext(bits, ir.IntType(64))

    return sig, codegen
