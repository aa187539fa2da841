"""The network allow-list: the product's own networks pass it, and what it states about them is what they are.

The hostile networks it refuses are the fuzz suite's (tests/fuzz/test_hostile_networks.py and the CLI and
export modules beside it); here, its reading of real files and its edges."""
from __future__ import annotations

import hashlib
from importlib import resources

import pytest

from classmap_gui.core.features.network_check import ALLOWED_OPS, check_network, fields
from classmap_gui.core.guards.read_limits import SettingError


def _hand() -> bytes:
    return resources.files("classmap_gui").joinpath("resources", "networks", "hand.onnx").read_bytes()


def test_the_shipped_hand_network_passes_and_is_read_as_it_is():
    data = _hand()
    info = check_network(data, hashlib.sha256(data).hexdigest(), kind="crop")
    assert info == {"kind": "crop", "input_hw": (64, 64), "width": 512, "nodes": 17, "channels": 1161,
                    "values_per_crop": 2 * 48 * 32 * 32}


def test_the_dense_window_network_passes(tmp_path):
    """Exported as ``classmap train-network --arch dense`` exports it (untrained: the graph is the same)."""
    torch = pytest.importorskip("torch")
    from classmap_gui.network_training_window import WindowNet, export_dense_onnx

    torch.manual_seed(0)
    export_dense_onnx(WindowNet(), tmp_path / "dense.onnx")
    info = check_network((tmp_path / "dense.onnx").read_bytes(), kind="dense")
    assert info["kind"] == "dense" and info["input_hw"] is None and info["width"] >= 64
    with pytest.raises(SettingError, match="a dense network .* where a crop network is needed"):
        check_network((tmp_path / "dense.onnx").read_bytes(), kind="crop")


def test_every_prefix_of_a_network_is_refused_in_one_line():
    data = _hand()
    for cut in (1, 7, len(data) // 2, len(data) - 1):
        with pytest.raises(SettingError) as err:
            check_network(data[:cut])
        assert "\n" not in str(err.value)


def test_the_recorded_digest_is_checked_before_anything_else():
    with pytest.raises(SettingError, match="SHA-256 .* differs"):
        check_network(_hand(), hashlib.sha256(b"another").hexdigest())
    with pytest.raises(SettingError, match="1 to"):
        check_network(b"")


def test_the_wire_reader_reads_what_protobuf_writes():
    onnx = pytest.importorskip("onnx")
    model = onnx.ModelProto.FromString(_hand())
    top = {f: v for f, _, v in fields(_hand())}
    assert top[1] == model.ir_version and bytes(top[2]).decode() == model.producer_name
    assert {n.op_type for n in model.graph.node} <= ALLOWED_OPS
