"""`ImageSet`: the images a user brings, as one uint8 array with labels and class names."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import DataError
from ..plain_text import breaks_line

#: Longest class name (characters); names end up in file names and one-line outputs.
MAX_CLASS_NAME = 200
#: The class that means "no object here": detection rejects windows it wins (trained from clutter crops
#: and from images a person captures or files under this name); the Capture panel adds it in one click.
BACKGROUND_CLASS = "background"


def printable(name: str) -> str:
    """``name`` quoted for a message, with control characters and undecodable bytes shown escaped."""
    return repr(name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")) \
        if any(0xDC80 <= ord(c) <= 0xDCFF for c in name) else repr(name)


def check_class_name(name: object, where: str = "class name") -> str:
    """``name`` when it can be a class name, else DataError saying why.

    A class name must be text, non-empty, not only spaces, valid UTF-8 (a folder name with bytes
    that are not is refused), without newlines or other control characters (they would break the
    one-name-per-line ``labels.txt`` of an export and one-line outputs), at most
    :data:`MAX_CLASS_NAME` characters.
    """
    if not isinstance(name, str):
        raise DataError(f"{where} {name!r}: a class name must be text")
    if not name.strip():
        raise DataError(f"{where} {name!r}: a class name cannot be empty")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise DataError(f"{where} {printable(name)}: the name is not valid UTF-8; rename it") from None
    if breaks_line(name):
        raise DataError(f"{where} {name!r}: a class name cannot hold newlines or other control characters")
    if len(name) > MAX_CLASS_NAME:
        raise DataError(f"{where} {name[:40]!r}...: a class name is at most {MAX_CLASS_NAME} characters")
    return name


def check_class_names(names, where: str = "class names") -> list[str]:
    """Every name checked by :func:`check_class_name`, and no name twice."""
    names = list(names)
    for n in names:
        check_class_name(n, where)
    seen: set[str] = set()
    dup = next((n for n in names if n in seen or seen.add(n)), None)
    if dup is not None:
        raise DataError(f"{where}: {dup!r} appears twice; class names must differ")
    return names


@dataclass
class ImageSet:
    """A labelled set of equally sized images.

    images: ``(n, h, w)`` uint8 grey or ``(n, h, w, 3)`` uint8 RGB.
    labels: ``(n,)`` int64, values in ``[0, len(class_names))``.
    class_names: one name per class, in label order.
    sources: the file each image came from, when loaded from files (else ``None``).
    skipped: ``(path, reason)`` for every file that could not be read.
    groups: ``(n,)`` int64 capture group of each image (frames of one capture burst or one video share an
    id, so training keeps them on one side of its split), or ``None``: every image is its own group.
    """

    images: np.ndarray
    labels: np.ndarray
    class_names: list[str]
    sources: list[str] | None = None
    skipped: list[tuple[str, str]] = field(default_factory=list)
    name: str = ""
    groups: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.images = np.asarray(self.images)
        self.labels = np.asarray(self.labels, dtype=np.int64)
        self.class_names = check_class_names([str(c) for c in self.class_names], f"image set {self.name!r}")
        if self.images.dtype != np.uint8:
            raise DataError(f"image set {self.name!r}: images must be uint8, got {self.images.dtype}")
        if self.images.ndim not in (3, 4) or (self.images.ndim == 4 and self.images.shape[3] != 3):
            raise DataError(f"image set {self.name!r}: images must be (n,h,w) or (n,h,w,3), got {self.images.shape}")
        if self.labels.shape != (len(self.images),):
            raise DataError(f"image set {self.name!r}: {len(self.labels)} labels for {len(self.images)} images")
        if len(self.labels) and (self.labels.min() < 0 or self.labels.max() >= len(self.class_names)):
            raise DataError(f"image set {self.name!r}: labels outside [0, {len(self.class_names)})")
        if self.sources is not None and len(self.sources) != len(self.images):
            raise DataError(f"image set {self.name!r}: {len(self.sources)} sources for {len(self.images)} images")
        if self.groups is not None:
            self.groups = np.asarray(self.groups)
            if self.groups.shape != (len(self.images),) or (len(self.groups) and (
                    self.groups.dtype.kind not in "iu" or self.groups.min() < 0)):
                raise DataError(f"image set {self.name!r}: groups must be {len(self.images)} non-negative "
                                f"integers (one capture group per image), got {self.groups.dtype} {self.groups.shape}")
            self.groups = self.groups.astype(np.int64, copy=False)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def n_classes(self) -> int:
        """Number of classes (named ones, including classes without images)."""
        return len(self.class_names)

    @property
    def image_size(self) -> tuple[int, int]:
        """(height, width)."""
        return int(self.images.shape[1]), int(self.images.shape[2])

    @property
    def is_color(self) -> bool:
        """True for colour images ``(n, h, w, 3)``, False for grey ``(n, h, w)``."""
        return self.images.ndim == 4

    def group_ids(self) -> np.ndarray:
        """The capture group of every image, ``(n,)`` int64: :attr:`groups`, or ``0..n-1`` when there are none."""
        return self.groups if self.groups is not None else np.arange(len(self), dtype=np.int64)

    @property
    def has_bursts(self) -> bool:
        """True when some capture group holds more than one image (then splits keep groups together)."""
        return self.groups is not None and len(np.unique(self.groups)) < len(self.groups)

    def counts(self) -> np.ndarray:
        """Images per class, ``(n_classes,)`` int64."""
        return np.bincount(self.labels, minlength=self.n_classes)

    def subset(self, index) -> "ImageSet":
        """The images at ``index`` (integer array or boolean mask), same classes."""
        index = np.asarray(index)
        if index.dtype == bool:
            index = np.flatnonzero(index)
        return ImageSet(
            images=self.images[index],
            labels=self.labels[index],
            class_names=list(self.class_names),
            sources=None if self.sources is None else [self.sources[i] for i in index],
            skipped=[],
            name=self.name,
            groups=None if self.groups is None else self.groups[index],
        )

    def select_classes(self, classes) -> "ImageSet":
        """The images of the given classes only, relabelled ``0..len(classes)-1`` in the given order."""
        classes = np.asarray(classes, dtype=np.int64)
        if classes.size == 0 or classes.min() < 0 or classes.max() >= self.n_classes or \
                len(np.unique(classes)) != len(classes):
            raise DataError(f"image set {self.name!r}: class selection must be distinct indices in [0, {self.n_classes})")
        relabel = np.full(self.n_classes, -1, np.int64)
        relabel[classes] = np.arange(len(classes))
        keep = np.flatnonzero(relabel[self.labels] >= 0)
        return ImageSet(self.images[keep], relabel[self.labels[keep]], [self.class_names[c] for c in classes],
                        None if self.sources is None else [self.sources[i] for i in keep], [], self.name,
                        None if self.groups is None else self.groups[keep])

    def check_trainable(self, min_per_class: int = 2) -> None:
        """Raise :class:`DataError` naming every class with fewer than ``min_per_class`` images."""
        counts = self.counts()
        bad = [f"{self.class_names[c]!r} ({counts[c]})" for c in np.flatnonzero(counts < min_per_class)]
        if bad:
            raise DataError(
                f"image set {self.name!r}: these classes have fewer than {min_per_class} images: "
                + ", ".join(bad[:20]) + (" ..." if len(bad) > 20 else "")
                + ". Add images to them or delete them before training."
            )
        if self.n_classes < 2:
            raise DataError(f"image set {self.name!r}: training needs at least 2 classes, found {self.n_classes}.")

    def split(self, *fractions: float, seed: int = 0) -> tuple["ImageSet", ...]:
        """Stratified split into ``len(fractions) + 1`` parts.

        ``split(0.25)`` gives (train 75%, test 25%); ``split(0.1, 0.1)`` gives
        (train 80%, part 10%, part 10%). Every part keeps each class's proportion.
        """
        if not fractions or sum(fractions) >= 1 or min(fractions) <= 0:
            raise DataError(f"split fractions must be positive and sum below 1, got {fractions}")
        from ..selection.splits import stratified_split  # late: loading images needs no scikit-learn

        rest, *parts = stratified_split(self.labels, list(fractions), seed)
        return (self.subset(rest), *(self.subset(p) for p in parts))

