"""The one table of components: every feature map, classifier bank and ClassMap, by name, with its parameters.

Used by the factories (:func:`make_features`, :func:`make_bank`, :func:`make`), the early checks of
training options (:func:`check_train_options`), the store (the type names written into saved models,
:func:`saved_type_name` / :func:`saved_type`), export, the CLI's choices, the GUI's lists and
forms, and the settings proposed for a data set (:mod:`.defaults`, from each entry's plain-data
``suits``). A :class:`Component` names its class by import path, what it is for and the schema of each
parameter (:class:`~classmap_gui.core.schema.Param`); every value is checked against the schema
— type, range, choices — and refused with a :class:`ConfigError` naming the option, so a bad
setting fails before any work and an oversized one (``n_patches``, ``m``, ``n_jobs``) cannot
exhaust memory.

Light to import: the classes are imported when first used (:attr:`Component.cls`), so the CLI
checks options and its output folder before scikit-learn, numba or OpenCV load. Arrows point
down: this module names the component modules; they never import it or the store.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any

from .errors import ConfigError
from .schema import AUTO, MAX_IMAGE_SIDE, MAX_SEED, N_JOBS, SEED, Invalid, Param
from .suitability import Sized, Suits

__all__ = ["AUTO", "KINDS", "Component", "Param", "bank_descriptions", "bank_names", "check_params",
           "check_names", "check_train_options", "check_value", "classmap_applies", "component", "components",
           "feature_names", "make", "make_bank", "make_features", "names", "register", "register_saved_type", "resolve",
           "route_unprefixed", "saved_type", "saved_type_name", "unregister"]

KINDS = ("features", "bank", "classmap")
_WHAT = {"features": "feature map", "bank": "classifier bank", "classmap": "ClassMap"}
#: How the command line names each kind's settings (``--set bank.C=0.1``).
OPTION_PREFIX = {"features": "--set ", "bank": "--set bank.", "classmap": "--set classmap."}
#: Classes of all-pairs banks hold C(C-1)/2 classifiers; ``classify.allpairs.MAX_CLASSES`` (tested equal).
ALL_PAIRS_MAX_CLASSES = 200


def resolve(path: str) -> type:
    """The class at ``"package.module:Name"`` (relative to ``classmap_gui.core`` when it starts with a dot)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module, __package__), name)


@dataclass(frozen=True)
class Component:
    """A named component: ``kind`` (``"features"``, ``"bank"`` or ``"classmap"``), the import path of
    its class, what it is for, its parameters' schema, and ``fixed`` parameters the name implies
    (``ova-ridge``: ``trainer="ridge"``) that the user cannot override."""

    kind: str
    name: str
    path: str
    description: str
    params: tuple[Param, ...]
    fixed: dict = field(default_factory=dict)
    #: the parameters this name actually reads (the three one-vs-all names share one class and one
    #: schema, but liblinear reads no ``alpha`` and ridge no ``C``); None: all of ``params``
    reads: tuple[str, ...] | None = None
    #: when the component is proposed for a data set and how it is sized (plain data; None: never proposed)
    suits: Suits | None = None
    #: banks: why ClassMap cannot filter this bank (None: it can)
    no_classmap: str | None = None

    def shown(self) -> tuple[Param, ...]:
        """The parameters worth offering a person for this name (those it reads)."""
        return tuple(p for p in self.params if self.reads is None or p.name in self.reads)

    @cached_property
    def cls(self) -> type:
        """The component's class, imported on first use."""
        return resolve(self.path)

    def has(self, name: str) -> bool:
        """Whether the user may set parameter ``name`` (fixed ones excluded)."""
        return any(p.name == name for p in self.params)

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
_SEED0 = Param("random_state", int, 0, "random seed", low=0, high=MAX_SEED, nullable=True)
_OVA = (_C, _ALPHA, _GAMMA, _TOL, _MAX_ITER, _CLASS_WEIGHT, N_JOBS, SEED)
_HOG = (Param("cell_size", int, 8, "cell side in pixels", low=1, high=256),
        Param("block_size", int, 16, "block side in pixels (a multiple of the cell size)", low=1, high=512),
        Param("block_stride", int, 8, "step between blocks in pixels", low=1, high=512),
        Param("n_bins", int, 9, "orientation bins", low=1, high=360),
        Param("signed", bool, False, "signed gradients (0-360 degrees)"),
        Param("backend", str, "auto", "implementation", choices=("auto", "numpy", "opencv")),
        Param("n_jobs", int, 1, "worker threads (-1: all cores)", nullable=True, per_core=True))
