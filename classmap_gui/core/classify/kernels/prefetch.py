"""Software prefetch of the head of a matrix row (numba intrinsic over ``llvm.prefetch``).

The batch refine reads query rows in the order of its grouping by class (:mod:`.batch`), which
no hardware prefetcher predicts; asking for the first lines of the rows a few pairs ahead starts their
fetch before the dot products reach them, and the hardware prefetcher streams the rest of each row once
it is being read. Prefetching every line of the row instead (110 instructions per 7 KB row, as many as
the dot product's multiply-adds) cost more load slots than it saved: 2.9 against 2.1 ms per 1000 queries
(2430 x 1764, one thread, interleaved, AMD EPYC with AVX-512), the same as no prefetch at all. A prefetch
is a hint: it changes no value, and a wrong one costs only traffic.

numba's on-disk cache of a caller is keyed on the caller's own source file: after editing this module,
delete the ``__pycache__`` numba entries (``*.nbi``/``*.nbc``) of ``kernels.batch`` (development only).
"""
from __future__ import annotations

import numba as nb
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["HEAD_LINES", "prefetch_row"]

#: 64-byte lines of a row's head that :func:`prefetch_row` asks for
HEAD_LINES = 2


@intrinsic
def prefetch_row(typingctx, A, i):
    """A read prefetch into every cache level of the first ``HEAD_LINES`` 64-byte lines of row ``i`` of
    ``A`` (a C-contiguous 2-D float32 array; fewer when the row is shorter); ``i`` must be a valid row."""
    if not (isinstance(A, types.Array) and A.ndim == 2 and A.dtype == types.float32 and A.layout == "C"):
        raise nb.errors.TypingError("prefetch_row: A must be a C-contiguous 2-D float32 array")
    sig = types.none(A, types.int64)

    def codegen(context, builder, signature, args):
        a = context.make_array(A)(context, builder, args[0])
        D = builder.extract_value(a.shape, 1)
        i8p = ir.IntType(8).as_pointer()
        i32, i64 = ir.IntType(32), ir.IntType(64)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0i8")
        base = builder.bitcast(builder.gep(a.data, [builder.mul(args[1], D)]), i8p)
        nbytes = builder.mul(D, ir.Constant(i64, 4))
        head = ir.Constant(i64, 64 * HEAD_LINES)
        stop = builder.select(builder.icmp_signed("<", nbytes, head), nbytes, head)
        with cgutils.for_range_slice(builder, ir.Constant(i64, 0), stop, ir.Constant(i64, 64)) as (off, _):
            builder.call(fn, [builder.gep(base, [off]), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen
