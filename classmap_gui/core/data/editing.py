"""Edits of an :class:`ImageSet` a person makes in the app: classes added, renamed, deleted; images
moved, deleted, or added from a camera or files of any size and colour.

Every function returns a new ImageSet and leaves its input unchanged (the arrays of an ImageSet may
be shared with a trained model's test split or a save in progress on another thread). Names are
checked here so the app and any script refuse the same things with the same message.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import DataError
from .. import image_ops
from ..image_ops import fit_size
from .imageset import ImageSet

#: smallest and largest side of a project's images (recognition works on small images; a 1x1 or
#: 8000x8000 project is a typo, not a choice)
MIN_SIDE, MAX_SIDE = 8, 512


def empty_imageset(size: tuple[int, int], *, colour: bool = False, name: str = "") -> ImageSet:
    """A set with no classes and no images, for a project that starts from captures.

    ``size`` is (height, width); images added later are brought to it, and to grey unless ``colour``.
    """
    h, w = (int(v) for v in size)
    if not (MIN_SIDE <= h <= MAX_SIDE and MIN_SIDE <= w <= MAX_SIDE):
        raise DataError(f"image size {w}x{h} is outside {MIN_SIDE}..{MAX_SIDE} pixels a side; "
                        "recognition works on small images (32 to 128 pixels is typical)")
    shape = (0, h, w, 3) if colour else (0, h, w)
    return ImageSet(np.zeros(shape, np.uint8), np.zeros(0, np.int64), [], None, [], name)


def check_class_name(imageset: ImageSet, name: str, *, except_class: int = -1) -> str:
    """``name`` stripped; DataError when it is empty or another class already has it."""
    name = str(name).strip()
    if not name:
        raise DataError("a class needs a name")
    if "/" in name or "\\" in name or name in (".", ".."):
        raise DataError(f"{name!r} cannot be a class name: it would be a folder path. Leave out / and \\.")
    for c, other in enumerate(imageset.class_names):
        if other == name and c != except_class:
            raise DataError(f"there is already a class named {name!r}")
    return name


def _check_class(imageset: ImageSet, cls: int) -> int:
    cls = int(cls)
    if not 0 <= cls < imageset.n_classes:
        raise DataError(f"there is no class number {cls} (the set has {imageset.n_classes})")
    return cls


def _with(imageset: ImageSet, **changes) -> ImageSet:
    fields = {"images": imageset.images, "labels": imageset.labels, "class_names": list(imageset.class_names),
              "sources": imageset.sources, "skipped": list(imageset.skipped), "name": imageset.name,
              "groups": imageset.groups}
    fields.update(changes)
    return ImageSet(**fields)


def _sources(imageset: ImageSet, keep: np.ndarray) -> list[str] | None:
    return None if imageset.sources is None else [imageset.sources[i] for i in keep]


def _groups(imageset: ImageSet, keep: np.ndarray) -> np.ndarray | None:
    return None if imageset.groups is None else imageset.groups[keep]


#: ``add_images(..., group=NEW_GROUP)``: the added images are one new capture group (a burst)
NEW_GROUP = "new"


def next_group(imageset: ImageSet) -> int:
    """A capture-group id no image of ``imageset`` has yet."""
    ids = imageset.group_ids()
    return int(ids.max()) + 1 if len(ids) else 0


def add_class(imageset: ImageSet, name: str) -> ImageSet:
    """A new, empty class at the end (label ``n_classes``)."""
    return _with(imageset, class_names=list(imageset.class_names) + [check_class_name(imageset, name)])


def rename_class(imageset: ImageSet, cls: int, name: str) -> ImageSet:
    """A copy of ``imageset`` with class ``cls`` named ``name``; the name is checked like a new class's."""
    cls = _check_class(imageset, cls)
    names = list(imageset.class_names)
    names[cls] = check_class_name(imageset, name, except_class=cls)
    return _with(imageset, class_names=names)


def delete_class(imageset: ImageSet, cls: int) -> ImageSet:
    """Drop a class and its images; the classes after it move down one label."""
    cls = _check_class(imageset, cls)
    keep = np.flatnonzero(imageset.labels != cls)
    labels = imageset.labels[keep]
    labels = labels - (labels > cls)
    names = [n for i, n in enumerate(imageset.class_names) if i != cls]
    return _with(imageset, images=imageset.images[keep], labels=labels, class_names=names,
                 sources=_sources(imageset, keep), groups=_groups(imageset, keep))


def _index(imageset: ImageSet, index) -> np.ndarray:
    idx = np.unique(np.asarray(index, dtype=np.int64).ravel())
    if len(idx) and (idx[0] < 0 or idx[-1] >= len(imageset)):
        raise DataError(f"image numbers must lie in 0..{len(imageset) - 1}")
    return idx


def delete_images(imageset: ImageSet, index) -> ImageSet:
    """Drop the images at ``index`` (int array); classes stay, even when left empty."""
    keep = np.setdiff1d(np.arange(len(imageset)), _index(imageset, index))
    return _with(imageset, images=imageset.images[keep], labels=imageset.labels[keep],
                 sources=_sources(imageset, keep), groups=_groups(imageset, keep))


def move_images(imageset: ImageSet, index, cls: int) -> ImageSet:
    """Give the images at ``index`` the label ``cls``."""
    cls = _check_class(imageset, cls)
    labels = imageset.labels.copy()
    labels[_index(imageset, index)] = cls
    return _with(imageset, labels=labels)


def conform(imageset: ImageSet, images: Sequence[np.ndarray]) -> np.ndarray:
    """Frames of any size, grey or RGB uint8, brought to the set's size and colour: ``(k, h, w[, 3])`` uint8."""
    h, w = imageset.image_size
    out = []
    for img in images:
        img = np.asarray(img)
        if img.dtype != np.uint8 or img.ndim not in (2, 3) or (img.ndim == 3 and img.shape[2] != 3):
            raise DataError(f"an image must be uint8 grey (h, w) or RGB (h, w, 3), got {img.dtype} {img.shape}")
        out.append(fit_size(image_ops.conform(img, not imageset.is_color), (h, w)))
    shape = (0, h, w, 3) if imageset.is_color else (0, h, w)
    return np.stack(out).astype(np.uint8, copy=False) if out else np.zeros(shape, np.uint8)


def add_images(imageset: ImageSet, cls: int, images: Sequence[np.ndarray],
               sources: Sequence[str] | None = None, group: int | str | None = None) -> ImageSet:
    """Append ``images`` (any size/colour, see :func:`conform`) to class ``cls``; ``sources`` name their files.

    ``group``: None, each new image is its own capture group; :data:`NEW_GROUP`, they are one new group
    (a capture burst); an int, they join that group (more frames of the same video)."""
    cls = _check_class(imageset, cls)
    new = conform(imageset, images)
    if not len(new):
        return imageset
    src = None
    if imageset.sources is not None or sources is not None:
        src = list(imageset.sources or [""] * len(imageset)) + list(sources or [""] * len(new))
    groups = imageset.groups
    if group is not None or groups is not None:
        first = next_group(imageset)
        if group is None:
            added = np.arange(first, first + len(new), dtype=np.int64)
        elif group == NEW_GROUP:
            added = np.full(len(new), first, np.int64)
        elif isinstance(group, (int, np.integer)) and not isinstance(group, bool) and group >= 0:
            added = np.full(len(new), int(group), np.int64)
        else:
            raise DataError(f"group must be None, {NEW_GROUP!r} or a non-negative group id, got {group!r}")
        groups = np.concatenate([imageset.group_ids(), added])
    return _with(imageset, images=np.concatenate([imageset.images, new]),
                 labels=np.concatenate([imageset.labels, np.full(len(new), cls, np.int64)]), sources=src,
                 groups=groups)
