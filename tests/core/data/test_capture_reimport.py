"""Captured frames name their burst, so a folder of earlier captures imported again gets its capture
groups back and splits keep every burst on one side (older names stay readable, each its own group)."""
import cv2
import numpy as np

from classmap_gui.core.data import load_folder
from classmap_gui.core.data.capture_names import burst_of, capture_name, new_burst_token
from classmap_gui.core.train.training import TrainConfig, split_parts
from classmap_gui.core.project import Project


def _frame(rng, cls):
    img = np.full((24, 24), 40 + 80 * cls, np.uint8)
    return np.clip(img + rng.integers(0, 30, img.shape), 0, 255).astype(np.uint8)


def test_reimported_captures_keep_their_bursts(tmp_path):
    rng = np.random.default_rng(0)
    ws = Project(default_captures=lambda: tmp_path / "captures")
    ws.new_project((24, 24))
    for name in ("fist", "palm"):
        ws.add_class(name)
    taken = {}  # file name -> the burst it was taken in
    for cls in (0, 1):
        for b in range(4):                    # four bursts of five frames per class
            token = new_burst_token()
            for _ in range(5):
                p = ws.save_capture(cls, _frame(rng, cls), token)
                taken[p.name] = (cls, b)
    old = tmp_path / "captures" / "fist" / "capture-20250101-120000-00999.png"  # an older name, no burst
    cv2.imwrite(str(old), _frame(rng, 0))
    snap = ws.save_capture(1, _frame(rng, 1))                                   # a snapshot: no burst
    assert burst_of(old) is None and burst_of(snap) is None

    ims = load_folder(tmp_path / "captures", size=(24, 24))
    names = [p.rsplit("/", 1)[-1] for p in ims.sources]
    assert len(ims) == 42 and ims.groups is not None
    bursts = [taken.get(n, n) for n in names]
    # the same groups as the bursts taken: same burst <=> same group
    for i in range(len(ims)):
        same = np.array([bursts[j] == bursts[i] for j in range(len(ims))])
        assert np.array_equal(ims.groups == ims.groups[i], same), names[i]
    assert len(np.unique(ims.groups)) == 8 + 2

    cfg = TrainConfig(features="pixels", bank="ova-ridge", test_fraction=0.25, seed=0)
    parts = split_parts(ims.labels, cfg, ims.groups)
    assert not set(ims.groups[parts["train"]].tolist()) & set(ims.groups[parts["test"]].tolist())


def test_folders_without_burst_names_have_no_groups(tmp_path):
    rng = np.random.default_rng(1)
    for cls, name in enumerate(("a", "b")):
        (tmp_path / name).mkdir()
        for i in range(3):
            cv2.imwrite(str(tmp_path / name / f"capture-20250101-120000-{i:05d}.png"), _frame(rng, cls))
            cv2.imwrite(str(tmp_path / name / f"photo-b{i}.png"), _frame(rng, cls))  # not a capture name
    assert load_folder(tmp_path, size=(24, 24)).groups is None


def test_capture_names_round_trip():
    tok = new_burst_token()
    assert tok.isdigit() and len(tok) == 20
    assert burst_of(capture_name("20261130-171502", 7, tok)) == tok
    assert capture_name("20261130-171502", 7) == "capture-20261130-171502-00007.png"
