"""Colouring a map by a class's factors, by class, or by right/wrong."""
import numpy as np
import pytest

from classmap_gui.core.explore import class_factors as cf
from classmap_gui.core.data import glyph_pose, hand_pose


def _hand_names():
    return [hand_pose.class_name(s, *o) for s in ("V", "A") for o in hand_pose.orientations()[:4]]


def test_factors_are_found_for_pose_sets_only():
    f = cf.factors_of(_hand_names())
    assert f["shape"][:5] == ["V"] * 4 + ["A"] and f["yaw"].tolist()[:4] == [-60, -60, -60, -60]
    g = cf.factors_of([glyph_pose.class_name("A", 25, -30, 20), glyph_pose.class_name("b", 0, 0, -20)])
    assert g["shape"] == ["A", "b"] and g["yaw"].tolist() == [25, 0] and g["roll"].tolist() == [20, -20]
    assert cf.factors_of(["cat", "dog"]) is None
    assert cf.factors_of([]) is None
    assert cf.colour_choices(None) == ["class", "right/wrong"]
    assert cf.colour_choices(f)[:4] == ["shape", "yaw", "pitch", "roll"]


def test_colour_by_shape_and_by_angle():
    names = _hand_names()
    f = cf.factors_of(names)
    labels = np.array([0, 5, 7])
    g = cf.colouring("shape", names, labels, factors=f)
    assert sorted(g.names) == ["A", "V"] and not g.ordered
    assert len(set(g.classes[:4].tolist())) == 1 and g.classes[0] != g.classes[4]
    assert g.queries.tolist() == g.classes[labels].tolist()
    r = cf.colouring("roll", names, labels, factors=f)
    assert r.names == ["-20°", "+20°"] and r.ordered
    assert [r.names[k] for k in r.classes[:2]] == ["-20°", "+20°"]


def test_right_wrong_tells_orientation_slips_from_shape_mistakes():
    names = _hand_names()
    f = cf.factors_of(names)
    labels = np.array([0, 0, 1, 4])
    pred = np.array([0, 2, 1, 1])          # right; V->V other orientation; right; A->V wrong shape
    g = cf.colouring("right/wrong", names, labels, pred, f)
    assert [g.names[k] for k in g.queries] == ["right", "right shape, other orientation", "right", "wrong shape"]
    assert g.names[g.classes[0]] == "right shape, other orientation"  # a class takes its worst image
    assert g.names[g.classes[1]] == "right" and g.names[g.classes[4]] == "wrong shape"
    assert g.names[g.classes[7]] == "no image shown"
    plain = cf.colouring("right/wrong", ["a", "b", "c"], np.array([0, 1]), np.array([0, 2]))
    assert plain.names == ["right", "wrong", "no image shown"] and plain.classes.tolist() == [0, 1, 2]


def test_colouring_refuses_what_it_cannot_show():
    with pytest.raises(ValueError, match="no yaw"):
        cf.colouring("yaw", ["a", "b"], np.array([0]))
    with pytest.raises(ValueError, match="predicted"):
        cf.colouring("right/wrong", ["a", "b"], np.array([0]))
    with pytest.raises(ValueError, match="colour by"):
        cf.colouring("size", ["a", "b"], np.array([0]))
