"""Dot products with one fixed summation order, so every path gets bit-identical scores (numba).

ClassMap's single-query path reads 4 weight rows against one query; its batch path reads one weight
row against 4 queries (the refine grouped by class). With ``fastmath`` reassociation LLVM sums each
such loop in an order of its choosing, so the two paths would disagree in the last bits (and so,
rarely, in a near-tied ranking); numba's SLP vectoriser is off, so a hand-unrolled fixed order runs
scalar. These kernels are emitted as LLVM vector IR instead: every dot product ``A[i] · B[j]`` (rows
of C-contiguous float32 matrices of width D) is ``VECS`` independent ``<16 x float>`` partial sums
(lane ``l`` of vector ``v`` takes the columns ``k ≡ 16 v + l (mod 16 VECS)`` in order, each step an
explicit fused multiply-add ``llvm.fma``, one rounding, never split or re-ordered by LLVM), reduced by
a fixed tree of plain ``fadd``, plus the ``D mod 16 VECS`` tail columns fused-multiply-added in order. The per-pair instruction sequence is
the same in every kernel, whatever the other pairs sharing the loop are:

* ``dot1(A, i, B, j) -> float32``;
* ``dot4(A, i0, i1, i2, i3, B, j0, j1, j2, j3) -> (float32,) * 4``: four pairs in one pass, so four
  row streams keep more cache misses in flight (single query: four weight rows, one query; batch:
  one weight row, four queries);
* ``dot2x4`` / ``dot3x4`` (:func:`dot_block`): every product of two or three rows of ``A`` with four of
  ``B`` in one pass, each row vector loaded once per column step (the batch embedding).

numba's on-disk cache of a caller is keyed on the caller's own source file: after editing this
module, delete the ``__pycache__`` numba entries (``*.nbi``/``*.nbc``) of ``kernels.single`` and
``kernels.batch`` (an installed release has fresh files, so this concerns development only).
"""
from __future__ import annotations

import numba as nb
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

#: vectors of 16 float32 partial sums per dot product
VECS = 2
_W = 16
_F32 = ir.FloatType()
_I64 = ir.IntType(64)
_VEC = ir.VectorType(_F32, _W)


def _row_ptr(context, builder, arrty, arr, idx):
    """Pointer to ``arr[idx, 0]`` of a C-contiguous 2-D float32 array, and its width D (i64)."""
    a = context.make_array(arrty)(context, builder, arr)
    D = builder.extract_value(a.shape, 1)
    return builder.gep(a.data, [builder.mul(idx, D)]), D


def _reduce(builder, vecs):
    """Fixed tree: sum of the vectors lane-wise, then halves added until one float remains."""
    v = vecs[0]
    for w in vecs[1:]:
        v = builder.fadd(v, w)
    n = _W
    while n > 1:
        h = n // 2
        lo = builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(ir.IntType(32), h), list(range(h))))
        hi = builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(ir.IntType(32), h), list(range(h, n))))
        v = builder.fadd(lo, hi)
        n = h
    return builder.extract_element(v, ir.Constant(ir.IntType(32), 0))


def _emit_dots(builder, pairs, D):
    """IR of the dot products of ``pairs`` = [(a_ptr, b_ptr)] over D columns; returns their float values."""
    step = _W * VECS
    vfma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_VEC, [_VEC] * 3), "llvm.fma.v16f32")
    main = builder.sub(D, builder.srem(D, ir.Constant(_I64, step)))
    pre = builder.block
    head = builder.append_basic_block("dot.head")
    body = builder.append_basic_block("dot.body")
    tail_head = builder.append_basic_block("dot.tail.head")
    tail_body = builder.append_basic_block("dot.tail.body")
    done = builder.append_basic_block("dot.done")
    zero_v = ir.Constant(_VEC, [0.0] * _W)
    builder.branch(head)

    builder.position_at_end(head)
    k = builder.phi(_I64)
    k.add_incoming(ir.Constant(_I64, 0), pre)
    accs = []
    for _ in pairs:
        row = []
        for _v in range(VECS):
            phi = builder.phi(_VEC)
            phi.add_incoming(zero_v, pre)
            row.append(phi)
        accs.append(row)
    builder.cbranch(builder.icmp_signed("<", k, main), body, tail_head)

    builder.position_at_end(body)
    for (pa, pb), row in zip(pairs, accs):
        for v, phi in enumerate(row):
            off = builder.add(k, ir.Constant(_I64, v * _W))
            xa = builder.load(builder.bitcast(builder.gep(pa, [off]), _VEC.as_pointer()), align=4)
            xb = builder.load(builder.bitcast(builder.gep(pb, [off]), _VEC.as_pointer()), align=4)
            phi.add_incoming(builder.call(vfma, [xa, xb, phi]), body)
    k.add_incoming(builder.add(k, ir.Constant(_I64, step)), body)
    builder.branch(head)

    builder.position_at_end(tail_head)
    t = builder.phi(_I64)
    t.add_incoming(main, head)
    sums = []
    for _ in pairs:
        s = builder.phi(_F32)
        s.add_incoming(ir.Constant(_F32, 0.0), head)
        sums.append(s)
    builder.cbranch(builder.icmp_signed("<", t, D), tail_body, done)

    builder.position_at_end(tail_body)
    for (pa, pb), s in zip(pairs, sums):
        s.add_incoming(builder.fma(builder.load(builder.gep(pa, [t])), builder.load(builder.gep(pb, [t])), s),
                       tail_body)
    t.add_incoming(builder.add(t, ir.Constant(_I64, 1)), tail_body)
    builder.branch(tail_head)

    builder.position_at_end(done)
    return [builder.fadd(_reduce(builder, row), s) for row, s in zip(accs, sums)]


