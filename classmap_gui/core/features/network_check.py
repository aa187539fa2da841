"""The allow-list a trained network passes before any runtime sees it: an ONNX graph is closer to a program
than to data (a ``Loop`` of 2^62 steps, a ``ConstantOfShape`` of gigabytes, a tensor read from ``weights.bin``
beside the model), so onnxruntime and OpenCV's ``dnn`` are handed only graphs built of the operators the
product's own networks use, of bounded size, in one file, with the SHA-256 the model records.

The ONNX ``ModelProto`` is read here by a small protocol-buffer wire-format reader (standard library and
numpy only: the ``onnx`` package is a training extra, absent at run time and from an exported predictor,
which inlines this module). Fields that are not needed are skipped by their wire type; the few that make a
graph unsafe are refused by presence. Bounds come from the limits table (:mod:`..read_limits`).

:func:`check_network` returns what the graph declares: its kind (``"crop"``: input ``(n, 1, h, w)``, output
``(n, D)``; ``"dense"``: input ``(n, 1, H, W)``, output ``(n, E, rows, cols)``), its input size and width.
"""
from __future__ import annotations

import hashlib

import numpy as np

from ..guards.read_limits import (MAX_NETWORK_BYTES, MAX_NETWORK_INPUT_SIDE, MAX_NETWORK_NODES, MAX_NETWORK_SHAPE_ELEMENTS,
                           MAX_NETWORK_TENSOR_ELEMENTS, MAX_NETWORK_WINDOW, NETWORK_IR_VERSIONS, NETWORK_OPSETS, SettingError,
                           all_finite)

#: the operators of the product's networks and no others: the crop kind (resources/networks/hand.onnx: Conv,
#: BatchNormalization, Relu, GlobalAveragePool, Flatten, MatMul) and the dense window kind (Conv, depthwise
#: included, Relu, BatchNormalization unless folded, AveragePool, Slice, Concat, Constant, Identity where the
#: exporter shares one weight, and the shape arithmetic it may write for symbolic sizes). No control flow
#: (Loop, Scan, If), no generators of large tensors (ConstantOfShape, Expand, Tile, Resize), no custom domains.
ALLOWED_OPS = frozenset({
    "Conv", "BatchNormalization", "Relu", "GlobalAveragePool", "AveragePool", "Flatten", "MatMul",
    "Slice", "Concat", "Constant", "Identity", "Shape", "Gather", "Unsqueeze",
})
#: operator domains: the standard one only ("" and its long name)
_DOMAINS = ("", "ai.onnx")
#: TensorProto data types the product's networks hold: float32, int32, int64 (shape arithmetic)
_DTYPES = {1: np.dtype("<f4"), 6: np.dtype("<i4"), 7: np.dtype("<i8")}
_FLOAT = 1
#: attributes of a sliding window (Conv, AveragePool), each value bounded by MAX_NETWORK_WINDOW
_WINDOW_ATTRS = ("pads", "strides", "dilations", "kernel_shape")


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise SettingError("a truncated or malformed number")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def fields(buf: bytes, limit: int = 64):
    """``(field number, wire type, value)`` of each field of one protobuf message: an int for varint and
    fixed-width fields, a ``bytes`` slice for length-delimited ones. SettingError for groups, truncation, or
    more than ``limit`` fields (a tensor, a value or a shape of this app's networks has a few; bounding the
    count keeps a file of a million tiny fields from taking minutes here)."""
    pos, end, count = 0, len(buf), 0
    while pos < end:
        count += 1
        if count > limit:
            raise SettingError(f"a part of the network holds more than {limit} fields, more than one of this "
                               f"app's networks has")
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            size, pos = _varint(buf, pos)
            if pos + size > end:
                raise SettingError("a field runs past the end of the file (truncated?)")
            value, pos = buf[pos:pos + size], pos + size
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            if pos + width > end:
                raise SettingError("a field runs past the end of the file (truncated?)")
            value, pos = int.from_bytes(buf[pos:pos + width], "little"), pos + width
        else:
            raise SettingError(f"wire type {wire} is not part of an ONNX file")
        if field == 0:
            raise SettingError("field number 0 is not part of an ONNX file")
        yield field, wire, value


