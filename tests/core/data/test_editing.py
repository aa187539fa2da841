"""ImageSet edits without a window: classes and images change as a person expects, inputs untouched."""
import numpy as np
import pytest

from classmap_gui.core.data import ImageSet
from classmap_gui.core.data import editing
from classmap_gui.core.errors import DataError


def _set():
    images = np.arange(6 * 8 * 8, dtype=np.uint8).reshape(6, 8, 8)
    return ImageSet(images, [0, 0, 1, 1, 2, 2], ["a", "b", "c"], [f"f{i}" for i in range(6)])


def test_empty_project_takes_captures_of_any_size_and_colour():
    ims = editing.empty_imageset((32, 32), colour=False, name="webcam")
    assert len(ims) == 0 and ims.n_classes == 0 and ims.image_size == (32, 32) and not ims.is_color
    ims = editing.add_class(ims, "fist")
    frame = np.full((120, 160, 3), 200, np.uint8)  # a colour webcam frame
    ims = editing.add_images(ims, 0, [frame, frame[:50, :50]], ["x.png", "y.png"])
    assert ims.images.shape == (2, 32, 32) and ims.counts().tolist() == [2]
    assert ims.sources == ["x.png", "y.png"]
    colour = editing.add_images(editing.add_class(editing.empty_imageset((16, 16), colour=True), "a"), 0,
                                [np.zeros((20, 20), np.uint8)])
    assert colour.images.shape == (1, 16, 16, 3)


@pytest.mark.parametrize("size", [(1, 1), (8000, 8000), (4, 64)])
def test_absurd_image_sizes_are_refused(size):
    with pytest.raises(DataError, match="outside"):
        editing.empty_imageset(size)


def test_names_are_checked():
    ims = _set()
    for bad, msg in (("  ", "needs a name"), ("a", "already"), ("x/y", "folder path")):
        with pytest.raises(DataError, match=msg):
            editing.add_class(ims, bad)
    assert editing.rename_class(ims, 0, " a ").class_names[0] == "a"  # its own name is fine
    with pytest.raises(DataError, match="already"):
        editing.rename_class(ims, 0, "b")


def test_delete_class_relabels_and_keeps_sources_aligned():
    ims = _set()
    out = editing.delete_class(ims, 1)
    assert out.class_names == ["a", "c"] and out.labels.tolist() == [0, 0, 1, 1]
    assert out.sources == ["f0", "f1", "f4", "f5"]
    np.testing.assert_array_equal(out.images[2], ims.images[4])
    assert ims.n_classes == 3 and len(ims) == 6  # the input is unchanged


def test_move_and_delete_images():
    ims = _set()
    moved = editing.move_images(ims, [0, 4], 1)
    assert moved.counts().tolist() == [1, 4, 1] and ims.counts().tolist() == [2, 2, 2]
    gone = editing.delete_images(moved, [1, 1, 2])
    assert gone.counts().tolist() == [0, 3, 1] and gone.sources == ["f0", "f3", "f4", "f5"]
    with pytest.raises(DataError, match="image numbers"):
        editing.delete_images(ims, [6])
    with pytest.raises(DataError, match="no class number"):
        editing.move_images(ims, [0], 3)
