"""Pure computation: data, features, classifiers, ClassMap, storage, benchmarks. Never imports Qt."""
from .errors import Cancelled, ClassMapError, ConfigError, DataError, ModelFormatError, NotFittedError
from .data import ImageSet, load_dataset

__all__ = ["Cancelled", "ClassMapError", "ConfigError", "DataError", "ImageSet", "ModelFormatError",
           "NotFittedError", "load_dataset"]
