"""Pure computation: data, features, classifiers, ClassMap, storage, benchmarks. Never imports Qt."""
from .errors import Cancelled, ClassMapError, ConfigError, DataError, ModelFormatError, NotFittedError
from .data import ImageSet, load_dataset
from .classify.compressive import CompressiveClassifier

__all__ = ["Cancelled", "ClassMapError", "CompressiveClassifier", "ConfigError", "DataError", "ImageSet", "ModelFormatError",
           "NotFittedError", "load_dataset"]
