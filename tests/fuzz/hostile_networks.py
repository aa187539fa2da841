"""Hostile ONNX networks of issue 49's survey, built by hand (``onnx.helper``: a training extra the shared test
environment has; the product never imports it), and the planting of one into a saved model or an export.

Every network is a variation of :func:`tiny`, a crop network the allow-list accepts: input ``crops (n, 1, 64,
64)`` float32 -> a 1x1 convolution to 4 channels -> global average -> ``(n, 4)``. :data:`CASES` maps a
survey case to ``(bytes, what the refusal names)``; run as they are, the first ones hang or allocate
gigabytes (that is the point: nothing may run them).
"""
from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

WIDTH = 4


def _model(nodes, inits, *, inp=None, out=None, opset=17, ir=8, domain_opsets=()) -> bytes:
    inp = inp or helper.make_tensor_value_info("crops", TensorProto.FLOAT, ["n", 1, 64, 64])
    out = out or helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["n", WIDTH])
    graph = helper.make_graph(nodes, "hostile", [inp], [out], initializer=inits)
    opsets = [helper.make_opsetid("", opset), *(helper.make_opsetid(d, 1) for d in domain_opsets)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="fuzz")
    model.ir_version = ir
    return model.SerializeToString()


def _trunk(weight=None, x="crops", y="embedding") -> tuple[list, list]:
    """Conv 1x1 (4 channels) -> GlobalAveragePool -> Flatten: ``x (n, 1, h, w)`` -> ``y (n, 4)``."""
    w = np.full((WIDTH, 1, 1, 1), 0.5, np.float32) if weight is None else weight
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.zeros(WIDTH, np.float32), "b")]
    nodes = [helper.make_node("Conv", [x, "w", "b"], ["c"]), helper.make_node("GlobalAveragePool", ["c"], ["g"]),
             helper.make_node("Flatten", ["g"], [y], axis=1)]
    return nodes, inits


def tiny(**kw) -> bytes:
    """The harmless network the hostile ones vary (passes the allow-list, runs in both runtimes)."""
    return _model(*_trunk(), **kw)