def _ints(wire: int, value) -> list[int]:
    """A repeated integer field's values (packed or one), as signed 64-bit numbers."""
    if wire != 2:
        out = [value]
    else:
        out, pos = [], 0
        while pos < len(value):
            v, pos = _varint(value, pos)
            out.append(v)
    return [v - (1 << 64) if v >= 1 << 63 else v for v in out]


def _text(value) -> str:
    return bytes(value).decode("utf-8", "replace")


def _tensor(buf: bytes, what: str) -> list[int]:
    """One TensorProto (an initializer or a Constant's value): in this file, of an allowed type, of a bounded
    element count that its data matches, its floats finite."""
    dims, dtype, raw, counts, name = [], None, None, {}, ""
    for field, wire, value in fields(buf):
        if field == 1:
            dims += _ints(wire, value)
        elif field == 2:
            dtype = value
        elif field == 8:
            name = _text(value)[:60]
        elif field == 9:
            raw = value
        elif field in (4, 5, 7, 10, 11):   # float, int32, int64, double, uint64 data
            counts[field] = counts.get(field, 0) + (len(value) // 4 if field == 4 and wire == 2 else 1 if wire != 2
                                                    else int(np.count_nonzero(np.frombuffer(value, np.uint8) < 0x80)))
        elif field in (13, 14) and (field == 13 or value != 0):
            raise SettingError(f"{what} {name!r} names external data (a file beside the model); refused")
        elif field in (6, 12):
            raise SettingError(f"{what} {name!r} holds strings or segments, which no network of this app has")
    label = f"{what} {name!r}"
    if dtype not in _DTYPES:
        raise SettingError(f"{label} has data type {dtype}, not float32, int32 or int64")
    if any(d < 0 for d in dims) or len(dims) > 8:
        raise SettingError(f"{label} has an impossible shape {dims[:9]}")
    count = int(np.prod(dims, dtype=np.float64)) if dims else 1
    if count > MAX_NETWORK_TENSOR_ELEMENTS:
        raise SettingError(f"{label} holds {count} values, more than the {MAX_NETWORK_TENSOR_ELEMENTS} a network's "
                           f"tensor may")
    if raw is not None:
        if counts or len(raw) != count * _DTYPES[dtype].itemsize:
            raise SettingError(f"{label}: its data does not match its shape {dims}")
        data = np.frombuffer(raw, _DTYPES[dtype])
    else:
        want = {1: 4, 6: 5, 7: 7}[dtype]
        if set(counts) - {want} or counts.get(want, 0) != count:
            raise SettingError(f"{label}: its data does not match its shape {dims}")
        data = None
        if dtype == _FLOAT:
            data = np.concatenate([np.frombuffer(v, "<f4") if w == 2 else np.array([v], "<u4").view("<f4")
                                   for f, w, v in fields(buf) if f == 4] or [np.zeros(0, "<f4")])
    if data is not None and data.dtype.kind == "f" and not all_finite(data):
        raise SettingError(f"{label} holds NaN, infinite or absurdly large values")
    return dims


def _shape(buf: bytes) -> tuple[int, list] | None:
    """A ValueInfoProto's ``(elem_type, dims)`` (a dim: an int, or a str for a symbolic one), None when it
    declares no tensor type. SettingError for sequences, maps, optionals and sparse tensors."""
    type_buf = next((v for f, _, v in fields(buf) if f == 2), None)
    if type_buf is None:
        return None
    elem, dims = None, None
    for field, _, value in fields(type_buf):
        if field != 1:
            if field in (4, 5, 8, 9):
                raise SettingError("a value that is not a tensor (sequence, map, optional or sparse)")
            continue
        for tf, _, tv in fields(value):
            if tf == 1:
                elem = tv
            elif tf == 2:
                dims = []
                for df, _, dv in fields(tv):
                    if df == 1:
                        d = next(((f, v) for f, _, v in fields(dv) if f in (1, 2)), (2, b""))
                        dims.append(_ints(0, d[1])[0] if d[0] == 1 else _text(d[1]))
    return elem, dims


