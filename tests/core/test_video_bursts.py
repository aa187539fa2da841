"""Bursts of a video by what changes in it: still frames are one burst, a changed picture starts another,
the same frame met again is a repeat, and a picture like an earlier burst's first frame joins that burst."""
import numpy as np

from classmap_gui.core.data.video_bursts import ChangeBursts


def _scene(x: int, level: int = 220, noise: int = 0, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    img = np.full((64, 64, 3), 40, np.uint8)
    img[20:44, x:x + 16] = level
    return np.clip(img.astype(np.int64) + rng.integers(0, noise + 1, img.shape), 0, 255).astype(np.uint8)


def test_still_frames_one_burst_a_moved_picture_another_and_repeats_flagged():
    cb = ChangeBursts()
    still = [cb.assign(_scene(4, noise=6, seed=s)) for s in range(5)]  # sensor noise only
    assert [b for b, _ in still] == [0] * 5 and not any(r for _, r in still)
    assert cb.assign(_scene(40)) == (1, False)                     # the object moved: a new burst
    assert cb.assign(_scene(40)) == (1, True)                      # the same frame again (a loop)
    assert cb.assign(_scene(4, level=210)) == (0, False)           # like the first burst again: joins it
    assert cb.n_bursts == 2


def test_grey_frames_and_a_stricter_threshold():
    grey = [_scene(4)[..., 0], _scene(6)[..., 0], _scene(8)[..., 0]]
    loose, strict = ChangeBursts(), ChangeBursts(change=1.0)
    assert {loose.assign(g)[0] for g in grey} == {0}
    assert len({strict.assign(g)[0] for g in grey}) == 3
