"""Sums of absolute differences of byte codes, eight classes per instruction (numba, LLVM ``psadbw``).

The batch filter's prefilter (:mod:`.codes`) ranks classes by the L1 distance between uint8
codes of the alpha-scaled query and class embeddings. x86's ``psadbw`` adds the absolute differences
of eight byte pairs into one 64-bit lane, eight lanes per 512-bit vector: with the codes laid out
``CT (G, Cp * 8)`` (group ``g`` of eight dimensions, then class, then the group's eight bytes), one
instruction scores eight classes on eight dimensions against the query's broadcast eight bytes, where
the float32 filter needs 24 vector operations for the same 64 terms. numba's loop vectoriser does not
form ``psadbw`` from a loop, so the tile is emitted as LLVM IR here, as :mod:`.lane_dot` does for the
dot products. Integer sums are exact in any order: nothing here needs a fixed summation order.

:data:`SAD_BYTES` is the vector width used (64 with AVX-512BW, 32 with AVX2, 0 elsewhere: then the
callers keep the float32 filter).

numba's on-disk cache of a caller is keyed on the caller's own source file: after editing this module,
delete the ``__pycache__`` numba entries (``*.nbi``/``*.nbc``) of ``kernels.codes`` (development only).
"""
from __future__ import annotations

import llvmlite.binding as llb
import numba as nb
from llvmlite import ir
from numba import types
from numba.extending import intrinsic


def _sad_bytes() -> int:
    try:
        feats = llb.get_host_cpu_features()
    except RuntimeError:  # pragma: no cover - hosts whose features LLVM cannot read
        return 0
    if feats.get("avx512bw", False):
        return 64
    if feats.get("avx2", False):
        return 32
    return 0


#: bytes per ``psadbw`` vector on this host (0: no byte-code filter)
SAD_BYTES = _sad_bytes()
#: classes per tile (256 code bytes per group of eight dimensions)
CODE_TILE = 32
#: queries per tile pass (each tile load serves all of them)
CODE_QUERIES = 4

_I8, _I32, _I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)