#: ClassMap's refine values: descriptive names, then the paper's aliases (``classify.refine``; tested equal).
REFINES = ("all-pairs-vote", "best-response", "first-above-threshold", "v1", "v2", "v3")


_COMPONENTS: list[Component] = [
    Component("features", "kmeans", ".features.kmeans:KMeansFeatures",
              "single-layer k-means network (Coates et al.): learned patch dictionary, triangle code, 2x2 pooling",
              (Param("patch_size", int, AUTO, "patch side in pixels ('auto': 6, smaller on tiny images)",
                     low=1, high=64, auto=True),
               Param("stride", int, 1, "step between patches when encoding", low=1, high=64),
               Param("n_centroids", int, AUTO, "dictionary size K (features: 4K; 'auto': 1600, 400 on tiny images)",
                     low=1, high=16_384, auto=True),
               Param("n_patches", int, AUTO, "random patches to learn the dictionary from ('auto': 200 000)",
                     low=1, high=2_000_000, auto=True),
               Param("norm_eps", float, 10.0, "contrast normalisation epsilon (pixel units)", low=0.0, high=1e6),
               Param("whiten_eps", float, 0.1, "ZCA whitening regulariser (unset: no whitening)", low=1e-12, high=1e6,
                     nullable=True),
               Param("encoder", str, "triangle", "patch code", choices=("triangle", "hard")),
               Param("hellinger", bool, False, "square root of the pooled features"),
               Param("grey", bool, False, "convert colour images to grey first"),
               Param("kmeans_algorithm", str, "lloyd", "k-means variant", choices=("lloyd", "minibatch")),
               Param("kmeans_batch_size", int, 4096, "patches per mini-batch step", low=1, high=1_000_000),
               Param("kmeans_max_iter", int, 10, "k-means passes over the patches", low=1, high=1000),
               N_JOBS, SEED),
              suits=Suits(rank=1, why="single-layer k-means ({side}-pixel images are too small for HOG's cells)",
                          sizes=(Sized("n_centroids", ratio=Fraction(1, 2), low=16, high=1600, rounding="pow2"),
                                 Sized("n_patches", ratio=Fraction(200), low=5_000, high=200_000)),
                          sized_why="k-means: {n_centroids} centroids from {n_patches} patches, sized to {n} images "
                                    "(the paper's 1600 need tens of thousands of images)")),
    Component("features", "hog", ".features.hog:HOGFeatures",
              "histograms of oriented gradients (Dalal-Triggs); nothing to learn", _HOG,
              suits=Suits(rank=0, min_side=24,
                          why="HOG ({side}-pixel images are big enough for its 8-pixel cells; nothing to fit)")),
    Component("features", "pixels", ".features.pixels:PixelFeatures",
              "the pixels themselves (optionally resized and standardised)",
              (Param("size", str, None, "resize to HxW first, e.g. 16x16 (unset: keep the size)",
                     low=1, high=MAX_IMAGE_SIDE, image_size=True),
               Param("grey", bool, False, "convert colour images to grey first"),
               Param("standardize", bool, False, "scale each feature to zero mean and unit variance"))),
    Component("features", "pixels+hog", ".features.pixels_hog:PixelsHOGFeatures",
              "HOG with a small grey thumbnail beside it: the edges, and where the image is bright or dark",
              (Param("thumbnail", int, 8, "side of the grey thumbnail in pixels", low=1, high=64), *_HOG)),
    Component("features", "rff", ".features.random_features:RandomFourierFeatures",
              "random Fourier features of the pixels (Gaussian kernel)",
              (_M, _SIGMA, Param("kind", str, "cossin", "feature form", choices=("cossin", "phase")), SEED)),
    Component("features", "cnn", ".features.random_cnn:RandomCNNFeatures",
              "random convolutional network ('cnn'): fixed random filters, pooling and a random final layer, nothing "
              "learned; tolerant to small shifts (compressive learning's image sketch)",
              (_M, Param("depth", int, 1, "convolution blocks", low=1, high=8),
               Param("width", int, 16, "filters in the first block", low=1, high=512),
               Param("kernel_size", int, 5, "filter side in pixels", low=1, high=31),
               Param("pool", int, 2, "max-pooling window after each block", low=1, high=8),
               Param("final", str, "rff", "final random layer", choices=("rff", "relu")),
               _SIGMA, Param("normalize", bool, True, "unit-norm conv features before the final layer"),
               _SEED0)),
    Component("bank", "ova-liblinear", ".classify.ova:OneVsAllBank",
              "one-vs-all linear SVMs (liblinear), classes in parallel", _OVA, {"trainer": "liblinear"},
              reads=("C", "tol", "max_iter", "class_weight", "n_jobs", "random_state"),
              suits=Suits(rank=0, max_classes=99, why="linear SVMs (liblinear) one-vs-all, accurate and quick at this size")),
    Component("bank", "ova-ridge", ".classify.ova:OneVsAllBank",
              "one-vs-all ridge regression, all classes in one solve (scales to thousands of classes)",
              _OVA, {"trainer": "ridge"}, reads=("alpha", "n_jobs"),
              suits=Suits(rank=1, why="ridge regression one-vs-all, one linear solve for all {C} classes",
                          sizes=(Sized("alpha", steps=((0, 10.0), (2000, 100.0)), keep=True),))),
    Component("bank", "ova-rbf", ".classify.ova:OneVsAllBank", "one-vs-all kernel (RBF) SVMs, for small problems",
              _OVA, {"trainer": "rbf"}, reads=("C", "gamma", "tol", "max_iter", "class_weight", "n_jobs")),
    Component("bank", "all-pairs", ".classify.allpairs:AllPairsBank",
              f"one linear SVM per pair of classes, voting (up to {ALL_PAIRS_MAX_CLASSES} classes)",
              (Param("trainer", str, "liblinear", "binary trainer", choices=("liblinear", "ridge")),
               _C, _ALPHA, _TOL, _MAX_ITER, N_JOBS, SEED)),
    Component("bank", "compressive", ".classify.compressive_bank:CompressiveBank",
              "compressive classifier: class sketches (means of random features), no training, add classes instantly",
              (Param("sketch", str, "rff", "what is sketched: random Fourier features of the features ('rff'), "
                     "the features themselves ('features'), or a random CNN of the images ('cnn')",
                     choices=("rff", "features", "cnn")),
               _M, _SIGMA, Param("priors", str, "empirical", "class priors", choices=("empirical", "uniform")),
               _SEED0), no_classmap="a compressive bank scores every class at the cost of one"),
    Component("classmap", "classmap", ".classify.classmap:ClassMap",
              "ClassMap filter-and-refine: embed the query, keep p candidate classes, evaluate only theirs",
              (Param("d", int, 45, "embedding dimensions (reference classifiers evaluated per query)",
                     low=1, high=100_000),
               Param("p", int, 40, "candidate classes the filter keeps for the refine step", low=1),
               Param("embedding", str, "boosted", "how references are chosen", choices=("boosted", "random")),
               Param("refine", str, "v2", "how candidates are decided", choices=REFINES),
               Param("n_triples", int, 60_000, "training triples for the boosted embedding", low=1, high=5_000_000),
               Param("hard_fraction", float, 0.5, "share of triples with a hard (confusable) wrong class",
                     low=0.0, high=1.0),
               Param("threshold", float, None, "first-above-threshold's threshold (unset: learned)"),
               Param("max_memory_mb", float, 600.0, "memory for the boosted embedding's weak outputs",
                     low=1.0, high=65_536.0),
               Param("reference_penalty", float, 1.0, "the embedding's reference classifiers get this many "
                     "times the bank's penalty (training fits that second, smoother bank; 1: the bank itself)",
                     low=1e-6, high=1e6),
               Param("embedding_examples", str, "embedding", "which examples embed the classes: the held-out "
                     "embedding part, or with the bank's training part", choices=("embedding", "embedding+training")),
               _SEED0),
              # in the app the bank and the embedding split are training's (the --bank, the split), not settings
              {"estimator": None, "embedding_fraction": 0.25},
              suits=Suits(min_classes=50, min_per_class=6, why="{d} reference classifiers, refine the top {p} of {C} classes",
                          sizes=(Sized("d", of="classes", ratio=Fraction(1, 8), low=8, high=45),
                                 Sized("p", of="classes", ratio=Fraction(1, 12), low=5, high=40)),
                          why_not={"min_classes": "with {C} classes brute force evaluates only {C} classifiers per image; "
                                                  "filter-and-refine pays off from about {min_classes} classes",
                                   "min_per_class": "it holds out images of every class to fit its embedding, and the "
                                                    "smallest class has {fewest}"})),
]

