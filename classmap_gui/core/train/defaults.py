"""Training settings sized to the data, with the reasons a person can read.

``suggest_config(imageset)`` looks at the number of classes, images and the image size and returns
TrainConfig fields plus one sentence per choice. It is what the app proposes for a new or imported
set (so five classes of webcam captures are not trained with 1600 k-means centroids and a ClassMap
that cannot save anything), and it is a pure function: testable, and the same for the CLI.

Which feature map, bank and ClassMap sizes suit the data is each component's own registry entry
(:attr:`Component.suits <classmap_gui.core.registry.Component.suits>`, plain data: no class is
imported); this module names no component.
"""
from __future__ import annotations

from ..data import ImageSet
from ..registry import Component, component, components
from ..suitability import DataSize

#: below this many classes brute force is already cheap: ClassMap's filter cannot save enough to pay
#: for its embedding (the paper's gains start at hundreds of classes)
CLASSMAP_MIN_CLASSES = component("classmap", "classmap").suits.min_classes
_LEAD = {"features": "Features: ", "bank": "Classifiers: "}


def _proposed(kind: str, data: DataSize) -> Component:
    """The component of ``kind`` of lowest rank that suits ``data`` (of lowest rank of all when none does)."""
    ranked = sorted((c for c in components(kind) if c.suits is not None and not c.suits.hands),
                    key=lambda c: c.suits.rank)
    made_for = sorted((c for c in components(kind) if c.suits is not None and c.suits.hands), key=lambda c: c.suits.rank)
    # images of hands: a component made for them first (the trained hand network), where it suits the data
    return next((c for c in made_for + ranked if c.suits.misfit(data) is None), ranked[0])


def _choose(kind: str, base: dict, data: DataSize, reasons: list[str]) -> tuple[str, dict]:
    """The name and parameters of ``kind`` (``base``'s choice kept, else proposed), sized to ``data``."""
    name = base.get(kind) or _proposed(kind, data).name
    params = dict(base.get(f"{kind}_params") or {}) if base.get(kind) == name else {}
    suits = component(kind, name).suits
    if kind not in base and suits is not None:
        reasons.append(_LEAD[kind] + suits.say(suits.why, data) + ".")
    if suits is not None and suits.sizes:
        sized = suits.sized(data, params)
        params.update(sized)
        if suits.sized_why:
            reasons.append(suits.say(suits.sized_why, data, sized) + ".")
    return name, params


def _classmap(bank: str, base: dict, data: DataSize, reasons: list[str], for_map: bool = False) -> dict | None:
    """ClassMap's settings for ``data`` over ``bank``, or None with the reason it is off. ``for_map``: on even
    for too few classes to save anything (Explore's embedding map needs it), sized to keep fewer candidates
    than classes; still off where it cannot be fitted (a bank without it, too few images in a class)."""
    comp = component("classmap", "classmap")
    suits, off = comp.suits, component("bank", bank).no_classmap
    misfit = None if off else suits.misfit(data)
    if off or (misfit and not (for_map and misfit == "min_classes" and data.classes >= 3)):
        reasons.append("ClassMap off: " + (off or suits.say(suits.why_not[misfit], data)) + ".")
        return None
    sized = suits.sized(data)
    cm, defaults = dict(base.get("classmap") or {}), comp.defaults()
    if misfit:  # for the map alone: the filter keeps fewer classes than there are, though it saves nothing here
        # no more reference classifiers than classes (boosting more dimensions out of 4 classes took minutes)
        sized["d"], sized["p"] = min(sized["d"], data.classes), max(1, min(sized["p"], data.classes // 2))
        reasons.append(f"ClassMap on for the embedding map (Explore): with {data.classes} classes it saves "
                       f"nothing over brute force, but it places every class on a map.")
        return {**sized, **{key: cm.get(key, defaults[key]) for key in ("embedding", "refine")}}
    reasons.append("ClassMap on: " + suits.say(suits.why, data, sized) + ".")
    return {**sized, **{key: cm.get(key, defaults[key]) for key in ("embedding", "refine")}}


def suggest_config(imageset: ImageSet, base: dict | None = None, *, for_map: bool = False,
                   hands: bool = False) -> tuple[dict, list[str]]:
    """Settings (``TrainConfig`` fields) for ``imageset`` and the reasons for them.

    ``base``: settings to adapt (a person's choice of feature map and bank is kept; the sizes and
    ClassMap are fitted to the data). Without it the feature map and bank are the ones the registry
    proposes for the data (HOG, or single-layer k-means for images smaller than its cells). ``for_map``:
    ClassMap on even below the class count where it pays, for Explore's embedding map. ``hands``: the images are
    known to be of hands (recorded from a hand video: :func:`..data.hand_video.shows_hands`), so a feature map
    made for hands (the trained network) is proposed.
    """
    base = dict(base or {})
    n, C = len(imageset), imageset.n_classes
    fewest = int(min(imageset.counts())) if C else 0
    data = DataSize(n=n, classes=C, side=min(imageset.image_size), fewest=fewest, hands=bool(hands))
    reasons: list[str] = []
    features, fparams = _choose("features", base, data, reasons)
    bank, bparams = _choose("bank", base, data, reasons)

    test_fraction = float(base.get("test_fraction", 0.2))
    if C and n and test_fraction * n < C:
        test_fraction = round(min(0.5, (C + 0.5) / n), 3)
        reasons.append(f"Test part: {100 * test_fraction:.0f}% so every class has a test image.")

    classmap = _classmap(bank, base, data, reasons, for_map)
    settings = {"features": features, "features_params": fparams, "bank": bank, "bank_params": bparams,
                "classmap": classmap, "test_fraction": test_fraction, "seed": int(base.get("seed", 0))}
    return settings, reasons
