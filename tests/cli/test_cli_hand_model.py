"""``classmap hand-model``: builds a hand model where it is told (the app's folder by default) with its scan and
reading settings, which a Scanner built from the saved model then uses."""
import json

import pytest

from classmap_gui.cli import main


@pytest.mark.slow   # a whole build with its choice on a validation video: minutes on a loaded machine
def test_hand_model_builds_a_model_that_carries_its_scan_settings(tmp_path, capsys, monkeypatch):
    from classmap_gui.core.detect.pose_model import MODEL_ENV
    from classmap_gui.core.detect.scanner import Scanner
    from classmap_gui.core.recogniser import Recogniser

    monkeypatch.setenv(MODEL_ENV, str(tmp_path / "hands"))
    assert main(["hand-model", "--quick", "--json", "--set", "shapes=3,orientations=2,images_per_class=12,background=200,"
                 "hard_negatives=40,detector_scenes=4,p_sweep=2,d=3,reading_video_seeds=101,temperatures=0.05,"
                 "histories=1,crops=1,no_hand_frames=4,validation_video_seeds=101"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == str(tmp_path / "hands") and out["classes"] == 7 and out["cpu_seconds"] > 0
    rec = Recogniser.load(tmp_path / "hands")
    det = rec.metadata["detection"]
    sure = det["reading"].pop("unsure_below")        # calibrated on the validation videos: "sure" from there on
    # the Run panel's capture box: when it reads "no hand" and from where it is sure, chosen on demo-style videos
    margin, capture_sure = det["reading"].pop("no_hand_margin"), det["reading"].pop("capture_unsure_below")
    assert det["reading"].pop("capture_temperature") == 0.05        # the one candidate temperature
    assert det["reading"].pop("capture_context") == 0.25            # the quick build's one border: the network's
    assert det["reading"] == {"temperature": 0.05, "history": 1, "crops": 1} and 0.0 <= sure <= 1.0
    selection = rec.metadata["hand_model"]["selection"]
    assert selection["unsure_below"]["chosen"] == sure and selection["no_hand_margin"]["chosen"] == margin
    assert selection["capture_unsure_below"]["chosen"] == capture_sure and 0.0 <= capture_sure <= 1.0
    assert "seeds 201" in selection["no_hand_margin"]["split"]
    sc = Scanner(rec, "brute_force")
    assert sc.found_threshold == det["found_threshold"]["brute_force"] and list(sc.pyramid.sides) == det["sides"]
    assert sc.background_weight == det["background_weight"] and sc.vote_temperature == det["vote_temperature"]
