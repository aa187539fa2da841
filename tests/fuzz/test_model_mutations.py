"""Issue 26 item 7: >= 2 000 seeded single-value mutations of saved models of three kinds (one-vs-all
bank, ClassMap, compressive), loaded and used as `classmap predict` would, in-process: every one is
either refused at load with one clear line or loads and predicts. 0 internal errors, 0 hangs."""
from __future__ import annotations

import collections
import json

import numpy as np
import pytest

from classmap_gui.core.train.training import TrainConfig, train
from hostile_helpers import tiny_set
from model_mutations import mutated, mutations, outcome

KINDS = {
    "one-vs-all": TrainConfig(features="pixels", bank="ova-ridge", test_fraction=0.2, seed=0),
    "classmap": TrainConfig(features="pixels", bank="ova-ridge", classmap={"d": 3, "p": 3}, test_fraction=0.2, seed=0),
    "compressive": TrainConfig(features="pixels", bank="compressive", bank_params={"m": 32}, test_fraction=0.2,
                               seed=0),
}
PER_KIND = 700


@pytest.mark.parametrize("kind", list(KINDS))
def test_single_value_mutations_are_refused_at_load_or_work(kind, tmp_path):
    data = tiny_set(n_per_class=10, classes=tuple("abcdef"))
    folder = train(data, KINDS[kind]).recogniser.save(tmp_path / "m")
    doc = json.loads((folder / "model.json").read_text())
    pairs = mutations(doc, PER_KIND, seed=26)
    assert len(pairs) == PER_KIND  # 3 x 700 = 2 100 mutations in all
    images = data.images[::7][:4]
    counts, bad = collections.Counter(), []
    for path, value in pairs:
        (folder / "model.json").write_text(json.dumps(mutated(doc, path, value)))
        result = outcome(folder, images)
        counts[result.split(":")[0]] += 1
        if result.startswith(("internal", "hang")):
            bad.append(f"{'/'.join(map(str, path))} = {value!r}: {result}")
    assert not bad, f"{len(bad)} of {PER_KIND} mutations end badly:\n" + "\n".join(bad[:20])
    assert counts["refused"] > PER_KIND // 2 and counts["works"] > 0  # the mutations do reach the checks


def test_the_named_values_of_the_survey_are_refused_with_one_clear_line(tmp_path):
    from classmap_gui.core.errors import ModelFormatError
    from classmap_gui.core.recogniser import Recogniser

    data = tiny_set(n_per_class=10, classes=tuple("abcdef"))
    folder = train(data, KINDS["classmap"]).recogniser.save(tmp_path / "m")
    doc = json.loads((folder / "model.json").read_text())
    for path, value in [(("classmap", "params", "p"), 0), (("classmap", "params", "p"), -1),
                        (("classmap", "params", "refine"), []),
                        (("classifier", "state", "n_features_in_"), -np.inf)]:
        (folder / "model.json").write_text(json.dumps(mutated(doc, path, value)))
        with pytest.raises(ModelFormatError, match="model file is invalid") as exc:
            Recogniser.load(folder)
        assert "\n" not in str(exc.value)


@pytest.mark.parametrize("kind", list(KINDS))
def test_single_array_value_mutations_are_refused_at_load_or_work(kind, tmp_path):
    """One element of one saved array (first or last) set to -1, 0, a huge or non-finite value."""
    from classmap_gui.core.store.npz import read_npz, write_npz

    data = tiny_set(n_per_class=10, classes=tuple("abcdef"))
    folder = train(data, KINDS[kind]).recogniser.save(tmp_path / "m")
    doc = json.loads((folder / "model.json").read_text())
    arrays = {k: np.array(v) for k, v in read_npz(folder / "arrays.npz", doc["arrays"]).items()}
    images = data.images[::7][:4]
    bad, tried = [], 0
    for key, arr in arrays.items():
        for at in {0, arr.size - 1} if arr.size else ():
            for value in (-1, 0, 7, 2 ** 31 - 1, 1e30, np.nan, np.inf, -np.inf):
                changed = dict(arrays, **{key: arr.copy()})
                with np.errstate(all="ignore"):
                    cast = np.array(value).astype(arr.dtype)
                if not np.isnan(value) and cast != value:
                    continue  # not representable in this dtype
                changed[key].reshape(-1)[at] = cast
                with open(folder / "arrays.npz", "wb") as fh:
                    write_npz(fh, changed)
                tried += 1
                result = outcome(folder, images)
                if result.startswith(("internal", "hang")):
                    bad.append(f"{key}[{at}] = {value!r}: {result}")
    assert tried > 30 and not bad, "\n".join(bad[:20])