def _check_elements(dims: list, what: str) -> None:
    known = [d for d in dims if isinstance(d, int)]
    if any(d < 1 for d in known):
        raise SettingError(f"{what} has a size of {min(known)}")
    if float(np.prod(known, dtype=np.float64)) > MAX_NETWORK_SHAPE_ELEMENTS:
        raise SettingError(f"{what} would hold {int(np.prod(known, dtype=np.float64))} values per image, more "
                           f"than the {MAX_NETWORK_SHAPE_ELEMENTS} allowed")


def _node(buf: bytes) -> tuple:
    """Checks one NodeProto; returns ``(operator, input names, output names, a Constant's dims or None,
    {attribute: ints} of its window and axis attributes)``."""
    op, domain, name = "", "", ""
    attrs, ins, outs, dims, ints = [], [], [], None, {}
    for field, _, value in fields(buf, 1000):
        if field in (1, 2):
            (ins if field == 1 else outs).append(_text(value))
        elif field == 4:
            op = _text(value)[:60]
        elif field == 7:
            domain = _text(value)[:60]
        elif field == 3:
            name = _text(value)[:60]
        elif field == 5:
            attrs.append(value)
    if domain not in _DOMAINS:
        raise SettingError(f"operator {op!r} of the custom domain {domain!r} is not one this app runs")
    if op not in ALLOWED_OPS:
        raise SettingError(f"operator {op!r} is not one of the operators this app's networks use "
                           f"({', '.join(sorted(ALLOWED_OPS))})")
    for attr in attrs:
        key = ""
        for field, wire, value in fields(attr, 1000):
            if field == 1:
                key = _text(value)
            elif field in (6, 11) or field == 20 and value in (5, 10):
                raise SettingError(f"{op} node {name!r} holds a subgraph; refused")
            elif field in (22, 23) or field == 20 and value in (11, 12):
                raise SettingError(f"{op} node {name!r} holds a sparse tensor; refused")
            elif field in (5, 10):
                dims = _tensor(value, f"the {op} node {name!r}'s tensor")
            elif field in (3, 8) and key in _WINDOW_ATTRS + ("axis",):
                ints[key] = ints.get(key, []) + _ints(wire, value)
                if key != "axis" and any(abs(v) > MAX_NETWORK_WINDOW for v in ints[key]):
                    raise SettingError(f"{op} node {name!r} has {key} beyond {MAX_NETWORK_WINDOW}; refused")
            elif field == 4 and key == "auto_pad" and bytes(value) not in (b"", b"NOTSET"):
                raise SettingError(f"{op} node {name!r} pads automatically ({_text(value)[:20]}), which no network "
                                   f"of this app does")
    return op, ins, outs, dims, ints


def _channels(nodes: list, known: dict) -> int:
    """An upper bound on the channels of any value per pixel: every Conv's and MatMul's output width, every
    Concat input counted at the widest of them, and the input's one. SettingError for a Conv or MatMul whose
    weights are computed in the graph (no network of this app has one; their width would be unbounded)."""
    widths, concat_inputs = [1], 0
    for op, ins, outs, dims, _ in nodes:
        if op == "Constant" and dims is not None and outs:
            known[outs[0]] = dims
        elif op == "Identity" and ins and ins[0] in known and outs:
            known[outs[0]] = known[ins[0]]
        elif op in ("Conv", "MatMul"):
            w = known.get(ins[1]) if len(ins) > 1 else None
            if not w or len(w) < 2:
                raise SettingError(f"a {op} whose weights are computed in the graph; refused")
            widths.append(w[0] if op == "Conv" else w[-1])
        elif op == "Concat":
            concat_inputs += len(ins)
    return sum(widths) + concat_inputs * max(widths)


def _size(shape: list) -> int:
    return int(np.prod(shape, dtype=np.float64))


