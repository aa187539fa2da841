"""Issue 40 item 6: a model large enough to be memory-mapped keeps predicting when its ``arrays.npz`` is
overwritten in place while in use (what ``cp`` and ``rsync --inplace`` do): the mapped members are a
private copy, so the rewrite cannot end the program with SIGBUS."""
from __future__ import annotations

import pytest
from measured import run

pytestmark = pytest.mark.timeout(600)

SCRIPT = """
import numpy as np
from classmap_gui.core.classify.banks.ridge_moments import ova_ridge_bank
from classmap_gui.core.features.pixels import PixelFeatures
from classmap_gui.core.recogniser import Recogniser
from classmap_gui.core.store import npz as npz_module
npz_module.READ_SHARE = 0.0  # as on a machine with too little memory to read the model: large members are mapped
rng = np.random.default_rng(0)
C, D = 70_000, 64  # 18 MB of weights: above the smallest member that is mapped
bank = ova_ridge_bank(rng.standard_normal((C, D)).astype(np.float32), rng.standard_normal(C).astype(np.float32), 1.0)
rec = Recogniser(PixelFeatures().fit(np.zeros((1, 8, 8), np.uint8)), bank, None, [f"c{{i}}" for i in range(C)],
                 (8, 8), True)
path = rec.save({path!r})
images = rng.integers(0, 256, (3, 8, 8), dtype=np.uint8)
before = rec.predict(images, top=3).top_classes
loaded = Recogniser.load(path)
assert any(isinstance(v, np.memmap) for v in vars(loaded.classifier).values()), "nothing was mapped"
first = loaded.predict(images, top=3).top_classes
npz = path / "arrays.npz"
size = npz.stat().st_size
with open(npz, "r+b") as fh:  # what cp does: the same file, truncated, then rewritten
    fh.truncate(0)
    fh.flush()
    fh.write(bytes(size // 3))
after = loaded.predict(images, top=3).top_classes
print("same" if np.array_equal(before, first) and np.array_equal(before, after) else "different")
"""


def test_a_mapped_model_overwritten_in_place_mid_predict_keeps_predicting(tmp_path):
    r = run(["python", "-c", SCRIPT.format(path=str(tmp_path / "m"))], timeout=300)
    assert r.code == 0 and r.out.strip() == "same", (r.code, r.err[-1500:])  # -7: SIGBUS
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["arrays.npz", "model.json"]  # the copy left no file
