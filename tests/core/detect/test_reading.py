"""Reading the found hand: a shape scored by its orientation classes together, "no hand" when the background
wins, the track's recent frames integrated, and the varied training style never inside the camera style."""
from __future__ import annotations

import numpy as np

from classmap_gui.core.data.hand_pose import class_name
from classmap_gui.core.detect.reading import HandReader, read_probabilities, shape_groups, softmax_scores, square_crop

NAMES = [class_name("V", 0, 0, 20), class_name("V", 30, 0, 20), class_name("V", 60, 0, 20),
         class_name("A", 0, 0, 20), "background"]


def test_a_shape_spread_over_its_orientations_beats_one_stronger_class():
    groups = shape_groups(NAMES)
    prob = np.array([0.25, 0.2, 0.15, 0.4, 0.0])           # "A" is the single best class, "V" has 0.6 in all
    r = read_probabilities(prob, *groups)
    assert r.found and r.shape == "V" and r.confidence == 0.6
    assert NAMES[r.label] == NAMES[0] and r.orientation == NAMES[0].partition(" · ")[2]


def test_the_background_winning_reads_no_hand():
    r = read_probabilities(np.array([0.1, 0.1, 0.1, 0.1, 0.6]), *shape_groups(NAMES))
    assert not r.found and r.shape is None


def test_a_persons_own_classes_are_their_own_shapes():
    groups, names, orient = shape_groups(["peace", "fist", "background"])
    r = read_probabilities(np.array([0.3, 0.6, 0.1]), groups, names, orient)
    assert r.shape == "fist" and r.orientation == ""


def test_softmax_spreads_over_the_evaluated_classes_only():
    p = softmax_scores(np.array([3, 1]), np.array([0.5, np.nan]), 5, 0.1)
    assert p[3] == 1.0 and p.sum() == 1.0


def test_the_track_integrates_recent_frames_and_a_jump_restarts_it(hand_detector):
    rd = HandReader(hand_detector, "brute_force", history=3)
    a, b = np.eye(hand_detector.n_classes)[0], np.eye(hand_detector.n_classes)[1]
    box = np.array([10, 10, 100, 100], np.float32)
    rd.integrate(a, box)
    mean = rd.integrate(b, box + 5)                           # the same hand, moved a little: averaged
    assert np.allclose(mean[:2], [0.5, 0.5])
    far = rd.integrate(b, box + 150)                          # somewhere else: a new track
    assert far[0] == 0 and far[1] == 1


def test_the_crop_repeats_the_edge_outside_the_frame():
    grey = np.tile(np.arange(100, dtype=np.uint8), (80, 1))
    crop = square_crop(grey, (-20, 10, 40, 40), (16, 16))
    assert crop.shape == (16, 16) and crop[:, 0].max() == 0   # left of the frame: column 0 repeated


def test_the_varied_training_style_stays_outside_every_camera_range():
    from classmap_gui.core.data.hand_style import CAMERA, VARIED

    for knob in ("light_angle", "ambient", "background_contrast", "blur", "noise", "jpeg_quality"):
        lo, hi = getattr(CAMERA, knob)
        for a, b in getattr(VARIED, knob):
            assert b < lo or a > hi, (knob, (a, b), (lo, hi))
    assert not set(VARIED.skins) & set(CAMERA.skins)


def test_a_crop_reading_names_each_frame_and_averages_its_history():
    """The Run panel's reading of one crop per frame (CropReading, what bench demo-reading measures): each frame
    alone by default for a model without reading settings; with a history, a one-frame flicker is outvoted."""
    from types import SimpleNamespace

    from classmap_gui.core.detect.reading import CropReading

    rec = SimpleNamespace(class_names=NAMES, metadata={})
    v, a = (np.array([0, 1]), np.array([1.0, 0.9])), (np.array([3, 4]), np.array([1.0, 0.0]))
    alone = CropReading(rec)
    assert alone.history == 1 and alone.read(*v).shape == "V" and alone.read(*a).shape == "A"
    held = CropReading(rec, history=3)
    held.read(*v)
    held.read(*v)
    assert held.read(*a).shape == "V"                       # two frames of V outweigh one of A
    held.reset()
    assert held.read(*a).shape == "A"                       # a new stream starts afresh
    assert not alone.read(np.array([4, 3]), np.array([1.0, 0.0])).found   # the background wins: no hand