def loop(trip: int = 2 ** 62) -> bytes:
    """The embedding passed through a Loop of ``trip`` steps (a hang when run)."""
    nodes, inits = _trunk(y="e0")
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]), helper.make_node("Identity", ["v"], ["v_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("v", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, None)])
    inits += [numpy_helper.from_array(np.array(trip, np.int64), "trip"),
              numpy_helper.from_array(np.array(True), "true")]
    return _model(nodes + [helper.make_node("Loop", ["trip", "true", "e0"], ["embedding"], body=body)], inits)


def scan(steps: int = 10 ** 9) -> bytes:
    """A Scan over a ``steps``-long sequence built in the graph (gigabytes and a hang when run)."""
    nodes, inits = _trunk(y="e0")
    body = helper.make_graph([helper.make_node("Identity", ["s"], ["s_out"])], "body",
                             [helper.make_tensor_value_info("s", TensorProto.FLOAT, None),
                              helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                             [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, None)])
    inits += [numpy_helper.from_array(np.array([steps, 1], np.int64), "seq_shape")]
    nodes += [helper.make_node("ConstantOfShape", ["seq_shape"], ["seq"]),
              helper.make_node("Scan", ["e0", "seq"], ["embedding"], body=body, num_scan_inputs=1)]
    return _model(nodes, inits)


def generator(op: str, elements: int) -> bytes:
    """``ConstantOfShape`` / ``Expand`` of ``elements`` float32 values (2.5 GB, 1.6 GB), added to the input."""
    nodes, inits = _trunk(x="big_crops")
    inits += [numpy_helper.from_array(np.array([elements // 4096, 1, 64, 64], np.int64), "shape")]
    if op == "ConstantOfShape":
        big = [helper.make_node("ConstantOfShape", ["shape"], ["big"],
                                value=numpy_helper.from_array(np.array([1.0], np.float32)))]
    else:
        inits.append(numpy_helper.from_array(np.ones((1, 1, 1, 1), np.float32), "one"))
        big = [helper.make_node("Expand", ["one", "shape"], ["big"])]
    return _model(big + [helper.make_node("Concat", ["crops", "big"], ["cat"], axis=0),
                         helper.make_node("Slice", ["cat", "zero", "n"], ["big_crops"])] + nodes,
                  inits + [numpy_helper.from_array(np.array([0], np.int64), "zero"),
                           numpy_helper.from_array(np.array([1], np.int64), "n")],
                  out=helper.make_tensor_value_info("embedding", TensorProto.FLOAT, [1, WIDTH]))


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field."""
    size, head = len(payload), bytearray()
    while True:
        head.append((size & 0x7F) | (0x80 if size > 0x7F else 0))
        size >>= 7
        if not size:
            break
    return bytes([number << 3 | 2]) + bytes(head) + payload


def many_nodes(count: int = 200_000) -> bytes:
    """``count`` Identity nodes of the input beside the trunk (+400 MB in a runtime), written as protobuf
    fields directly (onnx.helper takes seconds for as many)."""
    model = onnx.ModelProto.FromString(tiny())
    nodes = b"".join(_field(1, _field(1, b"crops") + _field(2, b"i%d" % i) + _field(4, b"Identity"))
                     for i in range(count))
    graph = nodes + model.graph.SerializeToString()
    model.ClearField("graph")
    return model.SerializeToString() + _field(7, graph)


def many_weights(count: int = 20_000) -> bytes:
    """Twenty thousand one-value weights beside the trunk (a million: a parser's minutes; the bound is 8000)."""
    model = onnx.ModelProto.FromString(tiny())
    weights = b"".join(_field(5, b"\x08\x01\x10\x01" + _field(8, b"x%d" % i) + _field(9, b"\0\0\0\0"))
                       for i in range(count))
    graph = model.graph.SerializeToString() + weights
    model.ClearField("graph")
    return model.SerializeToString() + _field(7, graph)


def if_subgraph() -> bytes:
    """The embedding chosen by an If between two subgraphs."""
    nodes, inits = _trunk(y="e0")
    branch = [helper.make_graph([helper.make_node("Identity", ["e0"], [f"o{i}"])], f"b{i}", [],
                                [helper.make_tensor_value_info(f"o{i}", TensorProto.FLOAT, None)]) for i in (0, 1)]
    inits.append(numpy_helper.from_array(np.array(True), "true"))
    return _model(nodes + [helper.make_node("If", ["true"], ["embedding"], then_branch=branch[0],
                                            else_branch=branch[1])], inits)


def external() -> bytes:
    """The convolution's weights read from ``weights.bin`` beside the model."""
    nodes, inits = _trunk()
    w = inits[0]
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value="weights.bin")
    w.external_data.add(key="length", value=str(4 * WIDTH))
    return _model(nodes, inits)


def wide_layer(channels: int = 1_000_000) -> bytes:
    """A 1x1 convolution to a million channels (4 MB of weights, 16 GB of values per 64x64 crop), then averaged
    back to 4 by a second one."""
    nodes, inits = _trunk(x="wide")
    inits += [numpy_helper.from_array(np.ones((channels, 1, 1, 1), np.float32), "w_wide"),
              numpy_helper.from_array(np.ones((1, channels, 1, 1), np.float32) / channels, "w_back")]
    return _model([helper.make_node("Conv", ["crops", "w_wide"], ["wide0"]),
                   helper.make_node("Conv", ["wide0", "w_back"], ["wide"])] + nodes, inits)


def padded(pad: int = 10_000) -> bytes:
    """A convolution padding its input by ``pad`` pixels a side (a 20064 x 20064 map per crop)."""
    nodes, inits = _trunk()
    nodes[0] = helper.make_node("Conv", ["crops", "w", "b"], ["c"], pads=[pad] * 4)
    return _model(nodes, inits)


def custom_domain() -> bytes:
    nodes, inits = _trunk(y="e0")
    nodes.append(helper.make_node("Evil", ["e0"], ["embedding"], domain="com.evil"))
    return _model(nodes, inits, domain_opsets=("com.evil",))


def weights(value: float) -> bytes:
    """Conv weights holding ``value`` (NaN, Inf)."""
    w = np.full((WIDTH, 1, 1, 1), 0.5, np.float32)
    w[0] = value
    return _model(*_trunk(weight=w))


def exploding() -> bytes:
    """Finite weights (1e15) in a chain of convolutions: zero for a blank crop, infinite for a real one."""
    nodes, inits = [], []
    for i in range(4):
        inits.append(numpy_helper.from_array(np.full((1, 1, 1, 1), 1e15 * (-1) ** i, np.float32), f"k{i}"))
        nodes.append(helper.make_node("Conv", ["crops" if i == 0 else f"x{i}", f"k{i}"], [f"x{i + 1}"]))
    trunk, tinits = _trunk(x="x4")
    return _model(nodes + trunk, inits + tinits)


def shaped_input(elem=TensorProto.FLOAT, dims=("n", 1, 64, 64)) -> bytes:
    inp = helper.make_tensor_value_info("crops", elem, list(dims))
    return tiny(inp=inp)


def shaped_output(elem=TensorProto.FLOAT, dims=("n", WIDTH)) -> bytes:
    return tiny(out=helper.make_tensor_value_info("embedding", elem, list(dims)))


def batch_ignored(declared=(1, WIDTH)) -> bytes:
    """Flatten(axis=0): ``(1, 4n)`` whatever the batch; declared ``declared``."""
    nodes, inits = _trunk()
    nodes[-1] = helper.make_node("Flatten", ["g"], ["embedding"], axis=0)
    return _model(nodes, inits, out=helper.make_tensor_value_info("embedding", TensorProto.FLOAT, list(declared)))


#: survey case -> (network bytes, a phrase of its refusal)
CASES = {
    "loop 2^62": (loop, "'Loop'"),
    "scan 10^9": (scan, "is not one of the operators"),
    "constant of shape 2.5 GB": (lambda: generator("ConstantOfShape", 625_000_000), "'ConstantOfShape'"),
    "expand 1.6 GB": (lambda: generator("Expand", 400_000_000), "'Expand'"),
    "200000 identity nodes": (many_nodes, "more than 2000 operators"),
    "if with subgraphs": (if_subgraph, "'If'"),
    "20000 weights": (many_weights, "more than 8000 fields"),
    "a million channels": (wide_layer, "values per crop"),
    "padding of 10000": (padded, "pads beyond 16"),
    "external weights.bin": (external, "external data"),
    "custom domain": (custom_domain, "custom operator domain 'com.evil'"),
    "opset 99": (lambda: tiny(opset=99), "operator set 99"),
    "ir_version 99": (lambda: tiny(ir=99), "IR version 99"),
    "nan weights": (lambda: weights(np.nan), "NaN"),
    "inf in the first convolution": (lambda: weights(np.inf), "NaN, infinite"),
    "input of rank 3": (lambda: shaped_input(dims=("n", 1, 64)), "input"),
    "input float64": (lambda: shaped_input(elem=TensorProto.DOUBLE), "input"),
    "input of 3 channels": (lambda: shaped_input(dims=("n", 3, 64, 64)), "input"),
    "input 0x0": (lambda: shaped_input(dims=("n", 1, 0, 0)), "size of 0"),
    "input 20000x20000": (lambda: shaped_input(dims=("n", 1, 20000, 20000)), "per image"),
    "output int64": (lambda: shaped_output(elem=TensorProto.INT64), "output"),
    "output of rank 3": (lambda: shaped_output(dims=("n", WIDTH, 1)), "output"),
    "output ignoring the batch": (batch_ignored, "whatever the number of images"),
}


@functools.lru_cache(maxsize=None)
def case_bytes(name: str) -> tuple[bytes, str]:
    build, needle = CASES[name]
    data = build()
    assert onnx.ModelProto.FromString(data) is not None
    return data, needle


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def plant_in_model(folder: Path, data: bytes, *, sha256: str | None = None, width: int = WIDTH,
                   runtime: str | None = None) -> None:
    """Put ``data`` in the saved model ``folder`` (a network model) as its network, the rest made to fit (the
    classifier's width, the manifest, ``sha256_`` = the bytes' own unless ``sha256`` names another), run by
    ``runtime`` when given."""
    from classmap_gui.core.store.format import array_manifest

    doc = json.loads((folder / "model.json").read_text())
    with np.load(folder / "arrays.npz", allow_pickle=False) as z:
        arrays = dict(z)
    arrays["features/state.onnx_"] = np.frombuffer(data, np.uint8)
    arrays["classifier/state.coef_"] = np.random.default_rng(0).normal(size=(3, width)).astype(np.float32)
    state = doc["features"]["state"]
    state["sha256_"], state["n_features_out_"] = sha256 or sha(data), width
    doc["classifier"]["state"]["n_features_in_"] = width
    if runtime:
        doc["features"]["params"]["runtime"] = runtime
    doc["arrays"] = array_manifest(arrays)
    np.savez(folder / "arrays.npz", **arrays)
    (folder / "model.json").write_text(json.dumps(doc))


def plant_in_export(folder: Path, data: bytes, *, sha256: str | None = None, width: int = WIDTH) -> None:
    """The same for an export folder (``features.onnx``, ``features.sha256``)."""
    from classmap_gui.core.store.format import array_manifest

    doc = json.loads((folder / "model.json").read_text())
    with np.load(folder / "arrays.npz", allow_pickle=False) as z:
        arrays = dict(z)
    arrays["features.onnx"] = np.frombuffer(data, np.uint8)
    arrays["classifier.coef"] = np.random.default_rng(0).normal(size=(3, width)).astype(np.float32)
    doc["features"].update(sha256=sha256 or sha(data), n_features=width, input_size=[64, 64])
    doc["arrays"] = array_manifest(arrays)
    np.savez(folder / "arrays.npz", **arrays)
    (folder / "model.json").write_text(json.dumps(doc))
