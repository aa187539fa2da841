"""Image sets and their loaders: folders, built-in sets, IDX files, generators."""
from .builtin import (BuiltinDataset, builtin_datasets, dataset_version, fashion_mnist_split, load_dataset, load_digits,
                      load_fashion_mnist, register_dataset)
from .folder import IMAGE_EXTENSIONS, load_folder, read_image
from .idx import read_idx
from .imageset import ImageSet

__all__ = ["BuiltinDataset", "IMAGE_EXTENSIONS", "ImageSet", "builtin_datasets", "dataset_version", "fashion_mnist_split",
           "load_dataset", "load_digits", "load_fashion_mnist", "load_folder", "read_idx", "read_image",
           "register_dataset"]
