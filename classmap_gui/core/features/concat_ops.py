"""A composite feature map (its parts side by side) as the exported predict.py computes and checks it
(numpy only: :mod:`classmap_gui.core.export.predictor` inlines this module, named by
:class:`.pixels_hog.PixelsHOGFeatures`'s ``exports``)."""
from __future__ import annotations

import numpy as np

from ..guards.read_limits import SettingError

#: ``{spec type: features function}``: filled in predict.py at export from each feature map's ``exports``
#: (:func:`classmap_gui.core.export.predictor.feature_code`)
FEATURES: dict = {}


def concat_features(X: np.ndarray, spec: dict, arrays: dict, prefix: str = "features") -> np.ndarray:
    """A composite feature map: its parts' features side by side, part ``i``'s arrays under ``prefix.i``."""
    return np.concatenate([np.asarray(FEATURES[part["type"]](X, part, arrays, f"{prefix}.{i}"), np.float32)
                           for i, part in enumerate(spec["parts"])], axis=1)


def check_concat_spec(spec: dict, arrays: dict, prefix: str, n_classes: int):
    """1 to 16 parts, none a composite itself (the app's are one level deep); gives each part with its prefix,
    which the export's ``check_component`` checks as a feature map before this looks at the next."""
    parts = spec.get("parts")
    if not isinstance(parts, list) or not parts or len(parts) > 16:
        raise SettingError(f"{prefix}.parts must list 1 to 16 feature maps")
    for i, part in enumerate(parts):
        if isinstance(part, dict) and part.get("type") == "concat":  # the app's composites are one level deep
            raise SettingError(f"{prefix}.{i} is a composite inside a composite")
        yield part, f"{prefix}.{i}"