def _check(A, B):
    for arr in (A, B):
        if not (isinstance(arr, types.Array) and arr.ndim == 2 and arr.dtype == types.float32
                and arr.layout == "C"):
            raise nb.errors.TypingError("lane dot: A and B must be C-contiguous 2-D float32 arrays")


@intrinsic
def dot1(typingctx, A, i, B, j):
    """``A[i] · B[j]`` (float32) in the fixed lane order; A and B have the same width."""
    _check(A, B)
    sig = types.float32(A, types.int64, B, types.int64)

    def codegen(context, builder, signature, args):
        pa, D = _row_ptr(context, builder, A, args[0], args[1])
        pb, _ = _row_ptr(context, builder, B, args[2], args[3])
        return _emit_dots(builder, [(pa, pb)], D)[0]

    return sig, codegen


@intrinsic
def dot4(typingctx, A, i0, i1, i2, i3, B, j0, j1, j2, j3):
    """``(A[i0] · B[j0], ..., A[i3] · B[j3])`` in one pass, each exactly as :func:`dot1`."""
    _check(A, B)
    sig = types.UniTuple(types.float32, 4)(A, *(types.int64,) * 4, B, *(types.int64,) * 4)

    def codegen(context, builder, signature, args):
        pairs = []
        D = None
        for t in range(4):
            pa, D = _row_ptr(context, builder, A, args[0], args[1 + t])
            pb, _ = _row_ptr(context, builder, B, args[5], args[6 + t])
            pairs.append((pa, pb))
        vals = _emit_dots(builder, pairs, D)
        return context.make_tuple(builder, signature.return_type, vals)

    return sig, codegen


def dot_block(n_a: int, n_b: int, doc: str):
    """An intrinsic ``(A, i_0..i_{n_a-1}, B, j_0..j_{n_b-1}) -> (float32,) * (n_a n_b)``: every product
    ``A[i] · B[j]`` in one pass, ``i`` major, each exactly as :func:`dot1` (this module's emitter,
    which loads each row vector once per column step and shares it between its pairs)."""

    def typer(typingctx, A, *idx):
        _check(A, idx[n_a])
        B = idx[n_a]
        sig = types.UniTuple(types.float32, n_a * n_b)(A, *(types.int64,) * n_a, B, *(types.int64,) * n_b)

        def codegen(context, builder, signature, args):
            D = None
            rows_a = []
            for t in range(n_a):
                pa, D = _row_ptr(context, builder, A, args[0], args[1 + t])
                rows_a.append(pa)
            rows_b = [_row_ptr(context, builder, B, args[1 + n_a], args[2 + n_a + t])[0] for t in range(n_b)]
            vals = _emit_dots(builder, [(pa, pb) for pa in rows_a for pb in rows_b], D)
            return context.make_tuple(builder, signature.return_type, vals)

        return sig, codegen

    # numba's @intrinsic needs the typer's parameters spelled out (a *args typer mis-lowers), so the
    # signature is written for this block size
    params = ", ".join(["typingctx", "A"] + [f"i{t}" for t in range(n_a)] + ["B"] + [f"j{t}" for t in range(n_b)])
    ns = {"typer": typer}
    exec(f"def f({params}):\n    return typer(typingctx, A, {', '.join([f'i{t}' for t in range(n_a)] + ['B'] + [f'j{t}' for t in range(n_b)])})", ns)
    fn = ns["f"]
    fn.__doc__ = doc
    return intrinsic(fn)


dot2x4 = dot_block(2, 4, """The eight products ``A[i] · B[j]`` for ``i`` in ``(i0, i1)``, ``j`` in ``(j0..j3)``, ``i0``
first: ``(i0·j0, i0·j1, i0·j2, i0·j3, i1·j0, ...)``, each exactly as :func:`dot1`.""")
dot3x4 = dot_block(3, 4, """The twelve products ``A[i] · B[j]`` for ``i`` in ``(i0, i1, i2)``, ``j`` in ``(j0..j3)``, ``i``
major, each exactly as :func:`dot1`: seven row streams feed 24 multiply-adds per column step, 24 of the
32 vector registers holding sums (the batch embedding: three reference rows against four queries, the
fewest loads per multiply-add that fit the registers).""")


#: classes per :func:`l1_tile` call (four vectors of partial distances held in registers)
TILE = 4 * _W


