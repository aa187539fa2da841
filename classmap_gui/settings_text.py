"""Settings written as text, read one way by the command line and by the bench figures' checker:
``--set k=v,k2=v2`` pieces and one value (bool, None, int, float or str).

Its own module below both: the CLI loads the benches by name, so a bench importing the CLI's
modules would close a cycle through importlib.
"""
from __future__ import annotations

from .core.errors import ConfigError


def parse_sets(items: list[str] | None, option: str = "--set") -> dict[str, object]:
    """``["k=v,k2=v2", "k3=v3"]`` -> ``{"k": v, ...}`` with ints, floats, booleans and None parsed.

    A piece without ``=`` continues the value before it, so list options take their comma-separated form:
    ``"penalties=300,1000,p=40"`` -> ``{"penalties": "300,1000", "p": 40}``. ``option`` names the
    command-line option in the error for a first piece without ``=``.
    """
    raw: dict[str, str] = {}
    for item in items or []:
        key = None
        for pair in filter(None, item.split(",")):
            if "=" not in pair:
                if key is None:
                    raise ConfigError(f"{option} expects key=value, got {pair!r}")
                raw[key] += "," + pair.strip()
                continue
            k, v = pair.split("=", 1)
            if not k.strip():
                raise ConfigError(f"{option} expects key=value, got {pair!r}")
            key = k.strip()
            raw[key] = v.strip()
    return {k: parse_value(v) for k, v in raw.items()}


def parse_value(v: str) -> object:
    """A command-line value as bool, None, int, float or str (in that order of preference)."""
    low = v.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return v