def test_an_added_gesture_beats_a_shape_s_summed_mass_when_its_class_responds_more_under_the_fair_rule():
    names = [class_name("V", 0, 0, 20), class_name("V", 30, 0, 20), class_name("V", 60, 0, 20),
             class_name("A", 0, 0, 20), "my gesture", "background"]
    prob = np.array([0.22, 0.2, 0.18, 0.1, 0.3, 0.0])      # "V" sums 0.6, its best class 0.22; the gesture 0.3
    assert read_probabilities(prob, *shape_groups(names), rule="sum").shape == "V"
    r = read_probabilities(prob, *shape_groups(names), rule="fair")
    assert r.found and r.shape == "my gesture" and r.confidence == 0.3 and r.orientation == ""
    weaker = np.array([0.32, 0.2, 0.18, 0.1, 0.3, 0.0])     # the shape's best class responds more: the shape stays
    assert read_probabilities(weaker, *shape_groups(names), rule="fair").shape == "V"


def test_the_fair_rule_reads_the_shapes_alone_as_the_sum_does():
    rng = np.random.default_rng(0)
    for _ in range(50):     # a hand model without added classes (a one-orientation shape among them) reads the same
        prob = rng.dirichlet(np.ones(len(NAMES)))
        a, b = (read_probabilities(prob, *shape_groups(NAMES), rule=rule) for rule in ("sum", "fair"))
        assert (a.shape, a.label, a.confidence) == (b.shape, b.label, b.confidence)
    own = shape_groups(["peace", "fist", "background"])   # a person's own classes alone: unchanged too
    assert read_probabilities(np.array([0.3, 0.6, 0.1]), *own, rule="fair").shape == "fist"


def test_the_frame_pass_reading_names_a_rendered_hand_as_the_re_crop_does_without_running_the_features(
        hand_detector, detector_poses, monkeypatch):
    """crops 0 reads the windows the scan already classified (those that voted for the box, by their votes): the
    shape it names on rendered hand frames is the one the re-crop reading names, and the recogniser's features
    (the network, in a window-network model) are not run again for it."""
    from classmap_gui.core.data.hand_video import find_hand_frames
    from classmap_gui.core.detect.scanner import Scanner

    frames = [(f, lab) for f, lab, _ in find_hand_frames(poses=detector_poses, hold=0.4, move=0.2, seed=5)
              if lab is not None][::3]
    for method in ("classmap", "brute_force"):
        scanner = Scanner(hand_detector, method)
        recrop, frame_pass = HandReader(hand_detector, method, crops=1), HandReader(hand_detector, method, crops=0)
        results = [(f, lab, scanner.scan(f)) for f, lab in frames]
        said_recrop = [recrop.read(f, r).shape for f, _, r in results]
        calls = []
        monkeypatch.setattr(hand_detector, "transform", lambda X: calls.append(len(X)))
        said_pass = [frame_pass.read(f, r).shape for f, _, r in results]
        monkeypatch.undo()
        assert not calls, "the frame-pass reading ran the features again"
        found = [r.hand_found for _, _, r in results]
        assert np.mean(found) >= 0.75
        truth = [lab[0] for _, lab, _ in results]
        agree = np.mean([a == b for a, b, ok in zip(said_pass, said_recrop, found) if ok])
        right = np.mean([a == t for a, t, ok in zip(said_pass, truth, found) if ok])
        assert agree >= 0.8 and right >= 0.75, (method, agree, right)
        w = results[0][2].box_windows
        assert len(w.parts) == len(w.weights) >= 1 and np.isclose(w.weights.sum(), 1.0)


def test_a_frame_pass_reader_reads_a_result_without_windows_from_one_re_crop(hand_detector, detector_poses):
    from classmap_gui.core.data.hand_video import find_hand_frames
    from classmap_gui.core.detect.scanner import Scanner

    frame = next(f for f, lab, _ in find_hand_frames(poses=detector_poses, hold=0.4, move=0.2, seed=5) if lab)
    r = Scanner(hand_detector, "brute_force").scan(frame)
    one = HandReader(hand_detector, "brute_force", crops=1).read(frame, r)
    r.box_windows = None
    assert HandReader(hand_detector, "brute_force", crops=0).read(frame, r).shape == one.shape
