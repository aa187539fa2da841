"""The window network's own class head as the hand model's bank (``network-head``, issue 45): each class scored by
the head's row for it, a class added later put on the head's scale, refused names and files said in one line."""
import numpy as np
import pytest

from classmap_gui.core.classify.banks.head import NetworkHeadBank
from classmap_gui.core.classify.banks.ova import OneVsAllRidge
from classmap_gui.core.errors import ConfigError, ModelFormatError
from classmap_gui.core.features.network_head import network_head


@pytest.fixture(scope="module")
def crops():
    """Window-network features of generated crops (with their context) of 3 shapes x 2 orientations + clutter,
    labels 0..6 and their names (the background class last), plus crops of a fourth shape."""
    from classmap_gui.core.data.hand_pose import generate_hand_pose
    from classmap_gui.core.data.hand_style import VARIED
    from classmap_gui.core.data.imageset import BACKGROUND_CLASS
    from classmap_gui.core.detect.background import background_images
    from classmap_gui.core.detect.window_crops import context_style
    from classmap_gui.core.features.network import WindowNetworkFeatures
    from classmap_gui.core.features.network_input import CROP

    style = context_style(VARIED)
    ims = generate_hand_pose(shapes="5,V,A", orientations=2, images_per_class=14, style=style, size=(CROP, CROP),
                             seed=3)
    other = generate_hand_pose(shapes="Y", orientations=2, images_per_class=20, style=style, size=(CROP, CROP), seed=4)
    bg = background_images(14, (CROP, CROP), seed=5)
    f = WindowNetworkFeatures().fit(ims.images[:1])
    X = f.transform(np.concatenate([ims.images, bg]))
    y = np.r_[ims.labels, np.full(len(bg), ims.n_classes)]
    return X, y, list(ims.class_names) + [BACKGROUND_CLASS], f.transform(other.images)


def test_each_class_is_scored_by_the_networks_own_head_row(crops):
    X, y, names, _ = crops
    bank = NetworkHeadBank(class_names=names).fit(X, y)
    head_names, W, b = network_head("hand-window")
    rows = [head_names.tolist().index(n) for n in names]
    np.testing.assert_allclose(bank.decision_function(X), X @ W[rows].T + b[rows], rtol=1e-5, atol=1e-4)
    assert np.mean(bank.predict(X) == y) >= 0.8            # it names the crops it was never fitted to
    assert isinstance(bank.smoother(10.0), OneVsAllRidge) and bank.smoother(10.0).alpha == 10 * bank.alpha_


def test_a_class_the_head_does_not_know_is_refused_by_name(crops):
    X, y, names, _ = crops
    with pytest.raises(ConfigError, match="'my own sign'.*ova-ridge"):
        NetworkHeadBank(class_names=names[:-1] + ["my own sign"]).fit(X, y)
    with pytest.raises(ConfigError, match="reads 512 features"):
        NetworkHeadBank(class_names=names).fit(X[:, :100], y)


def test_a_class_added_later_is_named_on_its_own_crops_and_the_heads_classes_stay(crops):
    X, y, names, Z = crops
    bank = NetworkHeadBank(class_names=names).fit(X, y)
    W0, b0 = bank.coef_.copy(), bank.intercept_.copy()
    w, c = bank.new_classifier(Z[::2])                                  # what add_class will add, not added
    bank.add_class(len(names), Z[::2])
    np.testing.assert_array_equal(bank.coef_[:-1], W0)
    np.testing.assert_array_equal(bank.intercept_[:-1], b0)
    assert np.mean(bank.predict(Z[1::2]) == len(names)) >= 0.8          # its own held-out crops
    assert np.mean(bank.predict(X) == len(names)) <= 0.1               # it seldom takes the others'
    # the held-out check (new_class.closeness) scores the classifier add_class adds: on the head's scale
    np.testing.assert_allclose(w, bank.coef_[-1], rtol=1e-4, atol=1e-6)
    assert c == pytest.approx(bank.intercept_[-1], abs=1e-5) and bank.head_scale_ > 1


def test_saved_and_loaded_it_scores_the_same(crops):
    from classmap_gui.core.store.serial import dump_estimator, load_estimator

    X, y, names, _ = crops
    bank = NetworkHeadBank(class_names=names).fit(X, y)
    arrays: dict = {}
    spec = dump_estimator(bank, arrays, "c")
    back = load_estimator(spec, arrays)
    assert spec["type"] == "network-head" and back.head_scale_ == bank.head_scale_
    np.testing.assert_array_equal(back.decision_function(X), bank.decision_function(X))


def test_a_missing_or_damaged_head_file_is_said_in_one_line(tmp_path, crops):
    X, y, names, _ = crops
    net = tmp_path / "mine.onnx"
    with pytest.raises(ConfigError, match="no class head.*mine-head.npz"):
        NetworkHeadBank(network=str(net), class_names=names).fit(X, y)
    (tmp_path / "mine-head.npz").write_bytes(b"PK\x03\x04 not a zip at all")
    with pytest.raises(ModelFormatError, match="mine-head.npz: not a class head"):
        network_head(str(net))
    np.savez(tmp_path / "mine-head.npz", classes=np.array(["a", "b"]), coef=np.zeros((3, 4), np.float32),
             intercept=np.zeros(2, np.float32))
    with pytest.raises(ModelFormatError, match="do not fit together"):
        network_head(str(net))
