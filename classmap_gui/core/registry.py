"""The one table of components: every feature map, classifier bank and ClassMap, by name, with its parameters.

Used by the factories (:func:`make_features`, :func:`make_bank`, :func:`make`), the early checks of
training options (:func:`check_train_options`), the store (the type names written into saved models,
:mod:`~classmap_gui.core.store.type_names`), export, the CLI's choices, the GUI's lists and
forms, and the settings proposed for a data set (:mod:`.defaults`, from each entry's plain-data
``suits``). A :class:`Component` names its class by import path, what it is for and a help line per
parameter. The class's scikit-learn ``_parameter_constraints`` are the one declaration of what each
parameter accepts: the schema (:class:`~classmap_gui.core.guards.schema.Param`, the form fields, the CLI's
and the store's checks) is derived from them and the constructor's defaults
(:func:`~classmap_gui.core.guards.schema.from_constraints`). Every value is checked against it — type,
range, choices — and refused with a :class:`ConfigError` naming the option, so a bad setting fails
before any work and an oversized one (``n_patches``, ``m``, ``n_jobs``) cannot exhaust memory.

Light to import: a class is imported when its parameters are first needed (:attr:`Component.cls`),
so listing the names (``--help``) and refusing an unusable ``--out`` load no numeric stack. Arrows
point down: this module names the component modules; they never import it or the store.
"""
from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any

from .errors import ConfigError
from .guards.schema import AUTO, MAX_SEED, SEED, Invalid, Param, from_constraints
from .suitability import Sized, Suits
from .filter_kinds import INDEXES as _FILTER_INDEXES

__all__ = ["AUTO", "KINDS", "Component", "Param", "bank_descriptions", "bank_names", "check_params",
           "check_names", "check_train_options", "check_value", "classmap_applies", "component", "components",
           "feature_names", "make", "make_bank", "make_features", "names", "register", "resolve",
           "route_unprefixed", "unregister"]

KINDS = ("features", "bank", "classmap", "filter")
_WHAT = {"features": "feature map", "bank": "classifier bank", "classmap": "ClassMap", "filter": "filter index"}
#: How the command line names each kind's settings (``--set bank.C=0.1``).
OPTION_PREFIX = {"features": "--set ", "bank": "--set bank.", "classmap": "--set classmap.",
                 "filter": "--set classmap.filter_params."}