def _psad(builder, a, b):
    nb_ = SAD_BYTES
    name = "llvm.x86.avx512.psad.bw.512" if nb_ == 64 else "llvm.x86.avx2.psad.bw"
    vt = ir.VectorType(_I8, nb_)
    fn = builder.module.globals.get(name) or ir.Function(
        builder.module, ir.FunctionType(ir.VectorType(_I64, nb_ // 8), [vt, vt]), name)
    return builder.call(fn, [a, b])


def _check(arr, dtype, what):
    if not (isinstance(arr, types.Array) and arr.ndim == 2 and arr.dtype == dtype and arr.layout == "C"):
        raise nb.errors.TypingError(f"sad_tile4: {what} must be a C-contiguous 2-D {dtype} array")


def _sad_tile_typer(n_queries: int):
    """The typer of an intrinsic ``(QC, CT, SUB, c0, OUT)`` over the first ``n_queries`` rows of QC / OUT."""

    def typer(typingctx, QC, CT, SUB, c0, OUT):
        return _sad_tile(n_queries, QC, CT, SUB, OUT)

    typer.__name__ = typer.__qualname__ = f"sad_tile{n_queries}"
    return typer


def _sad_tile(n_queries, QC, CT, SUB, OUT):
    _check(QC, types.uint8, "QC")
    _check(CT, types.uint8, "CT")
    _check(OUT, types.float32, "OUT")
    if not (isinstance(SUB, types.Array) and SUB.ndim == 1 and SUB.dtype == types.float32 and SUB.layout == "C"):
        raise nb.errors.TypingError("sad_tile4: SUB must be a C-contiguous 1-D float32 array")
    if SAD_BYTES == 0:
        raise nb.errors.TypingError("sad_tile4: this CPU has no psadbw vectors (AVX2 / AVX-512BW)")
    sig = types.none(QC, CT, SUB, types.int64, OUT)

    def codegen(context, builder, signature, args):
        qa = context.make_array(QC)(context, builder, args[0])
        ca = context.make_array(CT)(context, builder, args[1])
        sa = context.make_array(SUB)(context, builder, args[2])
        oa = context.make_array(OUT)(context, builder, args[4])
        c0 = args[3]
        G = builder.extract_value(ca.shape, 0)
        row_bytes = builder.extract_value(ca.shape, 1)
        q_bytes = builder.extract_value(qa.shape, 1)
        o_width = builder.extract_value(oa.shape, 1)
        nvec = CODE_TILE * 8 // SAD_BYTES
        lanes = SAD_BYTES // 8
        vt = ir.VectorType(_I8, SAD_BYTES)
        at = ir.VectorType(_I64, lanes)
        splat = ir.Constant(ir.VectorType(_I32, lanes), [0] * lanes)
        pre = builder.block
        head = builder.append_basic_block("sad.head")
        body = builder.append_basic_block("sad.body")
        done = builder.append_basic_block("sad.done")
        builder.branch(head)
        builder.position_at_end(head)
        g = builder.phi(_I64)
        g.add_incoming(ir.Constant(_I64, 0), pre)
        accs = []
        for _q in range(n_queries):
            row = []
            for _v in range(nvec):
                phi = builder.phi(at)
                phi.add_incoming(ir.Constant(at, [0] * lanes), pre)
                row.append(phi)
            accs.append(row)
        builder.cbranch(builder.icmp_signed("<", g, G), body, done)
        builder.position_at_end(body)
        base = builder.gep(ca.data, [builder.add(builder.mul(g, row_bytes), builder.mul(c0, ir.Constant(_I64, 8)))])
        tiles = [builder.load(builder.bitcast(builder.gep(base, [ir.Constant(_I64, v * SAD_BYTES)]), vt.as_pointer()),
                              align=1) for v in range(nvec)]
        for q, row in enumerate(accs):
            qp = builder.gep(qa.data, [builder.add(builder.mul(ir.Constant(_I64, q), q_bytes),
                                                   builder.mul(g, ir.Constant(_I64, 8)))])
            word = builder.load(builder.bitcast(qp, _I64.as_pointer()), align=1)
            qv = builder.insert_element(ir.Constant(at, ir.Undefined), word, ir.Constant(_I32, 0))
            qv = builder.bitcast(builder.shuffle_vector(qv, qv, splat), vt)
            for tile, phi in zip(tiles, row):
                phi.add_incoming(builder.add(phi, _psad(builder, tile, qv)), body)
        g.add_incoming(builder.add(g, ir.Constant(_I64, 1)), body)
        builder.branch(head)
        builder.position_at_end(done)
        ft = ir.VectorType(ir.FloatType(), lanes)
        subs = [builder.load(builder.bitcast(builder.gep(sa.data, [builder.add(c0, ir.Constant(_I64, v * lanes))]),
                                             ft.as_pointer()), align=4) for v in range(nvec)]
        for q, row in enumerate(accs):
            orow = builder.gep(oa.data, [builder.add(builder.mul(ir.Constant(_I64, q), o_width), c0)])
            for v, phi in enumerate(row):
                f = builder.fsub(builder.sitofp(builder.trunc(phi, ir.VectorType(_I32, lanes)), ft), subs[v])
                builder.store(f, builder.bitcast(builder.gep(orow, [ir.Constant(_I64, v * lanes)]), ft.as_pointer()),
                              align=4)
        return context.get_dummy_value()

    return sig, codegen


sad_tile4 = intrinsic(_sad_tile_typer(CODE_QUERIES))
sad_tile4.__doc__ = """``OUT[q, c0 + t] = sum_j |QC[q, j] - code[c0 + t, j]| - SUB[c0 + t]`` (the sum as float32, exact below
2**24; ``SUB (>= c0 + CODE_TILE,) float32`` a per-class offset) for the four queries ``q < 4`` and the
``CODE_TILE`` classes ``t``: ``QC (4, 8 G) uint8`` query codes, ``CT (G, 8 Cp) uint8`` class codes
(``CT[g, 8 c + i]`` = code of class c, dimension 8 g + i), ``OUT (4, >= c0 + CODE_TILE) float32``. Needs
``SAD_BYTES > 0``."""
sad_tile1 = intrinsic(_sad_tile_typer(1))
sad_tile1.__doc__ = """:data:`sad_tile4` for the one query in row 0 of ``QC (>= 1, 8 G)`` / ``OUT`` (a live query alone)."""
