"""A model saved before ClassMap became a scikit-learn estimator (main at d265134: ClassMap params without
``estimator``/``embedding_fraction``, references from a separate bank) still loads and predicts as it did."""
import json
from pathlib import Path

import numpy as np

from classmap_gui.core.recogniser import Recogniser

FIXTURE = Path(__file__).parent / "fixtures" / "classmap-model-d265134"


def test_a_model_saved_in_the_previous_format_loads_and_predicts_as_before():
    rec = Recogniser.load(FIXTURE)
    want = json.loads(FIXTURE.with_suffix(".expected.json").read_text())
    assert rec.classmap.estimator is None and rec.classmap.reference_coef_ is not None
    assert rec.classmap.estimator_ is rec.classifier                 # a complete estimator once loaded
    res = rec.predict(np.array(want["images"], np.uint8), top=2)
    np.testing.assert_array_equal(res.top_classes, want["top_classes"])
    np.testing.assert_allclose(res.top_scores, want["top_scores"], rtol=1e-6)
    images = np.array(want["images"], np.uint8)
    assert np.array_equal(rec.classmap.predict(rec.transform(images)), res.labels)   # scikit-learn's predict


def test_a_model_saved_before_the_ridge_statistics_were_kept_says_add_class_needs_a_retrained_model():
    import pytest

    from classmap_gui.core.errors import ConfigError

    rec = Recogniser.load(FIXTURE)
    assert not hasattr(rec.classifier, "gram_")
    with pytest.raises(ConfigError, match="retrain"):
        rec.add_class("new", np.zeros((4, 6, 6), np.uint8))
    assert rec.n_classes == 4 and rec.class_examples == {}           # nothing changed