def resolve(path: str) -> type:
    """The class at ``"package.module:Name"`` (relative to ``classmap_gui.core`` when it starts with a dot)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module, __package__), name)


@dataclass(frozen=True)
class Component:
    """A named component: ``kind`` (``"features"``, ``"bank"`` or ``"classmap"``), the import path of
    its class, what it is for, and a help line per parameter (``help``; :data:`HELP` holds the lines
    many components share). The parameters and what they accept come from the class
    (:attr:`params`); ``internal`` names constructor parameters that are not settings (set by
    training, e.g. ClassMap's bank), which a person cannot give."""

    kind: str
    name: str
    path: str
    description: str
    help: dict = field(default_factory=dict)
    internal: tuple[str, ...] = ()
    #: when the component is proposed for a data set and how it is sized (plain data; None: never proposed)
    suits: Suits | None = None
    #: banks: why ClassMap cannot filter this bank (None: it can)
    no_classmap: str | None = None

    @cached_property
    def cls(self) -> type:
        """The component's class, imported on first use."""
        return resolve(self.path)

    @cached_property
    def params(self) -> tuple[Param, ...]:
        """The schema of each parameter, in the constructor's order: derived from the class's
        ``_parameter_constraints``, its defaults and the help lines (imports the class)."""
        cls = self.cls
        constraints = getattr(cls, "_parameter_constraints", {})
        out = []
        for name, arg in inspect.signature(cls.__init__).parameters.items():
            if name == "self" or name in self.internal or arg.kind not in (arg.POSITIONAL_OR_KEYWORD, arg.KEYWORD_ONLY):
                continue
            if name not in constraints:
                raise ConfigError(f"{self.kind} {self.name!r}: {cls.__qualname__}._parameter_constraints has no "
                                  f"entry for {name!r}")
            out.append(from_constraints(name, constraints[name], arg.default,
                                        self.help.get(name) or HELP.get(name) or name))
        return tuple(out)

    def shown(self) -> tuple[Param, ...]:
        """The parameters worth offering a person (every setting: each class has only its own)."""
        return self.params

    def has(self, name: str) -> bool:
        """Whether the user may set parameter ``name`` (internal ones excluded)."""
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


#: help lines of parameters many components share (a component's own ``help`` overrides them)
HELP = {
    "C": "SVM cost: larger fits the training data more closely", "tol": "solver tolerance",
    "alpha": "ridge penalty: larger gives smoother classifiers", "max_iter": "solver iterations",
    "class_weight": "'balanced' weighs each binary problem's classes equally",
    "gamma": "RBF kernel width: a number, 'scale' or 'auto'", "m": "random features (width of the sketch)",
    "sigma": "random feature frequency std ('auto': from the median distance)",
    "n_jobs": "worker threads (-1: all cores, -2: all but one)", "random_state": "random seed (unset: the training seed)",
    "grey": "convert colour images to grey first", "cell_size": "cell side in pixels", "n_bins": "orientation bins",
    "block_size": "block side in pixels (a multiple of the cell size)", "block_stride": "step between blocks in pixels",
    "signed": "signed gradients (0-360 degrees)", "backend": "implementation",
}


_COMPONENTS: list[Component] = [
    Component("features", "kmeans", ".features.kmeans:KMeansFeatures",
              "single-layer k-means network (Coates et al.): learned patch dictionary, triangle code, 2x2 pooling",
              {"patch_size": "patch side in pixels ('auto': 6, smaller on tiny images)",
               "stride": "step between patches when encoding",
               "n_centroids": "dictionary size K (features: 4K; 'auto': 1600, 400 on tiny images)",
               "n_patches": "random patches to learn the dictionary from ('auto': 200 000)",
               "norm_eps": "contrast normalisation epsilon (pixel units)",
               "whiten_eps": "ZCA whitening regulariser (unset: no whitening)", "encoder": "patch code",
               "hellinger": "square root of the pooled features", "kmeans_algorithm": "k-means variant",
               "kmeans_batch_size": "patches per mini-batch step",
               "kmeans_max_iter": "k-means passes over the patches (lloyd: 0 keeps the initial centroids)"},
              suits=Suits(rank=1, why="single-layer k-means ({side}-pixel images are too small for HOG's cells)",
                          sizes=(Sized("n_centroids", ratio=Fraction(1, 2), low=16, high=1600, rounding="pow2"),
                                 Sized("n_patches", ratio=Fraction(200), low=5_000, high=200_000)),
                          sized_why="k-means: {n_centroids} centroids from {n_patches} patches, sized to {n} images "
                                    "(the paper's 1600 need tens of thousands of images)")),
    Component("features", "hog", ".features.hog:HOGFeatures",
              "histograms of oriented gradients (Dalal-Triggs); nothing to learn",
              {"n_jobs": "worker threads (-1: all cores)"},
              suits=Suits(rank=0, min_side=24,
                          why="HOG ({side}-pixel images are big enough for its 8-pixel cells; nothing to fit)")),
    Component("features", "pixels", ".features.pixels:PixelFeatures",
              "the pixels themselves (optionally resized and standardised)",
              {"size": "resize to HxW first, e.g. 16x16 (unset: keep the size)",
               "standardize": "scale each feature to zero mean and unit variance"}),
    Component("features", "pixels+hog", ".features.pixels_hog:PixelsHOGFeatures",
              "HOG with a small grey thumbnail beside it: the edges, and where the image is bright or dark",
              {"thumbnail": "side of the grey thumbnail in pixels", "n_jobs": "worker threads (-1: all cores)"}),
    Component("features", "rff", ".features.random_features:RandomFourierFeatures",
              "random Fourier features of the pixels (Gaussian kernel)", {"kind": "feature form"}),
    Component("features", "cnn", ".features.random_cnn:RandomCNNFeatures",
              "random convolutional network ('cnn'): fixed random filters, pooling and a random final layer, nothing "
              "learned; tolerant to small shifts (compressive learning's image sketch)",
              {"depth": "convolution blocks", "width": "filters in the first block",
               "kernel_size": "filter side in pixels", "pool": "max-pooling window after each block",
               "final": "final random layer", "normalize": "unit-norm conv features before the final layer"}),
    Component("features", "network", ".features.network:NetworkFeatures",
              "a trained convolutional network's embedding ('network'): shipped with the app, trained on generated "
              "hands (classmap train-network); run by onnxruntime or OpenCV, no PyTorch",
              {"runtime": "who runs the network", "batch_size": "crops per runtime call"},
              internal=("network",),  # a shipped network's name or an .onnx file: not a form's setting
              suits=Suits(hands=True, min_side=16,
                          why="the trained hand network (your images are of hands: it learned hands in many places, "
                              "lights and backgrounds; docs/bench/journey-features.json compares it with HOG and "
                              "k-means)")),
    Component("features", "window-network", ".features.network:WindowNetworkFeatures",
              "the trained window network ('window-network'): every window of a frame embedded in one pass, the hand "
              "found by its own background class; a crop is a window with its context (96 x 96 at 64 x 64 windows)",
              {"runtime": "who runs the network", "batch_size": "crops per runtime call"},
              internal=("network",)),
    Component("bank", "ova-liblinear", ".classify.banks.ova:OneVsAllSVM",
              "one-vs-all linear SVMs (liblinear), classes in parallel",
              suits=Suits(rank=0, max_classes=99, why="linear SVMs (liblinear) one-vs-all, accurate and quick at this size")),
    Component("bank", "ova-ridge", ".classify.banks.ova:OneVsAllRidge",
              "one-vs-all ridge regression, all classes in one solve (scales to thousands of classes)",
              {"n_jobs": "worker threads (-1: all cores; the solve itself is threaded by BLAS)",
               "keep_statistics": "keep the training statistics a class added later is solved from (auto: where "
                                  "they cost at most a fifth of the weights, i.e. with thousands of classes)"},
              suits=Suits(rank=1, why="ridge regression one-vs-all, one linear solve for all {C} classes",
                          sizes=(Sized("alpha", steps=((0, 10.0), (2000, 100.0)), keep=True),))),
    Component("bank", "network-head", ".classify.banks.head:NetworkHeadBank",
              "the window network's own class head, one classifier a hand-pose class (with window-network features; "
              "a class added later is solved by ridge and put on the head's scale)",
              {"n_jobs": "worker threads (-1: all cores)",
               "keep_statistics": "keep the training statistics a class added later is solved from"},
              internal=("network", "class_names")),
    Component("bank", "ova-rbf", ".classify.banks.ova:OneVsAllRBF", "one-vs-all kernel (RBF) SVMs, for small problems"),
    Component("bank", "all-pairs", ".classify.banks.allpairs:AllPairsSVM",
              "one linear SVM per pair of classes, voting (for small class counts)"),
    Component("bank", "all-pairs-ridge", ".classify.banks.allpairs:AllPairsRidge",
              "one ridge regression per pair of classes, voting (for small class counts)"),
    Component("bank", "compressive", ".classify.banks.compressive_bank:CompressiveBank",
              "compressive classifier: class sketches (means of random features), no training, add classes instantly",
              {"sketch": "what is sketched: random Fourier features of the features ('rff'), "
                         "the features themselves ('features'), or a random CNN of the images ('cnn')",
               "priors": "class priors", "random_state": "random seed"},
              no_classmap="a compressive bank scores every class at the cost of one"),
    Component("classmap", "classmap", ".classify.classmap.estimator:ClassMap",
              "ClassMap filter-and-refine: embed the query, keep p candidate classes, evaluate only theirs",
              {"d": "embedding dimensions (reference classifiers evaluated per query)",
               "p": "candidate classes the filter keeps for the refine step",
               "embedding": "how references are chosen", "refine": "how candidates are decided",
               "n_triples": "training triples for the boosted embedding",
               "hard_fraction": "share of triples with a hard (confusable) wrong class",
               "threshold": "first-above-threshold's threshold (unset: learned)",
               "max_memory_mb": "memory for the boosted embedding's weak outputs",
               "reference_penalty": "the embedding's reference classifiers get this many times the bank's penalty "
                                    "(training fits that second, smoother bank; 1: the bank itself)",
               "embedding_examples": "which examples embed the classes: the held-out embedding part, or with the "
                                     "bank's training part",
               "filter": "the filter index: the exact scan, IVF lists or an HNSW graph (auto: exact below 20 000 "
                         "classes, the graph from there on)",
               "random_state": "random seed"},
              # in the app the bank and the embedding split are training's (the --bank, the split), not settings;
              # the filter kind's own parameters are its component's (kind "filter" below)
              internal=("estimator", "embedding_fraction", "filter_params"),
              suits=Suits(min_classes=50, min_per_class=6, why="{d} reference classifiers, refine the top {p} of {C} classes",
                          sizes=(Sized("d", of="classes", ratio=Fraction(1, 8), low=8, high=45),
                                 Sized("p", of="classes", ratio=Fraction(1, 12), low=5, high=40)),
                          why_not={"min_classes": "with {C} classes brute force evaluates only {C} classifiers per image; "
                                                  "filter-and-refine pays off from about {min_classes} classes",
                                   "min_per_class": "it holds out images of every class to fit its embedding, and the "
                                                    "smallest class has {fewest}"})),
]
_COMPONENTS += [Component("filter", kind, path, what, help) for kind, (path, what, help) in _FILTER_INDEXES.items()]

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
    (``ova-ridge: C must lie ..., got 0``). Parameters training sets (``internal``) are refused too, and
    a bank's ``trainer`` (each trainer is a bank name of its own) with the names to choose from.
    """
    comp = component(kind, name)
    clash = sorted(set(params) & {*comp.internal, *(("trainer",) if kind == "bank" else ())})
    if clash:
        what = f"{option}{clash[0]}={params[clash[0]]!r}: " if option else ""
        if clash[0] == "trainer":
            raise ConfigError(f"{what}bank {name!r} has no parameter 'trainer': each trainer is a bank of its own; "
                              f"choose --bank from {', '.join(names('bank'))}")
        raise ConfigError(f"{what}{kind} {name!r}: {', '.join(clash)} is set by training, not a setting")
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
    return comp.cls(**check_params(kind, name, params))


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
    that need the data's size are :func:`classmap_gui.core.train.memory.check_train_memory`.
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