def _emit_l1(context, builder, eta, c0, fs_ptrs, out_ptrs):
    """IR of :func:`l1_tile` for several queries sharing each load of the tile."""
    d = builder.extract_value(eta.shape, 0)
    C = builder.extract_value(eta.shape, 1)
    base = builder.gep(eta.data, [c0])
    fabs = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_VEC, [_VEC]), "llvm.fabs.v16f32")
    vfma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_VEC, [_VEC] * 3), "llvm.fma.v16f32")
    minus1 = ir.Constant(_VEC, [-1.0] * _W)
    splat = ir.Constant(ir.VectorType(ir.IntType(32), _W), [0] * _W)
    pre = builder.block
    head = builder.append_basic_block("l1.head")
    body = builder.append_basic_block("l1.body")
    done = builder.append_basic_block("l1.done")
    builder.branch(head)
    builder.position_at_end(head)
    j = builder.phi(_I64)
    j.add_incoming(ir.Constant(_I64, 0), pre)
    accs = []
    for _ in fs_ptrs:
        row = []
        for _v in range(TILE // _W):
            phi = builder.phi(_VEC)
            phi.add_incoming(ir.Constant(_VEC, [0.0] * _W), pre)
            row.append(phi)
        accs.append(row)
    builder.cbranch(builder.icmp_signed("<", j, d), body, done)
    builder.position_at_end(body)
    erow = builder.gep(base, [builder.mul(j, C)])
    tiles = [builder.load(builder.bitcast(builder.gep(erow, [ir.Constant(_I64, v * _W)]), _VEC.as_pointer()),
                          align=4) for v in range(TILE // _W)]
    for fp, row in zip(fs_ptrs, accs):
        f = builder.load(builder.gep(fp, [j]))
        fv = builder.insert_element(ir.Constant(_VEC, ir.Undefined), f, ir.Constant(ir.IntType(32), 0))
        fv = builder.shuffle_vector(fv, fv, splat)
        for e, phi in zip(tiles, row):
            # f - e as fma(e, -1, f): the same single rounding as fsub, but on the multiply-add
            # pipes, leaving the add pipes to the accumulation
            diff = builder.call(vfma, [e, minus1, fv])
            phi.add_incoming(builder.fadd(phi, builder.call(fabs, [diff])), body)
    j.add_incoming(builder.add(j, ir.Constant(_I64, 1)), body)
    builder.branch(head)
    builder.position_at_end(done)
    for op, row in zip(out_ptrs, accs):
        for v, phi in enumerate(row):
            builder.store(phi, builder.bitcast(builder.gep(op, [ir.Constant(_I64, v * _W)]), _VEC.as_pointer()),
                          align=4)


def _check_et(ET):
    if not (isinstance(ET, types.Array) and ET.ndim == 2 and ET.dtype == types.float32 and ET.layout == "C"):
        raise nb.errors.TypingError("l1_tile: ET, FS and OUT must be C-contiguous 2-D float32 arrays")


@intrinsic
def l1_tile(typingctx, fs, ET, c0, out):
    """``out[t] = sum_j |fs[j] - ET[j, c0 + t]|`` for ``t < TILE``, added in ``j`` order from 0.0.

    ``fs (d,)`` the alpha-scaled query embedding, ``ET (d, C)`` the alpha-scaled transposed class
    embeddings (C-contiguous float32, ``c0 + TILE <= C``), ``out (>= TILE,) float32`` (contiguous).
    The running sums stay in registers (a numba loop keeps them in memory: a load and a store per
    term); each term is one rounding of ``f - e``, ``fabs``, ``fadd``, without fast-math flags, so
    a scalar loop doing ``s += abs(f - e)`` in the same order gives the same bits (the tail)."""
    _check_et(ET)
    sig = types.none(fs, ET, types.int64, out)

    def codegen(context, builder, signature, args):
        fsa = context.make_array(fs)(context, builder, args[0])
        eta = context.make_array(ET)(context, builder, args[1])
        outa = context.make_array(out)(context, builder, args[3])
        _emit_l1(context, builder, eta, args[2], [fsa.data], [outa.data])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def l1_tile4(typingctx, FS, ET, c0, OUT):
    """:func:`l1_tile` of four queries at once: rows of ``FS (4, d)`` into ``OUT[:, c0:c0 + TILE]`` of
    ``OUT (4, C)`` (both C-contiguous float32): each tile load serves the four, the same bits as four calls."""
    _check_et(ET)
    _check_et(FS)
    _check_et(OUT)
    sig = types.none(FS, ET, types.int64, OUT)

    def codegen(context, builder, signature, args):
        fsa = context.make_array(FS)(context, builder, args[0])
        eta = context.make_array(ET)(context, builder, args[1])
        outa = context.make_array(OUT)(context, builder, args[3])
        dfs = builder.extract_value(fsa.shape, 1)
        dout = builder.extract_value(outa.shape, 1)
        fs_ptrs = [builder.gep(fsa.data, [builder.mul(ir.Constant(_I64, q), dfs)]) for q in range(4)]
        out_ptrs = [builder.gep(outa.data, [builder.add(builder.mul(ir.Constant(_I64, q), dout), args[2])])
                    for q in range(4)]
        _emit_l1(context, builder, eta, args[2], fs_ptrs, out_ptrs)
        return context.get_dummy_value()

    return sig, codegen
