"""Built-in data sets, by name, and `load_dataset` which takes a name or a folder."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import DataError
from ..progress import ProgressFn, StopFn, report
from .catalog import BuiltinDataset
from .folder import DEFAULT_SIZE, fit_size, load_folder
from .idx import read_idx
from .imageset import ImageSet

FASHION_MNIST_DIR = Path("/usr/share/datasets/fashion-mnist")
FASHION_MNIST_CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                         "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]


_REGISTRY: dict[str, BuiltinDataset] = {}


def register_dataset(ds: BuiltinDataset) -> None:
    """Add ``ds`` to the built-in data sets under its name (a later one of the same name replaces it)."""
    _REGISTRY[ds.name] = ds


def builtin_datasets() -> list[BuiltinDataset]:
    """All registered built-in sets, in registration order."""
    _load_plugins()
    return list(_REGISTRY.values())


_PLUGINS_LOADED = [False]


def _load_plugins() -> None:
    """Register the generated sets, which live in their own modules (imported late: numba, OpenCV)."""
    if _PLUGINS_LOADED[0]:
        return
    from . import glyph_pose, hand_pose

    for ds in (*glyph_pose.BUILTINS, *hand_pose.BUILTINS):
        _REGISTRY.setdefault(ds.name, ds)  # idempotent: two threads racing here register the same records
    _PLUGINS_LOADED[0] = True


def dataset_version(name: str) -> int:
    """The generator version of built-in set ``name`` (0 for sets read from files): caches of its
    images or features must key on it."""
    _load_plugins()
    ds = _REGISTRY.get(str(name))
    return ds.version if ds is not None else 0


def load_digits(*, size: tuple[int, int] | None = None, **_: object) -> ImageSet:
    """scikit-learn's 8×8 handwritten digits (1797 images, 10 classes), shipped with it.

    Pixel values 0..16 are scaled to 0..255. ``size`` (h, w) resizes.
    """
    from sklearn.datasets import load_digits as _ld

    d = _ld()
    imgs = np.clip(np.rint(d.images * (255.0 / 16.0)), 0, 255).astype(np.uint8)
    if size is not None and tuple(size) != imgs.shape[1:]:
        imgs = np.stack([fit_size(im, size) for im in imgs])
    return ImageSet(imgs, d.target, [str(i) for i in range(10)], name="digits")


def _fashion_files(root: Path, part: str) -> tuple[Path, Path] | None:
    for suffix in (".gz", ""):
        imgs, labs = root / f"{part}-images-idx3-ubyte{suffix}", root / f"{part}-labels-idx1-ubyte{suffix}"
        if imgs.exists() and labs.exists():
            return imgs, labs
    return None


def load_fashion_mnist(*, path: str | Path | None = None, part: str = "all", size: tuple[int, int] | None = None,
                       progress: ProgressFn = None, **_: object) -> ImageSet:
    """Fashion-MNIST from its IDX files (28×28 grey, 10 classes).

    ``part`` is ``"train"`` (60 000), ``"test"`` (10 000) or ``"all"`` (70 000, train first:
    the first 60 000 are the official training images, see :func:`fashion_mnist_split`).
    """
    root = Path(path) if path else FASHION_MNIST_DIR
    parts = {"train": ["train"], "test": ["t10k"], "all": ["train", "t10k"]}.get(part)
    if parts is None:
        raise DataError(f"fashion-mnist part must be train, test or all, not {part!r}")
    images, labels = [], []
    for i, p in enumerate(parts):
        files = _fashion_files(root, p)
        if files is None:
            raise DataError(f"Fashion-MNIST is not at {root}. Install it with "
                            f"'sudo apt-get install dataset-fashion-mnist', or pass the folder holding its IDX files.")
        report(progress, i / len(parts), "reading Fashion-MNIST")
        images.append(read_idx(files[0]))
        labels.append(read_idx(files[1]))
    imgs = np.concatenate(images)
    if size is not None and tuple(size) != imgs.shape[1:]:
        imgs = np.stack([fit_size(im, size) for im in imgs])
    return ImageSet(imgs, np.concatenate(labels).astype(np.int64), FASHION_MNIST_CLASSES, name="fashion-mnist")


def fashion_mnist_split(ims: ImageSet) -> tuple[ImageSet, ImageSet]:
    """The official 60 000 / 10 000 train/test split of a ``part="all"`` Fashion-MNIST set."""
    return ims.subset(np.arange(60000)), ims.subset(np.arange(60000, len(ims)))


register_dataset(BuiltinDataset("digits", "scikit-learn's 8x8 handwritten digits: 1797 images, 10 classes (shipped)",
                                load_digits))
register_dataset(BuiltinDataset(
    "fashion-mnist", "Fashion-MNIST: 70 000 28x28 clothing images, 10 classes (Debian package dataset-fashion-mnist)",
    load_fashion_mnist, lambda: _fashion_files(FASHION_MNIST_DIR, "train") is not None,
    "sudo apt-get install dataset-fashion-mnist"))


def load_dataset(spec: str | Path, *, size: tuple[int, int] | None = None, grey: bool = True,
                 progress: ProgressFn = None, should_stop: StopFn = None, **options: object) -> ImageSet:
    """Load a built-in set by name (``digits``, ``fashion-mnist``, ``glyph-pose``, ``hand-pose``, ...) or a folder.

    For a folder, ``size`` defaults to 64×64 and ``grey`` says whether to keep colour.
    ``options`` go to the built-in set's loader (e.g. ``path=`` for fashion-mnist).
    """
    spec_s = str(spec)
    _load_plugins()
    if spec_s in _REGISTRY:
        ds = _REGISTRY[spec_s]
        if not ds.available():
            raise DataError(f"data set {spec_s!r} is not available here. {ds.how_to_get}")
        return ds.load(size=size, progress=progress, should_stop=should_stop, **options)
    path = Path(spec_s).expanduser()
    if path.is_dir():
        return load_folder(path, size=size or DEFAULT_SIZE, grey=grey, progress=progress, should_stop=should_stop)
    raise DataError(f"{spec_s!r} is neither a built-in data set ({', '.join(_REGISTRY)}) nor a folder of class sub-folders.")
