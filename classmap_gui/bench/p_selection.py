"""Choosing ClassMap's p (with the embedding it goes with) on validation images for the real scale bench
(``scale_real.py``): the rules ``lost``, ``accuracy`` and ``agreement`` over the validation curve, one entry
per (reference penalty, d, class embeddings, p) with ``accuracy``, ``agreement``, ``lost`` and ``evaluations``."""
from __future__ import annotations


def choose_p(curve: list[dict], rule: str, agree: float, margin: float, bf_val: float = 0.0) -> tuple[dict, str]:
    """The chosen entry of the validation ``curve`` and the rule's wording (``p_rule``: see REAL_OPTIONS).

    ``lost`` bounds what ClassMap can lose against brute force: the share of images brute force gets right and
    ClassMap wrong (ClassMap's gains, right where brute force is wrong, are slack it is not credited with).
    ``accuracy`` credits the gains: validation accuracy (of this p and every larger one, so a lucky dip does
    not decide) at least brute force's ``bf_val`` minus half the margin (the other half for the test part
    and the refitted, sharper bank)."""
    text = (f"fewest evaluations whose answers agree with brute force's on >= {agree:.3f} of the validation images, "
            "else the highest agreement")
    if rule == "accuracy":
        groups: dict = {}
        for c in curve:
            groups.setdefault(tuple(c[k] for k in c if k in ("reference_penalty", "d_requested", "class_embeddings")),
                              []).append(c)
        ok = [c for g in groups.values() for c in g
              if all(e["accuracy"] >= bf_val - margin / 2 - 1e-12 for e in g if e["p"] >= c["p"])]
        text2 = (f"fewest evaluations whose validation accuracy, and that of every larger p of the same embedding, is "
                 f">= brute force's ({100 * bf_val:.1f} %) - {50 * margin:.2f} points")
        if ok:
            return min(ok, key=lambda c: (c["evaluations"], -c["accuracy"])), text2
        text = text2 + "; none did, so: " + text
    elif rule == "lost":
        ok = [c for c in curve if c["lost"] <= margin + 1e-12]
        text2 = (f"fewest evaluations for which the validation images brute force gets right and ClassMap wrong are "
                 f"<= {100 * margin:.2f} % of them")
        if ok:
            return min(ok, key=lambda c: (c["evaluations"], c["lost"])), text2
        text = text2 + "; none did, so: " + text
    ok = [c for c in curve if c["agreement"] >= agree] or [max(curve, key=lambda c: c["agreement"])]
    return min(ok, key=lambda c: (c["evaluations"], -c["agreement"])), text


__all__ = ["choose_p"]