def _layer(op: str, x: list, ins: list, ints: dict, known: dict, shapes: dict) -> list:
    """The per-crop shape ``(channels, h, w)`` or ``(width,)`` of a node's output given its first input's ``x``
    (an upper bound for Slice)."""
    if op in ("Conv", "AveragePool"):
        k = ints.get("kernel_shape") or (known[ins[1]][2:] if op == "Conv" else [])
        s, d, p = ints.get("strides", [1, 1]), ints.get("dilations", [1, 1]), ints.get("pads", [0, 0, 0, 0])
        if len(x) != 3 or len(k) != 2 or len(s) != 2 or len(d) != 2 or len(p) != 4 or min(s + d) < 1:
            raise SettingError(f"a {op} that is not a 2-d window over (channels, h, w)")
        hw = [(x[1 + i] + p[i] + p[i + 2] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in (0, 1)]
        return [known[ins[1]][0] if op == "Conv" else x[0], *hw]
    if op == "GlobalAveragePool":
        return [x[0], 1, 1]
    if op == "Flatten":
        return [_size(x)]
    if op == "MatMul":
        return [known[ins[1]][-1]]
    if op == "Concat":
        parts, axis = [shapes.get(i) for i in ins], (ints.get("axis") or [0])[0]
        if any(q is None or len(q) != len(x) for q in parts) or not 1 <= axis <= len(x):
            raise SettingError("a Concat of values of other ranks, or across the images of a batch")
        return [sum(q[axis - 1] for q in parts) if i == axis - 1 else v for i, v in enumerate(x)]
    return list(x)  # Relu, BatchNormalization, Identity: the same; Slice: at most the same


def _values_per_crop(nodes: list, known: dict, name: str, hw: tuple) -> int:
    """The most values one crop's layers hold at once (a node's inputs and output), by the shapes the graph
    gives a ``(1, h, w)`` crop; nodes on weights only (shape arithmetic) hold none of them."""
    shapes = {name: [1, *hw]}
    peak = _size(shapes[name])
    for op, ins, outs, _, ints in nodes:
        if not ins or not outs or ins[0] not in shapes or op in ("Shape", "Gather", "Unsqueeze", "Constant"):
            continue
        y = _layer(op, shapes[ins[0]], ins, ints, known, shapes)
        if min(y) < 1:
            raise SettingError(f"a {op} whose output is empty")
        shapes[outs[0]] = y
        peak = max(peak, sum(_size(shapes[i]) for i in set(ins) if i in shapes) + _size(y))
    return peak


def _graph(buf: bytes) -> tuple[list, list, list, dict]:
    """Checks one GraphProto; returns its inputs (not initializers) and outputs as ``(name, shape)``, its
    nodes as :func:`_node` gives them and its weights' dims by name."""
    nodes = []
    inits, inputs, outputs = {}, [], []
    for field, _, value in fields(buf, 4 * MAX_NETWORK_NODES):
        if field == 1:
            if len(nodes) >= MAX_NETWORK_NODES:
                raise SettingError(f"more than {MAX_NETWORK_NODES} operators, more than a network of this app has")
            nodes.append(_node(value))
        elif field == 5:
            dims = _tensor(value, "the weight")
            inits[next((_text(v) for f, _, v in fields(value) if f == 8), "")] = dims
        elif field == 15:
            raise SettingError("a sparse weight, which no network of this app has")
        elif field in (11, 12, 13):
            name = next((_text(v) for f, _, v in fields(value) if f == 1), "")
            shape = _shape(value)
            if shape is not None and shape[1] is not None:
                _check_elements(shape[1], f"the value {name[:60]!r}")
            if field == 11:
                inputs.append((name, shape))
            elif field == 12:
                outputs.append((name, shape))
    return [i for i in inputs if i[0] not in inits], outputs, nodes, inits


def _input_output(inputs: list, outputs: list) -> dict:
    if len(inputs) != 1 or len(outputs) != 1:
        raise SettingError(f"the network has {len(inputs)} inputs and {len(outputs)} outputs, not one of each")
    (iname, ishape), (oname, oshape) = inputs[0], outputs[0]
    if ishape is None or ishape[0] != _FLOAT or ishape[1] is None or len(ishape[1]) != 4 or ishape[1][1] != 1:
        raise SettingError(f"its input {iname[:60]!r} is not float32 (n, 1, h, w) grey images")
    if oshape is None or oshape[0] != _FLOAT or oshape[1] is None or len(oshape[1]) not in (2, 4):
        raise SettingError(f"its output {oname[:60]!r} is not float32 (n, D) or (n, E, rows, cols)")
    idims, odims = ishape[1], oshape[1]
    if not isinstance(odims[1], int):
        raise SettingError(f"its output {oname[:60]!r} does not state its width")
    if isinstance(odims[0], int) and odims[0] != idims[0]:
        raise SettingError(f"its output {oname[:60]!r} has {odims[0]} rows whatever the number of images")
    hw = tuple(idims[2:4])
    if any(isinstance(d, int) and d > MAX_NETWORK_INPUT_SIDE for d in hw):
        raise SettingError(f"its input size {hw} is beyond {MAX_NETWORK_INPUT_SIDE} pixels a side")
    if len(odims) == 2:
        if not all(isinstance(d, int) for d in hw):
            raise SettingError(f"its input {iname[:60]!r} does not state the crop size it reads")
        return {"kind": "crop", "input_hw": hw, "width": odims[1]}
    return {"kind": "dense", "input_hw": None, "width": odims[1]}


def check_network(data: bytes, sha256: str | None = None, kind: str | None = None) -> dict:
    """Checks ONNX bytes against the allow-list (module docstring) without running anything; returns
    ``{"kind": "crop"|"dense", "input_hw": (h, w) or None, "width": D or E, "nodes": count, "channels": C}``,
    ``C`` bounding the values any layer holds per input pixel (a dense network's caller bounds ``H * W * C``),
    and for a crop network ``values_per_crop``, the most values its layers hold at once for one crop.

    ``sha256``: the hex digest the model records (checked first: a swapped file is refused whatever it
    holds); ``kind``: the kind the caller runs. SettingError saying what is wrong, in one line.
    """
    data = bytes(data)
    if not 0 < len(data) <= MAX_NETWORK_BYTES:
        raise SettingError(f"the network file must be 1 to {MAX_NETWORK_BYTES} bytes, got {len(data)}")
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise SettingError(f"the network's SHA-256 {hashlib.sha256(data).hexdigest()[:16]}... differs from the "
                           f"{str(sha256)[:16]}... the model records (the file was swapped or damaged)")
    ir, opsets, graph = None, [], None
    for field, _, value in fields(data, 10_000):
        if field == 1:
            ir = value
        elif field == 8:
            opsets.append({f: v for f, _, v in fields(value)})
        elif field == 7:
            graph = value
        elif field in (20, 25):
            raise SettingError("training steps or local functions, which no network of this app has")
    if ir is None or graph is None:
        raise SettingError("not an ONNX network (no IR version or no graph)")
    if not NETWORK_IR_VERSIONS[0] <= ir <= NETWORK_IR_VERSIONS[1]:
        raise SettingError(f"ONNX IR version {ir} is outside the {NETWORK_IR_VERSIONS[0]}..{NETWORK_IR_VERSIONS[1]} "
                           f"this app reads")
    for opset in opsets:
        domain, version = _text(opset.get(1, b""))[:60], opset.get(2, 0)
        if domain not in _DOMAINS:
            raise SettingError(f"the custom operator domain {domain!r} is not one this app runs")
        if not NETWORK_OPSETS[0] <= version <= NETWORK_OPSETS[1]:
            raise SettingError(f"operator set {version} is outside the {NETWORK_OPSETS[0]}..{NETWORK_OPSETS[1]} "
                               f"this app reads")
    if not opsets:
        raise SettingError("the network names no operator set")
    inputs, outputs, nodes, inits = _graph(graph)
    info = _input_output(inputs, outputs)
    if kind is not None and info["kind"] != kind:
        raise SettingError(f"a {info['kind']} network (output of rank {2 if info['kind'] == 'crop' else 4}) where "
                           f"a {kind} network is needed")
    channels = _channels(nodes, inits)
    values = None
    if info["input_hw"] is not None:
        values = _values_per_crop(nodes, inits, inputs[0][0], info["input_hw"])
        if values > MAX_NETWORK_SHAPE_ELEMENTS:
            raise SettingError(f"its layers would hold {values} values per crop, more than the "
                               f"{MAX_NETWORK_SHAPE_ELEMENTS} allowed")
    return dict(info, nodes=len(nodes), channels=channels, values_per_crop=values)