#: Type names written into saved models -> class paths. Bank *names* such as ``ova-ridge`` are settings
#: of one class, saved under the class's type name; the names below are a file format: never rename.
#: A component of the table above whose class is not listed here is saved under its component name.
_SAVED_PATHS: dict[str, str] = {
    "kmeans": ".features.kmeans:KMeansFeatures", "hog": ".features.hog:HOGFeatures",
    "pixels": ".features.pixels:PixelFeatures", "rff": ".features.random_features:RandomFourierFeatures",
    "cnn": ".features.random_cnn:RandomCNNFeatures", "one-vs-all": ".classify.ova:OneVsAllBank",
    "all-pairs": ".classify.allpairs:AllPairsBank", "compressive": ".classify.compressive_bank:CompressiveBank",
    "compressive-classifier": ".classify.compressive:CompressiveClassifier", "classmap": ".classify.classmap:ClassMap",
}
_SAVED_TYPES: dict[str, type] = {}
_SAVED_NAMES: dict[type, str] = {}


# ------------------------------------------------------------------------ look-up
def components(kind: str) -> list[Component]:
    """Every component of ``kind`` (``"features"``, ``"bank"`` or ``"classmap"``), in the order lists show them."""
    _check_kind(kind)
    return [c for c in _COMPONENTS if c.kind == kind]


