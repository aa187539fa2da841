"""The one table of components: every feature map and classifier bank, by name, with its parameters.

Used by the factories (:func:`make_features`, :func:`make_bank`, :func:`make`), the store (the type
names written into saved models, :func:`saved_type_name` / :func:`saved_type`), export, the CLI's
choices and the GUI's lists and forms. A :class:`Component` names a class, what it is for and the
schema of each parameter (:class:`Param`); :func:`make` checks every given value against the schema
— type, range, choices — and raises a :class:`ConfigError` naming the option, so a bad setting fails
before any work and an oversized one (``n_patches``, ``m``, ``n_jobs``) cannot exhaust memory.

Arrows point down: this module imports the component modules; they never import it or the store.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .classify.allpairs import MAX_CLASSES as _ALL_PAIRS_MAX_CLASSES, AllPairsBank
from .classify.classmap import ClassMap
from .classify.compressive import CompressiveClassifier
from .classify.compressive_bank import CompressiveBank
from .classify.ova import OneVsAllBank
from .errors import ConfigError
from .features.hog import HOGFeatures
from .features.kmeans import KMeansFeatures
from .features.pixels import PixelFeatures
from .features.random_cnn import RandomCNNFeatures
from .features.random_features import RandomFourierFeatures

KINDS = ("features", "bank")
AUTO = "auto"


@dataclass(frozen=True)
class Param:
    """One hyper-parameter of a component.

    kind: ``int``, ``float``, ``str`` or ``bool``; default: the value the class uses when unset
    (``None`` means "off"/"unset" and is then also accepted). help: one line for people.
    choices: allowed values (for ``int``/``float`` kinds: allowed *string* values besides numbers,
    e.g. ``gamma="scale"``). low / high: inclusive numeric bounds. auto: also accepts ``"auto"``.
    """

    name: str
    kind: type
    default: object
    help: str
    choices: tuple | None = None
    low: float | None = None
    high: float | None = None
    auto: bool = False


@dataclass(frozen=True)
class Component:
    """A named component: ``kind`` ``"features"`` or ``"bank"``, its class, what it is for, its
    parameters' schema, and ``fixed`` parameters the name implies (``ova-ridge``: ``trainer="ridge"``)
    that the user cannot override."""

    kind: str
    name: str
    cls: type
    description: str
    params: tuple[Param, ...]
    fixed: dict = field(default_factory=dict)

    def param(self, name: str) -> Param:
        """The schema of parameter ``name``; ConfigError listing the valid names when unknown."""
        for p in self.params:
            if p.name == name:
                return p
        raise ConfigError(f"{self.kind} {self.name!r} has no parameter {name!r}; "
                          f"valid: {', '.join(p.name for p in self.params)}")

    def defaults(self) -> dict:
        """``{name: default}`` of every parameter."""
        return {p.name: p.default for p in self.params}


# ------------------------------------------------------------------------ shared parameters
_N_JOBS = Param("n_jobs", int, -1, "worker threads (-1: all cores, -2: all but one)", low=-64, high=64)
_SEED = Param("random_state", int, None, "random seed (unset: the training seed)", low=0, high=2**32 - 1)
_C = Param("C", float, 1.0, "SVM cost: larger fits the training data more closely", low=1e-8, high=1e8)
_ALPHA = Param("alpha", float, 1.0, "ridge penalty: larger gives smoother classifiers", low=1e-12, high=1e12)
_TOL = Param("tol", float, 1e-4, "solver tolerance", low=1e-12, high=1.0)
_MAX_ITER = Param("max_iter", int, 1000, "solver iterations", low=1, high=1_000_000)
_CLASS_WEIGHT = Param("class_weight", str, None, "'balanced' weighs each binary problem's classes equally",
                      choices=("balanced",))
_GAMMA = Param("gamma", float, "scale", "RBF kernel width: a number, 'scale' or 'auto'", choices=("scale", "auto"),
               low=1e-12, high=1e12)
_SIGMA = Param("sigma", float, AUTO, "random feature frequency std ('auto': from the median distance)",
               low=1e-12, high=1e12, auto=True)
_M = Param("m", int, 1000, "random features (width of the sketch)", low=2, high=100_000)


_OVA = (_C, _ALPHA, _GAMMA, _TOL, _MAX_ITER, _CLASS_WEIGHT, _N_JOBS, _SEED)


_COMPONENTS: tuple[Component, ...] = (
    Component("features", "kmeans", KMeansFeatures,
              "single-layer k-means network (Coates et al.): learned patch dictionary, triangle code, 2x2 pooling",
              (Param("patch_size", int, AUTO, "patch side in pixels ('auto': 6, smaller on tiny images)",
                     low=1, high=64, auto=True),
               Param("stride", int, 1, "step between patches when encoding", low=1, high=64),
               Param("n_centroids", int, AUTO, "dictionary size K (features: 4K; 'auto': 1600, 400 on tiny images)",
                     low=1, high=16_384, auto=True),
               Param("n_patches", int, AUTO, "random patches to learn the dictionary from ('auto': 200 000)",
                     low=1, high=2_000_000, auto=True),
               Param("norm_eps", float, 10.0, "contrast normalisation epsilon (pixel units)", low=0.0, high=1e6),
               Param("whiten_eps", float, 0.1, "ZCA whitening regulariser (unset: no whitening)", low=1e-12, high=1e6),
               Param("encoder", str, "triangle", "patch code", choices=("triangle", "hard")),
               Param("hellinger", bool, False, "square root of the pooled features"),
               Param("grey", bool, False, "convert colour images to grey first"),
               Param("kmeans_algorithm", str, "lloyd", "k-means variant", choices=("lloyd", "minibatch")),
               Param("kmeans_batch_size", int, 4096, "patches per mini-batch step", low=1, high=1_000_000),
               Param("kmeans_max_iter", int, 10, "k-means passes over the patches", low=0, high=1000),
               _N_JOBS, _SEED)),
    Component("features", "hog", HOGFeatures, "histograms of oriented gradients (Dalal-Triggs); nothing to learn",
              (Param("cell_size", int, 8, "cell side in pixels", low=1, high=256),
               Param("block_size", int, 16, "block side in pixels (a multiple of the cell size)", low=1, high=512),
               Param("block_stride", int, 8, "step between blocks in pixels", low=1, high=512),
               Param("n_bins", int, 9, "orientation bins", low=1, high=360),
               Param("signed", bool, False, "signed gradients (0-360 degrees)"),
               Param("backend", str, "auto", "implementation", choices=("auto", "numpy", "opencv")),
               Param("n_jobs", int, 1, "worker threads (-1: all cores)", low=-64, high=64))),
    Component("features", "pixels", PixelFeatures, "the pixels themselves (optionally resized and standardised)",
              (Param("size", str, None, "resize to HxW first, e.g. 16x16 (unset: keep the size)"),
               Param("grey", bool, False, "convert colour images to grey first"),
               Param("standardize", bool, False, "scale each feature to zero mean and unit variance"))),
    Component("features", "rff", RandomFourierFeatures, "random Fourier features of the pixels (Gaussian kernel)",
              (_M, _SIGMA, Param("kind", str, "cossin", "feature form", choices=("cossin", "phase")), _SEED)),
    Component("features", "cnn", RandomCNNFeatures, "random convolutional network (compressive learning's image sketch)",
              (_M, Param("depth", int, 1, "convolution blocks", low=1, high=8),
               Param("width", int, 16, "filters in the first block", low=1, high=512),
               Param("kernel_size", int, 5, "filter side in pixels", low=1, high=31),
               Param("pool", int, 2, "max-pooling window after each block", low=1, high=8),
               Param("final", str, "rff", "final random layer", choices=("rff", "relu")),
               _SIGMA, Param("normalize", bool, True, "unit-norm conv features before the final layer"),
               Param("random_state", int, 0, "random seed", low=0, high=2**32 - 1))),
    Component("bank", "ova-liblinear", OneVsAllBank, "one-vs-all linear SVMs (liblinear), classes in parallel",
              _OVA, {"trainer": "liblinear"}),
    Component("bank", "ova-ridge", OneVsAllBank,
              "one-vs-all ridge regression, all classes in one solve (scales to thousands of classes)",
              _OVA, {"trainer": "ridge"}),
    Component("bank", "ova-rbf", OneVsAllBank, "one-vs-all kernel (RBF) SVMs, for small problems",
              _OVA, {"trainer": "rbf"}),
    Component("bank", "all-pairs", AllPairsBank,
              f"one linear SVM per pair of classes, voting (up to {_ALL_PAIRS_MAX_CLASSES} classes)",
              (Param("trainer", str, "liblinear", "binary trainer", choices=("liblinear", "ridge")),
               _C, _ALPHA, _TOL, _MAX_ITER, _N_JOBS, _SEED)),
    Component("bank", "compressive", CompressiveBank,
              "compressive classifier: class sketches (means of random features), no training, add classes instantly",
              (Param("sketch", str, "rff", "what is sketched: random Fourier features of the features ('rff'), "
                     "the features themselves ('features'), or a random CNN of the images ('cnn')",
                     choices=("rff", "features", "cnn")),
               _M, _SIGMA, Param("priors", str, "empirical", "class priors", choices=("empirical", "uniform")),
               Param("random_state", int, 0, "random seed", low=0, high=2**32 - 1))),
)

#: Type names written into saved models -> classes. Bank *names* such as ``ova-ridge`` are settings
#: of one class, saved under the class's type name; the names below are a file format: never rename.
_SAVED_TYPES: dict[str, type] = {
    "kmeans": KMeansFeatures, "hog": HOGFeatures, "pixels": PixelFeatures, "rff": RandomFourierFeatures,
    "cnn": RandomCNNFeatures, "one-vs-all": OneVsAllBank, "all-pairs": AllPairsBank, "compressive": CompressiveBank,
    "compressive-classifier": CompressiveClassifier, "classmap": ClassMap,
}
_SAVED_NAMES: dict[type, str] = {cls: name for name, cls in _SAVED_TYPES.items()}
_NULLABLE = frozenset({"whiten_eps", "random_state", "class_weight", "size", "n_jobs"})


# ------------------------------------------------------------------------ look-up
def components(kind: str) -> list[Component]:
    """Every component of ``kind`` (``"features"`` or ``"bank"``), in the order lists show them."""
    _check_kind(kind)
    return [c for c in _COMPONENTS if c.kind == kind]


def component(kind: str, name: str) -> Component:
    """The component ``name`` of ``kind``; ConfigError naming the valid names when unknown."""
    for c in components(kind):
        if c.name == name:
            return c
    what = "feature map" if kind == "features" else "classifier bank"
    raise ConfigError(f"unknown {what} {name!r}; known: {', '.join(c.name for c in components(kind))}")


def names(kind: str) -> list[str]:
    """The names of every component of ``kind`` (the CLI's choices)."""
    return [c.name for c in components(kind)]


def feature_names() -> list[str]:
    """Names of the feature maps."""
    return names("features")


def bank_names() -> list[str]:
    """Names of the classifier banks."""
    return names("bank")


def bank_descriptions() -> dict[str, str]:
    """``{bank name: one-line description}``."""
    return {c.name: c.description for c in components("bank")}


# ------------------------------------------------------------------------ building
def make(kind: str, name: str, /, **params: Any) -> Any:
    """A new, unfitted component ``name`` of ``kind`` with ``params`` checked against its schema.

    Unknown names and parameters, values of the wrong type, outside their range or not among their
    choices, and parameters the name fixes are a :class:`ConfigError` naming the option.
    """
    comp = component(kind, name)
    clash = sorted(set(params) & set(comp.fixed))
    if clash:
        raise ConfigError(f"{kind} {name!r} fixes {', '.join(clash)}; choose another {kind} name instead")
    checked = {key: check_value(comp, key, value) for key, value in params.items()}
    return comp.cls(**comp.fixed, **checked)


def make_features(name: str, /, **params: Any) -> Any:
    """A new, unfitted feature map ``name`` (see :func:`make`)."""
    return make("features", name, **params)


def make_bank(name: str, /, **params: Any) -> Any:
    """A new, unfitted classifier bank ``name`` (see :func:`make`)."""
    return make("bank", name, **params)


def check_value(comp: Component, key: str, value: Any) -> Any:
    """``value`` for parameter ``key`` of ``comp`` after checking it; ConfigError saying what is wrong.

    Text holding a number (or true/false) is accepted for numeric (boolean) parameters and converted."""
    p = comp.param(key)
    where = f"{comp.name}: {key}"
    if value is None:
        if p.default is None or key in _NULLABLE:
            return None
        raise ConfigError(f"{where} needs a value")
    if isinstance(value, str):
        if p.auto and value == AUTO:
            return value
        if p.kind is not str:
            if p.choices and value in p.choices:
                return value
            number = _number(value, p.kind)
            if number is not None:  # text from a form field or a config file: the schema knows the kind
                return check_value(comp, key, number)
            allowed = [*(p.choices or ()), *((AUTO,) if p.auto else ())]
            raise ConfigError(f"{where} must be {_kind_name(p.kind)}"
                              + (f" or one of {', '.join(allowed)}" if allowed else "") + f", got {value!r}")
        if key == "size":
            return _parse_size(where, value)
        if p.choices and value not in p.choices:
            raise ConfigError(f"{where} must be one of {', '.join(p.choices)}, got {value!r}")
        return value
    if key == "size" and isinstance(value, (list, tuple)):
        return _parse_size(where, "x".join(str(v) for v in value))
    if p.kind is bool:
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        raise ConfigError(f"{where} must be true or false, got {value!r}")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ConfigError(f"{where} must be {_kind_name(p.kind)}, got {value!r}")
    if p.kind is int and not (isinstance(value, (int, np.integer)) or float(value).is_integer()):
        raise ConfigError(f"{where} must be a whole number, got {value!r}")
    if p.kind is str:
        raise ConfigError(f"{where} must be one of {', '.join(p.choices or ())}, got {value!r}")
    if not np.isfinite(value):
        raise ConfigError(f"{where} must be a finite number, got {value!r}")
    if (p.low is not None and value < p.low) or (p.high is not None and value > p.high):
        raise ConfigError(f"{where} must lie between {_num(p.low)} and {_num(p.high)}, got {value!r}")
    return int(value) if p.kind is int else value


def _number(text: str, kind: type) -> int | float | bool | None:
    """``text`` as a value of ``kind`` (int, float or bool), or None when it is not one."""
    t = text.strip().lower()
    if kind is bool:
        return {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}.get(t)
    try:
        return int(t) if kind is int else float(t)
    except ValueError:
        return None


def _parse_size(where: str, text: str) -> tuple[int, int]:
    parts = text.lower().replace("×", "x").split("x")
    try:
        h, w = (int(parts[0]), int(parts[-1])) if len(parts) in (1, 2) else (0, 0)
    except ValueError:
        h = w = 0
    if not (1 <= h <= 4096 and 1 <= w <= 4096):
        raise ConfigError(f"{where} must be HxW with sides from 1 to 4096 (e.g. 16x16), got {text!r}")
    return h, w


def _kind_name(kind: type) -> str:
    return {int: "a whole number", float: "a number", bool: "true or false", str: "a word"}[kind]


def _num(x: float | None) -> str:
    return "any" if x is None else f"{x:g}"


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ConfigError(f"component kind must be one of {', '.join(KINDS)}, got {kind!r}")


# ------------------------------------------------------------------------ saved type names
def saved_type_name(cls: type) -> str | None:
    """The type name a saved model records for instances of ``cls``; None when not storable."""
    return _SAVED_NAMES.get(cls)


def saved_type(name: str) -> type | None:
    """The class a saved model's type name stands for; None when this version does not know it."""
    return _SAVED_TYPES.get(name)


def register_saved_type(name: str, cls: type) -> None:
    """Let instances of ``cls`` be saved and loaded as ``name`` (components outside this table, tests).

    Re-registering the same pair is fine; another class under a known name is a ConfigError."""
    known = _SAVED_TYPES.get(name)
    if known is not None and known is not cls and known.__qualname__ != cls.__qualname__:
        raise ConfigError(f"store: name {name!r} is already registered for {known.__qualname__}")
    _SAVED_TYPES[name] = cls
    _SAVED_NAMES[cls] = name
