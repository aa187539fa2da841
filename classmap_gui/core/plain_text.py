"""One line of plain output per result, whatever a file name holds: the app's ``classmap predict``
and an exported ``predict.py`` (which inlines this module) print names through :func:`one_line`.

A file name may hold a newline, a carriage return, a tab or a terminal escape; printed raw, one
result would span two lines and a crafted name could forge result lines. ``--json`` output escapes
them already (JSON strings); plain output writes them as Python escapes (``\\n``, ``\\x1b``).
"""
from __future__ import annotations

import unicodedata


def one_line(text: str) -> str:
    """``text`` with every control, line- or paragraph-separator and format character written as an
    escape (``\\n``, ``\\t``, ``\\x1b``, ``\\u2028``), and undecodable bytes of a file name (surrogates)
    as ``\\udcXX``; other text unchanged."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable() or ch == " " or unicodedata.category(ch) in ("Zs", "Mn", "Mc", "Me"):
            out.append(ch)
        else:
            out.append(repr(ch)[1:-1] if ch not in "'\"" else ch)
    return "".join(out)


def breaks_line(text: str) -> bool:
    """Whether ``text`` holds a character that breaks a line or a terminal's output (C0/C1 controls,
    DEL, the Unicode line and paragraph separators): refused in class names, which the app and an
    export print and write one per line."""
    return any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 or c in "\u2028\u2029" for c in text)