def register(comp: Component) -> Component:
    """Add ``comp`` to the table (a component outside this module, a test); its name must be new for its kind."""
    _check_kind(comp.kind)
    if comp.name in names(comp.kind):
        raise ConfigError(f"{_WHAT[comp.kind]} {comp.name!r} is already registered")
    _COMPONENTS.append(comp)
    return comp


def unregister(kind: str, name: str) -> None:
    """Remove the component ``name`` of ``kind`` added by :func:`register`."""
    _COMPONENTS.remove(component(kind, name))


def classmap_applies(bank: str) -> bool:
    """Whether ClassMap can filter the bank ``bank`` (a compressive bank scores all classes at once)."""
    return component("bank", bank).no_classmap is None


def component(kind: str, name: str) -> Component:
    """The component ``name`` of ``kind``; ConfigError naming the valid names when unknown."""
    for c in components(kind):
        if c.name == name:
            return c
    raise ConfigError(f"unknown {_WHAT[kind]} {name!r}; known: {', '.join(c.name for c in components(kind))}")


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


# ------------------------------------------------------------------------ checking and building
def check_value(comp: Component, key: str, value: Any) -> Any:
    """``value`` for parameter ``key`` of ``comp`` after checking it; ConfigError ``"<name>: <what is
    wrong>, got <value>"`` otherwise (text holding a number is converted, see :meth:`Param.check`)."""
    try:
        return comp.param(key).check(value)
    except Invalid as exc:
        raise ConfigError(f"{comp.name}: {exc}, got {value!r}") from None


def check_params(kind: str, name: str, params: dict, *, option: str | None = None) -> dict:
    """``params`` of component ``name`` checked against its schema and converted; ConfigError otherwise.

    ``option``: how the user names these settings, e.g. ``"--set bank."``: errors then read
    ``--set bank.C=0: C must lie between 1e-08 and 1e+08``. Without it they name the component
    (``ova-ridge: C must lie ..., got 0``). Parameters the name fixes are refused too.
    """
    comp = component(kind, name)
    clash = sorted(set(params) & set(comp.fixed))
    if clash:
        what = f"{option}{clash[0]}={params[clash[0]]!r}: " if option else ""
        raise ConfigError(f"{what}{kind} {name!r} fixes {', '.join(clash)}; choose another {kind} name instead")
    if option is None:
        return {key: check_value(comp, key, value) for key, value in params.items()}
    out = {}
    for key, value in params.items():
        try:
            out[key] = comp.param(key).check(value)
        except ConfigError as exc:
            raise ConfigError(f"{option}{key}={value!r}: {exc}") from None
    return out


def make(kind: str, name: str, /, **params: Any) -> Any:
    """A new, unfitted component ``name`` of ``kind`` with ``params`` checked against its schema.

    Unknown names and parameters, values of the wrong type, outside their range or not among their
    choices, and parameters the name fixes are a :class:`ConfigError` naming the option.
    """
    comp = component(kind, name)
    return comp.cls(**comp.fixed, **check_params(kind, name, params))


def make_features(name: str, /, **params: Any) -> Any:
    """A new, unfitted feature map ``name`` (see :func:`make`)."""
    return make("features", name, **params)


def make_bank(name: str, /, **params: Any) -> Any:
    """A new, unfitted classifier bank ``name`` (see :func:`make`)."""
    return make("bank", name, **params)


def check_names(features: str, bank: str) -> None:
    """ConfigError naming ``--features`` / ``--bank`` for a feature map or bank this build does not have."""
    for kind, name, option in (("features", features, "--features"), ("bank", bank, "--bank")):
        if name not in names(kind):
            raise ConfigError(f"{option} {name!r}: choose from {', '.join(names(kind))}")


def route_unprefixed(features: str, bank: str, params: dict) -> tuple[dict, dict]:
    """Settings given without a ``bank.``/``features.`` prefix -> (feature map's, bank's).

    A key goes to the feature map ``features`` when it has that parameter, else to the bank ``bank``
    when it has it (``--bank compressive --set m=2000``); a key neither has is a ConfigError naming
    the valid keys of both."""
    check_names(features, bank)
    fm, bk = component("features", features), component("bank", bank)
    to_features, to_bank = {}, {}
    for key, value in params.items():
        if fm.has(key):
            to_features[key] = value
        elif bk.has(key):
            to_bank[key] = value
        else:
            raise ConfigError(
                f"{OPTION_PREFIX['features']}{key}={value!r}: neither the feature map {features!r} nor the bank "
                f"{bank!r} has a parameter {key!r}; the feature map's: {', '.join(p.name for p in fm.params)}; "
                f"the bank's (also as bank.KEY): {', '.join(p.name for p in bk.params)}")
    return to_features, to_bank


def check_train_options(*, features: str, features_params: dict, bank: str, bank_params: dict,
                        classmap: dict | None, seed_value: Any, test_fraction: Any) -> tuple[dict, dict, dict | None]:
    """Every check of training options that needs no data, before any file is read or class imported.

    The seed, the test fraction, the names (``--features``, ``--bank``) and each component's
    parameters against its schema (ClassMap's too, when ``classmap`` is not None); ConfigError naming
    the option as the command line writes it. Returns the parameters converted by their schemas
    (``(features_params, bank_params, classmap)``; ``"16"`` -> 16, ``"8x8"`` -> (8, 8)). Memory checks
    that need the data's size are :func:`classmap_gui.core.limits.check_train_memory`.
    """
    try:
        SEED.check(seed_value)
    except Invalid:
        raise ConfigError(f"--seed {seed_value}: the seed must be a whole number from 0 to {MAX_SEED}") from None
    if isinstance(test_fraction, bool) or not isinstance(test_fraction, (int, float)) \
            or not 0 <= test_fraction < 0.9:  # NaN fails both comparisons
        raise ConfigError(f"--test-fraction {test_fraction}: must be from 0 to below 0.9")
    check_names(features, bank)
    return (check_params("features", features, features_params, option=OPTION_PREFIX["features"]),
            check_params("bank", bank, bank_params, option=OPTION_PREFIX["bank"]),
            None if classmap is None else
            check_params("classmap", "classmap", classmap, option=OPTION_PREFIX["classmap"]))


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ConfigError(f"component kind must be one of {', '.join(KINDS)}, got {kind!r}")


# ------------------------------------------------------------------------ saved type names
def _saved() -> dict[str, type]:
    """The saved type names' classes, imported on first need (saving or loading a model)."""
    # the file format's names first; a component added to the table later is saved under its own name
    named = set(_SAVED_PATHS.values())
    pairs = [*_SAVED_PATHS.items(), *((c.name, c.path) for c in _COMPONENTS if c.path not in named)]
    if not all(n in _SAVED_TYPES for n, _ in pairs):
        for name, path in pairs:
            cls = resolve(path)
            _SAVED_TYPES.setdefault(name, cls)
            _SAVED_NAMES.setdefault(cls, name)
    return _SAVED_TYPES


def saved_type_name(cls: type) -> str | None:
    """The type name a saved model records for instances of ``cls``; None when not storable."""
    _saved()
    return _SAVED_NAMES.get(cls)


def saved_type(name: str) -> type | None:
    """The class a saved model's type name stands for; None when this version does not know it."""
    return _saved().get(name)


def register_saved_type(name: str, cls: type) -> None:
    """Let instances of ``cls`` be saved and loaded as ``name`` (components outside this table, tests).

    Re-registering the same pair is fine; another class under a known name is a ConfigError."""
    known = _saved().get(name)
    if known is not None and known is not cls and known.__qualname__ != cls.__qualname__:
        raise ConfigError(f"store: name {name!r} is already registered for {known.__qualname__}")
    _SAVED_TYPES[name] = cls
    _SAVED_NAMES[cls] = name
